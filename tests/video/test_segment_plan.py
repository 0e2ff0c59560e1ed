"""Where the camera plan is cut into segments, shot by shot, and that each segment's frames are the whole plan's:
the rules of plan_segments on a plan of known shot lengths (tests/video/test_segments.py renders and decodes)."""

from __future__ import annotations

import itertools
from pathlib import Path

import av

from comic_narrator.artifacts import BookReading, CameraPlan, PageReading, Panel, ShotTiming, Timing
from comic_narrator.config import RenderConfig
from comic_narrator.video.camera import focus_at, plan_camera, rect_at
from comic_narrator.video.frames import PagePyramid
from comic_narrator.video.segments import Segment, plan_segments, render_segment
from tests.conftest import SAMPLE_PAGE

FPS = 24
CONFIG = RenderConfig(width_px=384, height_px=216, fps=FPS, segment_s=2.0)  # segments of 48 frames
SHAS = {0: "a" * 64, 1: "b" * 64}


def _plan(shot_frames: list[list[int]]) -> CameraPlan:
    """Per page, the establishing shot's frames then each panel's."""
    pages, lengths = [], []
    for number, row in enumerate(shot_frames):
        panels = [Panel(bbox=(40 + 100 * i, 40 + 200 * i, 500, 300)) for i in range(len(row) - 1)]
        pages.append(
            PageReading(page=number, width=1000, height=1400, reading_direction="ltr", panels=panels, texts=[])
        )
        lengths += [(number, panel - 1, frames) for panel, frames in enumerate(row)]
    starts = [0, *itertools.accumulate(frames for _, _, frames in lengths)]
    shots = [
        ShotTiming(page=p, panel=k, start_s=s / FPS, duration_s=n / FPS, frames=n, line_ids=[], line_starts_s=[])
        for (p, k, n), s in zip(lengths, starts, strict=False)
    ]
    timing = Timing(fps=FPS, sample_rate_hz=48_000, shots=shots, duration_s=starts[-1] / FPS)
    return plan_camera(BookReading(source="t", lang="en", pages=pages), timing, CONFIG)


def _runs(segments: list[Segment]) -> list[tuple[int, list[int]]]:
    """Each segment's page and the frames of the shots it renders."""
    return [(s.page, [shot.frames for shot in s.plan.shots[s.first :]]) for s in segments]


def test_cut_at_each_page_and_inside_a_page_once_a_segment_is_long_with_enough_left() -> None:
    plan = _plan([[30, 40, 20, 45], [30, 25, 50]])
    segments = plan_segments(plan, SHAS, CONFIG)
    # 30+40 = 70 frames reach 48 with 65 of the page left: cut. 20+45 end the page. Page 1: 30+25 = 55, 50 left.
    assert _runs(segments) == [(0, [30, 40]), (0, [20, 45]), (1, [30, 25]), (1, [50])]
    # A segment inside a page carries the shot before it (its first shot glides from there); a page's first not.
    assert [s.first for s in segments] == [0, 1, 0, 1]
    assert segments[1].plan.shots[0] == plan.shots[1] and segments[3].plan.shots[0] == plan.shots[5]


def test_no_short_last_segment_on_a_page() -> None:
    """A segment that reached its length is not cut when under half a segment of its page is left after it."""
    assert _runs(plan_segments(_plan([[50, 20]]), SHAS, CONFIG)) == [(0, [50, 20])]
    assert _runs(plan_segments(_plan([[50, 24]]), SHAS, CONFIG)) == [(0, [50]), (0, [24])]
    assert _runs(plan_segments(_plan([[47, 30]]), SHAS, CONFIG)) == [(0, [47, 30])], "47 frames: not long yet"


