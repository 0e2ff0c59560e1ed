"""Reading order of boxes (panels on a page, texts in a panel) by recursive row/column cuts."""

from __future__ import annotations

import functools

from comic_narrator.artifacts import BBox, ReadingDirection

# Two boxes whose spans overlap by less than this fraction of the smaller span still count as separate
# rows (or columns): hand-drawn frames and bubbles overlap their neighbours a little.
_OVERLAP_TOLERANCE = 0.2
_LOOSE_ROW_TOLERANCES = (0.3, 0.4)
_LEVEL_TOPS = 0.1
_YONKOMA_MIN_STRIP = 4
"""Panels a 4-koma strip has at least (four: the form's name)."""
_YONKOMA_SIZE = 0.15
"""How far a 4-koma panel's width or height may be from the page's median panel (a fraction of it)."""
_YONKOMA_GROWN = 0.25
"""How much wider or taller than the median a 4-koma panel's box may be: a balloon or a figure drawn out over the
gutter between the strips grows the box found for its panel, never shrinks it."""


def reading_order(boxes: list[BBox], direction: ReadingDirection) -> list[int]:
    """Indices of ``boxes`` in reading order.

    Rows are cut first (a page is read row by row), then columns inside a row: left to right for 'ltr', right to
    left for 'rtl'. A tall box spanning two rows prevents the row cut, so the stack beside it becomes a column
    that is read before the next row: the usual comic convention. 'ttb' (webtoon) reads top to bottom and,
    within a band, left to right.
    """
    indices = list(range(len(boxes)))
    return _order(indices, boxes, direction, depth=0)


def _order(indices: list[int], boxes: list[BBox], direction: ReadingDirection, depth: int) -> list[int]:
    if len(indices) <= 1 or depth > 32:
        return list(indices)
    rows = bands_along(indices, boxes, axis=1)
    if len(rows) > 1:
        return [i for row in rows for i in _order(row, boxes, direction, depth + 1)]
    columns = bands_along(indices, boxes, axis=0)
    if len(columns) > 1:
        if direction == "rtl":
            columns = columns[::-1]
        return [i for col in columns for i in _order(col, boxes, direction, depth + 1)]
    # Slanted gutters make neighbouring tiers' boxes overlap more than level ones do: when no cut is clean at the
    # usual tolerance, looser row cuts are tried before falling back to positions (constructed slanted pages: a
    # tier was read left to right because its boxes overlapped the tier below by 20.3 %). Columns keep the usual
    # tolerance: two boxes overlapping a third across and half down are one above the other, not side by side.
    for tolerance in _LOOSE_ROW_TOLERANCES:
        rows = bands_along(indices, boxes, axis=1, tolerance=tolerance)
        if len(rows) > 1:
            return [i for row in rows for i in _order(row, boxes, direction, depth + 1)]

    # Overlapping boxes with no clean cut: fall back to the position of their top corner on the reading side. Tops
    # level within a tenth of the shorter box are one row whatever the boxes' heights (a panel drawn over its
    # neighbour's corner, both hanging from one gutter), read from the side reading starts.
    def before(a: int, b: int) -> int:
        xa, ya, wa, ha = boxes[a]
        xb, yb, wb, hb = boxes[b]
        if abs(ya - yb) > _LEVEL_TOPS * min(ha, hb):
            return -1 if ya < yb else 1
        side_a, side_b = (-(xa + wa), -(xb + wb)) if direction == "rtl" else (xa, xb)
        return (side_a > side_b) - (side_a < side_b) or (ya > yb) - (ya < yb)

    return sorted(indices, key=functools.cmp_to_key(before))


def bands_along(
    indices: list[int], boxes: list[BBox], axis: int, tolerance: float = _OVERLAP_TOLERANCE
) -> list[list[int]]:
    """Split ``indices`` of ``boxes`` into bands along ``axis`` (1: rows by y, 0: columns by x) where the spans do not
    overlap by more than ``tolerance`` of the smaller span."""
    ordered = sorted(indices, key=lambda i: (boxes[i][axis], boxes[i][axis + 2]))
    groups: list[list[int]] = []
    band_end = -1.0
    for i in ordered:
        start = float(boxes[i][axis])
        length = float(max(boxes[i][axis + 2], 1))
        end = start + length
        if groups:
            # Overlap with the current band, tolerated up to a fraction of this box's own span.
            overlap = band_end - start
            if overlap <= tolerance * length and overlap <= tolerance * _band_span(groups[-1], boxes, axis):
                groups.append([i])
                band_end = end
                continue
            groups[-1].append(i)
            band_end = max(band_end, end)
        else:
            groups.append([i])
            band_end = end
    return groups


def _band_span(group: list[int], boxes: list[BBox], axis: int) -> float:
    return float(min(boxes[i][axis + 2] for i in group))


def spread_halves(panels: list[BBox], width_px: int, height_px: int) -> tuple[list[int], list[int]] | None:
    """Indices of the panels on the left and on the right page of a two-page spread, or None.

    A page at least 1.2 times as wide as it is tall is a spread when no panel crosses a vertical line within the
    middle 10 % of its width (a panel across the fold, a double-page splash, makes it one picture read by the usual
    rules). Each page of a spread is read whole before the other: tiers of the two pages that happen to line up
    are not one row."""
    if width_px < 1.2 * height_px or len(panels) < 2:
        return None
    slack = 0.01 * width_px
    for frac in (0.5, 0.48, 0.52, 0.46, 0.54, 0.45, 0.55):
        cut = frac * width_px
        if all(x + w <= cut + slack or x >= cut - slack for x, _y, w, _h in panels):
            left = [i for i, (x, _y, w, _h) in enumerate(panels) if x + w / 2 < cut]
            right = [i for i in range(len(panels)) if i not in left]
            return (left, right) if left and right else None
    return None


