"""Panel detection on synthetic pages drawn with OpenCV (layout logic) and on the bundled real pages."""

from __future__ import annotations

import json

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from comic_narrator.artifacts import BBox
from comic_narrator.reading.frames import FramedBox
from comic_narrator.reading.geometry import iou
from comic_narrator.reading.panels import (
    PageBackground,
    PanelParams,
    detect_panels,
    estimate_background,
    is_full_bleed,
    merge_with_cells,
)
from tests.reading.conftest import DATA, load_rgb

Image = npt.NDArray[np.uint8]


def _art(rng: np.random.Generator, h: int, w: int) -> Image:
    """Painted-looking content: smooth colour blobs plus strokes, no flat paper colour."""
    small = rng.integers(30, 220, size=(max(2, h // 40), max(2, w // 40), 3)).astype(np.uint8)
    art = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    for _ in range(8):
        p1 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        p2 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        cv2.line(art, p1, p2, (10, 10, 10), 3)
    return np.asarray(art, dtype=np.uint8)


def _page(
    boxes: list[BBox], size: tuple[int, int] = (1400, 1000), paper: tuple[int, int, int] = (255, 255, 255)
) -> Image:
    rng = np.random.default_rng(7)
    page = np.full((size[0], size[1], 3), paper, dtype=np.uint8)
    for x, y, w, h in boxes:
        page[y : y + h, x : x + w] = _art(rng, h, w)
        cv2.rectangle(page, (x, y), (x + w - 1, y + h - 1), (0, 0, 0), 4)
    return page


def _assert_same_boxes(found: list[BBox], expected: list[BBox]) -> None:
    assert len(found) == len(expected), found
    for box in expected:
        assert max(iou(box, f) for f in found) >= 0.85, (box, found)


def test_grid_with_white_gutters() -> None:
    boxes = [(40, 40, 440, 400), (520, 40, 440, 400), (40, 480, 920, 380), (40, 900, 280, 460), (360, 900, 600, 460)]
    _assert_same_boxes(detect_panels(_page(boxes)), boxes)


def test_dark_gutters_and_panels_touching_the_page_edge() -> None:
    boxes = [(0, 0, 480, 690), (510, 0, 490, 690), (0, 720, 1000, 680)]
    page = _page(boxes, paper=(25, 25, 45))
    _assert_same_boxes(detect_panels(page), boxes)


def test_full_bleed_page_is_one_panel() -> None:
    rng = np.random.default_rng(3)
    page = _art(rng, 1400, 1000)
    assert detect_panels(page) == [(0, 0, 1000, 1400)]


def test_line_art_strip_with_shared_frame_lines() -> None:
    # A newspaper strip: one outer frame, panels separated by a single ruled line, line art on white.
    page = np.full((300, 1200, 3), 255, dtype=np.uint8)
    cv2.rectangle(page, (10, 10), (1189, 289), (0, 0, 0), 3)
    for x in (305, 600, 895):
        cv2.line(page, (x, 10), (x, 289), (0, 0, 0), 3)
    for cx in (150, 450, 750, 1040):  # a stick figure and a balloon in each panel
        cv2.circle(page, (cx, 120), 30, (0, 0, 0), 2)
        cv2.line(page, (cx, 150), (cx, 250), (0, 0, 0), 2)
        cv2.ellipse(page, (cx - 60, 50), (50, 25), 0, 0, 360, (0, 0, 0), 2)
    found = detect_panels(page)
    expected = [(10, 10, 296, 280), (305, 10, 296, 280), (600, 10, 296, 280), (895, 10, 295, 280)]
    _assert_same_boxes(found, expected)


def test_a_title_over_the_first_row_is_not_a_panel() -> None:
    boxes = [(40, 240, 440, 500), (520, 240, 440, 500), (40, 780, 920, 580)]
    page = _page(boxes)
    cv2.putText(page, "THE TITLE", (120, 170), cv2.FONT_HERSHEY_SIMPLEX, 4.0, (0, 0, 0), 14)
    _assert_same_boxes(detect_panels(page), boxes)


def test_blank_and_tiny_images_have_no_panels() -> None:
    assert detect_panels(np.full((1400, 1000, 3), 255, dtype=np.uint8)) == []
    assert detect_panels(np.zeros((8, 8, 3), dtype=np.uint8)) == []
    for shape in ((10, 400, 3), (400, 10, 3)):  # a sliver of art: too thin to hold a panel either way
        sliver = np.zeros(shape, dtype=np.uint8)
        sliver[2:-2, 2:-2] = 255
        assert detect_panels(sliver) == [], shape


@pytest.mark.parametrize("folder", ["peppercarrot-ep17", "wikipe-tan"])
def test_real_pages_match_ground_truth_panels(folder: str) -> None:
    gt = json.loads((DATA / folder / "gt.json").read_text(encoding="utf-8"))
    for page in gt["pages"]:
        found = detect_panels(load_rgb(DATA / folder / page["image"]))
        expected = [tuple(p["bbox"]) for p in page["panels"]]
        assert len(found) == len(expected), (page["image"], found)
        for box in expected:
            assert max(iou(box, f) for f in found) >= 0.5, (page["image"], box, found)


def test_machine_lettered_page_has_the_same_panels_as_the_original() -> None:
    # The English title is lettered across a frame on this page; the panels are those of the Japanese page.
    gt = json.loads((DATA / "wikipe-tan" / "gt.json").read_text(encoding="utf-8"))
    expected = [tuple(p["bbox"]) for p in gt["pages"][0]["panels"]]
    found = detect_panels(load_rgb(DATA / "wikipe-tan" / "page1.en-machine.jpg"))
    assert len(found) == len(expected), found
    for box in expected:
        assert max(iou(box, f) for f in found) >= 0.5, (box, found)


def _strip_with_gutters(gutter_px: int, art: bool = True) -> tuple[Image, list[BBox]]:
    """A colour strip of three framed panels on white, ``gutter_px`` of paper between frames; with ``art`` off,
    the panels are line art on white (a stick figure each)."""
    rng = np.random.default_rng(5)
    page = np.full((480, 1600, 3), 255, dtype=np.uint8)
    widths = [690, 368, 491]
    boxes: list[BBox] = []
    x = 16
    for w in widths:
        boxes.append((x, 19, w, 443))
        if art:
            page[19 : 19 + 443, x : x + w] = _art(rng, 443, w)
        else:
            cv2.circle(page, (x + w // 2, 150), 40, (0, 0, 0), 2)
            cv2.line(page, (x + w // 2, 190), (x + w // 2, 380), (0, 0, 0), 2)
        cv2.rectangle(page, (x, 19), (x + w - 1, 19 + 443 - 1), (0, 0, 0), 4)
        x += w + gutter_px
    return page, boxes


@pytest.mark.parametrize("gutter_px", [7, 14])  # the 4 px frames take 2 px each side: 3 and 10 px of paper
def test_a_strip_whose_gutters_are_a_hairline_of_paper(gutter_px: int) -> None:
    # Three pixels of paper between two frames close up when the ink is thickened by a pixel to stop a hairline gap
    # in a frame from flooding a panel: the paper line running from one side of the blob to the other is a cut.
    page, boxes = _strip_with_gutters(gutter_px)
    _assert_same_boxes(detect_panels(page), boxes)


def test_a_white_panel_is_not_cut_along_its_paper() -> None:
    # Line art on white: columns inside a panel are paper from top to bottom but for the frame lines they cross.
    page = np.full((480, 700, 3), 255, dtype=np.uint8)
    cv2.rectangle(page, (16, 19), (16 + 660 - 1, 19 + 443 - 1), (0, 0, 0), 2)
    for cx in (150, 520):
        cv2.circle(page, (cx, 150), 40, (0, 0, 0), 2)
        cv2.line(page, (cx, 190), (cx, 380), (0, 0, 0), 2)
    _assert_same_boxes(detect_panels(page), [(16, 19, 660, 443)])


def _background(mask: npt.NDArray[np.bool_], border_paper_frac: float) -> PageBackground:
    return PageBackground(rgb=(255, 255, 255), border_paper_frac=border_paper_frac, paper_mask=mask, scale=1.0)


def test_full_bleed_needs_little_paper_on_the_rim_and_no_gutter_across() -> None:
    art = np.zeros((200, 140), dtype=bool)
    assert is_full_bleed(_background(art, 0.1))
    assert not is_full_bleed(_background(art, 0.5)), "paper on half the rim: a page with margins"
    across = art.copy()
    across[100:104] = True  # a gutter of paper from one edge to the other
    assert not is_full_bleed(_background(across, 0.1))
    down = art.copy()
    down[:, 70:73] = True
    assert not is_full_bleed(_background(down, 0.1))
    almost = art.copy()
    almost[100:104, 20:] = True  # stops short of one edge by 14 % of the width: art, not a gutter
    assert is_full_bleed(_background(almost, 0.1))


def test_noisy_grey_paper_is_still_paper() -> None:
    """A scan's grey paper with heavy grain (sigma 60 in each channel): the paper tolerance widens with the rim's
    own spread, so nearly all of the rim reads as paper (the narrowest tolerance would leave out 8 % of it)."""
    rng = np.random.default_rng(11)
    boxes = [(60, 60, 400, 560), (540, 60, 400, 560), (60, 700, 880, 640)]
    page = _page(boxes, paper=(200, 200, 190)).astype(np.int16)
    grain = rng.normal(0, 60, size=page.shape).round().astype(np.int16)
    paper = np.ones(page.shape[:2], dtype=bool)
    for x, y, w, h in boxes:
        paper[y : y + h, x : x + w] = False
    page[paper] += grain[paper]
    page = np.clip(page, 0, 255).astype(np.uint8)
    background = estimate_background(page, PanelParams())
    assert background.border_paper_frac > 0.97
    _assert_same_boxes(detect_panels(page, background=background), boxes)


def test_a_speck_of_ink_outside_the_panels_is_not_a_panel() -> None:
    boxes = [(40, 40, 440, 600), (520, 40, 440, 600), (40, 700, 920, 660)]
    page = _page(boxes)
    page[660:680, 500:520] = 0  # a 20 px blot in the gutter: smaller than any panel may be
    page[20:30, 40:700] = 0  # a rule above the panels: long but thin
    _assert_same_boxes(detect_panels(page), boxes)


def test_a_blob_tiled_by_closed_frames_is_split_into_them() -> None:
    """A blob (two panels bridged by a balloon) holding two closed frames that cover it is split into those two;
    a frame nested inside one of them (an inset) is not a third tile; an open frame does not count."""
    blob = (0, 0, 1000, 400)
    left, right, inset = (0, 0, 490, 400), (510, 0, 490, 400), (50, 50, 200, 150)
    framed = [FramedBox(left, 1.0), FramedBox(right, 0.95), FramedBox(inset, 1.0)]
    assert merge_with_cells([blob], framed) == [left, right]
    assert merge_with_cells([blob], [FramedBox(left, 1.0), FramedBox(right, 0.5)]) == [blob]
    assert merge_with_cells([blob], [FramedBox(blob, 1.0), FramedBox(left, 1.0)]) == [blob], "one tile is no split"


def test_a_painted_vignette_alone_in_its_row_is_a_panel() -> None:
    # Pepper&Carrot ep. 11, last page: the middle panel has no frame, its painted splash and figure fray into the
    # white gutter and its balloons spill onto it, so its art is two loose pieces side by side; they are one panel.
    found = detect_panels(load_rgb(DATA / "peppercarrot-training" / "E11P06.jpg"))
    expected = [(41, 41, 911, 218), (41, 270, 911, 305), (41, 585, 911, 776)]  # by eye from the page
    assert len(found) == 3, found
    for box in expected:
        assert max(iou(box, f) for f in found) >= 0.75, (box, found)


def test_a_logo_header_is_not_a_panel() -> None:
    # Episode 4's title header: the logo's letters are each solid painted art, but paper runs between them.
    assert detect_panels(load_rgb(DATA / "peppercarrot-training" / "E04P00.jpg")) == []


def _ragged_vignette(seed: int, h: int, w: int) -> Image:
    """Painted art whose edges fray into white paper in a ragged band, so that no side reads as a frame."""
    art = _art(np.random.default_rng(seed), h, w)
    yy, xx = np.mgrid[0:h, 0:w]
    edge = np.minimum(np.minimum(yy, h - 1 - yy), np.minimum(xx, w - 1 - xx))
    art[edge < 8 + 40 * (0.5 + 0.5 * np.sin(xx / 9.0 + yy / 7.0))] = 255
    return art


def test_a_ragged_vignette_alone_on_its_row_is_a_panel() -> None:
    boxes = [(40, 40, 920, 400), (40, 1000, 920, 360)]
    page = _page(boxes)
    page[500:940, 200:800] = _ragged_vignette(5, 440, 600)  # 0.6 of the page's width
    found = detect_panels(page)
    assert len(found) == 3, found
    assert max(iou((200, 500, 600, 440), f) for f in found) >= 0.75, found


def test_a_ragged_vignette_beside_a_framed_panel_is_one_panel() -> None:
    # Sharing its row with a framed panel, the vignette is an open panel of that row, and counted once.
    boxes = [(40, 40, 920, 400), (40, 500, 280, 440), (40, 1000, 920, 360)]
    page = _page(boxes)
    page[500:940, 360:960] = _ragged_vignette(6, 440, 600)
    found = detect_panels(page)
    assert len(found) == 4, found
    assert max(iou((360, 500, 600, 440), f) for f in found) >= 0.7, found


def test_a_tall_figure_alone_on_its_row_is_no_panel() -> None:
    # A figure on the open paper between two panels: its art fills its box, but it is narrow.
    page = _page([(40, 40, 920, 200), (40, 1200, 920, 160)])
    cv2.ellipse(page, (500, 760), (70, 380), 0, 0, 360, (40, 90, 160), -1)
    cv2.circle(page, (500, 380), 70, (40, 90, 160), -1)
    assert len(detect_panels(page)) == 2


def test_a_balloon_across_a_gutter_does_not_join_the_panels() -> None:
    # Pepper&Carrot ep. 6 p. 5, lettered: a balloon spans the gutter between the middle row's first two panels at
    # its top; below it the gutter runs open to the paper, and the first panel's pale art is paper beside it.
    # The bottom row's balloons bridge nothing at its ends: it stays one panel.
    page = load_rgb(DATA / "peppercarrot-training" / "E06P05-lettered.jpg")
    found = detect_panels(page)
    scale = page.shape[0] / 1401  # the annotation is at the page's full size
    panels = [  # training/eval/peppercarrot-ep06
        (40, 40, 912, 192),
        (40, 256, 912, 284),
        (40, 568, 248, 508),
        (300, 568, 236, 508),
        (552, 568, 400, 508),
        (40, 1104, 912, 256),
    ]
    assert len(found) == len(panels), found
    for x, y, w, h in panels:
        box = (round(x * scale), round(y * scale), round(w * scale), round(h * scale))
        assert max(iou(box, f) for f in found) >= 0.75, (box, found)


def _balloon_across(page: Image, cx: int, cy: int) -> None:
    cv2.ellipse(page, (cx, cy), (150, 70), 0, 0, 360, (255, 255, 255), -1)
    cv2.ellipse(page, (cx, cy), (150, 70), 0, 0, 360, (0, 0, 0), 3)
    for dy in (-30, 0, 30):  # three lines of lettering
        cv2.line(page, (cx - 100, cy + dy), (cx + 100, cy + dy), (0, 0, 0), 4)


@pytest.mark.parametrize("where", ["top", "bottom"])
def test_drawn_panels_bridged_by_a_balloon_stay_apart(where: str) -> None:
    boxes = [(40, 40, 920, 400), (40, 480, 440, 500), (500, 480, 460, 500), (40, 1020, 920, 340)]
    page = _page(boxes)
    _balloon_across(page, 490, 560 if where == "top" else 900)
    _assert_same_boxes(detect_panels(page), boxes)


def test_a_balloon_off_a_panels_side_cuts_nothing() -> None:
    # A balloon that spills from a panel onto the paper beside it leaves the panel whole.
    boxes = [(40, 40, 920, 400), (40, 480, 700, 500), (40, 1020, 920, 340)]
    page = _page(boxes)
    _balloon_across(page, 740, 560)
    found = detect_panels(page)
    assert len(found) == 3, found
    assert max(iou((40, 480, 700, 500), f) for f in found) >= 0.75, found
