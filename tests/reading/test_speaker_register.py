"""Speakers on grey art are linked by how lines are said (register) and by continuity, not by the shading behind
the balloons: the register of real manga lines, and what the linker does with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from comic_narrator.reading.speakers import SIGNATURE_HUE_BINS, SpeakerLinker, Utterance
from comic_narrator.reading.speech_cues import speech_register

ANNOTATIONS = Path(__file__).resolve().parents[2] / "training" / "panels" / "annotations"
GREY = tuple([0.0] * SIGNATURE_HUE_BINS + [0.2, 0.5, 0.3])
RED = tuple([1.0] + [0.0] * (SIGNATURE_HUE_BINS - 1) + [0.0, 0.0, 0.0])
BLUE = tuple([0.0] * 8 + [1.0] + [0.0] * (SIGNATURE_HUE_BINS - 9) + [0.0, 0.0, 0.0])


def _line(text: str) -> str:
    """A line as lettered on the annotated Black Jack pages (so the marks are real lettering, not made up)."""
    for name in ("bj01-speakers-21-40.json", "bj01-speakers.json"):
        for page in json.loads((ANNOTATIONS / name).read_text(encoding="utf-8"))["pages"]:
            for entry in page["texts"]:
                if entry["text"] == text:
                    return str(entry["text"])
    raise AssertionError(f"{text!r} is not an annotated line")


@pytest.mark.parametrize(
    ("text", "register"),
    [
        ("分かってます!!", "polite"),  # the intern to a nurse
        ("院長はお金が欲しいだけじゃないですか!!", "polite"),
        ("お前は医者だ……", "blunt"),  # the director to the intern
        ("素人みてーな事言ってんじゃねーよ……", "blunt"),
        ("どうしたのかしら…… あの先生……", "feminine"),  # a nurse
        ("無事だったのね!!", "feminine"),
        ("……", None),
        ("クソッ!!", None),
    ],
)
def test_register_of_real_lines(text: str, register: str | None) -> None:
    assert speech_register(_line(text)) == register


def test_english_and_unmarked_lines_have_no_register() -> None:
    assert speech_register("Where are you going, Pepper?") is None
    assert speech_register("") is None


def _grey(page: int, panel: int, text: str) -> Utterance:
    return Utterance(page=page, panel=panel, signature=GREY, register=speech_register(text))


def test_grey_balloons_follow_register_and_continuity() -> None:
    linker = SpeakerLinker()
    ids = [
        linker.assign(_grey(0, 0, "分かってます!!")),  # polite: a first character
        linker.assign(_grey(0, 0, "院長はお金が欲しいだけじゃないですか!!")),  # same panel: the same speaker goes on
        linker.assign(_grey(0, 1, "お前は医者だ……")),  # a blunt line in a new panel: someone else
        linker.assign(_grey(0, 1, "……")),  # nothing to tell, same panel: the last speaker goes on
        linker.assign(_grey(1, 0, "院長はお金が欲しいだけじゃないですか!!")),  # polite again: back to the first
        linker.assign(_grey(1, 1, "どうしたのかしら……")),  # feminine: a third
        linker.assign(_grey(2, 0, "素人みてーな事言ってんじゃねーよ……")),  # blunt: the second again
    ]
    assert ids == [0, 0, 1, 1, 0, 2, 1]


def test_on_coloured_art_the_lines_decide_not_the_hues_at_the_tail() -> None:
    # Measured on six painted episodes, the hues past a tail tell a speaker no better than a coin: coloured lines
    # are linked by turns and words as grey ones are. Two red figures who speak differently are two characters,
    # and a line at a blue figure that speaks as the first did is the first's.
    linker = SpeakerLinker()
    red_a = linker.assign(Utterance(page=0, panel=0, signature=RED, register="polite"))
    red_b = linker.assign(Utterance(page=0, panel=1, signature=RED, register="blunt"))
    blue = linker.assign(Utterance(page=1, panel=0, signature=BLUE, register="polite"))
    assert red_a == blue != red_b
