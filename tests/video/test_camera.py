"""Camera planning and frame rendering: framing, moves, glides, dimming, and sub-pixel sampling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from comic_narrator.artifacts import BookReading, PageReading, Panel, ShotTiming, Timing
from comic_narrator.config import RenderConfig
from comic_narrator.video.camera import fit_aspect, focus_at, plan_camera, rect_at
from comic_narrator.video.color import rgb_to_i420, ycbcr_of
from comic_narrator.video.frames import PagePyramid, dim_outside


def _reading() -> BookReading:
    panels = [Panel(bbox=(20, 20, 460, 300)), Panel(bbox=(20, 340, 220, 400)), Panel(bbox=(260, 340, 220, 400))]
    page = PageReading(page=0, width=500, height=760, reading_direction="ltr", panels=panels, texts=[])
    return BookReading(source="t", lang="en", pages=[page])


def _timing(fps: int = 30) -> Timing:
    shots, start = [], 0
    for panel, frames in [(-1, 45), (0, 60), (1, 60), (2, 90)]:
        shots.append(
            ShotTiming(
                page=0,
                panel=panel,
                start_s=start / fps,
                duration_s=frames / fps,
                frames=frames,
                line_ids=[],
                line_starts_s=[],
            )
        )
        start += frames
    return Timing(fps=fps, sample_rate_hz=48_000, shots=shots, duration_s=start / fps)


def test_fit_aspect_contains_the_rect_at_16_9() -> None:
    x, y, w, h = fit_aspect((100, 50, 200, 400), 16 / 9, 0.05)
    assert w / h == pytest.approx(16 / 9)
    assert x <= 100 and y <= 50 and x + w >= 300 and y + h >= 450


def test_each_shot_frames_its_panel_and_pushes_in() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    assert [s.frames for s in plan.shots] == [45, 60, 60, 90]
    assert [s.start_frame for s in plan.shots] == [0, 45, 105, 165]
    for shot, panel in zip(plan.shots[1:], _reading().pages[0].panels, strict=True):
        px, py, pw, ph = panel.bbox
        x, y, w, h = shot.rect_from
        assert x <= px and y <= py and x + w >= px + pw and y + h >= py + ph
        assert shot.rect_to[2] < shot.rect_from[2], "a panel shot pushes in"
        assert shot.focus == (px, py, pw, ph)
    assert plan.shots[0].focus is None


def test_moves_are_continuous_within_a_page() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    rects = [rect_at(plan, i, f) for i, shot in enumerate(plan.shots) for f in range(shot.frames)]
    steps = [max(abs(a[k] - b[k]) for k in range(4)) / a[2] for a, b in itertools.pairwise(rects)]
    assert max(steps) < 0.1, "no jump cuts inside a page: each frame moves under a tenth of the view"
    assert rect_at(plan, 2, 0) == pytest.approx(plan.shots[1].rect_to, abs=1e-6)


def test_dimming_fades_in_then_follows_the_panel() -> None:
    plan = plan_camera(_reading(), _timing(), RenderConfig())
    assert focus_at(plan, 0, 10) == (None, 0.0)
    _, strength_start = focus_at(plan, 1, 0)
    _, strength_late = focus_at(plan, 1, 40)
    assert strength_start == 0.0 and strength_late == 1.0


def test_render_is_sub_pixel_and_dims_outside_the_focus() -> None:
    page = np.zeros((200, 200, 3), dtype=np.uint8)
    page[:, 100:] = 255
    pyramid = PagePyramid(page)
    fill = ycbcr_of((0, 0, 0))
    a = pyramid.render((0.0, 0.0, 200.0, 112.5), 320, 180, fill)[:180].astype(int)
    b = pyramid.render((0.5, 0.0, 200.0, 112.5), 320, 180, fill)[:180].astype(int)
    assert 0 < np.abs(a - b).sum() < 320 * 180 * 255 * 0.05, "half a page pixel moves the edge, a little"
    frame = rgb_to_i420(np.full((180, 320, 3), 200, dtype=np.uint8))
    dim_outside(frame, 320, 180, (0.0, 0.0, 320.0, 180.0), (100.0, 50.0, 100.0, 50.0), 1.0)
    # RGB 200 is Y 188; dimmed to 45 % it is RGB 90, Y 93 (Y - 16 scales with R, G and B).
    assert frame[75, 150] == 188 and frame[10, 10] == 93
    assert frame[180 + 5, 10] == 128, "grey stays grey when dimmed"
