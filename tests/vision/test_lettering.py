"""Utterance text: line joining, de-hyphenation, all-caps to sentence case."""

from __future__ import annotations

from comic_narrator.vision.bubbles import TextBlock, TextLine
from comic_narrator.vision.lettering import block_text, is_all_caps, sentence_case


def _block(*texts: str) -> TextBlock:
    lines = tuple(
        TextLine(bbox=(0, i * 20, 100, 18), text=t, score=1.0, vertical=False, angle_deg=0.0, letter_px=18.0)
        for i, t in enumerate(texts)
    )
    return TextBlock(lines=lines, bbox=(0, 0, 100, 20 * len(texts)), bubble=None)


def test_lines_of_a_balloon_join_into_one_utterance() -> None:
    assert block_text(_block("YOU DON'T TEACH", "REAL WITCH-", "CRAFT!")) == "YOU DON'T TEACH REAL WITCHCRAFT!"


def test_a_dash_between_words_is_kept() -> None:
    assert block_text(_block("I'm going -", "to the witches")) == "I'm going - to the witches"


def test_japanese_columns_join_without_spaces() -> None:
    assert block_text(_block("みんな知ってるけど", "名前は知らない")) == "みんな知ってるけど名前は知らない"


def test_all_caps_becomes_sentence_case() -> None:
    assert (
        sentence_case("NO! I'M LEAVING!! YOU WERE JUST CLOSER TO IT.")
        == "No! I'm leaving!! You were just closer to it."
    )
    assert sentence_case("OH, NO YOU DON'T! I SAW IT FIRST") == "Oh, no you don't! I saw it first"


def test_all_caps_detection() -> None:
    assert is_all_caps("I SAW THE MONEY FIRST, SO IT'S MINE!")
    assert not is_all_caps("Carrot, get out the map")
    assert not is_all_caps("!")
