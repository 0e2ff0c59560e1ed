"""End to end on a PDF whose outline marks its chapters and whose information names it: two pages made from the
sample page, narrated as a draft (real OCR, voices, camera and libx264), the MP4's chapters and metadata decoded."""

from __future__ import annotations

from pathlib import Path

import av
import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from comic_narrator.artifacts import Timing
from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pdf")
    plain = folder / "plain.pdf"
    page = Image.open(SAMPLE_PAGE).convert("RGB")
    page.save(plain, save_all=True, append_images=[page.copy()], resolution=150)
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.add_outline_item(title="Departure", page_number=0)
    writer.add_outline_item(title="The Storm", page_number=1)
    writer.add_metadata({"/Title": "Pepper&Carrot 17", "/Author": "David Revoy"})
    book = folder / "book.pdf"
    writer.write(book)
    out = folder / "book.mp4"
    assert main([str(book), "--voice-quality", "fast", "--draft", "-q", "-o", str(out)]) == 0
    return out


def test_the_pdf_outline_gives_the_chapters_and_its_information_the_metadata(narrated: Path) -> None:
    timing = Timing.model_validate_json((narrated.parent / "book.mp4.work" / "timing.json").read_text("utf-8"))
    page_two_s = next(shot.start_s for shot in timing.shots if shot.page == 1)
    with av.open(str(narrated)) as container:
        chapters = container.chapters()
        metadata = container.metadata
    assert [chapter["metadata"]["title"] for chapter in chapters] == ["Departure", "The Storm"]
    starts = [float(chapter["start"] * chapter["time_base"]) for chapter in chapters]
    assert starts == pytest.approx([0.0, page_two_s], abs=0.001)
    assert (metadata["title"], metadata["artist"]) == ("Pepper&Carrot 17", "David Revoy")
