"""The turn model's arithmetic, rule by rule (found by a mutation sweep of reading/turns.py and
reading/speech_cues.py: each of these could be flipped or dropped with every older speaker test passing): the
priors are a distribution over who speaks in every state, the words of a line with no habit say nothing, a
hypothesis nobody can have is never kept, and how a line ends is read the same way every time."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pytest

from comic_narrator.reading.speech_cues import line_ending, says_a_sentence
from comic_narrator.reading.turns import (
    Character,
    TurnCues,
    TurnState,
    _Everyone,
    _evidence,
    _priors,
    extend,
    step,
)


@dataclass(frozen=True)
class Line:
    page: int = 0
    panel: int = 0
    register: str | None = None
    pronoun: str | None = None
    calls: tuple[str, ...] = ()
    question: bool = False
    ending: str | None = None
    signature: tuple[float, ...] = ()


def _state(speakers: list[int], lines: list[Line] | None = None) -> TurnState:
    """The state after ``speakers`` said ``lines`` (a new panel each by default), characters numbered in order."""
    state = TurnState()
    for n, c in enumerate(speakers):
        line = lines[n] if lines is not None else Line(panel=n)
        state = extend(state, line, c, state.score)
    return state


def _shares(cues: TurnCues, state: TurnState, line: Line) -> list[float]:
    return [round(math.exp(p), 9) for p in _priors(cues, state, line)]


def test_a_new_panels_line_is_shared_between_the_speaker_the_other_side_the_others_and_somebody_new() -> None:
    cues = TurnCues()
    # nobody yet: somebody new
    assert _shares(cues, _state([]), Line(panel=9)) == [1.0]
    # one speaker so far: nobody to answer, so only the speaker goes on (0.4) or somebody new comes (0.1); the
    # shares of the other side and of the other known characters have nobody to go to
    assert _shares(cues, _state([0]), Line(panel=9)) == [0.4, 0.1]
    # two in turn: the second goes on, the first answers
    assert _shares(cues, _state([0, 1]), Line(panel=9)) == [0.4, 0.4, 0.1]
    # three, the first back: the third is the other side, the second one of the others (all of their 0.1)
    assert _shares(cues, _state([0, 1, 2, 0]), Line(panel=9)) == [0.4, 0.1, 0.4, 0.1]
    # four: two others split their share
    assert _shares(cues, _state([0, 1, 2, 3]), Line(panel=9)) == [0.05, 0.05, 0.4, 0.4, 0.1]
    # without a share for the others, they cannot speak
    assert _shares(replace(cues, other=0.0), _state([0, 1, 2, 0]), Line(panel=9))[1] == 0.0


def test_after_a_question_the_other_side_is_likelier_to_answer() -> None:
    cues = TurnCues()
    asked = _state([0, 1], [Line(panel=0), Line(panel=1, question=True)])
    same, alternate = cues.same * math.exp(-cues.question), cues.alternate * math.exp(cues.question)
    assert _shares(cues, asked, Line(panel=2)) == [round(alternate, 9), round(same, 9), 0.1]
    # in the same panel the question moves nothing: a speaker goes on asking
    assert _shares(cues, asked, Line(panel=1))[1] == pytest.approx(cues.same_panel)


def test_in_the_same_panel_the_speaker_most_likely_goes_on() -> None:
    state = _state([0, 1], [Line(panel=0), Line(panel=1)])
    priors = _priors(TurnCues(), state, Line(panel=1))
    assert max(range(len(priors)), key=priors.__getitem__) == 1
    assert math.exp(priors[1]) == pytest.approx(TurnCues().same_panel)


def test_with_nobody_on_the_other_side_its_share_goes_to_the_others() -> None:
    # two speakers said a panel each, then the second went on: the first is the other side; before that there is
    # no other side and the alternation's share is the other known characters'
    state = _state([0, 1, 1])
    assert state.other_side == 0
    lone = _state([0, 0])
    assert lone.other_side == -1
    cues = TurnCues()
    priors = _priors(cues, lone, Line(panel=9))
    assert math.exp(priors[0]) == pytest.approx(cues.same)
    assert math.exp(priors[-1]) == pytest.approx(cues.new)


def test_a_line_without_habits_or_calls_says_nothing_about_who_said_it() -> None:
    said = [Line(register="polite", pronoun="boku", ending="よ"), Line(panel=1, register="blunt", ending="な")]
    state = _state([0, 1], said)
    everyone = _Everyone.of(state)
    talker = state.characters[0]
    assert _evidence(TurnCues(), talker, everyone, Line()) == 0.0
    assert _evidence(TurnCues(ending=1.0), talker, everyone, Line()) == 0.0  # weighed, but the line has none
    assert _evidence(TurnCues(), talker, everyone, Line(ending="よ")) == 0.0  # endings are off by default
    assert _evidence(TurnCues(ending=1.0), talker, everyone, Line(ending="よ")) > 0.0
    assert _evidence(TurnCues(), talker, everyone, Line(register="polite")) > 0.0
    assert _evidence(TurnCues(), talker, everyone, Line(pronoun="boku")) > 0.0
    named = Character(names=frozenset({"斉藤"}))
    assert _evidence(TurnCues(), named, everyone, Line(calls=("斉藤",))) == -TurnCues().calls


def test_a_speaker_nobody_can_be_is_never_kept() -> None:
    # without a share for the other known characters, a beam wide enough to keep everything keeps only the
    # speaker, the other side and somebody new, never the third character
    beam = step(TurnCues(other=0.0, beam=100), [_state([0, 1, 2, 0])], Line(panel=9))
    assert sorted(state.labels[-1] for state in beam) == [0, 2, 3]
    assert all(math.isfinite(state.score) for state in beam)


@pytest.mark.parametrize(
    ("text", "ending"),
    [
        ("行くよ!", "よ"),
        ("そうだな……", "な"),
        ("本当に……", "…"),
        ("やめろ!!", "!"),
        ("誰だ?", "?"),
        ("待て―", "―"),
        ("斉藤", None),
        ("   ", None),
    ],
)
def test_how_a_line_ends(text: str, ending: str | None) -> None:
    assert line_ending(text) == ending


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("事故です!!", True),  # polite
        ("本部急いで下さい!", True),
        ("牛田さん!!", True),  # a name called
        ("スゴイな……", True),  # a particle after a word
        ("行くぞ!! 急げ", True),  # ... in any of its sentences
        ("ガーン!!", False),
        ("ざわざわ", False),  # sound words that end on a particle's kana: repeated, or two kana
        ("ぴかぴか!", False),
        ("ぐさ", False),
        ("そうか", True),
        ("ドドドド", False),
        ("プルルルル", False),
        ("ワーッ!!", False),
        ("CRASH!!", False),
        ("それがこの国の夜だ……", True),  # kanji beside hiragana: written words, no particle at the end
        ("夜中に……", True),
        ("轟", False),  # a lone kanji is a sound word's way of writing
        ("ゴゴゴ轟", False),
    ],
)
def test_sentences_said_are_told_from_sound_words(text: str, said: bool) -> None:
    assert says_a_sentence(text) is said


RED = (1.0,) + (0.0,) * 14
BLUE = (0.0,) * 8 + (1.0,) + (0.0,) * 6
GREY_SIGNATURE = (0.0,) * 12 + (0.2, 0.5, 0.3)


def test_the_hue_cue_is_off_and_when_on_favours_the_character_a_line_looks_like() -> None:
    red_line = Line(signature=RED)
    red, blue = Character(looks=(RED,)), Character(looks=(BLUE,))
    everyone = _Everyone({}, {}, {})
    # Off by default: on painted pages the hues at the tail told speakers apart no better than a coin.
    assert _evidence(TurnCues(), red, everyone, red_line) == 0.0
    on = TurnCues(look=8.0, look_same=0.5)
    assert _evidence(on, red, everyone, red_line) == pytest.approx(4.0)  # 8 x (0.5 - 0)
    assert _evidence(on, blue, everyone, red_line) == pytest.approx(-4.0)  # 8 x (0.5 - 1)
    # A grey line, or a character never seen on coloured art, says nothing by its looks.
    assert _evidence(on, red, everyone, Line(signature=GREY_SIGNATURE)) == 0.0
    assert _evidence(on, Character(), everyone, red_line) == 0.0


def test_a_character_keeps_the_looks_of_its_last_eight_coloured_lines() -> None:
    state = TurnState()
    for n in range(10):
        state = extend(state, Line(panel=n, signature=RED if n < 9 else BLUE), 0, 0.0)
    state = extend(state, Line(panel=10, signature=GREY_SIGNATURE), 0, 0.0)
    assert state.characters[0].looks == (RED,) * 7 + (BLUE,)


def test_a_character_counts_each_habit_once_a_line() -> None:
    state = TurnState()
    for n, (pronoun, ending) in enumerate([("boku", "よ"), ("boku", "ね"), (None, "よ")]):
        state = extend(state, Line(panel=n, register="polite", pronoun=pronoun, ending=ending), 0, 0.0)
    character = state.characters[0]
    assert character.registers == (3, 0, 0)
    assert character.pronouns == (("boku", 2),)
    assert character.endings == (("ね", 1), ("よ", 2))
