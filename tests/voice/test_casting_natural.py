"""Casting at ``--voice-quality natural`` on a real page: Kokoro's recorded English speakers for narrator and leads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from comic_narrator.artifacts import BookReading, Character, PageReading, Panel, TextRegion
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.voice.casting import cast_characters
from comic_narrator.voice.voicebank import open_voice_bank
from tests.conftest import corpus_path

# What an LLM reader says about Pepper&Carrot ep. 17's speakers (gt.json names them but gives no attributes).
PEOPLE = [
    Character(id="Pepper", name="Pepper", gender="female", age="young", nature="human"),
    Character(id="Monster", name="Monster", nature="creature"),
]


def _episode(folder: Path) -> BookReading:
    """The ground-truth pages of ep. 17 as a reading: every lettered text with its named speaker."""
    truth = json.loads((folder / "gt.json").read_text(encoding="utf-8"))
    pages = []
    for index, page in enumerate(truth["pages"]):
        panels = [Panel(bbox=tuple(panel["bbox"])) for panel in page["panels"]]
        texts = [
            TextRegion(bbox=(0, 0, 1, 1), kind=text["kind"], text=text["text"], speaker=text["speaker"], panel=p)
            for p, panel in enumerate(page["panels"])
            for text in panel["texts"]
        ]
        pages.append(
            PageReading(
                page=index,
                width=page["width"],
                height=page["height"],
                reading_direction="ltr",
                panels=panels,
                texts=texts,
                characters=PEOPLE,
            )
        )
    return BookReading(source=str(folder), lang="en", pages=pages)


@pytest.fixture(scope="module")
def voices() -> list[VoiceInfo]:
    with open_voice_bank(VoiceConfig()) as bank:
        return bank.voices()


@pytest.mark.parametrize("narrator", ["en-michael", "en-heart"])
def test_the_female_lead_gets_a_natural_female_voice(voices: list[VoiceInfo], narrator: str) -> None:
    reading = _episode(corpus_path("peppercarrot-ep17"))
    by_id = {v.id: v for v in voices}
    cast = cast_characters(reading, voices, VoiceConfig(quality="natural", narrator_voice=narrator), "en")
    members = {m.character: m for m in cast.members}
    assert members["narrator"].voice == narrator
    pepper = by_id[members["Pepper"].voice]
    assert pepper.gender == "female" and pepper.tier == "natural" and pepper.derived_from is None
    assert pepper.engine == "kokoro" and pepper.language == "en" and pepper.id != narrator
    assert pepper.grade in ("A", "A-", "B-")  # the best-graded women lead
    assert by_id[members["Monster"].voice].nature == "creature"


def test_natural_narrator_and_leads_by_default_order(voices: list[VoiceInfo]) -> None:
    reading = _episode(corpus_path("peppercarrot-ep17"))
    cast = cast_characters(reading, voices, VoiceConfig(quality="natural"), "en")
    members = {m.character: m.voice for m in cast.members}
    # Pepper is a young woman: bella, the best-graded young woman (A-), before heart (A, adult).
    assert members["narrator"] == "en-michael" and members["Pepper"] == "en-bella"
    # The fast tier is unchanged: joe narrates, joe's woman voices Pepper.
    fast = {m.character: m.voice for m in cast_characters(reading, voices, VoiceConfig(quality="fast"), "en").members}
    assert fast["narrator"] == "en-joe" and fast["Pepper"] == "en-joe-woman"


def _reading(characters: list[Character], speakers: list[str]) -> BookReading:
    texts = [TextRegion(bbox=(0, 0, 1, 1), kind="speech", text="x", speaker=s, panel=0) for s in speakers]
    page = PageReading(
        page=0, width=10, height=10, reading_direction="ltr", panels=[], texts=texts, characters=characters
    )
    return BookReading(source="t", lang="en", pages=[page])


def test_children_and_elders_come_from_natural_voices_and_leads_stay_apart(voices: list[VoiceInfo]) -> None:
    people = [
        Character(id="mum", name="mum", gender="female", age="adult"),
        Character(id="girl", name="girl", gender="female", age="child"),
        Character(id="boy", name="boy", gender="male", age="child"),
        Character(id="gran", name="gran", gender="female", age="old"),
        Character(id="aunt", name="aunt", gender="female", age="adult"),
        Character(id="sis", name="sis", gender="female", age="adult"),
    ]
    reading = _reading(people, ["mum", "mum", "girl", "girl", "boy", "gran", "aunt", "sis"])
    by_id = {v.id: v for v in voices}
    cast = {
        m.character: by_id[m.voice]
        for m in cast_characters(reading, voices, VoiceConfig(quality="natural"), "en").members
    }
    assert cast["girl"].id == "en-bella-girl" and cast["girl"].age == "child"
    assert cast["boy"].id == "en-kore-boy" and cast["boy"].gender == "male"
    assert cast["gran"].age == "old" and cast["gran"].tier == "natural" and cast["gran"].gender == "female"
    # No lead shares a recorded speaker with another: bella voices the girl, so no adult woman is bella.
    sources = [v.derived_from or v.id for v in cast.values()]
    assert len(sources) == len(set(sources)), sources


def test_a_cast_file_still_pins_any_voice(voices: list[VoiceInfo], tmp_path: Path) -> None:
    cast_file = tmp_path / "cast.yaml"
    cast_file.write_text("narrator: en-joe\nPepper: en-joe-girl\n", encoding="utf-8")
    reading = _episode(corpus_path("peppercarrot-ep17"))
    cast = cast_characters(reading, voices, VoiceConfig(quality="natural", cast_file=cast_file), "en")
    members = {m.character: m.voice for m in cast.members}
    assert members["narrator"] == "en-joe" and members["Pepper"] == "en-joe-girl"


def test_japanese_leads_get_recorded_speakers_and_kumo_is_not_the_narrator(voices: list[VoiceInfo]) -> None:
    """Kokoro has one Japanese man: at natural a woman narrates so that he voices the first male lead."""
    people = [
        Character(id="hero", name="hero", gender="male", age="adult"),
        Character(id="heroine", name="heroine", gender="female", age="young"),
        Character(id="teacher", name="teacher", gender="female", age="adult"),
    ]
    reading = _reading(people, ["hero", "hero", "hero", "heroine", "heroine", "teacher"])
    by_id = {v.id: v for v in voices}
    cast = {
        m.character: by_id[m.voice]
        for m in cast_characters(reading, voices, VoiceConfig(quality="natural"), "ja").members
    }
    assert cast["narrator"].id == "ja-gongitsune"
    assert cast["hero"].id == "ja-kumo"
    for lead in ("heroine", "teacher"):
        assert cast[lead].gender == "female" and cast[lead].tier == "natural" and cast[lead].derived_from is None
    assert len({v.id for v in cast.values()}) == len(cast)
    # A narrator pinned to kumo still works; the hero then gets a voice of his own gender from elsewhere.
    pinned = {
        m.character: by_id[m.voice]
        for m in cast_characters(
            reading, voices, VoiceConfig(quality="natural", narrator_voice="ja-kumo"), "ja"
        ).members
    }
    assert pinned["narrator"].id == "ja-kumo" and pinned["hero"].gender == "male" and pinned["hero"].id != "ja-kumo"


def test_japanese_men_after_kumo_get_other_timbres_not_a_woman_re_pitched(voices: list[VoiceInfo]) -> None:
    """Three men and a boy: kumo, then his Japanese with other men's timbres (natural voices), never Mei (a
    woman's voice) pitched down, and the boy a young voice."""
    people = [
        Character(id="doctor", name="doctor", gender="male", age="adult"),
        Character(id="intern", name="intern", gender="male", age="adult"),
        Character(id="director", name="director", gender="male", age="adult"),
        Character(id="boy", name="boy", gender="male", age="young"),
    ]
    reading = _reading(people, ["doctor"] * 4 + ["intern"] * 3 + ["director"] * 2 + ["boy"])
    by_id = {v.id: v for v in voices}
    cast = {
        m.character: by_id[m.voice]
        for m in cast_characters(reading, voices, VoiceConfig(quality="natural"), "ja").members
    }
    assert cast["doctor"].id == "ja-kumo"
    for man in ("intern", "director", "boy"):
        assert cast[man].tier == "natural" and cast[man].gender == "male" and cast[man].derived_from == "ja-kumo"
    assert cast["intern"].age == cast["director"].age == "adult" and cast["boy"].age == "young"
    assert len({v.id for v in cast.values()}) == len(cast)
    # The intern and the director are kumo's Japanese in other men's timbres, not kumo re-pitched.
    assert {cast["intern"].id, cast["director"].id} <= {"ja-kumo-michael", "ja-kumo-fenrir", "ja-kumo-fable"}


