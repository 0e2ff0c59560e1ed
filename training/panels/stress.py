"""Build the reader's panel stress set: one corpus-schema folder (gt.json + pages) per kind of page that issue 9
lists, for `comic-narrator eval` and training/panels/stress_eval.py.

    python training/panels/stress.py OUT_DIR [--seed 9] [--condition-pages training]

Three sources, none of them trained on by the shipped segmenter as pages:
- real pages with hand-checked panels: the golden-age and newspaper pages of ../shared/corpus (public domain);
- real held-out pages under page conditions (small and large scans, JPEG noise, screentone, dark panels, grey
  paper, page-number margins, a skewed scan, black or screentoned gutters, a scanner's black border, the back
  page showing through, a binding's shadow, dust and hairs, uneven light): Black Jack vol. 1 p. 41-60 and
  Pepper&Carrot ep. 17; and Black Jack's facing pages scanned as one spread;
- constructed pages (borderless, bleeds, art breaking out, slanted gutters, insets and overlaps, splashes,
  spreads, captions across borders, nested groups, Sunday pages, strips, strips on old newsprint, 4-koma pages,
  tiers sharing frame lines, painted gutters, rounded, oval and scalloped frames, dense pages, hand-ruled frames,
  sound words across gutters, double and heavy frames, webtoon columns written as the ingest's slices, manga
  effects over the art in grey and in colour: focus and speed lines, panels inked black, gradient tone) filled
  with panel crops of
  licence-clean art: Black Jack pages 2-40 (the segmenter's training volume), Pepper&Carrot episodes 1-16
  (CC BY 4.0) and the golden-age corpus pages (public domain, an art style the segmenter never saw). Each
  constructed page takes its art from one of the three, in turn.

Ground truth of constructed pages is exact (the boxes they were drawn in, in reading order); of the real corpus
pages, hand-checked boxes (annotations/stress-real.json, +-10 px at the pages' stored sizes).
"""

from __future__ import annotations

import argparse
import io
import json
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image

SHARED = Path(__file__).resolve().parents[3] / "shared"
ANNOTATIONS = Path(__file__).resolve().parent / "annotations"
BJ = SHARED / "training" / "blackjack-ni-yoroshiku" / "vol01"
PC = SHARED / "training" / "peppercarrot"
CORPUS = SHARED / "corpus"
Rgb = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]

STRESS_REAL: dict[str, dict[str, list[Box]]] = {
    kind: {name: [tuple(b) for b in boxes] for name, boxes in pages.items()}  # type: ignore[misc]
    for kind, pages in json.loads((ANNOTATIONS / "stress-real.json").read_text(encoding="utf-8"))["kinds"].items()
}
"""Hand-checked panels of the real corpus pages, in reading order (annotations/stress-real.json)."""


@dataclass
class Page:
    image: Rgb
    direction: str
    panels: list[Box]
    note: str = ""


@dataclass
class Art:
    """Panel crops to fill constructed pages, by source."""

    crops: dict[str, list[Rgb]] = field(default_factory=dict)

    def pick(self, source: str, rng: np.random.Generator) -> Rgb:
        pool = self.crops[source]
        return pool[int(rng.integers(len(pool)))]


# --- sources -----------------------------------------------------------------------------------------------


def _rgb(path_or_bytes: Path | bytes) -> Rgb:
    src = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    return np.asarray(Image.open(src).convert("RGB"))


def _cbz(path: Path) -> list[Rgb]:
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if n.lower().endswith(".jpg") and "/._" not in n)
        return [_rgb(archive.read(n)) for n in names]


def _chilling_tales_story() -> Rgb:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(CORPUS / "golden-age" / "ChillingTales013.pdf"))
    page = document[4]
    return np.asarray(page.render(scale=2000 / page.get_height()).to_pil().convert("RGB"))


def real_corpus_pages() -> dict[str, list[tuple[str, Rgb]]]:
    buster = _cbz(CORPUS / "golden-age" / "BusterBear10.cbz")
    return {
        "golden-age": [(f"busterbear-p{i + 1}.jpg", img) for i, img in enumerate(buster)],
        "newspaper-strip": [
            ("baron-bean.jpg", _cbz(CORPUS / "newspaper-strips" / "baron-bean-strip.cbz")[0]),
            ("dingbat-family.jpg", _cbz(CORPUS / "newspaper-strips" / "dingbat-family-strip.cbz")[0]),
        ],
    }


def _crops_of(image: Rgb, boxes: list[Box], shrink: float) -> list[Rgb]:
    out = []
    for x, y, w, h in boxes:
        dx, dy = int(w * shrink), int(h * shrink)
        crop = image[y + dy : y + h - dy, x + dx : x + w - dx]
        if min(crop.shape[:2]) >= 96:
            out.append(np.ascontiguousarray(crop))
    return out


def load_art() -> Art:
    art = Art()
    bj: list[Rgb] = []
    for name in ("bj01-a.json", "bj01-b.json"):
        for page in json.loads((ANNOTATIONS / name).read_text(encoding="utf-8"))["pages"]:
            number = int(page["image"][-10:-4])
            if number >= 41 or len(page["panels"]) < 2:
                continue  # pages 41-60 stay held out; a one-panel page is a cover, not panel art
            image = _rgb(BJ / page["image"])
            bj += _crops_of(image, [tuple(p["bbox"]) for p in page["panels"]], 0.05)
    art.crops["bj"] = bj
    from comic_narrator.reading.panels import detect_panels

    pc: list[Rgb] = []
    for episode in sorted(PC.glob("ep*")):
        if not episode.is_dir() or int(episode.name[2:]) > 16:
            continue
        # Not the title header (P00) nor the closing page of patrons' names: they are text, not panel art.
        for path in sorted(episode.glob("gfx_*.jpg"))[1:-1][::2]:
            image = _rgb(path)
            pc += _crops_of(image, list(detect_panels(image)), 0.05)
    art.crops["pc"] = pc
    golden: list[Rgb] = []
    for name, image in real_corpus_pages()["golden-age"]:
        golden += _crops_of(image, STRESS_REAL["golden-age"][name], 0.04)
    art.crops["golden"] = golden
    return art


# --- drawing -----------------------------------------------------------------------------------------------


def _fit(crop: Rgb, w: int, h: int, rng: np.random.Generator) -> Rgb:
    ch, cw = crop.shape[:2]
    scale = max(w / cw, h / ch) * rng.uniform(1.0, 1.3)
    sw, sh = min(cw, max(1, int(w / scale))), min(ch, max(1, int(h / scale)))
    x, y = int(rng.integers(0, cw - sw + 1)), int(rng.integers(0, ch - sh + 1))
    return np.asarray(cv2.resize(crop[y : y + sh, x : x + sw], (max(1, w), max(1, h))), dtype=np.uint8)


def _grey(image: Rgb) -> Rgb:
    g = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    return np.ascontiguousarray(np.stack([g] * 3, axis=-1))


