"""Camera planning (pure maths): an establishing view of each page, then each panel with a Ken Burns move."""

from __future__ import annotations

from comic_narrator.artifacts import BookReading, CameraPlan, Shot, Timing
from comic_narrator.config import RenderConfig

Rect = tuple[float, float, float, float]


def fit_aspect(rect: Rect, aspect: float, pad_fraction: float) -> Rect:
    """Grow ``rect`` (x, y, w, h) by a margin, then to the output's aspect ratio around its centre."""
    x, y, w, h = rect
    w_pad, h_pad = w * (1 + 2 * pad_fraction), h * (1 + 2 * pad_fraction)
    if w_pad / h_pad < aspect:
        w_pad = h_pad * aspect
    else:
        h_pad = w_pad / aspect
    cx, cy = x + w / 2, y + h / 2
    return (cx - w_pad / 2, cy - h_pad / 2, w_pad, h_pad)


def zoom_rect(rect: Rect, factor: float, drift: tuple[float, float] = (0.0, 0.0)) -> Rect:
    """Scale ``rect`` about its centre by ``factor`` (<1 pushes in) and shift it by ``drift`` x its size."""
    x, y, w, h = rect
    cx, cy = x + w / 2 + drift[0] * w, y + h / 2 + drift[1] * h
    return (cx - w * factor / 2, cy - h * factor / 2, w * factor, h * factor)


def ease_in_out(t: float) -> float:
    """Smoothstep: zero velocity at both ends, so moves start and stop without a jolt."""
    t = min(1.0, max(0.0, t))
    return t * t * (3 - 2 * t)


def lerp_rect(a: Rect, b: Rect, t: float) -> Rect:
    return (
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
        a[3] + (b[3] - a[3]) * t,
    )


def plan_camera(reading: BookReading, timing: Timing, config: RenderConfig) -> CameraPlan:
    """One Shot per timing shot. Page shots frame the whole page; panel shots frame the panel and push in
    slowly, alternating the drift direction so consecutive panels do not all move the same way."""
    aspect = config.width_px / config.height_px
    pages = {page.page: page for page in reading.pages}
    shots: list[Shot] = []
    frame = 0
    for number, timed in enumerate(timing.shots):
        page = pages[timed.page]
        focus: Rect | None = None
        if timed.panel < 0 or timed.panel >= len(page.panels):
            view = fit_aspect((0.0, 0.0, float(page.width), float(page.height)), aspect, 0.02)
            rect_from, rect_to = zoom_rect(view, 1.0 + config.zoom_amount / 2), view
        else:
            px, py, pw, ph = page.panels[timed.panel].bbox
            focus = (float(px), float(py), float(pw), float(ph))
            view = fit_aspect(focus, aspect, 0.05)
            side = 1.0 if number % 2 else -1.0
            drift = (side * config.zoom_amount / 4, 0.0)
            rect_from, rect_to = view, zoom_rect(view, 1.0 - config.zoom_amount, drift)
        shots.append(
            Shot(
                page=timed.page,
                panel=timed.panel,
                start_frame=frame,
                frames=timed.frames,
                rect_from=rect_from,
                rect_to=rect_to,
                focus=focus if len(page.panels) > 1 else None,
            )
        )
        frame += timed.frames
    return CameraPlan(width_px=config.width_px, height_px=config.height_px, fps=timing.fps, shots=shots)


TRANSITION_S = 0.6
"""Within one page, a shot first glides from where the previous one ended (ease in/out) over this long."""


def rect_at(plan: CameraPlan, shot_index: int, frame_in_shot: int) -> Rect:
    """The view rectangle for one frame: the glide from the previous shot, then the shot's own slow move."""
    shot = plan.shots[shot_index]
    t = frame_in_shot / max(1, shot.frames - 1)
    own = lerp_rect(shot.rect_from, shot.rect_to, ease_in_out(t))
    if shot_index == 0:
        return own
    previous = plan.shots[shot_index - 1]
    if previous.page != shot.page:
        return own
    glide_frames = min(int(TRANSITION_S * plan.fps), shot.frames // 3)
    if frame_in_shot >= glide_frames or glide_frames == 0:
        return own
    return lerp_rect(previous.rect_to, own, ease_in_out(frame_in_shot / glide_frames))


def focus_at(plan: CameraPlan, shot_index: int, frame_in_shot: int) -> tuple[Rect | None, float]:
    """The bright panel for one frame and how strongly the rest is dimmed (0..1), gliding like the camera."""
    shot = plan.shots[shot_index]
    previous = plan.shots[shot_index - 1] if shot_index > 0 else None
    glide_frames = min(int(TRANSITION_S * plan.fps), shot.frames // 3)
    if previous is None or previous.page != shot.page or frame_in_shot >= glide_frames or glide_frames == 0:
        return shot.focus, 1.0 if shot.focus else 0.0
    t = ease_in_out(frame_in_shot / glide_frames)
    if shot.focus and previous.focus:
        return lerp_rect(previous.focus, shot.focus, t), 1.0
    if shot.focus:
        return shot.focus, t  # from the page view into the first panel: the dimming fades in
    return previous.focus, 1.0 - t
