"""Video segments: the camera plan cut into runs of shots of one page, each keyed by what its pixels depend on,
and the rendering of one segment into its own MP4 in the work folder."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import av

from comic_narrator.artifacts import CameraPlan, Shot
from comic_narrator.config import RenderConfig
from comic_narrator.video.camera import focus_at, rect_at
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.decor import NO_DECOR, Decor, DecorPainter
from comic_narrator.video.encode import encode_segment
from comic_narrator.video.frames import Frame, PagePyramid, dim_outside
from comic_narrator.workdir import text_sha256

RENDERER_VERSION = 1
"""Bump when the pixels or the encoding change for the same inputs: every cached segment is then re-rendered."""

SEGMENT_DIR = "segments"


@dataclass(frozen=True)
class Segment:
    """Consecutive shots of one page. ``plan`` holds them, preceded by the page's previous shot when there is one
    (the first shot glides from where that one ended); ``first`` is the index of the first shot to render."""

    page: int
    plan: CameraPlan
    first: int
    key: str
    decor: Decor = NO_DECOR
    """What is drawn over its frames besides the page (video/decor.py)."""
    head: int = 0
    """Frames of the first shot to render that an earlier segment renders (a segment cut inside a shot)."""
    tail: int = 0
    """Frames of the last shot that a later segment renders."""

    @property
    def frames(self) -> int:
        return sum(shot.frames for shot in self.plan.shots[self.first :]) - self.head - self.tail

    @property
    def file_name(self) -> str:
        return f"{SEGMENT_DIR}/page-{self.page + 1:04d}-{self.key[:20]}.mp4"


def _shot_key(shot: Shot) -> str:
    """A shot without its position in the book: a page earlier in the book growing longer changes nothing here."""
    return json.dumps([shot.page, shot.panel, shot.frames, shot.rect_from, shot.rect_to, shot.focus])


def segment_key(
    page_sha256: str,
    plan: CameraPlan,
    first: int,
    config: RenderConfig,
    decor: Decor = NO_DECOR,
    cut: tuple[int, int] = (0, 0),
) -> str:
    """What a segment's pixels and bits depend on: the page image, its shots (and the one it glides from), the
    output size and rate, the encoder and its settings, the look, what is drawn over it (subtitles, highlights,
    pulses, the page it takes over from), and where a segment cut inside shots starts and ends in them. Not the
    worker count."""
    return text_sha256(
        "segment",
        str(RENDERER_VERSION),
        str(plan.schema_version),
        av.__version__,  # the wheel's FFmpeg and libx264: another build may write other SPS/PPS
        page_sha256,
        f"{plan.width_px}x{plan.height_px}@{plan.fps}",
        str(first),
        *(_shot_key(shot) for shot in plan.shots),
        json.dumps(
            [
                config.crf,
                config.preset,
                config.x264_params,
                config.tune,
                config.dim_outside_panel,
                config.background_rgb,
            ]
        ),
        *decor.key_parts(),
        *([f"cut {cut[0]} {cut[1]}"] if cut != (0, 0) else []),
    )


MIN_PIECE_S = 1.0
"""A segment cut inside shots holds at least this much: every segment starts on a keyframe, and below about a
second its start-up costs the encoder more than the split gains."""


def plan_segments(
    plan: CameraPlan,
    page_sha256: dict[int, str],
    config: RenderConfig,
    decor: Decor = NO_DECOR,
    pieces: int = 0,
) -> list[Segment]:
    """Cut at every page change, and inside a page at the end of a shot once the segment holds ``segment_s``
    and at least half that much of the page is left (no short tail segment of one last shot). A one-page plan's
    ``decor`` goes to the segments whose frames it overlaps, its entrance to the one that starts the page.

    With ``pieces`` > 1 a page is instead cut into that many segments of equal length (each at least
    :data:`MIN_PIECE_S`), inside shots where they fall: the book's last page, whose render nothing else overlaps,
    is then shared by every render worker."""
    if pieces > 1:
        return _even_pieces(plan, page_sha256, config, decor, pieces)
    limit_frames = max(1, round(config.segment_s * plan.fps))
    left_on_page = [0] * len(plan.shots)  # frames of the same page after each shot
    for index in range(len(plan.shots) - 2, -1, -1):
        after = plan.shots[index + 1]
        if after.page == plan.shots[index].page:
            left_on_page[index] = left_on_page[index + 1] + after.frames
    runs: list[list[int]] = []
    for index, shot in enumerate(plan.shots):
        if shot.frames <= 0:
            continue
        current = runs[-1] if runs else None
        if (
            current is None
            or plan.shots[current[-1]].page != shot.page
            or current[-1] != index - 1
            or (
                sum(plan.shots[i].frames for i in current) >= limit_frames
                and left_on_page[current[-1]] >= limit_frames / 2
            )
        ):
            runs.append([index])
        else:
            current.append(index)
    return [
        _segment(
            plan,
            run[0],
            run[-1],
            plan.shots[run[0]].start_frame,
            _shot_end(plan, run[-1]),
            page_sha256,
            config,
            decor,
            opens_page=run is runs[0],
        )
        for run in runs
    ]


def _shot_end(plan: CameraPlan, index: int) -> int:
    """The plan frame just after shot ``index``."""
    return plan.shots[index].start_frame + plan.shots[index].frames


def _segment(
    plan: CameraPlan,
    first: int,
    last: int,
    start: int,
    end: int,
    page_sha256: dict[int, str],
    config: RenderConfig,
    decor: Decor,
    opens_page: bool,
) -> Segment:
    """The segment of plan frames ``start`` to ``end``, which lie in shots ``first`` to ``last`` of one page: its
    sub-plan holds those shots after the page's shot before them (the camera glides from it), its decor what it
    shows, and where it starts and ends inside its first and last shots."""
    page = plan.shots[first].page
    previous = plan.shots[first - 1] if first > 0 else None
    context = [previous] if previous is not None and previous.page == page else []
    shots = context + list(plan.shots[first : last + 1])
    sub_plan = CameraPlan(width_px=plan.width_px, height_px=plan.height_px, fps=plan.fps, shots=shots)
    head, tail = start - plan.shots[first].start_frame, _shot_end(plan, last) - end
    shown = decor.within(start, end, opens_page=opens_page)
    key = segment_key(page_sha256[page], sub_plan, len(context), config, shown, (head, tail))
    return Segment(page=page, plan=sub_plan, first=len(context), key=key, decor=shown, head=head, tail=tail)


def _even_pieces(
    plan: CameraPlan, page_sha256: dict[int, str], config: RenderConfig, decor: Decor, pieces: int
) -> list[Segment]:
    """Each page's frames in ``pieces`` runs of (nearly) equal length, cut inside shots."""
    segments: list[Segment] = []
    runs: list[list[int]] = []  # the shown shots of each page, in plan order
    for index, shot in enumerate(plan.shots):
        if shot.frames <= 0:
            continue
        if runs and plan.shots[runs[-1][-1]].page == shot.page:
            runs[-1].append(index)
        else:
            runs.append([index])
    for indices in runs:
        page_start, page_end = plan.shots[indices[0]].start_frame, _shot_end(plan, indices[-1])
        count = max(1, min(pieces, (page_end - page_start) // max(1, round(MIN_PIECE_S * plan.fps))))
        bounds = [page_start + (page_end - page_start) * k // count for k in range(count + 1)]
        for start, end in pairwise(bounds):
            covering = [i for i in indices if plan.shots[i].start_frame < end and _shot_end(plan, i) > start]
            segments.append(
                _segment(plan, covering[0], covering[-1], start, end, page_sha256, config, decor, start == page_start)
            )
    return segments


def iter_segment_frames(segment: Segment, pyramid: PagePyramid, config: RenderConfig) -> Iterator[Frame]:
    """The segment's frames, exactly as the whole plan would give them (the camera maths only looks one shot
    back, and that shot is in the sub-plan)."""
    plan = segment.plan
    fill = ycbcr_of(config.background_rgb)
    painter = DecorPainter(segment.decor, config, plan.width_px, plan.height_px, plan.fps)
    last = len(plan.shots) - 1
    for index in range(segment.first, len(plan.shots)):
        begin = segment.head if index == segment.first else 0
        end = plan.shots[index].frames - (segment.tail if index == last else 0)
        for frame_in_shot in range(begin, end):
            rect = rect_at(plan, index, frame_in_shot)
            frame = pyramid.render(rect, plan.width_px, plan.height_px, fill)
            focus, strength = focus_at(plan, index, frame_in_shot)
            if focus is not None and config.dim_outside_panel:
                dim_outside(frame, plan.width_px, plan.height_px, rect, focus, strength)
            yield painter.paint(frame, plan.shots[index].start_frame + frame_in_shot, rect)


def render_segment(
    segment: Segment,
    pyramid: PagePyramid,
    output: Path,
    config: RenderConfig,
    on_frames: Callable[[int], None] | None = None,
    report_every: int = 15,
) -> int:
    """Render and encode one segment to ``output`` (written atomically); ``on_frames`` hears of progress."""

    def counted() -> Iterator[Frame]:
        pending = 0
        for frame in iter_segment_frames(segment, pyramid, config):
            yield frame
            pending += 1
            if on_frames is not None and pending >= report_every:
                on_frames(pending)
                pending = 0
        if on_frames is not None and pending:
            on_frames(pending)

    return encode_segment(output, counted(), segment.plan.fps, config, (segment.plan.width_px, segment.plan.height_px))
