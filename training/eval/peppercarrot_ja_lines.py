"""A second Japanese book for the speaker cues: the annotated Pepper&Carrot episodes' lines in their Japanese
translation.

Usage: python training/eval/peppercarrot_ja_lines.py OUT EPISODE_DIR [EPISODE_DIR ...]

``training/eval/peppercarrot-epNN/gt.json`` says who says each English line, with its box on the page. The
episode's Japanese SVGs (``EPISODE_DIR/ja``) put their own words in the same balloons, so each annotated line takes
the Japanese words of the balloon its box's centre lies in (all of that balloon's text regions and text lines, top
to bottom), or, outside every balloon, of the nearest Japanese text within 150 px. ``OUT/epNN/gt.json`` is the
annotation with those words as ``text`` (the English kept as ``text_en``); boxes, kinds and speakers are the
English annotation's. The artwork carries no lettering, so these sets are for the linker alone, on the annotated
lines (``python benchmarks/speaker_cues.py --lines-only --sets OUT/ep06 ...``): the turn model's Japanese cues
(registers, first-person pronouns, names called, questions) on a book by another author and a translator's
Japanese, where Black Jack is the only other.

Needs ``svgelements`` (MIT; ``pip install svgelements``), as ``letter_peppercarrot.py`` does. Licence of the
pages and their translations: CC BY 4.0, art & scenario David Revoy, www.peppercarrot.com; the Japanese
translators are named in each episode's README.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from letter_peppercarrot import page_lettering

REPO = Path(__file__).resolve().parents[2]
NEAREST_PX = 150.0
"""How far a line outside every balloon may be from the Japanese text that takes its place."""

Point = tuple[float, float]


def _inside(point: Point, polygon: list[Point]) -> bool:
    return cv2.pointPolygonTest(np.asarray(polygon, dtype=np.float32), point, False) > 0


def japanese_words(svg_path: Path, width_px: int) -> tuple[list[tuple[Point, str]], list[list[Point]]]:
    """The Japanese SVG's words (each text region's and text line's centre on the JPEG's pixels, and its words)
    and its balloons' outlines on the same pixels."""
    root = ET.parse(svg_path).getroot()
    balloons, regions, lines = page_lettering(svg_path, root)
    scale = width_px / float(root.get("width", "2481").rstrip("px"))
    words: list[tuple[Point, str]] = []
    for (x0, y0, x1, y1), text in regions:
        words.append((((x0 + x1) / 2 * scale, (y0 + y1) / 2 * scale), text))
    for x, y, size, text, _centred in lines:
        words.append(((x * scale, (y - size / 2) * scale), text))
    outlines = [[(x * scale, y * scale) for x, y in b] for b in balloons if len(b) >= 3]
    return words, outlines


def joined(parts: list[str]) -> str:
    """Japanese words from several regions as one line: no spaces between Japanese letters."""
    text = " ".join(p.strip() for p in parts if p.strip())
    return re.sub(r"(?<=[^\x00-\x7f]) +|(?<=[.!?]) +(?=[^\x00-\x7f])", "", text)


def line_in_japanese(box: list[int], words: list[tuple[Point, str]], outlines: list[list[Point]]) -> str | None:
    x, y, w, h = box
    centre = (x + w / 2, y + h / 2)
    holding = [o for o in outlines if _inside(centre, o)]
    if holding:
        balloon = min(holding, key=len)  # the innermost
        inside = sorted((p for p in words if _inside(p[0], balloon)), key=lambda p: (p[0][1], p[0][0]))
        if inside:
            return joined([text for _p, text in inside])
    near = [(((px - centre[0]) ** 2 + (py - centre[1]) ** 2) ** 0.5, text) for (px, py), text in words]
    near = [n for n in near if n[0] <= NEAREST_PX]
    return joined([min(near)[1]]) if near else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("episodes", nargs="+", type=Path)
    args = parser.parse_args()
    for episode in args.episodes:
        gt_path = REPO / "training" / "eval" / f"peppercarrot-{episode.name}" / "gt.json"
        if not gt_path.is_file():
            print(f"{episode.name}: no annotation at {gt_path}", file=sys.stderr)
            return 2
        gt = json.loads(gt_path.read_text(encoding="utf-8"))
        lines = missed = 0
        for page in gt["pages"]:
            svg_path = episode / "ja" / f"{page['image'].removeprefix('gfx_').rsplit('.', 1)[0]}.svg"
            with Image.open(episode / page["image"]) as art:
                width_px = art.width
            words, outlines = japanese_words(svg_path, width_px)
            for panel in page["panels"]:
                for text in panel["texts"]:
                    lines += 1
                    japanese = line_in_japanese(text["bbox"], words, outlines)
                    if japanese is None:
                        missed += 1
                        continue
                    text["text_en"], text["text"] = text["text"], japanese
        gt["image_dir"] = str(episode.resolve())
        gt["source"] = f"{gt.get('source', '')}; Japanese words from the episode's ja SVGs".lstrip("; ")
        target = args.out / episode.name
        target.mkdir(parents=True, exist_ok=True)
        (target / "gt.json").write_text(json.dumps(gt, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"{target}: {lines} lines, {missed} left in English (no Japanese text near them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
