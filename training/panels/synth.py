"""Synthetic comic pages with exact panel labels: random tiers and columns with slanted gutters, bleeds,
borderless and inset panels, balloons and caption boxes across gutters, art breaking out of frames.

Panels are filled with crops of licence-clean art (see data_list.md). Each page comes with a label mask: the
inside of every panel, eroded a little so neighbours sharing a frame line stay apart, and an inset cut out of
the panel it sits on.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Gray = npt.NDArray[np.uint8]


@dataclass
class Region:
    """A quadrilateral bounded by four lines: top/bottom y = a + b*x, left/right x = c + d*y."""

    top: tuple[float, float]
    bottom: tuple[float, float]
    left: tuple[float, float]
    right: tuple[float, float]

    def corners(self) -> npt.NDArray[np.float32]:
        def meet(h: tuple[float, float], v: tuple[float, float]) -> tuple[float, float]:
            a, b = h
            c, d = v
            x = (c + d * a) / (1.0 - d * b)
            return (x, a + b * x)

        pts = [meet(self.top, self.left), meet(self.top, self.right), meet(self.bottom, self.right),
               meet(self.bottom, self.left)]
        return np.array(pts, dtype=np.float32)


def _slope(rng: np.random.Generator, slant: float, share: float, least: float) -> float:
    """A gutter's slope: level unless the draw falls in ``share``, then at least ``least`` and at most ``slant``
    either way."""
    if rng.random() >= share or slant <= least:
        return 0.0
    return float(rng.uniform(least, slant) * rng.choice([-1.0, 1.0]))


def _split(region: Region, rng: np.random.Generator, axis: str, parts: int, gutter: float, slant: float,
           share: tuple[float, float] = (0.3, 0.35), least: float = 0.0) -> list[Region]:
    """Cut a region into ``parts`` along 'h' (tiers) or 'v' (columns) with gutters of ``gutter`` px; a tier gutter
    slants with chance ``share[0]``, a column gutter leans with chance ``share[1]``. Slopes are drawn again (then
    dropped) while two gutters come closer than a third of an even share at either end, or cross."""
    pts = region.corners()
    along = float(np.ptp(pts[:, 1] if axis == "h" else pts[:, 0]))
    for attempt in range(7):
        out = _split_once(region, rng, axis, parts, gutter, slant if attempt < 6 else 0.0, share, least)
        if all(min(_extents(r, axis)) >= along / parts / 3 for r in out):
            return out
    return out


def _extents(region: Region, axis: str) -> tuple[float, float]:
    """A region's height at its left and right ends ('h') or its width at its top and bottom ('v')."""
    tl, tr, br, bl = region.corners()
    if axis == "h":
        return float(bl[1] - tl[1]), float(br[1] - tr[1])
    return float(tr[0] - tl[0]), float(br[0] - bl[0])


def _split_once(region: Region, rng: np.random.Generator, axis: str, parts: int, gutter: float, slant: float,
                share: tuple[float, float], least: float) -> list[Region]:
    pts = region.corners()
    x0, x1 = float(pts[:, 0].min()), float(pts[:, 0].max())
    y0, y1 = float(pts[:, 1].min()), float(pts[:, 1].max())
    weights = rng.uniform(0.6, 1.6, size=parts)
    edges = np.cumsum(weights)[:-1] / weights.sum()
    out: list[Region] = []
    prev = region.top if axis == "h" else region.left
    for t in edges:
        if axis == "h":
            mid_y = y0 + t * (y1 - y0)
            b = _slope(rng, slant, share[0], least)
            a = mid_y - b * (x0 + x1) / 2
            out.append(Region(prev, (a - gutter / 2, b), region.left, region.right))
            prev = (a + gutter / 2, b)
        else:
            mid_x = x0 + t * (x1 - x0)
            d = _slope(rng, slant, share[1], least)
            c = mid_x - d * (y0 + y1) / 2
            out.append(Region(region.top, region.bottom, region.left if not out else prev, (c - gutter / 2, d)))
            prev = (c + gutter / 2, d)
    if axis == "h":
        out.append(Region(prev, region.bottom, region.left, region.right))
    else:
        out.append(Region(region.top, region.bottom, prev if len(out) else region.left, region.right))
    return out


