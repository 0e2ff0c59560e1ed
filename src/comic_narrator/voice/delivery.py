"""Delivery: a line's emotion and kind plus its cast pins become speed, pitch, gain and sampling settings."""

from __future__ import annotations

from comic_narrator.artifacts import CastMember, Emotion, ScriptLine, TextKind
from comic_narrator.backends.protocols import Delivery
from comic_narrator.config import VoiceConfig

Shade = Delivery
"""A relative change of delivery in the same fields: speed multiplies, pitch and gain add, sampling is set."""


EMOTION_SHADES: dict[Emotion, Shade] = {
    "neutral": Shade(),
    "excited": Shade(speed=1.08, pitch_semitones=1.0, gain_db=1.5, temperature=0.8, top_p=0.85),
    "angry": Shade(speed=1.05, pitch_semitones=0.5, gain_db=3.0, temperature=0.8, top_p=0.85),
    "sad": Shade(speed=0.9, pitch_semitones=-1.0, gain_db=-2.0, temperature=0.6, top_p=0.75),
    "scared": Shade(speed=1.1, pitch_semitones=1.5, gain_db=-1.0, temperature=0.75, top_p=0.8, breath=0.25),
    "whisper": Shade(speed=0.92, pitch_semitones=-0.5, gain_db=-6.0, temperature=0.6, top_p=0.7, breath=1.0),
    "calm": Shade(speed=0.95, pitch_semitones=-0.3, gain_db=-1.0, temperature=0.6, top_p=0.75),
}
"""Why these numbers: small steps (a semitone, a few dB) read as emotion without changing who speaks."""

KIND_SHADES: dict[TextKind, Shade] = {
    "speech": Shade(),
    "shout": Shade(speed=1.04, pitch_semitones=1.0, gain_db=3.0),
    "caption": Shade(speed=0.97),
    "sound": Shade(speed=1.0, gain_db=2.0),
}

SPEED_RANGE = (0.5, 2.0)
PITCH_RANGE_SEMITONES = (-8.0, 8.0)
GAIN_RANGE_DB = (-12.0, 9.0)


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


def delivery_for(line: ScriptLine, member: CastMember, config: VoiceConfig) -> Delivery:
    """The delivery of one line: emotion and kind shades on top of the member's pins and the global speed."""
    emotion = EMOTION_SHADES.get(line.emotion, Shade())
    kind = KIND_SHADES.get(line.kind, Shade())
    return Delivery(
        speed=round(_clamp(emotion.speed * kind.speed * member.speed * config.speed, SPEED_RANGE), 3),
        pitch_semitones=round(
            _clamp(member.pitch_semitones + emotion.pitch_semitones + kind.pitch_semitones, PITCH_RANGE_SEMITONES),
            2,
        ),
        gain_db=round(_clamp(emotion.gain_db + kind.gain_db, GAIN_RANGE_DB), 1),
        temperature=emotion.temperature,
        top_p=emotion.top_p,
        breath=max(emotion.breath, kind.breath),
        emotion=line.emotion,
    )
