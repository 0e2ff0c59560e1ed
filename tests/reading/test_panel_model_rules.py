"""Rules of the learned panel finder that the page tests did not pin: the title band needs the classical boxes,
a missing model with classical boxes given, a confident speck too small to be a panel."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from comic_narrator.reading import panel_model
from comic_narrator.reading.panel_model import detect_panels_learned
from comic_narrator.reading.panels import detect_panels
from tests.conftest import REPO

WIKIPE_TAN = REPO / "tests" / "data" / "vision" / "wikipe-tan" / "page1.ja.jpg"


def test_the_title_band_is_dropped_only_with_the_classical_boxes() -> None:
    """wikipe-tan's title and credits sit above the panels on open paper: the segmenter alone calls them a panel;
    with the classical detector's boxes (no frame there) they are a title band and go."""
    page = Image.open(WIKIPE_TAN)
    grey, rgb = np.asarray(page.convert("L")), np.asarray(page.convert("RGB"))
    alone = detect_panels_learned(grey)
    with_frames = detect_panels_learned(grey, detect_panels(rgb))
    assert alone is not None and with_frames is not None
    assert len(alone) == 4 and len(with_frames) == 3
    top = min(alone, key=lambda b: b[1])
    assert top not in with_frames and top[1] + top[3] < 0.25 * grey.shape[0]
    assert set(with_frames) <= set(alone)


def test_without_the_weights_classical_boxes_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    panel_model._session.cache_clear()
    monkeypatch.setattr(panel_model, "model_path", lambda: None)
    try:
        assert detect_panels_learned(np.full((100, 70), 255, np.uint8), [(5, 5, 60, 40), (5, 50, 60, 40)]) is None
    finally:
        panel_model._session.cache_clear()


def test_a_confident_speck_smaller_than_a_panel_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under 0.8 % of the page, however sure the model is, a region is a speck (a lit window, a balloon's
    inside), not a panel."""
    height, width = 512, 384
    prob = np.zeros((height, width), np.float32)
    prob[100:112, 100:112] = 0.99  # 144 px: 0.07 % of the grid
    prob[200:400, 40:340] = 0.99  # a panel
    page = np.random.default_rng(5).integers(0, 256, (height, width), dtype=np.uint8)
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1
    assert boxes[0][1] > 150


def test_boxes_wholly_in_the_top_or_bottom_margin_band_are_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """A running title above the panels and a page number below them, however sure the model is: each lies wholly
    in the page's top or bottom 8 %; a panel reaching into the band stays."""
    height, width = 512, 384
    prob = np.zeros((height, width), np.float32)
    prob[8:34, 90:290] = 0.99  # a running title: rows 8-33 of 512, inside the top 8 % (41 rows)
    prob[480:505, 150:260] = 0.99  # a page number's strip, inside the bottom 8 %
    prob[60:460, 40:340] = 0.99  # the panel, apart from both
    page = np.random.default_rng(7).integers(0, 256, (height, width), dtype=np.uint8)
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1 and 50 < boxes[0][1] < 65
    prob[8:34, 90:290] = 0.0
    prob[20:60, 40:340] = 0.99  # no title now; the panel reaches up into the top band: kept, whole
    boxes = panel_model._panels_of(page, 0.5)
    assert boxes is not None and len(boxes) == 1 and boxes[0][1] < 20 and boxes[0][1] + boxes[0][3] > 450


def _page(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (512, 384), dtype=np.uint8)  # art: no line of paper


def test_a_panel_with_one_confident_core_keeps_its_whole_extent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core split only cuts a component whose core falls into two or more pieces: a panel the model is a
    little less sure of near its frame (0.85) keeps the box of its whole inside, not of its core."""
    prob = np.zeros((512, 384), np.float32)
    prob[100:400, 50:330] = 0.85
    prob[112:388, 62:318] = 0.99
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    boxes = panel_model._panels_of(_page(11), 0.5)
    assert boxes is not None and len(boxes) == 1
    x, y, w, h = boxes[0]
    assert x <= 50 and y <= 100 and x + w >= 330 and y + h >= 400


def test_a_doubtful_region_keeps_no_core_too_small_or_too_ragged_for_a_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    prob = np.zeros((512, 384), np.float32)
    prob[60:460, 40:340] = 0.6  # a doubtful region ...
    prob[100:130, 100:130] = 0.99  # ... holding a sure square of 900 px, under twice the smallest panel (3,146)
    prob[200:420, 60:90] = 0.99  # ... and a sure L, panel-sized but filling half its box
    prob[390:420, 60:320] = 0.99
    monkeypatch.setattr(panel_model, "panel_probability", lambda grey: (prob, 1.0))
    assert panel_model._panels_of(_page(13), 0.5) == []
