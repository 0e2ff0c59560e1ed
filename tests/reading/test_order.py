"""Reading order of panel boxes: western rows, manga right to left, the tall-panel column rule, webtoon."""

from __future__ import annotations

from comic_narrator.artifacts import BBox
from comic_narrator.reading.order import reading_order

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
