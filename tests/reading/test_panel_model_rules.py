"""Rules of the learned panel finder that the page tests did not pin: the title band needs the classical boxes,
a missing model with classical boxes given, a confident speck too small to be a panel."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from comic_narrator.reading import panel_model
from comic_narrator.reading.panel_model import detect_panels_learned
from comic_narrator.reading.panels import detect_panels
from tests.conftest import REPO

WIKIPE_TAN = REPO / "tests" / "data" / "vision" / "wikipe-tan" / "page1.ja.jpg"


def test_the_title_band_is_dropped_only_with_the_classical_boxes() -> None:
    """wikipe-tan's title and credits sit above the panels on open paper: the segmenter alone calls them a panel;
    with the classical detector's boxes (no frame there) they are a title band and go."""
    page = Image.open(WIKIPE_TAN)
    grey, rgb = np.asarray(page.convert("L")), np.asarray(page.convert("RGB"))
    alone = detect_panels_learned(grey)
    with_frames = detect_panels_learned(grey, detect_panels(rgb))
    assert alone is not None and with_frames is not None
    assert len(alone) == 4 and len(with_frames) == 3
    top = min(alone, key=lambda b: b[1])
    assert top not in with_frames and top[1] + top[3] < 0.25 * grey.shape[0]
    assert set(with_frames) <= set(alone)


def test_without_the_weights_classical_boxes_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    panel_model._session.cache_clear()
    monkeypatch.setattr(panel_model, "model_path", lambda: None)
    try:
        assert detect_panels_learned(np.full((100, 70), 255, np.uint8), [(5, 5, 60, 40), (5, 50, 60, 40)]) is None
    finally:
        panel_model._session.cache_clear()


def test_a_confident_speck_smaller_than_a_panel_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under 0.8 % of the page, however sure the model is, a region is a speck (a lit window, a balloon's
    inside), not a panel."""
    height, width = 512, 384
    prob = np.zeros((height, width), np.float32)
    prob[100:112, 100:112] = 0.99  # 144 px: 0.07 % of the grid
    prob[200:400, 40:340] = 0.99  # a panel
    page = np.random.default_rng(5).integers(0, 256, (height, width), dtype=np.uint8)
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1
    assert boxes[0][1] > 150


def test_boxes_wholly_in_the_top_or_bottom_margin_band_are_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """A running title above the panels and a page number below them, however sure the model is: each lies wholly
    in the page's top or bottom 8 %; a panel reaching into the band stays."""
    height, width = 512, 384
    prob = np.zeros((height, width), np.float32)
    prob[8:34, 90:290] = 0.99  # a running title: rows 8-33 of 512, inside the top 8 % (41 rows)
    prob[480:505, 150:260] = 0.99  # a page number's strip, inside the bottom 8 %
    prob[60:460, 40:340] = 0.99  # the panel, apart from both
    page = np.random.default_rng(7).integers(0, 256, (height, width), dtype=np.uint8)
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1 and 50 < boxes[0][1] < 65
    prob[8:34, 90:290] = 0.0
    prob[20:60, 40:340] = 0.99  # no title now; the panel reaches up into the top band: kept, whole
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1 and boxes[0][1] < 20 and boxes[0][1] + boxes[0][3] > 450


def _page(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (512, 384), dtype=np.uint8)  # art: no line of paper


