"""Text blocks: OCR lines grouped into bubbles, caption boxes and loose lettering, with each bubble's shape."""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.backends.protocols import OcrLine
from comic_narrator.reading.geometry import interval_overlap, union_box

_PANEL_INSET_PX = 2
"""Balloons are looked for this far inside each panel's box: the frame line is not paper."""
_PAGE_EDGE_PX = 2 * _PANEL_INSET_PX
"""A light region this close to the page's edge reaches it: a bleed panel's box may sit a pixel or two in."""
_ALONG_EDGE_SHARE = 0.9
"""Share of a region's side that lies on the page's edge when the region is paper running off the page."""
_BROKEN_OUT_AREA = 12.0
"""A balloon breaking its frame is at most this many times the area of one of its lines (a line of a four-line
balloon fills about a sixth of it with the margins); the gutter's paper is far more."""
_BROKEN_OUT_SOLIDITY = 0.7
"""... and at least this solid once its tail is pulled in (a spiky burst is 0.75; paper around art is ragged)."""


@dataclass(frozen=True)
class TextLine:
    """One OCR line with the geometry the grouping needs."""

    bbox: BBox
    text: str
    score: float
    vertical: bool
    angle_deg: float
    """Tilt of the line's baseline (0 for level lettering)."""
    letter_px: float
    """Letter size: the line's height (its width for a vertical column)."""


@dataclass(frozen=True)
class BubbleShape:
    """The light region that encloses a block's lines: a balloon or a caption box."""

    bbox: BBox
    area_px2: int
    solidity: float
    """Area over convex-hull area: ~1 for an oval or a box, lower for a spiky shout balloon."""
    rectangularity: float
    """Area over bounding-box area: ~1 for a caption box, ~0.78 for an ellipse."""
    tail_xy: tuple[float, float] | None
    """Tip of the balloon's tail (the point of the outline farthest outside its fitted ellipse)."""
    corners: int = 0
    """Vertices of the outline simplified to 3% of its perimeter: 4 for a caption box."""
    body_solidity: float = 1.0
    """Solidity without the tail: ~1 for any balloon, low for the ragged paper around figures."""
    fill_gap: float = 0.0
    """How far the region's median lightness sits below the page's paper: 0 for a balloon (lettered on paper),
    14 and more for a pale patch of painted art (a sky, a wall, a banner) around lettering drawn over it."""

    @property
    def boxy(self) -> bool:
        """A caption box: a filled rectangle, or a four-cornered convex outline that nearly fills its box (drawn
        a little askew, or a corner hidden). A balloon cut by its panel's frame is no box: straight where the
        frame cuts it and round elsewhere, it fills 0.84-0.92 of its box with four to six corners (Black Jack's
        pages; their caption boxes fill 0.97-0.99)."""
        return (self.rectangularity >= 0.95 and self.solidity >= 0.95) or (
            self.corners == 4 and self.rectangularity >= 0.92 and self.solidity >= 0.95
        )


@dataclass(frozen=True)
class TextBlock:
    """Lines read as one utterance, in reading order, and the bubble around them (None: loose lettering)."""

    lines: tuple[TextLine, ...]
    bbox: BBox
    bubble: BubbleShape | None
    light_around: float = 0.0
    """Share of balloon-light pixels around the lettering: high for a balloon whose outline is open."""


def is_cjk(text: str) -> bool:
    return any(_is_cjk_char(c) for c in text)


def _is_cjk_char(c: str) -> bool:
    code = ord(c)
    return 0x3040 <= code <= 0x30FF or 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xFF66 <= code <= 0xFF9D


def to_text_lines(ocr_lines: list[OcrLine], min_score: float) -> list[TextLine]:
    out: list[TextLine] = []
    for line in ocr_lines:
        text = unicodedata.normalize("NFKC", line.text).strip()
        if not text or line.score < min_score:
            continue
        x, y, w, h = line.bbox
        if w <= 0 or h <= 0:
            continue
        (ax, ay), (bx, by) = line.quad[0], line.quad[1]
        angle = math.degrees(math.atan2(by - ay, bx - ax)) if len(line.quad) >= 2 else 0.0
        vertical = h > 1.4 * w and is_cjk(text) and len(text) >= 2
        if vertical:
            letter = float(w)
        else:
            # A rotated quad's box is taller than its letters: use the quad's own side length.
            if len(line.quad) >= 4:
                (cx, cy) = line.quad[3]
                letter = float(math.hypot(cx - ax, cy - ay))
            else:
                letter = float(h)
        out.append(
            TextLine(
                bbox=(x, y, w, h), text=text, score=line.score, vertical=vertical, angle_deg=angle, letter_px=letter
            )
        )
    return out


