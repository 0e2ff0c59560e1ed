"""What an English line says about who says it: the people it calls (not its speaker) and whether it asks."""

from __future__ import annotations

import pytest

from comic_narrator.reading.speech_cues import english_calls, english_line_cues


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        # A name set off by a comma at a sentence's end, in any case the OCR gives it.
        ("That's not fair, willie weasel! We ought to share the hundred dollars!", ("willie", "weasel")),
        ("I walked all the way up to give you my business, Cholly!", ("cholly",)),
        ("Thank you, Saffron.", ("saffron",)),
        # A title with a word that names nobody in front of it.
        ("Of course we'll share it, old pal!", ("pal",)),
        # A name opening a sentence before a comma or an exclamation.
        ("Pepper, you bring shame to Chaosah.", ("pepper",)),
        ("Carrot! Wait!", ("carrot",)),
        ("Oh no. Shichimi, look!", ("shichimi",)),
        # A stutter is read through.
        ("W-what was that question, s-s-stranger?", ("stranger",)),
        # Interjections, pronouns and clauses in those places call nobody.
        ("Oh, no you don't!", ()),
        ("Whew, I'm tired can't you get the car?", ()),
        ("Well, well, well...", ()),
        ("Look, you!", ()),
        ("Cayenne is right, a witch of Chaosah worth the title must command fear, obedience and respect.", ()),
        ("Come here, it's late.", ()),
    ],
)
def test_the_people_a_line_calls(text: str, calls: tuple[str, ...]) -> None:
    assert english_calls(text) == calls


def test_a_name_called_twice_counts_once() -> None:
    assert english_calls("Pepper! Pepper, come back, Pepper!") == ("pepper",)


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("Can't you get the car and come back for me?", True),
        ("What was that question?..", True),
        ("I've got a better idea!", False),
        ("Is it? No.", False),
    ],
)
def test_a_question_is_a_line_that_ends_asking(text: str, question: bool) -> None:
    cues = english_line_cues(text)
    assert cues.question is question
    # English marks no register and no gendered "I".
    assert cues.register is None and cues.pronoun is None
