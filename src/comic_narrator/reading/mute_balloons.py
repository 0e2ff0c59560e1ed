"""Balloons with no letters ("!", "?", "…"): the page's OCR detector finds nothing in them, so each balloon-like
light region left without text is read by the recogniser alone, on a crop of its inside."""

from __future__ import annotations

import statistics
import unicodedata
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.backends.protocols import CropRecognizer
from comic_narrator.reading.bubbles import BubbleShape, TextBlock, TextLine, bubble_shape, panel_light_regions
from comic_narrator.reading.geometry import intersection_px2

_MARKS = set("!?！？.…‥・⁉‼")
_STRONG_MARKS = set("!?！？…‥⁉‼")


@dataclass(frozen=True)
class MuteBalloonParams:
    """Sizes are in letters of the page's own lettering (the median OCR line height)."""

    min_side_letters: float = 1.2
    max_side_letters: float = 5.0
    max_aspect: float = 2.5
    min_ink_frac: float = 0.02
    """The mark inside: at least this share of the balloon's inside is ink (a blank balloon or a white patch
    has none)..."""
    max_ink_frac: float = 0.3
    """...and at most this share (a face, an eye, hatching fill more)."""
    min_outline_frac: float = 0.7
    """Share of the ring just outside the region that is dark: a balloon is closed by an inked outline."""
    max_mark_pieces: int = 4
    min_dots_ink_frac: float = 0.002
    """A dotted ellipsis ("……" lettered as a row of separate dots) is little ink: 0.5 % of a balloon's inside on
    Black Jack's pages. Below ``min_ink_frac`` a region is kept only when its marks are such a row."""
    max_dot_letters: float = 0.3
    """A dot of an ellipsis: neither side over this many letters."""
    min_dots: int = 6
    """Two ellipsis characters' worth, the way "……" is lettered (Black Jack's letterer draws 12-13 dots); a
    single "…" is few enough pieces for the recogniser's path."""
    max_dots: int = 18
    min_dots_letters: float = 1.5
    """The row is at least this many letters long ("……" is two letters; Black Jack's rows are 2.0-2.2)."""
    min_solidity: float = 0.85
    """A balloon is round or oval (its small tail aside)."""
    min_score: float = 0.5
    max_crops: int = 6
    """At most this many crops are recognised per page (in one batch)."""
    crop_height_px: int = 48
    """Crops are scaled to about the recogniser's input height."""


def is_mark_only(text: str) -> bool:
    """Punctuation a letterless balloon holds: '!', '?', '!?', '…', '...' (a lone '.' or '・' is too easily a
    speck or an eye)."""
    chars = [c for c in text if not c.isspace()]
    return (
        bool(chars) and all(c in _MARKS for c in chars) and (any(c in _STRONG_MARKS for c in chars) or len(chars) >= 2)
    )


def mute_balloons(
    image_rgb: npt.NDArray[np.uint8],
    gray: npt.NDArray[np.uint8],
    paper_luma: float,
    panels: list[BBox],
    lines: list[TextLine],
    recognizer: CropRecognizer,
    params: MuteBalloonParams | None = None,
) -> list[TextBlock]:
    """Text blocks for balloons that hold only punctuation, found among the light regions inside panels that
    no OCR line touches. A page with no lettering at all gets none (there is no letter size to judge by)."""
    params = params or MuteBalloonParams()
    if not lines or not panels:
        return []
    letter = statistics.median(ln.letter_px for ln in lines)
    _light, labels, stats = panel_light_regions(gray, paper_luma, panels)
    height_px, width_px = gray.shape
    dark = gray < paper_luma * 0.75
    candidates: list[tuple[int, npt.NDArray[np.uint8]]] = []
    dotted: list[TextBlock] = []
    xs, ys, ws, hs = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    short, long = np.minimum(ws, hs), np.maximum(ws, hs)
    sized = (
        (short >= params.min_side_letters * letter)
        & (long <= params.max_side_letters * letter)
        & (long <= params.max_aspect * short)
        & (xs > 0)
        & (ys > 0)
        & (xs + ws < width_px)
        & (ys + hs < height_px)
    )
    sized[0] = False  # the background label
    for label in np.nonzero(sized)[0].tolist():
        x, y, w, h = (int(v) for v in stats[label][:4])
        if any(intersection_px2((x, y, w, h), ln.bbox) > 0 for ln in lines):
            continue
        region = labels[y : y + h, x : x + w] == label
        filled = _filled(region)
        ink = filled & ~region
        ink_frac = float(ink.sum()) / max(1.0, float(filled.sum()))
        if not params.min_dots_ink_frac <= ink_frac <= params.max_ink_frac:
            continue
        if _outline_darkness(filled, dark, (x, y)) < params.min_outline_frac:
            continue
        box = (x, y, w, h)
        if _dotted_ellipsis(ink, filled, letter, params):
            dotted.append(_mark_block("……", 1.0, box, letter, bubble_shape(labels, stats, label)))
            continue
        if ink_frac < params.min_ink_frac or not _holds_marks(ink, filled, letter, params):
            continue
        candidates.append((label, _inside_crop(image_rgb, filled, (x, y), params.crop_height_px)))
        if len(candidates) >= params.max_crops:
            break
    found: list[TextBlock] = []
    read = recognizer.recognize_crops([crop for _label, crop in candidates])
    for (label, _crop), (raw, score) in zip(candidates, read, strict=True):
        text = unicodedata.normalize("NFKC", raw).strip()  # as the page's OCR lines are
        if score < params.min_score or not is_mark_only(text):
            continue
        box = (int(stats[label][0]), int(stats[label][1]), int(stats[label][2]), int(stats[label][3]))
        found.append(_mark_block(text, score, box, letter, bubble_shape(labels, stats, label)))
    return found + dotted


