"""How far the LLM reader reads ahead of the page being voiced: LLM_READ_AHEAD_ROUNDS rounds of its slots, more
than the local reader's READ_AHEAD_PAGES, so the GPU's reader does not stop while the voices work through a page
with many lines. Real: the page stream's executor, the local reader on the sample page, the HTTP client and the
loopback chat server (tests/llm/chat_server.py), which counts the pages it is asked about."""

from __future__ import annotations

import time
from pathlib import Path

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.flow.executor import LLM_READ_AHEAD_ROUNDS, READ_AHEAD_PAGES
from tests.llm.chat_server import chat_server
from tests.llm.page_stream import llm_page_stream


def test_the_llm_reader_reads_rounds_of_its_slots_ahead_of_the_page_handed_out(tmp_path: Path) -> None:
    slots = 1  # one page at a time: the pages asked about are exactly the ones read ahead
    ahead = LLM_READ_AHEAD_ROUNDS * slots
    assert ahead > READ_AHEAD_PAGES  # otherwise this test says nothing the local reader's bound does not
    with chat_server("ok") as (url, state), RapidOcrEngine() as ocr:
        book, stream = llm_page_stream(tmp_path, ahead + 3, url, slots, ocr)
        first, _ = next(stream)  # page 1 handed out, and held: nothing more is asked of the stream
        assert first.index == book.pages[0].index
        deadline = time.monotonic() + 120
        while len(state.requests) < 1 + ahead and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2.0)  # room for a page beyond the bound to be asked about, were it submitted
        asked = len(state.requests)
        stream.close()
    assert asked == 1 + ahead, f"{asked} pages asked about while page 1 was held"
