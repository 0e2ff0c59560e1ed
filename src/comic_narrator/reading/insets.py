"""Inset panels: closed ruled frames drawn on top of a bigger panel (a splash with smaller panels over it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.reading.frames import line_candidates
from comic_narrator.reading.geometry import area_px2, clip_box, intersection_px2, moved, overlap_of_smaller, scale_box

Mask = npt.NDArray[np.bool_]
_MAX_LINES = 16


@dataclass(frozen=True)
class InsetParams:
    """Every size is a fraction of the parent panel, so the rule holds at any resolution."""

    min_parent_frac: float = 0.25
    """Only panels at least this share of the page area are searched (a splash, a large panel)."""
    min_area_frac: float = 0.06
    """Smallest inset: this share of its parent's area (smaller framed boxes are captions, signs, windows)."""
    max_area_frac: float = 0.5
    """Largest inset: an inset is the smaller part of what it shares with the splash (a line across the whole
    panel with art on both sides leaves two rectangles: the smaller one is the inset)."""
    min_side_frac: float = 0.2
    """Smallest inset side, as a share of the parent's corresponding side."""
    side_cover: float = 0.9
    """Share of each inner side that a straight ink line must cover (a closed frame)."""
    max_text_frac: float = 0.45
    """A rectangle whose lettering covers more of it than this is a caption box, not a panel."""
    frame_ink_level: float = 0.2
    """Solid black: darker than this fraction of the way from the page's darkest pixels to the paper."""
    line_contrast: float = 0.35
    """A frame line is darker than its surroundings by this fraction of the paper-to-black contrast."""
    max_hidden: float = 0.5
    """Share of a side that may be hidden under another inset (the inset drawn over its corner)."""
    max_overlap: float = 0.35
    """Insets overlap (one drawn over the corner of another) by at most this share of the smaller one."""
    min_run_frac: float = 0.03
    """Shortest straight piece of a frame line, as a share of the parent's side."""
    max_stroke_frac: float = 0.012
    """Ink thicker than this share of the parent's short side is a black area of the art, not a frame line."""
    min_edge_gap_frac: float = 0.03
    """An inner side must lie at least this far (share of the parent's side) from the parent's own frame."""
    min_contrast: float = 60.0
    """Frames are told by how much darker than the paper they are: on paper nearly as dark as the ink (a black page
    whose art is not drawn on white, so not dark gutters) none can be, and none is looked for."""
    min_line_share: float = 0.45
    """Share of each inner side, where no other inset hides it, that is a thin ruled line: black art may fill
    the rest of a frame, never all of it. A dark patch of the art (foliage, a shadowed wall) ends where its
    shapes end, and their edges, with a straight roof or kerb, can close a rectangle made of no frame at all."""


