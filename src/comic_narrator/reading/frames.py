"""Panels drawn as ruled frames: rectangles whose four sides are mostly covered by straight ink lines."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.reading.geometry import area_px2, iou, overlap_of_smaller

Mask = npt.NDArray[np.bool_]
_MAX_CANDIDATES = 24


@dataclass(frozen=True)
class FramedBox:
    """A rectangle found from ruled lines and how solid its frame is."""

    box: BBox
    weakest_side: float
    """Coverage of its least-covered side by line pixels (1.0: a closed frame)."""


def frame_rectangles(ink: Mask, min_area_px2: float, min_side_px: float) -> list[FramedBox]:
    """Rectangles framed by ruled lines. A side may be broken (a title or a balloon lettered over the frame)
    as long as the other three are solid; a rectangle crossed by a full line inside is two panels, not one."""
    h, w = ink.shape
    ink_u8 = ink.astype(np.uint8)
    len_h = max(10, round(0.05 * w))
    len_v = max(10, round(0.05 * h))
    horizontal = cv2.morphologyEx(
        cv2.dilate(ink_u8, np.ones((3, 1), np.uint8)), cv2.MORPH_OPEN, np.ones((1, len_h), np.uint8)
    )
    vertical = cv2.morphologyEx(
        cv2.dilate(ink_u8, np.ones((1, 3), np.uint8)), cv2.MORPH_OPEN, np.ones((len_v, 1), np.uint8)
    )
    ys = line_candidates(horizontal.sum(axis=1), len_h)
    xs = line_candidates(vertical.sum(axis=0), len_v)
    if len(ys) < 2 or len(xs) < 2:
        return []
    # Cumulative coverage along each candidate line, tolerant to a +-2 px wobble.
    h_band = cv2.dilate(horizontal, np.ones((5, 1), np.uint8)) > 0
    v_band = cv2.dilate(vertical, np.ones((1, 5), np.uint8)) > 0
    cum_h = np.concatenate([np.zeros((len(ys), 1)), np.cumsum(h_band[ys], axis=1)], axis=1)  # rows at ys
    cum_v = np.concatenate([np.zeros((len(xs), 1)), np.cumsum(v_band[:, xs].T, axis=1)], axis=1)  # cols at xs
    xa = np.array(xs)
    found: list[tuple[float, float, BBox]] = []
    for ti, top in enumerate(ys):
        for bi in range(ti + 1, len(ys)):
            bottom = ys[bi]
            height = bottom - top
            if height < min_side_px:
                continue
            # Side coverage of every vertical candidate between top and bottom.
            v_cov = (cum_v[:, bottom] - cum_v[:, top]) / height
            for li in range(len(xs)):
                if v_cov[li] < 0.3:
                    continue
                rights = np.arange(li + 1, len(xs))
                widths = xa[rights] - xs[li]
                ok = widths >= min_side_px
                if not ok.any():
                    continue
                rights, widths = rights[ok], widths[ok]
                top_cov = (cum_h[ti, xa[rights]] - cum_h[ti, xs[li]]) / widths
                bot_cov = (cum_h[bi, xa[rights]] - cum_h[bi, xs[li]]) / widths
                sides = np.stack([top_cov, bot_cov, v_cov[rights], np.full(len(rights), v_cov[li])], axis=1)
                sides.sort(axis=1)
                good = (sides[:, 0] >= 0.3) & (sides[:, 1] >= 0.9)
                for k in np.nonzero(good)[0]:
                    box = (xs[li], top, int(widths[k]), height)
                    if area_px2(box) < min_area_px2:
                        continue
                    if _crossed_inside(box, ys, xs, cum_h, cum_v, 0.97):
                        continue
                    found.append((float(sides[k].sum()), float(sides[k, 0]), box))
    return _minimal(found)


def line_candidates(profile: npt.NDArray[np.int64], min_run_px: int, most: int = _MAX_CANDIDATES) -> list[int]:
    """Positions of line candidates: peaks of a line-pixel profile, at most one per 5 px, the ``most``
    strongest, in order of position."""
    idx = np.nonzero(profile >= min_run_px)[0]
    peaks: list[tuple[int, int]] = []
    for i in idx.tolist():
        if peaks and i - peaks[-1][0] <= 4:
            if profile[i] > profile[peaks[-1][0]]:
                peaks[-1] = (i, int(profile[i]))
            continue
        peaks.append((i, int(profile[i])))
    strongest = sorted(peaks, key=lambda p: -p[1])[:most]
    return sorted(p[0] for p in strongest)


def _crossed_inside(
    box: BBox,
    ys: list[int],
    xs: list[int],
    cum_h: npt.NDArray[np.float64],
    cum_v: npt.NDArray[np.float64],
    min_cover: float,
) -> bool:
    """A box cut through by a line as solid as a frame is two panels, not one."""
    x, y, w, h = box
    margin_y, margin_x = max(4, h * 0.04), max(4, w * 0.04)
    for i, yy in enumerate(ys):
        if y + margin_y < yy < y + h - margin_y and (cum_h[i, x + w] - cum_h[i, x]) / w >= min_cover:
            return True
    for i, xx in enumerate(xs):
        if x + margin_x < xx < x + w - margin_x and (cum_v[i, y + h] - cum_v[i, y]) / h >= min_cover:
            return True
    return False


def _minimal(found: list[tuple[float, float, BBox]]) -> list[FramedBox]:
    """Drop near-duplicates (keep the best framed) and boxes mostly filled by smaller closed frames (the
    union of two neighbouring panels is framed too)."""
    kept: list[tuple[float, BBox]] = []
    for _score, weakest, box in sorted(found, key=lambda f: -f[0]):
        if any(iou(box, k) >= 0.8 for _w, k in kept):
            continue
        kept.append((weakest, box))
    out: list[FramedBox] = []
    for weakest, box in kept:
        inner = [
            k
            for w, k in kept
            if k != box and w >= 0.85 and area_px2(k) < area_px2(box) and overlap_of_smaller(k, box) >= 0.9
        ]
        if sum(area_px2(k) for k in inner) >= 0.5 * area_px2(box):
            continue
        out.append(FramedBox(box=box, weakest_side=weakest))
    return out
