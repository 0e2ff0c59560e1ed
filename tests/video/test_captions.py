"""Captions burned into frames of a real page, encoded with libx264, decoded, and read back by the bundled OCR;
cue times laid on frames."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np
import pytest

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import RenderConfig
from comic_narrator.timeline.subtitles import Cue
from comic_narrator.video.captions import Caption, CaptionPainter, page_captions
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.encode import encode_segment
from comic_narrator.video.frames import PagePyramid
from tests.conftest import SAMPLE_PAGE


def _decoded_frames(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


@pytest.fixture(scope="module")
def ocr() -> Iterator[RapidOcrEngine]:
    with RapidOcrEngine() as engine:
        yield engine


@pytest.mark.parametrize(
    ("text", "lang"),
    [("(Pepper)\nWe have to leave before the storm", "en"), ("嵐が来る前にここを出なきゃ", "ja")],
)
def test_burned_captions_are_read_back_from_the_decoded_video(
    tmp_path: Path, ocr: RapidOcrEngine, text: str, lang: str
) -> None:
    config = RenderConfig(width_px=832, height_px=468)
    pyramid = PagePyramid.load(SAMPLE_PAGE)
    view = (0.0, 800.0, 992.0, 558.0)  # the page's busy lower panels under the text, filling the frame
    painter = CaptionPainter((Caption(2, 4, text),), config.width_px, config.height_px)

    def frames() -> list[np.ndarray]:
        out = []
        for number in range(6):
            frame = pyramid.render(view, config.width_px, config.height_px, ycbcr_of(config.background_rgb))
            painter.paint(frame, number)
            out.append(frame)
        return out

    video = tmp_path / "burned.mp4"
    assert encode_segment(video, frames(), 24, config) == 6
    decoded = _decoded_frames(video)
    without, burned = decoded[1], decoded[3]
    band = slice(config.height_px // 2, config.height_px)
    assert np.abs(burned[: config.height_px // 2].astype(int) - without[: config.height_px // 2]).mean() < 2
    changed = np.abs(burned[band].astype(int) - without[band]).max(axis=2) > 40
    assert changed.mean() > 0.01, "the text covers part of the lower half"
    read = "".join(line.text for line in ocr.recognize(burned[band], "ja" if lang == "ja" else "en"))

    def letters(value: str) -> str:
        return re.sub(r"[\s()（）,.!、！]", "", value).lower()

    wanted = letters(text)
    matched = sum(1 for char in wanted if char in letters(read))
    assert matched >= 0.9 * len(wanted), f"OCR read {read!r} for {text!r}"
    assert not any(line.text.strip() for line in ocr.recognize(without[band][:, :100], "en"))


def test_cue_times_land_on_frames() -> None:
    captions = page_captions([Cue(250, 1250, "a"), Cue(1250, 1260, "b")], 24)
    assert captions == (Caption(6, 30, "a"), Caption(30, 31, "b"))
