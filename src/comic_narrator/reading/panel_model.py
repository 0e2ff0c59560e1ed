"""The learned panel segmenter: a small U-Net (ONNX, shipped in the package) that marks panel interiors on a
page; connected interiors become panel boxes. How it was made: training/panels/."""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.reading.geometry import iou, moved, overlap_of_smaller
from comic_narrator.reading.gutter_split import split_along_gutters
from comic_narrator.reading.order import bands_along

MODEL_INPUT_HEIGHT_PX = 512
MODEL_INPUT_WIDTH_PX = 384
_MODEL_FILE = "panels-unet.onnx"
_ERODE_FRAC = 0.006
"""Training labels are panel insides eroded by this fraction of the page width: boxes are grown back by it."""
_MIN_PANEL_AREA_FRAC = 0.008
_MIN_CONFIDENT_P10 = 0.8
"""A panel is confidently inside throughout: its 10th-percentile probability is at least this (real panels on the
annotated pages: 0.91-1.0; slivers at scan edges and running headers: 0.56-0.71)."""
_THIN_PAPER = 0.9
"""Share of a page row (column) inside a grid pixel that must be paper for a thin paper line to cross it: a line of
lettering has paper between its letters, but not all along."""
_MARGIN_BAND_FRAC = 0.08
_SPREAD_ASPECT = 1.2
_CORE_THRESHOLD = 0.9
_CORE_ERODE_PX = 2
_CORE_MIN_AREA = 2.0
_CORE_COVER = 0.6
_CORE_NESTED = 0.5
_CORE_FILL = 0.85
"""A confident core kept from a doubtful region fills this much of its box: a panel, not a stray shape."""
_BLEED_EDGE_PX = 2
"""A learned box this close to the page's edge runs off it (boxes are clipped to the page)."""
_COLOUR_MISSED_OVERLAP = 0.2
"""A learned panel on a colour page that no classical box overlaps by this share of the smaller was lost by it."""
_NO_CLASSICAL_PANEL_SHARE = 0.2
"""Where the classical detector finds no panel on a colour page, learned boxes each this share of the page or more
are its panels."""
_TIER_COVER = 0.85
"""Learned panels tiling a classical box cover at least this share of it."""
_FRAME_LINE_COVER = 0.8
"""A side of a box is framed where one line of pixels along it, within 3 % of the box's size of the side, is ink
over this share of the side's middle 80 %."""
_FRAMED_SIDES_OF_A_PANEL = 2
"""A topmost box with frame lines along this many of its sides is a panel, never a title band."""
_ZOOM_BELOW_FILL = 0.72
"""Panels spanning less of the page than this (by area of the box around them all) are found again on that box."""
_ZOOM_PAD_FRAC = 0.02
"""The zoomed look's region is the panels' box padded by this share of the page's long side."""
_PIECE_INSIDE = 0.8
"""A learned box lying this much inside a panel (as a share of the smaller of the two) is a piece of it."""
_CLASSICAL_AGREES = 0.7
"""A doubtful learned region and a classical box this alike (IoU) are one panel both finders saw."""
_lock = threading.Lock()


def model_path() -> Path | None:
    path = Path(str(resources.files("comic_narrator").joinpath("assets", "models", _MODEL_FILE)))
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _session() -> Any:
    import onnxruntime

    path = model_path()
    if path is None:
        return None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def suits_model(width_px: int, height_px: int) -> bool:
    """Pages shaped like pages (portrait, square or a spread); strips and webtoon slices are left to the classical
    detector, which sees them at full resolution, or (painted wide strips) to :func:`detect_panels_in_strip`."""
    return 0.5 <= width_px / max(height_px, 1) <= 1.6


