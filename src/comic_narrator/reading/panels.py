"""Panel detection on real art: background flood from the page edge, frame blobs, gutter and frame-line cuts."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.reading.frames import FramedBox, frame_rectangles
from comic_narrator.reading.geometry import area_px2, interval_overlap, iou, overlap_of_smaller, scale_box

Mask = npt.NDArray[np.bool_]
LINE_ART_PAPER = 0.085
"""Art holding at least this share of paper inside it is line art: ruled frames are looked for there."""
SOLID_LOOSE_FILL = 0.6
SOLID_LOOSE_PAPER = 0.25
"""An unframed piece whose art fills at least SOLID_LOOSE_FILL of its box, with at most SOLID_LOOSE_PAPER of it
paper-coloured (balloons), is solid painted art (a vignette), not a figure, a title or lettering over line art."""
VIGNETTE_AREA_MIN = 3.0
"""A band of solid pieces alone on its row is a panel from this many smallest-panel areas."""
VIGNETTE_FILL = 0.5
"""... and when their art fills at least this share of the band's box ..."""
VIGNETTE_WIDTH_MIN = 0.5
"""... and the band spans at least this share of the page's width (alone on its row, a panel spans the page)."""


@dataclass(frozen=True)
class PanelParams:
    """Tuning of the classical detector; every size is a fraction of the page so it holds at any resolution."""

    analysis_long_side_px: int = 1000
    """Pages are analysed at this size (a strip keeps at least ``analysis_short_side_px`` on its short side)."""
    analysis_short_side_px: int = 600
    min_panel_area_frac: float = 0.012
    """Smallest panel as a fraction of the page area."""
    min_panel_side_frac: float = 0.06
    """Smallest panel side as a fraction of the page's short side."""
    gutter_ink_frac: float = 0.12
    """A row/column inside a blob is a gutter when at most this fraction of it is ink."""
    loose_gutter_ink_frac: float = 0.18
    """Tolerance used to split blobs that are not rectangles (a bubble or figure bridging a gutter)."""
    frame_line_ink_frac: float = 0.92
    """A row/column crossing a blob that is this dark is a shared frame line between two panels."""
    paper_seams: bool = True
    """Cut a blob along rows/columns that are paper from side to side (gutters of one to three pixels). Off
    wherever the learned segmenter is consulted (pages shaped like pages): there the classical boxes are its
    hints and, on colour pages, are weighed against its boxes by a rule chosen on the detector without seams."""


@dataclass(frozen=True)
class PageBackground:
    """The paper: its colour, how sure we are that the page has paper showing, and the paper mask."""

    rgb: tuple[int, int, int]
    border_paper_frac: float
    paper_mask: Mask
    scale: float


def analysis_scale(width_px: int, height_px: int, params: PanelParams) -> float:
    long_px, short_px = max(width_px, height_px), min(width_px, height_px)
    scale = params.analysis_long_side_px / long_px
    scale = max(scale, params.analysis_short_side_px / max(short_px, 1))
    return min(1.0, scale)