def _mark_block(text: str, score: float, box: BBox, letter: float, bubble: BubbleShape) -> TextBlock:
    line = TextLine(bbox=box, text=text, score=score, vertical=False, angle_deg=0.0, letter_px=letter)
    return TextBlock(lines=(line,), bbox=box, bubble=bubble)


def _dotted_ellipsis(
    ink: npt.NDArray[np.bool_], filled: npt.NDArray[np.bool_], letter: float, params: MuteBalloonParams
) -> bool:
    """The region holds only a row of dots across its middle, vertical or horizontal: an ellipsis ("……") lettered
    as separate dots, which the recogniser cannot read (a column of specks) and which is too many pieces and too
    little ink for a mark. Six dots or more, each small and roughly square, on one line (their centres within a tenth
    of a letter of it) at least one and a half letters long, with no gap over three times the usual one, across
    the region's middle."""
    _count, _labels, stats, centroids = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    dots = [(s, c) for s, c in zip(stats[1:], centroids[1:], strict=True) if s[4] >= 2]
    if not params.min_dots <= len(dots) <= params.max_dots:
        return False
    side = params.max_dot_letters * letter
    if any(s[2] > side or s[3] > side or max(s[2], s[3]) > 2.5 * min(s[2], s[3]) for s, _c in dots):
        return False
    xs = np.array([c[0] for _s, c in dots])
    ys = np.array([c[1] for _s, c in dots])
    along, across = (ys, xs) if np.ptp(ys) >= np.ptp(xs) else (xs, ys)
    if np.ptp(along) < params.min_dots_letters * letter or float(np.std(across)) > 0.1 * letter:
        return False
    gaps = np.diff(np.sort(along))
    if float(gaps.max()) > 3.0 * float(np.median(gaps)):
        return False
    h, w = filled.shape
    cx, cy = (xs.min() + xs.max()) / 2.0, (ys.min() + ys.max()) / 2.0
    return bool(abs(cx - w / 2.0) <= 0.25 * w and abs(cy - h / 2.0) <= 0.25 * h)


def _holds_marks(
    ink: npt.NDArray[np.bool_], filled: npt.NDArray[np.bool_], letter: float, params: MuteBalloonParams
) -> bool:
    """What the region holds looks like lettered marks: a few pieces of ink (one to four: '!', '?!', '…'),
    together about a letter in size, near the middle of a round or oval region (a face or an eye in the art
    is more pieces, off centre, or fills the region)."""
    _count, _labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    pieces = [s for s in stats[1:] if s[4] >= 2]
    if not 1 <= len(pieces) <= params.max_mark_pieces:
        return False
    x0 = min(int(s[0]) for s in pieces)
    y0 = min(int(s[1]) for s in pieces)
    x1 = max(int(s[0] + s[2]) for s in pieces)
    y1 = max(int(s[1] + s[3]) for s in pieces)
    h, w = filled.shape
    if max(x1 - x0, y1 - y0) < 0.4 * letter or x1 - x0 > 0.8 * w or y1 - y0 > 0.8 * h:
        return False
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    if abs(cx - w / 2.0) > 0.2 * w or abs(cy - h / 2.0) > 0.2 * h:
        return False
    contours, _ = cv2.findContours(filled.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return False
    outline = max(contours, key=cv2.contourArea)
    hull = float(cv2.contourArea(cv2.convexHull(outline)))
    return hull > 0 and float(cv2.contourArea(outline)) / hull >= params.min_solidity


def _filled(region: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The region with its holes (the mark drawn inside it) filled."""
    contours, _ = cv2.findContours(region.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros(region.shape, np.uint8)
    cv2.drawContours(filled, contours, -1, 1, thickness=cv2.FILLED)
    return filled.astype(bool)


def _outline_darkness(filled: npt.NDArray[np.bool_], dark: npt.NDArray[np.bool_], origin: tuple[int, int]) -> float:
    """Share of the one pixel ring around the filled region that is dark ink."""
    x, y = origin
    h, w = filled.shape
    pad = 3
    y0, x0 = max(0, y - pad), max(0, x - pad)
    y1, x1 = min(dark.shape[0], y + h + pad), min(dark.shape[1], x + w + pad)
    canvas = np.zeros((y1 - y0, x1 - x0), np.uint8)
    canvas[y - y0 : y - y0 + h, x - x0 : x - x0 + w] = filled
    ring = (cv2.dilate(canvas, np.ones((3, 3), np.uint8)) > 0) & (canvas == 0)
    if not ring.any():
        return 0.0
    return float(dark[y0:y1, x0:x1][ring].mean())


def _inside_crop(
    image_rgb: npt.NDArray[np.uint8], filled: npt.NDArray[np.bool_], origin: tuple[int, int], height_px: int
) -> npt.NDArray[np.uint8]:
    """The balloon's inside on white (its outline would read as a circled character), padded and enlarged."""
    x, y = origin
    h, w = filled.shape
    inner = cv2.erode(filled.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    crop = np.full((h, w, 3), 255, np.uint8)
    crop[inner] = image_rgb[y : y + h, x : x + w][inner]
    pad = max(2, h // 8)
    padded = cv2.copyMakeBorder(crop, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(255, 255, 255))
    scale = float(np.clip(height_px / padded.shape[0], 1.0, 4.0))
    if scale > 1.0:
        padded = cv2.resize(padded, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    return np.asarray(padded, dtype=np.uint8)
