"""The order casting offers voices in at ``--voice-quality natural``: recorded speakers first, best and distinct."""

from __future__ import annotations

from comic_narrator.backends.protocols import VoiceInfo

GRADES = ("A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-", "F+", "F", "F-")
"""Kokoro's grades, best first (its VOICES.md, as kokoro-js ships them)."""

LEAD_ORDER: dict[str, tuple[str, ...]] = {
    "en": (
        # Women: the best grades, each next one clearly apart from those before it (mel-cepstral timbre distance
        # with benchmarks/voices_quality.py; Kokoro's speakers sit 0.7-2.7 apart): heart (A); emma (B-, British,
        # 1.6 from heart); bella (A-, 0.95 from heart but 2.0 from emma); nicole (B-, soft, 2.1 from all three).
        "en-heart",
        "en-emma",
        "en-bella",
        "en-nicole",
        # Men (every one C+ or below): michael narrates at natural, so the first male lead is fenrir (1.2 from
        # michael), then george (British, 1.1-1.2 from both), fable (British storyteller, 2.1), puck.
        "en-michael",
        "en-fenrir",
        "en-george",
        "en-fable",
        "en-puck",
    )
}


def grade_rank(grade: str | None) -> int:
    """0 for the best grade; ungraded voices after every graded one."""
    return GRADES.index(grade) if grade in GRADES else len(GRADES)


def _rank(voice: VoiceInfo, by_id: dict[str, VoiceInfo]) -> tuple[int, int]:
    if voice.tier != "natural":
        return (3, 0)
    source = by_id.get(voice.derived_from) if voice.derived_from else None
    if source is not None and source.language != voice.language:
        return (4, 0)  # another language's speaker reading this one: accented, the last resort
    if voice.derived_from is not None:
        return (2, 0)  # children and elders made from a natural voice: reached by age, not by default
    leads = LEAD_ORDER.get(voice.language, ())
    if voice.id in leads:
        return (0, leads.index(voice.id))
    return (1, grade_rank(voice.grade))


def natural_first(voices: list[VoiceInfo], by_id: dict[str, VoiceInfo]) -> list[VoiceInfo]:
    """``voices`` reordered (stably): the lead order, the other recorded natural speakers by grade, natural voices
    derived from them, the fast tier, and last another language's speakers reading this one."""
    return sorted(voices, key=lambda v: _rank(v, by_id))
