"""Casting reads the book's characters (characters.json) and records in it the voice each character keeps; a cast
file's pins re-voice and rename a character there."""

from __future__ import annotations

from pathlib import Path

from comic_narrator.artifacts import BookCharacter, BookCharacters
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.casting import cast_book
from tests.voice.test_casting import VOICES


def _book(*characters: BookCharacter) -> BookCharacters:
    return BookCharacters(pages=3, characters=list(characters))


def test_the_artifacts_attributes_choose_and_its_voices_are_kept() -> None:
    robot = BookCharacter(id="r2", nature="machine", first_page=0, lines=2)
    girl = BookCharacter(id="ann", gender="female", age="child", first_page=1, lines=5)
    silent = BookCharacter(id="bob", first_page=1, lines=0)
    cast, recorded = cast_book(_book(robot, girl, silent), VOICES, VoiceConfig(), "en", narrator_lines=4)
    voices = {m.character: m.voice for m in cast.members}
    assert voices == {"narrator": "en-joe", "ann": "en-joe-girl", "r2": "en-joe-robot"}
    assert [m.character for m in cast.members] == ["narrator", "ann", "r2"]  # by lines: ann speaks most
    assert cast.voice_for("narrator").lines == 4
    assert [(c.id, c.voice) for c in recorded.characters] == [
        ("r2", "en-joe-robot"),
        ("ann", "en-joe-girl"),
        ("bob", None),
    ]
    # A character that holds a voice keeps it, even where the attributes would now pick another.
    settled = girl.model_copy(update={"voice": "en-alpha"})
    again, _ = cast_book(_book(robot, settled), VOICES, VoiceConfig(), "en")
    assert again.voice_for("ann").voice == "en-alpha"


def test_a_cast_file_re_voices_and_names_a_character(tmp_path: Path) -> None:
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text("ann: {voice: en-joe-young, name: Ann Marie}\n", encoding="utf-8")
    girl = BookCharacter(id="ann", gender="female", first_page=0, lines=1, voice="en-alpha")
    cast, recorded = cast_book(_book(girl), VOICES, VoiceConfig(cast_file=cast_file), "en")
    assert cast.voice_for("ann").voice == "en-joe-young"
    assert recorded.characters[0].voice == "en-joe-young" and recorded.characters[0].name == "Ann Marie"
