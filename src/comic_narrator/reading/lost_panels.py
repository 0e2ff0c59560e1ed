"""Panels both finders lost: art between two panels of a tier (or of a column) where a gutter should be.

A panel of motion streaks and light sky between two slanted gutters (Pepper&Carrot ep. 16 p. 5) is paper to the
classical detector and to the segmenter, which learnt from the classical detector's boxes on such pages; its tier
was read as two panels with a wide hole between them, and its lines went to a neighbour. A hole that wide is never
a gutter: where it is mostly art, it is a panel."""

from __future__ import annotations

from comic_narrator.artifacts import BBox
from comic_narrator.reading.geometry import intersection_px2
from comic_narrator.reading.panels import PageBackground

_SAME_TIER = 0.8
"""Share of the taller panel's height two panels must share to stand side by side in one tier (a small box beside a
big panel, a caption the finders boxed, makes no tier with it)."""
_MIN_HOLE = 0.1
"""A hole between two panels of a tier at least this share of the page's width (of its height, in a column):
gutters are a few hundredths at most (the widest here, 0.058 of the page, hold 3.5-7.5 % art)."""
_MIN_ART = 0.6
"""Share of the hole that is not paper: the lost panels here are 97-99 % art; the widest gutters 8 % at most."""
_MAX_CROSSED = 0.1
"""A third panel covering more of the hole than this is what fills it: nothing was lost."""


def lost_between_panels(panels: list[BBox], background: PageBackground, width_px: int, height_px: int) -> list[BBox]:
    """The holes between two neighbouring panels of a tier (or a column) that are art: each a panel the finders
    lost, boxed as the hole itself (a slanted panel's middle)."""
    found: list[BBox] = []
    art = ~background.paper_mask
    scale = background.scale
    for upright in (False, True):
        # Upright: columns of panels, their holes running across; the boxes are read with x and y swapped.
        boxes = [(y, x, h, w) for x, y, w, h in panels] if upright else list(panels)
        ink = art.T if upright else art
        span = height_px if upright else width_px
        for first in boxes:
            for second in boxes:
                top = max(first[1], second[1])
                bottom = min(first[1] + first[3], second[1] + second[3])
                start, end = first[0] + first[2], second[0]
                if bottom - top < _SAME_TIER * max(first[3], second[3]) or end - start < _MIN_HOLE * span:
                    continue
                hole = (start, top, end - start, bottom - top)
                if any(
                    intersection_px2(other, hole) > _MAX_CROSSED * hole[2] * hole[3]
                    for other in boxes
                    if other is not first and other is not second
                ):
                    continue
                inside = ink[int(top * scale) : int(bottom * scale), int(start * scale) : int(end * scale)]
                if inside.size and float(inside.mean()) >= _MIN_ART:
                    found.append((hole[1], hole[0], hole[3], hole[2]) if upright else hole)
    return found
