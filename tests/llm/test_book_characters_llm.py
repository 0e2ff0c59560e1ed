"""The LLM reader and casting share the book's characters (characters.json): page N is shown the artifact as of
the pages before it, pages answered out of order give the same artifact and voices, and a re-run asks nothing.
Real: the page stream, the local reader on the sample page, the HTTP client, the cache, the bundled fast voices
and the loopback chat server (tests/llm/chat_server.py), whose "drift" mode renames the characters on every
request unless the prompt lists them as known."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from comic_narrator.artifacts import BookCharacters, BookReading
from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import IngestConfig, LlmConfig, RunConfig, VisionConfig, VoiceConfig
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import LocalExecutor
from comic_narrator.flow.stream import Streamed, stream_pages
from comic_narrator.pipeline import load_or_ingest
from comic_narrator.reading.book_characters import CharacterBook, shown_characters
from comic_narrator.reading.known_characters import MAX_KNOWN_CHARACTERS, describe_known
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.workdir import read_artifact
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import KNOWN, chat_server


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A blank first page (no lettering: never sent), then the sample page four times."""
    folder = tmp_path / "book"
    folder.mkdir()
    cv2.imwrite(str(folder / "p0.png"), np.full((1200, 900, 3), 255, np.uint8))
    for n in range(1, 5):
        (folder / f"p{n}.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    return folder


def _stream(folder: Path, work: Path, url: str, concurrency: int) -> tuple[Streamed, LocalExecutor]:
    run = RunConfig(
        folder,
        work.parent / "out.mp4",
        work,
        vision=VisionConfig(vision="llm"),
        llm=LlmConfig(base_url=url, concurrency=concurrency),
        voice=VoiceConfig(quality="fast"),
    )
    book = load_or_ingest(folder, run.ingest, work)
    client = OpenAIChatClient(run.llm)
    executor = LocalExecutor(run, None)
    with RapidOcrEngine() as ocr, open_voice_bank(run.voice) as bank:
        engines = Engines(ocr=ocr, bank=bank, llm_client=client, llm_model=client.resolve_model())
        return stream_pages(book, run, engines, executor), executor


def _as_of(reading: BookReading, pages: int) -> BookCharacters:
    folded = CharacterBook(link=False)
    for page in reading.pages[:pages]:
        folded.add_page(page)
    return folded.characters


def test_each_page_is_shown_the_books_characters_as_of_the_pages_before_it(book: Path, tmp_path: Path) -> None:
    with chat_server("drift") as (url, state):
        streamed, _ = _stream(book, tmp_path / "w", url, concurrency=1)  # one page at a time: N sees 1..N-1
    prompts = [r["messages"][1]["content"][1]["text"] for r in state.requests]
    assert len(prompts) == 4  # the blank page has nothing to ask about
    characters = read_artifact(tmp_path / "w" / "characters.json", BookCharacters)
    assert [(c.id, c.name, c.gender, c.nature) for c in characters.characters] == [
        ("pepper", "Pepper", "female", "human"),
        ("carrot", "Carrot", "male", "creature"),
    ]
    for page, prompt in enumerate(prompts, start=1):
        as_of = _as_of(streamed.reading, page)
        assert as_of.pages == page
        expected = describe_known(shown_characters(as_of, MAX_KNOWN_CHARACTERS))
        shown = KNOWN.search(prompt)
        assert (shown.group(0) if shown else "") == expected, page
        # ... which is characters.json as it stood then: the characters first met before page N.
        assert [c.id for c in as_of.characters] == [c.id for c in characters.characters if c.first_page < page]
    assert "Pepper (female, young, human); Carrot (male, young, creature)" in prompts[-1]
    # The artifact the stream grew is the one the reader was shown, plus the lines and voices casting added.
    whole = _as_of(streamed.reading, 5)
    assert [c.model_copy(update={"lines": 0, "voice": None}) for c in characters.characters] == whole.characters
    assert all(c.lines > 0 and c.voice for c in characters.characters)


def test_pages_answered_out_of_order_give_the_same_characters_and_voices(book: Path, tmp_path: Path) -> None:
    """Four pages at once, the ones sent first answered last; against the same pages answered as they come."""
    arrived: list[int] = []
    answered: list[int] = []
    lock = threading.Lock()
    all_asked = threading.Event()

    def later_first() -> None:
        with lock:
            turn = len(arrived)
            arrived.append(turn)
            if len(arrived) == 4:
                all_asked.set()
        if turn:  # the first speaking page is asked alone; the other three are held until all are asked about
            all_asked.wait(60)  # (pages are read locally two at a time, so their requests come a page apart)
            time.sleep(0.25 * (5 - turn))
        with lock:
            answered.append(turn)

    with chat_server("drift", hold=later_first) as (url, state):
        shuffled, _ = _stream(book, tmp_path / "a", url, concurrency=4)
        assert len(state.requests) == 4
        assert answered != sorted(answered), "pages were answered out of order"
        shuffled_json = (tmp_path / "a" / "characters.json").read_bytes()
        readings = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a" / "readings").iterdir()}
        clips = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a" / "clips").iterdir()}
        # A re-run: every page's local and LLM reading and every clip from the cache, the same artifact.
        rerun, _ = _stream(book, tmp_path / "a", url, concurrency=4)
        assert len(state.requests) == 4
        assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a" / "readings").iterdir()} == readings
        assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a" / "clips").iterdir()} == clips
        assert (tmp_path / "a" / "characters.json").read_bytes() == shuffled_json
        assert rerun.cast == shuffled.cast
    with chat_server("drift") as (url, state):
        in_order, _ = _stream(book, tmp_path / "b", url, concurrency=4)
    assert (tmp_path / "b" / "characters.json").read_bytes() == shuffled_json
    assert shuffled.cast == in_order.cast
    assert shuffled.cast is not None and len({m.voice for m in shuffled.cast.members}) == 3


def test_an_undecodable_page_kept_going_past_names_nobody_and_holds_up_no_page_after_it(
    book: Path, tmp_path: Path
) -> None:
    """--keep-going: the page stands in blank and reaches the LLM reader as a failed page, so the book's
    characters hear of it and the pages after it, each shown the characters of every page before it, are not
    left waiting for it."""
    (book / "p2.jpg").write_bytes(b"<!DOCTYPE html>\n<html><body>Sign in</body></html>\n")
    work = tmp_path / "w"
    finished: list[Streamed] = []
    with chat_server("drift") as (url, state):
        run = RunConfig(
            book,
            tmp_path / "out.mp4",
            work,
            ingest=IngestConfig(keep_going=True),
            vision=VisionConfig(vision="llm"),
            llm=LlmConfig(base_url=url, concurrency=1),  # each page is shown every page before it
            voice=VoiceConfig(quality="fast"),
            keep_going=True,
        )
        worker = threading.Thread(target=lambda: finished.append(_stream_run(run)), daemon=True)
        worker.start()
        worker.join(timeout=120)
    assert finished, "the stream waited for the undecodable page"
    streamed = finished[0]
    assert len(streamed.failures) == 1 and streamed.failures[0].startswith("page 3 (")
    assert len(state.requests) == 3  # the three readable lettered pages; neither the blank nor the failed one
    characters = read_artifact(work / "characters.json", BookCharacters)
    assert characters.pages == 5 and {c.id for c in characters.characters} == {"pepper", "carrot"}


def _stream_run(run: RunConfig) -> Streamed:
    book = load_or_ingest(run.input_path, run.ingest, run.work_dir)
    client = OpenAIChatClient(run.llm)
    executor = LocalExecutor(run, None)
    with RapidOcrEngine() as ocr, open_voice_bank(run.voice) as bank:
        engines = Engines(ocr=ocr, bank=bank, llm_client=client, llm_model=client.resolve_model())
        return stream_pages(book, run, engines, executor)
