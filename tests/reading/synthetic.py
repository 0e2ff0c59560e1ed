"""Synthetic comic pages drawn with OpenCV and Pillow: panels, coloured figures, balloons with tails, a shout,
a caption box. Unit tests of grouping, kinds, order and speakers; never a stand-in for the real corpus."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

from comic_narrator.artifacts import BBox, TextKind

FIGURE_RGB = {"red": (200, 40, 40), "green": (40, 160, 60), "blue": (40, 70, 200)}


@dataclass(frozen=True)
class Balloon:
    """One lettered element to draw: where, what it says, how, and whose it is."""

    lines: tuple[str, ...]
    centre_xy: tuple[int, int]
    kind: TextKind
    speaker: str | None
    """Key of FIGURE_RGB the tail points at (None for captions)."""


@dataclass(frozen=True)
class PanelSpec:
    bbox: BBox
    figures: tuple[tuple[str, tuple[int, int]], ...]
    """(colour key, head centre) of each figure in the panel."""
    balloons: tuple[Balloon, ...]


def draw_page(panels: list[PanelSpec], size: tuple[int, int] = (1400, 1000)) -> npt.NDArray[np.uint8]:
    page = np.full((size[0], size[1], 3), 255, dtype=np.uint8)
    font = ImageFont.load_default(size=26)
    for panel in panels:
        x, y, w, h = panel.bbox
        page[y : y + h, x : x + w] = (222, 228, 236)
        cv2.rectangle(page, (x, y), (x + w - 1, y + h - 1), (0, 0, 0), 4)
        for colour, (hx, hy) in panel.figures:
            rgb = FIGURE_RGB[colour]
            cv2.rectangle(page, (hx - 45, hy + 40), (hx + 45, min(y + h - 6, hy + 260)), rgb, -1)
            cv2.circle(page, (hx, hy), 48, rgb, -1)
            cv2.circle(page, (hx, hy), 48, (0, 0, 0), 2)
        for balloon in panel.balloons:
            draw_balloon(page, balloon, dict(panel.figures), font)
    return page


def draw_balloon(
    page: npt.NDArray[np.uint8], balloon: Balloon, heads: dict[str, tuple[int, int]], font: ImageFont.FreeTypeFont
) -> None:
    widths = [font.getbbox(line)[2] for line in balloon.lines]
    line_px = 32
    text_w, text_h = max(widths), line_px * len(balloon.lines)
    cx, cy = balloon.centre_xy
    if balloon.kind == "caption":
        x0, y0 = cx - text_w // 2 - 14, cy - text_h // 2 - 10
        cv2.rectangle(page, (x0, y0), (x0 + text_w + 28, y0 + text_h + 20), (255, 250, 205), -1)
        cv2.rectangle(page, (x0, y0), (x0 + text_w + 28, y0 + text_h + 20), (0, 0, 0), 2)
    else:
        ax, ay = int(text_w * 0.62 + 24), int(text_h * 0.62 + 22)
        tail: npt.NDArray[np.int32] | None = None
        if balloon.speaker is not None:
            hx, hy = heads[balloon.speaker]
            dx, dy = hx - cx, hy - cy
            norm = float(np.hypot(dx, dy))
            ux, uy = dx / norm, dy / norm
            # Root on the rim of the balloon, tip a little past halfway to the speaker's head.
            t = 0.8 / float(np.hypot(ux / ax, uy / ay))
            rx, ry = cx + ux * t, cy + uy * t
            tip = (cx + dx * 0.55, cy + dy * 0.55)
            tail = np.array(
                [[rx - uy * 16, ry + ux * 16], [rx + uy * 16, ry - ux * 16], list(tip)], dtype=np.float64
            ).astype(np.int32)
        if balloon.kind == "shout":
            angles = np.linspace(0, 2 * np.pi, 29)[:-1]
            radius = np.where(np.arange(len(angles)) % 2 == 0, 1.25, 0.95)
            star = np.stack([cx + ax * radius * np.cos(angles), cy + ay * radius * np.sin(angles)], axis=1)
            cv2.fillPoly(page, [star.astype(np.int32)], (255, 255, 255))
            cv2.polylines(page, [star.astype(np.int32)], True, (0, 0, 0), 2)
        else:
            cv2.ellipse(page, (cx, cy), (ax, ay), 0, 0, 360, (255, 255, 255), -1)
            cv2.ellipse(page, (cx, cy), (ax, ay), 0, 0, 360, (0, 0, 0), 2)
        if tail is not None:
            # The tail's inside joins the balloon's: no outline across its root.
            cv2.fillPoly(page, [tail], (255, 255, 255))
            for corner in (tail[0], tail[1]):
                cv2.line(page, (int(corner[0]), int(corner[1])), (int(tail[2][0]), int(tail[2][1])), (0, 0, 0), 2)
    image = Image.fromarray(page)
    draw = ImageDraw.Draw(image)
    for i, (line, width) in enumerate(zip(balloon.lines, widths, strict=True)):
        # Narration is set flush left; balloon lettering is centred.
        left = cx - text_w // 2 if balloon.kind == "caption" else cx - width // 2
        draw.text((left, cy - text_h // 2 + i * line_px), line, fill=(0, 0, 0), font=font)
    page[:] = np.asarray(image)
