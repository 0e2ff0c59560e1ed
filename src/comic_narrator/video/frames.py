"""Rendering frames: a view rectangle of a page warped to the output size with sub-pixel precision."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.errors import InputError
from comic_narrator.video.camera import Rect

Frame = npt.NDArray[np.uint8]


class PagePyramid:
    """A page at full, 1/2, 1/4 ... size, so a zoomed-out view samples a pre-filtered level (no aliasing)."""

    def __init__(self, image_rgb: Frame) -> None:
        self.levels: list[Frame] = [image_rgb]
        while min(self.levels[-1].shape[:2]) > 256:
            previous = self.levels[-1]
            size = (max(1, previous.shape[1] // 2), max(1, previous.shape[0] // 2))
            self.levels.append(np.asarray(cv2.resize(previous, size, interpolation=cv2.INTER_AREA), dtype=np.uint8))

    @classmethod
    def load(cls, path: Path) -> PagePyramid:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise InputError("cannot read the stored page image", path=path)
        return cls(np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), dtype=np.uint8))

    def render(self, rect: Rect, width_px: int, height_px: int, background_rgb: tuple[int, int, int]) -> Frame:
        x, y, w, _h = rect
        scale = width_px / w  # output pixels per page pixel
        level = 0
        while level + 1 < len(self.levels) and scale * (2 ** (level + 1)) <= 1.0:
            level += 1
        factor = 2**level
        source = self.levels[level]
        s = scale * factor
        # Maps source pixel centres to output pixel centres: out = s * (src*factor - x) ... in level units.
        matrix = np.array([[s, 0.0, -x / factor * s], [0.0, s, -y / factor * s]], dtype=np.float64)
        return np.asarray(
            cv2.warpAffine(
                source,
                matrix,
                (width_px, height_px),
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=background_rgb,
            ),
            dtype=np.uint8,
        )


def dim_outside(frame: Frame, view: Rect, focus: Rect, strength: float, dim_to: float = 0.45) -> Frame:
    """Darken everything outside the focus rectangle (page pixels) so the eye stays on the current panel."""
    if strength <= 0.0:
        return frame
    height, width = frame.shape[:2]
    scale = width / view[2]
    x0 = round((focus[0] - view[0]) * scale)
    y0 = round((focus[1] - view[1]) * scale)
    x1 = round((focus[0] + focus[2] - view[0]) * scale)
    y1 = round((focus[1] + focus[3] - view[1]) * scale)
    factor = 1.0 - (1.0 - dim_to) * min(1.0, strength)
    dimmed = np.asarray(cv2.convertScaleAbs(frame, alpha=factor), dtype=np.uint8)
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
    if cx1 > cx0 and cy1 > cy0:
        dimmed[cy0:cy1, cx0:cx1] = frame[cy0:cy1, cx0:cx1]
    return dimmed
