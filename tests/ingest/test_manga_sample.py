"""The bundled manga sample: small enough to ship, four greyscale pages, read right to left from its ComicInfo."""

from __future__ import annotations

from pathlib import Path

from comic_narrator.config import IngestConfig
from comic_narrator.ingest.book import ingest_book
from tests.conftest import REPO

MANGA_SAMPLE = REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"


def test_manga_sample_ingests_as_four_right_to_left_japanese_pages(tmp_path: Path) -> None:
    assert MANGA_SAMPLE.stat().st_size <= 1_500_000
    book = ingest_book(MANGA_SAMPLE, IngestConfig(), tmp_path / "pages")
    assert [p.source_page_number for p in book.pages] == [1, 2, 3, 4]
    assert all((p.width_px, p.height_px) == (1100, 1556) for p in book.pages)
    assert book.manga_hint is True and book.language_hint == "ja"
    assert "Shuho Sato" in (REPO / "samples" / "ATTRIBUTION.md").read_text(encoding="utf-8")
