"""The segmenter's training augmentations (training/panels/synth.py, off in the shipped recipe): screentone and
night panels change the panels' art and never the gutters, so a page keeps its labels."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from tests.reading.conftest import training_module

BOXES = [(20, 20, 260, 180), (300, 20, 280, 180), (20, 230, 560, 330)]
"""Three framed panels on a 600 x 580 page, 20 px gutters."""


def _page() -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    rng = np.random.default_rng(0)
    page = np.full((580, 600), 250, np.uint8)
    for x, y, w, h in BOXES:
        art = np.where(rng.random((h, w)) < 0.1, 30, 240).astype(np.uint8)  # light art with some ink
        page[y : y + h, x : x + w] = art
        page[y : y + h, [x, x + w - 1]] = 0
        page[[y, y + h - 1], x : x + w] = 0
    label = np.zeros_like(page)
    erode = max(2, round(0.006 * page.shape[1]))
    for x, y, w, h in BOXES:
        label[y + erode : y + h - erode, x + erode : x + w - erode] = 255
    return page, label


def _gutters() -> npt.NDArray[np.bool_]:
    outside = np.ones((580, 600), bool)
    for x, y, w, h in BOXES:
        outside[y : y + h, x : x + w] = False
    return outside


@pytest.mark.parametrize("augment", ["screentone", "night_panels"])
def test_augmentations_change_panels_not_gutters(augment: str) -> None:
    page, label = _page()
    changed_panels = 0
    apply = getattr(training_module("synth"), augment)
    for seed in range(12):
        after = apply(page, label, np.random.default_rng(seed))
        assert after.shape == page.shape and after.dtype == np.uint8
        assert np.array_equal(after[_gutters()], page[_gutters()])
        if augment == "screentone":
            assert np.array_equal(after[page < 100], page[page < 100])  # ink stays ink: only light areas toned
            assert not np.any(after > page)  # tone only darkens
        for x, y, w, h in BOXES:
            inside = (slice(y + 5, y + h - 5), slice(x + 5, x + w - 5))
            # toned: some pixels dotted; night: the panel's art darkened as a whole
            changed_panels += (
                bool((after[inside] != page[inside]).any())
                if augment == "screentone"
                else bool(after[inside].mean() < 0.6 * page[inside].mean())
            )
    assert 12 <= changed_panels < 36  # most panels changed, some left alone


def test_synthetic_pages_take_tone_under_their_balloons() -> None:
    synth = training_module("synth")
    art = [np.full((300, 300), 235, np.uint8)]
    synth.TONE_PAGE_SHARE = 1.0
    try:
        toned = [synth.render_page(np.random.default_rng(s), art, 400, 560)[0] for s in range(6)]
    finally:
        synth.TONE_PAGE_SHARE = 0.0
    plain = [synth.render_page(np.random.default_rng(s), art, 400, 560)[0] for s in range(6)]
    # Flat light art is dotted where toned: many more mid-dark pixels than the plain pages have.
    assert sum(int((t < 160).sum()) for t in toned) > 3 * sum(int((p < 160).sum()) for p in plain)
