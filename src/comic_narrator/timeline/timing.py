"""The timeline: an establishing shot per page and a shot per panel, each as long as its audio, in frames."""

from __future__ import annotations

import math

from comic_narrator.artifacts import BookReading, Clip, Script, ShotTiming, Timing
from comic_narrator.config import AudioConfig


def _frames_for(duration_s: float, fps: int) -> int:
    # Round up so the shot is never shorter than what is said in it; the audio is padded to the same length.
    return max(1, math.ceil(duration_s * fps - 1e-9))


def build_timing(reading: BookReading, script: Script, clips: list[Clip], config: AudioConfig, fps: int) -> Timing:
    """Lay the clips out shot by shot. Shot boundaries fall on whole frames (and whole samples at 48 kHz)."""
    clip_by_line = {clip.line_id: clip for clip in clips}
    lines_by_shot: dict[tuple[int, int], list[str]] = {}
    pause_by_line: dict[str, float] = {}
    for line in script.lines:
        lines_by_shot.setdefault((line.page, line.panel), []).append(line.id)
        pause_by_line[line.id] = line.pause_after_s
    shots: list[ShotTiming] = []
    frame_cursor = 0
    for page in reading.pages:
        shot_keys = [(page.page, -1)] + [(page.page, index) for index in range(len(page.panels))]
        for key in shot_keys:
            line_ids = [lid for lid in lines_by_shot.get(key, []) if lid in clip_by_line]
            starts: list[float] = []
            start_s = frame_cursor / fps
            if line_ids:
                offset_s = config.panel_lead_in_s
                for index, line_id in enumerate(line_ids):
                    starts.append(round(start_s + offset_s, 6))
                    offset_s += clip_by_line[line_id].duration_s
                    if index < len(line_ids) - 1:
                        offset_s += pause_by_line[line_id]
                duration_s = offset_s + config.panel_tail_s
            elif key[1] == -1:
                duration_s = config.page_hold_s
            else:
                duration_s = config.empty_panel_hold_s
            frames = _frames_for(duration_s, fps)
            shots.append(
                ShotTiming(
                    page=key[0],
                    panel=key[1],
                    start_s=start_s,
                    duration_s=frames / fps,
                    frames=frames,
                    line_ids=line_ids,
                    line_starts_s=starts,
                )
            )
            frame_cursor += frames
    return Timing(fps=fps, sample_rate_hz=config.sample_rate_hz, shots=shots, duration_s=frame_cursor / fps)
