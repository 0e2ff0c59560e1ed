"""Inset panels drawn over a splash: found on the real Golden-Age page, not invented on other real pages."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from comic_narrator.artifacts import BBox
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.geometry import overlap_of_smaller
from comic_narrator.reading.insets import add_insets
from comic_narrator.reading.order import panel_order
from comic_narrator.reading.panels import PanelParams, detect_panels, estimate_background
from comic_narrator.reading.reader import read_page
from tests.conftest import corpus_path
from tests.reading.conftest import DATA, load_rgb, page_for


def _insets_of(image: npt.NDArray[np.uint8], text_boxes: list[BBox] | None = None) -> list[BBox]:
    params = PanelParams()
    background = estimate_background(image, params)
    panels = detect_panels(image, params, background)
    gray = np.asarray(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
    found, parents = add_insets(gray, panels, background.scale, float(np.mean(background.rgb)), text_boxes or [])
    return [found[i] for i in parents]


def _chilling_tales_story_page() -> npt.NDArray[np.uint8]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(corpus_path("golden-age", "ChillingTales013.pdf")))
    return np.asarray(document[4].render(scale=150 / 72).to_pil().convert("RGB"))


def test_splash_page_reads_the_splash_then_its_two_insets(ocr: RapidOcrEngine) -> None:
    image = _chilling_tales_story_page()
    reading = read_page(image, page_for(image, 4), config=VisionConfig(), manga_hint=None, ocr=ocr)
    assert reading.page_kind == "story"
    boxes = [p.bbox for p in reading.panels]
    assert len(boxes) == 3  # counted by eye: the splash, the two men, the temple below
    splash, first, second = boxes
    assert all(overlap_of_smaller(inset, splash) >= 0.95 for inset in (first, second))
    assert first[1] < second[1]  # the inset higher up is read first
    # Each inset's lettering is read with it, not with the splash its box also lies in.
    panel_of = {t.text.lower(): t.panel for t in reading.texts}
    assert [p for text, p in panel_of.items() if "matto grosso" in text] == [1]
    assert [p for text, p in panel_of.items() if "vezin" in text] == [2]
    assert [p for text, p in panel_of.items() if "screaming, it came" in text] == [0]


@pytest.mark.parametrize(
    "name",
    [
        "peppercarrot-ep17/page1.jpg",
        "peppercarrot-ep17/page4.jpg",
        "wikipe-tan/page1.ja.jpg",
        "wikipe-tan/page1.en-machine.jpg",
    ],
)
def test_no_inset_on_pages_without_any(name: str) -> None:
    # No lettering is passed, so not even the caption-box rule is there to save a wrong split.
    assert _insets_of(load_rgb(DATA / name)) == []


@pytest.mark.parametrize(
    ("archive", "count"),
    [
        ("golden-age/BusterBear10.cbz", 3),
        ("newspaper-strips/baron-bean-strip.cbz", 1),
        ("newspaper-strips/dingbat-family-strip.cbz", 1),
    ],
)
def test_no_inset_on_golden_age_and_newspaper_pages(archive: str, count: int) -> None:
    import io
    import zipfile

    from PIL import Image

    path: Path = corpus_path(*archive.split("/"))
    with zipfile.ZipFile(path) as book:
        names = sorted(n for n in book.namelist() if n.lower().endswith(".jpg") and "/._" not in f"/{n}")
        images = [np.asarray(Image.open(io.BytesIO(book.read(n))).convert("RGB")) for n in names]
    assert len(images) == count
    assert [_insets_of(image) for image in images] == [[]] * count


def _splash() -> npt.NDArray[np.uint8]:
    """A 900x1200 page: paper and a framed 800x1100 splash (at 50, 50) filled with hatching."""
    rng = np.random.default_rng(3)
    page = np.full((1200, 900, 3), 235, np.uint8)
    art = rng.integers(90, 200, size=(1100, 800), dtype=np.uint8)
    art = cv2.GaussianBlur(art, (0, 0), 3)
    for k in range(0, 800, 37):  # hatching strokes: line art, but no closed rectangle
        cv2.line(art, (k, 0), (k + 300, 1100), 40, 2)
    page[50:1150, 50:850] = np.stack([art] * 3, axis=-1)
    cv2.rectangle(page, (50, 50), (849, 1149), (10, 10, 10), 4)
    return page


def _draw_inset(page: npt.NDArray[np.uint8], x0: int, y0: int, x1: int, y1: int) -> None:
    page[y0:y1, x0:x1] = 170
    cv2.rectangle(page, (x0, y0), (x1, y1), (10, 10, 10), 4)


def _near(found: BBox, x0: int, y0: int, x1: int, y1: int) -> bool:
    x, y, w, h = found
    return abs(x - x0) <= 8 and abs(y - y0) <= 8 and abs(w - (x1 - x0)) <= 12 and abs(h - (y1 - y0)) <= 12


def _splash_with_frames(margin: int) -> npt.NDArray[np.uint8]:
    """The splash with a 360x340 inset frame over it (with a paper margin of ``margin`` px around its ink) and a
    small framed sign."""
    page = _splash()
    x0, y0, x1, y1 = 420, 700, 780, 1040
    if margin:
        cv2.rectangle(page, (x0 - margin, y0 - margin), (x1 + margin, y1 + margin), (235, 235, 235), -1)
    _draw_inset(page, x0, y0, x1, y1)
    cv2.rectangle(page, (120, 120), (200, 170), (10, 10, 10), 3)  # a sign in the art: too small for a panel
    return page


@pytest.mark.parametrize("margin", [0, 6])
def test_drawn_inset_is_found_and_the_small_sign_is_not(margin: int) -> None:
    (inset,) = _insets_of(_splash_with_frames(margin))
    assert _near(inset, 420, 700, 780, 1040), inset


def test_an_inset_in_the_splash_corner_shares_two_of_its_frame_lines() -> None:
    # Its top and left sides are the splash's own frame: only the right and bottom are lines of its own.
    page = _splash()
    _draw_inset(page, 50, 50, 400, 380)
    (inset,) = _insets_of(page)
    assert _near(inset, 50, 50, 400, 380), inset


def test_an_inset_drawn_over_the_corner_of_another_is_found_and_so_is_the_other() -> None:
    # The second frame hides the first one's bottom-right corner: the first's right and bottom sides are drawn
    # only where the second does not cover them.
    page = _splash()
    _draw_inset(page, 200, 600, 520, 900)
    _draw_inset(page, 440, 820, 780, 1080)
    insets = _insets_of(page)
    assert len(insets) == 2
    assert any(_near(i, 200, 600, 520, 900) for i in insets) and any(_near(i, 440, 820, 780, 1080) for i in insets)


def test_a_dark_patch_of_the_art_is_not_a_frame_even_where_straight_lines_meet_its_edges() -> None:
    # Shadowed foliage in the splash's corner, solid black; a kerb ruled on from its bottom edge across the
    # splash and a lamp post ruled down from its inner edge. Black covers the rectangle's two inner sides end to
    # end and each lies on a ruled line, but no stretch of either side is ruled: it is art, not a frame.
    page = _splash()
    x1, y1 = 330, 420
    page[50:y1, 50:x1] = 12
    cv2.line(page, (x1 + 20, y1), (650, y1), (10, 10, 10), 3)
    cv2.line(page, (x1, y1 + 20), (x1, 1000), (10, 10, 10), 3)
    assert _insets_of(page) == []


def test_a_frame_full_of_lettering_is_a_caption_box_not_an_inset() -> None:
    page = _splash_with_frames(6)
    lettering = [(430, 710 + 40 * k, 340, 30) for k in range(8)]  # eight lines filling the frame
    assert _insets_of(page, lettering) == []
    assert len(_insets_of(page, lettering[:1])) == 1  # one line in a panel leaves it a panel


def test_insets_are_read_after_their_splash_unless_they_open_it() -> None:
    splash: BBox = (0, 0, 1000, 1400)
    top_left: BBox = (0, 0, 400, 300)
    middle: BBox = (200, 600, 400, 400)
    bottom: BBox = (0, 1100, 1000, 300)
    panels = [splash, bottom, middle, top_left]
    parents = {1: 0, 2: 0, 3: 0}
    assert panel_order(panels, parents, "ltr") == [3, 0, 2, 1]
    # Right to left the top-left inset is on the far side of the opening: read after the splash.
    assert panel_order(panels, parents, "rtl") == [0, 3, 2, 1]
    # A page without insets is ordered as before.
    assert panel_order([(0, 500, 100, 100), (0, 0, 100, 100)], {}, "ltr") == [1, 0]
