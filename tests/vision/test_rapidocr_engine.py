"""The rapidocr engine: bundled models, no I/O before open(), clear errors, tiling of tall strips."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.errors import EngineError
from comic_narrator.vision.metrics import normalise_letters
from tests.vision.conftest import DATA, load_rgb


def test_constructor_does_no_io_and_missing_models_fail_clearly(tmp_path: Path) -> None:
    engine = RapidOcrEngine(model_dir=tmp_path / "nowhere")  # nothing is checked or loaded yet
    with pytest.raises(EngineError, match="model file"):
        engine.open()


def test_recognize_before_open_is_an_error() -> None:
    with pytest.raises(EngineError, match="open"):
        RapidOcrEngine().recognize(np.zeros((100, 100, 3), dtype=np.uint8), "en")


def test_reads_english_lettering(ocr: RapidOcrEngine) -> None:
    image = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")
    letters = normalise_letters(" ".join(line.text for line in ocr.recognize(image, "en")))
    for phrase in ("youdontteach", "comeback", "realwitchcraft", "tothewitchesofah"):
        assert phrase in letters


def test_vertical_japanese_columns_come_back_as_tall_boxes(ocr: RapidOcrEngine) -> None:
    image = load_rgb(DATA / "wikipe-tan" / "page1.ja.jpg")
    lines = ocr.recognize(image, "ja")
    tall = [ln for ln in lines if ln.bbox[3] > 2 * ln.bbox[2]]
    assert len(tall) >= 8
    assert any("係船柱" in ln.text for ln in tall)


def test_a_strip_is_tiled_and_read_to_the_bottom(ocr: RapidOcrEngine) -> None:
    # "But Pepper... Come back..." three times down a 700 px wide, 3,300 px tall strip (tiles of ~1,050 px).
    crop = np.full((295, 700, 3), 255, dtype=np.uint8)
    crop[:, :298] = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")[691:986, 41:339]
    gap = np.full((1200, 700, 3), 255, dtype=np.uint8)
    strip = np.ascontiguousarray(np.concatenate([crop, gap, crop, gap, crop], axis=0))
    lines = ocr.recognize(strip, "en")
    hits = [ln for ln in lines if "come back" in ln.text.lower()]
    assert len(hits) == 3  # each copy once: tile overlaps do not duplicate lines
    assert max(ln.bbox[1] for ln in hits) > strip.shape[0] - crop.shape[0]


def test_grey_and_tiny_images(ocr: RapidOcrEngine) -> None:
    assert ocr.recognize(np.zeros((4, 4, 3), dtype=np.uint8), "en") == []
    grey = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")[691:986, 41:339].mean(axis=2).astype(np.uint8)
    assert any("pepper" in ln.text.lower() for ln in ocr.recognize(grey, "en"))


def test_thread_count_is_fixed_when_asked_and_bounded_when_automatic(ocr: RapidOcrEngine) -> None:
    assert RapidOcrEngine(threads=3).threads_in_use == 3
    assert 1 <= ocr.threads_in_use <= 4  # decided once, when the session fixture opened the engine