def test_a_panel_with_one_confident_core_keeps_its_whole_extent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core split only cuts a component whose core falls into two or more pieces: a panel the model is a
    little less sure of near its frame (0.85) keeps the box of its whole inside, not of its core."""
    prob = np.zeros((512, 384), np.float32)
    prob[100:400, 50:330] = 0.85
    prob[112:388, 62:318] = 0.99
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(_page(11), 0.5)
    assert boxes is not None and len(boxes) == 1
    x, y, w, h = boxes[0]
    assert x <= 50 and y <= 100 and x + w >= 330 and y + h >= 400


def test_a_doubtful_region_keeps_no_core_too_small_or_too_ragged_for_a_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    prob = np.zeros((512, 384), np.float32)
    prob[60:460, 40:340] = 0.6  # a doubtful region ...
    prob[100:130, 100:130] = 0.99  # ... holding a sure square of 900 px, under twice the smallest panel (3,146)
    prob[200:420, 60:90] = 0.99  # ... and a sure L, panel-sized but filling half its box
    prob[390:420, 60:320] = 0.99
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    assert panel_model._panels_of(_page(13), 0.5) == []


def test_a_doubtful_region_the_classical_detector_boxed_too_is_kept_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """An oval frame: the segmenter is sure of the oval's inside and doubtful towards the box's corners, and no
    core fills its box; dropped alone, kept whole where a classical box matches it, dropped where the classical
    box lies elsewhere (IoU under 0.7)."""
    prob = np.zeros((512, 384), np.float32)
    prob[60:460, 40:340] = 0.6
    ys, xs = np.mgrid[0:512, 0:384]
    prob[((ys - 260) / 200) ** 2 + ((xs - 190) / 150) ** 2 <= 1.0] = 0.99
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    page = _page(17)
    assert panel_model._panels_of(page, 0.5) == []
    kept = panel_model._panels_of(page, 0.5, classical=[(40, 60, 300, 400)])
    assert kept is not None and len(kept) == 1
    x, y, w, h = kept[0]
    assert abs(x - 40) <= 4 and abs(y - 60) <= 4 and abs(x + w - 340) <= 4 and abs(y + h - 460) <= 4
    assert panel_model._panels_of(page, 0.5, classical=[(40, 60, 300, 250)]) == []
    assert panel_model._panels_of(page, 0.5, classical=[(40, 60, 300, 400)], painted=True) == kept


def test_the_second_zoomed_look_is_taken_on_the_panels_region_only_where_they_fill_little_of_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Panels filling under 72 % of the page (by the box around them all) are segmented again on that box, padded by
    2 % of the page's long side and clipped to the page; panels filling more are not looked at again."""
    crops: list[tuple[int, int]] = []

    def second_look(
        grey: np.ndarray, threshold: float, painted: bool = False, classical: object = None
    ) -> list[tuple[int, int, int, int]]:
        crops.append(grey.shape)
        return []

    monkeypatch.setattr(panel_model, "_panels_of", second_look)
    page = np.full((1000, 800), 255, np.uint8)
    boxes = [(100, 150, 300, 300), (420, 150, 280, 300), (100, 470, 600, 330)]  # 600 x 650: 49 % of the page
    assert panel_model._split_when_zoomed(page, 0.5, boxes, []) == boxes
    assert crops == [(690, 640)]  # rows 130-820, columns 80-720
    crops.clear()
    assert panel_model._split_when_zoomed(page, 0.5, [(0, 0, 400, 400)], []) == [(0, 0, 400, 400)]
    assert crops == [(420, 420)]  # clipped at the page's corner
    crops.clear()
    panel_model._split_when_zoomed(page, 0.5, [(50, 50, 700, 800)], [])  # 70 %
    assert len(crops) == 1
    crops.clear()
    panel_model._split_when_zoomed(page, 0.5, [(50, 50, 700, 900)], [])  # 79 %: no second look
    assert crops == []


def test_a_zoomed_cut_is_kept_only_where_the_classical_detector_found_every_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = np.full((1000, 800), 255, np.uint8)
    merged = (100, 150, 600, 300)
    left, right = (100, 150, 290, 300), (410, 150, 290, 300)
    # The crop starts at (80, 130): the second look's boxes are in the crop's pixels.
    monkeypatch.setattr(
        panel_model,
        "_panels_of",
        lambda grey, threshold, painted=False, classical=None: [(20, 20, 290, 300), (330, 20, 290, 300)],
    )
    assert panel_model._split_when_zoomed(page, 0.5, [merged], [left, right]) == [left, right]
    assert panel_model._split_when_zoomed(page, 0.5, [merged], [left]) == [merged]
    assert panel_model._split_when_zoomed(page, 0.5, [merged], [merged]) == [merged]


def test_a_tiling_needs_pieces_covering_most_of_it_as_a_tier_or_parted_by_straight_cuts() -> None:
    top = (0, 0, 620, 450)
    merged = (0, 500, 620, 400)
    # Two full-height panels with a wide gap between them cover 65 % of the box: no tier.
    apart = [(0, 500, 200, 400), (420, 500, 200, 400)]
    assert panel_model.colour_page_panels([top, *apart], [top, merged]) == [top, merged]
    # Two panels over a wide one cover all of it: not one tier (no piece spans its height, nor all its width), but
    # straight cuts part them, the row from the wide panel, then the row's two panels: a group of tiers.
    mixed = [(0, 500, 300, 200), (300, 500, 320, 200), (0, 700, 620, 200)]
    assert panel_model.colour_page_panels([top, *mixed], [top, merged]) == [top, *mixed]
    # The row's two panels overlapping by more than a fifth of the smaller: no cut parts them.
    crossed = [(0, 500, 340, 200), (270, 500, 350, 200), (0, 700, 620, 200)]
    assert panel_model.colour_page_panels([top, *crossed], [top, merged]) == [top, merged]
    # A tier of two slanted panels whose boxes overlap by a third of the smaller (lettered Pepper&Carrot ep. 6
    # p. 4): no straight cut parts them, but each spans the tier's height, so they are its panels.
    slanted = [(0, 500, 360, 400), (260, 500, 360, 400)]
    assert panel_model.colour_page_panels([top, *slanted], [top, merged]) == [top, *slanted]
    # The same turned upright: two panels as wide as the box, overlapping by more than a fifth of the smaller.
    leaning = [(0, 500, 620, 240), (0, 680, 620, 220)]
    assert panel_model.colour_page_panels([top, *leaning], [top, merged]) == [top, *leaning]
    # A column: two pieces each as wide as the box, one over the other.
    column = [(0, 500, 620, 200), (0, 700, 620, 200)]
    assert panel_model.colour_page_panels([top, *column], [top, merged]) == [top, *column]


