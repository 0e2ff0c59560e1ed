"""The bundled Piper engine: real synthesis with the shipped joe model and its re-timbred variants."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from comic_narrator.backends.piper_tts import PIPER_VOICES, PiperEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.dsp.voice_stats import voice_stats
from comic_narrator.errors import EngineError

TEXT = "The storm rolled over the hills, and nobody in the village slept that night."


@pytest.fixture(scope="module")
def engine() -> Iterator[PiperEngine]:
    with PiperEngine() as loaded:
        yield loaded


def test_joe_speaks(engine: PiperEngine) -> None:
    speech = engine.synthesize(TEXT, "en-joe", Delivery())
    assert speech.sample_rate_hz == 22_050
    assert 2.5 < speech.duration_s < 8.0
    assert float(np.sqrt(np.mean(speech.samples**2))) > 0.01
    assert speech.samples.dtype == np.float32


def test_deterministic(engine: PiperEngine) -> None:
    a = engine.synthesize(TEXT, "en-joe-young", Delivery(pitch_semitones=1.0))
    b = engine.synthesize(TEXT, "en-joe-young", Delivery(pitch_semitones=1.0))
    assert np.array_equal(a.samples, b.samples)


def test_variants_differ_in_pitch_but_keep_tempo(engine: PiperEngine) -> None:
    joe = engine.synthesize(TEXT, "en-joe", Delivery())
    young = engine.synthesize(TEXT, "en-joe-young", Delivery())
    deep = engine.synthesize(TEXT, "en-joe-deep", Delivery())
    f0 = {
        name: voice_stats(s.samples, s.sample_rate_hz).f0_median_hz
        for name, s in (("joe", joe), ("young", young), ("deep", deep))
    }
    assert f0["young"] > f0["joe"] * 1.08
    assert f0["deep"] < f0["joe"] * 0.93
    assert abs(young.duration_s - joe.duration_s) < 0.15 * joe.duration_s


def test_speed_and_pitch_delivery(engine: PiperEngine) -> None:
    base = engine.synthesize(TEXT, "en-joe", Delivery())
    fast = engine.synthesize(TEXT, "en-joe", Delivery(speed=1.3))
    high = engine.synthesize(TEXT, "en-joe", Delivery(pitch_semitones=3.0))
    assert fast.duration_s < base.duration_s * 0.9
    ratio = voice_stats(high.samples, 22_050).f0_median_hz / voice_stats(base.samples, 22_050).f0_median_hz
    assert 1.1 < ratio < 1.3  # three semitones = x1.19


def test_unknown_voice(engine: PiperEngine) -> None:
    with pytest.raises(EngineError, match="no voice 'nobody'"):
        engine.synthesize(TEXT, "nobody", Delivery())


def test_derived_voices_move_pitch_and_formants_independently(engine: PiperEngine) -> None:
    joe = voice_stats(engine.synthesize(TEXT, "en-joe", Delivery()).samples, 22_050)
    woman = voice_stats(engine.synthesize(TEXT, "en-joe-woman", Delivery()).samples, 22_050)
    robot = voice_stats(engine.synthesize(TEXT, "en-joe-robot", Delivery()).samples, 22_050)
    # Pitch up 2x (12 semitones) with a brighter spectrum: a female voice, not a sped-up tape.
    assert 10.5 < woman.pitch_distance_semitones(joe) < 13.5
    assert woman.centroid_hz > joe.centroid_hz * 1.1
    assert woman.timbre_distance(joe) > 1.0
    # The machine voice is a monotone.
    assert robot.f0_spread_semitones < 0.5 < joe.f0_spread_semitones
    assert abs(robot.f0_median_hz - 105) < 6


def test_voice_token_follows_the_recipe() -> None:
    spec = next(s for s in PIPER_VOICES if s.info.id == "en-joe-young")
    stock, retuned = PiperEngine(), PiperEngine(voices=(replace(spec, tract_ratio=1.2),))
    assert stock.voice_token("en-joe-young") == PiperEngine().voice_token("en-joe-young")
    assert stock.voice_token("en-joe-young") != retuned.voice_token("en-joe-young")
    assert stock.voice_token("en-joe") != stock.voice_token("en-joe-young")
