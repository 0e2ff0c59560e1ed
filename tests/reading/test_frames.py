"""Ruled-frame rectangles (reading/frames.py) on drawn ink: each rule of what is and is not a panel, on a page that
isolates it. tests/reading/test_panels.py and the corpus tests run the same code on real pages."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from comic_narrator.artifacts import BBox
from comic_narrator.reading.frames import FramedBox, frame_rectangles, line_candidates
from comic_narrator.reading.geometry import iou

Mask = npt.NDArray[np.bool_]
MIN_AREA_PX2 = 20_000.0
MIN_SIDE_PX = 60.0


def _ink(width: int = 1000, height: int = 1100) -> npt.NDArray[np.uint8]:
    return np.zeros((height, width), dtype=np.uint8)


def _frame(ink: npt.NDArray[np.uint8], box: BBox) -> None:
    x, y, w, h = box
    cv2.rectangle(ink, (x, y), (x + w, y + h), 1, 3)


def _found(ink: npt.NDArray[np.uint8] | Mask, min_side_px: float = MIN_SIDE_PX) -> list[FramedBox]:
    return frame_rectangles(np.asarray(ink, dtype=bool), MIN_AREA_PX2, min_side_px)


def _matches(found: list[FramedBox], expected: list[BBox]) -> bool:
    """Each expected box found once (within a line's width), and nothing else."""
    return len(found) == len(expected) and all(any(iou(f.box, e) > 0.9 for f in found) for e in expected)


def _t(box: BBox) -> BBox:
    x, y, w, h = box
    return (y, x, h, w)


def test_a_closed_frame_is_one_panel_with_a_solid_frame() -> None:
    ink = _ink()
    _frame(ink, (100, 100, 600, 400))
    (found,) = _found(ink)
    assert iou(found.box, (100, 100, 600, 400)) > 0.98
    assert found.weakest_side > 0.97


def test_a_frame_thinner_than_the_smallest_side_or_smaller_than_the_least_area_is_no_panel() -> None:
    """A ruled banner 70 px tall and 800 wide has the area of a panel but not its height (100 px at least here);
    a closed square of 130 px has the sides but not the area."""
    ink = _ink()
    _frame(ink, (100, 100, 800, 500))
    _frame(ink, (100, 700, 800, 70))
    _frame(ink, (100, 850, 130, 130))
    assert _matches(_found(ink, min_side_px=100), [(100, 100, 800, 500)])
    assert _matches(_found(ink, min_side_px=60), [(100, 100, 800, 500), (100, 700, 800, 70)])


@pytest.mark.parametrize("transposed", [False, True], ids=["top", "left"])
def test_one_side_may_be_mostly_lettered_over_but_not_two(transposed: bool) -> None:
    """A frame whose top is covered only over 35% (a title across it) is a panel, its weakest side said; one
    whose top and left sides are both half covered is not. Transposed, the broken side is the left one."""
    ink = _ink()
    cv2.line(ink, (100, 100), (415, 100), 1, 3)
    cv2.line(ink, (100, 100), (100, 500), 1, 3)
    cv2.line(ink, (900, 100), (900, 500), 1, 3)
    cv2.line(ink, (100, 500), (900, 500), 1, 3)
    cv2.line(ink, (100, 650), (500, 650), 1, 3)  # the second: top and left each half there
    cv2.line(ink, (100, 650), (100, 850), 1, 3)
    cv2.line(ink, (900, 650), (900, 1050), 1, 3)
    cv2.line(ink, (100, 1050), (900, 1050), 1, 3)
    expected: BBox = (100, 100, 800, 400)
    if transposed:
        ink, expected = np.ascontiguousarray(ink.T), _t(expected)
    (found,) = _found(ink)
    assert iou(found.box, expected) > 0.95
    assert 0.3 <= found.weakest_side < 0.45


@pytest.mark.parametrize("transposed", [False, True], ids=["stacked", "side-by-side"])
def test_a_rectangle_crossed_by_a_solid_line_is_two_panels(transposed: bool) -> None:
    """A big panel whose outer side is broken (a title lettered over it) above a small closed one: the two share a
    solid line. The rectangle round both is framed as well as the big panel is, and too little of it is closed
    frames for the nesting rule to drop it; the solid line through it says it is two panels. Drawn stacked, then
    transposed into a row, so each direction of the crossing line is tested."""
    ink = _ink(1000, 1100)
    cv2.line(ink, (50, 50), (500, 50), 1, 3)  # the big panel's top, half of it lettered over
    cv2.line(ink, (50, 50), (50, 1050), 1, 3)
    cv2.line(ink, (950, 50), (950, 1050), 1, 3)
    cv2.line(ink, (50, 750), (950, 750), 1, 3)  # the line the two share
    cv2.line(ink, (50, 1050), (950, 1050), 1, 3)
    expected = [(50, 50, 900, 700), (50, 750, 900, 300)]
    if transposed:
        ink, expected = np.ascontiguousarray(ink.T), [_t(box) for box in expected]
    found = _found(ink)
    assert _matches(found, expected), [f.box for f in found]
    big = next(f for f in found if iou(f.box, expected[0]) > 0.95)
    assert 0.3 <= big.weakest_side < 0.85, "the broken side is the big panel's weakest"


def test_two_panels_are_not_also_the_rectangle_round_both() -> None:
    """Two closed panels side by side, a balloon crossing the gutter between them (their inner sides broken for a
    tenth of their height): the rectangle round both is framed, nothing solid crosses it, but it is filled by
    the two closed frames, so it is not a third panel."""
    ink = _ink(1000, 700)
    _frame(ink, (50, 50, 430, 600))
    _frame(ink, (500, 50, 450, 600))
    ink[290:360, 470:510] = 0  # the balloon over the gutter
    found = _found(ink)
    assert _matches(found, [(50, 50, 430, 600), (500, 50, 450, 600)]), [f.box for f in found]
    assert all(0.85 <= f.weakest_side < 0.95 for f in found)


def test_a_frame_nested_in_a_weakly_framed_one_does_not_remove_it() -> None:
    """A small closed inset inside a big closed panel: the big one is not mostly filled by closed frames, so both
    are kept, each closed."""
    ink = _ink()
    _frame(ink, (50, 50, 900, 900))
    _frame(ink, (600, 100, 300, 250))
    solid = [f for f in _found(ink) if f.weakest_side > 0.97]  # the inset's lines also edge weak bands
    assert _matches(solid, [(50, 50, 900, 900), (600, 100, 300, 250)]), [f.box for f in solid]


def test_line_candidates_are_one_peak_per_line_the_strongest_in_position_order() -> None:
    profile = np.zeros(200, dtype=np.int64)
    profile[[10, 11, 12]] = [50, 90, 60]  # one thick line: its strongest row
    profile[[40, 44]] = [80, 70]  # 4 px apart: one line
    profile[[70, 75]] = [30, 95]  # 5 px apart: two lines
    profile[150] = 19  # under the run length: no line
    assert line_candidates(profile, 20) == [11, 40, 70, 75]
    assert line_candidates(profile, 20, most=2) == [11, 75]
