"""The order casting offers voices in at natural quality, rule by rule, on the shipped voice table's kinds."""

from __future__ import annotations

from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.voice.voice_preference import GRADES, LEAD_ORDER, grade_rank, natural_first


def _voice(
    voice_id: str,
    language: str = "en",
    tier: str = "natural",
    derived_from: str | None = None,
    grade: str | None = None,
) -> VoiceInfo:
    return VoiceInfo(voice_id, language, "female", "adult", "kokoro", tier=tier, derived_from=derived_from, grade=grade)  # type: ignore[arg-type]


def test_grades_rank_best_first_and_ungraded_last() -> None:
    assert grade_rank("A+") == 0 < grade_rank("A") < grade_rank("B-") < grade_rank("C+") < grade_rank("F-")
    assert grade_rank(None) == grade_rank("Z") == len(GRADES) > grade_rank("F-")


def test_leads_then_recorded_by_grade_then_made_voices_then_fast_then_accented() -> None:
    voices = [
        _voice("en-joe", tier="fast"),
        _voice("en-alpha", derived_from="ja-alpha", grade=None),  # a Japanese speaker reading English
        _voice("en-bella-girl", derived_from="en-bella"),
        _voice("en-sky", grade="C-"),
        _voice("en-nicole", grade="B-"),
        _voice("en-river", grade="D"),
        _voice("en-heart", grade="A"),
        _voice("en-jessica", grade="C+"),
        _voice("en-emma", grade="B-"),
        _voice("en-unknown"),
    ]
    by_id = {v.id: v for v in voices} | {"ja-alpha": _voice("ja-alpha", language="ja", grade="C+")}
    order = [v.id for v in natural_first(voices, by_id)]
    leads = [voice for voice in LEAD_ORDER["en"] if voice in by_id]
    assert order[: len(leads)] == leads == ["en-heart", "en-emma", "en-nicole"]
    assert order[len(leads) :] == [
        "en-jessica",  # the other recorded speakers by grade: C+, C-, D, then the ungraded one
        "en-sky",
        "en-river",
        "en-unknown",
        "en-bella-girl",  # made from a recorded speaker of the language
        "en-joe",  # the fast tier
        "en-alpha",  # another language's speaker: the last resort
    ]


def test_equals_keep_their_order_and_a_source_outside_the_table_is_not_an_accent() -> None:
    made = [
        _voice("ja-kumo-michael", "ja", derived_from="ja-kumo"),
        _voice("ja-kumo-deep", "ja", derived_from="ja-kumo"),
    ]
    fast = [_voice("ja-mei", "ja", tier="fast"), _voice("ja-mei-man", "ja", tier="fast", derived_from="ja-mei")]
    # The sources are not among the voices given: what the voice is made from is not known to be another language.
    assert [v.id for v in natural_first(fast + made, {})] == ["ja-kumo-michael", "ja-kumo-deep", "ja-mei", "ja-mei-man"]