def is_colour_page(image_rgb: npt.NDArray[np.uint8]) -> bool:
    """Printed or painted in colour (at least 15 % of the pixels clearly coloured): black-and-white manga and
    greyscale scans score 0, Pepper&Carrot and golden-age colour pages 0.46-0.73. The learned finder is the
    default on black-and-white pages only; on colour pages the classical detector measured as well or better
    (training/panels/README.md)."""
    step = max(1, max(image_rgb.shape[:2]) // 400)
    small = np.ascontiguousarray(image_rgb[::step, ::step])
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    return float(np.mean((hsv[..., 1] > 60) & (hsv[..., 2] > 50))) >= 0.15


def colour_page_panels(learned: list[BBox], classical: list[BBox], page: tuple[int, int] | None = None) -> list[BBox]:
    """The panels of a colour page (`--panels auto`): the classical detector's, unless the segmenter finds fewer or at
    least three panels more. Where the classical detector fails on colour it merges whole tiers (a Sunday page's
    narrow gutters, a skewed scan, dark panels) or cuts a painted panel along its streaks and edges (rain, a
    tower: 17 boxes for a Sunday page's 11); where the segmenter finds one or two more, its extra boxes are as
    often an advertisement's title bar and pictures (Chilling Tales p. 2 at 150 dpi: 3 against 1, and the page must
    stay an ad). On 59 colour page-shaped pages (Pepper&Carrot ep. 17-19 and the stress set's colour pages; the rule
    was chosen on them) the classical detector alone scores F1 0.898, the segmenter alone 0.993, this choice 0.983
    (at least two more: 0.987, but the ad reads as a story).

    Where the classical boxes are kept, a classical box that two or more learned panels tile (:func:`_tiled_by`) is
    replaced by them (a tier merged across narrow gutters, where the segmenter found only one or two more on the
    whole page), and a learned panel that none of them overlaps (by a fifth of the smaller) is added to them: the
    classical detector lost it outright rather than merged it (a skewed scan's wide framed panel, Pepper&Carrot
    ep. 19 p. 3 and 5), and an ad's pictures lie inside the classical box of its page. Where the segmenter finds
    fewer, a classical box none of its panels overlaps (by a fifth of the smaller) is added to them the same way:
    the segmenter lost that panel outright (a strip's last panel, the stress set's constructed strips: 5 -> 6 of
    6 in order, the whole set 178 -> 179 of 183; nothing else moved there, on Black Jack or on six lettered
    Pepper&Carrot episodes)."""
    if len(learned) < len(classical):
        lost = [
            c
            for c in classical
            if max((overlap_of_smaller(c, b) for b in learned), default=0.0) < _COLOUR_MISSED_OVERLAP
        ]
        return learned + lost
    if len(learned) >= len(classical) + 3:
        return learned
    if not classical:
        # No classical panel: one or two learned boxes are an ad's or a cover's pictures, or a title header's
        # logo, unless the page (``page``: width, height) is known and each of them fills a panel's share of it
        # (a webtoon slice on coloured or graded paper, where the classical detector finds no paper to flood).
        if page is None or any(w * h < _NO_CLASSICAL_PANEL_SHARE * page[0] * page[1] for _x, _y, w, h in learned):
            return []
        return learned
    kept: list[BBox] = []
    for box in classical:
        pieces = [b for b in learned if overlap_of_smaller(b, box) >= _PIECE_INSIDE]
        kept.extend(pieces if _tiled_by(pieces, box) else [box])
    missed = [b for b in learned if max(overlap_of_smaller(b, c) for c in classical) < _COLOUR_MISSED_OVERLAP]
    return kept + missed


def _tiled_by(pieces: list[BBox], box: BBox) -> bool:
    """Whether two or more learned boxes tile the classical box as a layout of panels: together they cover
    :data:`_TIER_COVER` of it, and each spans nine tenths of its height (width), a tier (column) of panels that
    may overlap, or they come apart by straight cuts, a tier into its panels, a stack of tiers into its tiers, and
    so on (:func:`_cut_apart`). That is a tier, or a group of tiers (a wide panel over a row of two), the
    classical detector merged across narrow gutters; an ad's title bar and pictures cover no such box."""
    if len(pieces) < 2:
        return False
    _x, _y, w, h = box
    area = sum(pw * ph for _px, _py, pw, ph in pieces)
    if area < _TIER_COVER * w * h:
        return False
    if all(ph >= 0.9 * h for *_xy, _pw, ph in pieces) or all(pw >= 0.9 * w for _px, _py, pw, _ph in pieces):
        return True
    return _cut_apart(pieces)


def _cut_apart(pieces: list[BBox]) -> bool:
    """Whether the boxes come apart into single boxes by straight cuts across their whole group, level or upright,
    each cut between bands of boxes as the reading order cuts rows and columns (:func:`bands_along`: spans
    overlapping by at most a fifth of the smaller)."""
    if len(pieces) < 2:
        return True
    for axis in (1, 0):
        bands = bands_along(list(range(len(pieces))), pieces, axis)
        if len(bands) > 1:
            return all(_cut_apart([pieces[i] for i in band]) for band in bands)
    return False


def panel_probability(grey: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float32], float] | None:
    """Per-pixel probability of being inside a panel, on the letterboxed model grid, and the page's scale on it.

    The page and its mirror image are both segmented and the two maps averaged: panels are panels either way
    round, and the average closes gutters one pass half-saw (hand-annotated Pepper&Carrot ep. 18-19: panel F1
    0.938 -> 0.961; the manga training pages unchanged at 0.994), for one more pass of 0.05-0.08 s."""
    direct = _probability_once(grey)
    if direct is None:
        return None
    mirrored = _probability_once(np.ascontiguousarray(grey[:, ::-1]))
    assert mirrored is not None
    return ((direct[0] + mirrored[0][:, ::-1]) / 2.0).astype(np.float32), direct[1]