ACTION_PAGE_SHARE = 0.12
"""Pages drawn with most gutters slanted and steep, as action manga are; the rest slant a few gutters gently."""

NIGHT_PAGE_SHARE = 0.0
"""Pages whose panels are night scenes: the art inverted and darkened (most of each panel near black), the
gutters left paper; balloons stay white. Off for the shipped model (0.08 tried: README, "Night pages")."""

BLACK_GUTTER_SHARE = 0.0
"""Pages printed on black (flashbacks, dreams): the gutters and margins near black, frames drawn light or not at
all. Off for the shipped model (0.04 tried with the night pages)."""


SHARED_FRAME_SHARE = 0.0
"""Pages drawn as manga drawn without gutters: every panel framed, neighbours sharing one frame line across and
down (the no-gutter pages of the shipped recipe, 8 % of them, leave a quarter of their panels unframed, so two
panels' art may meet with nothing between them). Set by train.py's `--shared-frame-share`."""

TONE_PAGE_SHARE = 0.0
"""Pages whose panels carry screentone: dots or lines of random pitch, angle and weight over the light areas of
some of the panels, whole or a part of each (a sky, a wall), sometimes graded; the gutters stay paper. Synthetic
pages get it under their balloons (`render_page`), real pages over their panels (`screentone`). Set by train.py's
`--tone-share`."""


@dataclass
class Tone:
    """One page's screentone: the same sheet for every panel it covers."""

    pitch: float
    angle: float
    lines: bool
    light_from: int

    @staticmethod
    def draw(rng: np.random.Generator, width: int) -> Tone:
        return Tone(max(2.5, width * rng.uniform(0.0025, 0.009)),
                    float(np.deg2rad(rng.choice([45.0, 0.0, 30.0, 60.0, float(rng.uniform(0, 90))]))),
                    bool(rng.random() < 0.2), int(rng.integers(160, 225)))

    def over(self, patch: Gray, rng: np.random.Generator, mask: npt.NDArray[np.bool_] | None = None) -> Gray:
        """``patch`` with the tone over its light areas (inside ``mask``): all of them, the part on one side of a
        random line, or none (a quarter of the time)."""
        h, w = patch.shape
        if rng.random() < 0.25 or w < 8 or h < 8:
            return patch
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        u = xx * np.cos(self.angle) + yy * np.sin(self.angle)
        v = yy * np.cos(self.angle) - xx * np.sin(self.angle)
        weight: npt.NDArray[np.float32] | float = rng.uniform(0.25, 0.6)
        if rng.random() < 0.3:  # graded, darker towards one side
            along = yy / h if rng.random() < 0.7 else xx / w
            weight = (0.1 + along * rng.uniform(0.3, 0.6)).astype(np.float32)
        du = np.mod(u, self.pitch) - self.pitch / 2
        dv = np.mod(v, self.pitch) - self.pitch / 2
        ink = np.abs(du) < weight * self.pitch / 2 if self.lines else du * du + dv * dv < (weight * self.pitch) ** 2
        where = ink & (patch >= self.light_from)
        if mask is not None:
            where &= mask
        if rng.random() < 0.5:
            a, b = rng.normal(size=2)
            where &= a * (xx / w - 0.5) + b * (yy / h - 0.5) > rng.uniform(-0.3, 0.3) * (abs(a) + abs(b))
        out = patch.copy()
        out[where] = int(rng.integers(20, 150))
        return out


