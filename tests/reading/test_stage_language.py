"""`read` decides the book's language as a narrated run does: from the first pages that hold enough lettering,
in book order, not from whichever language has the most lettering over the whole book."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from comic_narrator.artifacts import Book, BookReading
from comic_narrator.config import IngestConfig, VisionConfig
from comic_narrator.ingest.book import ingest_book
from comic_narrator.reading.reader import book_language
from comic_narrator.reading.stage import LANGUAGE_LETTERS, decided_language, read_pages

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _mixed_book(folder: Path) -> Path:
    """An English Pepper&Carrot page first, then two Japanese Black Jack pages with more lettering."""
    folder.mkdir()
    shutil.copy(SAMPLES / "peppercarrot-ep17-page2.jpg", folder / "p01.jpg")
    with zipfile.ZipFile(SAMPLES / "blackjack-ni-yoroshiku-v01-p08-11.cbz") as archive:
        for n, name in enumerate(("bj01_000010.jpg", "bj01_000011.jpg"), start=2):
            (folder / f"p{n:02d}.jpg").write_bytes(archive.read(name))
    return folder


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Book, BookReading]:
    tmp_path = tmp_path_factory.mktemp("mixed")
    book = ingest_book(_mixed_book(tmp_path / "book"), IngestConfig(), tmp_path / "work" / "pages")
    reading, failures = read_pages(book, VisionConfig(), tmp_path / "work")
    assert failures == []
    return book, reading


def test_read_decides_the_language_from_the_first_pages(mixed: tuple[Book, BookReading]) -> None:
    book, reading = mixed
    first = reading.pages[0]
    assert sum(len(t.text) for t in first.texts) >= LANGUAGE_LETTERS
    # The premise: over the whole book the Japanese lettering outweighs the English page ...
    assert book_language(reading.pages) == "ja"
    # ... yet the run has voiced page 1 in English before page 2 is read, and `read` says what the run does.
    assert decided_language(VisionConfig(), book, [first], every_page=False) == "en"
    assert reading.lang == "en"
    # --lang still overrides the lettering.
    assert decided_language(VisionConfig(lang="ja"), book, [first], every_page=False) == "ja"


def test_too_little_lettering_waits_for_more_pages(mixed: tuple[Book, BookReading]) -> None:
    book, reading = mixed
    shortest = min(reading.pages[0].texts, key=lambda t: len(t.text))
    short = reading.pages[0].model_copy(update={"texts": [shortest]})
    assert sum(len(t.text) for t in short.texts) < LANGUAGE_LETTERS
    assert decided_language(VisionConfig(), book, [short], every_page=False) is None
    assert decided_language(VisionConfig(), book, [short], every_page=True) == "en"


def test_a_book_of_little_lettering_is_decided_by_all_of_it(mixed: tuple[Book, BookReading]) -> None:
    # A Japanese book whose pages hold fewer than LANGUAGE_LETTERS letters between them: no page decides it, so
    # all of its lettering does, once every page is read.
    from comic_narrator.reading.stage import _language_in_order

    book, reading = mixed
    japanese = [p for p in reading.pages if p.texts and all(t.lang == "ja" for t in p.texts)]
    assert japanese
    short = [p.model_copy(update={"texts": [min(p.texts, key=lambda t: len(t.text))]}) for p in japanese]
    assert sum(len(t.text) for p in short for t in p.texts) < LANGUAGE_LETTERS
    assert _language_in_order(VisionConfig(), book, short) == "ja"
