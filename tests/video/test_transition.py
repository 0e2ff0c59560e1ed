"""Page transitions on synthetic frames: a slide pushes the next page in from the side the reading direction
says, a fade mixes, a cut is no entrance at all; tests/video/test_book_end.py checks them on decoded video."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import CameraPlan, ReadingDirection, Shot
from comic_narrator.config import RenderConfig
from comic_narrator.video.transition import Entrance, enter, page_entrance, still_of
from tests.conftest import SAMPLE_PAGE

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


def test_a_first_shot_too_short_for_two_frames_of_entrance_has_none(tmp_path: object) -> None:
    assert page_entrance("fade", "ltr", _plan(100), tmp_path, "abc", _plan(5)) is None  # type: ignore[arg-type]
    entrance = page_entrance("fade", "ltr", _plan(100), tmp_path, "abc", _plan(6))  # type: ignore[arg-type]
    assert entrance is not None and entrance.frames == 2


@pytest.mark.parametrize("kind", ["slide", "fade"])
def test_after_the_entrance_the_new_page_is_shown_as_it_is(kind: str) -> None:
    old, new = _flat(50), _flat(200)
    for frame_in_page in (6, 7, 30):
        assert np.array_equal(enter(old, new, W, H, _entrance(kind, "ltr"), frame_in_page), new), frame_in_page


def test_the_page_before_is_dimmed_around_its_last_panel_only_when_dimming_is_on() -> None:
    rect, panel = (0.0, 0.0, 1200.0, 675.0), (100.0, 100.0, 400.0, 300.0)
    lit = Entrance("slide", "ltr", 6, str(SAMPLE_PAGE), "sha", rect, panel)
    unfocused = Entrance("slide", "ltr", 6, str(SAMPLE_PAGE), "sha", rect, None)
    on, off = (
        RenderConfig(width_px=320, height_px=180),
        RenderConfig(width_px=320, height_px=180, dim_outside_panel=False),
    )
    plain = still_of(unfocused, on)
    assert np.array_equal(still_of(lit, off), plain), "dimming off: the view as it was"
    dimmed = still_of(lit, on)
    luma_plain, luma_dimmed = plain[:180].astype(int), dimmed[:180].astype(int)
    assert luma_dimmed.sum() < luma_plain.sum() * 0.95, "dimming on: darker outside the panel"
    assert np.array_equal(still_of(unfocused, on), plain), "no panel to keep bright: nothing dimmed"
