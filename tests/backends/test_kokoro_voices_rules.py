"""The Kokoro voice table's own rules: each recorded speaker's description gives its grade, and the four English
speakers flagged as narrators are the ones a cast file's ``"*"`` list picks to narrate."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.artifacts import BookReading, PageReading, TextRegion
from comic_narrator.backends.kokoro_voices import KOKORO_VOICES
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.casting import cast_characters

VOICES = [spec.info for spec in KOKORO_VOICES]


def test_every_graded_speaker_says_its_grade_and_no_made_voice_claims_one() -> None:
    graded = [info for info in VOICES if info.grade is not None]
    assert len(graded) == 28 + 5  # kokoro-js's English speakers and Kokoro's Japanese ones
    for info in VOICES:
        if info.grade is None:
            assert "(grade" not in info.description, info.id
        else:
            assert info.description.endswith(f" (grade {info.grade})"), info.id


@pytest.mark.parametrize(
    ("star", "narrator"),
    [
        # heart, michael, fable and emma are the speakers flagged as narrators: the first of them in the list
        # narrates, wherever it stands; a list without one is narrated by its first voice.
        (["en-bella", "en-adam", "en-fable", "en-heart"], "en-fable"),
        (["en-puck", "en-emma"], "en-emma"),
        (["en-michael", "en-bella"], "en-michael"),
        (["en-puck", "en-bella"], "en-puck"),
    ],
)
def test_the_flagged_narrator_of_a_star_list_narrates(tmp_path: Path, star: list[str], narrator: str) -> None:
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text(f'"*": [{", ".join(star)}]\n', encoding="utf-8")
    caption = TextRegion(bbox=(0, 0, 10, 10), kind="caption", text="Later that night.", speaker=None, panel=0)
    page = PageReading(page=0, width=100, height=100, reading_direction="ltr", panels=[], texts=[caption])
    reading = BookReading(source="t", lang="en", pages=[page])
    cast = cast_characters(reading, VOICES, VoiceConfig(cast_file=cast_file), "en")
    assert cast.voice_for("narrator").voice == narrator
