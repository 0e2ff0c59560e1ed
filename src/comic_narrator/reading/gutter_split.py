"""Splitting a learned panel region along a straight gutter: a line of paper, level or slanted, that crosses the
region from side to side where the segmenter was unsure (two panels it joined across a thin or slanted gutter)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_SLOPES = np.linspace(-0.32, 0.32, 17)
"""Gutter slopes tried (rise over run): level to about 18 degrees, both ways."""
_MIN_LIGHT = 0.88
"""Share of a gutter line's pixels that are paper (a balloon crossing it is paper too; art breaking out is not)."""
_MAX_PROB = 0.9
"""Mean inside-probability along a gutter line: the segmenter saw a doubt there (inside a panel it says ~1.0, so a
white sky or wall crossing a panel is no gutter)."""
_MIN_SCORE = 0.15
"""A cut's paper share less its mean probability: the clearer the paper and the deeper the model's doubt, the
surer the gutter (a white wall beside a clock in a Black Jack panel scored 0.14; the slanted gutters of the
constructed pages 0.16-0.92)."""
_CLEAR_LIGHT = 0.95
_MIN_CLEAR_SCORE = 0.075
"""A line that is this much paper needs only this margin: a thin gutter clear across that the segmenter half-merged
(Black Jack p. 21's tiers scored 0.10, lettered Pepper&Carrot ep. 18 p. 4's 0.13: 96 % paper, probability 0.84)."""
_MAX_DEPTH = 4
_FLANK_PX = 12
"""How far (model-grid pixels, a page 384 px wide) a panel's edge may lie from the gutter line on either side."""
_MAX_EDGE_LIGHT = 0.5
_RIDGE_PX = 4
"""A ridge: a line clear across that is paper, with art (a line mostly not paper) this near on both sides."""
_RIDGE_EDGE_LIGHT = 0.2
"""A ridge's art beside it: a line at most this much paper (lettering has paper between its letters and lines)."""
_RIDGE_MAX_PROB = 0.985
"""A ridge needs only the faintest doubt from the segmenter: a painted page's gutter a few pixels wide, painted as a
soft light band between art (Pepper&Carrot ep. 18 p. 4: 95-99 % paper, probability 0.92-0.98)."""


def split_along_gutters(
    light: npt.NDArray[np.bool_],
    prob: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_],
    min_area: float,
    *,
    ridges: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]] | None = None,
) -> list[npt.NDArray[np.bool_]]:
    """``mask`` (one connected region, in the coordinates of ``light`` and ``prob``: paper pixels and the panel
    probability over the region's box) cut along gutter lines into pieces of at least ``min_area`` pixels each.

    With ``ridges`` (a colour page: painted art), a ridge is a gutter too: a line of paper clear across the region
    with art within :data:`_RIDGE_PX` on both sides, however sure the segmenter is that it lies inside a panel. On
    line art such a line is part of the drawing (the white of an eye between hatched lids, Black Jack p. 46).
    ``ridges`` holds the paper of lines thinner than the grid's pixels, as two maps in ``light``'s coordinates:
    a pixel of the first is paper where a page row inside it is, of the second where a page column is (a gutter
    of two page pixels is a third of a grid pixel, and averaged with the art beside it, it is no paper)."""
    return _split(light, prob, mask, min_area, 0, ridges)


def _split(
    light: npt.NDArray[np.bool_],
    prob: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_],
    min_area: float,
    depth: int,
    ridges: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]] | None,
) -> list[npt.NDArray[np.bool_]]:
    if depth >= _MAX_DEPTH or mask.sum() < 2 * min_area:
        return [mask]
    best: tuple[float, npt.NDArray[np.bool_]] | None = None
    for transpose in (False, True):
        found = _best_cut(
            light.T if transpose else light,
            prob.T if transpose else prob,
            mask.T if transpose else mask,
            min_area,
            None if ridges is None else (ridges[1].T if transpose else ridges[0]),
        )
        if found is not None and (best is None or found[0] > best[0]):
            best = (found[0], found[1].T if transpose else found[1])
    if best is None:
        return [mask]
    side = best[1]
    first, second = mask & side, mask & ~side
    return [
        *_split(light, prob, first, min_area, depth + 1, ridges),
        *_split(light, prob, second, min_area, depth + 1, ridges),
    ]