def _probability_once(grey: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float32], float] | None:
    session = _session()
    if session is None:
        return None
    height_px, width_px = grey.shape
    scale = min(MODEL_INPUT_HEIGHT_PX / height_px, MODEL_INPUT_WIDTH_PX / width_px)
    h, w = max(1, round(height_px * scale)), max(1, round(width_px * scale))
    canvas = np.full((MODEL_INPUT_HEIGHT_PX, MODEL_INPUT_WIDTH_PX), 255, np.uint8)
    canvas[:h, :w] = cv2.resize(grey, (w, h), interpolation=cv2.INTER_AREA)
    x = canvas.astype(np.float32)[None, None] / 255.0
    with _lock:  # one session, used from reader threads one page at a time
        (logits,) = session.run(None, {"page": x})
    prob = 1.0 / (1.0 + np.exp(-logits[0, 0]))
    return prob[:h, :w].astype(np.float32), scale


def detect_panels_learned(
    grey: npt.NDArray[np.uint8],
    classical: list[BBox] | None = None,
    threshold: float = 0.5,
    *,
    painted: bool = False,
) -> list[BBox] | None:
    """Panel boxes in page pixels (no order), or None when the model is not installed. With the classical
    detector's boxes, an unframed title band above every panel is dropped (see :func:`without_title_band`).

    A two-page spread (at least 1.2 times as wide as tall) is read a page at a time, each half at the model's
    full resolution, unless a panel found on the whole spread crosses the fold (a double-page picture).

    ``painted`` (a colour page) lets a light ridge between art cut a region as a gutter would (see
    :func:`split_along_gutters`): a painted page may paint its gutters as soft light bands."""
    whole = _panels_of(grey, threshold, painted, classical)
    if whole is None:
        return None
    height_px, width_px = grey.shape
    if width_px >= _SPREAD_ASPECT * height_px:
        fold = width_px // 2
        across = any(x < fold - 0.05 * width_px and x + w > fold + 0.05 * width_px for x, _y, w, _h in whole)
        if not across:
            left = _panels_of(np.ascontiguousarray(grey[:, :fold]), threshold, painted, classical) or []
            right_classical = None if classical is None else moved(classical, -fold, 0)
            right = _panels_of(np.ascontiguousarray(grey[:, fold:]), threshold, painted, right_classical) or []
            whole = left + moved(right, fold, 0)
    if classical is None:
        return whole
    return without_title_band(_split_when_zoomed(grey, threshold, whole, classical, painted), classical, grey)