def _labelled_panels(page: Gray, label: Gray) -> list[tuple[int, tuple[int, int, int, int], npt.NDArray[np.int32]]]:
    """Each panel that ``label`` marks (255 inside, eroded by 0.6 % of the width as the training labels are), grown
    back to its frame: its component number, its box and the page's component map."""
    grow = max(2, round(0.006 * page.shape[1]))
    inside = cv2.dilate(label, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)) > 127
    count, parts, stats, _ = cv2.connectedComponentsWithStats(inside.astype(np.uint8))
    return [(i, tuple(int(v) for v in stats[i, :4]), parts) for i in range(1, count)]  # type: ignore[misc]


def screentone(page: Gray, label: Gray, rng: np.random.Generator) -> Gray:
    """``page`` with one tone over the light areas of the panels that ``label`` marks (255 inside a panel, eroded
    by 0.6 % of the width as the training labels are), each panel toned whole, in part or not at all."""
    tone = Tone.draw(rng, page.shape[1])
    out = page.copy()
    for i, (x, y, w, h), parts in _labelled_panels(page, label):
        out[y : y + h, x : x + w] = tone.over(page[y : y + h, x : x + w], rng, parts[y : y + h, x : x + w] == i)
    return out


def night_panels(page: Gray, label: Gray, rng: np.random.Generator) -> Gray:
    """``page`` with some of the panels that ``label`` marks made night scenes: the art inverted and darkened, or
    its light areas darkened under the ink; the gutters stay paper."""
    out = page.copy()
    for i, (x, y, w, h), parts in _labelled_panels(page, label):
        if rng.random() < 0.4:
            continue
        patch = page[y : y + h, x : x + w].astype(np.float32)
        dark = (255 - patch) * rng.uniform(0.45, 0.85)
        if rng.random() < 0.5:
            dark = np.minimum(patch, patch * rng.uniform(0.15, 0.45))
        where = parts[y : y + h, x : x + w] == i
        out[y : y + h, x : x + w][where] = dark.astype(np.uint8)[where]
    return out


def _chance(rng: np.random.Generator, share: float) -> bool:
    """True with chance ``share``; draws nothing when the share is 0, so a recipe without the kind draws the same
    pages as before the kind existed."""
    return share > 0 and bool(rng.random() < share)


def layout(rng: np.random.Generator, width: int, height: int, shared: bool = False) -> list[Region]:
    margins = [rng.uniform(0.02, 0.08) for _ in range(4)]
    if rng.random() < 0.15:
        margins[0] = rng.uniform(0.1, 0.22)  # a title band above the panels
    bleed = [rng.random() < 0.12 for _ in range(4)]
    top = -0.02 * height if bleed[0] else margins[0] * height
    bottom = height * 1.02 if bleed[1] else height * (1 - margins[1])
    left = -0.02 * width if bleed[2] else margins[2] * width
    right = width * 1.02 if bleed[3] else width * (1 - margins[3])
    page = Region((top, 0.0), (bottom, 0.0), (left, 0.0), (right, 0.0))
    gutter = 0.0 if shared or rng.random() < 0.08 else rng.uniform(0.006, 0.035) * width
    if not shared and rng.random() < 0.06:
        return [page]
    if rng.random() < ACTION_PAGE_SHARE:
        # An action page: most gutters slanted, steeply (tiers up to 0.3, about 17 degrees; columns up to 0.35).
        tier_slant, col_slant, sub_slant, share, least = 0.3, 0.35, 0.25, (0.85, 0.8), 0.04
    else:
        tier_slant, col_slant, sub_slant, share, least = 0.12, 0.15, 0.1, (0.3, 0.35), 0.0
    strip = height < 0.5 * width  # a newspaper strip: one row of three to five panels
    n_tiers = 1 if strip else int(rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5]))
    tiers = _split(page, rng, "h", n_tiers, gutter, tier_slant, share, least)
    panels: list[Region] = []
    for tier in tiers:
        n_cols = int(rng.choice([3, 4, 4, 5])) if strip else int(rng.choice([1, 1, 2, 2, 2, 3, 3, 4]))
        cols = _split(tier, rng, "v", n_cols, gutter, col_slant, share, least)
        for col in cols:
            if rng.random() < 0.15:
                panels.extend(_split(col, rng, "h", int(rng.choice([2, 2, 3])), gutter, sub_slant, share, least))
            else:
                panels.append(col)
    return panels


