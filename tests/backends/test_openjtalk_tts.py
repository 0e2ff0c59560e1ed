"""The Open JTalk (HTS Mei) engine: real, fast, deterministic Japanese synthesis and its variants."""

from __future__ import annotations

import time

import numpy as np

from comic_narrator.backends.openjtalk_tts import OpenJTalkEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.dsp.voice_stats import voice_stats

JA = "明日の会議は、午後三時から始まります。"


def test_mei_speaks_fast_and_deterministically() -> None:
    engine = OpenJTalkEngine()
    engine.synthesize("はい。", "ja-mei", Delivery())  # first call loads the dictionary
    start = time.process_time()
    speech = engine.synthesize(JA, "ja-mei", Delivery())
    cpu_s = time.process_time() - start
    assert speech.sample_rate_hz == 48_000
    assert 1.5 < speech.duration_s < 6.0
    assert float(np.sqrt(np.mean(speech.samples**2))) > 0.01
    assert cpu_s / speech.duration_s < 0.4
    assert np.array_equal(speech.samples, engine.synthesize(JA, "ja-mei", Delivery()).samples)


def test_variants_differ() -> None:
    engine = OpenJTalkEngine()
    mei = voice_stats(engine.synthesize(JA, "ja-mei", Delivery()).samples, 48_000)
    man = voice_stats(engine.synthesize(JA, "ja-mei-man", Delivery()).samples, 48_000)
    assert man.f0_median_hz < mei.f0_median_hz * 0.75
    assert man.centroid_hz < mei.centroid_hz


def test_every_mei_voice_is_distinct_and_the_machine_is_a_monotone() -> None:
    engine = OpenJTalkEngine()
    text = "駅までの道を教えてください。この本はとても面白かったです。"
    stats = {
        info.id: voice_stats(engine.synthesize(text, info.id, Delivery()).samples, 48_000) for info in engine.voices()
    }
    assert len(stats) >= 9
    for a, sa in stats.items():
        for b, sb in stats.items():
            if a < b:
                assert sa.pitch_distance_semitones(sb) >= 1.0 or sa.timbre_distance(sb) >= 0.4, (a, b)
    assert stats["ja-mei-robot"].f0_spread_semitones < 0.5 < stats["ja-mei"].f0_spread_semitones
    assert stats["ja-mei-ogre"].f0_median_hz < stats["ja-mei-man"].f0_median_hz < stats["ja-mei"].f0_median_hz
    narrators = [info.id for info in engine.voices() if info.narrator]
    assert narrators == ["ja-mei-narrator"]
