"""The synthesised ambiences as docs/sound.md describes them: the sea's swells (every 5 to 9 s, a slow rise and a
faster fall), the birds of the forest (phrases of several chirps), and nothing at all for a page of no length."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.audio.ambience import SYNTHS, synthesise_ambience
from comic_narrator.audio.synth import band

RATE = 8_000


@pytest.mark.parametrize("kind", sorted(SYNTHS))
def test_no_samples_asked_none_made(kind: str) -> None:
    out = synthesise_ambience(kind, 0, RATE, np.random.default_rng(1))  # type: ignore[arg-type]
    assert out.dtype == np.float32 and len(out) == 0


def test_the_sea_swells_every_few_seconds_rising_slowly_and_falling_fast() -> None:
    seconds = 120
    sea = synthesise_ambience("sea", seconds * RATE, RATE, np.random.default_rng(4)).astype(np.float64)
    surf = band(sea.astype(np.float32), 40, 500, RATE).astype(np.float64)
    frame = RATE // 4
    envelope = np.sqrt([np.mean(surf[i : i + frame] ** 2) for i in range(0, len(surf) - frame, frame)])
    smooth = np.convolve(envelope, np.ones(4) / 4, mode="valid")
    assert smooth.max() > 2.5 * smooth.min(), "swells, not a steady rumble"
    # A slow rise and a fast fall: many small steps up, fewer big steps down (the steps' skew is negative).
    steps = np.diff(smooth)
    skew = np.mean((steps - steps.mean()) ** 3) / steps.std() ** 3
    assert skew < -0.1, skew


def test_forest_birds_sing_phrases_of_several_chirps() -> None:
    rate = 16_000
    forest = synthesise_ambience("forest", 60 * rate, rate, np.random.default_rng(2))
    birds = band(forest, 2300, 5500, rate).astype(np.float64)
    hop = rate // 100
    envelope = np.sqrt([np.mean(birds[i : i + hop] ** 2) for i in range(0, len(birds) - hop, hop)])
    singing = envelope > 3 * np.median(envelope)
    chirps = np.flatnonzero(np.diff(singing.astype(int)) == 1) + 1
    phrases: list[list[int]] = []
    for start in chirps:
        if phrases and start - phrases[-1][-1] <= 20:  # within 0.2 s of the last chirp: the same phrase
            phrases[-1].append(int(start))
        else:
            phrases.append([int(start)])
    assert len(phrases) >= 15, "about one phrase every two seconds"
    assert np.mean([len(p) for p in phrases]) >= 2.5
