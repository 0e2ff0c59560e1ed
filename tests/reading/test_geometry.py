"""Box arithmetic at its edges: no boxes, boxes apart, one inside another."""

from __future__ import annotations

from comic_narrator.reading.geometry import intersection_px2, iou, overlap_of_smaller, union_box


def test_the_union_of_no_boxes_is_an_empty_box() -> None:
    assert union_box([]) == (0, 0, 0, 0)
    assert union_box(iter([(5, 5, 10, 10), (20, 0, 5, 5)])) == (5, 0, 20, 15)


def test_boxes_apart_share_nothing_and_a_box_inside_another_is_wholly_covered() -> None:
    assert intersection_px2((0, 0, 10, 10), (20, 20, 5, 5)) == 0 and iou((0, 0, 10, 10), (20, 20, 5, 5)) == 0.0
    assert overlap_of_smaller((0, 0, 100, 100), (10, 10, 5, 5)) == 1.0
    assert iou((0, 0, 10, 10), (0, 0, 10, 20)) == 0.5
    assert overlap_of_smaller((0, 0, 0, 10), (0, 0, 10, 10)) == 0.0  # an empty box covers nothing
