"""The sound bed's level helpers (audio/synth.py) on real signals: a piece read at its loudness by BS.1770 where it
is long enough, by its mean square where it is not, and silence left silent."""

from __future__ import annotations

import numpy as np
import pyloudnorm
import pytest

from comic_narrator.audio.synth import at_loudness, unit

RATE_HZ = 48_000


def _tone(hz: float, seconds: float, level: float = 0.1) -> np.ndarray:
    t = np.arange(round(seconds * RATE_HZ)) / RATE_HZ
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def _plain_lufs(samples: np.ndarray) -> float:
    return -0.691 + 10 * float(np.log10(np.mean(np.square(samples, dtype=np.float64))))


def test_a_long_low_hum_is_levelled_by_its_weighted_loudness() -> None:
    """A 60 Hz hum reads about 3 dB quieter K-weighted than its plain mean square says: it is brought to the
    target as BS.1770 hears it, not as the mean square does."""
    out = at_loudness(_tone(60, 2.0), RATE_HZ, -23.0)
    assert pyloudnorm.Meter(RATE_HZ).integrated_loudness(out.astype(np.float64)) == pytest.approx(-23.0, abs=0.05)
    assert _plain_lufs(out) > -21.0


def test_a_piece_shorter_than_a_block_is_levelled_by_its_mean_square() -> None:
    out = at_loudness(_tone(1000, 0.2), RATE_HZ, -20.0)
    assert _plain_lufs(out) == pytest.approx(-20.0, abs=0.01)


def test_a_piece_the_gates_leave_nothing_of_is_levelled_by_its_mean_square() -> None:
    """Two seconds at -80 LUFS: under the absolute gate (-70), so BS.1770 measures nothing."""
    quiet = at_loudness(_tone(1000, 2.0), RATE_HZ, -80.0)
    out = at_loudness(quiet, RATE_HZ, -20.0)
    assert np.all(np.isfinite(out))
    assert _plain_lufs(out) == pytest.approx(-20.0, abs=0.7)


def test_silence_stays_silent() -> None:
    for samples in (np.zeros(RATE_HZ, np.float32), np.zeros(100, np.float32)):
        assert np.array_equal(at_loudness(samples, RATE_HZ, -20.0), samples)
        assert np.array_equal(unit(samples), samples)
    assert len(unit(np.zeros(0, np.float32))) == 0
    assert np.sqrt(np.mean(np.square(unit(_tone(440, 0.5).astype(np.float32)), dtype=np.float64))) == pytest.approx(1.0)
