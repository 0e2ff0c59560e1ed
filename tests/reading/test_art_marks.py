"""Drawings the OCR reads as text (a telephone's hand-drawn ring, a monitor's trace) stay out of the reading, on a
real page and rule by rule; lettering of one letter or none (a balloon holding only "!" or "…") stays in."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import BookReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VoiceConfig
from comic_narrator.reading.bubbles import BubbleShape, TextBlock, TextLine
from comic_narrator.reading.reader import (
    ART_MARKS,
    _is_latin_misread,
    _is_stray_glyph,
    _japanese_only,
    _texts_in_order,
)
from comic_narrator.voice.writer import write_script
from tests.reading.conftest import read_blackjack_page

BALLOON = BubbleShape(bbox=(0, 0, 120, 200), area_px2=18_000, solidity=0.97, rectangularity=0.78, tail_xy=None)


def _block(text: str, balloon: bool = True) -> TextBlock:
    line = TextLine(bbox=(40, 40, 40, 120), text=text, score=0.9, vertical=True, angle_deg=0.0, letter_px=30.0)
    return TextBlock(lines=(line,), bbox=line.bbox, bubble=BALLOON if balloon else None)


@pytest.mark.parametrize("text", ["R≥===", "7<7", "=ジ", "|||", "＝＝"])
def test_signs_of_the_art_with_a_letter_at_most_are_not_lettering(text: str) -> None:
    assert _is_stray_glyph(_block(text))
    assert _is_stray_glyph(_block(text, balloon=False))


@pytest.mark.parametrize("text", ["!", "……", "え!?", "A=B", "ジ", "はい", "24時間", "OK?", "〜〜", "ー"])
def test_a_balloons_lettering_stays(text: str) -> None:
    assert not _is_stray_glyph(_block(text))


def test_every_art_mark_alone_with_one_letter_is_left_out() -> None:
    for mark in ART_MARKS:
        assert _is_stray_glyph(_block(f"ジ{mark}")), mark
        assert not _is_stray_glyph(_block(f"はい{mark}")), mark


def test_a_drawing_read_as_a_line_on_a_real_page_is_not_in_the_script(ocr: RapidOcrEngine) -> None:
    # Black Jack vol. 1 p. 18 (a development page): the reader read a drawing in a light region as '7<7' and the
    # script voiced it.
    reading = read_blackjack_page(ocr, "bj01_000018.jpg")
    texts = [t.text for t in reading.texts]
    assert texts and not any(any(c in ART_MARKS for c in t) for t in texts), texts
    script = write_script(BookReading(source="test", lang="ja", pages=[reading]), VoiceConfig())
    assert script.lines and all("<" not in line.text for line in script.lines)


def _row(text: str) -> TextBlock:
    line = TextLine(bbox=(40, 40, 200, 40), text=text, score=0.9, vertical=False, angle_deg=0.0, letter_px=30.0)
    return TextBlock(lines=(line,), bbox=line.bbox, bubble=None)


@pytest.mark.parametrize("text", ["Ti1 7", "Fi", "Mn A Mm", "x", "Q7"])
def test_latin_with_no_word_on_a_japanese_page_is_a_misread(text: str) -> None:
    assert _is_latin_misread(_row(text))


@pytest.mark.parametrize("text", ["OK", "ICU", "Hello", "No.1 Dr Kim", "120", "Tシャツ", "CTスキャン", "……"])
def test_a_word_a_number_or_japanese_is_no_misread(text: str) -> None:
    assert not _is_latin_misread(_row(text))


def test_a_siren_read_as_latin_is_not_narrated(ocr: RapidOcrEngine) -> None:
    # Black Jack vol. 1 p. 22 (a development page): an ambulance's hand-lettered ファン ファン was read as the
    # caption 'Ti1 7' and narrated.
    reading = read_blackjack_page(ocr, "bj01_000022.jpg")
    assert reading.texts and not any("Ti1" in t.text for t in reading.texts)
    assert any(t.kind == "speech" for t in reading.texts)


@pytest.mark.parametrize(
    ("text", "japanese"), [("工店", True), ("月月刀", True), ("スゴイ", True), ("Hello 工", False)]
)
def test_japanese_only_lettering(text: str, japanese: bool) -> None:
    assert _japanese_only(text) is japanese


def test_kanji_on_an_english_page_is_a_sound_nobody_says() -> None:
    """Pepper&Carrot ep. 18 p. 5 (lettered, 992 px): the recogniser, which also reads Chinese, read the KITCHENS
    sign over a door as 工店, and the narrator read it as a caption. On an English page, lettering with no Latin
    letter is a sound word (a translated manga's left in the art, or the art misread); on a Japanese page the
    same block is lettering."""
    image = np.full((400, 600, 3), 235, dtype=np.uint8)
    panels = [(10, 10, 580, 380)]
    blocks = [
        _loose("工店", (300, 40, 60, 24)),
        _loose("If you prefer, we can take care of her...", (60, 200, 420, 24)),
    ]
    english = _texts_in_order(image, blocks, panels, "ltr", "en", "story", False)
    assert [t.kind for t in english if t.text == "工店"] == ["sound"]
    assert all(t.kind != "sound" for t in english if t.text != "工店")
    japanese = _texts_in_order(image, blocks, panels, "rtl", "ja", "story", False)
    assert [t.kind for t in japanese if t.text == "工店"] in (["caption"], ["speech"])  # a sign, or lettering


def _loose(text: str, box: tuple[int, int, int, int]) -> TextBlock:
    line = TextLine(bbox=box, text=text, score=0.9, vertical=False, angle_deg=0.0, letter_px=22.0)
    return TextBlock(lines=(line,), bbox=box, bubble=None, light_around=0.9)
