"""Kokoro's emotion blends, rule by rule on the shipped measures: the partners docs/voices.md ("Emotion blends")
names for every speaker, the spread units it gives, which grades may lend a style, and a speaker with no
measures."""

from __future__ import annotations

import pytest

from comic_narrator.artifacts import Emotion
from comic_narrator.backends.kokoro_blend import (
    EMOTION_RULES,
    SPEAKER_MEASURES,
    SPREAD_ALPHA_DB,
    SPREAD_HNR_DB,
    SPREAD_SEMITONES,
    choose_partner,
    good_partner,
    style_blend,
)
from comic_narrator.backends.kokoro_voices import speaker_grades

# docs/voices.md, in its own words: "excited US women borrow from jessica, US men from fenrir, UK women from alice,
# lewis from fable; scared US women from heart, everyone else as for excited; whispering US women from nicole
# (kore for bella), US men from puck (onyx for echo), UK women from lily, fable from lewis", and its Japanese
# table (tebukuro lends to the other women when excited or scared, gongitsune when whispering). Each entry:
# (the partner of each accent-and-gender group, the exceptions, the speakers it names as getting no blend).
DOCUMENTED: dict[Emotion, tuple[dict[str, str], dict[str, str], set[str]]] = {
    "excited": (
        {"af": "af_jessica", "am": "am_fenrir", "bf": "bf_alice", "bm": "bm_fable", "jf": "jf_tebukuro"},
        {},
        {"af_jessica", "am_fenrir", "am_eric", "am_santa", "bf_alice", "bm_fable", "bm_daniel", "bm_george"}
        | {"jf_tebukuro", "jm_kumo"},
    ),
    "scared": (
        {"af": "af_heart", "am": "am_fenrir", "bf": "bf_alice", "bm": "bm_fable", "jf": "jf_tebukuro"},
        {},
        {"af_jessica", "af_heart", "af_nicole", "am_fenrir", "am_eric", "am_santa", "bf_alice", "bm_fable"}
        | {"bm_daniel", "bm_george", "jf_tebukuro", "jm_kumo"},
    ),
    "whisper": (
        {"af": "af_nicole", "am": "am_puck", "bf": "bf_lily", "bm": "bm_lewis", "jf": "jf_gongitsune"},
        {"af_bella": "af_kore", "am_echo": "am_onyx"},
        {"af_aoede", "af_kore", "af_nicole", "am_puck", "am_onyx", "bf_lily", "bm_lewis", "bm_daniel", "bm_george"}
        | {"jf_gongitsune", "jm_kumo"},
    ),
}


@pytest.mark.parametrize("emotion", sorted(DOCUMENTED))
def test_every_speaker_borrows_from_the_partner_the_docs_name(emotion: Emotion) -> None:
    groups, exceptions, alone = DOCUMENTED[emotion]
    expected = {
        speaker: None if speaker in alone else exceptions.get(speaker, groups[speaker[:2]])
        for speaker in SPEAKER_MEASURES
    }
    chosen = {
        speaker: choose_partner(speaker, EMOTION_RULES[emotion], SPEAKER_MEASURES, speaker_grades())
        for speaker in SPEAKER_MEASURES
    }
    assert chosen == expected


def test_differences_count_in_the_documented_units() -> None:
    # docs/voices.md: "F0 2.8 semitones, alpha ratio 2.1 dB, harmonicity 2.4 dB", taken over the English speakers
    # of each gender only.
    assert (round(SPREAD_SEMITONES, 1), round(SPREAD_ALPHA_DB, 1), round(SPREAD_HNR_DB, 1)) == (2.8, 2.1, 2.4)


def test_speakers_graded_d_or_better_lend_their_style() -> None:
    assert [good_partner(grade) for grade in ("A", "B-", "C+", "D+", "D")] == [True] * 5
    assert [good_partner(grade) for grade in ("D-", "F+", "F", None)] == [False] * 4


def test_a_speaker_with_no_measures_gets_no_partner() -> None:
    # A style outside the measured table (a speaker added to Kokoro later) is voiced as it is.
    assert choose_partner("af_newcomer", EMOTION_RULES["excited"], SPEAKER_MEASURES, speaker_grades()) is None
    blend = style_blend({"af_newcomer": 1.0}, "excited", EMOTION_RULES, SPEAKER_MEASURES, speaker_grades())
    assert blend is None
