"""The limiter's and the true-peak meter's edges: levels in dB, an empty track, a track already under the ceiling
(tests/audio/test_truepeak.py and test_mix_bed.py measure the limiter on real mixes)."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.audio.truepeak import PEAK_CEILING, dbfs, limit_peaks, true_peak_envelope


def test_levels_in_decibels_full_scale() -> None:
    assert dbfs(1.0) == 0.0
    assert dbfs(0.5) == pytest.approx(-6.0206, abs=1e-4)
    assert dbfs(0.0) == float("-inf")


def test_an_empty_track_and_one_under_the_ceiling_pass_unchanged() -> None:
    assert len(limit_peaks(np.zeros(0, dtype=np.float32), 48_000)) == 0
    seconds = np.arange(48_000) / 48_000
    quiet = (0.5 * np.sin(2 * np.pi * 997 * seconds)).astype(np.float32)
    assert np.array_equal(limit_peaks(quiet, 48_000), quiet)
    loud = (1.2 * np.sin(2 * np.pi * 997 * seconds)).astype(np.float32)
    limited = limit_peaks(loud, 48_000)
    assert true_peak_envelope(limited).max() <= PEAK_CEILING + 1e-3
    assert float(np.abs(limited).max()) > 0.95 * PEAK_CEILING, "held at the ceiling, not below it"
