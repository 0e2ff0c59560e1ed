"""Letter Pepper&Carrot training pages from their translation SVGs, so the reader can read them as a user's page.

Usage: python training/eval/letter_peppercarrot.py OUT EPISODE_DIR [EPISODE_DIR ...] [--lang en]

../shared/training/peppercarrot holds the artwork without lettering and, per language, each page's SVG with its
balloons (layer ``speechbubbles``: vector paths, tails included) and its text (layer ``txt``: ``flowRoot`` regions
and ``text`` elements). This draws the balloons (white, with a dark outline) and the text (DejaVu Sans, wrapped
into each region) onto the artwork at the JPEG's size, and writes ``OUT/epNN/`` with the lettered pages under the
artwork's file names. Where ``training/eval/peppercarrot-epNN/gt.json`` exists it is copied beside them with
``image_dir`` set to ``.``, so ``comic-narrator eval OUT/epNN`` scores the reader on them (speakers included).

The lettering is not the episode's own (its Lavi font is GPL and is not used here), but the balloons, their tails
and the words and places of the text are. Needs ``svgelements`` (MIT; ``pip install svgelements``) and a DejaVu
Sans font file (Debian's ``fonts-dejavu-core``), used only here, never by the package.
Licence of the pages: CC BY 4.0, art & scenario David Revoy, www.peppercarrot.com.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[2]
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
LABEL = "{http://www.inkscape.org/namespaces/inkscape}label"


def _layer_name(group: object) -> str:
    values = getattr(group, "values", {})
    return str(values.get(LABEL) or values.get("inkscape:label") or "")


def _text_regions(root: ET.Element) -> tuple[dict[str, str], set[str]]:
    """What each text region says, by the id of the element that bounds it (a ``flowRegion``'s shape, or the
    ``text`` element itself), and the ids of every element that is text, not a balloon."""
    regions: dict[str, str] = {}
    text_ids: set[str] = set()
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "flowRoot":
            shapes = [e for e in element.iter() if e.tag.rsplit("}", 1)[-1] in ("rect", "path") and e.get("id")]
            paras = ["".join(e.itertext()).strip() for e in element.iter() if e.tag.rsplit("}", 1)[-1] == "flowPara"]
            text_ids.update(str(e.get("id")) for e in element.iter() if e.get("id"))
            words = " ".join(p for p in paras if p)
            if shapes and words:
                regions[str(shapes[0].get("id"))] = words
        elif tag == "text" and element.get("id"):
            text_ids.update(str(e.get("id")) for e in element.iter() if e.get("id"))
    return regions, text_ids


def _font_px(style: str, default: float) -> float:
    for part in style.split(";"):
        key, _, value = part.partition(":")
        if key.strip() == "font-size" and value.strip().endswith("px"):
            return float(value.strip()[:-2])
    return default


def _anchor(style: str, default: float) -> float:
    """Where a line's x lies along it: 0 at its start, 0.5 in its middle, 1 at its end (``text-anchor``)."""
    for part in style.split(";"):
        key, _, value = part.partition(":")
        if key.strip() == "text-anchor":
            return {"start": 0.0, "middle": 0.5, "end": 1.0}.get(value.strip(), default)
    return default


def _text_lines(root: ET.Element) -> dict[str, list[tuple[float, float, float, str, float]]]:
    """Each ``text`` element's lines by its id: (x, y, font size, words, anchor), in its own units. A line's size is
    its largest lettering's (a sound word's letters are often sized one by one in nested spans)."""
    out: dict[str, list[tuple[float, float, float, str, float]]] = {}
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "text" or not element.get("id"):
            continue
        style = element.get("style", "")
        size = _font_px(style, 40.0)
        anchor = _anchor(style, 0.0)
        x, y = float(element.get("x", "0") or 0), float(element.get("y", "0") or 0)
        lines: list[tuple[float, float, float, str, float]] = []
        spans = [e for e in element if e.tag.rsplit("}", 1)[-1] == "tspan"]
        for span in spans or [element]:
            words = " ".join("".join(span.itertext()).split())
            span_size = _font_px(span.get("style", ""), size)
            lettered = [e for e in span.iter() if (e.text or "").strip() and e is not span]
            if lettered:
                span_size = max(
                    [span_size] * bool((span.text or "").strip())
                    + [_font_px(e.get("style", ""), span_size) for e in lettered]
                )
            if span.get("x"):
                x = float(span.get("x", "0").split()[0])
            if span.get("y"):
                y = float(span.get("y", "0").split()[0])
            elif lines:
                y += span_size * 1.25
            if words:
                lines.append((x, y, span_size, words, _anchor(span.get("style", ""), anchor)))
        if lines:
            out[str(element.get("id"))] = lines
    return out


