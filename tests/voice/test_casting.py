"""Casting: narrator + a voice per character by prominence, distinct leads, shared extras, cast-file pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.artifacts import BookReading, Character, PageReading, TextRegion
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ArtifactError
from comic_narrator.voice.casting import cast_characters, format_cast

VOICES = [
    VoiceInfo("en-joe", "en", "male", "adult", "piper", narrator=True),
    VoiceInfo("en-joe-deep", "en", "male", "old", "piper"),
    VoiceInfo("en-joe-young", "en", "male", "young", "piper"),
    VoiceInfo("en-alpha", "en", "female", "adult", "kokoro"),
    VoiceInfo("en-joe-girl", "en", "female", "child", "piper"),
    VoiceInfo("en-joe-robot", "en", "unknown", "adult", "piper", nature="machine"),
    VoiceInfo("ja-kumo", "ja", "male", "adult", "kokoro", narrator=True),
    VoiceInfo("ja-alpha", "ja", "female", "adult", "kokoro"),
]


def _reading(speakers: list[str | None], characters: list[Character] | None = None) -> BookReading:
    texts = [
        TextRegion(bbox=(0, 0, 10, 10), kind="caption" if s is None else "speech", text="x", speaker=s, panel=0)
        for s in speakers
    ]
    page = PageReading(
        page=0, width=100, height=100, reading_direction="ltr", panels=[], texts=texts, characters=characters or []
    )
    return BookReading(source="t", lang="en", pages=[page])


def test_prominence_leads_distinct_extras_share() -> None:
    reading = _reading([None, "a", "b", "a", "c", "d", "a", "b", "e", None])
    cast = cast_characters(reading, VOICES, VoiceConfig(), "en")
    by = {m.character: m for m in cast.members}
    assert by["narrator"].voice == "en-joe" and by["narrator"].lines == 2
    assert [m.character for m in cast.members] == ["narrator", "a", "b", "c", "d", "e"]
    assert by["a"].lines == 3 and by["b"].lines == 2
    leads = [by[c].voice for c in ("a", "b", "c")]
    assert len(set(leads)) == 3 and "en-joe" not in leads
    assert all(v.startswith("en-") for v in leads)
    # Neighbours in prominence get different genders where the pool allows it.
    assert by["a"].gender != by["b"].gender
    # Extras share voices from the pool but never the narrator's while the pool has others.
    assert by["d"].voice != "en-joe" and by["e"].voice != "en-joe"
    assert cast.voice_for("unknown-speaker").character == "narrator"
    assert "narrator" in format_cast(cast)


def test_same_input_same_cast() -> None:
    reading = _reading(["a", "b", "c", "a"])
    assert cast_characters(reading, VOICES, VoiceConfig(), "en") == cast_characters(
        reading, VOICES, VoiceConfig(), "en"
    )


def test_japanese_uses_japanese_voices() -> None:
    cast = cast_characters(_reading(["a", "b", None]), VOICES, VoiceConfig(), "ja")
    assert {m.voice for m in cast.members} <= {"ja-kumo", "ja-alpha"}
    assert cast.voice_for("narrator").voice == "ja-kumo"


def test_cast_file_pins(tmp_path: Path) -> None:
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text(
        "narrator: {voice: en-joe-deep, speed: 0.9}\na: {voice: en-alpha, pitch: 2}\nb: en-joe\n", encoding="utf-8"
    )
    cast = cast_characters(_reading(["a", "b", "c"]), VOICES, VoiceConfig(cast_file=cast_file), "en")
    by = {m.character: m for m in cast.members}
    assert by["narrator"].voice == "en-joe-deep" and by["narrator"].speed == 0.9
    assert by["a"].voice == "en-alpha" and by["a"].pitch_semitones == 2.0
    assert by["b"].voice == "en-joe"
    assert by["c"].voice not in {"en-alpha", "en-joe-deep"}


def test_everyone_the_cast_file_does_not_name_is_cast_from_its_star_voices(tmp_path: Path) -> None:
    """`*` lists the voices for every character the file does not pin (a voice server's, so nobody is voiced on
    the CPU by a bundled voice): the narrator included unless pinned, the pins still win."""
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text('a: en-alpha\n"*": [en-joe-young, en-joe-girl]\n', encoding="utf-8")
    reading = _reading([None, "a", "b", "c", "b", "d", None])
    by = {
        m.character: m.voice for m in cast_characters(reading, VOICES, VoiceConfig(cast_file=cast_file), "en").members
    }
    assert by["a"] == "en-alpha"
    assert by["narrator"] == "en-joe-young"  # the first of the list: neither is a narrator voice
    assert {by["b"], by["c"], by["d"]} == {"en-joe-girl"}  # the narrator's voice is not shared while another is
    cast_file.write_text('narrator: en-joe-deep\n"*": [en-alpha, en-joe-girl, ja-alpha]\n', encoding="utf-8")
    by = {
        m.character: m.voice for m in cast_characters(reading, VOICES, VoiceConfig(cast_file=cast_file), "en").members
    }
    assert by["narrator"] == "en-joe-deep"
    assert {by[c] for c in "abcd"} == {"en-alpha", "en-joe-girl"}  # the leads apart, the extras share them
    without = cast_characters(reading, VOICES, VoiceConfig(), "en")
    assert {m.voice for m in without.members} - {"en-alpha", "en-joe-girl", "en-joe-deep"}  # the list is what held


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("a: {voice: nobody}\n", "unknown voice 'nobody'"),
        ("a: {voice: en-joe, sped: 2}\n", "unknown key"),
        ("a: [1, 2]\n", "expected a voice id"),
        ("a: {voice: en-joe, speed: fast}\n", "must be numbers"),
        ("a: {\n", "not valid YAML"),
        ('"*": [en-joe, nobody]\n', "unknown voice 'nobody'"),
        ('"*": {voice: en-joe}\n', "a list of voice ids"),
        ('"*": [ja-alpha]\n', "none of ja-alpha speaks 'en'"),
    ],
)
def test_bad_cast_file_names_the_file(tmp_path: Path, content: str, message: str) -> None:
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text(content, encoding="utf-8")
    with pytest.raises(ArtifactError, match=message) as info:
        cast_characters(_reading(["a"]), VOICES, VoiceConfig(cast_file=cast_file), "en")
    assert str(cast_file) in str(info.value)


def test_attributes_from_the_reader_pick_matching_voices() -> None:
    characters = [
        Character(id="a", name="Ann", gender="female", age="child"),
        Character(id="b", name="Bolt", nature="machine"),
        Character(id="c", name="Gramps", gender="male", age="old"),
    ]
    reading = _reading(["a", "a", "b", "c", "d", "e", "f"], characters)
    by = {m.character: m for m in cast_characters(reading, VOICES, VoiceConfig(), "en").members}
    assert by["a"].voice == "en-joe-girl" and by["a"].age == "child"
    assert by["b"].voice == "en-joe-robot"
    assert by["c"].voice == "en-joe-deep"
    # People of unknown nature never get the machine voice while human voices remain to share.
    assert all(by[x].voice != "en-joe-robot" for x in ("d", "e", "f"))


TIERED = [
    VoiceInfo("ja-kumo", "ja", "male", "adult", "kokoro", narrator=True, tier="natural"),
    VoiceInfo("ja-alpha", "ja", "female", "adult", "kokoro", tier="natural"),
    VoiceInfo("ja-mei-narrator", "ja", "female", "adult", "openjtalk", narrator=True),
    VoiceInfo("ja-mei", "ja", "female", "adult", "openjtalk"),
    VoiceInfo("ja-mei-man", "ja", "male", "adult", "openjtalk"),
]


def test_natural_is_the_default_quality() -> None:
    assert VoiceConfig().quality == "natural"


def test_fast_quality_casts_only_fast_voices() -> None:
    cast = cast_characters(_reading(["a", "b", None]), TIERED, VoiceConfig(quality="fast"), "ja")
    assert cast.voice_for("narrator").voice == "ja-mei-narrator"
    assert {m.voice for m in cast.members} <= {"ja-mei-narrator", "ja-mei", "ja-mei-man"}


def test_natural_quality_prefers_the_neural_voices() -> None:
    cast = cast_characters(_reading(["a", "b", None]), TIERED, VoiceConfig(quality="natural"), "ja")
    assert cast.voice_for("narrator").voice == "ja-kumo"
    assert "ja-alpha" in {m.voice for m in cast.members}


def test_pinned_natural_voice_is_used_at_fast_quality(tmp_path: Path) -> None:
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text("a: {voice: ja-alpha}\n", encoding="utf-8")
    config = VoiceConfig(narrator_voice="ja-kumo", cast_file=cast_file)
    cast = cast_characters(_reading(["a", "b"]), TIERED, config, "ja")
    assert cast.voice_for("narrator").voice == "ja-kumo"
    assert cast.voice_for("a").voice == "ja-alpha"
    assert cast.voice_for("b").voice in {"ja-mei-narrator", "ja-mei", "ja-mei-man"}


def test_first_lead_contrasts_with_the_narrator() -> None:
    natural = cast_characters(_reading(["a", "a", "b"]), TIERED, VoiceConfig(quality="natural"), "ja")
    assert natural.voice_for("narrator").voice == "ja-kumo"
    assert natural.voice_for("a").gender == "female" and natural.voice_for("b").gender == "male"
    fast = cast_characters(_reading(["a", "a", "b"]), TIERED, VoiceConfig(quality="fast"), "ja")
    assert fast.voice_for("narrator").gender == "female" and fast.voice_for("a").gender == "male"
