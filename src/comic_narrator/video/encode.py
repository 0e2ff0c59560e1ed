"""H.264 encoding with PyAV: the one set of libx264 settings every segment shares, and writing one segment file.

Segments are joined without re-encoding (video/mux.py), which needs every segment to carry the same SPS/PPS: the
settings below are the only ones used, and each segment is its own encode, so it starts on an IDR frame and no
frame refers across a join (closed GOPs).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt

from comic_narrator.config import RenderConfig
from comic_narrator.errors import EngineError
from comic_narrator.video.color import rgb_to_i420
from comic_narrator.video.frames import Frame
from comic_narrator.video.mux import atomic_mp4, encode_aac, mux_segments
from comic_narrator.workdir import atomic_temp_path

COLOUR_PARAMS = "colorprim=bt709:transfer=bt709:colormatrix=bt709:range=tv"
"""BT.709 limited range, tagged in the stream, as video/color.py converts."""


def x264_options(config: RenderConfig) -> dict[str, object]:
    """libx264 options. One thread per encoder: segments are encoded in parallel processes instead, which also
    spreads the frame warping; x264's own frame threads would only share the encoding."""
    params = COLOUR_PARAMS + (f":{config.x264_params}" if config.x264_params else "")
    options: dict[str, object] = {
        "crf": str(config.crf),
        "preset": config.preset,
        "x264-params": params,
        "threads": "1",
    }
    if config.tune:
        options["tune"] = config.tune
    return options


def encode_segment(
    path: Path, frames: Iterable[Frame], fps: int, config: RenderConfig, size: tuple[int, int] | None = None
) -> int:
    """Encode I420 frames into a video-only MP4 at ``path`` (atomically); returns how many frames it holds.

    ``size`` is the frames' width and height (a camera plan's, which a resumed render may have made at another
    size than ``config`` says); the config's when not given. A frame of another size is an error, never read past
    its end."""
    width, height = size if size is not None else (config.width_px, config.height_px)
    count = 0
    with atomic_mp4(path, "encoding") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width = width
        stream.height = height
        stream.pix_fmt = "yuv420p"
        stream.options = x264_options(config)
        time_base = Fraction(1, fps)
        for frame in frames:
            if frame.shape != (height * 3 // 2, width):
                raise EngineError(f"encoding {path.name}: a frame of {frame.shape} is not I420 at {width}x{height}")
            # Zero-copy: libx264 copies the picture into its own buffers while encode() runs.
            video_frame = av.VideoFrame.from_numpy_buffer(frame, format="yuv420p", width=width)
            video_frame.pts = count
            video_frame.time_base = time_base
            container.mux(stream.encode(video_frame))
            count += 1
        container.mux(stream.encode(None))
    return count


def encode_mp4(
    output: Path,
    frames: Iterable[npt.NDArray[np.uint8]],
    audio: npt.NDArray[np.float32],
    sample_rate_hz: int,
    config: RenderConfig,
) -> None:
    """RGB frames and a mono track straight to one MP4 (one segment, then the same join the render uses)."""
    segment = atomic_temp_path(output.with_name(output.name + ".video.mp4"))
    sound = atomic_temp_path(output.with_name(output.name + ".audio.m4a"))
    try:
        count = encode_segment(segment, (rgb_to_i420(image) for image in frames), config.fps, config)
        encode_aac(sound, audio, sample_rate_hz)
        mux_segments(output, [(segment, count)], config.fps, sound)
    finally:
        segment.unlink(missing_ok=True)
        sound.unlink(missing_ok=True)