def test_where_the_segmenter_finds_fewer_a_classical_panel_it_lost_outright_is_kept() -> None:
    tier, low = (0, 500, 620, 400), (0, 950, 620, 300)
    # The classical detector cut the painted middle tier along a streak (two boxes inside the learned one) and
    # found the bottom panel, which the segmenter lost entirely: its boxes win, and the lost panel joins them.
    streaks = [(0, 500, 300, 400), (320, 500, 300, 400)]
    assert panel_model.colour_page_panels([tier], [*streaks, low]) == [tier, low]
    # A classical box the learned panels overlap by a fifth of the smaller or more was not lost: the learned win.
    grazed = (0, 820, 620, 300)  # 80 px of its 300 inside the learned tier
    assert panel_model.colour_page_panels([tier], [*streaks, grazed]) == [tier]
    assert panel_model.colour_page_panels([tier], streaks) == [tier]


def _frame(page: np.ndarray, box: tuple[int, int, int, int], sides: str, thickness: int = 3) -> None:
    x, y, w, h = box
    if "t" in sides:
        page[y : y + thickness, x : x + w] = 0
    if "b" in sides:
        page[y + h - thickness : y + h, x : x + w] = 0
    if "l" in sides:
        page[y : y + h, x : x + thickness] = 0
    if "r" in sides:
        page[y : y + h, x + w - thickness : x + w] = 0


@pytest.mark.parametrize("sides", ["", "b", "lb", "lrb", "tlrb", "tr"])
def test_framed_sides_counts_the_frame_lines_along_a_box(sides: str) -> None:
    page = np.full((600, 400), 250, np.uint8)
    page[100:250, 60:300] = 170  # grey art inside, lighter than halfway to the ink
    box = (40, 80, 300, 200)
    _frame(page, box, sides)
    assert panel_model.framed_sides(page, box) == len(sides)
    # The learned box a few pixels off the lines (the model's boxes are grown a little) finds the same lines.
    assert panel_model.framed_sides(page, (37, 77, 306, 206)) == len(sides)


def test_a_broken_or_distant_line_is_no_frame() -> None:
    page = np.full((600, 400), 250, np.uint8)
    box = (40, 80, 300, 200)
    page[277:280, 40:160] = 0  # a bottom rule over 40 % of the side's width only
    page[80:280, 40 + 20 : 43 + 20] = 0  # a vertical line 20 px inside the left side: beyond 3 % of the width
    assert panel_model.framed_sides(page, box) == 0
    page[277:280, 40:340] = 0
    assert panel_model.framed_sides(page, box) == 1


def test_a_strip_is_segmented_in_half_overlapping_windows_of_the_grid_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 300 x 1000 strip is scaled to the grid's 512 rows (1707 columns) and segmented 384 columns at a time,
    every 192, the last window flush with the strip's end; the averaged map is read as a page's."""
    windows: list[tuple[int, int]] = []
    strip = np.full((300, 1000), 255, np.uint8)
    strip[:, 400:] = 0  # the window's content tells where it lies

    def probability(grey: np.ndarray) -> tuple[np.ndarray, float]:
        windows.append(grey.shape)
        return np.full(grey.shape, 0.99, np.float32), 1.0

    monkeypatch.setattr(panel_model, "panel_probability", probability)
    boxes = panel_model.detect_panels_in_strip(strip)
    width = round(1000 * 512 / 300)
    starts = [*range(0, width - 384 + 1, 192)]
    assert starts[-1] + 384 < width  # so a last window is added at the end
    assert windows == [(512, 384)] * (len(starts) + 1)
    assert boxes is not None and len(boxes) == 1
    x, y, w, h = boxes[0]
    assert x <= 6 and y <= 6 and x + w >= 994 and y + h >= 294  # the whole strip, in its own pixels


def test_without_the_weights_a_strip_gets_no_learned_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    panel_model._session.cache_clear()
    monkeypatch.setattr(panel_model, "model_path", lambda: None)
    try:
        assert panel_model.detect_panels_in_strip(np.full((300, 1000), 255, np.uint8)) is None
    finally:
        panel_model._session.cache_clear()
