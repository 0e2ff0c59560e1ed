"""The rapidocr engine's own rules on its real models: what open() needs and does once, what each call sets the
detector to, and the inputs the recogniser is never handed (nothing, an empty image, a blank page, a grey crop)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from comic_narrator.backends.rapidocr_engine import (
    _CLS_MODEL,
    _DET_MODEL,
    _REC_MODEL,
    RapidOcrEngine,
    bundled_model_dir,
)
from comic_narrator.errors import EngineError
from tests.reading.conftest import DATA, load_rgb


def _come_back() -> np.ndarray:
    """The "Come back..." line of Pepper&Carrot ep. 17's first page, cut out with a margin of paper."""
    return load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")[895:940, 205:335]


def test_without_rapidocr_the_engine_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules is what the import system reports as a package that is not installed.
    monkeypatch.setitem(sys.modules, "rapidocr", None)
    with pytest.raises(EngineError, match=r"rapidocr is not installed: pip install"):
        bundled_model_dir()


def test_the_classifier_model_is_not_needed_and_a_missing_model_is_named(tmp_path: Path) -> None:
    shipped = bundled_model_dir()
    (tmp_path / _DET_MODEL).symlink_to(shipped / _DET_MODEL)
    with pytest.raises(EngineError, match="model file") as caught:
        RapidOcrEngine(model_dir=tmp_path).open()
    assert _REC_MODEL in str(caught.value) and _CLS_MODEL not in str(caught.value)
    # Lines are never turned (use_cls is off), so the detector and the recogniser alone read.
    (tmp_path / _REC_MODEL).symlink_to(shipped / _REC_MODEL)
    with RapidOcrEngine(model_dir=tmp_path) as engine:
        assert [text for text, _score in engine.recognize_crops([_come_back()])] == ["Come back..."]


def test_open_loads_once(ocr: RapidOcrEngine) -> None:
    loaded = ocr._ocr
    assert loaded is not None
    assert ocr.open() is ocr and ocr._ocr is loaded


def test_automatic_threads_are_every_core_up_to_four() -> None:
    assert RapidOcrEngine().threads_in_use == min(4, os.cpu_count() or 1)


def test_crops_before_open_is_an_error() -> None:
    with pytest.raises(EngineError, match="before open"):
        RapidOcrEngine().recognize_crops([_come_back()])


def test_a_grey_crop_reads_as_its_colour_original(ocr: RapidOcrEngine) -> None:
    crop = _come_back()
    grey = crop.mean(axis=2).astype(np.uint8)
    [(colour_text, _), (grey_text, _)] = ocr.recognize_crops([crop, grey])
    assert colour_text == grey_text == "Come back..."
    assert ocr.recognize_crops([]) == []


@pytest.mark.parametrize("shape", [(0, 50, 3), (50, 0, 3), (4, 4, 3), (5, 400, 3), (400, 5, 3), (0, 0)])
def test_an_empty_or_sliver_image_has_no_lines(ocr: RapidOcrEngine, shape: tuple[int, ...]) -> None:
    assert ocr.recognize(np.full(shape, 255, dtype=np.uint8), "en") == []


def test_a_blank_page_has_no_lines(ocr: RapidOcrEngine) -> None:
    assert ocr.recognize(np.full((1400, 1000, 3), 255, dtype=np.uint8), "en") == []


def test_a_page_is_detected_at_the_long_side_set_whatever_came_before(ocr: RapidOcrEngine) -> None:
    # A blank 700 x 3,300 strip is enlarged to 1,000 x 4,714 and cut into two tiles of 2,482 px, each detected at
    # the scale of a 1,500 px (1.5 x 1,000) tile: 2,482 x 1,024 / 1,500 = 1,694 px.
    ocr.recognize(np.full((3300, 700, 3), 255, dtype=np.uint8), "en")
    assert ocr._ocr.text_det.limit_side_len == 1694
    # A page is one tile, detected at det_long_side_px (1,024), not at the tiles' scale (which would be 945 here).
    page = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")
    assert ocr.recognize(page, "en")
    assert ocr._ocr.text_det.limit_side_len == ocr.det_long_side_px == 1024
