"""The speaking highlight: while a line is spoken, its balloon is outlined with a soft warm glow that fades in at
the clip's start and out at its end, so the viewer sees who is talking (``--no-highlight`` turns it off).

The outline is drawn around the lettering's box as the reader found it (page pixels), mapped through each frame's
view, so it follows the camera; only the box's neighbourhood of the frame is touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import Clip, PageReading, ScriptLine, Timing
from comic_narrator.video.camera import Rect
from comic_narrator.video.color import i420_planes, ycbcr_of
from comic_narrator.video.frames import Frame
from comic_narrator.video.text import mix_toward

GLOW_RGB = (255, 214, 64)
"""A warm yellow, bright on white balloons and dark panels alike."""
FADE_S = 0.25
"""The glow fades in over this long from the line's start and out over this long before its end."""
PAD = 0.18
"""Space between the lettering and the outline, as a share of the box's shorter side (balloons are bigger than
their lettering)."""
LINE_WIDTH = 0.004
"""Outline thickness as a share of the frame's short side (4 px at 1080p), blurred into a glow twice as wide."""
_TEXT_ID = re.compile(r"p(\d+)-t(\d+)$")


@dataclass(frozen=True)
class Highlight:
    """A balloon lit from ``start_frame`` up to (not including) ``end_frame``, frames from the page's start;
    ``box`` is its lettering (x, y, w, h) in page pixels."""

    start_frame: int
    end_frame: int
    box: tuple[int, int, int, int]


def _lettering_box(line: ScriptLine, page: PageReading) -> tuple[int, int, int, int] | None:
    """The text region the writer made the line from (its id ends in ``tNN``, the page's NNth text); None for a
    line the user added by hand."""
    found = _TEXT_ID.fullmatch(line.id)
    if found is None or int(found[1]) != page.page + 1 or not 0 < int(found[2]) <= len(page.texts):
        return None
    x, y, w, h = page.texts[int(found[2]) - 1].bbox
    return (int(x), int(y), int(w), int(h))


def page_highlights(
    page: PageReading, lines: Sequence[ScriptLine], clips: Iterable[Clip], timing: Timing
) -> tuple[Highlight, ...]:
    """Every voiced line of a page with a balloon, over its clip's frames (page-local timing)."""
    spoken = {line.id: line for line in lines}
    lengths = {clip.line_id: clip.duration_s for clip in clips}
    highlights = []
    for shot in timing.shots:
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            line = spoken.get(line_id)
            box = _lettering_box(line, page) if line is not None and line.kind != "caption" else None
            if box is None or lengths.get(line_id, 0.0) <= 0:
                continue
            start = round(start_s * timing.fps)
            end = max(start + 1, round((start_s + lengths[line_id]) * timing.fps))
            highlights.append(Highlight(start, end, box))
    return tuple(highlights)


class HighlightPainter:
    """Draws the highlights due at a frame into it, in place."""

    def __init__(self, highlights: tuple[Highlight, ...], width_px: int, height_px: int, fps: int) -> None:
        self.highlights = highlights
        self.width_px, self.height_px = width_px, height_px
        self.fade_frames = max(1, round(FADE_S * fps))
        self.line_px = max(2, round(min(width_px, height_px) * LINE_WIDTH))
        self.colour = ycbcr_of(GLOW_RGB)

    def strength(self, highlight: Highlight, page_frame: int) -> float:
        if not highlight.start_frame <= page_frame < highlight.end_frame:
            return 0.0
        into, left = page_frame - highlight.start_frame + 1, highlight.end_frame - page_frame
        return min(1.0, into / self.fade_frames, left / self.fade_frames)

    def paint(self, frame: Frame, page_frame: int, view: Rect) -> None:
        for highlight in self.highlights:
            strength = self.strength(highlight, page_frame)
            if strength > 0:
                self._outline(frame, highlight.box, view, strength)

    def _outline(self, frame: Frame, box: tuple[int, int, int, int], view: Rect, strength: float) -> None:
        scale = self.width_px / view[2]
        pad = PAD * min(box[2], box[3])
        x0, y0 = (box[0] - pad - view[0]) * scale, (box[1] - pad - view[1]) * scale
        x1, y1 = (box[0] + box[2] + pad - view[0]) * scale, (box[1] + box[3] + pad - view[1]) * scale
        margin = 3 * self.line_px
        # The region drawn into, on even pixels so its chroma is the region halved.
        left, top = max(0, int(x0) - margin) & ~1, max(0, int(y0) - margin) & ~1
        right = min(self.width_px, int(np.ceil(x1)) + margin + 1) & ~1
        bottom = min(self.height_px, int(np.ceil(y1)) + margin + 1) & ~1
        if right - left < 4 or bottom - top < 4:
            return
        mask = np.zeros((bottom - top, right - left), dtype=np.uint8)
        radius = max(2, round(0.2 * min(x1 - x0, y1 - y0)))
        corners = (round(x0) - left, round(y0) - top, round(x1) - left, round(y1) - top)
        _rounded_rectangle(mask, corners, radius, self.line_px)
        # Two box blurs: near enough a Gaussian for a glow, at a third of its cost (measured at 1080p).
        size = (2 * self.line_px + 1, 2 * self.line_px + 1)
        glow = cv2.blur(cv2.blur(mask, size), size)
        full = cv2.max(mask, cv2.convertScaleAbs(glow, alpha=2.0))  # the glow doubled, saturating at 255
        alpha = np.asarray(full if strength >= 1.0 else cv2.convertScaleAbs(full, alpha=strength), dtype=np.uint8)
        luma, cb, cr = i420_planes(frame, self.width_px, self.height_px)
        mix_toward(luma[top:bottom, left:right], alpha, self.colour[0])
        half = np.asarray(cv2.resize(alpha, (alpha.shape[1] // 2, alpha.shape[0] // 2)), dtype=np.uint8)
        mix_toward(cb[top // 2 : bottom // 2, left // 2 : right // 2], half, self.colour[1])
        mix_toward(cr[top // 2 : bottom // 2, left // 2 : right // 2], half, self.colour[2])


def _rounded_rectangle(
    mask: npt.NDArray[np.uint8], corners: tuple[int, int, int, int], radius: int, thickness: int
) -> None:
    """A rounded rectangle's outline drawn into ``mask`` at 255 (straight sides, quarter-circle corners)."""
    x0, y0, x1, y1 = corners
    radius = min(radius, (x1 - x0) // 2, (y1 - y0) // 2)
    for a, b in (
        ((x0 + radius, y0), (x1 - radius, y0)),
        ((x0 + radius, y1), (x1 - radius, y1)),
        ((x0, y0 + radius), (x0, y1 - radius)),
        ((x1, y0 + radius), (x1, y1 - radius)),
    ):
        cv2.line(mask, a, b, 255, thickness, cv2.LINE_AA)
    for centre, angle in (
        ((x0 + radius, y0 + radius), 180),
        ((x1 - radius, y0 + radius), 270),
        ((x1 - radius, y1 - radius), 0),
        ((x0 + radius, y1 - radius), 90),
    ):
        cv2.ellipse(mask, centre, (radius, radius), angle, 0, 90, 255, thickness, cv2.LINE_AA)
