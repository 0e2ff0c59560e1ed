"""PSOLA on real speech from the bundled joe voice: pitch moves by the asked ratio, formants and duration stay."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from comic_narrator.backends.piper_tts import PiperEngine
from comic_narrator.backends.protocols import Delivery, FloatAudio
from comic_narrator.dsp.psola import add_breath, psola, reshape_voice
from comic_narrator.dsp.voice_shift import VoiceShift
from comic_narrator.dsp.voice_stats import voice_stats

TEXT = "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background."
RATE = 22_050


@pytest.fixture(scope="module")
def joe() -> Iterator[FloatAudio]:
    with PiperEngine() as engine:
        yield engine.synthesize(TEXT, "en-joe", Delivery()).samples


@pytest.mark.parametrize("ratio", [0.8, 1.3, 1.8])
def test_pitch_moves_by_the_ratio_and_nothing_else(joe: FloatAudio, ratio: float) -> None:
    source = voice_stats(joe, RATE)
    out = psola(joe, RATE, pitch_ratio=ratio)
    shifted = voice_stats(out, RATE)
    assert len(out) == len(joe)
    expected = 12 * np.log2(ratio)
    measured = 12 * np.log2(shifted.f0_median_hz / source.f0_median_hz)
    assert abs(measured - expected) < 1.5, (measured, expected)
    # The vocal tract stays: the spectral centroid moves far less than a resampled (chipmunk) voice would.
    assert abs(np.log(shifted.centroid_hz / source.centroid_hz)) < abs(np.log(ratio)) / 2


def test_unit_ratio_is_nearly_transparent(joe: FloatAudio) -> None:
    out = psola(joe, RATE)
    assert len(out) == len(joe)
    source, same = voice_stats(joe, RATE), voice_stats(out, RATE)
    assert abs(12 * np.log2(same.f0_median_hz / source.f0_median_hz)) < 0.5
    assert same.timbre_distance(source) < 0.5


def test_time_stretch_keeps_pitch(joe: FloatAudio) -> None:
    out = psola(joe, RATE, time_ratio=1.25)
    assert abs(len(out) - 1.25 * len(joe)) <= 1
    source, slow = voice_stats(joe, RATE), voice_stats(out, RATE)
    assert abs(12 * np.log2(slow.f0_median_hz / source.f0_median_hz)) < 1.0


def test_monotone(joe: FloatAudio) -> None:
    out = voice_stats(psola(joe, RATE, flat_f0_hz=120.0), RATE)
    assert abs(out.f0_median_hz - 120.0) < 6
    assert out.f0_spread_semitones < 0.5 < voice_stats(joe, RATE).f0_spread_semitones


def test_reshape_keeps_length_and_is_deterministic(joe: FloatAudio) -> None:
    shift = VoiceShift(f0_ratio=2.0, formant_ratio=1.17, breathiness=0.1, tremolo_depth=0.03)
    a, b = reshape_voice(joe, RATE, shift), reshape_voice(joe, RATE, shift)
    assert np.array_equal(a, b)
    assert abs(len(a) - len(joe)) <= 2
    source, woman = voice_stats(joe, RATE), voice_stats(a, RATE)
    assert 10.5 < woman.pitch_distance_semitones(source) < 13.5
    assert woman.timbre_distance(source) > 0.5


def test_short_and_silent_input_pass_through() -> None:
    tiny = np.full(100, 0.1, dtype=np.float32)
    assert np.array_equal(psola(tiny, RATE, pitch_ratio=2.0), tiny)
    silence = np.zeros(RATE, dtype=np.float32)
    assert not np.any(psola(silence, RATE, pitch_ratio=1.5))
    assert not np.any(add_breath(silence, RATE, 0.5))
