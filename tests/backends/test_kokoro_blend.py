"""Kokoro's emotion blends: the partner rule, the mixing, the cache key, and real lines that move as intended."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from comic_narrator.artifacts import Emotion
from comic_narrator.backends.kokoro_blend import (
    EMOTION_RULES,
    SPEAKER_MEASURES,
    StyleBlend,
    choose_partner,
    good_partner,
    mix_styles,
    style_blend,
)
from comic_narrator.backends.kokoro_tts import KokoroEngine
from comic_narrator.backends.kokoro_voices import KOKORO_VOICES, speaker_grades
from comic_narrator.backends.protocols import Delivery, Speech
from comic_narrator.config import VoiceConfig
from comic_narrator.dsp.voice_stats import VoiceStats, f0_track, voice_stats
from comic_narrator.voice.delivery import EMOTION_SHADES
from comic_narrator.voice.voicebank import VoiceBank

EN = "The storm rolled over the hills, and nobody in the village slept that night."
JA = "嵐が丘を越えていき、その夜は村の誰も眠れなかった。"
SPEAKER_IDS = {
    next(iter(spec.styles)): spec.info.id
    for spec in KOKORO_VOICES
    if spec.info.derived_from is None and len(spec.styles) == 1
}
"""Kokoro style -> its recorded speaker's voice id (``af_heart`` -> ``en-heart``, ``jf_alpha`` -> ``ja-alpha``)."""


def _blend(styles: dict[str, float], emotion: Emotion, language: str = "en") -> StyleBlend | None:
    return style_blend(styles, emotion, EMOTION_RULES, SPEAKER_MEASURES, speaker_grades(), language)


def test_every_speaker_is_measured_and_graded() -> None:
    assert set(SPEAKER_MEASURES) == set(speaker_grades()) == set(SPEAKER_IDS)


@pytest.mark.parametrize("emotion", sorted(EMOTION_RULES))
def test_partners_share_accent_and_gender_and_move_the_intended_way(emotion: Emotion) -> None:
    rule = EMOTION_RULES[emotion]
    grades = speaker_grades()
    blended = 0
    for speaker in SPEAKER_MEASURES:
        partner = choose_partner(speaker, rule, SPEAKER_MEASURES, grades)
        if partner is None:
            continue
        blended += 1
        assert partner != speaker and partner[:2] == speaker[:2] and good_partner(grades[partner])
        mine, theirs = SPEAKER_MEASURES[speaker], SPEAKER_MEASURES[partner]
        if emotion == "whisper":
            assert theirs.alpha_db < mine.alpha_db  # softer
        else:
            assert theirs.f0_hz > mine.f0_hz  # higher
    # Most speakers have someone to borrow from; the group's extremes (the highest, the softest) do not.
    assert blended >= len(SPEAKER_MEASURES) // 2


def test_only_single_speakers_of_the_language_blend_and_only_for_blending_emotions() -> None:
    assert _blend({"af_bella": 1.0}, "excited") is not None
    assert _blend({"af_bella": 1.0}, "neutral") is None
    assert _blend({"af_bella": 1.0}, "angry") is None
    japanese = _blend({"jf_alpha": 1.0}, "excited", "ja")
    assert japanese is not None and japanese.partner.startswith("jf_")
    assert _blend({"jf_alpha": 1.0}, "excited") is None  # a Japanese speaker reading English: as it was
    assert _blend({"af_bella": 1.0}, "excited", "ja") is None
    assert _blend({"jm_kumo": 1.0}, "excited", "ja") is None  # Kokoro's only Japanese man: nobody to borrow from
    assert _blend({"af_bella": 0.5, "af_heart": 0.5}, "excited") is None
    # A voice re-timbred from a speaker (the boy made from af_kore) borrows as its source does.
    assert _blend({"af_kore": 1.0}, "excited") == _blend({"af_kore": 1.0}, "excited")


def test_mixing_weights_each_half_separately() -> None:
    rng = np.random.default_rng(0)
    own = rng.standard_normal((510, 1, 256)).astype(np.float32)
    partner = rng.standard_normal((510, 1, 256)).astype(np.float32)
    mixed = mix_styles(own, partner, StyleBlend("x", timbre_weight=0.25, prosody_weight=0.5))
    assert mixed.dtype == np.float32 and mixed.shape == own.shape
    np.testing.assert_allclose(mixed[..., :128], 0.75 * own[..., :128] + 0.25 * partner[..., :128], atol=1e-6)
    np.testing.assert_allclose(mixed[..., 128:], 0.5 * own[..., 128:] + 0.5 * partner[..., 128:], atol=1e-6)
    assert np.array_equal(mix_styles(own, partner, StyleBlend("x", 0.0, 0.0)), own)


