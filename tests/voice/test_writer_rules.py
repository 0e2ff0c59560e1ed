"""The script writer's rules, one reading per rule: which lettering is said, by whom, in which order, and the
tone each line takes from its lettering when no LLM reader gave one."""

from __future__ import annotations

import pytest

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.writer import NARRATOR, UNKNOWN_SPEAKER, emotion_for, page_lines


def _region(text: str, kind: str = "speech", panel: int = 0, **more: object) -> TextRegion:
    return TextRegion.model_validate({"bbox": (10, 10, 50, 30), "kind": kind, "text": text, "panel": panel, **more})


def _page(*texts: TextRegion, kind: str = "story", panels: int = 2) -> PageReading:
    return PageReading(
        page=2,
        width=800,
        height=1200,
        reading_direction="ltr",
        page_kind=kind,
        panels=[Panel(bbox=(0, 600 * n, 800, 600)) for n in range(panels)],
        texts=list(texts),
    )


@pytest.mark.parametrize(
    ("text", "kind", "emotion"),
    [
        ("WHAT?!", "shout", "angry"),
        ("Hey!?", "shout", "angry"),
        ("HEY", "shout", "excited"),  # a shout is excited without a mark
        ("Run!", "speech", "excited"),
        ("走れ！", "speech", "excited"),
        ("Well...", "speech", "calm"),
        ("そうか……", "speech", "calm"),
        ("Why?!", "speech", "excited"),  # "?!" is angry only in a shout; a balloon ending on "!" is excited
        ("Fine.", "speech", "neutral"),
    ],
)
def test_the_tone_comes_from_the_lettering(text: str, kind: str, emotion: str) -> None:
    assert emotion_for(_region(text, kind)) == emotion


def test_an_llm_readers_tone_comes_first() -> None:
    assert emotion_for(_region("Run!", emotion="sad")) == "sad"
    assert emotion_for(_region("WHAT?!", "shout", emotion="calm")) == "calm"


def test_who_says_each_kind_of_lettering() -> None:
    lines = page_lines(
        _page(
            _region("Once upon a time", "caption"),
            _region("Hello", speaker="char1"),
            _region("Who?"),
            _region("BOOM", "sound"),
            _region("12", "furniture"),
        ),
        VoiceConfig(read_sound_effects=True),
    )
    assert [(line.text, line.speaker) for line in lines] == [
        ("Once upon a time", NARRATOR),
        ("Hello", "char1"),
        ("Who?", UNKNOWN_SPEAKER),
        ("BOOM", NARRATOR),
    ], "furniture is never said"
    assert [line.pause_after_s for line in lines] == [0.5, 0.35, 0.35, 0.35]
    assert [line.id for line in lines] == ["p003-t01", "p003-t02", "p003-t03", "p003-t04"]


def test_sound_words_and_captions_are_said_only_when_asked_for() -> None:
    page = _page(_region("Night fell", "caption"), _region("BOOM", "sound"), _region("Hi", speaker="char1"))
    said = {
        (sounds, captions): [
            line.text for line in page_lines(page, VoiceConfig(read_sound_effects=sounds, read_captions=captions))
        ]
        for sounds in (False, True)
        for captions in (False, True)
    }
    assert said == {
        (False, False): ["Hi"],
        (False, True): ["Night fell", "Hi"],
        (True, False): ["BOOM", "Hi"],
        (True, True): ["Night fell", "BOOM", "Hi"],
    }


def test_a_blank_page_says_nothing_and_blank_lettering_is_skipped() -> None:
    assert page_lines(_page(_region("Hello")), VoiceConfig())[0].text == "Hello"
    assert page_lines(_page(_region("Hello"), kind="blank"), VoiceConfig()) == []
    lines = page_lines(_page(_region("  \n "), _region("two\n  lines")), VoiceConfig())
    assert [line.text for line in lines] == ["two lines"]


def test_lines_follow_the_panels_and_page_level_lettering_comes_first() -> None:
    lines = page_lines(
        _page(
            _region("second panel", panel=1),
            _region("first panel", panel=0),
            _region("outside any panel", "caption", panel=-1),
            _region("a panel the page lacks", panel=7),
            _region("first panel again", panel=0),
        ),
        VoiceConfig(),
    )
    assert [(line.text, line.panel) for line in lines] == [
        ("outside any panel", -1),
        ("a panel the page lacks", -1),
        ("first panel", 0),
        ("first panel again", 0),
        ("second panel", 1),
    ]
