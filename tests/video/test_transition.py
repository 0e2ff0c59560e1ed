"""Page transitions on synthetic frames: a slide pushes the next page in from the side the reading direction
says, a fade mixes, a cut is no entrance at all; tests/video/test_book_end.py checks them on decoded video."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import CameraPlan, ReadingDirection, Shot
from comic_narrator.video.transition import Entrance, enter, page_entrance

W, H = 64, 32


def _flat(luma: int) -> np.ndarray:
    frame = np.full((H * 3 // 2, W), 128, dtype=np.uint8)
    frame[:H] = luma
    return frame


def _entrance(kind: str, direction: ReadingDirection) -> Entrance:
    return Entrance(kind, direction, 6, "unused.png", "sha", (0.0, 0.0, 10.0, 10.0), None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("direction", "new_side"),
    [("ltr", "right"), ("rtl", "left"), ("ttb", "bottom")],
)
def test_the_next_page_slides_in_from_the_reading_directions_side(direction: ReadingDirection, new_side: str) -> None:
    old, new = _flat(50), _flat(200)
    frames = [enter(old, new, W, H, _entrance("slide", direction), n)[:H] for n in range(7)]
    shown = [float((frame == 200).mean()) for frame in frames]
    assert 0 < shown[0] < shown[2] < shown[5] < 1 and shown[6] == 1.0, "more of the new page each frame, then all"
    middle = frames[3]
    edge = {"right": middle[:, -1], "left": middle[:, 0], "bottom": middle[-1, :]}[new_side]
    far = {"right": middle[:, 0], "left": middle[:, -1], "bottom": middle[0, :]}[new_side]
    assert (edge == 200).all() and (far == 50).all()


def test_a_fade_mixes_the_pages_and_ends_on_the_new_one() -> None:
    old, new = _flat(50), _flat(200)
    lumas = [float(enter(old, new, W, H, _entrance("fade", "ltr"), n)[:H].mean()) for n in range(7)]
    assert 50 < lumas[0] < lumas[3] < lumas[5] < 200 and lumas[6] == 200


def _plan(frames: int) -> CameraPlan:
    shot = Shot(page=0, panel=-1, start_frame=0, frames=frames, rect_from=(0, 0, 9, 9), rect_to=(1, 1, 8, 8))
    return CameraPlan(width_px=W, height_px=H, fps=24, shots=[shot])


def test_an_entrance_starts_where_the_page_before_was_left_and_a_cut_has_none(tmp_path: object) -> None:
    entrance = page_entrance("slide", "rtl", _plan(100), tmp_path, "abc", _plan(90))  # type: ignore[arg-type]
    assert entrance is not None
    assert (entrance.frames, entrance.rect, entrance.image_sha256) == (12, (1, 1, 8, 8), "abc")
    assert page_entrance("cut", "rtl", _plan(100), tmp_path, "abc", _plan(90)) is None  # type: ignore[arg-type]
    short = page_entrance("fade", "ltr", _plan(100), tmp_path, "abc", _plan(9))  # type: ignore[arg-type]
    assert short is not None and short.frames == 3, "at most a third of the new page's first shot"
