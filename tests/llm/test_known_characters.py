"""The book's characters shown to the LLM with each page, so a character keeps one name while pages are read
concurrently. Real: the CLI, the local reader on the sample page, the HTTP client, the cache and the loopback chat
server (tests/llm/chat_server.py), whose "drift" mode names each character differently on every request unless
the prompt lists its name as known."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from comic_narrator.artifacts import Character, PageReading, Panel, TextRegion
from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.cli import main
from comic_narrator.config import LlmConfig
from comic_narrator.reading.known_characters import (
    FIRST_NAMES_PAGES,
    CharacterLedger,
    ReadingAbandoned,
    known_characters,
)
from comic_narrator.reading.llm_reader import page_request
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import chat_server

PAGES = 5


def _reading(page: int, *names: str) -> PageReading:
    characters = [Character(id=name.lower(), name=name) for name in names]
    texts = [
        TextRegion(bbox=(0, 0, 9, 9), kind="speech", text="hi", panel=0, speaker=character.id)
        for character in characters
    ]
    return PageReading(
        page=page,
        width=100,
        height=100,
        reading_direction="ltr",
        panels=[Panel(bbox=(0, 0, 100, 100))],
        texts=texts,
        characters=characters,
    )


def test_each_page_is_shown_the_same_characters_whatever_order_pages_finish_in() -> None:
    """Page N sees pages 1..N-lag, and everything up to the book's first speaking page; finishing order aside."""
    readings = [_reading(0), _reading(1, "Ann"), _reading(2, "Bob"), _reading(3, "Cy"), _reading(4), _reading(5)]
    shown: dict[tuple[str, int], list[str]] = {}
    for order_name, order in (("forward", range(6)), ("backward", range(5, -1, -1))):
        ledger = CharacterLedger(lag_pages=2)
        results: dict[int, list[str]] = {}

        def ask(page: int, into: dict[int, list[str]] = results, book: CharacterLedger = ledger) -> None:
            into[page] = [c.name for c in book.shown_to(page)]

        threads = [threading.Thread(target=ask, args=(page,)) for page in range(6)]
        for thread in threads:
            thread.start()
        for page in order:
            time.sleep(0.01)
            ledger.record(page, readings[page])
        for thread in threads:
            thread.join(5)
        for page, names in results.items():
            shown[(order_name, page)] = names
    for page in range(6):
        assert shown[("forward", page)] == shown[("backward", page)]
    # Book pages 1-6 (0-5 here): page 2 is the first to name anybody (Ann), page 3 Bob, page 4 Cy.
    assert [shown[("forward", page)] for page in range(6)] == [
        [],
        [],  # page 2 does not see itself
        ["Ann"],  # page 3 waits for page 2, the first speaking page, though it is within the lag
        ["Ann"],  # page 4 sees pages 1-2 (page 3 is read beside it)
        ["Ann", "Bob"],
        ["Ann", "Bob", "Cy"],
    ]


def test_a_book_that_names_nobody_is_searched_for_names_only_in_its_first_pages() -> None:
    """Past FIRST_NAMES_PAGES a page no longer waits for the pages beside it: it is shown pages 1..N-lag only."""
    ledger = CharacterLedger(lag_pages=3)
    for page in range(FIRST_NAMES_PAGES):
        ledger.record(page, _reading(page))
    assert ledger.shown_to(FIRST_NAMES_PAGES + 2) == []  # would wait forever for pages 9-10 otherwise
    ready = threading.Event()
    waiting = threading.Thread(target=lambda: (ledger.shown_to(FIRST_NAMES_PAGES + 3), ready.set()))
    waiting.start()
    assert not ready.wait(0.3), "page 12 waits for page 9 (within its lag)"
    ledger.record(FIRST_NAMES_PAGES, _reading(FIRST_NAMES_PAGES))
    assert ready.wait(5)
    waiting.join()


