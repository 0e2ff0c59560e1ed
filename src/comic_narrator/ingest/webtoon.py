"""Slicing tall pages (webtoon strips) at gutters into screen-sized segments, losing no rows."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.ingest.images import RgbImage

GUTTER_ROW_STD = 6.0
"""A row whose grey levels vary less than this is gutter (flat colour between panels)."""


def _row_busyness(image: RgbImage) -> npt.NDArray[np.float64]:
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float64)
    return np.asarray(grey.std(axis=1), dtype=np.float64)


def _best_cut(busy: npt.NDArray[np.float64], low: int, high: int, target: int) -> int:
    """Middle of the longest gutter run in [low, high), nearest the target; else the quietest row."""
    window = busy[low:high] < GUTTER_ROW_STD
    best: tuple[float, int] | None = None
    start = None
    for offset, flat in enumerate(np.append(window, False)):
        if flat and start is None:
            start = offset
        elif not flat and start is not None:
            run = offset - start
            centre = low + start + run // 2
            score = run - abs(centre - target) * 0.05
            if best is None or score > best[0]:
                best = (score, centre)
            start = None
    if best is not None:
        return best[1]
    return int(low + np.argmin(busy[low:high]))


def slice_rows(
    image: RgbImage, *, min_height_ratio: float = 0.6, max_height_ratio: float = 1.8
) -> list[tuple[int, int]]:
    """Row ranges [y0, y1) that partition the image; each is about 0.6-1.8 widths tall, cut inside gutters.

    Concatenating the ranges gives back every row, so no content is lost; ranges that are entirely flat
    colour (pure gutter) are dropped afterwards by :func:`content_segments`.
    """
    height, width = image.shape[:2]
    busy = _row_busyness(image)
    cuts = [0]
    y = 0
    max_height = int(width * max_height_ratio)
    while height - y > max_height:
        low = y + int(width * min_height_ratio)
        high = min(y + max_height, height - 1)
        target = y + int(width * (min_height_ratio + max_height_ratio) / 2)
        cut = _best_cut(busy, low, high, target)
        cuts.append(cut)
        y = cut
    cuts.append(height)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def content_segments(image: RgbImage) -> list[tuple[int, int]]:
    """The slices of :func:`slice_rows` that hold any drawing (flat-colour slices carry nothing to show)."""
    busy = _row_busyness(image)
    kept = [(a, b) for a, b in slice_rows(image) if float(busy[a:b].max()) >= GUTTER_ROW_STD]
    return kept or [(0, image.shape[0])]
