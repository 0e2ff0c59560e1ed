"""Encoding and muxing with PyAV: H.264 (libx264) video + AAC audio into one MP4, written atomically."""

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
from comic_narrator.workdir import atomic_temp_path

AAC_FRAME_SAMPLES = 1024


def encode_mp4(
    output: Path,
    frames: Iterable[Frame],
    audio: npt.NDArray[np.float32],
    sample_rate_hz: int,
    config: RenderConfig,
) -> None:
    """Encode frames and the mono track; the file appears at ``output`` only once it is complete."""
    tmp = atomic_temp_path(output)
    try:
        with av.open(str(tmp), mode="w", format="mp4") as container:
            video = container.add_stream("libx264", rate=config.fps)
            video.width = config.width_px
            video.height = config.height_px
            video.pix_fmt = "yuv420p"
            video.options = {
                "crf": str(config.crf),
                "preset": config.preset,
                "x264-params": "colorprim=bt709:transfer=bt709:colormatrix=bt709:range=tv",
            }
            sound = container.add_stream("aac", rate=sample_rate_hz)
            sound.layout = "stereo"
            sound.time_base = Fraction(1, sample_rate_hz)
            for image in frames:
                frame = av.VideoFrame.from_ndarray(rgb_to_i420(image), format="yuv420p")
                container.mux(video.encode(frame))
            container.mux(video.encode(None))
            stereo = np.ascontiguousarray(np.stack([audio, audio]).astype(np.float32))
            for start in range(0, stereo.shape[1], AAC_FRAME_SAMPLES):
                chunk = np.ascontiguousarray(stereo[:, start : start + AAC_FRAME_SAMPLES])
                audio_frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="stereo")
                audio_frame.sample_rate = sample_rate_hz
                audio_frame.pts = start
                container.mux(sound.encode(audio_frame))
            container.mux(sound.encode(None))
        tmp.replace(output)
    except (av.FFmpegError, OSError) as exc:
        raise EngineError(f"encoding failed ({exc})", path=output) from exc
    finally:
        tmp.unlink(missing_ok=True)
