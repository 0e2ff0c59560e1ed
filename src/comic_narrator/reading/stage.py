"""The reading stage: the local reader per page (cached), optional LLM refinement, the book's characters, language."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator import __version__
from comic_narrator.artifacts import Book, BookReading, Character, PageImage, PageReading
from comic_narrator.config import LlmConfig, VisionConfig
from comic_narrator.errors import ComicNarratorError, InputError
from comic_narrator.progress import SILENT, Progress
from comic_narrator.reading.book_characters import CharacterBook
from comic_narrator.reading.known_characters import CharacterLedger
from comic_narrator.workdir import StageCache, text_sha256, write_artifact

if TYPE_CHECKING:
    from comic_narrator.backends.openai_chat import OpenAIChatClient
    from comic_narrator.backends.protocols import OcrEngine

log = logging.getLogger("comic_narrator")


def load_page_rgb(work_dir: Path, page: PageImage) -> npt.NDArray[np.uint8]:
    image = cv2.imread(str(work_dir / page.image_file), cv2.IMREAD_COLOR)
    if image is None:
        raise InputError(
            "stored page image is unreadable; delete the work folder and re-run", path=work_dir / page.image_file
        )
    return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), dtype=np.uint8)


@functools.cache
def reader_fingerprint() -> str:
    """Hash of the reader's own source, so a changed reader re-reads pages instead of trusting old readings."""
    import comic_narrator.backends.rapidocr_engine as engine
    import comic_narrator.reading as vision
    from comic_narrator.reading.lettering import KANJI_TABLE
    from comic_narrator.reading.panel_model import model_path
    from comic_narrator.workdir import file_sha256

    files = [*sorted(Path(vision.__file__).parent.glob("*.py")), Path(engine.__file__), KANJI_TABLE]
    model = model_path()
    weights = file_sha256(model) if model is not None else "no panel model"
    return text_sha256(weights, *(f.read_text(encoding="utf-8") for f in files))


def _unread_page(page: PageImage) -> PageReading:
    return PageReading(
        page=page.index,
        width=page.width_px,
        height=page.height_px,
        reading_direction="ltr",
        page_kind="non-story",
        panels=[],
        texts=[],
    )


def local_reading_key(book: Book, page: PageImage, config: VisionConfig, ocr_name: str) -> str:
    """What a page's local reading depends on: the reader's code and model, the page's pixels, the options."""
    options = json.dumps(asdict(replace(config, vision="local")), sort_keys=True)
    return text_sha256(
        "reading",
        str(PageReading.model_fields["schema_version"].default),
        __version__,
        reader_fingerprint(),
        page.sha256,
        options,
        str(book.manga_hint),
        ocr_name,
    )[:20]


def read_one_page(
    book: Book, page: PageImage, config: VisionConfig, work_dir: Path, ocr: OcrEngine
) -> tuple[PageReading, str | None, bool]:
    """One page read locally (or taken from the cache): the reading, a failure line when the reader crashed on
    the page (the page is then shown unread), and whether it came from the cache."""
    from comic_narrator.reading.reader import read_page

    if page.unreadable is not None:
        return _unread_page(page), f"page {page.index + 1} ({page.source}): {page.unreadable}", False
    cache = StageCache(work_dir)
    cached = cache.entry("readings", local_reading_key(book, page, config, ocr.name), name=page_name(page))
    stored = cache.load(cached, PageReading)
    if stored is not None:
        return stored, None, True
    image = load_page_rgb(work_dir, page)
    try:
        reading = read_page(image, page, config=replace(config, vision="local"), manga_hint=book.manga_hint, ocr=ocr)
    except ComicNarratorError:
        raise
    except Exception as exc:  # a reader bug on one odd page must not lose the rest of the book
        log.exception("reading page %s failed", page.index + 1)
        return _unread_page(page), f"page {page.index + 1} ({page.source}): reading failed: {exc!r}", False
    cache.store(cached, reading)
    return reading, None, False


def _read_locally(
    book: Book, config: VisionConfig, work_dir: Path, progress: Progress
) -> tuple[list[PageReading], list[str]]:
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine

    stage = progress.stage("read", len(book.pages))
    readings: list[PageReading] = []
    failures: list[str] = []
    with RapidOcrEngine() as ocr:
        for page in book.pages:
            reading, failure, cached = read_one_page(book, page, config, work_dir, ocr)
            readings.append(reading)
            if failure is not None:
                failures.append(failure)
            detail = "cached" if cached else f"{len(reading.panels)} panels, {len(reading.texts)} texts"
            stage.advance(detail=f"page {page.index + 1}: {detail}")
    return readings, failures


def refine_one_page(
    page: PageImage,
    local: PageReading,
    client: OpenAIChatClient,
    model: str,
    llm: LlmConfig,
    work_dir: Path,
    known: Sequence[Character] = (),
) -> tuple[PageReading, bool]:
    """One page's local reading refined by the LLM (cached per page), shown the book's ``known`` characters; a
    page without text is left as it is."""
    from comic_narrator.reading.llm_reader import refine_with_llm

    if not local.texts:
        return local, True
    cache = StageCache(work_dir)
    cached = cache.entry("readings", llm_reading_key(local, llm, model, known), name=f"{page_name(page)}.llm")
    stored = cache.load(cached, PageReading)
    if stored is not None:
        return stored, True
    image = load_page_rgb(work_dir, page)
    refined = refine_with_llm(image, local, client, llm.max_image_side_px, known, llm.granularity)
    cache.store(cached, refined)
    return refined, False