def find_insets(
    gray: npt.NDArray[np.uint8],
    paper_luma: float,
    parent: BBox,
    text_boxes: Sequence[BBox],
    page_area_px2: float,
    params: InsetParams | None = None,
) -> list[BBox]:
    """Closed rectangular frames inside ``parent`` that are panels of their own (boxes in ``gray``'s pixels).

    A side of an inset is either a straight ink line inside the parent (at least ``side_cover`` of it solid) or
    the parent's own frame (an inset in a corner of the splash shares two or three of its sides). A side hidden
    under another inset counts as drawn where that inset covers it (insets overlap each other). Rectangles
    mostly covered by lettering (caption boxes), small ones (signs, windows), and ones nested in an inset are
    left out; a rectangle with no side of its own inside the parent is the parent itself."""
    params = params or InsetParams()
    px, py, pw, ph = parent
    if pw * ph < params.min_parent_frac * page_area_px2 or pw < 40 or ph < 40:
        return []
    # Frame lines are thin dark strokes: pixels much darker than the paper-side of their neighbourhood (a black
    # top-hat), whatever their absolute level (a 2 px line in a small scan is grey). Solid black areas of the
    # art give no response there, so their straight edges are not taken for frames, but they still count as
    # covering a side that runs into them.
    darkest = float(np.percentile(gray[:: max(1, gray.shape[0] // 300), :: max(1, gray.shape[1] // 300)], 2))
    contrast = paper_luma - darkest
    if contrast < params.min_contrast:
        return []
    crop = gray[py : py + ph, px : px + pw]
    stroke = max(5, round(params.max_stroke_frac * min(pw, ph)))
    kernel = np.ones((stroke, stroke), np.uint8)
    blackhat = cv2.morphologyEx(crop, cv2.MORPH_BLACKHAT, kernel)
    dark = (crop < darkest + params.frame_ink_level * contrast).astype(np.uint8)
    solid = cv2.morphologyEx(dark, cv2.MORPH_OPEN, kernel)
    near_solid = np.asarray(cv2.dilate(solid, np.ones((3, 3), np.uint8)), dtype=np.uint8)
    thin = (blackhat >= params.line_contrast * contrast).astype(np.uint8) | (dark & (1 - near_solid))
    # Straight runs of a few percent of the parent: a frame broken where black art touches it still shows.
    run_h, run_v = max(8, round(params.min_run_frac * pw)), max(8, round(params.min_run_frac * ph))
    horizontal = cv2.morphologyEx(cv2.dilate(thin, np.ones((3, 1), np.uint8)), cv2.MORPH_OPEN, np.ones((1, run_h)))
    vertical = cv2.morphologyEx(cv2.dilate(thin, np.ones((1, 3), np.uint8)), cv2.MORPH_OPEN, np.ones((run_v, 1)))
    len_h, len_v = round(params.min_side_frac * pw * 0.5), round(params.min_side_frac * ph * 0.5)
    h_band = cv2.dilate(horizontal, np.ones((5, 1), np.uint8)) > 0
    v_band = cv2.dilate(vertical, np.ones((1, 5), np.uint8)) > 0
    solid_band = cv2.dilate(solid, np.ones((5, 5), np.uint8)) > 0
    gap_y = max(4, round(params.min_edge_gap_frac * ph))
    gap_x = max(4, round(params.min_edge_gap_frac * pw))
    # Line positions inside the parent, and the parent's own frame on each side.
    rows = line_candidates(horizontal.sum(axis=1), len_h, _MAX_LINES)
    cols = line_candidates(vertical.sum(axis=0), len_v, _MAX_LINES)
    ys = [0, *(y for y in rows if gap_y <= y < ph - gap_y), ph - 1]
    xs = [0, *(x for x in cols if gap_x <= x < pw - gap_x), pw - 1]
    drawn_h, drawn_v = h_band | solid_band, v_band | solid_band
    lines = (h_band, v_band)
    # Running coverage along every candidate line, so a side's coverage is one subtraction.
    cum_h = np.concatenate([np.zeros((len(ys), 1)), np.cumsum(drawn_h[ys], axis=1)], axis=1)
    cum_v = np.concatenate([np.zeros((len(xs), 1)), np.cumsum(drawn_v[:, xs].T, axis=1)], axis=1)
    min_drawn = params.side_cover - params.max_hidden
    candidates: list[BBox] = []
    for ti, top in enumerate(ys):
        for bi in range(ti + 1, len(ys)):
            bottom = ys[bi]
            if bottom - top < params.min_side_frac * ph:
                continue
            side_v = (cum_v[:, bottom] - cum_v[:, top]) / (bottom - top)
            for li, left in enumerate(xs):
                if li > 0 and side_v[li] < min_drawn:
                    continue
                for ri in range(li + 1, len(xs)):
                    right = xs[ri]
                    box = (left, top, right - left, bottom - top)
                    frac = area_px2(box) / float(pw * ph)
                    if box[2] < params.min_side_frac * pw or not params.min_area_frac <= frac <= params.max_area_frac:
                        continue
                    if ri < len(xs) - 1 and side_v[ri] < min_drawn:
                        continue
                    width = float(right - left)
                    if ti > 0 and (cum_h[ti, right] - cum_h[ti, left]) / width < min_drawn:
                        continue
                    if bi < len(ys) - 1 and (cum_h[bi, right] - cum_h[bi, left]) / width < min_drawn:
                        continue
                    candidates.append(box)
    accepted: list[BBox] = []
    local_texts = moved(text_boxes, -px, -py)
    # Closed frames first, largest first; then frames with a side hidden under an accepted inset.
    for allow_hidden in (False, True):
        for box in sorted(candidates, key=area_px2, reverse=True):
            # Insets may overlap at a corner or an edge, not hide most of each other; none is nested in another.
            if any(overlap_of_smaller(box, a) >= params.max_overlap for a in accepted):
                continue
            occluders = accepted if allow_hidden else []
            if not _closed(box, (pw, ph), (drawn_h, drawn_v), lines, occluders, params):
                continue
            text_area = sum(intersection_px2(box, t) for t in local_texts)
            if text_area > params.max_text_frac * area_px2(box):
                continue
            accepted.append(box)
    return moved(accepted, px, py)


def _closed(
    box: BBox,
    parent_size: tuple[int, int],
    drawn: tuple[Mask, Mask],
    lines: tuple[Mask, Mask],
    occluders: list[BBox],
    params: InsetParams,
) -> bool:
    """Every side of ``box`` is a solid line (a ruled line, black art running into it for part of its length),
    the parent's frame, or hidden under an occluding inset; at least one side lies inside the parent (else the
    box is the parent). ``drawn`` and ``lines`` are (horizontal, vertical) masks: ink a side may run along, and
    the thin ruled lines alone."""
    x, y, w, h = box
    pw, ph = parent_size
    inner = 0
    for axis, pos, start, length in ((0, y, x, w), (0, y + h, x, w), (1, x, y, h), (1, x + w, y, h)):
        if pos <= 0 or pos >= (ph - 1 if axis == 0 else pw - 1):
            continue  # the parent's own frame
        inner += 1
        side = (pos, slice(start, start + length)) if axis == 0 else (slice(start, start + length), pos)
        ink, ruled = drawn[axis][side], lines[axis][side]
        hidden = np.zeros(length, dtype=bool)
        for ox, oy, ow, oh in occluders:
            if axis == 0 and oy < pos < oy + oh:
                hidden[max(0, ox - start) : max(0, ox + ow - start)] = True
            elif axis == 1 and ox < pos < ox + ow:
                hidden[max(0, oy - start) : max(0, oy + oh - start)] = True
        # A side may be hidden under another inset for part of its length; the rest is a solid line.
        cover = float((ink | hidden).mean())
        if cover < params.side_cover or cover - float(ink.mean()) > params.max_hidden:
            return False
        seen = ~hidden
        if seen.any() and float(ruled[seen].mean()) < params.min_line_share:
            return False
    return inner > 0


def add_insets(
    gray: npt.NDArray[np.uint8],
    panels: list[BBox],
    scale: float,
    paper_luma: float,
    text_boxes: Sequence[BBox],
    params: InsetParams | None = None,
) -> tuple[list[BBox], dict[int, int]]:
    """``panels`` (page pixels) followed by the insets found inside them, and each inset's parent index.

    The search runs on a copy of the page at ``scale`` (the panel detector's analysis size)."""
    height_px, width_px = gray.shape
    size = (max(1, round(width_px * scale)), max(1, round(height_px * scale)))
    small = gray if scale >= 1.0 else np.asarray(cv2.resize(gray, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
    page_area = float(small.shape[0] * small.shape[1])
    texts = [scale_box(t, 1.0 / scale) for t in text_boxes] if scale < 1.0 else list(text_boxes)
    out = list(panels)
    parent_of: dict[int, int] = {}
    for index, panel in enumerate(panels):
        box = scale_box(panel, 1.0 / scale) if scale < 1.0 else panel
        box = clip_box(box, small.shape[1], small.shape[0])
        for inset in find_insets(small, paper_luma, box, texts, page_area, params):
            parent_of[len(out)] = index
            out.append(scale_box(inset, scale) if scale < 1.0 else inset)
    return out, parent_of
