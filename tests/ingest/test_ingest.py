"""Ingest over real pages: every input kind, page selection, natural order, junk skipping, webtoon slicing."""

from __future__ import annotations

import io
import itertools
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from comic_narrator.config import IngestConfig
from comic_narrator.errors import InputError
from comic_narrator.ingest.book import ingest_book
from comic_narrator.ingest.selection import natural_key, parse_page_selection
from comic_narrator.ingest.webtoon import content_segments, slice_rows
from tests.conftest import SAMPLE_PAGE, corpus_path
from tests.e2e.test_tall_strip import _row_offsets


def _png_bytes(width: int, height: int, value: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (value, value, value)).save(buf, format="PNG")
    return buf.getvalue()


def test_natural_sort_puts_p2_before_p10() -> None:
    names = ["p10.png", "p2.png", "P1.png", "p21.png"]
    assert sorted(names, key=natural_key) == ["P1.png", "p2.png", "p10.png", "p21.png"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, [1, 2, 3, 4, 5]),
        ("3-4", [3, 4]),
        ("1,3,5", [1, 3, 5]),
        ("4-", [4, 5]),
        ("-2", [1, 2]),
        ("2-99", [2, 3, 4, 5]),
    ],
)
def test_page_selection(spec: str | None, expected: list[int]) -> None:
    assert parse_page_selection(spec, 5) == expected


@pytest.mark.parametrize("spec", ["7", "3-1", "x", "0"])
def test_bad_page_selection_is_a_clear_error(spec: str) -> None:
    with pytest.raises(InputError, match="--pages"):
        parse_page_selection(spec, 5)


def test_single_image(tmp_path: Path) -> None:
    book = ingest_book(SAMPLE_PAGE, IngestConfig(), tmp_path / "pages")
    assert len(book.pages) == 1
    page = book.pages[0]
    assert (page.width_px, page.height_px) == (992, 1373)
    stored = Image.open(tmp_path / page.image_file)
    assert stored.size == (992, 1373)
    assert np.array_equal(np.asarray(stored.convert("RGB")), np.asarray(Image.open(SAMPLE_PAGE).convert("RGB")))


def test_folder_natural_order_skips_junk(tmp_path: Path) -> None:
    folder = tmp_path / "book"
    folder.mkdir()
    for name, value in [("p10.png", 10), ("p2.png", 2), ("p1.png", 1)]:
        (folder / name).write_bytes(_png_bytes(40, 60, value))
    (folder / ".hidden.png").write_bytes(_png_bytes(40, 60, 99))
    (folder / "notes.txt").write_text("not a page")
    book = ingest_book(folder, IngestConfig(), tmp_path / "pages")
    firsts = [int(np.asarray(Image.open(tmp_path / p.image_file))[0, 0, 0]) for p in book.pages]
    assert firsts == [1, 2, 10]


def test_folder_page_selection(tmp_path: Path) -> None:
    folder = tmp_path / "book"
    folder.mkdir()
    for n in range(1, 6):
        (folder / f"page{n}.png").write_bytes(_png_bytes(30, 40, n * 10))
    book = ingest_book(folder, IngestConfig(pages="2-3"), tmp_path / "pages")
    assert [p.source_page_number for p in book.pages] == [2, 3]


def test_cbz_skips_folders_macos_junk_and_reads_comicinfo(tmp_path: Path) -> None:
    archive = tmp_path / "book.cbz"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("book/", "")
        zf.writestr("book/p10.png", _png_bytes(20, 30, 10))
        zf.writestr("book/p9.png", _png_bytes(20, 30, 9))
        zf.writestr("__MACOSX/book/._p9.png", b"junk")
        zf.writestr("book/.DS_Store", b"junk")
        zf.writestr(
            "ComicInfo.xml", "<ComicInfo><Manga>YesAndRightToLeft</Manga><LanguageISO>ja</LanguageISO></ComicInfo>"
        )
    book = ingest_book(archive, IngestConfig(), tmp_path / "pages")
    assert [p.source.split(":")[1] for p in book.pages] == ["book/p9.png", "book/p10.png"]
    assert book.manga_hint is True
    assert book.language_hint == "ja"


def test_webtoon_strip_sliced_without_losing_rows() -> None:
    # No free webtoon exists, so the test strip stacks the sample page four times (16,000+ px tall with gaps).
    page = np.asarray(Image.open(SAMPLE_PAGE).convert("RGB"))
    gap = np.full((60, page.shape[1], 3), 255, dtype=np.uint8)
    strip = np.concatenate([page, gap, page, gap, page, gap, page], axis=0)
    rows = slice_rows(strip)
    assert rows[0][0] == 0 and rows[-1][1] == strip.shape[0]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(rows)), "slices must tile the strip"
    assert all((b - a) <= 1.8 * strip.shape[1] + 1 for a, b in rows)
    # Each cut falls in one of the three white gaps between the copies (the widest gutters within reach), not
    # through the art or a panel's narrower gutter.
    gaps = [k * (page.shape[0] + len(gap)) + page.shape[0] for k in range(3)]
    cuts = [a for a, _ in rows[1:]]
    assert len(cuts) == 3 and all(any(g <= cut < g + len(gap) for g in gaps) for cut in cuts), (cuts, gaps)
    assert len(content_segments(strip)) >= 3


