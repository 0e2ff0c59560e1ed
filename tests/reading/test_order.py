"""Reading order of panel boxes: western rows, manga right to left, the tall-panel column rule, webtoon."""

from __future__ import annotations

from comic_narrator.artifacts import BBox
from comic_narrator.reading.order import panel_order, reading_order, yonkoma_order

GRID: list[BBox] = [
    (520, 20, 480, 300),  # row 1 right
    (20, 20, 480, 300),  # row 1 left
    (20, 340, 980, 300),  # row 2 full width
    (520, 660, 480, 300),  # row 3 right
    (20, 660, 480, 300),  # row 3 left
]


def test_western_grid_reads_rows_left_to_right() -> None:
    assert reading_order(GRID, "ltr") == [1, 0, 2, 4, 3]


def test_manga_grid_reads_rows_right_to_left() -> None:
    assert reading_order(GRID, "rtl") == [0, 1, 2, 3, 4]


def test_tall_panel_spanning_two_rows_is_read_before_the_stack_beside_it() -> None:
    boxes: list[BBox] = [
        (520, 20, 480, 290),  # top right
        (20, 20, 480, 600),  # tall left, spans two rows
        (520, 330, 480, 290),  # bottom right
        (20, 640, 980, 300),  # final full-width row
    ]
    assert reading_order(boxes, "ltr") == [1, 0, 2, 3]
    # Mirrored for manga: the tall panel is on the right and read first, then the stack beside it.
    mirrored: list[BBox] = [(1000 - x - w, y, w, h) for x, y, w, h in boxes]
    assert reading_order(mirrored, "rtl") == [1, 0, 2, 3]


def test_frames_that_overlap_slightly_still_form_rows() -> None:
    # Hand-drawn frames: the second row starts 12 px above the first row's bottom.
    boxes: list[BBox] = [(20, 312, 480, 300), (520, 20, 480, 304), (20, 20, 480, 300), (520, 300, 480, 300)]
    assert reading_order(boxes, "ltr") == [2, 1, 0, 3]


def test_webtoon_reads_top_to_bottom() -> None:
    boxes: list[BBox] = [(0, 3000, 800, 900), (0, 0, 800, 1200), (0, 1500, 800, 1300)]
    assert reading_order(boxes, "ttb") == [1, 2, 0]


def test_empty_and_single() -> None:
    assert reading_order([], "ltr") == []
    assert reading_order([(0, 0, 10, 10)], "rtl") == [0]


def test_a_spread_is_read_one_page_at_a_time_even_where_tiers_line_up() -> None:
    from comic_narrator.reading.order import spread_aware_order

    # Two 1000x1400 pages side by side, each with two tiers at the same heights.
    left_top, left_bottom = (20, 0, 960, 690), (20, 710, 960, 690)
    right_top, right_bottom = (1020, 0, 960, 690), (1020, 710, 960, 690)
    boxes = [left_top, right_bottom, left_bottom, right_top]
    manga = [boxes[i] for i in spread_aware_order(boxes, {}, "rtl", 2000, 1400)]
    assert manga == [right_top, right_bottom, left_top, left_bottom]
    western = [boxes[i] for i in spread_aware_order(boxes, {}, "ltr", 2000, 1400)]
    assert western == [left_top, left_bottom, right_top, right_bottom]
    # A single page of the same boxes' shape is read by tiers as before; so is a panel across the fold.
    assert [boxes[i] for i in spread_aware_order(boxes, {}, "rtl", 2000, 2000)][:2] == [right_top, left_top]
    splash = [(20, 0, 1960, 690), right_bottom, left_bottom]
    assert [splash[i] for i in spread_aware_order(splash, {}, "rtl", 2000, 1400)] == splash
    # Left to right the two readings differ: as one picture the splash across the fold comes first, then the tier
    # below it; read as two pages, the left page's panel would come before the splash.
    western_splash = [splash[i] for i in spread_aware_order(splash, {}, "ltr", 2000, 1400)]
    assert western_splash == [splash[0], left_bottom, right_bottom]


