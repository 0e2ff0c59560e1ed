"""The rapidocr engine: bundled models, no I/O before open(), clear errors, tiling of tall strips."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine, _tiles
from comic_narrator.errors import EngineError
from comic_narrator.reading.metrics import normalise_letters
from tests.conftest import corpus_path
from tests.reading.conftest import DATA, load_rgb


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
    assert 1 <= ocr.threads_in_use <= 4


def test_sessions_do_not_spin_and_keep_their_arena(ocr: RapidOcrEngine) -> None:
    # Spinning worker threads slow the reader (and whatever else runs) on a busy machine.
    for model in (ocr._ocr.text_det, ocr._ocr.text_rec):
        options = model.session.session.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert options.intra_op_num_threads == ocr.threads_in_use
        assert options.enable_cpu_mem_arena


def test_strip_tiles_are_few_even_and_overlapping() -> None:
    # The Baron Bean strip enlarged 2.5x for OCR (2,700 x 665): two tiles, not four whose last two nearly coincide.
    page = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")
    strip = np.ascontiguousarray(np.concatenate([page[:665, :900]] * 3, axis=1)[:, :2700])
    tiles, det_scale = _tiles(strip, 1.5, 3.0, 1024)
    assert det_scale == 1.0  # a 997 px tile is detected at its own size, so the longer ones are too
    starts = [x0 for x0, _, _ in tiles]
    lengths = {tile.shape[1] for _, _, tile in tiles}
    assert len(tiles) == 2 and len(lengths) == 1 and starts[0] == 0
    assert starts[-1] + lengths.pop() == strip.shape[1]
    assert tiles[0][2].shape[1] - starts[1] >= 665 // 4  # the overlap holds a line cut by the tile edge
    # A 4,654 x 1,390 band: detected at the scale of a 2,085 px (1.5 x 1,390) tile, in two tiles.
    band = np.zeros((1390, 4654, 3), dtype=np.uint8)
    tiles, det_scale = _tiles(band, 1.5, 3.0, 1024)
    assert len(tiles) == 2 and det_scale == pytest.approx(1024 / 2085)
    # A page is one tile, detected at det_long_side_px.
    assert len(_tiles(page, 1.5, 3.0, 1024)[0]) == 1


def test_band_lines_are_read_whole(ocr: RapidOcrEngine) -> None:
    # Lines of the Dingbat band that crossed the edge of a 1.5-long tile came back cut ("Copyright, 1915,
    # International News" without "Service."), or twice, halves of different words.
    archive = corpus_path("newspaper-strips", "dingbat-family-strip.cbz")
    with zipfile.ZipFile(archive) as cbz:
        name = next(n for n in cbz.namelist() if n.lower().endswith(".jpg") and "/._" not in f"/{n}")
        band = np.asarray(Image.open(io.BytesIO(cbz.read(name))).convert("RGB"))
    letters = [normalise_letters(line.text) for line in ocr.recognize(band, "en")]
    assert any("copyright1915" in t and "newsservice" in t for t in letters)
    assert any("americasgreatesteveningnewspaper" in t for t in letters)