def test_a_strip_without_gutters_is_still_cut_to_screen_sized_segments() -> None:
    """Nowhere to cut cleanly (every row busy): the segments still tile the strip, each 0.6-1.8 widths tall (the
    slicer's contract, webtoon.slice_rows) but the last, which is what is left. Only this strip reaches the cap:
    on the real pages above a gutter always comes first."""
    noise = np.random.default_rng(4).integers(0, 256, size=(6000, 500, 3), dtype=np.uint8)
    segments = content_segments(noise)
    assert segments[0][0] == 0 and segments[-1][1] == noise.shape[0]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(segments))
    assert all(0.6 * 500 <= b - a <= 1.8 * 500 for a, b in segments[:-1]), segments
    assert segments[-1][1] - segments[-1][0] <= 1.8 * 500


def test_tall_image_becomes_segments(tmp_path: Path) -> None:
    page = np.asarray(Image.open(SAMPLE_PAGE).convert("RGB"))
    strip = np.concatenate([page, page, page], axis=0)  # 992 x 4119: aspect 4.15 >= 2.5
    path = tmp_path / "strip.png"
    Image.fromarray(strip).save(path)
    book = ingest_book(path, IngestConfig(), tmp_path / "pages")
    assert len(book.pages) >= 3
    assert {p.source_page_number for p in book.pages} == {1}
    assert [p.segment for p in book.pages] == list(range(1, len(book.pages) + 1))
    # Each segment is a band of the strip's own rows, pixel for pixel, the bands in order down the strip without
    # overlapping (_row_offsets finds each stored slice's rows on the strip, after the previous one).
    offsets = _row_offsets(strip, tmp_path, book)
    ends = [y + p.height_px for y, p in zip(offsets, book.pages, strict=True)]
    assert all(end <= start for end, start in zip(ends, offsets[1:], strict=False))
    assert all(p.width_px == strip.shape[1] for p in book.pages)


def test_1000_by_40000_strip_is_admitted(tmp_path: Path) -> None:
    strip = np.full((40_000, 1000, 3), 250, dtype=np.uint8)
    for y in range(0, 40_000, 1500):  # panels: dark blocks separated by white gutters
        strip[y + 100 : y + 1300, 50:950] = 40
    path = tmp_path / "webtoon.png"
    Image.fromarray(strip).save(path)
    book = ingest_book(path, IngestConfig(layout="webtoon"), tmp_path / "pages")
    assert len(book.pages) > 10
    assert max(p.height_px for p in book.pages) <= 1800


# ---------------------------------------------------------------------------------------------- the corpus


@pytest.mark.parametrize(
    ("relative", "pages"),
    [
        ("golden-age/BusterBear10.cbz", 3),
        ("golden-age/ChillingTales013.pdf", 5),
        ("newspaper-strips/baron-bean-strip.cbz", 1),
        ("newspaper-strips/dingbat-family-strip.cbz", 1),
        ("peppercarrot-ep17", 4),
        ("wikipe-tan/page1.ja.jpg", 1),
        ("wikipe-tan/page1.en-machine.jpg", 1),
    ],
)
def test_corpus_page_counts(relative: str, pages: int, tmp_path: Path) -> None:
    book = ingest_book(corpus_path(relative), IngestConfig(), tmp_path / "pages")
    assert len(book.pages) == pages
    for page in book.pages:
        assert (tmp_path / page.image_file).stat().st_size > 1000
        assert min(page.width_px, page.height_px) >= 200


def test_pdf_page_selection_and_dpi(tmp_path: Path) -> None:
    pdf = corpus_path("golden-age/ChillingTales013.pdf")
    low = ingest_book(pdf, IngestConfig(pages="5", pdf_dpi=72), tmp_path / "low")
    auto = ingest_book(pdf, IngestConfig(pages="5"), tmp_path / "auto")
    assert [p.source_page_number for p in low.pages] == [5]
    assert max(auto.pages[0].width_px, auto.pages[0].height_px) == pytest.approx(2000, abs=5)
    assert auto.pages[0].width_px > 2 * low.pages[0].width_px


def test_missing_input_is_clear(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        ingest_book(tmp_path / "nope.cbz", IngestConfig(), tmp_path / "pages")


@pytest.mark.parametrize("container", ["image", "folder", "cbz"])
def test_webp_pages(container: str, tmp_path: Path) -> None:
    """Real Pillow WebP codec: the bundled sample page saved as lossless WebP comes out pixel for pixel, whether it
    is the input itself, a page in a folder or a page in a CBZ."""
    original = np.asarray(Image.open(SAMPLE_PAGE).convert("RGB"))
    buf = io.BytesIO()
    Image.fromarray(original).save(buf, format="WEBP", lossless=True)
    source = tmp_path / "in"
    source.mkdir()
    if container == "image":
        path = source / "page.webp"
        path.write_bytes(buf.getvalue())
    elif container == "folder":
        path = source
        (source / "p1.webp").write_bytes(buf.getvalue())
    else:
        path = source / "book.cbz"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("p1.webp", buf.getvalue())
    book = ingest_book(path, IngestConfig(), tmp_path / "pages")
    assert len(book.pages) == 1
    stored = np.asarray(Image.open(tmp_path / book.pages[0].image_file).convert("RGB"))
    assert np.array_equal(stored, original)