def _split_when_zoomed(
    grey: npt.NDArray[np.uint8], threshold: float, boxes: list[BBox], classical: list[BBox], painted: bool = False
) -> list[BBox]:
    """Where the panels fill less than :data:`_ZOOM_BELOW_FILL` of the page (a scan with the book's margins
    around the art, a small page on a large canvas), the model's grid spends few pixels on the art: a gutter of a
    few pixels at the page's scale is a pixel or less there, and the panels beside it merge. The region they span
    is segmented again at the grid's full size, and a panel the second look cuts into pieces is replaced by them
    when the classical detector found each piece too (a zoomed look alone also cuts along lines drawn inside
    panels: a clock's edge, a window's frame)."""
    if len(boxes) == 0:
        return boxes
    height_px, width_px = grey.shape
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[0] + b[2] for b in boxes), max(b[1] + b[3] for b in boxes)
    if (x1 - x0) * (y1 - y0) >= _ZOOM_BELOW_FILL * width_px * height_px:
        return boxes
    pad = round(_ZOOM_PAD_FRAC * max(width_px, height_px))
    x0, y0, x1, y1 = max(0, x0 - pad), max(0, y0 - pad), min(width_px, x1 + pad), min(height_px, y1 + pad)
    zoomed = moved(
        _panels_of(np.ascontiguousarray(grey[y0:y1, x0:x1]), threshold, painted, moved(classical, -x0, -y0)) or [],
        x0,
        y0,
    )
    out: list[BBox] = []
    for box in boxes:
        pieces = [z for z in zoomed if overlap_of_smaller(z, box) >= _PIECE_INSIDE]
        confirmed = len(pieces) >= 2 and all(any(iou(z, c) >= 0.5 for c in classical) for z in pieces)
        out.extend(pieces if confirmed else [box])
    return out


def detect_panels_in_strip(grey: npt.NDArray[np.uint8], threshold: float = 0.5) -> list[BBox] | None:
    """Panel boxes of a wide strip (a newspaper or webcomic strip, wider than 1.6 times its height), or None when the
    model is not installed. Letterboxed whole, a strip's height would be a fifth of the model's grid; instead the
    strip is scaled to the grid's height and segmented a grid-sized window at a time, windows half overlapping, and
    the averaged map is read as a page's is."""
    if _session() is None:
        return None
    height_px, width_px = grey.shape
    scale = MODEL_INPUT_HEIGHT_PX / height_px
    wide = max(MODEL_INPUT_WIDTH_PX, round(width_px * scale))
    strip = np.asarray(cv2.resize(grey, (wide, MODEL_INPUT_HEIGHT_PX), interpolation=cv2.INTER_AREA), np.uint8)
    total = np.zeros(strip.shape, np.float32)
    count = np.zeros(strip.shape, np.float32)
    step = MODEL_INPUT_WIDTH_PX // 2
    starts = list(range(0, wide - MODEL_INPUT_WIDTH_PX + 1, step))
    if starts[-1] + MODEL_INPUT_WIDTH_PX < wide:
        starts.append(wide - MODEL_INPUT_WIDTH_PX)
    for x in starts:
        window = panel_probability(np.ascontiguousarray(strip[:, x : x + MODEL_INPUT_WIDTH_PX]))
        assert window is not None
        total[:, x : x + MODEL_INPUT_WIDTH_PX] += window[0]
        count[:, x : x + MODEL_INPUT_WIDTH_PX] += 1.0
    return _boxes_of(grey, total / count, wide / width_px, threshold)


