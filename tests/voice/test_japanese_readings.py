"""Japanese words the reading frontend says wrongly in dialogue, respelled before synthesis: checked through
pyopenjtalk, the frontend both Japanese engines read with, and on the real pages they were found on."""

from __future__ import annotations

from collections.abc import Iterator

import pyopenjtalk
import pytest

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.voice.japanese_readings import kanji_number, money_as_kane, numbers_after_point
from comic_narrator.voice.normalize import normalize_for_speech
from tests.conftest import REPO
from tests.reading.conftest import read_bundled


@pytest.fixture(scope="module")
def ocr() -> Iterator[RapidOcrEngine]:
    with RapidOcrEngine() as engine:
        yield engine


def said(text: str) -> str:
    return str(pyopenjtalk.g2p(normalize_for_speech(text, "ja", "speech"), kana=True))


@pytest.mark.parametrize(
    ("number", "kanji"),
    [
        (1, "一"),
        (10, "十"),
        (11, "十一"),
        (20, "二十"),
        (120, "百二十"),
        (1000, "千"),
        (1433, "千四百三十三"),
        (14330, "一万四千三百三十"),
        (20000, "二万"),
        (10**8, "一億"),
        (123456789, "一億二千三百四十五万六千七百八十九"),
    ],
)
def test_kanji_numerals(number: int, kanji: str) -> None:
    assert kanji_number(number) == kanji


def test_kanji_numerals_refuse_what_they_cannot_write() -> None:
    for number in (0, -3, 10**12):
        with pytest.raises(ValueError, match="out of range"):
            kanji_number(number)


def test_a_price_per_point_is_a_number_not_decimals() -> None:
    assert said("一律一点10円だ") == "イチリツイッテンジューエンダ"
    assert said("1点10円") == "イッテンジューエン"
    # decimals written as decimals, and numbers after anything but a counted point, are left to the frontend
    assert numbers_after_point("3.5点") == "3.5点"
    assert numbers_after_point("一点につき10円") == "一点につき10円"
    assert numbers_after_point("一点05円") == "一点05円", "a leading zero is no number to write in kanji"
    assert said("0.5点") == "レーテンゴテン"


@pytest.mark.parametrize(
    ("line", "reading"),
    [
        ("結局金なんだよ……", "ケッキョクカネナンダヨ"),
        ("金をふんだくって何が悪い?", "カネヲフンダクッテ"),
        ("金さえあれば", "カネサエアレバ"),
        ("あの金を返せ", "アノカネヲカエセ"),
        ("全部金で解決", "ゼンブカネデ"),
        ("金は?", "カネワ"),
    ],
)
def test_money_is_kane(line: str, reading: str) -> None:
    assert reading in said(line)


@pytest.mark.parametrize(
    ("word", "reading"),
    [
        ("料金は", "リョーキン"),
        ("奨学金が", "ショーガクキン"),
        ("闇金が", "ヤミキン"),
        ("保証金が", "ホショーキン"),
        ("18金の指輪", "ジューハチキン"),
        ("金メダル", "キンメダル"),
        ("金曜日に", "キンヨービ"),
        ("お金が", "オカネ"),
        ("裏金を", "ウラガネ"),
        ("遠山の金さん", "キンサン"),  # a name, after a particle
        ("結局金さんが来た", "キンサン"),  # a name, after an adverbial noun
    ],
)
def test_compounds_keep_their_own_readings(word: str, reading: str) -> None:
    assert money_as_kane(word) == word
    assert reading in said(word)


def test_lines_of_real_pages_are_said_as_meant(ocr: RapidOcrEngine) -> None:
    """Black Jack p. 24 and 26 as the local reader reads them: the voices said "itten ichi zero en" and
    "kekkyoku kin nan da yo" (gold, where the doctor means money)."""
    config = VisionConfig(lang="ja")
    pages = [
        REPO / "tests" / "data" / "vision" / "blackjack-training" / name
        for name in ("bj01_000024.jpg", "bj01_000026.jpg")
    ]
    lines = [text.text for page in pages for text in read_bundled(ocr, page, config, manga_hint=True).texts]
    price = next(line for line in lines if "一点10円" in line)
    money = next(line for line in lines if "金なんだよ" in line)
    assert "イッテンジューエン" in said(price)
    assert "カネナンダヨ" in said(money)
    assert "一点10円" in price and "金" in money, "the lettering itself, which the subtitles show, is unchanged"