def light_mask(gray: npt.NDArray[np.uint8], paper_luma: float) -> npt.NDArray[np.uint8]:
    """Pixels as light as a balloon's inside (balloons are lettered on paper-white or near it)."""
    threshold = float(np.clip(paper_luma * 0.8, 150, 215))
    return np.asarray(gray >= threshold, dtype=np.uint8)


def group_lines(
    lines: list[TextLine], gray: npt.NDArray[np.uint8], paper_luma: float, panels: list[BBox]
) -> list[TextBlock]:
    """Group lines that share a balloon, or that sit together like one block of lettering.

    Balloons are looked for inside the panels only: a balloon that breaks its frame would otherwise run into the
    paper of the gutter and stop looking like a balloon."""
    if not lines:
        return []
    height_px, width_px = gray.shape
    light, labels, stats = panel_light_regions(gray, paper_luma, panels)
    page_area = float(height_px * width_px)
    owner: list[int] = []
    whole_page: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] | None = None
    broken_out: dict[int, int] = {}  # owner label (negative) -> the whole page's region label
    for line in lines:
        cx, cy = line.bbox[0] + line.bbox[2] // 2, line.bbox[1] + line.bbox[3] // 2
        holders = [p[2] * p[3] for p in panels if p[0] <= cx < p[0] + p[2] and p[1] <= cy < p[1] + p[3]]
        # The panel's own background (white manga panels) is not a balloon.
        max_area = min([0.2 * page_area, *(0.45 * a for a in holders)])
        label = _enclosing_component(line.bbox, labels, stats, max_area, width_px, height_px)
        if label == 0:
            # A balloon that breaks its frame is cut by the panel's box, and the lines that cross the frame are
            # in no region there; on the whole page its own outline still closes it.
            if whole_page is None:
                _n, page_labels, page_stats, _c = cv2.connectedComponentsWithStats(light, connectivity=4)
                whole_page = (np.asarray(page_labels, dtype=np.int32), np.asarray(page_stats, dtype=np.int32))
            found = _enclosing_component(line.bbox, *whole_page, max_area, width_px, height_px, closed=True)
            if found:
                label = -found
                broken_out[label] = found
        owner.append(label)
    if whole_page is not None and broken_out:
        # The balloon's other lines, inside the frame, are in its region cut by the panel's box: one balloon.
        for i, line in enumerate(lines):
            if owner[i] > 0:
                x, y, w, h = line.bbox
                values = whole_page[0][y : y + h, x : x + w]
                values = values[values > 0]
                region = -int(np.bincount(values).argmax()) if values.size else 0
                if region in broken_out:
                    owner[i] = region
    parent = list(range(len(lines)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(lines)):
        for j in range(i + 1, len(lines)):
            if owner[i] != 0 and owner[i] == owner[j]:
                if _same_flow(lines[i], lines[j], loose=True):
                    parent[find(i)] = find(j)
            elif owner[i] == 0 and owner[j] == 0 and _same_flow(lines[i], lines[j], loose=False):
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(lines)):
        groups.setdefault(find(i), []).append(i)
    blocks: list[TextBlock] = []
    for members in groups.values():
        members_lines = [lines[i] for i in members]
        ordered = _order_lines(members_lines)
        label = owner[members[0]]
        bubble = None
        if label > 0:
            bubble = bubble_shape(labels, stats, label, (gray, paper_luma))
        elif label < 0 and whole_page is not None:
            bubble = bubble_shape(*whole_page, broken_out[label], (gray, paper_luma))
        bbox = union_box(ln.bbox for ln in ordered)
        if bubble is not None and (bubble.area_px2 > 5 * max(1, bbox[2] * bbox[3]) or bubble.body_solidity < 0.6):
            # Lettering fills a balloon; a light region five times its size, or a ragged one, is the paper or
            # sky around display lettering and figures.
            bubble = None
        blocks.append(
            TextBlock(lines=tuple(ordered), bbox=bbox, bubble=bubble, light_around=_light_around(bbox, ordered, light))
        )
    return blocks


