"""Signs drawn in the picture (a door plate, a hospital's name, an operating-room lamp) are nobody's line in a
manga: on a page lettered in columns, one level line of kanji alone is read as a caption, without a speaker; a
line somebody says (kana, punctuation, a column) stays speech. Rule by rule, and on a real page."""

from __future__ import annotations

import pytest

from comic_narrator.artifacts import BookReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VoiceConfig
from comic_narrator.reading.bubbles import BubbleShape, TextBlock, TextLine
from comic_narrator.reading.lettering import is_sign, lettered_vertically
from comic_narrator.voice.writer import write_script
from tests.reading.conftest import read_blackjack_page

PLATE = BubbleShape(bbox=(0, 0, 320, 80), area_px2=22_000, solidity=0.97, rectangularity=0.86, tail_xy=None)


def _block(text: str, vertical: bool = False, angle: float = 0.0, lines: int = 1) -> TextBlock:
    box = (40, 40, 40, 200) if vertical else (40, 40, 300, 60)
    line = TextLine(bbox=box, text=text, score=0.9, vertical=vertical, angle_deg=angle, letter_px=50.0)
    return TextBlock(lines=(line,) * lines, bbox=box, bubble=PLATE)


@pytest.mark.parametrize("text", ["救急用入口", "誠同病院", "手術中", "宿直室", "院長 室"])
def test_a_level_line_of_kanji_on_a_manga_page_is_a_sign(text: str) -> None:
    assert is_sign(_block(text), text, page_vertical=True)


@pytest.mark.parametrize(
    "text",
    ["事故です", "先生!!", "院長!", "了解…", "はい", "24時間", "OK", "院"],  # kana, punctuation, digits, one kanji
)
def test_what_somebody_says_is_no_sign(text: str) -> None:
    assert not is_sign(_block(text), text, page_vertical=True)


def test_a_sign_needs_a_page_lettered_in_columns_and_one_level_line() -> None:
    assert not is_sign(_block("救急用入口"), "救急用入口", page_vertical=False)  # a Japanese page lettered in rows
    assert not is_sign(_block("救急用入口", vertical=True), "救急用入口", page_vertical=True)  # a column
    assert not is_sign(_block("救急用入口", angle=6.0), "救急用入口", page_vertical=True)  # tilted: display type
    assert is_sign(_block("救急用入口", angle=-5.0), "救急用入口", page_vertical=True)  # a plate drawn a little askew
    assert not is_sign(_block("救急用入口", lines=2), "救急用入口", page_vertical=True)


def test_a_page_is_lettered_in_columns_when_most_of_its_japanese_is() -> None:
    columns = [_block("きのうの朝から", vertical=True) for _ in range(3)]
    rows = [_block("きのうの朝から") for _ in range(3)]
    texts = ["きのうの朝から"] * 3
    assert lettered_vertically(columns + rows[:1], texts + texts[:1])
    assert not lettered_vertically(columns[:1] + rows, texts[:1] + texts)
    assert not lettered_vertically(columns[:2], texts[:2])  # two blocks say too little
    assert lettered_vertically(columns, ["はい"] * 3)  # three of two letters are enough
    assert not lettered_vertically(columns, ["は!"] * 3)  # one letter is no Japanese lettering
    assert not lettered_vertically(columns, ["OK", "No", "Hi"])  # no Japanese


@pytest.mark.parametrize(
    ("page", "sign"),
    [
        ("bj01_000017.jpg", "救急用入口"),  # among the page's columns of lettering
        ("bj01_000033.jpg", "教急用入口"),  # (OCR's 教 for 救) a page of few texts: the book's direction decides
    ],
)
def test_a_sign_on_a_real_page_is_read_as_a_caption(ocr: RapidOcrEngine, page: str, sign: str) -> None:
    # Black Jack vol. 1 pp. 17 and 33 (development pages): the emergency entrance's sign was voiced as a line of
    # the character beside it.
    reading = read_blackjack_page(ocr, page)
    signs = [t for t in reading.texts if t.text == sign]
    assert len(signs) == 1 and signs[0].kind == "caption" and signs[0].speaker is None
    script = write_script(BookReading(source="test", lang="ja", pages=[reading]), VoiceConfig())
    assert next(line for line in script.lines if line.text == sign).speaker == "narrator"


def test_the_balloons_beside_a_sign_are_still_speech(ocr: RapidOcrEngine) -> None:
    reading = read_blackjack_page(ocr, "bj01_000017.jpg")
    spoken = [t for t in reading.texts if t.kind in ("speech", "shout")]
    assert len(spoken) >= 3 and all(t.speaker for t in spoken)
