"""A scanner's black border along a page's edges: painted as the paper around the page before the panels are found,
on a page of light paper only; a spine's shadow, a black-gutter page and dark art at the edge are left as they are."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.metrics import in_order, match_boxes
from comic_narrator.reading.panels import PanelParams, page_paper, scan_border
from comic_narrator.reading.reader import read_page
from tests.reading.conftest import DATA, load_rgb, page_for

ANNOTATIONS = Path(__file__).resolve().parents[2] / "training" / "panels" / "annotations"
BJ21 = DATA / "blackjack-training" / "bj01_000021.jpg"  # a training page of the segmenter, bundled at 0.6 scale


def _bj21_panels(width_px: int) -> list[BBox]:
    gt = json.loads((ANNOTATIONS / "bj01-a.json").read_text(encoding="utf-8"))
    boxes = next(p["panels"] for p in gt["pages"] if p["image"] == "bj01_000021.jpg")
    scale = width_px / 1240
    return [tuple(round(v * scale) for v in b["bbox"]) for b in boxes]  # type: ignore[misc]


def _bordered(
    rgb: npt.NDArray[np.uint8], top: int, left: int, right: int = 0, bottom: int = 0
) -> npt.NDArray[np.uint8]:
    out = rgb.copy()
    out[:top] = 18
    out[:, :left] = 18
    if right:
        out[:, -right:] = 18
    if bottom:
        out[-bottom:] = 18
    return out


def _grey(rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    return np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), dtype=np.uint8)


def test_a_thin_scanner_border_no_longer_merges_a_pages_panels(ocr: RapidOcrEngine) -> None:
    """Black Jack p. 21 with a scanner's border 1 % deep along the top and 1.5 % along the left: the border read as
    a black bleed, and two of the page's five panels were found as one. The left band is painted as paper (the top
    one stays: the first panel's night sky bleeds off the top, so the band has no edge to tell it from the art),
    and the page reads whole and in order through the reader, as it does without the border."""
    rgb = load_rgb(BJ21)
    height_px, width_px = rgb.shape[:2]
    top, left = round(height_px * 0.01), round(width_px * 0.015)
    scanned = _bordered(rgb, top, left)
    assert scan_border(_grey(scanned)) == (0, 0, left, 0)
    reading = read_page(scanned, page_for(scanned), config=VisionConfig(layout="manga"), manga_hint=True, ocr=ocr)
    truth = _bj21_panels(width_px)
    found = [p.bbox for p in reading.panels]
    matched = match_boxes(truth, found)
    assert len(found) == len(truth) == len(matched) == 5, found
    assert in_order([matched[g] for g in range(len(truth))]), found


def test_only_a_sharp_dark_band_along_a_whole_side_is_a_border() -> None:
    rgb = load_rgb(BJ21)
    height_px, width_px = rgb.shape[:2]
    assert scan_border(_grey(rgb)) == (0, 0, 0, 0)  # the page as drawn: its bleeds hold paper and light art
    sides = round(height_px * 0.02), round(width_px * 0.03), round(width_px * 0.015), round(height_px * 0.02)
    scanned = _bordered(rgb, *sides)
    # The bottom, left and right bands end at the page's paper; the top one runs into the night sky drawn there.
    assert scan_border(_grey(scanned)) == (0, sides[3], sides[1], sides[2])
    # A band deeper than 6 % of the page is no scanner's border (a black panel bleeding off the page, say).
    deep = _bordered(rgb, 0, round(width_px * 0.065))
    assert scan_border(_grey(deep)) == (0, 0, 0, 0)
    # A spine's shadow fades in: its darkest columns are followed by more shadow, not by the page.
    shadow = rgb.astype(np.float32)
    ramp = np.linspace(0.2, 1.0, round(width_px * 0.08)) ** 1.5
    shadow[:, : ramp.size] *= ramp[None, :, None]
    assert scan_border(_grey(shadow.astype(np.uint8))) == (0, 0, 0, 0)
    # Dark along all but 4 % of the side (a page whose art and paper reach the edge there) is no border either.
    gapped = _bordered(rgb, 0, round(width_px * 0.03))
    gapped[: round(height_px * 0.04), : round(width_px * 0.03)] = 250
    assert scan_border(_grey(gapped)) == (0, 0, 0, 0)


def test_a_page_whose_gutters_are_all_black_keeps_its_edges() -> None:
    """A flashback's page: black margins and gutters. Its dark edges are the page's paper, which the gutter rule
    reads (``dark_paper``), not a scanner's border to paint white."""
    rgb = load_rgb(BJ21)
    truth = _bj21_panels(rgb.shape[1])
    inside = np.zeros(rgb.shape[:2], bool)
    for x, y, w, h in truth:
        inside[y : y + h, x : x + w] = True
    black = rgb.copy()
    black[~inside] = 10
    grey = _grey(black)
    assert scan_border(grey) != (0, 0, 0, 0)  # the black margins look like a border on their own ...
    painted_rgb, painted_grey, _background, dark = page_paper(black, grey, PanelParams())
    assert dark is not None  # ... but the page's gutters are dark paper,
    assert np.array_equal(painted_grey, grey) and np.array_equal(painted_rgb, black)  # so nothing is painted