def _best_cut(
    light: npt.NDArray[np.bool_],
    prob: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_],
    min_area: float,
    thin: npt.NDArray[np.bool_] | None,
) -> tuple[float, npt.NDArray[np.bool_]] | None:
    """The best row-wise (level or slanted) gutter line across ``mask``: (score, the mask of pixels above it)."""
    h, w = mask.shape
    cols = np.flatnonzero(mask.any(axis=0))
    if cols.size < 8:
        return None
    x0, x1 = int(cols[0]), int(cols[-1]) + 1
    xs = np.arange(x0, x1)
    centre = (x0 + x1 - 1) / 2.0
    rows = np.arange(h)
    all_cols = np.arange(w)
    # Pixels of the region above row y in each column, so the area on either side of a line is a sum of lookups.
    above_count = np.vstack([np.zeros((1, w), np.int64), np.cumsum(mask, axis=0)])
    total = int(mask.sum())
    best: tuple[float, int, float] | None = None
    for slope in _SLOPES:
        shift = np.round(slope * (xs - centre)).astype(np.int64)
        # For every row offset r, the line's pixels are (r + shift[k], xs[k]); outside the box they count as absent.
        ys = rows[:, None] + shift[None, :]
        valid = (ys >= 0) & (ys < h)
        yc = np.clip(ys, 0, h - 1)
        # A gutter crosses the region whole: the line stays inside the box over nearly all the region's columns.
        span = valid.sum(axis=1)
        lit = (light[yc, xs[None, :]] & valid).sum(axis=1) / np.maximum(span, 1)
        mean_prob = (prob[yc, xs[None, :]] * valid).sum(axis=1) / np.maximum(span, 1)
        # A gutter is a narrow band of paper between two panels' edges (frames or art): within a few pixels on
        # each side, a line that is mostly not paper. A white wall or sky inside a panel has paper beside it.
        edges = np.concatenate([[0], np.cumsum(lit <= _MAX_EDGE_LIGHT)])
        doubt = (lit >= _MIN_LIGHT) & (mean_prob <= _MAX_PROB)
        doubt &= (lit - mean_prob >= _MIN_SCORE) | ((lit >= _CLEAR_LIGHT) & (lit - mean_prob >= _MIN_CLEAR_SCORE))
        if thin is not None:
            thin_lit = (thin[yc, xs[None, :]] & valid).sum(axis=1) / np.maximum(span, 1)
            ridge = (thin_lit >= _CLEAR_LIGHT) & (mean_prob <= _RIDGE_MAX_PROB)
            art = np.concatenate([[0], np.cumsum(lit <= _RIDGE_EDGE_LIGHT)])
            ridge &= art[np.clip(rows + 1 + _RIDGE_PX, 0, h)] - art[np.minimum(rows + 1, h)] > 0
            ridge &= art[rows] - art[np.clip(rows - _RIDGE_PX, 0, h)] > 0
            doubt |= ridge
            lit = np.maximum(lit, thin_lit)
        ok = (span >= 0.9 * (x1 - x0)) & doubt
        above_lo = np.clip(rows - _FLANK_PX, 0, h)
        below_hi = np.clip(rows + 1 + _FLANK_PX, 0, h)
        ok &= (edges[rows] - edges[above_lo] > 0) & (edges[below_hi] - edges[np.minimum(rows + 1, h)] > 0)
        candidates = np.flatnonzero(ok)
        if candidates.size == 0:
            continue
        full_shift = np.round(slope * (all_cols - centre)).astype(np.int64)
        cut = np.clip(candidates[:, None] + full_shift[None, :], 0, h)
        upper = above_count[cut, all_cols[None, :]].sum(axis=1)
        for r, up in zip(candidates, upper, strict=True):
            if min(int(up), total - int(up)) < min_area:
                continue
            score = float(lit[r]) - float(mean_prob[r])
            if best is None or score > best[0]:
                best = (score, int(r), float(slope))
    if best is None:
        return None
    score, row, best_slope = best
    above = rows[:, None] < (row + np.round(best_slope * (all_cols - centre)).astype(np.int64))[None, :]
    return score, above