def _fit_crop(art: Gray, w: int, h: int, rng: np.random.Generator) -> Gray:
    ah, aw = art.shape
    scale = max(w / aw, h / ah) * rng.uniform(1.0, 1.6)
    cw, ch = min(aw, max(1, int(w / scale))), min(ah, max(1, int(h / scale)))
    x = int(rng.integers(0, aw - cw + 1))
    y = int(rng.integers(0, ah - ch + 1))
    return np.asarray(cv2.resize(art[y : y + ch, x : x + cw], (max(1, w), max(1, h))), dtype=np.uint8)


def _fake_lettering(canvas: Gray, box: tuple[int, int, int, int], rng: np.random.Generator, vertical: bool) -> None:
    x, y, w, h = box
    size = max(3, int(rng.uniform(0.012, 0.02) * canvas.shape[1]))
    if vertical:
        for cx in range(x + w - size - 2, x + 2, -int(size * 1.5)):
            n = int(rng.integers(1, max(2, h // size)))
            for k in range(n):
                cy = y + 3 + k * size
                if cy + size > y + h:
                    break
                cv2.rectangle(canvas, (cx, cy), (cx + size - 2, cy + size - 3), 20, int(rng.integers(1, 3)))
    else:
        for cy in range(y + 3, y + h - size, int(size * 1.5)):
            n = int(rng.integers(1, max(2, w // size)))
            for k in range(n):
                cx = x + 3 + k * size
                if cx + size > x + w:
                    break
                cv2.rectangle(canvas, (cx, cy), (cx + size - 3, cy + size - 2), 20, int(rng.integers(1, 3)))


def _balloon(canvas: Gray, rng: np.random.Generator, cx: int, cy: int, vertical: bool) -> None:
    width = canvas.shape[1]
    ax, ay = int(rng.uniform(0.04, 0.12) * width), int(rng.uniform(0.05, 0.15) * width)
    if not vertical:
        ax, ay = ay, ax
    if rng.random() < 0.7:
        tip = (cx + int(rng.uniform(-2, 2) * ax), cy + int(rng.uniform(-2, 2) * ay))
        base = np.array([[cx - ax // 4, cy], [cx + ax // 4, cy], tip], dtype=np.int32)
        cv2.fillPoly(canvas, [base], 255)
        cv2.polylines(canvas, [base], False, 0, 2)
    cv2.ellipse(canvas, (cx, cy), (ax, ay), 0, 0, 360, 255, -1)
    cv2.ellipse(canvas, (cx, cy), (ax, ay), 0, 0, 360, 0, int(rng.integers(1, 4)))
    _fake_lettering(canvas, (cx - ax // 2, cy - ay // 2, ax, ay), rng, vertical)


def render_page(rng: np.random.Generator, arts: list[Gray], width: int, height: int
                ) -> tuple[Gray, Gray, list[tuple[int, int, int, int]]]:
    """A page, its panel-interior label mask (255 inside a panel) and the panels' boxes."""
    black = _chance(rng, BLACK_GUTTER_SHARE)
    night = not black and _chance(rng, NIGHT_PAGE_SHARE)
    tone = Tone.draw(rng, width) if not black and _chance(rng, TONE_PAGE_SHARE) else None
    paper = int(rng.integers(0, 45)) if black else int(rng.integers(225, 256))
    frame_ink = int(rng.integers(200, 256)) if black else 0
    canvas = np.full((height, width), paper, dtype=np.uint8)
    label = np.zeros((height, width), dtype=np.uint8)
    shared = not black and _chance(rng, SHARED_FRAME_SHARE)
    regions = layout(rng, width, height, shared)
    polys: list[npt.NDArray[np.int32]] = []
    frame_px = int(rng.integers(1, 6))
    erode_px = max(2, int(0.006 * width))
    for region in regions:
        poly = region.corners().round().astype(np.int32)
        x, y, w, h = cv2.boundingRect(poly)
        if w < 0.05 * width or h < 0.04 * height:
            continue
        art = arts[int(rng.integers(len(arts)))]
        mask = np.zeros_like(canvas)
        cv2.fillPoly(mask, [poly], 255)
        x0, y0 = max(0, x), max(0, y)
        x1, y1 = min(width, x + w), min(height, y + h)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        crop = _fit_crop(art, x1 - x0, y1 - y0, rng)
        if tone is not None:
            crop = tone.over(crop, rng)
        style = rng.random()
        if night and rng.random() < 0.85:
            crop = ((255 - crop.astype(np.float32)) * rng.uniform(0.45, 0.8)).astype(np.uint8)
            style = 1.0  # framed: a dark panel does not fade into the paper
        elif black:
            style = max(style, 0.25)  # art on black paper is framed or borderless, never faded into it
        elif shared:
            style = 0.25 + 0.75 * style  # every panel framed: the shared line is all that parts them
        borderless = style < 0.25
        sub = mask[y0:y1, x0:x1] > 0
        if style < 0.12:
            # Art on open paper: light areas of the art become paper, no frame line.
            crop = np.where(crop > 170, paper, crop).astype(np.uint8)
            canvas[y0:y1, x0:x1][sub] = crop[sub]
        elif style < 0.25:
            # A vignette: the art fades into the paper towards the panel's edges (painted webcomics).
            soft = cv2.GaussianBlur(cv2.erode(mask, np.ones((9, 9), np.uint8)).astype(np.float32) / 255.0,
                                    (0, 0), rng.uniform(3, 12))[y0:y1, x0:x1]
            mixed = crop.astype(np.float32) * soft + paper * (1 - soft)
            canvas[y0:y1, x0:x1][sub] = mixed.astype(np.uint8)[sub]
        else:
            canvas[y0:y1, x0:x1][sub] = crop[sub]
        if not borderless and not (black and rng.random() < 0.4):  # on black, some frames are not drawn
            cv2.polylines(canvas, [poly], True, frame_ink, frame_px, lineType=cv2.LINE_AA)
        polys.append(poly)
    # Insets over a big panel.
    insets: list[npt.NDArray[np.int32]] = []
    for poly in list(polys):
        x, y, w, h = cv2.boundingRect(poly)
        if w * h > 0.3 * width * height and rng.random() < 0.35:
            iw, ih = int(w * rng.uniform(0.2, 0.45)), int(h * rng.uniform(0.15, 0.4))
            ix = x + int(rng.uniform(0.0, 1.0) * (w - iw))
            iy = y + int(rng.uniform(0.0, 1.0) * (h - ih))
            ix, iy = max(0, ix), max(0, iy)
            inset = np.array([[ix, iy], [ix + iw, iy], [ix + iw, iy + ih], [ix, iy + ih]], dtype=np.int32)
            pad = int(rng.integers(0, 8))
            cv2.rectangle(canvas, (ix - pad, iy - pad), (ix + iw + pad, iy + ih + pad), paper, -1)
            crop = _fit_crop(arts[int(rng.integers(len(arts)))], iw, ih, rng)
            canvas[iy : iy + ih, ix : ix + iw] = crop[: max(0, min(ih, height - iy)), : max(0, min(iw, width - ix))]
            cv2.rectangle(canvas, (ix, iy), (ix + iw, iy + ih), frame_ink, frame_px)
            insets.append(inset)
    for poly in polys:
        m = np.zeros_like(label)
        cv2.fillPoly(m, [poly], 255)
        m = cv2.erode(m, np.ones((2 * erode_px + 1, 2 * erode_px + 1), np.uint8))
        label = np.maximum(label, m)
    for inset in insets:
        big = np.zeros_like(label)
        cv2.fillPoly(big, [inset], 255)
        label[cv2.dilate(big, np.ones((2 * erode_px + 1, 2 * erode_px + 1), np.uint8)) > 0] = 0
        small = cv2.erode(big, np.ones((2 * erode_px + 1, 2 * erode_px + 1), np.uint8))
        label = np.maximum(label, small)
    # Art breaking out of frames: a dark blob of art pasted over a panel edge.
    for _ in range(int(rng.integers(0, 3))):
        if not polys:
            break
        poly = polys[int(rng.integers(len(polys)))]
        px, py = poly[int(rng.integers(4))]
        bw, bh = int(rng.uniform(0.05, 0.15) * width), int(rng.uniform(0.05, 0.15) * width)
        blob = np.zeros((bh, bw), np.uint8)
        cv2.ellipse(blob, (bw // 2, bh // 2), (bw // 2 - 1, bh // 2 - 1), 0, 0, 360, 255, -1)
        crop = _fit_crop(arts[int(rng.integers(len(arts)))], bw, bh, rng)
        x0, y0 = int(px - bw // 2), int(py - bh // 2)
        xs, ys = max(0, x0), max(0, y0)
        xe, ye = min(width, x0 + bw), min(height, y0 + bh)
        if xe > xs and ye > ys:
            sel = blob[ys - y0 : ye - y0, xs - x0 : xe - x0] > 0
            canvas[ys:ye, xs:xe][sel] = crop[ys - y0 : ye - y0, xs - x0 : xe - x0][sel]
    # Balloons and captions, some across gutters.
    vertical = rng.random() < 0.6
    for _ in range(int(rng.integers(0, 9))):
        cx, cy = int(rng.integers(0, width)), int(rng.integers(0, height))
        if polys and rng.random() < 0.4:
            poly = polys[int(rng.integers(len(polys)))]
            a, b = poly[int(rng.integers(4))], poly[int(rng.integers(4))]
            t = rng.random()
            cx, cy = int(a[0] * t + b[0] * (1 - t)), int(a[1] * t + b[1] * (1 - t))
        if rng.random() < 0.75:
            _balloon(canvas, rng, cx, cy, vertical)
        else:
            w, h = int(rng.uniform(0.06, 0.25) * width), int(rng.uniform(0.05, 0.2) * height)
            cv2.rectangle(canvas, (cx, cy), (cx + w, cy + h), 255, -1)
            cv2.rectangle(canvas, (cx, cy), (cx + w, cy + h), 0, int(rng.integers(1, 3)))
            _fake_lettering(canvas, (cx + 4, cy + 4, w - 8, h - 8), rng, vertical)
    if regions and rng.random() < 0.2:
        # Big title lettering in the top margin (not a panel).
        top = int(min(float(r.corners()[:, 1].min()) for r in regions))
        if top > 0.08 * height:
            _fake_lettering(canvas, (int(0.15 * width), int(0.2 * top), int(0.6 * width), int(0.6 * top)), rng, False)
    # Page furniture: a page number or a small mark in a margin.
    if rng.random() < 0.5:
        _fake_lettering(canvas, (int(rng.uniform(0.02, 0.9) * width), int(height * 0.97), int(0.06 * width),
                                 int(0.02 * height)), rng, False)
    if rng.random() < 0.3:
        canvas = cv2.GaussianBlur(canvas, (3, 3), 0)
    noise = rng.normal(0, rng.uniform(0, 6), canvas.shape)
    canvas = np.clip(canvas.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    boxes: list[tuple[int, int, int, int]] = []
    for poly in [*polys, *insets]:
        x, y, w, h = cv2.boundingRect(poly)
        x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
        boxes.append((x0, y0, x1 - x0, y1 - y0))
    return canvas, label, boxes
