"""Text normalisation: lettering conventions become text the engines say as intended."""

from __future__ import annotations

import pytest

from comic_narrator.voice.normalize import normalize_for_speech
from comic_narrator.voice.numbers_en import number_to_words, numbers_to_words, ordinal_words


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
        ("Wh-wh-what?", "Wh… wh… what?"),
        # a laugh or a word said twice is one breath, not a stammer: the voice paused between every "ha"
        ("HA-HA-HA!", "Ha ha ha!"),
        ("Tee-hee-hee!", "Tee-hee hee!"),
        ("Heh-heh. Bye-bye!", "Heh heh. Bye bye!"),
        ("ha-ha-hard", "ha… ha… hard"),
        # a comma set apart by a space stays after its word (the voice ran the two clauses together)
        ("Listen, you're a witch , start acting like one!", "Listen, you're a witch, start acting like one!"),
        ("So ,, what? , well", "So, what? well"),
        ("Wait -- what?", "Wait, what?"),
        ("Wait\u2014what?", "Wait, what?"),
        ("So... tired", "So… tired"),
        ("HE'S A FRIEND OF MINE ... BESIDES, HE'S DUMB!", "He's a friend of mine… Besides, he's dumb!"),
        ("... but?", "but?"),
        ("Really?!?", "Really?"),
        ("I have 3 cats and 1,200 dollars.", "I have three cats and one thousand two hundred dollars."),
        ("Back in 1987.", "Back in nineteen eighty-seven."),
        ("It costs 2.5 coins", "It costs two point five coins"),
        # a comma after a number is a pause, not part of the number (the voice ran "1944, we" together)
        ("IN 1944, WE LANDED", "In nineteen forty-four, we landed"),
        ("It costs $5, not 50%, sir.", "It costs five dollars, not fifty percent, sir."),
        # a day after its month is an ordinal, as a reader says a date (the Dingbat Family's masthead)
        ("Tuesday. December 14. 1915", "Tuesday. December fourteenth. nineteen fifteen"),
        ("ON JUNE 5, 1944", "On june fifth, nineteen forty-four"),
        ("Sept. 3!", "Sept. third!"),
        ("We march 20 miles", "We march twenty miles"),
        # Digits written against letters are said apart from them, not as one made-up word.
        ("7godmothers..", "seven godmothers…"),
        ("The MP3 player", "The MP three player"),
        ("R2 beeps", "R two beeps"),
        ("even to our demons*...", "even to our demons…"),  # a footnote's mark is not said "asterisk"
        ("* See Episode 8: Pepper's Birthday Party", "See Episode eight: Pepper's Birthday Party"),
        ("*sigh* Fine.", "sigh Fine."),
        ("You're my #1 fan!", "You're my number one fan!"),
        ("Ta~daa~~a!", "tadaa!"),  # a tilde is not said "tilde"
        ("Hello~", "Hello"),
        ("3D glasses", "three D glasses"),
        ("A 50 000Ko grand prize", "A fifty thousand Ko grand prize"),  # thousands set apart by a space
        ("5 000 000 people", "five million people"),
        ("1 or 2 000", "one or two thousand"),
        ("Back in the 1980s", "Back in the nineteen eighties"),
        ("in the '80s", "in the eighties"),
        ("the 1900s and the 2000s", "the nineteen hundreds and the two thousands"),
        ("1000s of them", "thousands of them"),
        ("5ft tall, 10kg, 100km away", "five feet tall, ten kilos, one hundred kilometres away"),
        ("At 9am, 10x faster", "At nine a m, ten times faster"),
        ("THE NIGHT BEFORE, 2:00 AM", "The night before, two o'clock a m"),
        ("at 10:30 p.m. sharp", "at ten thirty p m sharp"),
        ("Home by 9 am.", "Home by nine a m."),
        ("I have 5 apples and 5 amps", "I have five apples and five amps"),
        # A title's full stop is no sentence's end: the voice paused in "Mister. Smith".
        ("HELLO MR. BEAR! Ask Dr. Ushida.", "Hello Mister Bear! Ask Doctor Ushida."),
        ("Baker St. is near, see the dr. tomorrow", "Baker St. is near, see the dr. tomorrow"),
        ("Martin Luther King Jr. said it to Mrs. Parks", "Martin Luther King Junior said it to Missus Parks"),
        ("John Smith, Jr. said", "John Smith, Junior said"),
        ("It's No. 5 vs. No. 6", "It's number five versus number six"),
        ("Are you DOING this on TV?", "Are you doing this on TV?"),
        ("...", ""),
        ("?!", ""),
    ],
)
def test_english_lettering(text: str, expected: str) -> None:
    assert normalize_for_speech(text, "en", "speech") == expected


