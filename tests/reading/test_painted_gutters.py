"""Gutters painted as light bands a few pixels wide between frameless painted panels (Pepper&Carrot ep. 18 p. 4):
the segmenter is sure the band is inside a panel, so on a colour page a ridge of paper between art is a gutter
whatever it says; on line art such a ridge is part of the drawing and cuts nothing."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from comic_narrator.artifacts import BBox
from comic_narrator.reading import panel_model
from comic_narrator.reading.gutter_split import split_along_gutters
from tests.conftest import REPO
from tests.reading.conftest import DATA, assert_panels_in_order

ANNOTATIONS = REPO / "training" / "panels" / "annotations" / "pc-ep18-19.json"


def test_a_painted_page_is_cut_along_its_light_gutters() -> None:
    """Episode 18 p. 4 (lettered, the bundled 0.6 scale copy): three wide panels over each other, apart by soft
    bands of 230-245 grey four page pixels high between art of 150-200; the second and third were one box."""
    page = next(
        p for p in json.loads(ANNOTATIONS.read_text(encoding="utf-8"))["pages"] if p["image"].endswith("E18P04.jpg")
    )
    rgb = np.asarray(Image.open(DATA / "peppercarrot-training" / "E18P04-lettered.jpg").convert("RGB"))
    scale = rgb.shape[1] / page["width"]
    truth: list[BBox] = [tuple(round(v * scale) for v in p["bbox"]) for p in page["panels"]]  # type: ignore[misc]
    assert_panels_in_order(rgb, truth, "ltr")


def _ridge(height: int = 300, width: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A region of painted art (no paper) with a gutter one page pixel high along row 150: on the grid it is half
    paper (``light``), and paper in the thin row map; the segmenter is sure (0.95) it lies inside a panel."""
    light = np.zeros((height, width), bool)
    light[150, ::2] = True
    rows = np.zeros_like(light)
    rows[150] = True
    prob = np.full((height, width), 0.95, np.float32)
    return light, prob, rows, np.zeros_like(light)


def test_a_ridge_of_paper_between_art_is_a_gutter_on_a_colour_page_only() -> None:
    light, prob, rows, cols = _ridge()
    mask = np.ones_like(light)
    pieces = split_along_gutters(light, prob, mask, 2000, ridges=(rows, cols))
    assert len(pieces) == 2
    assert sorted(int(np.nonzero(p)[0].max()) for p in pieces) == [149, 299]
    # Line art (no ridge maps): the segmenter's word stands.
    assert len(split_along_gutters(light, prob, mask, 2000)) == 1
    # Upright: the same gutter along a column is found through the column map.
    pieces = split_along_gutters(light.T, prob.T, mask.T, 2000, ridges=(cols.T, rows.T))
    assert len(pieces) == 2


def test_no_ridge_where_the_segmenter_is_surest_or_paper_lies_beside_the_line() -> None:
    light, prob, rows, cols = _ridge()
    mask = np.ones_like(light)
    sure = np.full_like(prob, 0.99)
    assert len(split_along_gutters(light, sure, mask, 2000, ridges=(rows, cols))) == 1
    # A band of light sky 20 rows high: paper beside the line within a few pixels, so no ridge.
    sky = np.zeros_like(light)
    sky[140:161] = True
    assert len(split_along_gutters(sky, prob, mask, 2000, ridges=(sky, cols))) == 1
    # Lines of lettering either side (a quarter paper between the letters, lettered Pepper&Carrot ep. 6 p. 4's
    # balloons): a line of paper between two lines of text is no gutter.
    lettered = light.copy()
    lettered[145:150, ::4] = lettered[151:156, ::4] = True
    assert len(split_along_gutters(lettered, prob, mask, 2000, ridges=(rows, cols))) == 1
    # Art breaking across a tenth of the line: not clear across.
    broken = rows.copy()
    broken[150, :20] = False
    assert len(split_along_gutters(light, prob, mask, 2000, ridges=(broken, cols))) == 1


def test_a_ridge_needs_art_within_four_grid_pixels_on_each_side() -> None:
    light, prob, rows, cols = _ridge()
    mask = np.ones_like(light)
    # Half paper (no art) for four rows either side of the line, art from the fifth: too wide a band of light.
    wide = light.copy()
    wide[146:150, ::2] = wide[151:155, ::2] = True
    assert len(split_along_gutters(wide, prob, mask, 2000, ridges=(rows, cols))) == 1
    # Art right above, but only from the fifth row below (and the same turned over): no ridge either.
    for side in (slice(151, 155), slice(146, 150)):
        one_side = light.copy()
        one_side[side, ::2] = True
        assert len(split_along_gutters(one_side, prob, mask, 2000, ridges=(rows, cols))) == 1
    # Art right beside the line and half paper beyond it, on each side in turn: a ridge.
    for side in (slice(144, 149), slice(152, 157)):
        near = light.copy()
        near[side, ::2] = True
        assert len(split_along_gutters(near, prob, mask, 2000, ridges=(rows, cols))) == 2


def test_paper_lines_one_page_pixel_thin_are_kept_on_the_grid() -> None:
    # A 1200x900 page of mid-grey art with a level line and an upright line of white, each one pixel thick: on the
    # model's grid (a third of the size) both are paper in their own map, from end to end, and nothing else is.
    page = np.full((1200, 900), 120, np.uint8)
    page[:20] = page[-20:] = 255  # the page's paper, and its darkest ink, fix what paper is
    page[600:640, 100:140] = 0
    page[700, :] = 255
    page[:, 450] = 255
    rows, cols = panel_model._thin_paper_lines(page, (300, 400))
    assert rows.shape == cols.shape == (400, 300)
    assert rows[233].all() and cols[:, 150].all()
    assert list(np.flatnonzero(rows[10:390].any(axis=1)) + 10) == [233]
    assert list(np.flatnonzero(cols[10:390].any(axis=0))) == [150]
