"""The Kokoro voice table: Kokoro-82M's Japanese and English speakers as voice ids, and the voices made from them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from comic_narrator.backends.kokoro_english import english_grades, espeak_voice_for
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.dsp.voice_shift import VoiceShift

Gender = Literal["male", "female", "unknown"]
Age = Literal["child", "young", "adult", "old", "unknown"]


@dataclass(frozen=True)
class KokoroVoiceSpec:
    """One voice: a weighted blend of the shipped style vectors, optionally re-timbred."""

    info: VoiceInfo
    styles: dict[str, float] = field(default_factory=dict)
    tract_ratio: float = 1.0
    base_speed: float = 1.0
    shift: VoiceShift | None = None
    espeak_voice: str = "en-us"
    """The espeak voice that phonemises this voice's English (``en`` for British speakers)."""
    timbre_from: str | None = None
    """Another speaker whose timbre half of the style replaces this voice's own (a re-timbred voice): the
    decoder's half, so the voice keeps its own speaker's phonemes and, but for ``timbre_prosody``, prosody."""
    timbre_prosody: float = 0.0
    """Share of ``timbre_from``'s prosody half mixed in as well (it moves the pitch and the tempo)."""


def _spec(
    voice_id: str,
    language: Literal["en", "ja"],
    gender: Gender,
    age: Age,
    description: str,
    styles: dict[str, float],
    tract_ratio: float = 1.0,
    base_speed: float = 1.0,
    narrator: bool = False,
    shift: VoiceShift | None = None,
    nature: Literal["human", "creature", "machine"] = "human",
    derived_from: str | None = None,
    grade: str | None = None,
) -> KokoroVoiceSpec:
    info = VoiceInfo(
        voice_id, language, gender, age, "kokoro", description, narrator, nature, "natural", derived_from, grade
    )
    return KokoroVoiceSpec(info, styles, tract_ratio, base_speed, shift, espeak_voice_for(next(iter(styles))))


JAPANESE_GRADES = {"jf_alpha": "C+", "jf_gongitsune": "C", "jf_tebukuro": "C", "jf_nezumi": "C-", "jm_kumo": "C-"}
"""Kokoro's overall grade for its Japanese speakers, from the model's own voice list (VOICES.md of Kokoro-82M
v1.0); kokoro-js, where the English grades come from, ships no Japanese speakers."""


def speaker_grades() -> dict[str, str]:
    """Kokoro's grade of every speaker this package ships, English (kokoro-js's table) and Japanese."""
    return {**english_grades(), **JAPANESE_GRADES}


def _japanese(
    voice_id: str, gender: Gender, age: Age, note: str, style: str, narrator: bool = False
) -> KokoroVoiceSpec:
    grade = JAPANESE_GRADES[style]
    return _spec(
        voice_id,
        "ja",
        gender,
        age,
        f"Kokoro {style}: {note} (grade {grade})",
        {style: 1.0},
        narrator=narrator,
        grade=grade,
    )


RETIMBRE_PROSODY = 0.35
"""How much of the timbre speaker's prosody a re-timbred Japanese voice takes: enough to give each his own pitch
(kumo speaks at 92 Hz; with 0.35 his five spread over 91-114 Hz, with none over 93-100), no more than the
emotion blends take, and it kept whisper-base's character error rate within the Japanese speakers' own
(docs/voices.md)."""


def _retimbred(
    voice_id: str, speaker: str, source: str, timbre: str, gender: Gender, age: Age, note: str
) -> KokoroVoiceSpec:
    """A Japanese speaker (``speaker``, whose voice is ``source``) with an English speaker's timbre: another
    person speaking the same Japanese, not the speaker re-pitched (1.2-1.9 apart in timbre, where kumo's
    vocal-tract shifts stay within 0.95)."""
    base = _spec(
        voice_id,
        "ja",
        gender,
        age,
        f"{speaker}'s Japanese with {timbre}'s timbre: {note}",
        {speaker: 1.0},
        derived_from=source,
    )
    return replace(base, timbre_from=timbre, timbre_prosody=RETIMBRE_PROSODY)


def _kumo_retimbred(voice_id: str, timbre: str, age: Age, note: str) -> KokoroVoiceSpec:
    """Kokoro's only Japanese man with an English man's timbre."""
    return _retimbred(voice_id, "jm_kumo", "ja-kumo", timbre, "male", age, note)


