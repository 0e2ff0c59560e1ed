"""Who speaks each balloon: the figure its tail points at, described by colour, linked across pages."""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox, PageReading, TextRegion
from comic_narrator.vision.bubbles import TextBlock
from comic_narrator.vision.geometry import centre, clip_box

SIGNATURE_HUE_BINS = 12
_SAME_FIGURE_DISTANCE = 0.35
"""Signatures closer than this (half the L1 distance of two normalised histograms) are the same figure."""


def speaker_anchor(block: TextBlock, panel_box: BBox | None) -> tuple[float, float]:
    """Where the speaker probably is: past the tail tip along the tail, else just below the balloon."""
    box = block.bubble.bbox if block.bubble is not None else block.bbox
    cx, cy = centre(box)
    size = float(max(box[2], box[3]))
    if block.bubble is not None and block.bubble.tail_xy is not None:
        tx, ty = block.bubble.tail_xy
        dx, dy = tx - cx, ty - cy
        norm = math.hypot(dx, dy) or 1.0
        return (tx + dx / norm * 0.6 * size, ty + dy / norm * 0.6 * size)
    return (cx, box[1] + box[3] + 0.6 * box[3])


def appearance_signature(
    image_rgb: npt.NDArray[np.uint8], anchor_xy: tuple[float, float], window_px: int, exclude: BBox
) -> tuple[float, ...]:
    """Hue/saturation/lightness histogram of the art around the anchor, balloon and outlines left out."""
    height_px, width_px = image_rgb.shape[:2]
    half = max(8, window_px // 2)
    x, y, w, h = clip_box(
        (round(anchor_xy[0]) - half, round(anchor_xy[1]) - half, 2 * half, 2 * half), width_px, height_px
    )
    bins = SIGNATURE_HUE_BINS + 3
    if w < 4 or h < 4:
        return tuple([0.0] * bins)
    patch = image_rgb[y : y + h, x : x + w]
    hsv = cv2.cvtColor(np.ascontiguousarray(patch), cv2.COLOR_RGB2HSV).reshape(-1, 3).astype(np.int32)
    keep = np.ones(len(hsv), dtype=bool)
    ex0, ey0, ew, eh = exclude
    yy, xx = np.mgrid[y : y + h, x : x + w]
    inside = (xx >= ex0) & (xx < ex0 + ew) & (yy >= ey0) & (yy < ey0 + eh)
    keep &= ~inside.reshape(-1)
    keep &= hsv[:, 2] > 50  # outlines and shadows carry no identity
    sel = hsv[keep]
    if len(sel) < 16:
        return tuple([0.0] * bins)
    colourful = sel[:, 1] > 60
    hue_hist = np.bincount((sel[colourful, 0] * SIGNATURE_HUE_BINS // 180), minlength=SIGNATURE_HUE_BINS)
    grey = sel[~colourful, 2]
    grey_hist = np.bincount(np.minimum(grey * 3 // 256, 2), minlength=3)
    hist = np.concatenate([hue_hist, grey_hist]).astype(np.float64)
    total = float(hist.sum())
    return tuple(float(v) for v in hist / total) if total > 0 else tuple([0.0] * bins)


def signature_distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    if not a or not b or len(a) != len(b) or sum(a) == 0 or sum(b) == 0:
        return 1.0
    return 0.5 * float(sum(abs(x - y) for x, y in zip(a, b, strict=True)))


def cluster_signatures(signatures: list[tuple[float, ...]], threshold: float = _SAME_FIGURE_DISTANCE) -> list[int]:
    """Average-linkage clustering: a cluster index per signature, numbered in order of first appearance."""
    clusters: list[list[int]] = []
    for i, sig in enumerate(signatures):
        best, best_d = -1, threshold
        for c, members in enumerate(clusters):
            d = float(np.mean([signature_distance(sig, signatures[m]) for m in members]))
            if d < best_d:
                best, best_d = c, d
        if best < 0:
            clusters.append([i])
        else:
            clusters[best].append(i)
    out = [0] * len(signatures)
    for c, members in enumerate(clusters):
        for m in members:
            out[m] = c
    return out


def link_speakers(readings: list[PageReading]) -> list[PageReading]:
    """Character ids consistent across the book: balloons whose pointed-at figures look alike share an id."""
    keys: list[tuple[int, int]] = []
    signatures: list[tuple[float, ...]] = []
    for p, reading in enumerate(readings):
        for t, text in enumerate(reading.texts):
            if text.speaker is not None and text.speaker_signature:
                keys.append((p, t))
                signatures.append(tuple(text.speaker_signature))
    if not keys:
        return list(readings)
    ids = cluster_signatures(signatures)
    by_key = {key: f"char{ids[i] + 1}" for i, key in enumerate(keys)}
    out: list[PageReading] = []
    for p, reading in enumerate(readings):
        texts: list[TextRegion] = []
        for t, text in enumerate(reading.texts):
            new_id = by_key.get((p, t))
            texts.append(text if new_id is None else text.model_copy(update={"speaker": new_id}))
        out.append(reading.model_copy(update={"texts": texts}))
    return out