def test_each_segment_s_frames_are_the_whole_plan_s_frames() -> None:
    """The camera and the dimming of every frame, from each segment's sub-plan, equal those of the whole plan, also
    where a shot of no frames sits in a page (the next segment then starts after it and glides from it)."""
    plan = _plan([[30, 40, 20, 45], [30, 25, 50]])
    empty = plan.shots[2].model_copy(update={"frames": 0})
    later = [s.model_copy(update={"start_frame": s.start_frame - 20}) for s in plan.shots[3:]]
    with_empty = plan.model_copy(update={"shots": [*plan.shots[:2], empty, *later]})
    for whole in (plan, with_empty):
        segments = plan_segments(whole, SHAS, CONFIG)
        expected = [(i, f) for i, shot in enumerate(whole.shots) for f in range(shot.frames)]
        got = []
        for segment in segments:
            offset = whole.shots.index(segment.plan.shots[segment.first]) - segment.first
            for index in range(segment.first, len(segment.plan.shots)):
                for f in range(segment.plan.shots[index].frames):
                    assert rect_at(segment.plan, index, f) == rect_at(whole, index + offset, f)
                    assert focus_at(segment.plan, index, f) == focus_at(whole, index + offset, f)
                    got.append((index + offset, f))
        assert got == expected
        assert sum(s.frames for s in segments) == sum(shot.frames for shot in whole.shots)


def test_rendering_a_segment_reports_its_frames_in_steps_and_writes_them_all(tmp_path: Path) -> None:
    """On the bundled sample page, a small segment: progress comes every ``report_every`` frames and once for the
    rest, adding up to the frames the MP4 holds."""
    small = RenderConfig(width_px=128, height_px=72, fps=FPS, segment_s=2.0, preset="ultrafast")
    plan = _plan([[30, 40, 20, 45], [30, 25, 50]]).model_copy(update={"width_px": 128, "height_px": 72})
    segment = plan_segments(plan, SHAS, small)[1]  # 20 + 45 frames
    heard: list[int] = []
    out = tmp_path / "segment.mp4"
    written = render_segment(segment, PagePyramid.load(SAMPLE_PAGE), out, small, heard.append, report_every=15)
    assert heard == [15, 15, 15, 15, 5]
    with av.open(str(out)) as container:
        decoded = sum(1 for _ in container.decode(video=0))
    assert written == segment.frames == 65 == decoded


def test_even_pieces_cut_inside_shots_and_render_the_same_frames() -> None:
    """The book's last page in ``pieces`` segments of equal length (every render worker takes one): the cuts fall
    inside shots, and the pieces' frames, pixel for pixel on the real sample page with a highlight drawn over
    it, are those of the page cut at shot ends, in order."""
    from comic_narrator.video.decor import Decor
    from comic_narrator.video.highlight import Highlight
    from comic_narrator.video.segments import MIN_PIECE_S, iter_segment_frames

    small = RenderConfig(width_px=96, height_px=56, fps=FPS, segment_s=2.0)
    plan = _plan([[30, 40, 20, 45]]).model_copy(update={"width_px": 96, "height_px": 56})
    decor = Decor(highlights=(Highlight(start_frame=50, end_frame=100, box=(100, 100, 300, 200)),))
    whole = plan_segments(plan, SHAS, small, decor)
    pieces = plan_segments(plan, SHAS, small, decor, pieces=4)
    assert [p.frames for p in pieces] == [33, 34, 34, 34]
    assert sum(p.frames for p in pieces) == sum(s.frames for s in whole) == 135
    assert any(p.head > 0 for p in pieces) and any(p.tail > 0 for p in pieces), "cut inside shots"
    assert len({p.key for p in pieces} | {s.key for s in whole}) == len(pieces) + len(whole)
    assert [len(p.decor.highlights) for p in pieces] == [0, 1, 1, 0], "each piece carries what it shows"
    # Pieces of one long shot share their sub-plan: where they start and end in it tells their keys apart.
    one_shot = plan_segments(_plan([[10, 120]]), SHAS, small, pieces=4)
    assert len({tuple(s.plan.shots) for s in one_shot[1:]}) == 1
    assert len({s.key for s in one_shot}) == 4
    pyramid = PagePyramid.load(SAMPLE_PAGE)

    def frames(segments: list[Segment]) -> list[bytes]:
        return [f.tobytes() for s in segments for f in iter_segment_frames(s, pyramid, small)]

    assert frames(pieces) == frames(whole)
    # No piece under a second: 135 frames make at most 5 pieces however many workers there are.
    many = plan_segments(plan, SHAS, small, pieces=16)
    assert len(many) == 135 // round(MIN_PIECE_S * FPS) == 5
    assert min(p.frames for p in many) >= MIN_PIECE_S * FPS
    assert plan_segments(plan, SHAS, small, pieces=1) == plan_segments(plan, SHAS, small)