def panel_order(panels: list[BBox], parent_of: dict[int, int], direction: ReadingDirection) -> list[int]:
    """Indices of ``panels`` in reading order, insets (``parent_of``: inset index -> its panel) next to the
    panel they are drawn over.

    Panels that are not insets are ordered by :func:`reading_order`. A panel's insets are ordered among
    themselves the same way and read after it (the splash carries the title and the opening caption at its
    top), except an inset that shares the splash's top frame on its leading half (top-left for 'ltr', top-right
    for 'rtl'): a reader meets that one first, so it and any like it are read before the splash."""
    top_level = [i for i in range(len(panels)) if i not in parent_of]
    top_boxes = [panels[i] for i in top_level]
    strips = yonkoma_order(top_boxes) if direction == "rtl" else None
    ordered: list[int] = []
    for k in strips if strips is not None else reading_order(top_boxes, direction):
        parent = top_level[k]
        insets = [i for i, p in parent_of.items() if p == parent]
        insets = [insets[j] for j in reading_order([panels[i] for i in insets], direction)]
        first = [i for i in insets if _opens_panel(panels[i], panels[parent], direction)]
        ordered.extend([*first, parent, *(i for i in insets if i not in first)])
    return ordered


def yonkoma_order(boxes: list[BBox]) -> list[int] | None:
    """A 4-koma page's panel order (right strip first, each strip top to bottom), or None for any other page.

    A 4-koma manga page sets two or more strips side by side, each a column of four or more panels of one size;
    its tiers line up across the strips, so the usual row cut would read it across (right panel, left panel,
    next row), mixing the strips' jokes. The page is taken for one when every panel, leaving out bands across
    the top (a title over the strips, read first), stacks in columns of at least :data:`_YONKOMA_MIN_STRIP`
    panels, none beside another within its column, all within :data:`_YONKOMA_SIZE` of the panels' median
    width and height or up to :data:`_YONKOMA_GROWN` larger (a box grown by a balloon over the gutter between the
    strips, which may reach that far into the next strip). Only for right-to-left pages: a Western grid of equal
    panels is read row by row."""
    if not boxes:
        return None
    widths = sorted(b[2] for b in boxes)
    median_w = widths[len(widths) // 2]
    headers = [i for i, b in enumerate(boxes) if b[2] >= 1.5 * median_w]
    rest = [i for i in range(len(boxes)) if i not in headers]  # never empty: half the panels are median or less
    strips_top = min(boxes[i][1] for i in rest)
    strips_height = max(boxes[i][1] + boxes[i][3] for i in rest) - strips_top
    if headers and max(boxes[i][1] + boxes[i][3] for i in headers) > strips_top + 0.02 * strips_height:
        return None  # a wide panel below the strips' tops: not a title band
    columns = bands_along(rest, boxes, axis=0, tolerance=_YONKOMA_GROWN)  # a grown box may reach into the next strip
    if len(columns) < 2 or any(len(c) < _YONKOMA_MIN_STRIP for c in columns):
        return None
    if any(len(bands_along(c, boxes, axis=1)) != len(c) for c in columns):
        return None
    for k in (2, 3):
        sizes = sorted(boxes[i][k] for i in rest)
        median = sizes[len(sizes) // 2]
        if any(not -_YONKOMA_SIZE <= boxes[i][k] / median - 1.0 <= _YONKOMA_GROWN for i in rest):
            return None
    out = sorted(headers, key=lambda i: boxes[i][1])
    for column in columns[::-1]:
        out.extend(sorted(column, key=lambda i: boxes[i][1]))
    return out


def _opens_panel(inset: BBox, parent: BBox, direction: ReadingDirection) -> bool:
    """The inset sits on the parent's top frame, on the side where reading starts."""
    x, y, w, _h = inset
    px, py, pw, ph = parent
    on_top = y - py <= 0.04 * ph
    if direction == "rtl":
        return on_top and x + w >= px + pw / 2.0
    return on_top and x <= px + pw / 2.0


def spread_aware_order(
    panels: list[BBox], parent_of: dict[int, int], direction: ReadingDirection, width_px: int, height_px: int
) -> list[int]:
    """Panel order; on a two-page spread, the page read first (right for manga, left otherwise) whole, then the
    other, each by the usual rules."""
    top = [i for i in range(len(panels)) if i not in parent_of]
    halves = spread_halves([panels[i] for i in top], width_px, height_px) if direction != "ttb" else None
    if halves is None:
        return panel_order(panels, parent_of, direction)
    left, right = ([top[k] for k in half] for half in halves)
    out: list[int] = []
    for half in (right, left) if direction == "rtl" else (left, right):
        members = half + [i for i, parent in parent_of.items() if parent in half]
        local = {old: new for new, old in enumerate(members)}
        sub_parent = {local[i]: local[parent_of[i]] for i in members if i in parent_of}
        out.extend(members[k] for k in panel_order([panels[i] for i in members], sub_parent, direction))
    return out
