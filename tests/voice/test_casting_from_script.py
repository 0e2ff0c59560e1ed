"""Casting follows the script: speakers a user renamed or added in an edited script get voices of their own."""

from __future__ import annotations

from comic_narrator.artifacts import BookReading, PageReading, Panel, Script, ScriptLine, TextRegion
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.casting import cast_characters
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.voice.writer import write_script


def _reading() -> BookReading:
    texts = [
        TextRegion(bbox=(0, 0, 10, 10), kind="caption", text="Long ago.", panel=0),
        TextRegion(bbox=(0, 20, 10, 10), kind="speech", text="Hello!", speaker="char1", panel=0),
        TextRegion(bbox=(0, 40, 10, 10), kind="speech", text="Who are you?", speaker=None, panel=0),
    ]
    page = PageReading(
        page=0, width=100, height=100, reading_direction="ltr", panels=[Panel(bbox=(0, 0, 100, 100))], texts=texts
    )
    return BookReading(source="t", lang="en", pages=[page])


def test_edited_speakers_are_cast_and_unattributed_speech_is_not_the_narrator() -> None:
    reading = _reading()
    script = write_script(reading, VoiceConfig())
    assert [line.speaker for line in script.lines] == ["narrator", "char1", "unknown"]
    edited = Script(
        lang="en",
        lines=[
            *script.lines,
            ScriptLine(id="p001-x1", page=0, panel=0, speaker="pepper", kind="speech", text="I am Pepper."),
        ],
    )
    with open_voice_bank(VoiceConfig()) as bank:
        voices = bank.voices()
    cast = cast_characters(reading, voices, VoiceConfig(), "en", edited)
    by_character = {m.character: m for m in cast.members}
    assert set(by_character) == {"narrator", "char1", "unknown", "pepper"}
    narrator_voice = by_character["narrator"].voice
    assert by_character["pepper"].voice != narrator_voice
    assert by_character["unknown"].voice != narrator_voice
    assert by_character["narrator"].lines == 1 and by_character["pepper"].lines == 1
