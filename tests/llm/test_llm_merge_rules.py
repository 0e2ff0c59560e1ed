"""The LLM answer's merge, rule by rule: which listed characters count and what they keep, which items reach the
page, and a speaker the book already knows."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from comic_narrator.artifacts import Character, PageReading, Panel, TextRegion
from comic_narrator.reading.llm_merge import listed_characters, merge_answer


def _page() -> PageReading:
    texts = [
        TextRegion(bbox=(10, 10, 80, 40), kind="speech", text="Where is Carrot?", speaker="char1", panel=0, lang="en"),
        TextRegion(bbox=(10, 60, 80, 40), kind="shout", text="CARROT!", speaker="char1", panel=0, lang="en"),
        TextRegion(bbox=(10, 110, 80, 20), kind="caption", text="Meanwhile...", panel=0, lang="en"),
        TextRegion(bbox=(10, 380, 80, 10), kind="furniture", text="www.peppercarrot.com", panel=-1, lang="en"),
    ]
    return PageReading(
        page=0, width=400, height=400, reading_direction="ltr", panels=[Panel(bbox=(0, 0, 400, 300))], texts=texts
    )


def _item(index: int, **fields: Any) -> dict[str, Any]:
    page = _page()
    return {"index": index, "text": page.texts[index].text, "kind": page.texts[index].kind, **fields}


def test_listed_characters_skip_what_is_no_character_and_keep_the_first_of_one_id() -> None:
    answer = {
        "characters": [
            "Pepper",  # not an object
            {"name": "   ", "gender": "male"},  # no name
            {"gender": "female"},
            {"name": "Pepper", "gender": "female", "age": "young", "nature": "human"},
            {"name": "pepper", "gender": "male", "age": "old", "nature": "creature"},  # the same id again
            {"name": "Carrot", "gender": "cat", "age": "kitten", "nature": "creature"},
            {"name": "Robot", "age": "child", "nature": "machine"},
        ]
    }
    listed = listed_characters(answer)
    assert list(listed) == ["pepper", "carrot", "robot"]
    assert listed["pepper"] == Character(id="pepper", name="Pepper", gender="female", age="young", nature="human")
    carrot = listed["carrot"]
    assert (carrot.gender, carrot.age, carrot.nature) == ("unknown", "unknown", "creature")  # out of range: unknown
    robot = listed["robot"]
    assert (robot.gender, robot.age, robot.nature) == ("unknown", "child", "machine")


def test_items_that_name_no_region_of_the_story_change_nothing() -> None:
    page = _page()
    answer = {
        "characters": [{"name": "Pepper"}],
        "texts": [
            "not an item",
            {"index": "0", "text": "Where is Carrot??", "speaker": "Pepper"},  # not a number
            {"index": -1, "text": "x", "speaker": "Pepper"},
            {"index": 4, "text": "x", "speaker": "Pepper"},  # past the last region
            {"index": 3, "text": "www.peppercarrot.com", "kind": "caption"},  # furniture stays furniture
        ],
    }
    merged = merge_answer(page, answer, "m")
    assert merged.texts == page.texts
    # The same speaker given with a valid index is taken.
    answer["texts"].append(_item(0, speaker="Pepper"))
    assert merge_answer(page, answer, "m").texts[0].speaker == "pepper"


def test_a_kind_is_changed_only_when_the_answer_gives_another_allowed_one() -> None:
    page = _page()
    same = merge_answer(page, {"texts": [_item(1, kind="shout")]}, "m")
    assert same.texts[1].kind == "shout"
    unknown = merge_answer(page, {"texts": [_item(1, kind="whisper")]}, "m")  # no such kind: kept
    assert unknown.texts[1].kind == "shout"
    changed = merge_answer(page, {"texts": [_item(1, kind="speech")]}, "m")  # a shout read as speech: allowed
    assert changed.texts[1].kind == "speech"


def test_a_speaker_the_book_knows_keeps_what_the_book_knows_of_them() -> None:
    page = _page()
    known = [Character(id="carrot", name="Carrot", gender="male", age="young", nature="creature")]
    merged = merge_answer(page, {"characters": [], "texts": [_item(0, speaker="Carrot")]}, "m", known)
    assert merged.texts[0].speaker == "carrot"
    assert merged.characters == known  # not a bare name: its gender, age and nature come along


def test_only_balloons_get_speakers_and_only_known_emotions_are_taken() -> None:
    page = _page()
    answer = {
        "characters": [{"name": "Pepper"}],
        "texts": [
            _item(0, speaker="Pepper", emotion="angry"),
            _item(1, speaker="Pepper", emotion="furious"),  # no such emotion
            _item(2, speaker="Pepper", emotion="sad"),  # a caption has no speaker
        ],
    }
    merged = merge_answer(page, answer, "m")
    assert [t.speaker for t in merged.texts[:3]] == ["pepper", "pepper", None]
    assert [t.emotion for t in merged.texts[:3]] == ["angry", None, "sad"]


def test_a_page_s_warning_names_six_rejections_and_counts_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    texts = [
        TextRegion(bbox=(10, 10 + 40 * n, 80, 30), kind="speech", text=f"Line {n}.", panel=0, lang="en")
        for n in range(8)
    ]
    page = _page().model_copy(update={"texts": texts})
    answer = {"characters": [], "texts": [{"index": n, "text": f"Line {n}.", "speaker": f"X{n}"} for n in range(8)]}
    with caplog.at_level(logging.WARNING, logger="comic_narrator"):
        merge_answer(page, answer, "m")
    assert "speaker 'X5'" in caplog.text and "speaker 'X6'" not in caplog.text and "; 2 more" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="comic_narrator"):
        merge_answer(page, {"characters": [], "texts": answer["texts"][:6]}, "m")
    assert "speaker 'X5'" in caplog.text and "more" not in caplog.text