def test_boxes_with_no_clean_cut_are_read_from_the_reading_side() -> None:
    # Two balloons overlapping both across and down (no row cut, no column cut), their tops level: the one on the
    # side reading starts from comes first, left for western pages and right for manga.
    left, right = (0, 0, 600, 600), (400, 0, 600, 600)
    assert reading_order([right, left], "ltr") == [1, 0]
    assert reading_order([left, right], "rtl") == [1, 0]
    # A box whose top is clearly higher is read first whatever the direction.
    higher = (400, 0, 600, 600)
    lower = (0, 300, 600, 600)
    assert reading_order([lower, higher], "ltr") == reading_order([lower, higher], "rtl") == [1, 0]


def _yonkoma(columns: int = 2, rows: int = 4, jitter: int = 0) -> list[BBox]:
    """A 4-koma page's strips, listed row by row from the left: panel (c, r) at index r * columns + c."""
    boxes: list[BBox] = []
    for r in range(rows):
        for c in range(columns):
            boxes.append((60 + c * 500 + (jitter if r % 2 else 0), 120 + r * 330, 440, 300 + (jitter if c else 0)))
    return boxes


def test_a_4koma_page_is_read_strip_by_strip_from_the_right() -> None:
    boxes = _yonkoma()
    right = [r * 2 + 1 for r in range(4)]
    left = [r * 2 for r in range(4)]
    assert panel_order(boxes, {}, "rtl") == right + left
    # Drawn by hand: panels a few pixels off their neighbours' size and place are still strips.
    assert panel_order(_yonkoma(jitter=12), {}, "rtl") == right + left


def test_a_4koma_panel_grown_over_the_gutter_between_the_strips_is_still_read_in_its_strip() -> None:
    # A balloon drawn over the gap between the strips grows the box found for its panel, up to a quarter, and the
    # grown box may reach into the next strip; a panel a third wider is no 4-koma panel.
    right = [r * 2 + 1 for r in range(4)]
    left = [r * 2 for r in range(4)]
    boxes = _yonkoma()  # strips at x 60-500 and 560-1000, panels 440 wide
    boxes[2] = (60, 450, 520, 300)  # the left strip's second panel, 20 px into the right strip
    boxes[5] = (480, 450 + 330, 520, 300)  # the right strip's third, grown to the left as far
    assert panel_order(boxes, {}, "rtl") == right + left
    boxes[2] = (60, 450, 585, 300)
    assert yonkoma_order(boxes) is None


def test_a_4koma_page_reads_its_title_band_first() -> None:
    boxes = [(60, 10, 940, 90), *_yonkoma()]  # a title across both strips
    assert panel_order(boxes, {}, "rtl") == [0, *(r * 2 + 2 for r in range(4)), *(r * 2 + 1 for r in range(4))]


def test_grids_that_are_no_4koma_are_read_in_rows() -> None:
    # Western pages read an equal grid row by row; so does manga with two tiers, strips of three panels, a wide
    # panel below the strips' tops, or panels of different sizes.
    assert panel_order(_yonkoma(), {}, "ltr") == list(range(8))
    rows_rtl = [i ^ 1 for i in range(8)]  # right panel, then left, tier by tier
    assert panel_order(_yonkoma(rows=3), {}, "rtl") == rows_rtl[:6]
    assert panel_order(_yonkoma(rows=2), {}, "rtl") == rows_rtl[:4]
    with_wide = [*_yonkoma(), (60, 1460, 940, 300)]
    assert panel_order(with_wide, {}, "rtl") == [*rows_rtl, 8]
    for k, size in ((3, 240), (2, 350)):  # one panel a fifth shorter, or narrower: a page of tiers
        uneven = _yonkoma()
        uneven[3] = (*uneven[3][:k], size, *uneven[3][k + 1 :])  # type: ignore[assignment]
        assert panel_order(uneven, {}, "rtl") == rows_rtl, (k, size)
    assert panel_order([], {}, "rtl") == []


def test_a_band_reaching_into_the_strips_or_a_panel_over_another_is_no_4koma() -> None:
    # A wide panel whose bottom reaches 30 px into the strips' first tier (2 % of their height is allowed) is
    # part of the page's tiers, not a title over them; nor is a page where one panel lies half over another.
    assert yonkoma_order([(60, 10, 940, 140), *_yonkoma()]) is None
    assert yonkoma_order([(60, 10, 940, 130), *_yonkoma()]) is not None
    assert yonkoma_order([*_yonkoma(), (150, 270, 440, 300)]) is None  # within the left strip
