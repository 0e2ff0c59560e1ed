"""What an MP4 holds, read back with PyAV: its codecs, durations, frame rate, and every decoded frame's size."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import av


class Mp4Streams(NamedTuple):
    video_codec: str
    audio_codec: str
    video_s: float
    audio_s: float
    fps: float
    frames: int
    """Video frames decoded."""
    frame_sizes: frozenset[tuple[int, int, str]]
    """Each decoded frame's (width, height, pixel format), once."""


def probe_mp4(path: Path) -> Mp4Streams:
    """Decodes the first video stream whole; the durations are the ones the container declares."""
    with av.open(str(path)) as container:
        video, sound = container.streams.video[0], container.streams.audio[0]
        assert video.duration is not None and video.time_base is not None
        assert sound.duration is not None and sound.time_base is not None
        sizes = set()
        frames = 0
        for frame in container.decode(video):
            sizes.add((frame.width, frame.height, frame.format.name))
            frames += 1
        return Mp4Streams(
            video_codec=video.codec_context.name,
            audio_codec=sound.codec_context.name,
            video_s=float(video.duration * video.time_base),
            audio_s=float(sound.duration * sound.time_base),
            fps=float(video.average_rate or 0),
            frames=frames,
            frame_sizes=frozenset(sizes),
        )