SOUND_WORDS = [
    ("KRAKOOM!!", "Krakoom!"),
    ("BLAM", "Blam!"),
    ("BZZZT!", "buzzt!"),
    ("KRK", "kurk!"),
    ("FWOOSH!", "foosh!"),
    ("ZZZAP", "zap!"),
    ("BWAAAH", "baah!"),
]


def _stresses(text: str) -> int:
    """espeak-ng spells a word it cannot say letter by letter, one stress mark per letter name."""
    from comic_narrator.backends.espeak_g2p import phonemize_sentences

    phonemes = "".join(p for sentence in phonemize_sentences(text + ".") for p in sentence)
    return sum(phonemes.count(mark) for mark in "ˈˌ")


@pytest.mark.parametrize(("lettering", "said"), SOUND_WORDS)
def test_sound_words_are_said_not_spelled(lettering: str, said: str) -> None:
    assert normalize_for_speech(lettering, "en", "sound") == said


@pytest.mark.parametrize(
    ("lettering", "said"),
    [*SOUND_WORDS, ("HMPH!", "humph!"), ("TCH.", "tsk."), ("Pfft.", "puft."), ("Brrr", "burr"), ("GRRRR", "gurr")],
)
def test_golden_respellings_are_one_spoken_word(lettering: str, said: str) -> None:
    """The golden respellings above are checked by the real espeak-ng (independent of the normaliser): each is said
    as one word with one stress, and each vowel-less lettering it replaces would have been spelled letter by letter."""
    word = said.strip("!.?").lower()
    assert _stresses(word) <= 1, f"espeak spells {word!r}"
    raw = lettering.strip("!.?").lower()
    if not any(v in raw for v in "aeiouy") or raw.startswith(("fw", "bw")):
        assert _stresses(raw) > 1, f"{raw!r} would be said as written; the respelling is not needed"


def test_numbers() -> None:
    assert number_to_words(0) == "zero"
    assert number_to_words(42) == "forty-two"
    assert number_to_words(1_000_001) == "one million one"


def test_japanese() -> None:
    assert normalize_for_speech("えっ・・・ なに！？！？", "ja", "speech") == "えっ…なに?"
    assert normalize_for_speech("すごーーーい", "ja", "shout") == "すごーい"
    assert normalize_for_speech("・・・", "ja", "speech") == ""
    assert normalize_for_speech("……！？", "ja", "shout") == "", "marks alone: nothing to say"


def test_respelled_interjections_are_said_not_spelled() -> None:
    from comic_narrator.voice.normalize import INTERJECTIONS_EN

    for spoken in sorted({v for v in INTERJECTIONS_EN.values() if v}):
        assert _stresses(spoken) <= len(spoken.split()), spoken


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$5 each", "five dollars each"),
        ("only $1", "only one dollar"),
        ("£2.50", "two pounds fifty"),
        ("100% sure", "one hundred percent sure"),
        ("At 3:00", "At three o'clock"),
        ("at 10:05 sharp", "at ten oh five sharp"),
        ("the 1st, 2nd, 3rd and 21st", "the first, second, third and twenty-first"),
        ("her 12th and 100th try", "her twelfth and one hundredth try"),
        ("the 40th", "the fortieth"),
        # a long serial or card number is said digit by digit, not as trillions
        ("call 5550001234567", "call five five five zero zero zero one two three four five six seven"),
    ],
)
def test_numbers_in_context(text: str, expected: str) -> None:
    assert numbers_to_words(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Written from how English speakers say prices (not from this code's output): pounds take pence, not cents,
        # and "pence" is dropped after pounds; one of a unit is singular; no "zero dollars" before cents.
        ("£2.50", "two pounds fifty"),
        ("£0.50", "fifty pence"),
        ("£0.01", "one penny"),
        ("£2.01", "two pounds one penny"),
        ("£1", "one pound"),
        ("$1.50", "one dollar fifty cents"),
        ("$1.01", "one dollar one cent"),
        ("$0.99", "ninety-nine cents"),
        ("$3.00", "three dollars"),
        ("$1,000,000", "one million dollars"),
        ("€2.50", "two euros fifty cents"),
        ("€1", "one euro"),
        ("¥500", "five hundred yen"),
        ("¥1", "one yen"),
        ("¥1.5", "one point five yen"),  # no subunit of the yen is in use: the fraction is said as a decimal
    ],
)
def test_money_as_people_say_it(text: str, expected: str) -> None:
    """Real normaliser; the expected words are independent of it."""
    assert numbers_to_words(text) == expected


def test_ordinals_and_initialisms() -> None:
    assert ordinal_words(123) == "one hundred twenty-third"
    assert normalize_for_speech("THE F.B.I. IS HERE!", "en", "speech") == "The F.B.I. is here!"
    assert normalize_for_speech("\U0001f600 hi \u2665", "en", "speech") == "hi"
