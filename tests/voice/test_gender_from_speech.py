"""A speaker's gender from how their Japanese lines are said, and casting that follows it: offline, a man who
says 俺 gets a man's voice though no LLM named him."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import pytest

from comic_narrator.artifacts import (
    BookCharacter,
    BookCharacters,
    BookReading,
    PageReading,
    Panel,
    ScriptLine,
    TextRegion,
)
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.config import RunConfig, VoiceConfig
from comic_narrator.flow.stream import OnlineCasting
from comic_narrator.reading.book_characters import CharacterBook, book_characters_of, with_lines
from comic_narrator.reading.speech_cues import speaker_gender
from comic_narrator.voice.casting import NARRATOR, cast_characters
from comic_narrator.voice.voicebank import open_voice_bank
from tests.conftest import REPO

CHAPTERS = sorted((REPO / "training" / "eval").glob("blackjack-vol01-p*/gt.json"))
WOMEN = {"nurse_longhair", "nurse_shorthair", "patient_woman", "patient_mother"}


@pytest.mark.parametrize(
    ("line", "gender"),
    [
        ("俺が行く!!", "male"),  # a man's "I"
        ("僕は研修医です", "male"),
        ("ワシの若い頃は……", "male"),
        ("お前は医者だ……", "male"),  # rough speech
        ("急げ! 行くぞ!!", "male"),
        ("急ぐぞ!こっから先は戦場だ!", "male"),  # ぞ ends a sentence inside the line
        ("そんな事ないわよ", "female"),  # a woman's sentence ends
        ("どうしたのかしら……", "female"),
        ("あたしが払う", "female"),
        ("分かってます!!", None),  # polite speech marks nobody
        ("先生!! 早く手術場に入って下さい!!", None),
        ("俺はいいのよ", None),  # both: says nothing
        ("I'll go, you stay here!", None),  # not Japanese
    ],
)
def test_what_a_line_says_of_its_speaker(line: str, gender: str | None) -> None:
    assert speaker_gender(line) == gender


def test_the_annotated_chapters_lines_mark_their_speakers_gender_rightly() -> None:
    """Every line of the three annotated Black Jack chapters (231 lines, 17 of them women's): the lines that mark
    a gender mark the speaker's own nearly always."""
    assert len(CHAPTERS) == 3
    tally: Counter[bool] = Counter()
    for chapter in CHAPTERS:
        for page in json.loads(chapter.read_text(encoding="utf-8"))["pages"]:
            for text in (t for panel in page["panels"] for t in panel["texts"] if t.get("speaker")):
                said = speaker_gender(text["text"])
                if said is not None:
                    tally[said == ("female" if text["speaker"] in WOMEN else "male")] += 1
    assert tally[True] >= 20 and tally[False] <= 0.1 * tally[True]  # measured: 28 right, 1 wrong


def _line(page: int, speaker: str, text: str, n: int = 1) -> ScriptLine:
    return ScriptLine(id=f"p{page + 1:03d}-t{n:02d}", page=page, panel=0, speaker=speaker, kind="speech", text=text)


def test_counted_lines_give_an_unknown_speaker_the_gender_they_mark() -> None:
    named = BookCharacter(id="char3", first_page=0, gender="female")
    book = BookCharacters(characters=[named])
    lines = [
        _line(0, "char1", "俺が行く!!", 1),
        _line(0, "char1", "そうなのよ", 2),  # one each way: a tie says nothing
        _line(0, "char2", "お前は医者だ……", 3),
        _line(0, "char2", "分かった", 4),
        _line(0, "char3", "行くぞ!!", 5),  # an LLM said female: kept
        _line(0, NARRATOR, "俺は……", 6),  # the narrator is no character
    ]
    counted = with_lines(book, lines)
    genders = {c.id: c.gender for c in counted.characters}
    assert genders == {"char3": "female", "char1": "unknown", "char2": "male"}
    assert with_lines(counted, [_line(1, "char1", "かしら", 1)]).get("char1").gender == "female"  # type: ignore[union-attr]
    # Lines taken back (a page that could not be voiced) tell nothing.
    assert with_lines(book, [_line(0, "char4", "俺だ", 1)], removed=True).get("char4") is None


def test_the_first_page_that_marks_a_gender_decides_it() -> None:
    book = CharacterBook(link=False)
    book.add_lines([_line(0, "char1", "ありがとう", 1)])
    book.add_lines([_line(1, "char1", "そうかしら", 1)])
    book.add_lines([_line(2, "char1", "俺だ", 1), _line(2, "char1", "行くぞ", 2)])
    assert book.characters.get("char1").gender == "female"  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def voices() -> list[VoiceInfo]:
    with open_voice_bank(VoiceConfig(quality="natural")) as bank:
        return bank.voices()


def _japanese_page(*said: tuple[str, str]) -> BookReading:
    texts = [
        TextRegion(bbox=(10, 10 + 60 * n, 40, 50), kind="speech", text=text, speaker=speaker, panel=0, lang="ja")
        for n, (speaker, text) in enumerate(said)
    ]
    page = PageReading(
        page=0, width=400, height=600, reading_direction="rtl", panels=[Panel(bbox=(0, 0, 400, 600))], texts=texts
    )
    return BookReading(source="test", lang="ja", pages=[page])


def test_casting_gives_a_man_who_says_so_a_man_s_voice(voices: list[VoiceInfo]) -> None:
    gender_of = {v.id: v.gender for v in voices}
    config = VoiceConfig(quality="natural")

    def cast_genders(reading: BookReading) -> dict[str, str]:
        cast = cast_characters(reading, voices, config, "ja")
        return {m.character: gender_of[m.voice] for m in cast.members if m.character != NARRATOR}

    # Two leads nobody named: casting alternates genders, so the second gets a woman's voice ...
    neutral = _japanese_page(("char1", "分かってます!!"), ("char1", "はい"), ("char2", "早く来て下さい"))
    assert cast_genders(neutral) == {"char1": "male", "char2": "female"}
    # ... unless his words say he is a man, and hers that she is a woman, whichever comes first.
    marked = _japanese_page(("char1", "そんな事ないわよ"), ("char1", "はい"), ("char2", "俺が行く!!"))
    assert cast_genders(marked) == {"char1": "female", "char2": "male"}
    # The same from a reading without a script (each balloon counted).
    characters = book_characters_of(marked.pages)
    assert [(c.id, c.gender) for c in characters.characters] == [("char1", "female"), ("char2", "male")]


def test_a_voice_given_before_the_gender_showed_is_given_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Pages are cast as they stream: a speaker whose first page says nothing of their gender gets a voice of
    either gender (alternating), and when a later page shows it is the other one, that page and the ones after
    it take a voice of the right gender; the earlier pages' cast stands. A speaker whose voice fits, and one a
    cast file pins, keep theirs."""
    cast_file = tmp_path / "cast.yaml"
    with open_voice_bank(VoiceConfig(quality="natural")) as bank:
        gender_of = {v.id: v.gender for v in bank.voices()}
        women = [v.id for v in bank.voices() if v.language == "ja" and v.gender == "female" and v.tier == "natural"]
        cast_file.write_text(f"char3: {women[-1]}\n", encoding="utf-8")
        config = VoiceConfig(quality="natural", cast_file=cast_file)
        run = RunConfig(input_path=tmp_path, output_path=tmp_path / "o.mp4", work_dir=tmp_path, voice=config)
        book = CharacterBook(link=False)
        casting = OnlineCasting(run, bank, book)
        first = [_line(0, "char1", "ありがとう", 1), _line(0, "char2", "はい", 2), _line(0, "char3", "そう", 3)]
        book.add_lines(first)
        page1 = casting.add(first, "ja", 0)
        voice1 = {c: page1.voice_for(c).voice for c in ("char1", "char2", "char3")}
        assert gender_of[voice1["char3"]] == "female"
        # the unknown genders alternate: one of the first two got a woman's voice, the other a man's
        woman = next(c for c in ("char1", "char2") if gender_of[voice1[c]] == "female")
        man = "char2" if woman == "char1" else "char1"
        assert gender_of[voice1[man]] == "male"
        second = [_line(1, woman, "俺が行く!!", 1), _line(1, man, "お前は医者だ……", 2), _line(1, "char3", "行くぞ", 3)]
        book.add_lines(second)
        with caplog.at_level(logging.INFO, logger="comic_narrator"):
            page2 = casting.add(second, "ja", 1)
        assert gender_of[page2.voice_for(woman).voice] == "male"
        assert page2.voice_for(woman).voice != voice1[man]  # leads stay apart
        assert page2.voice_for(man).voice == voice1[man]
        assert page2.voice_for("char3").voice == voice1["char3"]  # pinned: the cast file wins
        assert page1.voice_for(woman).voice == voice1[woman]  # the first page's cast stands
        assert book.characters.get(woman).voice == page2.voice_for(woman).voice  # type: ignore[union-attr]
        assert casting.add(second, "ja", 2) is page2  # settled: not cast again
    said = [r.getMessage() for r in caplog.records if "speaks as" in r.getMessage()]
    new_voice = page2.voice_for(woman).voice
    assert said == [f"{woman} speaks as a male: voiced by {new_voice} instead of {voice1[woman]} from page 2 on"]
