"""End to end: the sample page as a vertical draft (real OCR, voices, camera and libx264), decoded back with PyAV."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.cli import main
from comic_narrator.config import ASPECT_SIZE_PX, RenderConfig
from tests.conftest import SAMPLE_PAGE
from tests.video.mp4_probe import probe_mp4

pytestmark = pytest.mark.slow


def test_vertical_draft_is_a_valid_mp4_of_the_draft_size(tmp_path: Path) -> None:
    out = tmp_path / "short.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "-q", "--aspect", "vertical", "--draft"]) == 0
    width_px, height_px = ASPECT_SIZE_PX["vertical"]
    draft = RenderConfig(width_px=width_px, height_px=height_px).draft()
    assert (draft.width_px, draft.height_px) == (468, 832)
    streams = probe_mp4(out)
    assert (streams.video_codec, streams.audio_codec) == ("h264", "aac")
    assert streams.frame_sizes == {(468, 832, "yuv420p")}
    assert streams.fps == draft.fps
    assert streams.frames == round(streams.video_s * draft.fps)
    assert abs(streams.video_s - streams.audio_s) <= 1 / draft.fps + 1e-6
    assert streams.video_s > 10, "the whole page of dialogue, not a stub"
