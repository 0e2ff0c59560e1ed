"""Is the colour just past a balloon's true tail tip a speaker cue on Pepper&Carrot? (docs/reading.md, "Colour pages")

Usage: python benchmarks/tail_tip_colour.py [EPISODE ...]   (default: ep06 ep08 ep11 ep13, the episodes looked at)

For each annotated spoken line of the episodes (training/eval/peppercarrot-epNN/gt.json) it finds the balloon of
the episode's own SVG that holds the line, fits an ellipse to its outline (again without the points beyond 1.1
radii) and takes the outline point farthest outside it, at 1.3 radii or more, as the tail's tip. A window past the
tip on the unlettered artwork gives a 12-bin hue histogram of its coloured pixels and a 64-bin RGB histogram. Over
every pair of such lines in different panels, it prints the chance that a same-speaker pair has the closer
signatures (half-L1 distance), at several window sizes and distances: 0.5 is a coin. Needs ../shared/training and
`pip install svgelements` (as the letterer does).
"""

from __future__ import annotations

import itertools
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "training" / "eval"))
import letter_peppercarrot as letterer  # noqa: E402

EPISODES = REPO.parent / "shared" / "training" / "peppercarrot"
Signature = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]


def _radii(points: npt.NDArray[np.float32], ellipse: tuple) -> npt.NDArray[np.float64]:  # type: ignore[type-arg]
    (cx, cy), (a, b), angle = ellipse
    t = np.deg2rad(angle)
    dx, dy = points[:, 0] - cx, points[:, 1] - cy
    u = (dx * np.cos(t) + dy * np.sin(t)) / (a / 2 + 1e-6)
    v = (-dx * np.sin(t) + dy * np.cos(t)) / (b / 2 + 1e-6)
    return np.asarray(np.hypot(u, v), dtype=np.float64)


def tail_tip(outline: npt.NDArray[np.float32]) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """The balloon's centre, its tail's tip and its size (mean axis), or None without a tail."""
    if len(outline) < 6:
        return None
    ellipse = cv2.fitEllipse(outline)
    inside = outline[_radii(outline, ellipse) <= 1.1]
    if len(inside) >= 6:
        ellipse = cv2.fitEllipse(inside)
    radii = _radii(outline, ellipse)
    tip = int(np.argmax(radii))
    if radii[tip] < 1.3:
        return None
    (cx, cy), (a, b), _ = ellipse
    return (float(cx), float(cy)), (float(outline[tip, 0]), float(outline[tip, 1])), (a + b) / 2


def signature(rgb: npt.NDArray[np.uint8], hsv: npt.NDArray[np.uint8], x: float, y: float, half: float) -> Signature:
    height, width = hsv.shape[:2]
    x0, x1 = int(max(0, x - half)), int(min(width, x + half))
    y0, y1 = int(max(0, y - half)), int(min(height, y + half))
    pixels = hsv[y0:y1, x0:x1].reshape(-1, 3).astype(float)
    coloured = pixels[(pixels[:, 1] > 60) & (pixels[:, 2] > 40)]
    hue = np.histogram(coloured[:, 0], bins=12, range=(0, 180))[0].astype(float)
    levels = rgb[y0:y1, x0:x1].reshape(-1, 3) // 64
    colours = np.bincount(levels[:, 0] * 16 + levels[:, 1] * 4 + levels[:, 2], minlength=64).astype(float)
    return hue / max(hue.sum(), 1.0), colours / max(colours.sum(), 1.0)


def episode_lines(episode: str, past: float, window: float) -> list[tuple[str, int, str, Signature]]:
    gt = json.loads((REPO / "training" / "eval" / f"peppercarrot-{episode}" / "gt.json").read_text(encoding="utf-8"))
    lines = []
    for page in gt["pages"]:
        svg = EPISODES / episode / "en" / f"{page['image'][4:-4]}.svg"
        if not svg.is_file():
            continue
        root = ET.parse(svg).getroot()
        balloons, _, _ = letterer.page_lettering(svg, root)
        rgb = np.asarray(Image.open(EPISODES / episode / page["image"]).convert("RGB"))
        hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
        scale = rgb.shape[1] / float(root.get("width", "2481").rstrip("px"))
        outlines = [np.asarray([(x * scale, y * scale) for x, y in b], np.float32) for b in balloons if len(b) >= 6]
        for number, panel in enumerate(page["panels"]):
            for text in panel["texts"]:
                if not text.get("speaker") or text["kind"] not in ("speech", "shout"):
                    continue
                bx, by, bw, bh = text["bbox"]
                centre = (bx + bw / 2, by + bh / 2)
                holding = [o for o in outlines if cv2.pointPolygonTest(o, centre, False) >= 0]
                found = tail_tip(min(holding, key=cv2.contourArea)) if holding else None
                if found is None:
                    continue
                (cx, cy), (tx, ty), size = found
                way = np.array([tx - cx, ty - cy]) / (np.hypot(tx - cx, ty - cy) + 1e-6)
                sig = signature(rgb, hsv, tx + way[0] * past * size, ty + way[1] * past * size, window * size / 2)
                lines.append((page["image"], number, str(text["speaker"]), sig))
    return lines


def same_speaker_closer(lines: list[tuple[str, int, str, Signature]], part: int) -> float | None:
    same, other = [], []
    for a, b in itertools.combinations(lines, 2):
        if (a[0], a[1]) != (b[0], b[1]):
            (same if a[2] == b[2] else other).append(0.5 * float(np.abs(a[3][part] - b[3][part]).sum()))
    if not same or not other:
        return None
    s, o = np.array(same)[:, None], np.array(other)[None, :]
    return float((s < o).mean() + 0.5 * (s == o).mean())


def main() -> None:
    episodes = sys.argv[1:] or ["ep06", "ep08", "ep11", "ep13"]
    for past, window in ((0.0, 0.6), (0.2, 0.8), (0.5, 1.0), (0.6, 1.2)):
        print(f"window {window:g} balloon sizes wide, {past:g} past the tip")
        for episode in episodes:
            lines = episode_lines(episode, past, window)
            hue, colours = same_speaker_closer(lines, 0), same_speaker_closer(lines, 1)
            shown = [f"{v:.3f}" if v is not None else "-" for v in (hue, colours)]
            print(f"  {episode}: {len(lines)} lines with a tip; hue {shown[0]}, colours {shown[1]}")


if __name__ == "__main__":
    main()
