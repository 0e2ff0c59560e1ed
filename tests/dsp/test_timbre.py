"""The level and shift helpers every voice's clip goes through: speech level, peak ceiling, trims, resampling."""

from __future__ import annotations

import numpy as np

from comic_narrator.dsp.timbre import (
    PEAK_CEILING,
    SPEECH_RMS_DBFS,
    level_speech,
    semitones_to_ratio,
    shift_by_resampling,
    trim_silence,
    voiced_rms,
)
from comic_narrator.dsp.voice_stats import voice_stats

RATE_HZ = 16_000


def _tone(seconds: float, amplitude: float, f0_hz: float = 180.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE_HZ)) / RATE_HZ
    return (amplitude * np.sin(2 * np.pi * f0_hz * t)).astype(np.float32)


def _db(value: float) -> float:
    return 20 * float(np.log10(value))


def test_the_voiced_level_ignores_pauses_but_counts_quieter_speech() -> None:
    loud, quiet, pause = _tone(0.5, 0.5), _tone(0.5, 0.05), np.zeros(RATE_HZ, np.float32)
    # A long pause does not dilute the level; speech 20 dB down (inside the 35 dB window) still counts.
    assert abs(voiced_rms(np.concatenate([loud, pause]), RATE_HZ) - 0.5 / np.sqrt(2)) < 0.01
    both = voiced_rms(np.concatenate([loud, quiet, pause]), RATE_HZ)
    assert abs(both - np.sqrt((0.5**2 + 0.05**2) / 4)) < 0.01
    # 40 dB down is outside the window: the level is the loud part's alone.
    assert abs(voiced_rms(np.concatenate([loud, _tone(0.5, 0.005)]), RATE_HZ) - 0.5 / np.sqrt(2)) < 0.01
    assert voiced_rms(np.zeros(RATE_HZ, np.float32), RATE_HZ) == 0.0
    # Shorter than one 20 ms frame: the plain RMS.
    blip = _tone(0.01, 0.4)
    assert abs(voiced_rms(blip, RATE_HZ) - float(np.sqrt(np.mean(blip.astype(np.float64) ** 2)))) < 1e-6
    assert voiced_rms(np.zeros(0, np.float32), RATE_HZ) == 0.0


def test_speech_is_brought_to_one_level_plus_the_delivery_gain() -> None:
    for amplitude in (0.02, 0.6):
        for gain_db in (0.0, -6.0):
            out = level_speech(_tone(0.5, amplitude), RATE_HZ, gain_db)
            assert abs(_db(voiced_rms(out, RATE_HZ)) - (SPEECH_RMS_DBFS + gain_db)) < 0.1
    silent = np.zeros(RATE_HZ // 10, np.float32)
    out = level_speech(silent, RATE_HZ, 0.0)
    assert np.array_equal(out, silent) and out is not silent


def test_a_peak_past_the_ceiling_scales_the_clip_down_instead_of_clipping() -> None:
    clicks = np.zeros(RATE_HZ // 2, np.float32)
    clicks[::800] = 0.5  # a high crest factor: at speech level plus 12 dB its peaks pass full scale
    out = level_speech(clicks, RATE_HZ, 12.0)
    assert abs(float(np.abs(out).max()) - PEAK_CEILING) < 1e-6
    assert np.allclose(out / out.max(), clicks / clicks.max(), atol=1e-6)  # scaled, never clipped


def test_trim_keeps_a_pad_around_the_sound_and_empties_silence() -> None:
    pause = np.zeros(RATE_HZ // 2, np.float32)
    word = _tone(0.3, 0.3)
    out = trim_silence(np.concatenate([pause, word, pause]), RATE_HZ)
    pad = int(0.04 * RATE_HZ)
    assert abs(len(out) - (len(word) + 2 * pad)) <= 2
    assert float(np.abs(out[pad + 10 : pad + 100]).max()) > 0.1
    assert len(trim_silence(pause, RATE_HZ)) == 0
    assert len(trim_silence(np.zeros(0, np.float32), RATE_HZ)) == 0


def test_resampling_raises_the_pitch_and_shortens_by_the_ratio() -> None:
    voice = _tone(0.6, 0.3)
    ratio = semitones_to_ratio(3.0)
    out = shift_by_resampling(voice, ratio)
    assert abs(len(out) - len(voice) / ratio) <= 2
    assert abs(voice_stats(voice, RATE_HZ).pitch_distance_semitones(voice_stats(out, RATE_HZ)) - 3.0) < 0.3
    assert np.array_equal(shift_by_resampling(voice, 1.0), voice)
    assert len(shift_by_resampling(np.zeros(0, np.float32), ratio)) == 0