def test_japanese_women_after_alpha_get_other_timbres_before_mei(voices: list[VoiceInfo]) -> None:
    """Three adult women: alpha, then alpha's Japanese in two other women's timbres (natural voices of their age),
    not Mei (the fast tier's HTS voice); a young woman still gets a recorded speaker of her age, an old one alpha
    aged."""
    people = [Character(id=f"w{i}", name=f"w{i}", gender="female", age="adult") for i in range(3)]
    people.append(Character(id="girl", name="girl", gender="female", age="young"))
    people.append(Character(id="granny", name="granny", gender="female", age="old"))
    reading = _reading(people, ["w0"] * 5 + ["w1"] * 4 + ["w2"] * 3 + ["girl"] * 2 + ["granny"])
    by_id = {v.id: v for v in voices}
    cast = {
        m.character: by_id[m.voice]
        for m in cast_characters(reading, voices, VoiceConfig(quality="natural"), "ja").members
    }
    assert cast["w0"].id == "ja-alpha"
    assert {cast["w1"].id, cast["w2"].id} == {"ja-alpha-kore", "ja-alpha-sarah"}
    assert cast["girl"].id == "ja-tebukuro"
    assert cast["granny"].id == "ja-alpha-elder"  # a natural old woman (before: Mei's)
    assert len({v.id for v in cast.values()}) == len(cast)