def test_a_speaking_page_that_names_nobody_ends_the_search_too() -> None:
    """Page 2 has a speech line but no name (the model named no speaker): the pages after it no longer wait on
    the pages beside them, which is what keeps a model that names nobody from reading the book page by page."""
    unnamed = _reading(1).model_copy(
        update={"texts": [TextRegion(bbox=(0, 0, 9, 9), kind="speech", text="hi", panel=0)]}
    )
    ledger = CharacterLedger(lag_pages=2)
    ledger.record(0, _reading(0))
    shown: list[list[str]] = []
    asking = threading.Thread(target=lambda: shown.append([c.name for c in ledger.shown_to(3)]), daemon=True)
    asking.start()
    asking.join(0.3)
    assert asking.is_alive(), "page 4 waits for page 2, the first page that may speak"
    ledger.record(1, unnamed)
    asking.join(5)
    assert shown == [[]], "page 4 is shown pages 1-2 and does not wait for page 3"
    # A sound or a caption alone is no speech: the search goes on past such a page.
    sound = _reading(1).model_copy(update={"texts": [TextRegion(bbox=(0, 0, 9, 9), kind="sound", text="bam", panel=0)]})
    quiet = CharacterLedger(lag_pages=2)
    quiet.record(0, _reading(0))
    quiet.record(1, sound)
    waiting = threading.Thread(target=lambda: quiet.shown_to(3), daemon=True)
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive(), "after a page of sounds, page 4 still waits for page 3"
    quiet.record(2, _reading(2, "Ann"))
    waiting.join(5)
    assert not waiting.is_alive()


def test_a_failed_page_releases_the_pages_waiting_on_it() -> None:
    ledger = CharacterLedger(lag_pages=1)
    ledger.record(0, None)
    ledger.abandon()
    with pytest.raises(ReadingAbandoned, match="page 2"):
        ledger.shown_to(2)


def test_the_known_list_keeps_first_attributes_and_the_busiest_speakers() -> None:
    first = _reading(0, "Ann")
    later = _reading(1, "Ann").model_copy(
        update={"characters": [Character(id="ann", name="Ann", gender="female", age="old")]}
    )
    known = known_characters([first, later])
    assert [(c.name, c.gender, c.age) for c in known] == [("Ann", "female", "old")]


def test_the_drifting_server_drifts_when_not_told_the_names() -> None:
    """The control: without the known names the stand-in renames the characters on every request."""
    reading = _reading(0, "x").model_copy(
        update={"texts": [TextRegion(bbox=(5, 5, 9, 9), kind="speech", text="hello", panel=0)]}
    )
    rgb = np.full((100, 100, 3), 255, np.uint8)
    request = page_request(rgb, reading, 1536, 2048)
    with chat_server("drift") as (url, _state):
        client = OpenAIChatClient(LlmConfig(base_url=url))
        names = {client.chat_json(request.messages, request.schema, "p")["texts"][0]["speaker"] for _ in range(3)}
    assert len(names) == 3


def _book(tmp_path: Path) -> Path:
    folder = tmp_path / "book"
    folder.mkdir()
    for n in range(PAGES):
        (folder / f"p{n}.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    return folder


def _speakers(pages: list[dict[str, object]]) -> set[str]:
    return {str(t["speaker"]) for page in pages for t in page["texts"] if t["speaker"]}  # type: ignore[attr-defined]


def test_read_keeps_one_name_per_character_across_pages_read_concurrently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _book(tmp_path)
    work = ["--work-dir", str(tmp_path / "w")]
    with chat_server("drift", hold_s=2.0) as (url, state):
        assert main(["read", str(folder), "--json", "--vision", "llm", "--llm-url", url, *work]) == 0
        pages = json.loads(capsys.readouterr().out)["pages"]
    assert len(state.requests) == PAGES
    assert state.max_in_flight >= 2, "pages after the first speaking page are read concurrently"
    assert len(_speakers(pages)) == 2, _speakers(pages)
    prompts = [r["messages"][1]["content"][1]["text"] for r in state.requests]
    assert sum("Characters already named in this book" in prompt for prompt in prompts) == PAGES - 1


def test_narrate_keeps_one_name_per_character_and_reuses_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page stream's executor (narrate) shows pages the same characters; a re-run asks nothing again."""
    folder = _book(tmp_path)
    out = tmp_path / "x.mp4"
    args = ["narrate", str(folder), "-o", str(out), "--vision", "llm", "--vision-only", "-q"]
    with chat_server("drift") as (url, state):
        assert main([*args, "--llm-url", url]) == 0
        reading = json.loads((tmp_path / "x.mp4.work" / "reading.json").read_text())
        assert len(_speakers(reading["pages"])) == 2
        asked = len(state.requests)
        assert asked == PAGES
        assert main([*args, "--llm-url", url]) == 0
        assert len(state.requests) == asked
    capsys.readouterr()
