"""Camera planning (pure maths): an establishing view of each page, then each panel with a Ken Burns move."""

from __future__ import annotations

from comic_narrator.artifacts import BookReading, CameraPlan, PageReading, ReadingDirection, Shot, Timing
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


PAN_RATIO = 2.0
"""A panel whose aspect (width / height) is more than this many times the frame's is panned across: fitted whole,
it would fill under half the frame's height (in a 9:16 frame, any panel wider than 1.125:1; at 16:9, beyond 3.56:1)."""

PAN_SPAN = 2.5
"""A pan's view is at least 1 / PAN_SPAN of the panel's width: a very wide panel is crossed in 2.5 views, not ten."""

PAN_MIN_VIEW_SHORT_SIDE_PX = 360.0
"""A pan never comes closer than this many page pixels across the frame's short side (3x magnification at 1080
wide or tall), so a low-resolution page is not blown up into blur."""

PAN_MIN_TRAVEL = 0.2
"""A pan whose view would cover more than 1 - this of the panel's width has too little to move across: fit."""

PAN_MIN_S = 3.0
"""A shot shorter than this fits its panel instead of panning (a pan needs time to be read)."""

PAN_WHOLE_S = 1.5
"""A panned panel is first held whole this long (the glide onto it included), then the pan starts."""

PANEL_PAD = 0.05
"""Margin around a panel in its view, as a fraction of its size on each side."""


def pan_views(panel: Rect, aspect: float, direction: ReadingDirection) -> tuple[Rect, Rect] | None:
    """The views a pan across ``panel`` starts and ends on, the reading direction's start side first (right to
    left for ``rtl``, left to right otherwise), each showing the panel's full height; None when the panel should
    be fitted whole instead (it is not much wider than the frame, or too little of it lies outside one view)."""
    x, y, w, h = panel
    w_pad, h_pad = w * (1 + 2 * PANEL_PAD), h * (1 + 2 * PANEL_PAD)
    if h_pad <= 0 or w_pad / h_pad <= aspect * PAN_RATIO:
        return None
    view_w = max(h_pad * aspect, w_pad / PAN_SPAN, PAN_MIN_VIEW_SHORT_SIDE_PX * max(1.0, aspect))
    if view_w > w_pad * (1 - PAN_MIN_TRAVEL):
        return None
    view_h = view_w / aspect
    top = y + h / 2 - view_h / 2
    left = (x + w / 2 - w_pad / 2, top, view_w, view_h)
    right = (x + w / 2 + w_pad / 2 - view_w, top, view_w, view_h)
    return (right, left) if direction == "rtl" else (left, right)


Move = tuple[int, Rect, Rect]
"""Frames, and the view a Shot moves from and to."""


def favour_drift(view: Rect, figure: tuple[float, float], zoom_amount: float) -> tuple[float, float]:
    """The drift (a fraction of the view's size) that moves a push-in towards the speaker's figure: all the way to
    it when the push-in allows, never further than keeps the pushed-in view inside the first one, so the panel's
    balloons stay where they were framed and the camera never closes in on a balloon."""
    x, y, w, h = view
    limit = zoom_amount / 2
    dx = (figure[0] - (x + w / 2)) / w if w > 0 else 0.0
    dy = (figure[1] - (y + h / 2)) / h if h > 0 else 0.0
    return (max(-limit, min(limit, dx)), max(-limit, min(limit, dy)))


def _panel_moves(
    focus: Rect,
    frames: int,
    fps: int,
    number: int,
    direction: ReadingDirection,
    config: RenderConfig,
    figure: tuple[float, float] | None = None,
) -> list[Move]:
    """A panel's shot: fitted with a slow push-in, towards the speaker's figure where the reader placed one, else
    with a small alternating sideways drift so consecutive panels do not all move the same way; or, for a panel
    much wider than the frame, held whole and then panned across."""
    aspect = config.width_px / config.height_px
    view = fit_aspect(focus, aspect, PANEL_PAD)
    pan = pan_views(focus, aspect, direction) if frames >= PAN_MIN_S * fps else None
    if pan is None:
        if figure is not None:
            drift = favour_drift(view, figure, config.zoom_amount)
        else:
            side = 1.0 if number % 2 else -1.0
            drift = (side * config.zoom_amount / 4, 0.0)
        return [(frames, view, zoom_rect(view, 1.0 - config.zoom_amount, drift))]
    # Half the push-in stays inside the 5 % margin, so the panel is whole throughout the held part.
    whole = min(round(PAN_WHOLE_S * fps), frames // 3)
    return [(whole, view, zoom_rect(view, 1.0 - config.zoom_amount / 2)), (frames - whole, pan[0], pan[1])]


def speaker_figure(page: PageReading, panel: int) -> tuple[float, float] | None:
    """Where the first speaker of a panel probably stands (the reader's point past the balloon's tail), when it
    lies inside the panel; None when the reader placed nobody there."""
    px, py, pw, ph = page.panels[panel].bbox
    for text in page.texts:
        if text.panel == panel and text.kind in ("speech", "shout") and text.speaker_xy is not None:
            fx, fy = text.speaker_xy
            if px <= fx <= px + pw and py <= fy <= py + ph:
                return (fx, fy)
    return None


def plan_camera(reading: BookReading, timing: Timing, config: RenderConfig) -> CameraPlan:
    """The camera over the timeline: one Shot per timing shot, two for a panel panned across (held whole, then
    the pan, which glides in from the whole view like any shot). Page shots frame the whole page and pull out a
    little; every panel is seen whole at some moment of its shot, whatever the frame's aspect."""
    aspect = config.width_px / config.height_px
    pages = {page.page: page for page in reading.pages}
    shots: list[Shot] = []
    frame = 0
    for number, timed in enumerate(timing.shots):
        page = pages[timed.page]
        focus: Rect | None = None
        if timed.panel < 0 or timed.panel >= len(page.panels):
            view = fit_aspect((0.0, 0.0, float(page.width), float(page.height)), aspect, 0.02)
            moves: list[Move] = [(timed.frames, zoom_rect(view, 1.0 + config.zoom_amount / 2), view)]
        else:
            px, py, pw, ph = page.panels[timed.panel].bbox
            focus = (float(px), float(py), float(pw), float(ph))
            figure = speaker_figure(page, timed.panel)
            moves = _panel_moves(focus, timed.frames, timing.fps, number, page.reading_direction, config, figure)
        for frames, rect_from, rect_to in moves:
            shots.append(
                Shot(
                    page=timed.page,
                    panel=timed.panel,
                    start_frame=frame,
                    frames=frames,
                    rect_from=rect_from,
                    rect_to=rect_to,
                    focus=focus if len(page.panels) > 1 else None,
                )
            )
            frame += frames
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
