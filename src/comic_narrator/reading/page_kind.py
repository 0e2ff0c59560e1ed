"""Whether a page is story, cover, non-story (ads, credits, text pages) or blank."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox, PageKind
from comic_narrator.reading.bubbles import TextBlock
from comic_narrator.reading.geometry import area_px2


def is_blank(gray: npt.NDArray[np.uint8]) -> bool:
    """A page with (almost) nothing on it: flat colour, or a few specks of scan dust."""
    if gray.size == 0:
        return True
    small = gray[:: max(1, gray.shape[0] // 400), :: max(1, gray.shape[1] // 400)].astype(np.float32)
    if float(small.std()) < 4.0:
        return True
    median = float(np.median(small))
    return float(np.mean(np.abs(small - median) > 40)) < 0.002


def classify_page(
    panels: list[BBox], blocks: list[TextBlock], width_px: int, height_px: int, full_bleed: bool
) -> PageKind:
    """Cover: one page-sized picture with display lettering and no balloons. Non-story: a page covered in loose
    print (an ad, an editorial, a credits page) with hardly any of it in balloons."""
    page_area = float(max(width_px * height_px, 1))
    balloons = sum(1 for b in blocks if b.bubble is not None)
    loose_lines = sum(len(b.lines) for b in blocks if b.bubble is None)
    covered = sum(area_px2(p) for p in panels) / page_area
    biggest_letter = max((ln.letter_px for b in blocks for ln in b.lines), default=0.0)
    single_picture = len(panels) <= 1 and (full_bleed or covered >= 0.75)
    balloon_lines = sum(len(b.lines) for b in blocks if b.bubble is not None)
    text_area = sum(area_px2(b.bbox) for b in blocks) / page_area
    # An ad or a text page: print everywhere (a quarter of the page and more), little of it in balloons.
    if len(panels) <= 2 and loose_lines >= 25 and loose_lines >= 3 * balloon_lines and text_area >= 0.25:
        return "non-story"
    if single_picture and balloons <= 1 and biggest_letter >= 0.03 * height_px:
        return "cover"
    return "story"