@dataclass
class Canvas:
    image: Rgb
    rng: np.random.Generator
    art: Art
    source: str
    colour: bool
    paper: int = 250
    frame_px: int = 3
    boxes: list[Box] = field(default_factory=list)

    @property
    def size(self) -> tuple[int, int]:
        return self.image.shape[1], self.image.shape[0]

    def fill(self, poly: npt.NDArray[np.int32], *, frame: bool = True, open_paper: bool = False) -> Box:
        """Art inside a polygon (page pixels, may leave the page: a bleed); its clipped box is the panel."""
        width, height = self.size
        x, y, w, h = cv2.boundingRect(poly)
        x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
        crop = _fit(self.art.pick(self.source, self.rng), x1 - x0, y1 - y0, self.rng)
        if not self.colour:
            crop = _grey(crop)
        mask = np.zeros((height, width), np.uint8)
        cv2.fillPoly(mask, [poly], 255)
        sub = mask[y0:y1, x0:x1] > 0
        if open_paper:
            light = crop.mean(axis=2) > 175
            crop = crop.copy()
            crop[light] = self.paper
        self.image[y0:y1, x0:x1][sub] = crop[sub]
        if frame:
            cv2.polylines(self.image, [poly], True, (0, 0, 0), self.frame_px, lineType=cv2.LINE_AA)
        return (x0, y0, x1 - x0, y1 - y0)

    def panel(self, poly: npt.NDArray[np.int32], **kw: bool) -> None:
        self.boxes.append(self.fill(poly, **kw))

    def balloon(self, cx: int, cy: int, vertical: bool, scale: float = 1.0) -> None:
        width = self.size[0]
        ax, ay = int(self.rng.uniform(0.035, 0.07) * width * scale), int(self.rng.uniform(0.06, 0.11) * width * scale)
        if not vertical:
            ax, ay = ay, ax
        tip = (cx + int(self.rng.uniform(-1.6, 1.6) * ax), cy + int(self.rng.uniform(1.2, 1.8) * ay))
        tail = np.array([[cx - ax // 4, cy], [cx + ax // 4, cy], tip], dtype=np.int32)
        cv2.fillPoly(self.image, [tail], (255, 255, 255))
        cv2.polylines(self.image, [tail], False, (0, 0, 0), 2)
        cv2.ellipse(self.image, (cx, cy), (ax, ay), 0, 0, 360, (255, 255, 255), -1)
        cv2.ellipse(self.image, (cx, cy), (ax, ay), 0, 0, 360, (0, 0, 0), 2, lineType=cv2.LINE_AA)
        self.letters((cx - ax // 2, cy - ay // 2, ax, ay), vertical)

    def caption(self, x: int, y: int, w: int, h: int, vertical: bool) -> None:
        cv2.rectangle(self.image, (x, y), (x + w, y + h), (255, 255, 255), -1)
        cv2.rectangle(self.image, (x, y), (x + w, y + h), (0, 0, 0), 2)
        self.letters((x + 6, y + 6, w - 12, h - 12), vertical)

    def letters(self, box: Box, vertical: bool) -> None:
        x, y, w, h = box
        size = max(6, int(0.016 * self.size[0]))
        font = cv2.FONT_HERSHEY_SIMPLEX
        text = "ABCDEFGHIJKLMNOPRSTUWY"
        if vertical:
            for cx in range(x + w - size, x, -int(size * 1.5)):
                for cy in range(y + size, y + h - size // 2, int(size * 1.15)):
                    if self.rng.random() < 0.85:
                        ch = text[int(self.rng.integers(len(text)))]
                        cv2.putText(self.image, ch, (cx, cy), font, size / 30, (20, 20, 20), 2, cv2.LINE_AA)
        else:
            for cy in range(y + size, y + h, int(size * 1.5)):
                n = max(1, int(w / (size * 0.75)))
                word = "".join(text[int(self.rng.integers(len(text)))] for _ in range(n))
                cv2.putText(
                    self.image,
                    word[: int(n * self.rng.uniform(0.6, 1.0))],
                    (x, cy),
                    font,
                    size / 30,
                    (20, 20, 20),
                    2,
                    cv2.LINE_AA,
                )

    def breakout(self, px: int, py: int) -> None:
        """A figure breaking out of its frame: an oval of art with an ink outline over a frame corner or edge."""
        width = self.size[0]
        bw, bh = int(self.rng.uniform(0.1, 0.18) * width), int(self.rng.uniform(0.12, 0.22) * width)
        crop = _fit(self.art.pick(self.source, self.rng), bw, bh, self.rng)
        if not self.colour:
            crop = _grey(crop)
        blob = np.zeros((bh, bw), np.uint8)
        cv2.ellipse(blob, (bw // 2, bh // 2), (bw // 2 - 2, bh // 2 - 2), 0, 0, 360, 255, -1)
        x0, y0 = px - bw // 2, py - bh // 2
        xs, ys, xe, ye = max(0, x0), max(0, y0), min(width, x0 + bw), min(self.size[1], y0 + bh)
        sel = blob[ys - y0 : ye - y0, xs - x0 : xe - x0] > 0
        self.image[ys:ye, xs:xe][sel] = crop[ys - y0 : ye - y0, xs - x0 : xe - x0][sel]
        cv2.ellipse(self.image, (px, py), (bw // 2 - 2, bh // 2 - 2), 0, 0, 360, (0, 0, 0), 3)


def rect(x0: float, y0: float, x1: float, y1: float) -> npt.NDArray[np.int32]:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64).round().astype(np.int32)


def quad(
    tl: tuple[float, float], tr: tuple[float, float], br: tuple[float, float], bl: tuple[float, float]
) -> npt.NDArray[np.int32]:
    return np.array([tl, tr, br, bl], dtype=np.float64).round().astype(np.int32)


def _cuts(rng: np.random.Generator, lo: float, hi: float, parts: int, gutter: float) -> list[tuple[float, float]]:
    weights = rng.uniform(0.7, 1.4, size=parts)
    edges = lo + np.concatenate([[0], np.cumsum(weights)]) / weights.sum() * (hi - lo)
    return [
        (float(edges[i]) + (gutter / 2 if i else 0), float(edges[i + 1]) - (gutter / 2 if i < parts - 1 else 0))
        for i in range(parts)
    ]


def _cells(
    c: Canvas,
    box: tuple[float, float, float, float],
    rtl: bool,
    gutter: float,
    tiers: int,
    columns: tuple[int, ...] = (1, 2, 2, 3),
) -> Iterator[tuple[float, float, float, float]]:
    """The cells (x0, y0, x1, y1) of ``tiers`` tiers inside box, each of a number of panels drawn from ``columns``,
    in reading order (right to left for rtl); a tier's cuts are drawn as it is reached."""
    x0, y0, x1, y1 = box
    for ty0, ty1 in _cuts(c.rng, y0, y1, tiers, gutter):
        cols = _cuts(c.rng, x0, x1, int(c.rng.choice(list(columns))), gutter)
        for cx0, cx1 in cols[::-1] if rtl else cols:
            yield cx0, ty0, cx1, ty1


def _tiers(
    c: Canvas, box: tuple[float, float, float, float], rtl: bool, gutter: float, tiers: int = 3, **kw: bool
) -> None:
    """Plain tiers of 1-3 panels inside box, read in order (right to left for rtl)."""
    for cx0, ty0, cx1, ty1 in _cells(c, box, rtl, gutter, tiers):
        c.panel(rect(cx0, ty0, cx1, ty1), **kw)


def _new_canvas(
    rng: np.random.Generator, art: Art, source: str, width: int, height: int, colour: bool = False
) -> Canvas:
    paper = 255 if colour else int(rng.integers(238, 256))
    return Canvas(
        np.full((height, width, 3), paper, np.uint8), rng, art, source, colour, paper, int(rng.integers(2, 6))
    )


def _finish(c: Canvas, vertical: bool, n_balloons: int) -> None:
    for x, y, w, h in list(c.boxes)[:n_balloons]:
        c.balloon(int(x + w * c.rng.uniform(0.3, 0.7)), int(y + h * c.rng.uniform(0.25, 0.45)), vertical)


# --- kinds ----------------------------------------------------------------------------------------------------

W, H = 1240, 1754
MARGIN = 0.06


def kind_borderless(c: Canvas) -> str:
    g = c.rng.uniform(0.02, 0.035) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    for i, (ty0, ty1) in enumerate(_cuts(c.rng, y0, y1, 3, g)):
        cols = _cuts(c.rng, x0, x1, 2, g)
        for j, (cx0, cx1) in enumerate(cols[::-1]):
            borderless = (i + j) % 2 == 1
            c.panel(rect(cx0, ty0, cx1, ty1), frame=not borderless, open_paper=borderless and i == 1)
    _finish(c, True, 3)
    return "every other panel without a frame; the middle tier's open art fades into the paper"


def kind_bleed(c: Canvas) -> str:
    g = c.rng.uniform(0.015, 0.03) * W
    top = c.rng.uniform(0.3, 0.4) * H
    c.panel(rect(-20, -20, W + 20, top), frame=True)  # bleeds off three edges
    mid = _cuts(c.rng, top + g, (1 - MARGIN) * H - 0.3 * H, 1, g)[0]
    cols = _cuts(c.rng, MARGIN * W, (1 - MARGIN) * W, 2, g)
    for cx0, cx1 in cols[::-1]:
        c.panel(rect(cx0, mid[0], cx1, mid[1]))
    c.panel(rect(MARGIN * W if c.rng.random() < 0.5 else -20, mid[1] + g, W + 20, H + 20))  # bleeds off the bottom
    _finish(c, True, 4)
    return "first panel bleeds off the top and sides, the last off the bottom"


def kind_breakout(c: Canvas) -> str:
    g = c.rng.uniform(0.02, 0.03) * W
    _tiers(c, (MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H), True, g, 3)
    for x, y, w, h in c.boxes[:3]:
        c.breakout(int(x + w * c.rng.uniform(0.3, 0.7)), y + h)
    _finish(c, True, 2)
    return "figures drawn across the bottom frame of three panels, over the gutter"


def kind_slanted(c: Canvas) -> str:
    g = c.rng.uniform(0.015, 0.03) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    s1, s2 = c.rng.uniform(0.08, 0.2) * c.rng.choice([-1, 1]), c.rng.uniform(0.08, 0.2) * c.rng.choice([-1, 1])
    ya, yb = y0 + 0.33 * (y1 - y0), y0 + 0.66 * (y1 - y0)

    def hline(ym: float, s: float, x: float) -> float:
        return ym + s * (x - (x0 + x1) / 2)

    bands = [
        (lambda x: y0, lambda x: hline(ya, s1, x) - g / 2),
        (lambda x: hline(ya, s1, x) + g / 2, lambda x: hline(yb, s2, x) - g / 2),
        (lambda x: hline(yb, s2, x) + g / 2, lambda x: y1),
    ]
    for i, (top, bot) in enumerate(bands):
        n = 2 if i != 1 else 3
        xs = [x0 + (x1 - x0) * k / n for k in range(n + 1)]
        tilt = c.rng.uniform(0.1, 0.25) * (y1 - y0) / 3 * c.rng.choice([-1, 1])
        panels = []
        for k in range(n):
            la = xs[k] + (g / 2 if k else 0)
            rb = xs[k + 1] - (g / 2 if k < n - 1 else 0)
            # vertical gutters lean: top end shifted by tilt
            lt = la + (tilt * 0.5 if k else 0)
            lb = la - (tilt * 0.5 if k else 0)
            rt = rb + (tilt * 0.5 if k < n - 1 else 0)
            rbm = rb - (tilt * 0.5 if k < n - 1 else 0)
            panels.append(quad((lt, top(lt)), (rt, top(rt)), (rbm, bot(rbm)), (lb, bot(lb))))
        for p in panels[::-1]:
            c.panel(p)
    _finish(c, True, 3)
    return "slanted tier gutters and leaning column gutters"


def kind_inset(c: Canvas) -> str:
    g = c.rng.uniform(0.02, 0.03) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    big_bottom = y0 + 0.62 * (y1 - y0)
    c.panel(rect(x0, y0, x1, big_bottom))
    # An inset over the splash's lower left, with a paper margin, and one overlapping the splash's bottom frame.
    iw, ih = 0.3 * (x1 - x0), 0.22 * (big_bottom - y0)
    ix, iy = x0 + 0.06 * (x1 - x0), big_bottom - ih - 0.08 * (big_bottom - y0)
    cv2.rectangle(c.image, (int(ix - 10), int(iy - 10)), (int(ix + iw + 10), int(iy + ih + 10)), (c.paper,) * 3, -1)
    c.panel(rect(ix, iy, ix + iw, iy + ih))
    cols = _cuts(c.rng, x0, x1, 2, g)
    lower: list[npt.NDArray[np.int32]] = [rect(cx0, big_bottom + g, cx1, y1) for cx0, cx1 in cols]
    c.panel(lower[1])
    # The last panel overlaps its neighbour: drawn over its corner with a paper margin.
    ox0, oy0 = cols[0][0], big_bottom + g
    ox1 = cols[0][1] + 0.12 * (x1 - x0)
    oy1 = y1 - 0.1 * (y1 - big_bottom)
    cv2.rectangle(c.image, (int(ox0), int(oy0)), (int(ox1 + 10), int(oy1 + 10)), (c.paper,) * 3, -1)
    c.panel(rect(ox0, oy0, ox1, oy1))
    _finish(c, True, 1)
    return "an inset over a big panel's lower corner; a last panel drawn over its neighbour's corner"


def kind_splash(c: Canvas) -> str:
    if c.rng.random() < 0.5:
        c.panel(rect(-10, -10, W + 10, H + 10), frame=False)
        note = "full-bleed splash"
    else:
        c.panel(rect(MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H))
        note = "framed splash"
    x, y, w, h = c.boxes[0]
    c.balloon(int(x + 0.75 * w), int(y + 0.2 * h), True, 1.3)
    c.caption(int(x + 0.05 * w), int(y + 0.05 * h), int(0.12 * w), int(0.3 * h), True)
    return note


def kind_spread(c: Canvas) -> str:
    g = c.rng.uniform(0.015, 0.03) * W
    for page_x in (W, 0):  # right page first (manga)
        _tiers(
            c,
            (page_x + MARGIN * W, MARGIN * H, page_x + (1 - MARGIN) * W, (1 - MARGIN) * H),
            True,
            g,
            int(c.rng.choice([2, 3, 4])),
        )
    _finish(c, True, 4)
    return "two-page spread, each page in tiers; the right page is read first"


def kind_captions(c: Canvas) -> str:
    g = c.rng.uniform(0.015, 0.025) * W
    _tiers(c, (MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H), True, g, 3)
    for x, y, w, h in c.boxes[:-1]:
        # A caption box straddling the panel's bottom gutter, and a balloon across its left one.
        cw, ch = int(0.22 * w), int(0.12 * H)
        c.caption(int(x + 0.2 * w), int(y + h - ch / 2), cw, ch, True)
        c.balloon(x, int(y + 0.35 * h), True)
    return "caption boxes across the bottom gutters, balloons across the side ones"


def kind_nested(c: Canvas) -> str:
    g = c.rng.uniform(0.015, 0.03) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    top = y0 + c.rng.uniform(0.18, 0.28) * (y1 - y0)
    bottom = y1 - c.rng.uniform(0.0, 0.22) * (y1 - y0)
    c.panel(rect(x0, y0, x1, top))
    split = x0 + c.rng.uniform(0.4, 0.6) * (x1 - x0)
    tall_right = c.rng.random() < 0.6
    tall = rect(split + g / 2, top + g, x1, bottom) if tall_right else rect(x0, top + g, split - g / 2, bottom)
    stack_x = (x0, split - g / 2) if tall_right else (split + g / 2, x1)
    if tall_right:
        c.panel(tall)
    for sy0, sy1 in _cuts(c.rng, top + g, bottom, int(c.rng.choice([2, 3])), g):
        c.panel(rect(stack_x[0], sy0, stack_x[1], sy1))
    if not tall_right:
        c.panel(tall)
    if bottom < y1 - 0.05 * H:
        c.panel(rect(x0, bottom + g, x1, y1))
    _finish(c, True, 3)
    return "a tall panel beside a stack (right: read first; left: read after the stack)"


def kind_sunday(c: Canvas) -> str:
    """A Sunday page: a title band, then tiers of 2-4 framed panels with narrow gutters, western order."""
    width, height = c.size
    g = c.rng.uniform(0.006, 0.012) * width
    x0, x1 = 0.03 * width, 0.97 * width
    title_bottom = 0.1 * height
    c.letters((int(0.2 * width), int(0.03 * height), int(0.6 * width), int(0.05 * height)), False)
    for cx0, ty0, cx1, ty1 in _cells(
        c, (x0, title_bottom, x1, 0.97 * height), False, g, int(c.rng.choice([3, 4])), (2, 3, 4)
    ):
        c.panel(rect(cx0, ty0, cx1, ty1))
    _finish(c, False, 6)
    return "Sunday page: title band, 3-4 tiers of 2-4 panels, narrow gutters"


def kind_strip(c: Canvas) -> str:
    """A daily strip: 3-5 panels in one row sharing frame lines or with narrow gutters."""
    width, height = c.size
    g = 0.0 if c.rng.random() < 0.5 else c.rng.uniform(0.004, 0.01) * width
    for cx0, cx1 in _cuts(c.rng, 0.01 * width, 0.99 * width, int(c.rng.choice([3, 4, 5])), g):
        c.panel(rect(cx0, 0.04 * height, cx1, 0.96 * height))
    _finish(c, False, 3)
    return "daily strip" + (", panels sharing frame lines" if g == 0 else "")


def kind_yonkoma(c: Canvas) -> str:
    """A 4-koma page: two strips of four panels of one size side by side (the right strip read first, each top to
    bottom), a small title box over each strip, the gutter between the strips wider than those inside them."""
    width, height = c.size
    g = c.rng.uniform(0.012, 0.02) * width
    between = c.rng.uniform(0.04, 0.08) * width
    x0, x1 = MARGIN * width, (1 - MARGIN) * width
    top, bottom = 0.1 * height, (1 - MARGIN) * height
    strip_w = (x1 - x0 - between) / 2
    panel_h = (bottom - top - 3 * g) / 4
    for sx in (x1 - strip_w, x0):
        c.caption(int(sx + 0.25 * strip_w), int(0.045 * height), int(0.5 * strip_w), int(0.04 * height), True)
        for r in range(4):
            y = top + r * (panel_h + g)
            c.panel(rect(sx, y, sx + strip_w, y + panel_h))
    _finish(c, True, 8)
    return "4-koma: two strips of four panels, right strip first"


def kind_shared_frames(c: Canvas) -> str:
    """Manga tiers with no gutter: neighbouring panels share one frame line, across and down."""
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    _tiers(c, (x0, y0, x1, y1), True, 0.0, tiers=int(c.rng.choice([3, 4])))
    _finish(c, True, 4)
    return "tiers of 1-3 panels sharing frame lines (no gutter)"


def _newsprint(image: Rgb, rng: np.random.Generator) -> Rgb:
    """Colour printed on old newsprint: the cyan, magenta and yellow plates each a few pixels off the black one
    (misregistered fills spill into the gutters), yellowed paper, faded ink, grain and a soft scan."""
    rgb = image.astype(np.float32) / 255
    black = 1 - rgb.max(axis=2)
    rest = np.maximum(1 - black, 1e-3)
    plates = []
    for channel in range(3):
        plate = (1 - rgb[..., channel] - black) / rest
        dx, dy = rng.integers(-3, 4, 2)
        plates.append(np.roll(np.roll(plate, dx, axis=1), dy, axis=0))
    out = np.stack([(1 - plate) * (1 - black) for plate in plates], axis=2)
    paper = np.array([0.93, 0.85, 0.66]) * rng.uniform(0.92, 1.0)
    out = 0.12 + 0.82 * out * paper
    out = cv2.GaussianBlur(out + rng.normal(0, 0.025, out.shape), (0, 0), 0.8)
    return np.asarray(np.clip(out * 255, 0, 255), dtype=np.uint8)


def kind_strip_newsprint(c: Canvas) -> str:
    """A daily strip in colour as an old newspaper printed it (:func:`_newsprint`)."""
    note = kind_strip(c)
    c.image = _newsprint(c.image, c.rng)
    return note + ", on old newsprint (colour plates off register, yellowed paper, faded ink)"


def kind_painted_gutters(c: Canvas) -> str:
    """A painted page whose panels have no frames and whose gutters are narrow bands of light paint (220-245 grey,
    a little tinted) that the art fades into over a few pixels, as on some of Pepper&Carrot's pages; western order."""
    width, height = c.size
    g = c.rng.uniform(0.003, 0.008) * width
    x0, y0, x1, y1 = 0.04 * width, 0.03 * height, 0.96 * width, 0.97 * height
    for cx0, ty0, cx1, ty1 in _cells(c, (x0, y0, x1, y1), False, g, int(c.rng.choice([3, 4]))):
        c.panel(rect(cx0, ty0, cx1, ty1), frame=False)
    inside = np.zeros((height, width), np.uint8)
    for x, y, w, h in c.boxes:
        inside[y : y + h, x : x + w] = 255
    outer = np.zeros_like(inside)
    outer[int(y0) : int(y1), int(x0) : int(x1)] = 255
    paint = np.array([c.rng.uniform(220, 245)] * 3) + c.rng.uniform(-8, 8, 3)
    # Every pixel of the art fades towards the gutters' paint within `soft` pixels of them.
    soft = c.rng.uniform(3, 10)
    away = cv2.distanceTransform(inside, cv2.DIST_L2, 3)
    alpha = np.clip(away / soft, 0.0, 1.0)[..., None]
    painted = c.image.astype(np.float32) * alpha + paint[None, None, :] * (1 - alpha)
    gutters = (outer > 0) & (inside == 0)
    painted[gutters] = paint
    c.image = np.asarray(np.where((outer > 0)[..., None], painted, c.image).clip(0, 255), dtype=np.uint8)
    _finish(c, False, 3)
    return "painted panels without frames, gutters of light paint a few pixels wide that the art fades into"


def _rounded(x0: float, y0: float, x1: float, y1: float, radius: float) -> npt.NDArray[np.int32]:
    """A rectangle with corners rounded to ``radius`` pixels."""
    pts: list[tuple[float, float]] = []
    for cx, cy, start in ((x1 - radius, y0 + radius, -90), (x1 - radius, y1 - radius, 0)):
        pts += [
            (cx + radius * np.cos(np.radians(a)), cy + radius * np.sin(np.radians(a)))
            for a in range(start, start + 91, 10)
        ]
    for cx, cy, start in ((x0 + radius, y1 - radius, 90), (x0 + radius, y0 + radius, 180)):
        pts += [
            (cx + radius * np.cos(np.radians(a)), cy + radius * np.sin(np.radians(a)))
            for a in range(start, start + 91, 10)
        ]
    return np.asarray(pts, np.float64).round().astype(np.int32)


def _oval(x0: float, y0: float, x1: float, y1: float) -> npt.NDArray[np.int32]:
    centre, axes = ((x0 + x1) / 2, (y0 + y1) / 2), ((x1 - x0) / 2, (y1 - y0) / 2)
    return (
        np.asarray(
            [(centre[0] + axes[0] * np.cos(t), centre[1] + axes[1] * np.sin(t)) for t in np.linspace(0, 2 * np.pi, 72)]
        )
        .round()
        .astype(np.int32)
    )


def _cloud(x0: float, y0: float, x1: float, y1: float, bump: float) -> npt.NDArray[np.int32]:
    """A dream's or a memory's frame: the rectangle's edges scalloped into bumps ``bump`` pixels deep, outwards."""
    pts: list[tuple[float, float]] = []
    for (ax, ay), (bx, by), (nx, ny) in (
        ((x0, y0), (x1, y0), (0, -1)),
        ((x1, y0), (x1, y1), (1, 0)),
        ((x1, y1), (x0, y1), (0, 1)),
        ((x0, y1), (x0, y0), (-1, 0)),
    ):
        length = float(np.hypot(bx - ax, by - ay))
        n = max(3, round(length / (bump * 5)))
        for t in np.linspace(0, 1, n * 8, endpoint=False):
            out = bump * abs(np.sin(np.pi * n * t))
            pts.append((ax + (bx - ax) * t + nx * out, ay + (by - ay) * t + ny * out))
    return np.asarray(pts).round().astype(np.int32)


def kind_rounded_frames(c: Canvas) -> str:
    """Manga tiers whose frames are not all square: rounded corners, an oval memory, a scalloped dream frame."""
    g = c.rng.uniform(0.015, 0.03) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    shapes = []
    for cx0, ty0, cx1, ty1 in _cells(c, (x0, y0, x1, y1), True, g, int(c.rng.choice([3, 4]))):
        shape = str(c.rng.choice(["square", "rounded", "rounded", "oval", "cloud"], p=[0.35, 0.25, 0.15, 0.1, 0.15]))
        if shape == "rounded":
            poly = _rounded(cx0, ty0, cx1, ty1, c.rng.uniform(0.04, 0.12) * min(cx1 - cx0, ty1 - ty0))
        elif shape == "oval":
            poly = _oval(cx0, ty0, cx1, ty1)
        elif shape == "cloud":
            bump = c.rng.uniform(0.006, 0.012) * W
            poly = _cloud(cx0 + bump, ty0 + bump, cx1 - bump, ty1 - bump, bump)
        else:
            poly = rect(cx0, ty0, cx1, ty1)
        shapes.append(shape)
        c.panel(poly)
    _finish(c, True, 3)
    return "tiers of frames with rounded corners, ovals and scalloped edges: " + ", ".join(shapes)


def kind_dense(c: Canvas) -> str:
    """An older or a gag manga's page: 4-5 tiers of 2-4 small panels, narrow gutters, right to left."""
    g = c.rng.uniform(0.008, 0.016) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    for cx0, ty0, cx1, ty1 in _cells(c, (x0, y0, x1, y1), True, g, int(c.rng.choice([4, 5])), (2, 3, 3, 4)):
        c.panel(rect(cx0, ty0, cx1, ty1))
    _finish(c, True, 6)
    return "4-5 tiers of 2-4 small panels, narrow gutters"


def _ruled_side(c: Canvas, a: tuple[float, float], b: tuple[float, float], overshoot: float) -> None:
    """One side of a hand-ruled frame: a line from corner to corner that runs on past both by up to ``overshoot``
    pixels, wavering a pixel or two, of a thickness the pen gave it."""
    (ax, ay), (bx, by) = a, b
    length = float(np.hypot(bx - ax, by - ay))
    ux, uy = (bx - ax) / length, (by - ay) / length
    start, end = -c.rng.uniform(0, overshoot), length + c.rng.uniform(0, overshoot)
    ts = np.linspace(start, end, max(8, int(length / 40)))
    wobble = np.convolve(c.rng.normal(0, 1.2, ts.size + 4), np.ones(5) / 5, mode="valid")
    pts = np.stack([ax + ux * ts - uy * wobble, ay + uy * ts + ux * wobble], axis=1)
    thickness = int(c.rng.integers(1, 5))
    cv2.polylines(
        c.image, [pts.round().astype(np.int32)], False, (int(c.rng.integers(0, 50)),) * 3, thickness, cv2.LINE_AA
    )


def kind_hand_ruled(c: Canvas) -> str:
    """Frames ruled by hand, as older manga drew them: lines that waver, change weight and run past the corners
    into the gutters (so neighbouring frames touch or cross), in tiers read right to left."""
    g = c.rng.uniform(0.012, 0.025) * W
    overshoot = c.rng.uniform(0.6, 1.4) * g
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    for cx0, ty0, cx1, ty1 in _cells(c, (x0, y0, x1, y1), True, g, int(c.rng.choice([3, 4]))):
        c.panel(rect(cx0, ty0, cx1, ty1), frame=False)
        corners = [(cx0, ty0), (cx1, ty0), (cx1, ty1), (cx0, ty1)]
        for k in range(4):
            _ruled_side(c, corners[k], corners[(k + 1) % 4], overshoot)
    _finish(c, True, 3)
    return "hand-ruled frames: wavering lines of uneven weight running past the corners into the gutters"


def _sound_word(c: Canvas, x: float, y: float, span: float) -> None:
    """A drawn sound word: three to five bold brush strokes, black with a white rim, in a row ``span`` pixels long
    from (x, y), each stroke a bent line as a hand-lettered kana's."""
    count = int(c.rng.integers(3, 6))
    size = span / count
    for k in range(count):
        cx, cy = x + (k + 0.5) * size, y + c.rng.uniform(-0.2, 0.2) * size
        pts = []
        for _ in range(int(c.rng.integers(2, 4))):
            a = c.rng.uniform(0, np.pi)
            pts.append(
                np.asarray(
                    [
                        (cx + np.cos(a) * t * size * 0.45 + c.rng.normal(0, 2), cy + np.sin(a) * t * size * 0.45)
                        for t in np.linspace(-1, 1, 6)
                    ]
                )
                .round()
                .astype(np.int32)
            )
        weight = max(4, int(size * c.rng.uniform(0.1, 0.18)))
        cv2.polylines(c.image, pts, False, (255, 255, 255), weight + 8, cv2.LINE_AA)
        cv2.polylines(c.image, pts, False, (0, 0, 0), weight, cv2.LINE_AA)


def kind_sound_across(c: Canvas) -> str:
    """Manga tiers with big drawn sound words (bold brush strokes with a white rim) lettered across the gutters
    between neighbouring panels, over both at once, as action pages letter them."""
    g = c.rng.uniform(0.015, 0.03) * W
    _tiers(c, (MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H), True, g, int(c.rng.choice([3, 4])))
    pairs = []
    for a in c.boxes:
        for b in c.boxes:
            beside = abs(a[1] - b[1]) < 2 and 0 < b[0] - (a[0] + a[2]) < 2 * g
            below = 0 < b[1] - (a[1] + a[3]) < 2 * g and min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) > 0.2 * W
            if beside or below:
                pairs.append((a, b, beside))
    order = c.rng.permutation(len(pairs))
    for k in order[: int(c.rng.integers(2, 4))]:
        a, b, beside = pairs[int(k)]
        span = c.rng.uniform(0.25, 0.4) * W
        if beside:  # the word runs across the upright gutter between them
            gx, gy = a[0] + a[2] + (b[0] - a[0] - a[2]) / 2, a[1] + a[3] * c.rng.uniform(0.3, 0.7)
        else:  # across the gutter under a
            gx = max(a[0], b[0]) + (min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])) * c.rng.uniform(0.3, 0.7)
            gy = a[1] + a[3] + (b[1] - a[1] - a[3]) / 2
        _sound_word(c, gx - span / 2, gy, span)
    _finish(c, True, 3)
    return "big drawn sound words lettered across the gutters between neighbouring panels"


def kind_double_frames(c: Canvas) -> str:
    """Flashback frames: some panels framed by two parallel lines a few pixels apart, some by one heavy line, in
    tiers read right to left."""
    g = c.rng.uniform(0.015, 0.03) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    for cx0, ty0, cx1, ty1 in _cells(c, (x0, y0, x1, y1), True, g, int(c.rng.choice([3, 4]))):
        style = c.rng.random()
        if style < 0.5:
            gap = c.rng.uniform(0.3, 0.6) * g
            c.panel(rect(cx0 + gap, ty0 + gap, cx1 - gap, ty1 - gap))
            c.boxes[-1] = (round(cx0), round(ty0), round(cx1 - cx0), round(ty1 - ty0))
            cv2.polylines(c.image, [rect(cx0, ty0, cx1, ty1)], True, (0, 0, 0), 2, cv2.LINE_AA)
        elif style < 0.75:
            c.panel(rect(cx0, ty0, cx1, ty1), frame=False)
            cv2.polylines(c.image, [rect(cx0, ty0, cx1, ty1)], True, (0, 0, 0), int(c.rng.integers(7, 13)))
        else:
            c.panel(rect(cx0, ty0, cx1, ty1))
    _finish(c, True, 3)
    return "frames of two parallel lines (the outer one the panel's edge) and heavy frames"


def _in_panel(c: Canvas, box: tuple[float, float, float, float], layer: Rgb, drawn: npt.NDArray[np.bool_]) -> None:
    """Copy what was drawn on ``layer`` (where ``drawn``) onto the page inside box only, as a panel's effects are
    clipped to its frame."""
    x0, y0, x1, y1 = (round(v) for v in box)
    sub = np.zeros_like(drawn)
    sub[y0:y1, x0:x1] = drawn[y0:y1, x0:x1]
    c.image[sub] = layer[sub]


def _focus_lines(c: Canvas, box: tuple[float, float, float, float]) -> None:
    """Focus lines (a burst converging on a point): 60-140 black wedges from far outside the panel to a ring
    around the point; half the time over white, the art kept only inside the ring."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx, cy = x0 + w * c.rng.uniform(0.3, 0.7), y0 + h * c.rng.uniform(0.3, 0.7)
    layer = np.zeros_like(c.image)
    mask = np.zeros(c.image.shape[:2], np.uint8)
    ring = c.rng.uniform(0.15, 0.35) * min(w, h)
    far = 2 * float(np.hypot(w, h))
    for a in np.sort(c.rng.uniform(0, 2 * np.pi, int(c.rng.integers(60, 141)))):
        inner = ring * c.rng.uniform(1.0, 1.8)
        spread = c.rng.uniform(0.004, 0.02)
        pts = [
            (cx + np.cos(a) * inner, cy + np.sin(a) * inner),
            (cx + np.cos(a - spread) * far, cy + np.sin(a - spread) * far),
            (cx + np.cos(a + spread) * far, cy + np.sin(a + spread) * far),
        ]
        cv2.fillPoly(mask, [np.array(pts).round().astype(np.int32)], 255)
    if c.rng.random() < 0.5:  # the burst over white: the art only inside the ring
        clear = np.zeros_like(mask)
        cv2.ellipse(clear, (round(cx), round(cy)), (round(ring * 1.2), round(ring * 1.2)), 0, 0, 360, 255, -1)
        layer[:] = c.paper
        _in_panel(c, box, layer, clear == 0)
    layer[:] = 0
    _in_panel(c, box, layer, mask > 0)


def _speed_lines(c: Canvas, box: tuple[float, float, float, float]) -> None:
    """Speed lines: a few hundred parallel strokes of 1-3 px across the panel, at one slant, over its art."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    a = c.rng.choice([0.0, np.pi / 2, c.rng.uniform(0.2, 1.3)])
    dx, dy = np.cos(a), np.sin(a)
    layer = np.zeros_like(c.image)
    mask = np.zeros(c.image.shape[:2], np.uint8)
    span = float(np.hypot(w, h))
    for _ in range(int(c.rng.integers(150, 350))):
        px, py = x0 + c.rng.uniform(0, w), y0 + c.rng.uniform(0, h)
        length = c.rng.uniform(0.2, 0.9) * span
        p0 = (round(px - dx * length / 2), round(py - dy * length / 2))
        p1 = (round(px + dx * length / 2), round(py + dy * length / 2))
        cv2.line(mask, p0, p1, 255, int(c.rng.integers(1, 4)), cv2.LINE_AA)
    _in_panel(c, box, layer, mask > 128)


def _black_panel(c: Canvas, box: tuple[float, float, float, float]) -> None:
    """A black panel (a flashback, a blackout, a beat of silence): the frame filled with ink, a white outline of
    a figure or a white flash, and sometimes white lettering on it."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    left, top, right, bottom = (round(v) for v in box)
    c.image[top:bottom, left:right] = int(c.rng.integers(0, 30))
    if c.rng.random() < 0.6:
        centre = (round(x0 + w * c.rng.uniform(0.3, 0.7)), round(y0 + h * c.rng.uniform(0.3, 0.7)))
        axes = (round(w * c.rng.uniform(0.1, 0.25)), round(h * c.rng.uniform(0.15, 0.35)))
        cv2.ellipse(c.image, centre, axes, float(c.rng.uniform(0, 180)), 0, 360, (235, 235, 235), 2, cv2.LINE_AA)
    if c.rng.random() < 0.5:
        size = max(6, int(0.016 * c.size[0]))
        for k in range(int(c.rng.integers(1, 4))):
            org = (round(x0 + w * c.rng.uniform(0.1, 0.5)), round(y0 + h * 0.3 + k * size * 1.6))
            cv2.putText(c.image, "ABCDEFG"[: int(c.rng.integers(3, 8))], org, 0, size / 30, (240,) * 3, 2, cv2.LINE_AA)


def _tone_ramp(c: Canvas, box: tuple[float, float, float, float]) -> None:
    """A gradient screentone over the panel's light areas (a sky, a mood): dots growing from nothing at one side
    to nearly solid at the other."""
    x0, y0, x1, y1 = (round(v) for v in box)
    h, w = y1 - y0, x1 - x0
    period = max(4, round(c.size[0] / 160))
    yy, xx = np.mgrid[0:h, 0:w]
    ramp = (yy / max(1, h - 1)) if c.rng.random() < 0.6 else (xx / max(1, w - 1))
    if c.rng.random() < 0.5:
        ramp = 1 - ramp
    u = ((xx + yy) % period) / period - 0.5
    v = ((xx - yy) % period) / period - 0.5
    dots = u * u + v * v < 0.5 * ramp
    sub = c.image[y0:y1, x0:x1]
    light = sub.mean(axis=2) > 190
    sub[dots & light] = int(c.rng.integers(20, 70))


EFFECTS = {"focus lines": _focus_lines, "speed lines": _speed_lines, "black": _black_panel, "tone ramp": _tone_ramp}


def kind_effects(c: Canvas) -> str:
    """Manga effects of an action or drama page over half its panels or more: focus lines converging on a point,
    speed lines, panels inked black, gradient screentone; in tiers read right to left. The art of the other panels
    comes from the sources as elsewhere, so the page's style is the effects', not a source's. In colour
    (``effects-colour``), a colour manga's chapter opening: the art painted, the effects inked over it."""
    g = c.rng.uniform(0.012, 0.03) * W
    x0, y0, x1, y1 = MARGIN * W, MARGIN * H, (1 - MARGIN) * W, (1 - MARGIN) * H
    used = []
    names = list(EFFECTS)
    for cell in _cells(c, (x0, y0, x1, y1), True, g, int(c.rng.choice([3, 4]))):
        cx0, ty0, cx1, ty1 = cell
        c.panel(rect(cx0, ty0, cx1, ty1), frame=False)
        framed = True
        if c.rng.random() < 0.7:
            name = names[int(c.rng.integers(len(names)))]
            EFFECTS[name](c, cell)
            framed = c.rng.random() < 0.6  # an effect often is the panel's edge, with no frame ruled around it
            used.append(name if framed else name + " (no frame)")
        if framed:
            cv2.polylines(c.image, [rect(cx0, ty0, cx1, ty1)], True, (0, 0, 0), c.frame_px, lineType=cv2.LINE_AA)
    _finish(c, True, 3)
    return "manga effects over panels: " + ", ".join(used)


def kind_webtoon(c: Canvas) -> str:
    """A webtoon's slice: 5-7 panels down a tall column read top to bottom, wide gaps between them (a tenth to a
    third of the column's width) where balloons sit, the background white, black or a gradient (a sky darkening
    into night); panels framed, frameless, or running the column's full width."""
    width, height = c.size
    style = str(c.rng.choice(["white", "black", "gradient"]))
    if style == "black":
        c.image[:] = 12
    elif style == "gradient":
        top, bottom = c.rng.uniform(200, 255, 3), c.rng.uniform(10, 60, 3)
        ramp = np.linspace(0.0, 1.0, height)[:, None]
        c.image[:] = (top[None, :] * (1 - ramp) + bottom[None, :] * ramp).astype(np.uint8)[:, None, :]
    count = int(c.rng.integers(5, 8))
    heights = c.rng.uniform(0.5, 1.3, count) * width
    gaps = c.rng.uniform(0.1, 0.33, count + 1) * width
    scale = height / float(heights.sum() + gaps.sum())
    y = gaps[0] * scale
    kinds = []
    for k in range(count):
        h = heights[k] * scale
        full = c.rng.random() < 0.3
        x0, x1 = (0.0, float(width)) if full else (0.06 * width, 0.94 * width)
        framed = not full and c.rng.random() < 0.5
        c.panel(rect(x0, y, x1, y + h), frame=framed)
        kinds.append("full width" if full else "framed" if framed else "frameless")
        if k < count - 1 and c.rng.random() < 0.7:  # a balloon in the gap below
            gap = gaps[k + 1] * scale
            c.balloon(int(width * c.rng.uniform(0.3, 0.7)), int(y + h + gap / 2 - 0.02 * width), False, 0.8)
        y += h + gaps[k + 1] * scale
    return f"webtoon slice on {style}: " + ", ".join(kinds)


def _slices(image: Rgb, boxes: list[Box]) -> list[tuple[Rgb, list[Box]]]:
    """A tall strip cut as the ingest cuts it (``ingest.webtoon.content_segments``: slices 0.6-1.8 widths tall, cut
    in flat rows), each with the panels it holds (those with most of their height inside it), clipped to it."""
    from comic_narrator.ingest.webtoon import content_segments

    out = []
    for y0, y1 in content_segments(image):
        held = []
        for x, y, w, h in boxes:
            top, bottom = max(y, y0), min(y + h, y1)
            if bottom - top >= 0.5 * h:
                held.append((x, top - y0, w, bottom - top))
        out.append((np.ascontiguousarray(image[y0:y1]), held))
    return out


CONSTRUCTED: dict[str, tuple[Callable[[Canvas], str], str, tuple[int, int], bool]] = {
    "borderless": (kind_borderless, "rtl", (W, H), False),
    "bleed": (kind_bleed, "rtl", (W, H), False),
    "breakout": (kind_breakout, "rtl", (W, H), False),
    "slanted": (kind_slanted, "rtl", (W, H), False),
    "inset-overlap": (kind_inset, "rtl", (W, H), False),
    "splash": (kind_splash, "rtl", (W, H), False),
    "spread": (kind_spread, "rtl", (2 * W, H), False),
    "captions-across": (kind_captions, "rtl", (W, H), False),
    "nested": (kind_nested, "rtl", (W, H), False),
    "sunday": (kind_sunday, "ltr", (1500, 2000), True),
    "strip-constructed": (kind_strip, "ltr", (1600, 480), True),
}
SEPARATE_SEED: dict[str, tuple[Callable[[Canvas], str], str, tuple[int, int], bool]] = {
    "yonkoma": (kind_yonkoma, "rtl", (W, H), False),
    "shared-frames": (kind_shared_frames, "rtl", (W, H), False),
    "strip-newsprint": (kind_strip_newsprint, "ltr", (1600, 480), True),
    "painted-gutters": (kind_painted_gutters, "ltr", (992, 1401), True),
    "rounded-frames": (kind_rounded_frames, "rtl", (W, H), False),
    "dense": (kind_dense, "rtl", (W, H), False),
    "hand-ruled": (kind_hand_ruled, "rtl", (W, H), False),
    "sound-across": (kind_sound_across, "rtl", (W, H), False),
    "double-frames": (kind_double_frames, "rtl", (W, H), False),
    "webtoon": (kind_webtoon, "ttb", (800, 5600), True),
    "effects": (kind_effects, "rtl", (W, H), False),
    "effects-colour": (kind_effects, "rtl", (W, H), True),
}
"""Kinds added after the set was first built: each draws from a generator of its own (the seed and its place
here), so the pages of every other kind stay as they were."""


# --- page conditions on real held-out pages -------------------------------------------------------------------


def _resize(page: Page, height: int) -> Page:
    s = height / page.image.shape[0]
    w = round(page.image.shape[1] * s)
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC
    img = np.asarray(cv2.resize(page.image, (w, height), interpolation=interp), dtype=np.uint8)
    return Page(img, page.direction, [tuple(round(v * s) for v in b) for b in page.panels])  # type: ignore[misc]


def _jpeg(page: Page, rng: np.random.Generator) -> Page:
    noisy = np.clip(page.image.astype(np.float32) + rng.normal(0, 7, page.image.shape), 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 20])
    assert ok
    return Page(cv2.imdecode(data, cv2.IMREAD_UNCHANGED), page.direction, page.panels)


def _dots(h: int, w: int) -> npt.NDArray[np.bool_]:
    """A dot screentone's dots over an h x w page (a period of a two-hundredth of the width, 4 px at least)."""
    period = max(4, round(w / 200))
    yy, xx = np.mgrid[0:h, 0:w]
    return np.asarray((((xx + yy) % period) ** 2 + ((xx - yy) % period) ** 2) < (period * 0.8) ** 2)


def _screentone(page: Page, rng: np.random.Generator) -> Page:
    """Dot screentone over the light areas of every panel (skies, walls): gutters stay paper."""
    img = page.image.copy()
    dots = _dots(*img.shape[:2])
    for x, y, bw, bh in page.panels:
        sub = img[y : y + bh, x : x + bw]
        light = sub.mean(axis=2) > 200
        tone = dots[y : y + bh, x : x + bw] & light
        sub[tone] = rng.integers(60, 110)
    return Page(img, page.direction, page.panels)


def _dark(page: Page) -> Page:
    """Night scenes: every panel's art inverted and darkened, the gutters left white."""
    img = page.image.copy()
    for x, y, bw, bh in page.panels:
        sub = img[y : y + bh, x : x + bw].astype(np.float32)
        img[y : y + bh, x : x + bw] = ((255 - sub) * 0.7).astype(np.uint8)
    return Page(img, page.direction, page.panels)


def _dark_gutters(page: Page, fill: str) -> Page:
    """A flashback's or a dream's page: everything outside the panels (margins and gutters) black, flat grey, or
    under a dot screentone of mid grey (``fill``: black, grey or tone)."""
    img = page.image.copy()
    inside = np.zeros(img.shape[:2], bool)
    for x, y, bw, bh in page.panels:
        inside[y : y + bh, x : x + bw] = True
    if fill == "tone":
        img[~inside] = np.where(_dots(*img.shape[:2]), 90, 250).astype(np.uint8)[~inside][:, None]
    else:
        img[~inside] = {"black": 10, "grey": 128}[fill]
    return Page(img, page.direction, page.panels)


def _grey_paper(page: Page, rng: np.random.Generator) -> Page:
    img = page.image.astype(np.float32) * np.array([0.86, 0.82, 0.74]) + rng.normal(0, 4, page.image.shape)
    return Page(np.clip(img, 0, 255).astype(np.uint8), page.direction, page.panels)


def _margins(page: Page, number: int) -> Page:
    """Scanned-book margins: 9 % paper around the page, a running header and a page number in them."""
    h, w = page.image.shape[:2]
    mx, my = int(0.09 * w), int(0.07 * h)
    img = np.full((h + 2 * my, w + 2 * mx, 3), 250, np.uint8)
    img[my : my + h, mx : mx + w] = page.image
    scale = w / 900
    cv2.putText(img, "CHAPTER 3  THE PATIENT", (mx, int(my * 0.6)), cv2.FONT_HERSHEY_SIMPLEX, scale, (40,) * 3, 2)
    cv2.putText(
        img, str(number), (w // 2 + mx, h + my + int(my * 0.6)), cv2.FONT_HERSHEY_SIMPLEX, scale * 1.2, (40,) * 3, 2
    )
    return Page(img, page.direction, [(x + mx, y + my, bw, bh) for x, y, bw, bh in page.panels])


def _skew(page: Page) -> Page:
    h, w = page.image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), 1.2, 1.0)
    img = cv2.warpAffine(page.image, m, (w, h), borderValue=(255, 255, 255))
    boxes = []
    for x, y, bw, bh in page.panels:
        pts = np.array([[x, y], [x + bw, y], [x + bw, y + bh], [x, y + bh]], np.float64)
        moved = pts @ m[:, :2].T + m[:, 2]
        bx0, by0 = moved.min(axis=0).clip(0)
        bx1, by1 = np.minimum(moved.max(axis=0), [w, h])
        boxes.append((round(bx0), round(by0), round(bx1 - bx0), round(by1 - by0)))
    return Page(np.asarray(img, np.uint8), page.direction, boxes)


def _scan_border(page: Page, rng: np.random.Generator) -> Page:
    """A scanner's black border: a band of near-black along the top and the left edge (1-3 % and 1.5-4 % of the
    page), and along the right one time in two, as a flatbed scan of a book page leaves it."""
    img = page.image.copy()
    h, w = img.shape[:2]
    top, left = int(h * rng.uniform(0.01, 0.03)), int(w * rng.uniform(0.015, 0.04))
    right = int(w * rng.uniform(0.0, 0.02)) if rng.random() < 0.5 else 0
    img[:top] = rng.integers(5, 40)
    img[:, :left] = rng.integers(5, 40)
    if right:
        img[:, w - right :] = rng.integers(5, 40)
    return Page(img, page.direction, page.panels)


def _show_through(page: Page, rng: np.random.Generator, number: int) -> Page:
    """Thin paper: the art of the page's back (another page of the volume, mirrored) showing through, light grey
    and a little blurred, over gutters and margins as much as over the art."""
    back_pages = sorted(BJ.glob("bj01_*.jpg"))
    back = _rgb(back_pages[number % len(back_pages)])[:, ::-1]
    h, w = page.image.shape[:2]
    back = cv2.GaussianBlur(cv2.resize(back, (w, h), interpolation=cv2.INTER_AREA), (0, 0), 1.2)
    ink = 255.0 - back.mean(axis=2, keepdims=True)
    strength = rng.uniform(0.08, 0.16)
    img = page.image.astype(np.float32) - ink * strength * page.image.astype(np.float32) / 255.0
    return Page(np.clip(img, 0, 255).astype(np.uint8), page.direction, page.panels)


def _spine_shadow(page: Page, rng: np.random.Generator, number: int) -> Page:
    """A flatbed scan of a bound book: the paper darkens towards the spine (the left edge of odd pages, the right
    of even ones), a shadow 3-7 % of the page wide, as deep as 45-65 % at the fold."""
    img = page.image.astype(np.float32)
    w = img.shape[1]
    x = np.arange(w, dtype=np.float32)
    if number % 2 == 0:
        x = x[::-1]
    depth = np.exp(-x / (w * rng.uniform(0.03, 0.07))) * rng.uniform(0.45, 0.65)
    img *= (1.0 - depth)[None, :, None]
    return Page(np.clip(img, 0, 255).astype(np.uint8), page.direction, page.panels)


def _specks(page: Page, rng: np.random.Generator) -> Page:
    """Dust and hairs on the scanner's glass: a few hundred dark specks of 1-4 px and a dozen short dark curves,
    anywhere on the page."""
    img = page.image.copy()
    h, w = img.shape[:2]
    unit = max(1, round(w / 800))
    for _ in range(int(rng.integers(200, 500))):
        centre = (int(rng.integers(w)), int(rng.integers(h)))
        cv2.circle(img, centre, int(rng.integers(1, 3)) * unit, (int(rng.integers(0, 90)),) * 3, -1)
    for _ in range(int(rng.integers(6, 14))):
        x0, y0 = rng.integers(w), rng.integers(h)
        angle, bend = rng.uniform(0, 2 * np.pi), rng.uniform(-0.08, 0.08)
        length = rng.uniform(0.02, 0.06) * w
        pts = []
        for t in np.linspace(0, 1, 12):
            a = angle + bend * t * 12
            pts.append((x0 + np.cos(a) * t * length, y0 + np.sin(a) * t * length))
        cv2.polylines(img, [np.asarray(pts, np.int32)], False, (int(rng.integers(10, 70)),) * 3, unit)
    return Page(img, page.direction, page.panels)


def _uneven_light(page: Page, rng: np.random.Generator) -> Page:
    """A phone photo of a page: the light falls off from one corner to the opposite one (to 60-75 % of the paper's
    brightness) with a soft vignette, and the paper takes a cool or warm cast."""
    img = page.image.astype(np.float32)
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    corner = rng.integers(4)
    fx = xx / w if corner % 2 == 0 else 1 - xx / w
    fy = yy / h if corner < 2 else 1 - yy / h
    low = rng.uniform(0.60, 0.75)
    light = 1.0 - (1.0 - low) * (fx + fy) / 2
    light *= 1.0 - 0.15 * (((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 2)
    cast = np.array([1.0, 0.98, 0.93]) if rng.random() < 0.5 else np.array([0.94, 0.97, 1.0])
    img = img * light[..., None] * cast
    return Page(np.clip(img, 0, 255).astype(np.uint8), page.direction, page.panels)


def held_out_pages() -> list[tuple[str, Page]]:
    """Black Jack p. 41-60 (every other page) and Pepper&Carrot ep. 17, with their hand-annotated panels."""
    out = [(f"bj{number}", page) for number, page in held_out_bj_pages() if number % 2]
    pc = json.loads((CORPUS / "peppercarrot-ep17" / "gt.json").read_text(encoding="utf-8"))
    for page in pc["pages"]:
        out.append(
            (
                f"pc17-{page['image'][:-4]}",
                Page(
                    _rgb(CORPUS / "peppercarrot-ep17" / page["image"]),
                    "ltr",
                    [tuple(p["bbox"]) for p in page["panels"]],
                ),
            )
        )
    return out


def training_pages() -> list[tuple[str, Page]]:
    """Black Jack p. 2-40 with their hand-annotated panels: the segmenter's own training pages, to look for
    failures under the page conditions without looking at the held-out pages (`--condition-pages training`)."""
    out: list[tuple[str, Page]] = []
    for name in ("bj01-a.json", "bj01-b.json"):
        for page in json.loads((ANNOTATIONS / name).read_text(encoding="utf-8"))["pages"]:
            number = int(page["image"][-10:-4])
            if number <= 40:
                boxes = [tuple(p["bbox"]) for p in page["panels"]]
                out.append((f"bj{number}", Page(_rgb(BJ / page["image"]), "rtl", boxes)))  # type: ignore[arg-type]
    return out


def held_out_bj_pages() -> list[tuple[int, Page]]:
    """Every Black Jack page of p. 41-60 with its hand-annotated panels, by page number."""
    out: list[tuple[int, Page]] = []
    for page in json.loads((ANNOTATIONS / "bj01-b.json").read_text(encoding="utf-8"))["pages"]:
        number = int(page["image"][-10:-4])
        if 41 <= number <= 60:
            boxes = [tuple(p["bbox"]) for p in page["panels"]]
            out.append((number, Page(_rgb(BJ / page["image"]), "rtl", boxes)))  # type: ignore[arg-type]
    return sorted(out, key=lambda item: item[0])


def _scanned_spread(right: Page, left: Page, rng: np.random.Generator) -> Page:
    """Two facing pages scanned as one image, as manga datasets store them: the earlier page on the right, the
    later on the left, scaled a little differently, a strip of paper or none between them, the binding's shadow
    darkening both towards the fold, and the scan cut off-centre (up to 3 % of its width off one side), so the
    fold is not at the middle. Panels are read right page first."""
    height = right.image.shape[0]
    scale = height / left.image.shape[0] * rng.uniform(0.97, 1.03)
    lw = round(left.image.shape[1] * scale)
    lh = round(left.image.shape[0] * scale)
    left_img = np.asarray(cv2.resize(left.image, (lw, lh), interpolation=cv2.INTER_AREA), dtype=np.uint8)
    canvas_left = np.full((height, lw, 3), 250, np.uint8)
    top = (height - lh) // 2
    src_y0, dst_y0 = max(0, -top), max(0, top)
    rows = min(lh - src_y0, height - dst_y0)
    canvas_left[dst_y0 : dst_y0 + rows] = left_img[src_y0 : src_y0 + rows]
    left_boxes = [
        (round(x * scale), round(y * scale) + top, round(w * scale), round(h * scale)) for x, y, w, h in left.panels
    ]
    gap = int(rng.uniform(0.0, 0.015) * (lw + right.image.shape[1]))
    image = np.concatenate([canvas_left, np.full((height, gap, 3), 250, np.uint8), right.image], axis=1)
    width = image.shape[1]
    fold = lw + gap / 2
    x = np.arange(width, dtype=np.float32)
    depth = np.exp(-np.abs(x - fold) / (width * rng.uniform(0.012, 0.03))) * rng.uniform(0.3, 0.6)
    image = np.clip(image.astype(np.float32) * (1.0 - depth)[None, :, None], 0, 255).astype(np.uint8)
    shift = lw + gap
    boxes = [(x + shift, y, w, h) for x, y, w, h in right.panels] + left_boxes
    cut = int(rng.uniform(0.0, 0.03) * width)
    if rng.random() < 0.5:  # off the left side
        image = image[:, cut:]
        boxes = [(x - cut, y, w, h) for x, y, w, h in boxes]
    else:
        image = image[:, : width - cut]
    width = image.shape[1]
    clipped = []
    for x, y, w, h in boxes:
        x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
        if x1 - x0 > 0 and y1 - y0 > 0:
            clipped.append((x0, y0, x1 - x0, y1 - y0))
    return Page(np.ascontiguousarray(image), "rtl", clipped)


def scanned_spreads(pages: list[tuple[int, Page]], rng: np.random.Generator) -> list[tuple[str, Page]]:
    """Each page with the next one (by number) as a scanned spread (:func:`_scanned_spread`)."""
    return [
        (f"bj{n}-{m}.jpg", _scanned_spread(right, left, rng))
        for (n, right), (m, left) in zip(pages[::2], pages[1::2], strict=False)
        if m == n + 1
    ]


CONDITIONS: dict[str, Callable[[Page, np.random.Generator, int], Page]] = {
    "small-scan": lambda p, rng, n: _resize(p, 800),
    "large-scan": lambda p, rng, n: _resize(p, 3000),
    "jpeg-noise": lambda p, rng, n: _jpeg(_resize(p, 1100), rng),
    "screentone": lambda p, rng, n: _screentone(p, rng),
    "dark-panels": lambda p, rng, n: _dark(p),
    "grey-paper": lambda p, rng, n: _grey_paper(p, rng),
    "page-margins": lambda p, rng, n: _margins(p, n),
    "skewed-scan": lambda p, rng, n: _skew(p),
    "black-gutters": lambda p, rng, n: _dark_gutters(p, "black"),
    "toned-gutters": lambda p, rng, n: _dark_gutters(p, "tone"),
    "scan-border": lambda p, rng, n: _scan_border(p, rng),
    "show-through": lambda p, rng, n: _show_through(p, rng, n),
    "spine-shadow": lambda p, rng, n: _spine_shadow(p, rng, n),
    "specks": lambda p, rng, n: _specks(p, rng),
    "uneven-light": lambda p, rng, n: _uneven_light(p, rng),
}


# --- output ---------------------------------------------------------------------------------------------------


def _write(folder: Path, pages: list[tuple[str, Page]], source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, page in pages:
        Image.fromarray(page.image).save(folder / name, quality=92)
        entry = {
            "image": name,
            "width": int(page.image.shape[1]),
            "height": int(page.image.shape[0]),
            "reading_direction": page.direction,
            "panels": [{"order": i + 1, "bbox": [int(v) for v in b], "texts": []} for i, b in enumerate(page.panels)],
        }
        if page.note:
            entry["note"] = page.note
        entries.append(entry)
    gt = {
        "source": source,
        "box_accuracy": "exact for constructed pages; +-10 px for hand-checked real pages",
        "pages": entries,
    }
    (folder / "gt.json").write_text(json.dumps(gt, indent=1) + "\n", encoding="utf-8")


SOURCES = {
    "bj": "Black Jack ni Yoroshiku (c) Shuho Sato, Manga on Web (pages 2-40)",
    "pc": "Pepper&Carrot, CC BY 4.0, David Revoy, www.peppercarrot.com (episodes 1-16)",
    "golden": "Buster Bear #10 (Quality Comics, public domain, Digital Comic Museum)",
}


def build(
    out_dir: Path,
    seed: int,
    per_kind: int,
    kinds: set[str] | None = None,
    held_out_stride: int = 1,
    condition_pages: str = "held-out",
) -> None:
    """Write every kind's folder (or those in ``kinds``): ``per_kind`` constructed pages each, and every
    ``held_out_stride``-th held-out page under each condition (with ``condition_pages="training"``, only the
    conditions, over Black Jack p. 2-40 instead)."""
    if condition_pages == "training":
        rng = np.random.default_rng(seed)
        pages = training_pages()
        for kind, transform in CONDITIONS.items():
            if not kinds or kind in kinds:
                named = [(f"{name}.jpg", transform(page, rng, 20 + i)) for i, (name, page) in enumerate(pages)]
                _write(
                    out_dir / kind, named, "Black Jack ni Yoroshiku (c) Shuho Sato, Manga on Web (p. 2-40); transformed"
                )
        if not kinds or "scanned-spread" in kinds:
            numbered = [(int(name[2:]), page) for name, page in pages]
            _write(
                out_dir / "scanned-spread",
                scanned_spreads(numbered, np.random.default_rng([seed, 101])),
                "Black Jack ni Yoroshiku (c) Shuho Sato, Manga on Web (p. 2-40), facing pages as scanned spreads",
            )
        return
    rng = np.random.default_rng(seed)
    art = load_art()
    kinds_drawn = [(kind, spec, rng) for kind, spec in CONSTRUCTED.items()]
    for k, (kind, spec) in enumerate(SEPARATE_SEED.items()):
        kinds_drawn.append((kind, spec, np.random.default_rng([seed, k + 1])))
    for kind, (draw, direction, (width, height), colour), kind_rng in kinds_drawn:
        if kinds and kind not in kinds:
            continue
        pages = []
        for i in range(per_kind):
            source = ["bj", "golden", "pc"][i % 3] if not colour else ("pc" if i % 2 == 0 else "golden")
            c = _new_canvas(kind_rng, art, source, width, height, colour)
            note = draw(c)
            name = f"{kind}-{i + 1:02d}-{source}"
            if direction == "ttb":  # a strip is read as the slices the ingest cuts it into
                pages += [
                    (f"{name}-s{k + 1}.jpg", Page(image, direction, boxes, note))
                    for k, (image, boxes) in enumerate(_slices(c.image, c.boxes))
                ]
            else:
                pages.append((f"{name}.jpg", Page(c.image, direction, c.boxes, note)))
        _write(out_dir / kind, pages, "constructed from panel crops: " + "; ".join(SOURCES.values()))
    if kinds and not kinds & (set(STRESS_REAL) | set(CONDITIONS) | {"scanned-spread"}):
        return
    real = real_corpus_pages()
    for kind, named in STRESS_REAL.items():
        if kinds and kind not in kinds:
            continue
        pages = [(name, Page(img, "ltr", named[name])) for name, img in real[kind] if name in named]
        _write(out_dir / kind, pages, "public domain corpus pages (../shared/corpus), panels hand-checked")
    if kinds and not kinds & (set(CONDITIONS) | {"scanned-spread"}):
        return
    held = held_out_pages()[::held_out_stride]
    for kind, transform in CONDITIONS.items():
        if kinds and kind not in kinds:
            continue
        pages = [(f"{name}.jpg", transform(page, rng, 20 + i)) for i, (name, page) in enumerate(held)]
        _write(
            out_dir / kind,
            pages,
            "Black Jack ni Yoroshiku (c) Shuho Sato, Manga on Web (p. 41-59, odd pages); "
            "Pepper&Carrot ep. 17, CC BY 4.0, David Revoy; transformed",
        )
    if not kinds or "scanned-spread" in kinds:
        spreads = scanned_spreads(held_out_bj_pages(), np.random.default_rng([seed, 101]))
        _write(
            out_dir / "scanned-spread",
            spreads[::held_out_stride],
            "Black Jack ni Yoroshiku (c) Shuho Sato, Manga on Web (p. 41-60), facing pages as scanned spreads",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--per-kind", type=int, default=6)
    parser.add_argument("--kinds", default="", help="comma-separated subset")
    parser.add_argument(
        "--condition-pages",
        choices=("held-out", "training"),
        default="held-out",
        help="training: only the page conditions, over the segmenter's training pages (Black Jack p. 2-40)",
    )
    args = parser.parse_args()
    kinds = set(args.kinds.split(",")) - {""} or None
    build(args.out_dir, args.seed, args.per_kind, kinds, condition_pages=args.condition_pages)


if __name__ == "__main__":
    main()