Affine = tuple[float, float, float, float, float, float]  # SVG's matrix(a, b, c, d, e, f)
Region = tuple[tuple[float, float, float, float], Affine, str]  # local box, its transform, words
Line = tuple[float, float, float, str, float, Affine]  # local x, y, font size, words, anchor, transform
Lettering = tuple[list[list[tuple[float, float]]], list[Region], list[Line]]


def page_lettering(svg_path: Path, root: ET.Element) -> Lettering:
    """The balloons (outlines as point lists), the text regions (box, words) and the text elements' lines of one
    page (``root``: its parsed SVG), in SVG units. Any layer but the artwork's may hold either (the episodes'
    files mix them)."""
    import svgelements as se

    words_of, text_ids = _text_regions(root)
    lines_of = _text_lines(root)
    svg = se.SVG.parse(str(svg_path))
    balloons: list[list[tuple[float, float]]] = []
    regions: list[Region] = []
    lines: list[Line] = []

    def walk(group: se.Group, layer: str) -> None:
        for element in group:
            if isinstance(element, se.Group):
                walk(element, _layer_name(element) or layer)
                continue
            eid = str(getattr(element, "id", "") or "")
            if layer == "artwork" or isinstance(element, se.Image):
                continue
            if eid in lines_of:
                affine = _affine(getattr(element, "transform", se.Matrix()))
                lines.extend((*line, affine) for line in lines_of[eid])
                continue
            if eid in words_of:
                box = element.bbox(transformed=False) if hasattr(element, "bbox") else None
                if box is not None:
                    local = (float(box[0]), float(box[1]), float(box[2]), float(box[3]))
                    regions.append((local, _affine(getattr(element, "transform", se.Matrix())), words_of[eid]))
            elif isinstance(element, se.Shape) and eid not in text_ids:
                path = se.Path(element)
                length = path.length(error=1e-2) if len(path) else 0.0
                if length <= 0:
                    continue
                steps = max(16, int(length / 6))
                points = [path.point(i / steps) for i in range(steps + 1)]
                balloons.append([(float(p.x), float(p.y)) for p in points if p is not None])

    walk(svg, "")
    return balloons, regions, lines


def _affine(matrix: object) -> Affine:
    m = matrix
    return (float(m.a), float(m.b), float(m.c), float(m.d), float(m.e), float(m.f))  # type: ignore[attr-defined]


def _stretch(affine: Affine) -> float:
    a, b, c, d, _, _ = affine
    return abs(a * d - b * c) ** 0.5 or 1.0


def _onto_page(
    layer: Image.Image, origin: tuple[float, float], affine: Affine, scale: float, pixels: float, size: tuple[int, int]
) -> Image.Image:
    """``layer``, drawn in a text element's own units times ``pixels`` with its pixel (0, 0) at ``origin`` in those
    units, mapped onto a page of ``size`` by the element's transform and the page's ``scale`` (SVG units to JPEG
    pixels)."""
    a, b, c, d, e, f = affine
    # page = scale * (M @ ((u, v) + origin) / pixels + (e, f)); PIL wants the inverse: (u, v) from a page pixel.
    ja, jb, jc, jd = (scale / pixels) * a, (scale / pixels) * c, (scale / pixels) * b, (scale / pixels) * d
    det = ja * jd - jb * jc
    ia, ib, ic, id_ = jd / det, -jb / det, -jc / det, ja / det
    tx, ty = scale * e, scale * f
    data = (ia, ib, -(ia * tx + ib * ty) - origin[0], ic, id_, -(ic * tx + id_ * ty) - origin[1])
    return layer.transform(size, Image.Transform.AFFINE, data, resample=Image.Resampling.BICUBIC)


