"""The timeline's rules on a small hand-made book: a shot per page and per panel in order, each as long as what is
said in it (lead-in, clips, pauses between lines, tail) rounded up to whole frames, the holds of shots with
nothing said, and lines without a clip left out. tests/e2e checks the timing of real runs against their audio."""

from __future__ import annotations

import math

import pytest

from comic_narrator.artifacts import BookReading, Clip, PageReading, Panel, Script, ScriptLine
from comic_narrator.config import AudioConfig
from comic_narrator.timeline.timing import build_timing

FPS = 24
CONFIG = AudioConfig(page_hold_s=1.5, empty_panel_hold_s=1.2, panel_lead_in_s=0.25, panel_tail_s=0.35)


def _page(number: int, panels: int) -> PageReading:
    return PageReading(
        page=number,
        width=100,
        height=100,
        reading_direction="ltr",
        panels=[Panel(bbox=(0, 10 * i, 100, 10)) for i in range(panels)],
        texts=[],
    )


def _line(line_id: str, page: int, panel: int, pause_after_s: float = 0.35) -> ScriptLine:
    return ScriptLine(
        id=line_id, page=page, panel=panel, speaker="narrator", kind="caption", text="x", pause_after_s=pause_after_s
    )


def _clip(line_id: str, duration_s: float) -> Clip:
    return Clip(
        line_id=line_id,
        audio_file=f"{line_id}.wav",
        duration_s=duration_s,
        sample_rate_hz=48_000,
        voice="v",
        cache_key=line_id,
    )


def _frames(seconds: float) -> int:
    return math.ceil(round(seconds * FPS, 9))


def test_shots_come_page_by_page_each_as_long_as_its_lines_in_whole_frames() -> None:
    reading = BookReading(source="t", lang="en", pages=[_page(0, 2), _page(1, 1)])
    lines = [
        _line("a", 0, 0, pause_after_s=0.5),  # two lines in one panel: the pause between them counts
        _line("b", 0, 0, pause_after_s=2.0),  # the last line's pause does not: the panel's tail replaces it
        _line("c", 1, -1),  # said over page 1's establishing shot
    ]
    clips = [_clip("a", 1.01), _clip("b", 2.0), _clip("c", 0.6)]
    timing = build_timing(reading, Script(lang="en", lines=lines), clips, CONFIG, FPS)

    assert [(s.page, s.panel) for s in timing.shots] == [(0, -1), (0, 0), (0, 1), (1, -1), (1, 0)]
    hold, said, empty, over_page, last_empty = timing.shots
    assert hold.frames == _frames(1.5) and hold.line_ids == []
    assert said.line_ids == ["a", "b"]
    assert said.frames == _frames(0.25 + 1.01 + 0.5 + 2.0 + 0.35)  # 98.64 frames: 99, never cut short
    assert said.frames / FPS >= 0.25 + 1.01 + 0.5 + 2.0 + 0.35
    assert said.line_starts_s == pytest.approx([hold.duration_s + 0.25, hold.duration_s + 0.25 + 1.01 + 0.5])
    assert empty.frames == _frames(1.2) and empty.line_ids == []
    assert over_page.line_ids == ["c"] and over_page.frames == _frames(0.25 + 0.6 + 0.35)
    assert last_empty.frames == _frames(1.2)
    # Shots follow one another on whole frames, and the timeline is their sum.
    cursor = 0
    for shot in timing.shots:
        assert shot.start_s == pytest.approx(cursor / FPS) and shot.duration_s == pytest.approx(shot.frames / FPS)
        cursor += shot.frames
    assert timing.duration_s == pytest.approx(cursor / FPS)
    assert (timing.fps, timing.sample_rate_hz) == (FPS, CONFIG.sample_rate_hz)


def test_a_line_without_a_clip_is_left_out_and_its_shot_holds() -> None:
    reading = BookReading(source="t", lang="en", pages=[_page(0, 1)])
    lines = [_line("a", 0, 0), _line("b", 0, -1)]
    timing = build_timing(reading, Script(lang="en", lines=lines), [_clip("a", 0.4)], CONFIG, FPS)
    page_shot, panel_shot = timing.shots
    assert page_shot.line_ids == [] and page_shot.frames == _frames(CONFIG.page_hold_s)
    assert panel_shot.line_ids == ["a"] and panel_shot.frames == _frames(0.25 + 0.4 + 0.35)


def test_a_shot_is_at_least_one_frame_and_exact_seconds_are_not_rounded_up() -> None:
    reading = BookReading(source="t", lang="en", pages=[_page(0, 1)])
    quick = AudioConfig(page_hold_s=0.0, empty_panel_hold_s=1.0)
    timing = build_timing(reading, Script(lang="en", lines=[]), [], quick, FPS)
    assert [s.frames for s in timing.shots] == [1, FPS]  # 1.0 s is 24 frames, not 25
