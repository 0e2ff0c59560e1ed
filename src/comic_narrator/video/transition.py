"""Page transitions (``--transition slide|fade|cut``): how a page's first frames take over from the last view of
the page before it. A slide follows the reading direction: the next page pushes in from the right for western
comics (the old one leaves to the left, as a page is turned forward), from the left for manga, from below for a
webtoon strip; a fade cross-dissolves; a cut shows the new page at once.

The transition lies over the new page's first frames (its first shot goes on moving underneath), so the
timeline and the sound are the same whatever is chosen; the page before is rendered once, as it was left.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from comic_narrator.artifacts import CameraPlan, ReadingDirection
from comic_narrator.config import RenderConfig
from comic_narrator.video.camera import Rect, ease_in_out
from comic_narrator.video.color import i420_planes, ycbcr_of
from comic_narrator.video.frames import Frame, PagePyramid, dim_outside

TRANSITION_S = 0.5
"""How long a slide or a fade takes (at most a third of the new page's first shot)."""

Transition = Literal["slide", "fade", "cut"]


@dataclass(frozen=True)
class Entrance:
    """How a page's first segment takes over from the page before: ``image_path`` and ``image_sha256`` are that
    page's stored image (the path is where it is, the hash what it shows: only the hash enters keys), ``rect`` and
    ``focus`` its last view and bright panel."""

    kind: Literal["slide", "fade"]
    direction: ReadingDirection
    frames: int
    image_path: str
    image_sha256: str
    rect: Rect
    focus: Rect | None

    def key(self) -> list[object]:
        return [self.kind, self.direction, self.frames, self.image_sha256, self.rect, self.focus]


def page_entrance(
    kind: Transition,
    direction: ReadingDirection,
    previous_plan: CameraPlan,
    previous_image: Path,
    previous_sha256: str,
    plan: CameraPlan,
) -> Entrance | None:
    """The entrance of the page whose one-page camera plan is ``plan``, after the page of ``previous_plan``;
    None for a cut, or when either page has no shot."""
    if kind == "cut" or not previous_plan.shots or not plan.shots:
        return None
    frames = min(round(TRANSITION_S * plan.fps), plan.shots[0].frames // 3)
    if frames < 2:
        return None
    last = previous_plan.shots[-1]
    return Entrance(kind, direction, frames, str(previous_image), previous_sha256, last.rect_to, last.focus)


def still_of(entrance: Entrance, config: RenderConfig) -> Frame:
    """The page before as it was left: its last view, dimmed around its last panel as it was."""
    fill = ycbcr_of(config.background_rgb)
    width, height = config.width_px, config.height_px
    frame = PagePyramid.load(Path(entrance.image_path)).render(entrance.rect, width, height, fill)
    if entrance.focus is not None and config.dim_outside_panel:
        dim_outside(frame, width, height, entrance.rect, entrance.focus, 1.0)
    return frame


def _slid(old: Frame, new: Frame, width: int, height: int, t: float, direction: ReadingDirection) -> Frame:
    """The two pages side by side, the new one ``t`` (0..1) of the way in."""
    out = np.empty_like(new)
    for source_old, source_new, target in zip(
        i420_planes(old, width, height), i420_planes(new, width, height), i420_planes(out, width, height), strict=True
    ):
        if direction == "ttb":
            size = target.shape[0]
            shift = round(ease_in_out(t) * size)
            target[: size - shift] = source_old[shift:]
            target[size - shift :] = source_new[:shift]
            continue
        size = target.shape[1]
        shift = round(ease_in_out(t) * size)
        if direction == "rtl":  # manga: the next page comes in from the left
            target[:, shift:] = source_old[:, : size - shift]
            target[:, :shift] = source_new[:, size - shift :]
        else:
            target[:, : size - shift] = source_old[:, shift:]
            target[:, size - shift :] = source_new[:, :shift]
    return out


def enter(old: Frame, new: Frame, width: int, height: int, entrance: Entrance, frame_in_page: int) -> Frame:
    """Frame ``frame_in_page`` of the new page as the transition shows it (``new`` itself once it is over)."""
    if frame_in_page >= entrance.frames:
        return new
    t = (frame_in_page + 1) / (entrance.frames + 1)
    if entrance.kind == "fade":
        weight = ease_in_out(t)
        return np.asarray(cv2.addWeighted(old, 1.0 - weight, new, weight, 0.0), dtype=np.uint8)
    return _slid(old, new, width, height, t, entrance.direction)