JAPANESE_VOICES: tuple[KokoroVoiceSpec, ...] = (
    _japanese("ja-alpha", "female", "adult", "clear adult woman", "jf_alpha"),
    _japanese("ja-gongitsune", "female", "young", "soft young woman", "jf_gongitsune", narrator=True),
    _japanese("ja-nezumi", "female", "child", "small, bright girl", "jf_nezumi"),
    _japanese("ja-tebukuro", "female", "young", "gentle storyteller", "jf_tebukuro"),
    _japanese("ja-kumo", "male", "adult", "calm adult man", "jm_kumo", narrator=True),
    # Before kumo's own shifts, in the order casting offers them to a second, third, ... man: the furthest from
    # kumo first.
    _kumo_retimbred("ja-kumo-michael", "am_michael", "adult", "a clear, even man"),
    _kumo_retimbred("ja-kumo-fenrir", "am_fenrir", "adult", "a brighter, stronger man"),
    _kumo_retimbred("ja-kumo-fable", "bm_fable", "adult", "a slower, softer man"),
    _kumo_retimbred("ja-kumo-onyx", "am_onyx", "adult", "a deep man"),
    _kumo_retimbred("ja-kumo-eric", "am_eric", "young", "a young man"),
    # Women after Kokoro's four, from alpha (the clearest of them): the two whisper base heard as well as them.
    _retimbred("ja-alpha-kore", "jf_alpha", "ja-alpha", "af_kore", "female", "adult", "a lower, steady woman"),
    _retimbred("ja-alpha-sarah", "jf_alpha", "ja-alpha", "af_sarah", "female", "adult", "a brighter woman"),
    _spec(
        "ja-alpha-elder",
        "ja",
        "female",
        "old",
        "jf_alpha, lower, breathy, shaking, slower: an old woman",
        {"jf_alpha": 1.0},
        tract_ratio=0.96,
        base_speed=0.9,
        shift=VoiceShift(f0_ratio=0.88, breathiness=0.1, tremolo_depth=0.04),
        derived_from="ja-alpha",
    ),
    _spec(
        "ja-kumo-deep",
        "ja",
        "male",
        "old",
        "jm_kumo, vocal tract lengthened: older, heavier man",
        {"jm_kumo": 1.0},
        tract_ratio=0.88,
        base_speed=0.95,
        derived_from="ja-kumo",
    ),
    _spec(
        "ja-kumo-young",
        "ja",
        "male",
        "young",
        "jm_kumo, vocal tract shortened: a boy",
        {"jm_kumo": 1.0},
        tract_ratio=1.14,
        derived_from="ja-kumo",
    ),
    _spec(
        "ja-kumo-robot",
        "ja",
        "unknown",
        "adult",
        "jm_kumo on a flat 110 Hz monotone: a machine",
        {"jm_kumo": 1.0},
        shift=VoiceShift(flat_f0_hz=110.0),
        nature="machine",
        derived_from="ja-kumo",
    ),
    _spec(
        "ja-kumo-ogre",
        "ja",
        "male",
        "adult",
        "jm_kumo re-voiced by PSOLA: pitch x0.7, formants x0.82: a monster",
        {"jm_kumo": 1.0},
        base_speed=0.92,
        shift=VoiceShift(f0_ratio=0.7, formant_ratio=0.82, breathiness=0.15),
        nature="creature",
        derived_from="ja-kumo",
    ),
)

ENGLISH_SPEAKERS: tuple[tuple[str, Gender, Age, str], ...] = (
    # (Kokoro style, gender, age, what it sounds like). Gender and accent are Kokoro's; the age is ours, from the
    # measured median F0 and the speaker's name (Kokoro publishes none).
    ("af_heart", "female", "adult", "warm, expressive US woman"),
    ("af_bella", "female", "young", "bright, energetic young US woman"),
    ("af_nicole", "female", "adult", "soft, close-miked US woman"),
    ("af_aoede", "female", "adult", "US woman"),
    ("af_kore", "female", "adult", "low, steady US woman"),
    ("af_sarah", "female", "adult", "US woman"),
    ("af_alloy", "female", "adult", "low US woman"),
    ("af_nova", "female", "adult", "US woman"),
    ("af_sky", "female", "adult", "light US woman"),
    ("af_jessica", "female", "young", "high young US woman"),
    ("af_river", "female", "adult", "US woman"),
    ("am_michael", "male", "adult", "calm US man"),
    ("am_fenrir", "male", "adult", "strong US man"),
    ("am_puck", "male", "adult", "lively US man"),
    ("am_echo", "male", "adult", "US man"),
    ("am_eric", "male", "young", "light young US man"),
    ("am_liam", "male", "young", "young US man"),
    ("am_onyx", "male", "adult", "deep US man"),
    ("am_santa", "male", "old", "jolly old US man"),
    ("am_adam", "male", "adult", "US man (weakest of Kokoro's voices)"),
    ("bf_emma", "female", "adult", "clear UK woman"),
    ("bf_isabella", "female", "adult", "UK woman"),
    ("bf_alice", "female", "young", "high young UK woman"),
    ("bf_lily", "female", "young", "young UK woman"),
    ("bm_george", "male", "old", "mature UK man"),
    ("bm_fable", "male", "adult", "UK storyteller"),
    ("bm_lewis", "male", "old", "deep, older UK man"),
    ("bm_daniel", "male", "adult", "UK man"),
)


