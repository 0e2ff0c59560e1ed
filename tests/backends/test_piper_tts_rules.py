"""The bundled Piper engine's own rules on the real joe model: a line of several sentences is each sentence voiced
alone, joined by the engine's gap of silence."""

from __future__ import annotations

import numpy as np

from comic_narrator.backends.piper_tts import SENTENCE_GAP_S, PiperEngine
from comic_narrator.backends.protocols import Delivery


def test_sentences_are_voiced_one_by_one_and_joined_by_the_gap() -> None:
    with PiperEngine() as engine:
        first = engine.synthesize("The door opened.", "en-joe", Delivery())
        second = engine.synthesize("Nobody was there.", "en-joe", Delivery())
        both = engine.synthesize("The door opened. Nobody was there.", "en-joe", Delivery())
    # joe is the model's own voice (no resampling, no reshaping), so the pieces come back sample for sample.
    gap = np.zeros(int(SENTENCE_GAP_S * first.sample_rate_hz), dtype=np.float32)
    assert len(gap) > 0
    assert np.array_equal(both.samples, np.concatenate([first.samples, gap, second.samples]))
