"""Voice statistics at their edges: a side with no pitch, a clip shorter than one analysis frame."""

from __future__ import annotations

import numpy as np

from comic_narrator.dsp.voice_stats import FRAME_S, voice_stats

RATE_HZ = 22_050


def _tone(frequency_hz: float, seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE_HZ)) / RATE_HZ
    # A few harmonics, as a voice has, so that YIN sees one clear period.
    wave = sum(np.sin(2 * np.pi * k * frequency_hz * t) / k for k in range(1, 5))
    return (0.3 * wave).astype(np.float32)


def test_pitch_distance_is_in_semitones_and_zero_against_a_side_without_pitch() -> None:
    low, high = voice_stats(_tone(150.0, 0.6), RATE_HZ), voice_stats(_tone(300.0, 0.6), RATE_HZ)
    assert abs(low.f0_median_hz - 150.0) < 5 and abs(high.f0_median_hz - 300.0) < 10
    assert abs(low.pitch_distance_semitones(high) - 12.0) < 0.5
    hiss = voice_stats(np.random.default_rng(3).normal(0, 0.1, RATE_HZ // 2).astype(np.float32), RATE_HZ)
    assert hiss.f0_median_hz == 0.0
    # No pitch on one side: no pitch difference to speak of, rather than an infinite one.
    assert low.pitch_distance_semitones(hiss) == 0.0 and hiss.pitch_distance_semitones(low) == 0.0


def test_a_clip_shorter_than_one_frame_still_has_statistics() -> None:
    blip = _tone(200.0, FRAME_S / 2)
    stats = voice_stats(blip, RATE_HZ)
    assert np.isfinite(stats.centroid_hz) and stats.centroid_hz > 0
    assert len(stats.cepstrum) == 12 and all(np.isfinite(stats.cepstrum))