def english_id(style: str) -> str:
    """``af_heart`` -> ``en-heart``."""
    return "en-" + style.split("_", 1)[1]


NARRATORS = frozenset({"af_heart", "am_michael", "bm_fable", "bf_emma"})
"""Speakers flagged as narrators (the default natural narrator is chosen in casting)."""


def _english_speakers() -> tuple[KokoroVoiceSpec, ...]:
    grades = english_grades()
    return tuple(
        _spec(
            english_id(style),
            "en",
            gender,
            age,
            f"Kokoro {style}: {note}" + (f" (grade {grades[style]})" if style in grades else ""),
            {style: 1.0},
            narrator=style in NARRATORS,
            grade=grades.get(style),
        )
        for style, gender, age, note in ENGLISH_SPEAKERS
    )


def _elder(
    style: str, gender: Gender, who: str, f0_ratio: float, breathiness: float, tremolo_depth: float, speed: float
) -> KokoroVoiceSpec:
    """An old voice from a natural speaker: slightly longer tract, lower, breathy, shaking, slower."""
    return _spec(
        english_id(style) + "-elder",
        "en",
        gender,
        "old",
        f"{style}, lower, breathy, shaking, slower: {who}",
        {style: 1.0},
        tract_ratio=0.96,
        base_speed=speed,
        shift=VoiceShift(f0_ratio=f0_ratio, breathiness=breathiness, tremolo_depth=tremolo_depth),
        derived_from=english_id(style),
    )


ENGLISH_DERIVED: tuple[KokoroVoiceSpec, ...] = (
    # Children and the old from natural voices: a shorter vocal tract (resampling after slower synthesis, so the
    # tempo stays) for children; lower pitch (PSOLA), breath and tremolo for age.
    _spec(
        "en-bella-girl",
        "en",
        "female",
        "child",
        "af_bella with a child's vocal tract (x1.18): a girl",
        {"af_bella": 1.0},
        tract_ratio=1.18,
        derived_from="en-bella",
    ),
    _spec(
        "en-kore-boy",
        "en",
        "male",
        "child",
        "af_kore (a low woman's voice) with a shorter vocal tract (x1.12): a boy",
        {"af_kore": 1.0},
        tract_ratio=1.12,
        derived_from="en-kore",
    ),
    _elder("af_sarah", "female", "an old woman", f0_ratio=0.92, breathiness=0.1, tremolo_depth=0.04, speed=0.9),
    _elder("am_michael", "male", "an old man", f0_ratio=0.9, breathiness=0.12, tremolo_depth=0.05, speed=0.88),
)

ACCENTED_ENGLISH: tuple[KokoroVoiceSpec, ...] = (
    # Kokoro's Japanese speakers reading English phonemes: accented. Kept so cast files naming them still work.
    _spec(
        "en-alpha",
        "en",
        "female",
        "adult",
        "Kokoro jf_alpha speaking English (Japanese accent)",
        {"jf_alpha": 1.0},
        derived_from="ja-alpha",
    ),
    _spec(
        "en-nezumi",
        "en",
        "female",
        "child",
        "Kokoro jf_nezumi speaking English: a girl (Japanese accent)",
        {"jf_nezumi": 1.0},
        derived_from="ja-nezumi",
    ),
    _spec(
        "en-tebukuro",
        "en",
        "female",
        "young",
        "Kokoro jf_tebukuro speaking English (Japanese accent)",
        {"jf_tebukuro": 1.0},
        derived_from="ja-tebukuro",
    ),
)

KOKORO_VOICES: tuple[KokoroVoiceSpec, ...] = JAPANESE_VOICES + _english_speakers() + ENGLISH_DERIVED + ACCENTED_ENGLISH
