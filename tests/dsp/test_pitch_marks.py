"""PSOLA's pitch marks on constructed signals whose glottal pulses are known: one mark on each pulse where voiced,
a fixed spacing where not, and the true distance between pulses as the period."""

from __future__ import annotations

import numpy as np

from comic_narrator.dsp.psola import HOP_S, UNVOICED_PERIOD_S, add_breath, pitch_marks, psola, reshape_voice
from comic_narrator.dsp.voice_shift import VoiceShift

RATE = 16_000
FRAME = int(HOP_S * RATE)


def pulse_train(n: int, pulses: list[int]) -> np.ndarray:
    """A short symmetric pulse centred on each of the given samples, on a little noise."""
    rng = np.random.default_rng(3)
    x = 0.002 * rng.standard_normal(n)
    t = np.arange(-20, 21)
    pulse = np.exp(-((t / 4.0) ** 2))
    for p in pulses:
        lo, hi = max(0, p - 20), min(n, p + 21)
        x[lo:hi] += pulse[lo - (p - 20) : len(pulse) - (p + 21 - hi)]
    return x.astype(np.float32)


def test_voiced_marks_sit_on_the_pulses_with_their_true_spacing() -> None:
    # Periods alternate 158 and 162 samples: YIN says about 160 everywhere, the marks must say what the pulses do.
    pulses = [37]
    while pulses[-1] < 7_600:
        pulses.append(pulses[-1] + (158 if len(pulses) % 2 else 162))
    x = pulse_train(8_000, pulses)
    f0 = np.full(8_000 // FRAME + 1, RATE / 160.0)
    marks, periods = pitch_marks(x, RATE, f0)
    assert list(marks[: len(pulses)]) == pulses
    spacing = np.diff(marks).astype(float)
    assert np.array_equal(periods[:-1], spacing)
    assert set(spacing[: len(pulses) - 1]) == {158.0, 162.0}


def test_unvoiced_marks_are_evenly_spaced_with_no_period() -> None:
    x = pulse_train(4_000, [100, 900, 2_000])
    marks, periods = pitch_marks(x, RATE, np.zeros(4_000 // FRAME + 1))
    step = int(UNVOICED_PERIOD_S * RATE)
    assert list(marks) == list(range(0, 4_000, step))
    assert not np.any(periods)


def test_a_voiced_run_starts_on_its_first_pulse_not_where_the_noise_ends() -> None:
    # Unvoiced for the first 100 ms, then pulses every 200 samples from sample 1,650 (inside the first voiced
    # period after the switch, far from its start).
    first = 1_650
    pulses = list(range(first, 6_000, 200))
    x = pulse_train(6_000, pulses)
    f0 = np.zeros(6_000 // FRAME + 1)
    f0[10:] = RATE / 200.0
    marks, periods = pitch_marks(x, RATE, f0)
    voiced = marks[periods > 0]
    assert voiced[0] == first
    assert list(voiced[: len(pulses) - 1]) == pulses[:-1]
    unvoiced = marks[periods == 0]
    assert np.all(unvoiced[unvoiced < first] < 1_600 + int(UNVOICED_PERIOD_S * RATE))


def test_a_unit_ratio_lays_every_grain_back_where_it_came_from() -> None:
    # Noise, a voiced stretch, noise, another voiced stretch out of step with the first, noise: with both ratios
    # at 1 the output is the input (each voiced run restarts on its own first pulse).
    rng = np.random.default_rng(5)
    n = 16_000
    pulses = list(range(4_050, 8_000, 150)) + list(range(10_093, 13_000, 170))
    voiced = ((np.arange(n) >= 4_000) & (np.arange(n) < 8_000)) | ((np.arange(n) >= 10_000) & (np.arange(n) < 13_000))
    x = pulse_train(n, pulses) + (0.05 * rng.standard_normal(n)).astype(np.float32) * ~voiced
    out = psola(x.astype(np.float32), RATE)
    inner = slice(400, n - 400)
    error = np.sqrt(np.mean((out[inner] - x[inner]) ** 2)) / np.sqrt(np.mean(x[inner] ** 2))
    assert len(out) == n
    assert error < 0.2, error


def test_tremolo_shakes_the_pitch_and_breath_adds_noise_only_when_asked() -> None:
    pulses = list(range(50, 15_900, 160))
    x = pulse_train(16_000, pulses)
    steady = psola(x, RATE, pitch_ratio=1.2)
    shaking = psola(x, RATE, pitch_ratio=1.2, tremolo_depth=0.08)
    assert len(shaking) == len(steady)
    assert not np.allclose(shaking, steady, atol=1e-3)
    assert np.array_equal(add_breath(x, RATE, 0.0), x)
    assert len(add_breath(x[:0], RATE, 0.5)) == 0
    assert not np.array_equal(add_breath(x, RATE, 0.3), x)


def test_too_short_a_clip_is_not_reshaped() -> None:
    x = pulse_train(RATE // 20 - 1, [100, 260, 420, 580])
    assert reshape_voice(x, RATE, VoiceShift(f0_ratio=1.5, formant_ratio=1.2)) is x
