"""The page stream's reading side as a run with ``--vision llm`` builds it: a folder of copies of the sample page,
ingested, and the local executor's readings from the real local reader and the HTTP client to ``url``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from comic_narrator.artifacts import Book, PageImage
from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.backends.protocols import OcrEngine
from comic_narrator.config import LlmConfig, RunConfig, VisionConfig
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import LocalExecutor, PageRead
from comic_narrator.pipeline import load_or_ingest
from tests.conftest import SAMPLE_PAGE


def llm_page_stream(
    tmp_path: Path, pages: int, url: str, slots: int, ocr: OcrEngine
) -> tuple[Book, Iterator[tuple[PageImage, PageRead]]]:
    folder = tmp_path / "book"
    folder.mkdir()
    for n in range(pages):
        (folder / f"p{n:02d}.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    return llm_stream_of(folder, tmp_path / "work", url, slots, ocr)


def llm_stream_of(
    folder: Path, work: Path, url: str, slots: int, ocr: OcrEngine
) -> tuple[Book, Iterator[tuple[PageImage, PageRead]]]:
    """The same over the pages of ``folder``, working in ``work``."""
    run = RunConfig(
        folder,
        work / "out.mp4",
        work,
        vision=VisionConfig(vision="llm"),
        llm=LlmConfig(base_url=url, concurrency=slots),
    )
    book = load_or_ingest(folder, run.ingest, work)
    client = OpenAIChatClient(run.llm)
    engines = Engines(ocr=ocr, bank=None, llm_client=client, llm_model=client.resolve_model())
    return book, LocalExecutor(run, None).read_pages(book, run, engines)
