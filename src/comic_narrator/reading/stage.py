"""The reading stage: the local reader per page (cached), optional LLM refinement, speakers linked, language."""

from __future__ import annotations

import functools
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator import __version__
from comic_narrator.artifacts import Book, BookReading, PageImage, PageReading
from comic_narrator.config import LlmConfig, VisionConfig
from comic_narrator.errors import ComicNarratorError, InputError
from comic_narrator.progress import SILENT, Progress
from comic_narrator.workdir import read_cached_artifact, text_sha256, write_artifact

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
    from comic_narrator.reading.panel_model import model_path
    from comic_narrator.workdir import file_sha256

    files = [*sorted(Path(vision.__file__).parent.glob("*.py")), Path(engine.__file__)]
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


def _read_locally(
    book: Book, config: VisionConfig, work_dir: Path, progress: Progress
) -> tuple[list[PageReading], list[str]]:
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
    from comic_narrator.reading.reader import read_page

    readings_dir = work_dir / "readings"
    local_options = replace(config, vision="local")
    options = json.dumps(asdict(local_options), sort_keys=True)
    stage = progress.stage("read", len(book.pages))
    readings: list[PageReading] = []
    failures: list[str] = []
    with RapidOcrEngine() as ocr:
        for page in book.pages:
            key = text_sha256(
                "reading",
                str(PageReading.model_fields["schema_version"].default),
                __version__,
                reader_fingerprint(),
                page.sha256,
                options,
                str(book.manga_hint),
                ocr.name,
            )[:20]
            cached = readings_dir / f"page-{page.index + 1:04d}.{key}.json"
            stored = read_cached_artifact(cached, PageReading)
            if stored is not None:
                readings.append(stored)
                stage.advance(detail=f"page {page.index + 1} (cached)")
                continue
            image = load_page_rgb(work_dir, page)
            try:
                reading = read_page(image, page, config=local_options, manga_hint=book.manga_hint, ocr=ocr)
            except ComicNarratorError:
                raise
            except Exception as exc:  # a reader bug on one odd page must not lose the rest of the book
                log.exception("reading page %s failed", page.index + 1)
                failures.append(f"page {page.index + 1} ({page.source}): reading failed: {exc!r}")
                reading = _unread_page(page)
            else:
                write_artifact(cached, reading)
            readings.append(reading)
            stage.advance(detail=f"page {page.index + 1}: {len(reading.panels)} panels, {len(reading.texts)} texts")
    return readings, failures


def _refine_with_llm(
    book: Book, readings: list[PageReading], llm: LlmConfig, work_dir: Path, progress: Progress
) -> list[PageReading]:
    """Send every page with text to the LLM, a bounded number at a time; answers are cached per page."""
    from comic_narrator.backends.openai_chat import OpenAIChatClient
    from comic_narrator.reading.llm_reader import refine_with_llm

    client = OpenAIChatClient(llm)
    model = client.resolve_model()  # fails fast, with what to start, when the server is down
    stage = progress.stage("read-llm", len(readings))

    def refine(pair: tuple[PageImage, PageReading]) -> PageReading:
        page, local = pair
        if not local.texts:
            stage.advance(detail=f"page {page.index + 1} (no text)")
            return local
        key = text_sha256("llm-reading", __version__, local.model_dump_json(), llm.base_url, model)[:20]
        cached = work_dir / "readings" / f"page-{page.index + 1:04d}.llm.{key}.json"
        stored = read_cached_artifact(cached, PageReading)
        if stored is not None:
            stage.advance(detail=f"page {page.index + 1} (cached)")
            return stored
        refined = refine_with_llm(load_page_rgb(work_dir, page), local, client, llm.max_image_side_px)
        write_artifact(cached, refined)
        stage.advance(detail=f"page {page.index + 1}: {len(refined.characters)} characters")
        return refined

    with ThreadPoolExecutor(max_workers=max(1, llm.concurrency), thread_name_prefix="llm") as pool:
        return list(pool.map(refine, zip(book.pages, readings, strict=True)))


def read_pages(
    book: Book,
    config: VisionConfig,
    work_dir: Path,
    progress: Progress = SILENT,
    llm: LlmConfig | None = None,
) -> tuple[BookReading, list[str]]:
    """Read every page. A page whose local reading crashes is recorded in failures and shown without narration;
    engine and server errors stop the run (finished pages stay cached for the next run)."""
    from comic_narrator.reading.reader import book_language
    from comic_narrator.reading.speakers import link_speakers

    if config.lang == "auto" and book.language_hint in ("en", "ja"):
        config = replace(config, lang="ja" if book.language_hint == "ja" else "en")  # ComicInfo LanguageISO
    readings, failures = _read_locally(book, config, work_dir, progress)
    if config.vision == "llm":
        # The LLM names characters consistently across pages itself; appearance linking would undo that.
        readings = _refine_with_llm(book, readings, llm or LlmConfig(), work_dir, progress)
    else:
        readings = link_speakers(readings)
    lang = config.lang if config.lang != "auto" else book_language(readings)
    return BookReading(source=book.source, lang=lang, pages=readings), failures