def _letters(
    texts: list[tuple[float, float, str, str]], font: ImageFont.FreeTypeFont
) -> tuple[Image.Image, tuple[float, float]]:
    """A mask with each (x, y, words, anchor) drawn, in a text element's scaled units, and where its (0, 0) lies."""
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    boxes = [probe.textbbox((x, y), words, font=font, anchor=anchor) for x, y, words, anchor in texts]
    left, top = min(b[0] for b in boxes) - 4, min(b[1] for b in boxes) - 4
    right, bottom = max(b[2] for b in boxes) + 4, max(b[3] for b in boxes) + 4
    layer = Image.new("L", (max(1, int(right - left)), max(1, int(bottom - top))), 0)
    ink = ImageDraw.Draw(layer)
    for x, y, words, anchor in texts:
        ink.text((x - left, y - top), words, fill=255, font=font, anchor=anchor)
    return layer, (left, top)


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont, width: float) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and draw.textlength(f"{lines[-1]} {word}", font=font) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def letter_page(art: Path, svg_path: Path, out: Path) -> None:
    image = Image.open(art).convert("RGB")
    root = ET.parse(svg_path).getroot()
    balloons, regions, lines = page_lettering(svg_path, root)
    svg_width = float(root.get("width", "2481").rstrip("px"))
    scale = image.width / svg_width
    draw = ImageDraw.Draw(image)
    for outline in balloons:
        points = [(x * scale, y * scale) for x, y in outline]
        if len(points) >= 3:
            draw.polygon(points, fill=(255, 255, 255), outline=(30, 30, 30), width=2)
    for box, affine, text in regions:
        # The region is lettered in its own (untransformed) box, at the page's letter size, then mapped onto the
        # page by its transform: a region turned or sheared in the SVG (a sound word, a shout) is so on the page.
        pixels = scale * _stretch(affine)
        x0, y0, x1, y1 = (v * pixels for v in box)
        size = 18
        while True:
            font = ImageFont.truetype(str(FONT), size)
            wrapped = _wrap(draw, text, font, max(x1 - x0, 20))
            height = len(wrapped) * size * 1.2
            if height <= (y1 - y0) * 1.3 or size <= 10:
                break
            size -= 1
        top, placed = y0, []
        for line in wrapped:
            width = draw.textlength(line, font=font)
            placed.append((x0 + (x1 - x0 - width) / 2, top, line, "la"))
            top += size * 1.2
        if placed:
            layer, origin = _letters(placed, font)
            image.paste((20, 20, 20), (0, 0), _onto_page(layer, origin, affine, scale, pixels, image.size))
    for x, y, line_px, words, anchor, affine in lines:
        pixels = scale * _stretch(affine)
        font = ImageFont.truetype(str(FONT), max(8, round(line_px * pixels * 0.85)))
        width = draw.textlength(words, font=font) * anchor
        layer, origin = _letters([(x * pixels - width, y * pixels, words, "ls")], font)
        image.paste((20, 20, 20), (0, 0), _onto_page(layer, origin, affine, scale, pixels, image.size))
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, quality=92)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("episodes", nargs="+", type=Path)
    parser.add_argument("--lang", default="en")
    args = parser.parse_args()
    if not FONT.is_file():
        print(f"{FONT}: no DejaVu Sans here (Debian: apt install fonts-dejavu-core)", file=sys.stderr)
        return 2
    for episode in args.episodes:
        target = args.out / episode.name
        for svg_path in sorted((episode / args.lang).glob("*.svg")):
            art = episode / f"gfx_{svg_path.stem}.jpg"
            if art.is_file():
                letter_page(art, svg_path, target / art.name)
        gt_path = REPO / "training" / "eval" / f"peppercarrot-{episode.name}" / "gt.json"
        if gt_path.is_file():
            gt = json.loads(gt_path.read_text(encoding="utf-8"))
            gt["image_dir"] = "."
            (target / "gt.json").write_text(json.dumps(gt, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"{target}: {len(list(target.glob('*.jpg')))} pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
