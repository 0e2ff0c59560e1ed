"""SRT subtitles: one cue per spoken line, timed from the timeline."""

from __future__ import annotations

from comic_narrator.artifacts import Clip, Script, Timing


def _stamp(seconds: float) -> str:
    total_ms = max(0, round(seconds * 1000))
    hours, rest = divmod(total_ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def build_srt(script: Script, clips: list[Clip], timing: Timing) -> str:
    text_by_line = {line.id: line.text for line in script.lines}
    clip_by_line = {clip.line_id: clip for clip in clips}
    cues: list[str] = []
    for shot in timing.shots:
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            clip = clip_by_line[line_id]
            if clip.duration_s <= 0:
                continue
            end_s = start_s + clip.duration_s
            cues.append(f"{len(cues) + 1}\n{_stamp(start_s)} --> {_stamp(end_s)}\n{text_by_line[line_id]}\n")
    return "\n".join(cues)