def _panels_of(
    grey: npt.NDArray[np.uint8], threshold: float, painted: bool = False, classical: list[BBox] | None = None
) -> list[BBox] | None:
    result = panel_probability(grey)
    if result is None:
        return None
    return _boxes_of(grey, *result, threshold, painted, classical)


def _boxes_of(
    grey: npt.NDArray[np.uint8],
    prob: npt.NDArray[np.float32],
    scale: float,
    threshold: float,
    painted: bool = False,
    classical: list[BBox] | None = None,
) -> list[BBox]:
    """Panel boxes in page pixels from the probability map (``scale``: map pixels per page pixel). A doubtful
    region is kept whole where the classical detector (``classical``, page pixels) found a panel there too."""
    h, w = prob.shape
    # A hair-thin bridge (a balloon the model half-saw across a gutter) must not join two panels.
    inside = np.asarray(
        cv2.morphologyEx((prob >= threshold).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)),
        dtype=np.uint8,
    )
    count, labels, stats, _ = cv2.connectedComponentsWithStats(inside, connectivity=4)
    grow = _ERODE_FRAC * w
    min_area = _MIN_PANEL_AREA_FRAC * h * w
    light = _paper_pixels(grey, (w, h))
    thin = _thin_paper_lines(grey, (w, h)) if painted else None
    boxes: list[tuple[int, int, int, int]] = []
    for label in range(1, count):
        x, y, bw, bh, area = (int(v) for v in stats[label])
        if area < min_area:
            continue
        sub_prob = prob[y : y + bh, x : x + bw]
        component = labels[y : y + bh, x : x + bw] == label
        # Two panels joined across a gutter the model half-saw (thin, slanted, bridged by a balloon) come apart
        # along the straight line of paper between them before each is judged.
        for piece in split_along_gutters(
            light[y : y + bh, x : x + bw],
            sub_prob,
            component,
            2 * min_area,
            ridges=None if thin is None else (thin[0][y : y + bh, x : x + bw], thin[1][y : y + bh, x : x + bw]),
        ):
            ys, xs = np.nonzero(piece)
            px, py = int(xs.min()), int(ys.min())
            pw, ph = int(xs.max()) - px + 1, int(ys.max()) - py + 1
            box = (x + px, y + py, pw, ph)
            if float(np.percentile(sub_prob[piece], 10)) < _MIN_CONFIDENT_P10 and not _classical_agrees(
                box, classical, prob.shape, scale, grow
            ):
                # A doubtful patch (a running header, a scanner's dark edge, a strip under a panel) is dropped,
                # unless a confident panel is joined to it: then the panel is kept without the patch.
                boxes.extend(moved(_confident_cores(sub_prob, piece, min_area), x, y))
                continue
            piece_prob = sub_prob[py : py + ph, px : px + pw]
            boxes.extend(_split_by_cores(piece_prob, piece[py : py + ph, px : px + pw], box, min_area))
    # Boxes wholly inside the top or bottom margin band are a running title, a page number, a mark.
    return [
        _page_box(box, prob.shape, scale, grow)
        for box in boxes
        if box[1] + box[3] > _MARGIN_BAND_FRAC * h and box[1] < (1 - _MARGIN_BAND_FRAC) * h
    ]


def _page_box(box: tuple[int, int, int, int], grid: tuple[int, ...], scale: float, grow: float) -> BBox:
    """A box on the model's grid (``grid``: its height and width) in page pixels, grown back by ``grow`` grid
    pixels (what the training labels' erosion took) within the grid."""
    x, y, bw, bh = box
    x0, y0 = max(0.0, x - grow), max(0.0, y - grow)
    x1, y1 = min(float(grid[1]), x + bw + grow), min(float(grid[0]), y + bh + grow)
    return (round(x0 / scale), round(y0 / scale), round((x1 - x0) / scale), round((y1 - y0) / scale))


