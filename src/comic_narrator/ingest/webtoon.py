"""Slicing tall pages (webtoon strips) at gutters into screen-sized segments, losing no rows."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.ingest.images import RgbImage

GUTTER_ROW_STD = 6.0
"""A row whose grey levels vary less than this is gutter (flat colour between panels)."""

BAND_ROWS = 512
"""Rows measured at a time: each row's spread is its own, so bands give the whole strip's figures while the
float copy stays a band's (4 MB at 1,000 px wide) instead of the strip's (320 MB for 40,000 rows, and as much
again for the deviations numpy's std holds)."""


def _row_busyness(image: RgbImage) -> npt.NDArray[np.float64]:
    """Each row's standard deviation of grey levels."""
    busy = np.empty(image.shape[0], dtype=np.float64)
    for top in range(0, image.shape[0], BAND_ROWS):
        grey = cv2.cvtColor(image[top : top + BAND_ROWS], cv2.COLOR_RGB2GRAY).astype(np.float64)
        busy[top : top + grey.shape[0]] = grey.std(axis=1)
    return busy


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
    return _slice_rows(_row_busyness(image), image.shape[1], min_height_ratio, max_height_ratio)


def _slice_rows(
    busy: npt.NDArray[np.float64], width: int, min_height_ratio: float = 0.6, max_height_ratio: float = 1.8
) -> list[tuple[int, int]]:
    height = len(busy)
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
    busy = _row_busyness(image)  # measured once, for the cuts and the emptiness both
    kept = [(a, b) for a, b in _slice_rows(busy, image.shape[1]) if float(busy[a:b].max()) >= GUTTER_ROW_STD]
    return kept or [(0, image.shape[0])]