def test_cache_key_names_the_blend_and_leaves_other_lines_alone() -> None:
    engine = KokoroEngine()
    bank = VoiceBank(VoiceConfig(), engines=[engine])
    neutral, excited = Delivery(), Delivery(emotion="excited")
    # Lines that do not blend keep the key they had before blends existed.
    assert bank.engine_version("en-heart", neutral) == bank.engine_version("en-heart")
    assert bank.engine_version("en-heart", Delivery(emotion="angry")) == bank.engine_version("en-heart")
    assert bank.engine_version("en-alpha", excited) == bank.engine_version("en-alpha")
    assert bank.engine_version("ja-kumo", excited) == bank.engine_version("ja-kumo")
    japanese = engine.blend_for("ja-alpha", excited)
    assert japanese is not None and japanese.token() in bank.engine_version("ja-alpha", excited)
    blend = engine.blend_for("en-michael", excited)
    assert blend is not None and blend.token() in bank.engine_version("en-michael", excited)
    # Another weight is another key.
    heavier = {**EMOTION_RULES, "excited": replace(EMOTION_RULES["excited"], prosody_weight=0.5)}
    other = VoiceBank(VoiceConfig(), engines=[KokoroEngine(emotion_rules=heavier)])
    assert other.engine_version("en-michael", excited) != bank.engine_version("en-michael", excited)
    assert other.engine_version("en-michael", neutral) == bank.engine_version("en-michael", neutral)


@pytest.fixture(scope="module")
def engine() -> Iterator[KokoroEngine]:
    with KokoroEngine() as loaded:
        yield loaded


def _mean_f0_semitones(speech: Speech) -> float:
    f0 = f0_track(speech.samples, speech.sample_rate_hz, 0.01)
    return float(np.mean(12 * np.log2(f0[f0 > 0] / 100.0)))


def _stats(speech: Speech) -> VoiceStats:
    return voice_stats(speech.samples, speech.sample_rate_hz)


def test_neutral_lines_are_bit_identical_to_the_unblended_engine(engine: KokoroEngine) -> None:
    unblended = KokoroEngine(emotion_rules={})
    with unblended:
        before = unblended.synthesize(EN, "en-michael", Delivery(emotion="excited")).samples
    assert np.array_equal(engine.synthesize(EN, "en-michael", Delivery()).samples, before)
    assert np.array_equal(engine.synthesize(EN, "en-michael", Delivery(emotion="angry")).samples, before)


@pytest.mark.parametrize(
    ("voice_id", "emotion", "text"),
    [("en-michael", "excited", EN), ("en-kore", "scared", EN), ("ja-alpha", "excited", JA)],
)
def test_blended_line_moves_up_and_stays_its_speaker(
    engine: KokoroEngine, voice_id: str, emotion: Emotion, text: str
) -> None:
    blend = engine.blend_for(voice_id, Delivery(emotion=emotion))
    assert blend is not None
    partner_id = SPEAKER_IDS[blend.partner]
    neutral = engine.synthesize(text, voice_id, Delivery())
    blended = engine.synthesize(text, voice_id, Delivery(emotion=emotion))
    partner = engine.synthesize(text, partner_id, Delivery())
    # Higher: the partner speaks higher, and a third of its prosody moves the line up by a fraction of that.
    rise = _mean_f0_semitones(blended) - _mean_f0_semitones(neutral)
    gap = _mean_f0_semitones(partner) - _mean_f0_semitones(neutral)
    assert 0.3 < rise < gap, (rise, gap)
    # Still the speaker: nearer its own neutral reading than the partner's, in timbre.
    own, theirs = _stats(blended).timbre_distance(_stats(neutral)), _stats(blended).timbre_distance(_stats(partner))
    assert own < theirs, (own, theirs)
    # The whole delivery (speed, pitch, gain, breath) still applies on top, as it did before.
    shade = EMOTION_SHADES[emotion]
    full = engine.synthesize(text, voice_id, replace(shade, emotion=emotion))
    unblended = engine.synthesize(text, voice_id, shade)
    assert _mean_f0_semitones(full) > _mean_f0_semitones(unblended) > _mean_f0_semitones(neutral)
