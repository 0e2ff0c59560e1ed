"""Text normalisation: lettering conventions become text the engines say as intended."""

from __future__ import annotations

import pytest

from comic_narrator.audio.normalize import normalize_for_speech
from comic_narrator.audio.numbers_en import number_to_words, numbers_to_words, ordinal_words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("WHERE ARE YOU GOING?", "Where are you going?"),
        ("I KNOW. YOU DON'T.", "I know. You don't."),
        ("HMPH!", "humph!"),
        ("TCH.", "tsk."),
        ("SHHH!", "shush!"),
        ("Mmm...", "hmm…"),
        ("Pfft.", "puft."),
        ("Brrr, it's cold.", "burr, it's cold."),
        ("ZZZ...", ""),
        ("It is 5 ft tall.", "It is five ft tall."),
        ("GRRRR...", "gurr…"),
        ("AAAAAAH!!", "ah!"),
        ("WHAT?!", "What?"),
        ("NOOOOO!", "noo!"),
        ("W-w-what?", "W… w… what?"),
        ("I-I don't know", "I… I don't know"),
        ("Wait -- what?", "Wait, what?"),
        ("Wait\u2014what?", "Wait, what?"),
        ("So... tired", "So… tired"),
        ("Really?!?", "Really?"),
        ("I have 3 cats and 1,200 dollars.", "I have three cats and one thousand two hundred dollars."),
        ("Back in 1987.", "Back in nineteen eighty-seven."),
        ("It costs 2.5 coins", "It costs two point five coins"),
        ("Are you DOING this on TV?", "Are you doing this on TV?"),
        ("...", ""),
        ("?!", ""),
    ],
)
def test_english_lettering(text: str, expected: str) -> None:
    assert normalize_for_speech(text, "en", "speech") == expected


def test_sound_words_are_said_not_spelled() -> None:
    assert normalize_for_speech("KRAKOOM!!", "en", "sound") == "Krakoom!"
    assert normalize_for_speech("BLAM", "en", "sound") == "Blam!"
    assert normalize_for_speech("BZZZT!", "en", "sound") == "buzzt!"
    assert normalize_for_speech("KRK", "en", "sound") == "kurk!"
    assert normalize_for_speech("FWOOSH!", "en", "sound") == "foosh!"
    assert normalize_for_speech("ZZZAP", "en", "sound") == "zap!"
    assert normalize_for_speech("BWAAAH", "en", "sound") == "baah!"


def test_numbers() -> None:
    assert number_to_words(0) == "zero"
    assert number_to_words(42) == "forty-two"
    assert number_to_words(1_000_001) == "one million one"


def test_japanese() -> None:
    assert normalize_for_speech("えっ・・・ なに！？！？", "ja", "speech") == "えっ…なに?"
    assert normalize_for_speech("すごーーーい", "ja", "shout") == "すごーい"
    assert normalize_for_speech("・・・", "ja", "speech") == ""


def test_respelled_interjections_are_said_not_spelled() -> None:
    from comic_narrator.audio.normalize import INTERJECTIONS_EN
    from comic_narrator.backends.espeak_g2p import phonemize_sentences

    for spoken in sorted({v for v in INTERJECTIONS_EN.values() if v}):
        phonemes = "".join(p for sentence in phonemize_sentences(spoken + ".") for p in sentence)
        # espeak spells an unpronounceable word letter by letter, one stress mark per letter name.
        stresses = sum(phonemes.count(mark) for mark in "ˈˌ")
        assert stresses <= len(spoken.split()), (spoken, phonemes)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$5 each", "five dollars each"),
        ("only $1", "only one dollar"),
        ("£2.50", "two pounds fifty cents"),
        ("100% sure", "one hundred percent sure"),
        ("At 3:00", "At three o'clock"),
        ("at 10:05 sharp", "at ten oh five sharp"),
        ("the 1st, 2nd, 3rd and 21st", "the first, second, third and twenty-first"),
        ("her 12th and 100th try", "her twelfth and one hundredth try"),
        ("the 40th", "the fortieth"),
    ],
)
def test_numbers_in_context(text: str, expected: str) -> None:
    assert numbers_to_words(text) == expected


def test_ordinals_and_initialisms() -> None:
    assert ordinal_words(123) == "one hundred twenty-third"
    assert normalize_for_speech("THE F.B.I. IS HERE!", "en", "speech") == "The F.B.I. is here!"
    assert normalize_for_speech("\U0001f600 hi \u2665", "en", "speech") == "hi"