def estimate_background(image_rgb: npt.NDArray[np.uint8], params: PanelParams) -> PageBackground:
    height_px, width_px = image_rgb.shape[:2]
    scale = analysis_scale(width_px, height_px, params)
    small = (
        image_rgb
        if scale >= 1.0
        else cv2.resize(
            image_rgb, (max(1, round(width_px * scale)), max(1, round(height_px * scale))), interpolation=cv2.INTER_AREA
        )
    )
    small = cv2.GaussianBlur(small, (3, 3), 0)
    h, w = small.shape[:2]
    ring = max(2, round(min(h, w) * 0.015))
    border = np.concatenate(
        [
            small[:ring].reshape(-1, 3),
            small[-ring:].reshape(-1, 3),
            small[:, :ring].reshape(-1, 3),
            small[:, -ring:].reshape(-1, 3),
        ]
    ).astype(np.int16)
    # The paper is the commonest colour of the rim (coarse bins absorb scan noise; a dark scanner edge or a
    # panel bleeding off one side stays a minority). Dark paper (black gutters) is found the same way.
    bins = (border // 32).astype(np.int32)
    packed = bins[:, 0] * 64 + bins[:, 1] * 8 + bins[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    mode = values[int(np.argmax(counts))]
    paper = np.median(border[packed == mode], axis=0).astype(np.int16)
    diff = np.abs(small.astype(np.int16) - paper).max(axis=2)
    border_diff = np.abs(border - paper).max(axis=1)
    spread = float(np.percentile(border_diff[border_diff < 80], 75)) if np.any(border_diff < 80) else 0.0
    tolerance = float(np.clip(spread * 2.5 + 12, 28, 60))
    paper_mask = diff <= tolerance
    border_paper_frac = float(np.mean(border_diff <= tolerance))
    rgb = (int(paper[0]), int(paper[1]), int(paper[2]))
    return PageBackground(rgb=rgb, border_paper_frac=border_paper_frac, paper_mask=paper_mask, scale=scale)


def is_full_bleed(background: PageBackground) -> bool:
    """Art runs off every edge: little paper on the rim, and no gutter of paper crossing the whole page
    (panels that bleed off all four edges still leave their gutters running edge to edge)."""
    if background.border_paper_frac >= 0.35:
        return False
    mask = background.paper_mask
    h, w = mask.shape
    inner_rows = mask[round(h * 0.03) : round(h * 0.97)]
    inner_cols = mask[:, round(w * 0.03) : round(w * 0.97)]
    through_row = bool(inner_rows.size) and float(inner_rows.mean(axis=1).max()) >= 0.97
    through_col = bool(inner_cols.size) and float(inner_cols.mean(axis=0).max()) >= 0.97
    return not (through_row or through_col)


def detect_panels(
    image_rgb: npt.NDArray[np.uint8], params: PanelParams | None = None, background: PageBackground | None = None
) -> list[BBox]:
    """Panel boxes in page pixels, in no particular order. Empty when the page shows no panel-like blob."""
    params = params or PanelParams()
    height_px, width_px = image_rgb.shape[:2]
    if height_px < 16 or width_px < 16:
        return []
    if background is None:
        background = estimate_background(image_rgb, params)
    scale = background.scale
    small = (
        image_rgb
        if scale >= 1.0
        else cv2.resize(image_rgb, background.paper_mask.shape[::-1], interpolation=cv2.INTER_AREA)
    )
    h, w = background.paper_mask.shape
    gray = np.asarray(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
    ink = _ink_mask(gray, background)
    if is_full_bleed(background):
        # No paper around the art: a full-bleed page (cover, splash) is one panel.
        return [(0, 0, width_px, height_px)]
    outside = _paper_reachable_from_edge(background.paper_mask)
    blobs = ~outside
    kernel_px = max(3, round(min(h, w) * 0.012) | 1)
    blobs = cv2.morphologyEx(
        blobs.astype(np.uint8), cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (kernel_px, kernel_px))
    ).astype(bool)
    # Sizes are relative to a page-shaped piece of the image, so that a long strip's panels are not held to a
    # fraction of the whole strip.
    min_area = params.min_panel_area_frac * min(h, w) * min(max(h, w), 1.5 * min(h, w))
    min_side = max(params.min_panel_side_frac * min(h, w), 16.0)
    # Ruled frames (rectangles, shared frame lines) only help on line art, where paper shows inside the panels;
    # on painted pages every straight dark edge of the art would pass for a frame.
    line_art = paper_inside_art(background, blobs) >= LINE_ART_PAPER
    count, labels, stats, _ = cv2.connectedComponentsWithStats(blobs.astype(np.uint8), connectivity=4)
    flood: list[BBox] = []
    loose: list[BBox] = []
    solid: list[tuple[BBox, int]] = []
    for label in range(1, count):
        x, y, bw, bh, area = (int(v) for v in stats[label])
        if area < min_area or bw < min_side or bh < min_side:
            continue
        component = labels[y : y + bh, x : x + bw] == label
        leaves = _Leaves()
        blob_ink = ink[y : y + bh, x : x + bw] if line_art else np.zeros_like(component)
        blob_paper = background.paper_mask[y : y + bh, x : x + bw]
        _cut(component, _Masks(blob_ink, blob_paper), (0, 0, bw, bh), params, min_area, min_side, leaves, 0)
        flood.extend((b[0] + x, b[1] + y, b[2], b[3]) for b in leaves.panels)
        loose.extend((b[0] + x, b[1] + y, b[2], b[3]) for b in leaves.loose)
        solid.extend(((b[0] + x, b[1] + y, b[2], b[3]), px) for b, px in leaves.solid)
    flood.extend(_open_panels(flood, loose, min_area))
    if h >= w:  # a page, not a strip or an episode's header band
        flood.extend(_vignettes(flood, solid, min_area, (w, h)))
    boxes = merge_with_cells(flood, frame_rectangles(ink, min_area, min_side)) if line_art else flood
    return [scale_box(b, scale) if scale < 1.0 else b for b in boxes if area_px2(b) > 0]


def paper_inside_art(background: PageBackground, art: Mask | None = None) -> float:
    """The share of paper-coloured pixels inside the art (by default, what the paper around it does not reach):
    balloons and open backgrounds. Painted and flat-coloured strips hold 0.09-0.24 of it (their balloons), line
    art on newsprint 0.44-0.69 (the stress set's strips); 0.0 with no art at all."""
    if art is None:
        art = ~_paper_reachable_from_edge(background.paper_mask)
    return float(background.paper_mask[art].mean()) if art.any() else 0.0


_ART_WHITE = 230.0
"""Art drawn on white: the light of the art (the 98th percentile of its pixels: balloons, skies) is at least this."""
_GUTTER_DARKER = 20.0
"""... and the paper around the panels is darker than it by at least this much luma: black, grey or screentoned
gutters (a flashback, a dream, a webcomic's dark page). Old newsprint is the paper its art is printed on (the
golden-age pages' art reaches 208 on paper of 185), and a yellowed scan yellows the art with it."""
_GUTTER_FLAT = 6.0
"""... and flat along the page's edge: the middle half of its shades there, averaged over 7 x 7 pixels of the
analysis size, within this much luma (flat or screentoned gutters 0-1 on the pages measured; painted art whose
colour the rim shares, 12-63)."""


@dataclass(frozen=True)
class DarkPaper:
    """Gutters darker than the paper the art is drawn on."""

    reach: Mask
    """The paper reached from the page's edge, at the analysis scale."""
    art_luma: float
    """The light of the art: the paper its balloons and skies are."""


def dark_paper(gray: npt.NDArray[np.uint8], background: PageBackground) -> DarkPaper | None:
    """The page's gutters when they are darker than the paper its art is drawn on, else None (the common case:
    the page's paper is the art's)."""
    reach = _paper_reachable_from_edge(background.paper_mask)
    if not reach.any() or reach.all():
        return None
    small = (
        gray
        if reach.shape == gray.shape
        else np.asarray(cv2.resize(gray, reach.shape[::-1], interpolation=cv2.INTER_AREA), dtype=np.uint8)
    )
    art_luma = float(np.percentile(small[~reach], 98))
    paper_luma = float(np.median(small[reach]))
    if art_luma < _ART_WHITE or paper_luma > art_luma - _GUTTER_DARKER:
        return None
    # Flat where it meets the page's edge: a colour or a fine screentone, once a few pixels are averaged. A
    # painted bleed or splash whose colour the rim shares (the 'paper' is then art) shades along the edge.
    ring = max(2, round(min(reach.shape) * 0.015))
    rim = np.zeros_like(reach)
    rim[:ring] = rim[-ring:] = True
    rim[:, :ring] = rim[:, -ring:] = True
    low, high = np.percentile(cv2.blur(small, (7, 7))[rim & reach], [25, 75])  # the reach holds the edge's paper
    if high - low > _GUTTER_FLAT:
        return None
    return DarkPaper(reach=reach, art_luma=art_luma)


def paper_as_white(gray: npt.NDArray[np.uint8], dark: DarkPaper | None) -> npt.NDArray[np.uint8]:
    """``gray`` with the gutters painted white where they are dark (see :func:`dark_paper`), so that the segmenter
    sees the gutters it learnt; the page as it is otherwise. Only the paper reached from the page's edge is
    painted: a panel's own dark art inside a closed frame stays."""
    if dark is None:
        return gray
    height_px, width_px = gray.shape
    full = cv2.resize(dark.reach.astype(np.uint8), (width_px, height_px), interpolation=cv2.INTER_NEAREST)
    return np.asarray(np.where(full.astype(bool), np.uint8(255), gray), dtype=np.uint8)


_SCAN_BORDER_LUMA = 60
"""A scanner's border: rows or columns at the page's edge whose pixels are this dark ..."""
_SCAN_BORDER_SHARE = 0.97
"""... nearly all of them (a line of art crossing the edge has paper or light art somewhere along it) ..."""
_SCAN_BORDER_MAX = 0.06
"""... at most this share of the page's width or height from each edge ..."""
_SCAN_BORDER_INSIDE = 120.0
"""... ending sharply: the line just inside it is this light on average (the page's paper and art). A spine's
shadow fades in over many lines, and painting its darkest ones white would draw a gutter beside the rest."""


def scan_border(gray: npt.NDArray[np.uint8]) -> tuple[int, int, int, int]:
    """How many rows (top, bottom) and columns (left, right) at the page's edges are a scanner's dark border: a
    band of near-black the whole length of the side, from the edge in (the lid's shadow, the scanner bed)."""
    height_px, width_px = gray.shape
    dark = gray < _SCAN_BORDER_LUMA

    def run(shares: npt.NDArray[np.float64], lumas: npt.NDArray[np.float64], cap: int) -> int:
        misses = np.flatnonzero(shares[:cap] < _SCAN_BORDER_SHARE)
        if not misses.size or lumas[misses[0]] < _SCAN_BORDER_INSIDE:
            return 0
        return int(misses[0])

    rows, cols = dark.mean(axis=1), dark.mean(axis=0)
    row_luma, col_luma = gray.mean(axis=1), gray.mean(axis=0)
    rows_cap, cols_cap = int(height_px * _SCAN_BORDER_MAX), int(width_px * _SCAN_BORDER_MAX)
    return (
        run(rows, row_luma, rows_cap),
        run(rows[::-1], row_luma[::-1], rows_cap),
        run(cols, col_luma, cols_cap),
        run(cols[::-1], col_luma[::-1], cols_cap),
    )


def without_scan_border(
    image_rgb: npt.NDArray[np.uint8], gray: npt.NDArray[np.uint8], border: tuple[int, int, int, int]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The page with its scanner border (:func:`scan_border`) painted white, as the paper around the page would
    be: the finders see a page edge, not a black bleed along it."""
    top, bottom, left, right = border
    height_px, width_px = gray.shape
    rgb, grey = image_rgb.copy(), gray.copy()
    for image in (rgb, grey):
        image[:top] = 255
        image[height_px - bottom :] = 255
        image[:, :left] = 255
        image[:, width_px - right :] = 255
    return rgb, grey


def page_paper(
    image_rgb: npt.NDArray[np.uint8], gray: npt.NDArray[np.uint8], params: PanelParams
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], PageBackground, DarkPaper | None]:
    """The page's paper and its gutters' (:func:`dark_paper`), with a scanner's black border painted white first
    where the page's paper is light (:func:`scan_border`; a page whose gutters are all dark is left as it is)."""
    background = estimate_background(image_rgb, params)
    dark = dark_paper(gray, background)
    border = scan_border(gray) if dark is None else (0, 0, 0, 0)
    if any(border):
        image_rgb, gray = without_scan_border(image_rgb, gray, border)
        background = estimate_background(image_rgb, params)
        dark = dark_paper(gray, background)
    return image_rgb, gray, background, dark


_WHITE_PAPER = 250.0
"""Paper at least this light is white already; darker light paper (yellowed newsprint) is levelled for the
segmenter by :func:`paper_levelled`."""


def paper_levelled(gray: npt.NDArray[np.uint8], background: PageBackground) -> npt.NDArray[np.uint8]:
    """``gray`` with its levels stretched so that the paper is white and the darkest ink (1st percentile) black,
    where the paper is light but not white (yellowed newsprint, faded ink): the segmenter learnt white gutters
    between inked frames; the page as it is otherwise."""
    red, green, blue = background.rgb
    paper = 0.299 * red + 0.587 * green + 0.114 * blue
    if paper >= _WHITE_PAPER:
        return gray
    ink = float(np.percentile(gray, 1))
    if paper - ink < 1.0:
        return gray
    stretched = (gray.astype(np.float32) - ink) * (255.0 / (paper - ink))
    return np.asarray(np.clip(stretched, 0, 255), dtype=np.uint8)


def art_paper_luma(background: PageBackground, dark: DarkPaper | None) -> float:
    """The luma of the paper the art and the lettering are drawn on, which inset frames and balloons are told
    from: the page's paper, or where the gutters are dark (:func:`dark_paper`), the light of the art."""
    return dark.art_luma if dark is not None else float(np.mean(background.rgb))


def merge_with_cells(flood: list[BBox], framed: list[FramedBox]) -> list[BBox]:
    """Reconcile blobs (good on colour art) with ruled frames (good on line art with leaky or shared frames).

    A blob tiled by two or more closed frames is split into them (panels sharing a frame line, or bridged by a
    balloon); a frame holding a smaller blob replaces it (the frame leaked and only part of the panel was
    found); a frame that no blob covers is added, even with one broken side (a title lettered over the frame).
    """
    closed = [f.box for f in framed if f.weakest_side >= 0.85]
    final: list[BBox] = []
    for blob in flood:
        inner: list[BBox] = []
        candidates = [c for c in closed if overlap_of_smaller(c, blob) >= 0.8 and area_px2(c) <= 0.9 * area_px2(blob)]
        for cell in sorted(candidates, key=area_px2, reverse=True):
            if all(overlap_of_smaller(cell, k) < 0.2 for k in inner):
                inner.append(cell)
        if len(inner) >= 2 and sum(area_px2(c) for c in inner) >= 0.8 * area_px2(blob):
            final.extend(inner)  # panels that share frame lines or are bridged by a balloon
        else:
            final.append(blob)
    for frame in framed:
        cell = frame.box
        if cell in final:
            continue
        conflicts = [f for f in final if overlap_of_smaller(cell, f) >= 0.3]
        if not conflicts:
            final.append(cell)
            continue
        superseded = [
            f
            for f in conflicts
            if area_px2(f) < (0.8 if frame.weakest_side >= 0.85 else 0.5) * area_px2(cell)
            and overlap_of_smaller(cell, f) >= 0.8
            and not any(iou(f, c) >= 0.7 for c in closed)
        ]
        if len(conflicts) == 1 and len(superseded) == 1:  # a frame holding two panels is their union
            final = [f for f in final if f not in superseded]
            final.append(cell)
    return final


def _ink_mask(gray: npt.NDArray[np.uint8], background: PageBackground) -> Mask:
    """Pixels well on the way from the paper to the page's darkest ink (faded newsprint prints brown, not black)."""
    paper_luma = float(np.mean(background.rgb))
    darkest = float(np.percentile(gray[:: max(1, gray.shape[0] // 300), :: max(1, gray.shape[1] // 300)], 2))
    return np.asarray(gray < min(paper_luma - 0.4 * (paper_luma - darkest), 140), dtype=bool)


def _paper_reachable_from_edge(paper: Mask) -> Mask:
    """Paper pixels connected to the page edge: the margins and gutters, not the insides of closed frames."""
    # Thicken the ink by one pixel first so a hairline gap in a frame does not flood a panel's inside.
    closed = cv2.erode(paper.astype(np.uint8), np.ones((3, 3), np.uint8))
    _count, labels = cv2.connectedComponents(closed, connectivity=4)
    edge_labels = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    edge_labels = edge_labels[edge_labels > 0]
    reach = np.isin(labels, edge_labels)
    return np.asarray(cv2.dilate(reach.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & paper)


@dataclass
class _Leaves:
    """What the recursive cut of one blob found: panels, and panel-sized pieces that do not look framed."""

    panels: list[BBox] = field(default_factory=list)
    loose: list[BBox] = field(default_factory=list)
    solid: list[tuple[BBox, int]] = field(default_factory=list)
    """The loose pieces that art fills (a vignette, not a figure or a title), each with its count of art pixels."""


def _open_panels(panels: list[BBox], loose: list[BBox], min_area: float) -> list[BBox]:
    """Unframed pieces that share a row with framed panels are panels whose frame is open (art on paper, a
    balloon where the top border would be); their box takes the row's height. A piece alone in its band (a
    title over the first row) stays out."""
    adopted: list[BBox] = []
    for x, y, w, h in loose:
        if w * h < 2 * min_area:
            continue
        mates = [p for p in panels if interval_overlap(y, y + h, p[1], p[1] + p[3]) >= 0.6 * min(h, p[3])]
        if not mates:
            continue
        top = min(y, *(p[1] for p in mates))
        bottom = max(y + h, *(p[1] + p[3] for p in mates))
        box = (x, top, w, bottom - top)
        if all(overlap_of_smaller(box, p) < 0.2 for p in panels + adopted):
            adopted.append(box)
    return adopted


def _vignettes(panels: list[BBox], solid: list[tuple[BBox, int]], min_area: float, page: tuple[int, int]) -> list[BBox]:
    """Loose pieces that art fills, alone in their band of the page, are panels without a frame (a vignette
    whose painted edge frays into the gutter, a panel whose balloons spill over its edge onto the paper): the
    pieces of one band, side by side, are one panel when their art fills half its box and spans half the page's
    width. A figure on open paper is narrower or fills less of its box, as a title does; a logo's letters, each
    solid, leave paper between them."""
    bands: list[tuple[BBox, int]] = []
    for (x, y, w, h), px in sorted(solid, key=lambda s: s[0][1]):
        if any(overlap_of_smaller((x, y, w, h), p) >= 0.2 for p in panels):
            continue
        mate = next(
            (
                i
                for i, ((_bx, by, _bw, bh), _px) in enumerate(bands)
                if interval_overlap(y, y + h, by, by + bh) >= 0.6 * min(h, bh)
            ),
            None,
        )
        if mate is None:
            bands.append(((x, y, w, h), px))
            continue
        (bx, by, bw, bh), bpx = bands[mate]
        left, top = min(x, bx), min(y, by)
        bands[mate] = ((left, top, max(x + w, bx + bw) - left, max(y + h, by + bh) - top), bpx + px)
    return [
        box
        for box, px in bands
        if area_px2(box) >= VIGNETTE_AREA_MIN * min_area
        and px >= VIGNETTE_FILL * area_px2(box)
        and box[2] >= VIGNETTE_WIDTH_MIN * page[0]
    ]


@dataclass(frozen=True)
class _Masks:
    """What a blob's cut reads besides the blob: its ink (frame lines; none on painted art) and its paper."""

    ink: Mask
    paper: Mask


_BRIDGE_MAX_SHARE = 0.4
"""At most this share of a bridged gutter's line is the bridge (the rest is gutter open to the paper)."""
_BRIDGE_END = 0.05
"""How far from the blob's side a bridge may begin (a balloon a little inside the panels' tops)."""
_BRIDGE_PAPER = 0.5
"""A bridge is a balloon: paper inside its outline and lettering."""
_BRIDGE_FLANKED = 0.8
"""Share of the open stretch along which the blob lies within a few lines on one side (a panel's edge flanks a
gutter; open paper at a blob's edge has nothing beside it)."""


def _cut(
    component: Mask,
    masks: _Masks,
    region: BBox,
    params: PanelParams,
    min_area: float,
    min_side: float,
    out: _Leaves,
    depth: int,
) -> None:
    x, y, w, h = region
    sub = component[y : y + h, x : x + w]
    ys, xs = np.nonzero(sub)
    if len(xs) == 0:
        return
    x0, x1, y0, y1 = int(xs.min()), int(xs.max()) + 1, int(ys.min()), int(ys.max()) + 1
    x, y, w, h = x + x0, y + y0, x1 - x0, y1 - y0
    if w < min_side or h < min_side or w * h < min_area:
        return
    sub = component[y : y + h, x : x + w]
    fill = float(sub.mean())
    if depth < 12:
        tolerance = params.gutter_ink_frac if fill >= 0.85 else params.loose_gutter_ink_frac
        paper = masks.paper[y : y + h, x : x + w]
        for axis in (0, 1):  # rows first (axis 0 profile over y), then columns
            cuts = _gutter_cuts(sub, axis, tolerance, min_side)
            if not cuts and params.paper_seams:
                cuts = _paper_seam_cuts(paper, axis, min_side)
            if not cuts:
                cuts = _bridged_gutter_cuts(sub, paper, axis, min_side)
            if not cuts and fill >= 0.85:
                cuts = _frame_line_cuts(masks.ink[y : y + h, x : x + w] & sub, axis, params, min_side)
            if cuts:
                edges = [0, *cuts, h if axis == 0 else w]
                for a, b in itertools.pairwise(edges):
                    piece = (x, y + a, w, b - a) if axis == 0 else (x + a, y, b - a, h)
                    _cut(component, masks, piece, params, min_area, min_side, out, depth + 1)
                return
    if fill < 0.45 or _edge_coverage(sub) < 0.6:
        out.loose.append((x, y, w, h))  # a title, a figure on open paper: not a framed or filled panel
        if fill >= SOLID_LOOSE_FILL and float(masks.paper[y : y + h, x : x + w][sub].mean()) <= SOLID_LOOSE_PAPER:
            out.solid.append(((x, y, w, h), int(sub.sum())))
        return
    out.panels.append((x, y, w, h))


def _edge_coverage(sub: Mask) -> float:
    """Mean coverage of the blob along its box's four sides: ~1 for a panel, low for lettering or a figure."""
    h, w = sub.shape
    band_y = max(2, round(h * 0.02))
    band_x = max(2, round(w * 0.02))
    sides = [
        sub[:band_y].any(axis=0).mean(),
        sub[-band_y:].any(axis=0).mean(),
        sub[:, :band_x].any(axis=1).mean(),
        sub[:, -band_x:].any(axis=1).mean(),
    ]
    return float(np.mean(sides))


def _gutter_cuts(sub: Mask, axis: int, tolerance: float, min_side: float) -> list[int]:
    """Centres of runs of near-empty rows (axis 0) or columns (axis 1) that leave panel-sized pieces."""
    profile = sub.mean(axis=1 - axis)
    empty = profile <= tolerance
    return _runs_to_cuts(empty, len(profile), min_side, min_run_px=1)


def _paper_seam_cuts(paper: Mask, axis: int, min_side: float) -> list[int]:
    """Centres of rows (axis 0) or columns (axis 1) that are paper from one side of the region to the other: a
    gutter one to three pixels wide, which the blob took in (the paper reachable from the page's edge is found
    after thickening the ink by a pixel, so that a hairline gap in a frame does not flood a panel). A panel's
    white inside is no such line: its frame lines cross it."""
    profile = paper.mean(axis=1 - axis)
    return _runs_to_cuts(profile >= 1.0, len(profile), min_side, min_run_px=1)


def _bridged_gutter_cuts(sub: Mask, paper: Mask, axis: int, min_side: float) -> list[int]:
    """Centres of gutters open to the paper along most of the blob's width (height), the line bridged at one end
    by a balloon (paper inside its outline): two panels a balloon joins across their gutter's end."""
    n_lines = sub.shape[0] if axis == 0 else sub.shape[1]
    along = sub.shape[1] if axis == 0 else sub.shape[0]
    lines = sub if axis == 0 else sub.T
    lines_paper = paper if axis == 0 else paper.T
    ok = np.zeros(n_lines, bool)
    flank = max(3, round(0.03 * n_lines))
    counts = lines.sum(axis=1)
    for i in np.flatnonzero((counts > 0) & (counts <= _BRIDGE_MAX_SHARE * along)).tolist():
        if i < flank or i >= n_lines - flank:
            continue
        present = lines[i]
        idx = np.flatnonzero(present)
        first, last = int(idx[0]), int(idx[-1]) + 1
        # the blob's pixels on the line lie in one stretch at (or within a twentieth of) one end, the bridge; the
        # rest of the line, the gutter, is open paper
        if min(first, along - last) > _BRIDGE_END * along or present[first:last].mean() < 0.9:
            continue
        if lines_paper[i, first:last].mean() < _BRIDGE_PAPER:
            continue
        # and the open stretch is a gutter: the blob runs along it close by on one side at least (a panel's pale
        # art may be paper the gutter's flood reached on the other)
        gutter = np.ones(along, bool)
        gutter[first:last] = False
        before = np.asarray(lines[max(0, i - flank) : i].any(axis=0), dtype=bool)
        after = np.asarray(lines[i + 1 : i + 1 + flank].any(axis=0), dtype=bool)
        if max(before[gutter].mean(), after[gutter].mean()) < _BRIDGE_FLANKED:
            continue
        ok[i] = True
    return _runs_to_cuts(ok, n_lines, min_side, min_run_px=2)


def _frame_line_cuts(ink: Mask, axis: int, params: PanelParams, min_side: float) -> list[int]:
    """Centres of narrow, nearly solid ink lines crossing the whole blob: the shared border of two panels.

    The ink is thickened across the line first, so a hand-ruled line that wobbles by a few pixels still reads
    as solid; figures and hatching stay well below the threshold because they do not span the whole blob."""
    kernel = np.ones((5, 1) if axis == 0 else (1, 5), np.uint8)
    thick = cv2.dilate(ink.astype(np.uint8), kernel) > 0
    profile = thick.mean(axis=1 - axis)
    solid = profile >= params.frame_line_ink_frac
    cuts: list[int] = []
    n = len(profile)
    for start, end in _runs(solid):
        if end - start > max(12, n * 0.03):
            continue  # a wide dark band is art, not a frame line
        before = profile[max(0, start - 8) : max(0, start - 5)]
        after = profile[end + 5 : end + 8]
        if (len(before) and before.min() > 0.75) or (len(after) and after.min() > 0.75):
            continue
        mid = (start + end) // 2
        if mid >= min_side and n - mid >= min_side:
            cuts.append(mid)
    return _keep_spaced(cuts, min_side)


def _runs(flags: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    start = -1
    for i, flag in enumerate(flags.tolist()):
        if flag and start < 0:
            start = i
        elif not flag and start >= 0:
            runs.append((start, i))
            start = -1
    if start >= 0:
        runs.append((start, len(flags)))
    return runs


def _runs_to_cuts(empty: npt.NDArray[np.bool_], n: int, min_side: float, min_run_px: int) -> list[int]:
    cuts: list[int] = []
    for start, end in _runs(empty):
        if start == 0 or end == n or end - start < min_run_px:
            continue
        mid = (start + end) // 2
        cuts.append(mid)
    return _keep_spaced(cuts, min_side * 0.5)


def _keep_spaced(cuts: list[int], min_gap: float) -> list[int]:
    kept: list[int] = []
    for cut in cuts:
        if kept and cut - kept[-1] < min_gap:
            continue
        kept.append(cut)
    return kept
