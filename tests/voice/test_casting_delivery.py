"""Delivery: emotion and kind shade the cast member's pins and the global speed."""

from __future__ import annotations

from dataclasses import replace

from comic_narrator.artifacts import CastMember, ScriptLine
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.delivery import delivery_for

MEMBER = CastMember(character="a", voice="en-joe", speed=1.1, pitch_semitones=2.0)


def _line(emotion: str = "neutral", kind: str = "speech") -> ScriptLine:
    return ScriptLine.model_validate(
        {"id": "x", "page": 0, "panel": 0, "speaker": "a", "kind": kind, "text": "hi", "emotion": emotion}
    )


def test_neutral_keeps_pins_and_global_speed() -> None:
    d = delivery_for(_line(), MEMBER, VoiceConfig(speed=1.2))
    assert d.speed == round(1.1 * 1.2, 3) and d.pitch_semitones == 2.0 and d.gain_db == 0.0


def test_emotions_move_in_the_expected_direction() -> None:
    config = VoiceConfig()
    neutral = delivery_for(_line(), MEMBER, config)
    angry = delivery_for(_line("angry"), MEMBER, config)
    sad = delivery_for(_line("sad"), MEMBER, config)
    whisper = delivery_for(_line("whisper"), MEMBER, config)
    assert angry.gain_db > neutral.gain_db and angry.temperature > neutral.temperature
    assert sad.speed < neutral.speed and sad.pitch_semitones < neutral.pitch_semitones
    assert whisper.gain_db <= -5


def test_shout_is_louder_and_everything_is_clamped() -> None:
    shout = delivery_for(_line("excited", "shout"), MEMBER, VoiceConfig())
    assert shout.gain_db > 3
    extreme = CastMember(character="a", voice="en-joe", speed=1.9, pitch_semitones=12)
    d = delivery_for(_line("excited", "shout"), extreme, VoiceConfig(speed=2.0))
    assert d.speed == 2.0 and d.pitch_semitones == 8.0


def test_the_emotion_travels_with_the_delivery_but_not_into_the_shared_cache_token() -> None:
    excited = delivery_for(_line("excited"), MEMBER, VoiceConfig())
    assert excited.emotion == "excited" and delivery_for(_line(), MEMBER, VoiceConfig()).emotion == "neutral"
    # Engines that do nothing more with it than the shades keep their keys; Kokoro adds its blend to its own.
    assert excited.cache_token() == replace(excited, emotion="neutral").cache_token()


def test_the_floor_of_every_range_holds_and_the_loudest_line_stays_under_the_gain_ceiling() -> None:
    slow = CastMember(character="a", voice="en-joe", speed=0.6, pitch_semitones=-12)
    d = delivery_for(_line("sad"), slow, VoiceConfig(speed=0.5))
    assert d.speed == 0.5 and d.pitch_semitones == -8.0
    # Angry and shouted adds 3 + 3 dB: under the 9 dB ceiling, kept; a whisper is 6 dB down, within the floor.
    assert delivery_for(_line("angry", "shout"), MEMBER, VoiceConfig()).gain_db == 6.0
    assert delivery_for(_line("whisper"), MEMBER, VoiceConfig()).gain_db == -6.0


def test_a_whisper_breathes_a_caption_is_read_slower_and_speed_and_pitch_are_rounded() -> None:
    whisper = delivery_for(_line("whisper"), MEMBER, VoiceConfig())
    assert whisper.breath == 1.0 and delivery_for(_line(), MEMBER, VoiceConfig()).breath == 0.0
    caption = delivery_for(_line(kind="caption"), MEMBER, VoiceConfig())
    speech = delivery_for(_line(), MEMBER, VoiceConfig())
    assert caption.speed < speech.speed
    odd = CastMember(character="a", voice="en-joe", speed=1.0 / 3, pitch_semitones=1.0 / 3)
    d = delivery_for(_line(), odd, VoiceConfig(speed=2.0))
    assert (d.speed, d.pitch_semitones) == (0.667, 0.33)