def refine_in_book(
    page: PageImage,
    local: PageReading | None,
    client: OpenAIChatClient,
    model: str,
    llm: LlmConfig,
    work_dir: Path,
    ledger: CharacterLedger,
) -> tuple[PageReading | None, bool]:
    """refine_one_page for one page of a book read concurrently: shown what ``ledger`` says the pages before it
    named, and recorded there for the pages after it. ``local`` None (its local reading failed) names nobody."""
    try:
        if local is None:
            ledger.record(page.index, None)
            return None, True
        known = ledger.shown_to(page.index) if local.texts else []
        refined, cached = refine_one_page(page, local, client, model, llm, work_dir, known)
    except BaseException:
        ledger.abandon()
        raise
    ledger.record(page.index, refined)
    return refined, cached


def llm_reading_key(local: PageReading, llm: LlmConfig, model: str, known: Sequence[Character] = ()) -> str:
    """What a page's LLM reading depends on: its local reading, the book's characters it is shown, the request
    (instructions, answer schema, image size, token cap, thinking switch), page or panel requests and the model's
    name. Not the server's address: the same model behind another endpoint gives the same reading."""
    from comic_narrator.reading.llm_reader import request_fingerprint

    request = request_fingerprint(llm.max_image_side_px, llm.max_tokens, llm.disable_thinking)
    shown = json.dumps([character.model_dump() for character in known], sort_keys=True, ensure_ascii=False)
    parts = (local.model_dump_json(), shown, request, llm.granularity, model)
    return text_sha256("llm-reading", __version__, *parts)[:20]


def page_name(page: PageImage) -> str:
    """A page's cache entries start with its place in the book, so a person can find them."""
    return f"page-{page.index + 1:04d}"


def _refine_with_llm(
    book: Book, readings: list[PageReading], llm: LlmConfig, work_dir: Path, progress: Progress
) -> list[PageReading]:
    """Send every page with text to the LLM, a bounded number at a time; answers are cached per page."""
    from comic_narrator.backends.openai_chat import OpenAIChatClient

    client = OpenAIChatClient(llm)
    model = client.resolve_model()  # fails fast, with what to start, when the server is down
    stage = progress.stage("read-llm", len(readings))

    ledger = CharacterLedger(llm.slots)

    def refine(pair: tuple[PageImage, PageReading]) -> PageReading:
        page, local = pair
        refined, cached = refine_in_book(page, local, client, model, llm, work_dir, ledger)
        assert refined is not None
        stage.advance(detail=f"page {page.index + 1}" + (" (cached)" if cached else ""))
        return refined

    with ThreadPoolExecutor(max_workers=max(1, llm.slots), thread_name_prefix="llm") as pool:
        return list(pool.map(refine, zip(book.pages, readings, strict=True)))


def vision_for_book(config: VisionConfig, book: Book) -> VisionConfig:
    """The book's own language (ComicInfo LanguageISO) stands in for --lang auto."""
    if config.lang == "auto" and book.language_hint in ("en", "ja"):
        return replace(config, lang="ja" if book.language_hint == "ja" else "en")
    return config


LANGUAGE_LETTERS = 40
"""Letters of text read before the book's language is decided (``--lang auto``): enough that one stray sign
or a name does not decide it; a book with less text is decided when every page is read."""


def decided_language(
    config: VisionConfig, book: Book, readings: list[PageReading], every_page: bool
) -> Literal["en", "ja"] | None:
    """The book's language once it can be told from the pages read so far (in book order): ``--lang`` or
    ComicInfo first, else the lettering of the first pages holding :data:`LANGUAGE_LETTERS` letters, else (with
    every page read) all of it; None while it cannot be told yet. A narrated run and ``read`` decide alike."""
    from comic_narrator.reading.reader import book_language

    vision = vision_for_book(config, book)
    if vision.lang != "auto":
        return "ja" if vision.lang == "ja" else "en"
    letters = sum(len(text.text) for reading in readings for text in reading.texts)
    if letters >= LANGUAGE_LETTERS or every_page:
        return book_language(readings)
    return None


def read_pages(
    book: Book,
    config: VisionConfig,
    work_dir: Path,
    progress: Progress = SILENT,
    llm: LlmConfig | None = None,
) -> tuple[BookReading, list[str]]:
    """Read every page. A page whose local reading crashes is recorded in failures and shown without narration;
    engine and server errors stop the run (finished pages stay cached for the next run)."""
    config = vision_for_book(config, book)
    readings, failures = _read_locally(book, config, work_dir, progress)
    if config.vision == "llm":
        readings = _refine_with_llm(book, readings, llm or LlmConfig(), work_dir, progress)
    # The book's characters, as a narrated run grows them: the local reader's page-local speakers linked to
    # book-wide ids; the LLM names characters consistently across pages itself (appearance linking would undo it).
    from comic_narrator.reading.reader import follow_book_direction

    characters = CharacterBook(link=config.vision != "llm")
    lang = _language_in_order(config, book, readings)
    readings = [characters.add_page(follow_book_direction(r, lang, config, book.manga_hint)) for r in readings]
    write_artifact(work_dir / "characters.json", characters.characters)
    return BookReading(source=book.source, lang=lang, pages=readings), failures


def _language_in_order(config: VisionConfig, book: Book, readings: list[PageReading]) -> Literal["en", "ja"]:
    """The language a narrated run decides, whose pages arrive one by one in book order."""
    for n in range(1, len(readings)):
        found = decided_language(config, book, readings[:n], every_page=False)
        if found is not None:
            return found
    return decided_language(config, book, readings, every_page=True) or "en"