def _classical_agrees(
    box: tuple[int, int, int, int], classical: list[BBox] | None, grid: tuple[int, ...], scale: float, grow: float
) -> bool:
    """Whether the classical detector found a panel where the segmenter's doubtful region is (``box`` on the
    model's grid, in page pixels as it would be kept; IoU at least :data:`_CLASSICAL_AGREES`). The segmenter is
    unsure of the edges of frames it rarely saw (an oval, rounded corners), so its region there is doubtful at the
    rim; the classical detector closes such a frame as a box."""
    if not classical:
        return False
    page_box = _page_box(box, grid, scale, grow)
    return any(iou(page_box, c) >= _CLASSICAL_AGREES for c in classical)


def _thin_paper_lines(
    grey: npt.NDArray[np.uint8], size: tuple[int, int]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Paper lines of the page kept on the model's grid however thin (``size`` = its width and height), paper as
    :func:`_paper_pixels` has it: a grid pixel of the first map is paper where a page row inside it is, but for a
    tenth at most (a level line), of the second where a page column is (an upright line)."""
    width, height = size
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    ink, paper = (float(v) for v in np.percentile(small, (2, 98)))
    page = (grey >= ink + 0.8 * (paper - ink)).astype(np.float32)
    page_h, page_w = grey.shape
    rows = cv2.resize(page, (width, page_h), interpolation=cv2.INTER_AREA) >= _THIN_PAPER
    cols = cv2.resize(page, (page_w, height), interpolation=cv2.INTER_AREA) >= _THIN_PAPER
    row_starts = (np.arange(height) * page_h // height).astype(np.intp)
    col_starts = (np.arange(width) * page_w // width).astype(np.intp)
    return (
        np.maximum.reduceat(rows.astype(np.uint8), row_starts, axis=0) > 0,
        np.maximum.reduceat(cols.astype(np.uint8), col_starts, axis=1) > 0,
    )


def _paper_pixels(grey: npt.NDArray[np.uint8], size: tuple[int, int]) -> npt.NDArray[np.bool_]:
    """Paper-light pixels of the page on the model's grid (``size`` = its width and height): lighter than 80 % of
    the way from the page's ink to its paper (the 2nd and 98th percentiles of the page)."""
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    ink, paper = (float(v) for v in np.percentile(small, (2, 98)))
    return np.asarray(small >= ink + 0.8 * (paper - ink))


def without_title_band(
    learned: list[BBox], classical: list[BBox], grey: npt.NDArray[np.uint8] | None = None
) -> list[BBox]:
    """Drop the topmost learned panel when it is a title band: above every other panel, with no frame the classical
    detector could follow (no classical box covers half of it), on a page with at least two other panels. A chapter
    title with its logo and credit is lettering on open paper, not a picture to dwell on.

    A panel that runs off the top of the page is art, never a title: a bleed has no top frame for the classical
    detector to follow either (Black Jack p. 14's first panel was dropped as a title; constructed bleed pages: 3 of
    6 first panels). Nor is one with frame lines along two or more of its sides (with the page given): a panel
    open on one side lets the paper in, so the classical detector cannot close it, but a title band on open paper
    has a rule under it at most (the same p. 14 inside a scanned book's margin was dropped as a title)."""
    if len(learned) < 3:
        return learned
    top = min(learned, key=lambda b: b[1])
    if top[1] <= _BLEED_EDGE_PX:
        return learned
    others = [b for b in learned if b is not top]
    above_all = top[1] + top[3] <= min(b[1] for b in others) + 0.02 * top[3] + 4
    framed = any(overlap_of_smaller(top, c) >= 0.5 for c in classical) or (
        grey is not None and framed_sides(grey, top) >= _FRAMED_SIDES_OF_A_PANEL
    )
    return others if above_all and not framed else learned


def framed_sides(grey: npt.NDArray[np.uint8], box: BBox) -> int:
    """How many of the box's four sides have a frame line: a row (or column) near the side, within 3 % of the
    box's height (width) and at least 3 px, that is ink (darker than halfway from the page's ink to its paper, its
    2nd and 98th percentiles) over :data:`_FRAME_LINE_COVER` of the side's middle 80 %."""
    height_px, width_px = grey.shape
    ink, paper = (float(v) for v in np.percentile(grey, (2, 98)))
    dark = grey < ink + 0.5 * (paper - ink)
    x, y, w, h = (int(v) for v in box)
    reach_x, reach_y = max(3, round(0.03 * w)), max(3, round(0.03 * h))
    inner_x0, inner_x1 = x + w // 10, x + w - w // 10
    inner_y0, inner_y1 = y + h // 10, y + h - h // 10

    def row_line(centre: int) -> bool:
        band = dark[max(0, centre - reach_y) : min(height_px, centre + reach_y), max(0, inner_x0) : inner_x1]
        return band.size > 0 and float(band.mean(axis=1).max()) >= _FRAME_LINE_COVER

    def column_line(centre: int) -> bool:
        band = dark[max(0, inner_y0) : inner_y1, max(0, centre - reach_x) : min(width_px, centre + reach_x)]
        return band.size > 0 and float(band.mean(axis=0).max()) >= _FRAME_LINE_COVER

    return sum((row_line(y), row_line(y + h), column_line(x), column_line(x + w)))


def _cores(
    prob: npt.NDArray[np.float32], component: npt.NDArray[np.bool_], min_area: float
) -> list[tuple[int, int, int, int, int]]:
    """The component's confident cores (probability >= the core threshold, eroded) of at least the core's minimum
    area: box and area of each, on the erosion's side (callers grow them back by :data:`_CORE_ERODE_PX`)."""
    kernel = np.ones((2 * _CORE_ERODE_PX + 1, 2 * _CORE_ERODE_PX + 1), np.uint8)
    core = np.asarray(cv2.erode(((prob >= _CORE_THRESHOLD) & component).astype(np.uint8), kernel), dtype=np.uint8)
    count, _labels, stats, _ = cv2.connectedComponentsWithStats(core, connectivity=4)
    found = [tuple(int(v) for v in stats[i]) for i in range(1, count)]
    return [(x, y, w, h, area) for x, y, w, h, area in found if area >= _CORE_MIN_AREA * min_area]


def _confident_cores(
    prob: npt.NDArray[np.float32], component: npt.NDArray[np.bool_], min_area: float
) -> list[tuple[int, int, int, int]]:
    """The panels inside a doubtful component: its confident cores that fill most of their box, each grown back by
    what the erosion took. A book's margin or a binding's shadow that the model half-believes joins the panel
    beside it into one doubtful region; the panel's core stands clear of it."""
    pad = _CORE_ERODE_PX
    return [
        (px - pad, py - pad, pw + 2 * pad, ph + 2 * pad)
        for px, py, pw, ph, area in _cores(prob, component, min_area)
        if area >= _CORE_FILL * pw * ph
    ]


def _split_by_cores(
    prob: npt.NDArray[np.float32], component: npt.NDArray[np.bool_], box: tuple[int, int, int, int], min_area: float
) -> list[tuple[int, int, int, int]]:
    """One component, or the panels inside it: where the confident core (high probability, eroded) falls apart
    into several panel-sized pieces, two panels touched through a doubtful gutter; each core is grown back by what
    the erosion took."""
    x, y, _bw, _bh = box
    pieces = [(px, py, pw, ph) for px, py, pw, ph, _area in _cores(prob, component, min_area)]
    covered = sum(pw * ph for _px, _py, pw, ph in pieces)
    if len(pieces) < 2 or covered < _CORE_COVER * float(component.sum()):
        return [box]
    if any(overlap_of_smaller(a, b) >= _CORE_NESTED for i, a in enumerate(pieces) for b in pieces[i + 1 :]):
        return [box]  # one core inside another's box: a picture's dips around a shape, not panels side by side
    pad = _CORE_ERODE_PX
    return [(x + px - pad, y + py - pad, pw + 2 * pad, ph + 2 * pad) for px, py, pw, ph in pieces]
