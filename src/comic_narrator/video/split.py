"""``--split-chapters``: one MP4 per chapter beside the book's (``OUT-01.mp4``, ``OUT-02.mp4``, ...), each of the
chapter's segments joined without re-encoding under its own slice of the book's mastered track (encoded apart,
so each file starts cleanly), with its own subtitle tracks and files and the book's metadata.

Chapters start on a page's first frame, and segments never span two pages, so every chapter is whole segments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import soundfile

from comic_narrator.errors import EngineError
from comic_narrator.timeline.chapters import ChapterMark
from comic_narrator.timeline.subtitles import SubtitleTrack, write_subtitles
from comic_narrator.video.mux import encode_aac, mux_segments
from comic_narrator.workdir import atomic_temp_path


def chapter_path(output: Path, number: int) -> Path:
    return output.with_name(f"{output.stem}-{number:02d}{output.suffix}")


def write_chapter_files(
    output: Path,
    chapters: Sequence[ChapterMark],
    segments: Sequence[tuple[Path, int]],
    fps: int,
    audio_wav: Path,
    tracks: Sequence[SubtitleTrack],
    metadata: Mapping[str, str],
) -> list[Path]:
    """Every chapter's MP4 and subtitle files; returns the MP4s. ``segments`` are the book's (file, frames) in
    order, end card included; ``audio_wav`` the book's mastered track as long as the video."""
    starts = np.cumsum([0, *(frames for _, frames in segments)])
    written = []
    with soundfile.SoundFile(str(audio_wav)) as wav:
        rate = wav.samplerate
        for number, chapter in enumerate(chapters, start=1):
            chosen = [
                segment
                for segment, start in zip(segments, starts[:-1], strict=True)
                if chapter.start_frame <= start < chapter.end_frame
            ]
            if not chosen:
                raise EngineError(f"chapter {number} ({chapter.title}) holds no whole segment", path=output)
            wav.seek(chapter.start_frame * rate // fps)
            audio = np.asarray(wav.read((chapter.end_frame - chapter.start_frame) * rate // fps, dtype="float32"))
            path = chapter_path(output, number)
            sound = atomic_temp_path(path.with_name(path.name + ".audio.m4a"))
            start_ms, end_ms = round(chapter.start_s(fps) * 1000), round(chapter.end_s(fps) * 1000)
            cut = [track.between(start_ms, end_ms) for track in tracks]
            try:
                encode_aac(sound, audio, rate)
                titled = {**metadata, "title": f"{metadata.get('title', output.stem)}: {chapter.title}"}
                mux_segments(path, chosen, fps, sound, [track for track in cut if track.cues], titled)
            finally:
                sound.unlink(missing_ok=True)
            write_subtitles(path, cut)
            written.append(path)
    return written