def panel_light_regions(
    gray: npt.NDArray[np.uint8], paper_luma: float, panels: list[BBox]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """The balloon-light mask, and its connected regions inside the panels (labels, and stats as
    cv2.connectedComponentsWithStats gives them): where balloons and caption boxes are looked for."""
    light = light_mask(gray, paper_luma)
    inside = np.zeros_like(light)
    inset = _PANEL_INSET_PX
    for x, y, w, h in panels:
        inside[y + inset : y + h - inset, x + inset : x + w - inset] = 1
    _count, labels_any, stats_any, _ = cv2.connectedComponentsWithStats(light & inside, connectivity=4)
    return light, np.asarray(labels_any, dtype=np.int32), np.asarray(stats_any, dtype=np.int32)


def _light_around(bbox: BBox, lines: list[TextLine], light: npt.NDArray[np.uint8]) -> float:
    """Share of light pixels in a ring one letter wide around the block."""
    pad = round(max(ln.letter_px for ln in lines))
    x, y, w, h = bbox
    height_px, width_px = light.shape
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(width_px, x + w + pad), min(height_px, y + h + pad)
    outer = light[y0:y1, x0:x1]
    total = float(outer.size - w * h)
    if total <= 0:
        return 0.0
    return float(outer.sum() - light[y : y + h, x : x + w].sum()) / total


def _enclosing_component(
    box: BBox,
    labels: npt.NDArray[np.int32],
    stats: npt.NDArray[np.int32],
    max_area: float,
    width_px: int,
    height_px: int,
    *,
    closed: bool = False,
) -> int:
    """Label of the light region around a line when that region is balloon-sized and encloses it; else 0.

    ``closed``: the region must also be a closed balloon, at most ``_BROKEN_OUT_AREA`` times the line's box and
    as round as a balloon's body (for the whole page's regions, where lettering on the gutter's paper or a sky
    lies in a region too)."""
    x, y, w, h = box
    patch = labels[y : y + h, x : x + w]
    values = patch[patch > 0]
    if values.size == 0:
        return 0
    label = int(np.bincount(values).argmax())
    cx, cy, cw, ch, area = (int(v) for v in stats[label])
    if area > (min(max_area, _BROKEN_OUT_AREA * w * h) if closed else max_area):
        return 0
    if _runs_along_page_edge(labels, label, (cx, cy, cw, ch), width_px, height_px):
        return 0
    slack = max(3, round(0.25 * min(w, h)))
    inside = cx <= x + slack and cy <= y + slack and cx + cw >= x + w - slack and cy + ch >= y + h - slack
    if closed and inside:
        inside = bubble_shape(labels, stats, label).body_solidity >= _BROKEN_OUT_SOLIDITY
    return label if inside else 0


def _runs_along_page_edge(labels: npt.NDArray[np.int32], label: int, bbox: BBox, width_px: int, height_px: int) -> bool:
    """Paper running off the page (a white margin, a bleed panel's sky): a light region one of whose sides lies
    along the page's edge. It is no balloon even when lettered (a chapter title on the top margin). The trim cuts
    a balloon on a bleed page along a chord narrower than the balloon, so that balloon stays one unless about a
    third of it is cut away."""
    x, y, w, h = bbox
    sides: list[npt.NDArray[np.int32]] = []
    if y <= _PAGE_EDGE_PX:
        sides.append(labels[y, x : x + w])
    if y + h >= height_px - _PAGE_EDGE_PX:
        sides.append(labels[y + h - 1, x : x + w])
    if x <= _PAGE_EDGE_PX:
        sides.append(labels[y : y + h, x])
    if x + w >= width_px - _PAGE_EDGE_PX:
        sides.append(labels[y : y + h, x + w - 1])
    return any(np.count_nonzero(side == label) >= _ALONG_EDGE_SHARE * side.size for side in sides)


def _same_flow(a: TextLine, b: TextLine, *, loose: bool) -> bool:
    """Two lines that read as one block: stacked lines (or side-by-side columns) close together."""
    if a.vertical != b.vertical:
        return False
    size = min(a.letter_px, b.letter_px)
    if max(a.letter_px, b.letter_px) > (3.0 if loose else 1.6) * size:
        return False
    gap_limit = (1.6 if loose else 0.9) * size
    ax, ay, aw, ah = a.bbox
    bx, by, bw, bh = b.bbox
    if a.vertical:
        gap = -interval_overlap(ax, ax + aw, bx, bx + bw)
        overlap = interval_overlap(ay, ay + ah, by, by + bh)
        return gap <= gap_limit and overlap > 0.2 * min(ah, bh)
    gap = -interval_overlap(ay, ay + ah, by, by + bh)
    overlap = interval_overlap(ax, ax + aw, bx, bx + bw)
    return gap <= gap_limit and overlap > (0 if loose else 0.15 * min(aw, bw))


def _order_lines(lines: list[TextLine]) -> list[TextLine]:
    """Lines of one block: top to bottom, the pieces of a printed line left to right; vertical columns right to
    left."""
    if lines and lines[0].vertical:
        return sorted(lines, key=lambda ln: (-(ln.bbox[0] + ln.bbox[2]), ln.bbox[1]))
    return [ln for row in printed_lines(lines) for ln in row]


def printed_lines(lines: list[TextLine]) -> list[list[TextLine]]:
    """Horizontal lines grouped into the printed lines they are pieces of, top to bottom, each left to right."""
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.bbox[1] + ln.bbox[3] / 2.0, ln.bbox[0])):
        row = next((r for r in rows if any(_side_by_side(line, other) for other in r)), None)
        if row is None:
            rows.append([line])
        else:
            row.append(line)
    rows.sort(key=lambda r: min(ln.bbox[1] + ln.bbox[3] / 2.0 for ln in r))
    return [sorted(r, key=lambda ln: ln.bbox[0]) for r in rows]


