"""Overlay pictures for `comic-narrator inspect`: numbered panels and text boxes labelled with kind and text."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import PageReading, TextKind

_PANEL_RGB = (230, 40, 40)
_KIND_RGB: dict[TextKind, tuple[int, int, int]] = {
    "speech": (30, 110, 230),
    "shout": (230, 120, 0),
    "caption": (20, 150, 60),
    "sound": (170, 40, 200),
    "furniture": (130, 130, 130),
}


def draw_overlay(image_rgb: npt.NDArray[np.uint8], reading: PageReading) -> npt.NDArray[np.uint8]:
    """A copy of the page with the reading drawn on it (the input is not modified)."""
    if image_rgb.ndim == 2:
        image_rgb = np.stack([image_rgb] * 3, axis=-1)
    canvas = np.ascontiguousarray(image_rgb[:, :, :3].copy())
    height_px, width_px = canvas.shape[:2]
    unit = max(1.0, min(width_px, height_px) / 800.0)
    thick = max(2, round(2 * unit))
    font_scale = 0.45 * unit
    for number, panel in enumerate(reading.panels, start=1):
        x, y, w, h = panel.bbox
        cv2.rectangle(canvas, (x, y), (x + w - 1, y + h - 1), _PANEL_RGB, thick)
        _label(canvas, str(number), (x + thick, y + thick), _PANEL_RGB, font_scale * 2.2, thick)
    label_of = {"cover": "COVER", "non-story": "NON-STORY", "credits": "CREDITS", "blank": "BLANK"}
    if reading.page_kind in label_of:
        _label(canvas, label_of[reading.page_kind], (thick * 4, height_px // 2), _PANEL_RGB, font_scale * 3, thick)
    for number, text in enumerate(reading.texts, start=1):
        x, y, w, h = text.bbox
        colour = _KIND_RGB[text.kind]
        cv2.rectangle(canvas, (x, y), (x + w - 1, y + h - 1), colour, max(1, thick - 1))
        who = f" {text.speaker}" if text.speaker else ""
        # OpenCV's Hershey fonts draw ASCII only; Japanese text is shown by its position and number.
        words = text.text if text.text.isascii() else ""
        caption = f"{number} {text.kind}{who}: {words}"[:60]
        _label(canvas, caption, (x, y + h + 2), colour, font_scale, 1)
    return canvas


def _label(
    canvas: npt.NDArray[np.uint8],
    text: str,
    top_left: tuple[int, int],
    rgb: tuple[int, int, int],
    scale: float,
    thick: int,
) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    (tw, th), base = cv2.getTextSize(text, font, scale, thick)
    height_px, width_px = canvas.shape[:2]
    x = int(min(max(top_left[0], 0), max(width_px - tw - 2, 0)))
    y = int(min(max(top_left[1], 0), max(height_px - th - base - 2, 0)))
    cv2.rectangle(canvas, (x, y), (x + tw + 4, y + th + base + 4), (255, 255, 255), -1)
    cv2.putText(canvas, text, (x + 2, y + th + 2), font, scale, rgb, thick, cv2.LINE_AA)
