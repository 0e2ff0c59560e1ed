"""Tempo and pitch after synthesis (the remote engines' speed and pitch): length, pitch and the shortcuts."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.dsp.tempo import speed_and_pitch, time_stretch
from comic_narrator.dsp.voice_stats import voice_stats

RATE_HZ = 16_000


def _voice_like(seconds: float = 1.0, f0_hz: float = 160.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE_HZ)) / RATE_HZ
    wave = sum(np.sin(2 * np.pi * k * f0_hz * t) / k for k in range(1, 6))
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3.0 * t) ** 2  # syllables
    return (0.25 * wave * envelope).astype(np.float32)


@pytest.mark.parametrize("speed", [0.8, 1.25, 1.6])
def test_stretch_changes_the_length_and_keeps_the_pitch(speed: float) -> None:
    voice = _voice_like()
    out = time_stretch(voice, RATE_HZ, speed)
    assert len(out) == int(len(voice) / speed)
    assert out.dtype == np.float32 and float(np.abs(out).max()) > 0.2
    before, after = voice_stats(voice, RATE_HZ), voice_stats(out, RATE_HZ)
    assert before.pitch_distance_semitones(after) < 0.3


def test_normal_speed_and_empty_audio_come_back_as_they_are() -> None:
    voice = _voice_like(0.3)
    assert np.array_equal(time_stretch(voice, RATE_HZ, 1.0), voice)
    assert np.array_equal(time_stretch(voice, RATE_HZ, 1.0005), voice)  # below a thousandth: not worth a pass
    assert len(time_stretch(np.zeros(0, dtype=np.float32), RATE_HZ, 1.3)) == 0


def test_pitch_moves_without_the_tempo_and_tempo_without_the_pitch() -> None:
    voice = _voice_like()
    octave_up = speed_and_pitch(voice, RATE_HZ, 1.0, 12.0)
    assert abs(len(octave_up) - len(voice)) <= 0.01 * len(voice)
    assert abs(voice_stats(voice, RATE_HZ).pitch_distance_semitones(voice_stats(octave_up, RATE_HZ)) - 12.0) < 0.5
    faster_lower = speed_and_pitch(voice, RATE_HZ, 1.25, -3.0)
    assert abs(len(faster_lower) - len(voice) / 1.25) <= 0.01 * len(voice)
    assert abs(voice_stats(voice, RATE_HZ).pitch_distance_semitones(voice_stats(faster_lower, RATE_HZ)) - 3.0) < 0.5
