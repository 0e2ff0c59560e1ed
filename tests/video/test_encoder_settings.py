"""What the encoder is told reaches the stream: libx264 writes its settings into the file it makes."""

from __future__ import annotations

import re
from pathlib import Path

import av
import numpy as np
import pytest

from comic_narrator.config import RenderConfig
from comic_narrator.errors import EngineError
from comic_narrator.video.color import rgb_to_i420
from comic_narrator.video.encode import encode_segment


def _x264_settings(path: Path) -> dict[str, str]:
    found = re.search(rb"options: ([ -~]+)", path.read_bytes())
    assert found, "no x264 settings in the stream"
    return dict(item.split("=", 1) for item in found.group(1).decode().split() if "=" in item)


def test_the_animation_tune_is_the_default_and_can_be_turned_off(tmp_path: Path) -> None:
    """'animation' lowers psychovisual rate-distortion to 0.4 and raises the deblocking offsets to 1:1 (flat
    colours and hard lines); an empty tune leaves x264's own 1.0 and 0:0."""
    frames = [rgb_to_i420(np.full((64, 64, 3), 8 * i, np.uint8)) for i in range(10)]
    settings = {}
    for name, tune in (("default", RenderConfig().tune), ("none", "")):
        config = RenderConfig(width_px=64, height_px=64, preset="ultrafast", tune=tune)
        path = tmp_path / f"{name}.mp4"
        assert encode_segment(path, frames, config.fps, config) == len(frames)
        settings[name] = _x264_settings(path)
    assert settings["default"]["psy_rd"].startswith("0.40") and settings["default"]["deblock"].endswith("1:1")
    assert settings["none"]["psy_rd"].startswith("1.00") and settings["none"]["deblock"].endswith("0:0")


def test_frames_are_encoded_at_the_size_given_and_a_frame_of_another_size_is_refused(tmp_path: Path) -> None:
    """A camera plan made at another size than the render config encodes at the plan's size; a frame that is
    not I420 at the size the stream was opened with is an error naming the file, not read past its end."""
    config = RenderConfig(width_px=1280, height_px=720, preset="ultrafast")
    small = [rgb_to_i420(np.full((36, 64, 3), 40 * i, np.uint8)) for i in range(3)]
    path = tmp_path / "plan-size.mp4"
    assert encode_segment(path, small, config.fps, config, (64, 36)) == 3
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (64, 36)
    with pytest.raises(EngineError, match=r"config-size\.mp4"):
        encode_segment(tmp_path / "config-size.mp4", small, config.fps, config)
    assert not (tmp_path / "config-size.mp4").exists(), "no half-written segment is left"
