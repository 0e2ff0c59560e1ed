"""Sound words pulse with their effects: when the sound bed plays a lettered sound word's effect, the lettering
swells for a moment and settles back, so the eye finds the word the ear hears.

The effects are placed as audio/bed.py places them: the first three sound words of a panel, in the reading's
order, at 0.05 s, 0.40 s and 0.75 s into the panel's shot; none with ``--no-sound-bed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from comic_narrator.artifacts import PageReading, Timing
from comic_narrator.video.camera import Rect
from comic_narrator.video.color import i420_planes
from comic_narrator.video.frames import Frame

EFFECT_OFFSETS_S = (0.05, 0.40, 0.75)
"""When each of a panel's first three sound words' effects starts, from the shot's start (audio/bed.py)."""
PULSE_S = 0.45
SWELL = 0.14
"""At its height the lettering is this much bigger (14 %), about its centre."""
MARGIN = 0.25
"""The region redrawn around the lettering, as a share of its size, so the swollen word is never clipped."""


@dataclass(frozen=True)
class Pulse:
    """Lettering (x, y, w, h, page pixels) swelling from ``start_frame`` to ``end_frame`` (page frames)."""

    start_frame: int
    end_frame: int
    box: tuple[int, int, int, int]


def page_pulses(page: PageReading, timing: Timing) -> tuple[Pulse, ...]:
    """A pulse for each sound word whose effect the bed plays on this page (page-local timing)."""
    pulses = []
    frames = max(2, round(PULSE_S * timing.fps))
    for shot in timing.shots:
        if shot.panel < 0:
            continue
        words = [text for text in page.texts if text.kind == "sound" and text.panel == shot.panel]
        shot_end = round(shot.start_s * timing.fps) + shot.frames
        for word, offset_s in zip(words, EFFECT_OFFSETS_S, strict=False):
            start = round((shot.start_s + offset_s) * timing.fps)
            x, y, w, h = word.bbox
            if start < shot_end:
                pulses.append(Pulse(start, min(shot_end, start + frames), (int(x), int(y), int(w), int(h))))
    return tuple(pulses)


def swell_at(pulse: Pulse, page_frame: int) -> float:
    """How much bigger the lettering is at ``page_frame``: up fast, down slowly (a sine over a quick attack)."""
    if not pulse.start_frame <= page_frame < pulse.end_frame:
        return 0.0
    t = (page_frame - pulse.start_frame + 1) / (pulse.end_frame - pulse.start_frame + 1)
    return SWELL * math.sin(math.pi * math.sqrt(t))


class PulsePainter:
    def __init__(self, pulses: tuple[Pulse, ...], width_px: int, height_px: int) -> None:
        self.pulses = pulses
        self.width_px, self.height_px = width_px, height_px

    def paint(self, frame: Frame, page_frame: int, view: Rect) -> None:
        """Swell, in place, the lettering of every pulse due at ``page_frame``."""
        for pulse in self.pulses:
            swell = swell_at(pulse, page_frame)
            if swell > 0:
                self._swell(frame, pulse.box, view, 1.0 + swell)

    def _swell(self, frame: Frame, box: tuple[int, int, int, int], view: Rect, factor: float) -> None:
        scale = self.width_px / view[2]
        margin = MARGIN * max(box[2], box[3])
        left = max(0, int((box[0] - margin - view[0]) * scale)) & ~1
        top = max(0, int((box[1] - margin - view[1]) * scale)) & ~1
        right = min(self.width_px, math.ceil((box[0] + box[2] + margin - view[0]) * scale)) & ~1
        bottom = min(self.height_px, math.ceil((box[1] + box[3] + margin - view[1]) * scale)) & ~1
        if right - left < 8 or bottom - top < 8:
            return
        # The word's centre (region coordinates) stays put; a feathered edge hides the region's border.
        cx = ((box[0] + box[2] / 2 - view[0]) * scale) - left
        cy = ((box[1] + box[3] / 2 - view[1]) * scale) - top
        height, width = bottom - top, right - left
        feather = np.minimum(
            np.minimum(np.arange(width) + 1, np.arange(width)[::-1] + 1)[None, :] / (0.15 * width),
            np.minimum(np.arange(height) + 1, np.arange(height)[::-1] + 1)[:, None] / (0.15 * height),
        )
        weight = np.clip(feather, 0.0, 1.0).astype(np.float32)
        for plane, step in zip(i420_planes(frame, self.width_px, self.height_px), (1, 2, 2), strict=True):
            region = plane[top // step : bottom // step, left // step : right // step]
            centre = (cx / step, cy / step)
            matrix = cv2.getRotationMatrix2D(centre, 0.0, factor)
            grown = cv2.warpAffine(region, matrix, (region.shape[1], region.shape[0]), borderMode=cv2.BORDER_REPLICATE)
            mask = weight if step == 1 else cv2.resize(weight, (region.shape[1], region.shape[0]))
            region[...] = cv2.blendLinear(grown, np.ascontiguousarray(region), mask, 1.0 - mask)
