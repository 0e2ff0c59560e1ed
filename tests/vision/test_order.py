"""Reading order of panel boxes: western rows, manga right to left, the tall-panel column rule, webtoon."""

from __future__ import annotations

from comic_narrator.artifacts import BBox
from comic_narrator.vision.order import reading_order

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
