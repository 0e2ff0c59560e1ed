"""A page's lines go to the voices while the page before it is still being voiced, never more than two pages at
once, and every page still gets its own clips, in book order. Real: the bundled manga sample, the local reader
(OCR), the bundled voices, the executor; the bank is the real one with each line made to take 0.4 s longer (as a
busy GPU server would), so that the voices, not the reading, are what the run waits for."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any, cast

from comic_narrator.backends.protocols import Delivery, Speech
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import RunConfig, VoiceConfig
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import LocalExecutor
from comic_narrator.flow.stream import VOICED_PAGES_AT_ONCE, stream_pages
from comic_narrator.pipeline import load_or_ingest
from comic_narrator.voice.voicebank import VoiceBank, open_voice_bank
from tests.conftest import REPO

MANGA = REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
LINE_S = 0.4


class SlowBank:
    """The real bank, each line taking LINE_S more, with when each line's synthesis ran."""

    def __init__(self, bank: VoiceBank) -> None:
        self._bank = bank
        self.calls: list[tuple[str, float, float]] = []
        self._lock = threading.Lock()

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        started = time.monotonic()
        time.sleep(LINE_S)
        speech = self._bank.synthesize(text, voice_id, delivery)
        with self._lock:
            self.calls.append((text, started, time.monotonic()))
        return speech

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bank, name)


def test_the_next_pages_lines_are_voiced_while_the_page_before_finishes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    run = RunConfig(MANGA, tmp_path / "out.mp4", work, voice=VoiceConfig(quality="fast"))
    book = load_or_ingest(MANGA, run.ingest, work)
    with RapidOcrEngine() as ocr, open_voice_bank(run.voice) as real:
        bank = SlowBank(real)
        streamed = stream_pages(book, run, Engines(ocr=ocr, bank=cast(VoiceBank, bank)), LocalExecutor(run, None))

    assert [w.image.index for w in streamed.pages] == list(range(len(book.pages)))
    spoken = [w for w in streamed.pages if w.lines]
    assert len(spoken) >= 3, "the sample's pages have lettering"
    for page in streamed.pages:  # each page's clips are its own lines', in order
        assert [clip.line_id for clip in page.clips] == [line.id for line in page.lines]

    # Which page each synthesis call voiced, by its clip's cache key.
    from comic_narrator.voice.synthesis import plan_jobs

    pages_saying: dict[str, set[int]] = {}
    for page in spoken:
        script = streamed.script.model_copy(update={"lines": page.lines})
        for job in plan_jobs(script, streamed.cast, run.voice, real, work / "clips"):  # type: ignore[arg-type]
            pages_saying.setdefault(job.text, set()).add(page.image.index)
    spans: dict[int, tuple[float, float]] = {}
    for text, started, ended in bank.calls:
        if len(pages_saying[text]) > 1:  # the same words on two pages: whichever was voiced first
            continue
        (page,) = pages_saying[text]
        first, last = spans.get(page, (started, ended))
        spans[page] = (min(first, started), max(last, ended))
    order = sorted(spans)
    assert len(order) >= 3, spans
    # The next page began before the page before it was done, somewhere in the book...
    overlaps = [b for a, b in itertools.pairwise(order) if spans[b][0] < spans[a][1]]
    assert overlaps, spans
    # ...but never more than two pages were being voiced at any moment.
    for _, started, _ in bank.calls:
        busy = {page for page, (first, last) in spans.items() if first <= started < last}
        assert len(busy) <= VOICED_PAGES_AT_ONCE, (started, spans)