def _side_by_side(a: TextLine, b: TextLine) -> bool:
    """Two pieces of one printed line: each one's middle lies within the other's height. The OCR cuts a line
    where a word sits a little lower or higher (a hand-lettered line curving round its balloon, a lone "I"), and
    reads a long line in overlapping pieces; stacked lines, whose middles lie a line apart, never count."""
    _ax, ay, _aw, ah = a.bbox
    _bx, by, _bw, bh = b.bbox
    a_mid, b_mid = ay + ah / 2.0, by + bh / 2.0
    return ay <= b_mid <= ay + ah and by <= a_mid <= by + bh and not a.vertical and not b.vertical


def bubble_shape(
    labels: npt.NDArray[np.int32],
    stats: npt.NDArray[np.int32],
    label: int,
    page: tuple[npt.NDArray[np.uint8], float] | None = None,
) -> BubbleShape:
    """The shape of light region ``label``: outline solidity, rectangularity, corners and tail tip; with ``page``
    (the grey page and its paper's lightness) also how far its inside sits below the paper."""
    x, y, w, h, _ = (int(v) for v in stats[label])
    mask = (labels[y : y + h, x : x + w] == label).astype(np.uint8)
    fill_gap = 0.0
    if page is not None and mask.any():
        gray, paper_luma = page
        fill_gap = max(0.0, float(paper_luma) - float(np.median(gray[y : y + h, x : x + w][mask > 0])))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return BubbleShape(
            bbox=(x, y, w, h), area_px2=0, solidity=1.0, rectangularity=1.0, tail_xy=None, fill_gap=fill_gap
        )
    contour = max(contours, key=cv2.contourArea)
    area = float(cv2.contourArea(contour))  # the outer outline: letters' holes do not count against it
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull))
    corners = len(cv2.approxPolyDP(hull, 0.03 * cv2.arcLength(hull, True), True))
    tail_xy: tuple[float, float] | None = None
    body_solidity = 1.0
    fitted = _ellipse_radius(contour)
    if fitted is not None:
        radius, (ecx, ecy) = fitted
        points = contour.reshape(-1, 2).astype(np.float64)
        tip = int(np.argmax(radius))
        if radius[tip] >= 1.3:
            tail_xy = (float(points[tip, 0] + x), float(points[tip, 1] + y))
        # Pull everything beyond 1.2 radii back: a tail no longer counts, a ragged region still does.
        centre = np.array([ecx, ecy])
        pull = np.minimum(1.0, 1.2 / np.maximum(radius, 1e-6))[:, None]
        clipped = (centre + (points - centre) * pull).astype(np.float32)
        clipped_hull = float(cv2.contourArea(cv2.convexHull(clipped)))
        body_solidity = float(cv2.contourArea(clipped)) / clipped_hull if clipped_hull > 0 else 1.0
    return BubbleShape(
        bbox=(x, y, w, h),
        area_px2=int(area),
        solidity=area / hull_area if hull_area > 0 else 1.0,
        rectangularity=area / float(max(w * h, 1)),
        tail_xy=tail_xy,
        corners=corners,
        body_solidity=body_solidity,
        fill_gap=fill_gap,
    )


def _ellipse_radius(contour: npt.NDArray[np.int32]) -> tuple[npt.NDArray[np.float64], tuple[float, float]] | None:
    """Each outline point's distance from the centre in units of the ellipse fitted to the balloon's rim, and
    that centre. The fit is repeated without the points far outside it, so a long tail cannot stretch it:
    ~1 on the rim, > 1.3 at a tail's tip."""
    points = contour.reshape(-1, 2).astype(np.float64)
    if len(points) < 5:
        return None
    keep = np.ones(len(points), dtype=bool)
    radius = np.ones(len(points))
    centre = (0.0, 0.0)
    for _ in range(3):
        if keep.sum() < 5:
            break
        (cx, cy), (d1, d2), angle = cv2.fitEllipse(points[keep].astype(np.float32))
        if d1 <= 0 or d2 <= 0:
            return None
        theta = math.radians(angle)
        dx, dy = points[:, 0] - cx, points[:, 1] - cy
        u = dx * math.cos(theta) + dy * math.sin(theta)
        v = -dx * math.sin(theta) + dy * math.cos(theta)
        radius = np.sqrt((u / (d1 / 2.0)) ** 2 + (v / (d2 / 2.0)) ** 2)
        centre = (float(cx), float(cy))
        keep = radius <= 1.1
    return np.asarray(radius, dtype=np.float64), centre
