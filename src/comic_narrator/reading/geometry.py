"""Axis-aligned box arithmetic on [x, y, w, h] page-pixel boxes (BBox)."""

from __future__ import annotations

from collections.abc import Iterable

from comic_narrator.artifacts import BBox


def area_px2(box: BBox) -> int:
    return max(0, box[2]) * max(0, box[3])


def intersection_px2(a: BBox, b: BBox) -> int:
    ix = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    iy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, ix) * max(0, iy)


def iou(a: BBox, b: BBox) -> float:
    inter = intersection_px2(a, b)
    union = area_px2(a) + area_px2(b) - inter
    return inter / union if union > 0 else 0.0


def overlap_of_smaller(a: BBox, b: BBox) -> float:
    """Intersection over the smaller box's area: 1.0 when one box lies inside the other."""
    smaller = min(area_px2(a), area_px2(b))
    return intersection_px2(a, b) / smaller if smaller > 0 else 0.0


def union_box(boxes: Iterable[BBox]) -> BBox:
    items = list(boxes)
    if not items:
        return (0, 0, 0, 0)
    x0 = min(b[0] for b in items)
    y0 = min(b[1] for b in items)
    x1 = max(b[0] + b[2] for b in items)
    y1 = max(b[1] + b[3] for b in items)
    return (x0, y0, x1 - x0, y1 - y0)


def moved(boxes: Iterable[BBox], dx: int, dy: int) -> list[BBox]:
    """The boxes moved by (dx, dy): from a crop's pixels to the page's, or back with the offsets negated."""
    return [(x + dx, y + dy, w, h) for x, y, w, h in boxes]


def centre(box: BBox) -> tuple[float, float]:
    return (box[0] + box[2] / 2.0, box[1] + box[3] / 2.0)


def scale_box(box: BBox, factor: float) -> BBox:
    """A box measured on an image resized by ``factor`` mapped back to the original pixels."""
    inv = 1.0 / factor
    return (round(box[0] * inv), round(box[1] * inv), round(box[2] * inv), round(box[3] * inv))


def clip_box(box: BBox, width_px: int, height_px: int) -> BBox:
    x0 = min(max(box[0], 0), width_px)
    y0 = min(max(box[1], 0), height_px)
    x1 = min(max(box[0] + box[2], 0), width_px)
    y1 = min(max(box[1] + box[3], 0), height_px)
    return (x0, y0, x1 - x0, y1 - y0)


def interval_overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    """Length of the overlap of [a0, a1] and [b0, b1] (negative: the gap between them)."""
    return min(a1, b1) - max(a0, b0)
