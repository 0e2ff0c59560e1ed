"""Utterance text and kind: line joining, de-hyphenation, sentence case, look-alikes, caption/title/sound rules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.bubbles import BubbleShape, TextBlock, TextLine
from comic_narrator.reading.lettering import (
    block_text,
    classify,
    counter_ka,
    is_all_caps,
    japanese_forms,
    latin_lookalikes,
    sentence_case,
)
from comic_narrator.reading.reader import read_page
from tests.reading.conftest import blackjack_sample_pages, page_for

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"


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


def test_space_restored_after_tight_punctuation() -> None:
    assert block_text(_block("EAMES!WE'VE FOUND IT!", "LOOK,VEZIN!")) == "EAMES! WE'VE FOUND IT! LOOK, VEZIN!"
    assert block_text(_block("係船柱！", "あれ？")) == "係船柱！あれ？"


def _lines_at(lefts_and_widths: list[tuple[int, int]]) -> TextBlock:
    lines = tuple(
        TextLine(bbox=(x, i * 20, w, 18), text="WORDS", score=1.0, vertical=False, angle_deg=0.0, letter_px=18.0)
        for i, (x, w) in enumerate(lefts_and_widths)
    )
    return TextBlock(lines=lines, bbox=(0, 0, 400, 20 * len(lines)), bubble=None, light_around=0.9)


def test_flush_left_narration_is_a_caption_and_centred_lettering_is_speech() -> None:
    flush_left = _lines_at([(10, 380), (10, 250), (11, 330), (10, 120)])
    centred = _lines_at([(10, 380), (75, 250), (35, 330), (140, 120)])
    assert classify(flush_left, "THE HEART OF THE JUNGLE, AS TWO MEN REACH THE GOAL", 18.0, False) == "caption"
    assert classify(centred, "WHY COULDN'T YOU LOOK FOR A CAR IN TOWN", 18.0, False) == "speech"
    # Buster Bear #10 p. 2: three centred lines, the OCR reading the second's "I" apart, 12 px left of the rest.
    pieces = [
        TextLine(bbox=box, text=text, score=1.0, vertical=False, angle_deg=0.0, letter_px=float(box[3]))
        for box, text in (
            ((580, 992, 204, 24), "DON'T CARE, WILLIE"),
            ((571, 1015, 21, 19), "I"),
            ((583, 1012, 197, 25), "JUST CAN'T CARRY"),
            ((586, 1031, 170, 25), "YOU ANY MORE!"),
        )
    ]
    balloon = TextBlock(lines=tuple(pieces), bbox=(571, 992, 213, 64), bubble=None, light_around=0.9)
    assert classify(balloon, "DON'T CARE, WILLIE I JUST CAN'T CARRY YOU ANY MORE!", 25.0, False) == "speech"


def test_greek_and_cyrillic_lookalikes_become_latin() -> None:
    assert latin_lookalikes("WΑTCH ΟUT! Сome оn") == "WATCH OUT! Come on"
    assert latin_lookalikes("係船柱") == "係船柱"


def _loose(text: str, letter_px: float, angle_deg: float = 0.0, width_px: int = 300) -> TextBlock:
    line = TextLine(
        bbox=(0, 0, width_px, 40), text=text, score=1.0, vertical=False, angle_deg=angle_deg, letter_px=letter_px
    )
    return TextBlock(lines=(line,), bbox=line.bbox, bubble=None, light_around=0.9)


def test_display_lettering_is_a_title_at_the_top_and_a_sound_elsewhere() -> None:
    title = _loose("SKULL", 90.0)
    assert classify(title, "SKULL", 20.0, False, near_top=True) == "caption"
    assert classify(title, "SKULL", 20.0, False, near_top=False) == "sound"
    assert classify(_loose("CRASH!!", 90.0), "CRASH!!", 20.0, False, near_top=True) == "sound"
    assert classify(_loose("WHAM", 90.0, angle_deg=25.0), "WHAM", 20.0, False, near_top=True) == "sound"
    # The title's edges: four letters or more, set level within five degrees.
    assert classify(_loose("BEAR", 90.0), "BEAR", 20.0, False, near_top=True) == "caption"
    assert classify(_loose("OWL", 90.0), "OWL", 20.0, False, near_top=True) == "sound"
    assert classify(_loose("SKULL", 90.0, angle_deg=5.0), "SKULL", 20.0, False, near_top=True) == "caption"
    assert classify(_loose("SKULL", 90.0, angle_deg=6.0), "SKULL", 20.0, False, near_top=True) == "sound"


def test_loose_lettering_is_an_open_balloon_where_light_surrounds_it() -> None:
    # Lettering with balloon-light paper around six tenths of it is a balloon whose outline is open; less, a caption.
    def kind(light: float) -> str:
        block = TextBlock(
            lines=_loose("WE MUST GO ON", 20.0).lines, bbox=(0, 0, 300, 40), bubble=None, light_around=light
        )
        return classify(block, "WE MUST GO ON", 20.0, False)

    assert kind(0.65) == "speech"
    assert kind(0.55) == "caption"


def test_loose_lettering_across_the_panel_is_a_caption() -> None:
    strip = _loose("SCREAMING, IT CAME FROM THE PLACE OF MURDER.", 20.0, width_px=900)
    assert classify(strip, strip.lines[0].text, 20.0, False, panel_wide=True) == "caption"
    assert classify(strip, strip.lines[0].text, 20.0, False, panel_wide=False) == "speech"


def _column(x: int, y: int, w: int, h: int, text: str) -> TextLine:
    return TextLine(bbox=(x, y, w, h), text=text, score=1.0, vertical=True, angle_deg=0.0, letter_px=float(w))


def test_furigana_beside_a_column_is_not_read_twice() -> None:
    columns = (
        _column(200, 100, 20, 120, "船を港に係留する"),
        _column(221, 130, 9, 40, "けいりゅう"),  # ruby right of 係留: half as wide, kana only
        _column(170, 100, 20, 90, "柱みたいな"),
    )
    block = TextBlock(lines=columns, bbox=(170, 100, 60, 120), bubble=None)
    assert block_text(block) == "船を港に係留する柱みたいな"


def test_narrow_columns_that_are_not_ruby_are_kept() -> None:
    columns = (
        _column(200, 100, 20, 120, "みんな知ってるけど"),
        _column(170, 100, 11, 30, "！？"),  # narrow, but punctuation, not kana
        _column(140, 100, 20, 60, "あれ"),
    )
    block = TextBlock(lines=columns, bbox=(140, 100, 80, 120), bubble=None)
    assert block_text(block) == "みんな知ってるけど！？あれ"


def test_a_narrow_kana_column_standing_apart_is_not_ruby() -> None:
    # As narrow as furigana and kana only, but 60 px from any full column: small lettering of its own, kept.
    columns = (
        _column(200, 100, 20, 120, "船を港に係留する"),
        _column(280, 100, 9, 40, "ねえ"),
        _column(170, 100, 20, 90, "柱みたいな"),
    )
    block = TextBlock(lines=columns, bbox=(170, 100, 119, 120), bubble=None)
    assert block_text(block) == "船を港に係留するねえ柱みたいな"


def _in_balloon(text: str, letter_px: float, solidity: float) -> TextBlock:
    line = TextLine(bbox=(0, 0, 200, 40), text=text, score=1.0, vertical=False, angle_deg=0.0, letter_px=letter_px)
    # An oval (rectangularity ~0.78, no corners), smooth (solidity ~1) or spiked like a burst (lower).
    bubble = BubbleShape(
        bbox=(-20, -20, 240, 80), area_px2=15_000, solidity=solidity, rectangularity=0.78, tail_xy=None
    )
    return TextBlock(lines=(line,), bbox=line.bbox, bubble=bubble)


def test_a_burst_balloon_or_big_letters_make_an_exclamation_a_shout() -> None:
    # A spiked balloon around an exclamation: a shout; the same words in a smooth oval at the page's letter size
    # are speech (on an all-capitals page, capitals say nothing).
    assert classify(_in_balloon("WATCH OUT!", 20.0, 0.7), "WATCH OUT!", 20.0, False) == "shout"
    assert classify(_in_balloon("WATCH OUT!", 20.0, 0.98), "WATCH OUT!", 20.0, False) == "speech"
    assert classify(_in_balloon("WELL, WELL.", 20.0, 0.7), "WELL, WELL.", 20.0, False) == "speech"  # no "!"
    # Lettering half again as big as the page's: a shout even in a smooth oval.
    assert classify(_in_balloon("WATCH OUT!", 30.0, 0.98), "WATCH OUT!", 20.0, False) == "shout"
    # On a mixed-case page, an exclamation set in capitals is raised; in mixed case it is not.
    assert classify(_in_balloon("WATCH OUT!", 20.0, 0.98), "WATCH OUT!", 20.0, True) == "shout"
    assert classify(_in_balloon("Watch out!", 20.0, 0.98), "Watch out!", 20.0, True) == "speech"


def _on_light_region(text: str, letter_px: float, angle_deg: float, fill_gap: float) -> TextBlock:
    line = TextLine(
        bbox=(0, 0, 200, 60), text=text, score=1.0, vertical=False, angle_deg=angle_deg, letter_px=letter_px
    )
    region = BubbleShape(
        bbox=(-60, -60, 320, 180), area_px2=40_000, solidity=0.8, rectangularity=0.6, tail_xy=None, fill_gap=fill_gap
    )
    return TextBlock(lines=(line,), bbox=line.bbox, bubble=region)


def test_a_word_at_a_slant_or_outsize_on_a_pale_patch_of_art_is_a_sound() -> None:
    # A pale patch of painted art around a sound word (a sky, a wall; its lightness 14-47 under the paper's) is
    # found as a light region like a balloon; a slanted or outsize word there is a sound drawn over the art.
    def kind(text: str, letter_px: float, angle_deg: float, fill_gap: float) -> str:
        return classify(_on_light_region(text, letter_px, angle_deg, fill_gap), text, 25.0, True)

    assert kind("CRACK!!", 100.0, -28.0, 22.0) == "sound"
    assert kind("swiiip", 25.0, 30.0, 16.0) == "sound"
    assert kind("Shkak!!!", 50.0, 4.0, 24.0) == "sound"
    # In a balloon (lettered on paper) a slanted or outsize exclamation is a shout...
    assert kind("Oh no !!!", 40.0, -16.0, 0.0) == "shout"
    assert kind("Shkak!!!", 50.0, 4.0, 0.0) == "shout"
    # A few level words there are a sign or a banner, which the narrator may read; a sentence somebody says stays
    # theirs, as does a level line of more words than a sign holds.
    assert kind("School of Witchcraft", 25.0, 0.0, 20.0) == "caption"
    assert kind("誠同病院", 25.0, 0.0, 40.0) == "caption"
    assert kind("行くぞ!!", 100.0, -28.0, 22.0) == "shout"
    assert kind("牛田さん", 25.0, 0.0, 22.0) == "speech"
    assert kind("I told you to wait for me here", 25.0, 0.0, 22.0) == "speech"
    assert kind("Come to the Potion Challenge", 25.0, 0.0, 20.0) == "speech"  # five words: more than a sign holds
    # ... unless it runs across the panel: a caption box of its own colour (Chilling Tales #13 p. 1, yellow, its
    # colour running into the title's, so no rectangle).
    across = _on_light_region("SCREAMING, IT CAME FROM THE PLACE OF MURDER.", 37.0, 0.0, 17.3)
    assert classify(across, "SCREAMING, IT CAME FROM THE PLACE OF MURDER.", 25.0, False, panel_wide=True) == "caption"
    assert classify(across, "SCREAMING, IT CAME FROM THE PLACE OF MURDER.", 25.0, False) == "speech"
    # 10 under the paper is no longer paper (balloons measure 0-3, the art's patches 14 and more); 5 still is.
    assert kind("swiiip", 25.0, 30.0, 10.0) == "sound"
    assert kind("Oh no !!!", 40.0, -16.0, 5.0) == "shout"
    assert kind("School of Witchcraft", 25.0, 0.0, 0.0) == "speech"  # in a balloon


def _on_board(text: str, corners: int, solidity: float) -> TextBlock:
    line = TextLine(bbox=(0, 0, 200, 40), text=text, score=1.0, vertical=False, angle_deg=0.0, letter_px=20.0)
    # A board on posts: four straight sides, but the posts keep it from filling its box as a caption box does.
    board = BubbleShape(
        bbox=(-10, -10, 220, 70), area_px2=12_000, solidity=solidity, rectangularity=0.87, tail_xy=None, corners=corners
    )
    return TextBlock(lines=(line,), bbox=line.bbox, bubble=board)


@pytest.mark.parametrize(
    ("text", "corners", "solidity", "kind"),
    [
        ("CHOLLY CHIPMUNK'S USED CARS", 4, 0.96, "caption"),  # a sign board: the narrator may read it
        ("$15000", 4, 0.96, "caption"),  # a price card on a windscreen
        ("I SAW IT FIRST!", 4, 0.96, "speech"),  # a sentence said in a balloon the frame cut square
        ("Well, we ought to share", 4, 0.96, "speech"),
        ("FIVE WORDS ARE TOO MANY", 4, 0.96, "speech"),  # more than a sign holds
        ("CHOLLY CHIPMUNK'S USED CARS", 6, 0.96, "speech"),  # a balloon's outline, not a board's four sides
        ("CHOLLY CHIPMUNK'S USED CARS", 4, 0.9, "speech"),  # not solid: a ragged light patch
        ("正しいってのは弱いって事だ", 4, 0.99, "speech"),  # Japanese lines end without a mark: a cut balloon
    ],
)
def test_a_few_words_on_a_four_sided_board_are_a_sign(text: str, corners: int, solidity: float, kind: str) -> None:
    assert classify(_on_board(text, corners, solidity), text, 20.0, False) == kind


def test_loose_short_lettering_is_a_sound_when_tilted_or_a_lone_exclamation() -> None:
    # Loose lettering at the page's size: a word set at a slant is a sound effect; level, it is speech.
    assert classify(_loose("WHAM", 20.0, angle_deg=25.0), "WHAM", 20.0, False) == "sound"
    assert classify(_loose("WHAM", 20.0), "WHAM", 20.0, False) == "speech"
    # One short line ending in "!" is a sound; two lines of it are somebody talking.
    assert classify(_loose("BLAM!", 20.0), "BLAM!", 20.0, False) == "sound"
    lines = (_loose("HEY!", 20.0).lines[0], _loose("YOU!", 20.0).lines[0])
    two = TextBlock(lines=lines, bbox=(0, 0, 300, 80), bubble=None, light_around=0.9)
    assert classify(two, "HEY! YOU!", 20.0, False) == "speech"


def test_a_loose_word_said_over_and_over_is_a_sound() -> None:
    # A noise repeated, one line or stacked a word a line, is a sound; a short word repeated ("No no no") or a
    # word said once is not.
    def kind(*lines: str) -> str:
        stacked = tuple(_loose(text, 20.0).lines[0] for text in lines)
        block = TextBlock(lines=stacked, bbox=(0, 0, 300, 40 * len(lines)), bubble=None, light_around=0.9)
        return classify(block, " ".join(lines), 20.0, True)

    assert kind("Gulp", "Gulp") == "sound"
    assert kind("Clap Clap Clap") == "sound"
    assert kind("ドキドキ") == "sound"
    assert kind("No no no") == "speech"
    assert kind("Gulp") == "speech"


@pytest.mark.parametrize("text", ["FIN", "- FIN -", "Fin", "THE END.", "To be continued...", "つづく", "完"])
def test_the_end_mark_is_the_narrators_wherever_it_sits(text: str) -> None:
    # In a balloon or loose, level or set large at a slant: a caption, never somebody's line or a noise.
    assert classify(_in_balloon(text, 20.0, 0.98), text, 20.0, True) == "caption"
    assert classify(_loose(text, 60.0, angle_deg=20.0), text, 20.0, True) == "caption"


@pytest.mark.parametrize("text", ["Fine", "End?", "Fin!", "The end of the road", "完璧"])
def test_words_like_an_end_mark_are_not_one(text: str) -> None:
    assert classify(_in_balloon(text, 20.0, 0.98), text, 20.0, True) != "caption"


def test_loose_exclamations_are_sounds_unless_they_say_a_sentence() -> None:
    # One loose column ending in "!!" reads as a sound word, unless its words are a sentence somebody says: a
    # polite ending, a name called, or a sentence-final particle (the balloon's outline was not found).
    def kind(text: str) -> str:
        block = TextBlock(lines=(_column(0, 0, 30, 200, text),), bbox=(0, 0, 30, 200), bubble=None, light_around=0.9)
        return classify(block, text, 30.0, False)

    assert kind("ガーン!!") == "sound"
    assert kind("ドドドド!") == "sound"
    assert kind("事故です!!") == "speech"  # Black Jack vol. 1 p. 22, read as a sound before
    assert kind("スゴイな......牛田さん......") != "sound"
    assert kind("行くぞ!!") == "speech"


@pytest.mark.parametrize(
    ("read", "meant"),
    [
        ("卒業から3力月", "卒業から3ヵ月"),
        ("三力国を回った", "三ヵ国を回った"),
        ("5力所", "5ヵ所"),
        ("何力月も", "何ヵ月も"),
        ("努力月間", "努力月間"),  # 力 after a kanji that is no number: the word 努力
        ("力月", "力月"),  # no number before it
        ("3力で", "3力で"),  # no counter after it
        ("体力", "体力"),
    ],
)
def test_a_numbers_counter_ka_read_as_the_kanji_for_strength_is_put_back(read: str, meant: str) -> None:
    assert counter_ka(read) == meant


def test_the_manga_samples_three_months_are_said_as_months(ocr: RapidOcrEngine) -> None:
    """p. 9 of the bundled sample: the recogniser reads the caption's 3ヵ月 as 3力月, which a Japanese voice says
    "san chikara tsuki"."""
    image = blackjack_sample_pages()[1]
    reading = read_page(image, page_for(image), config=VisionConfig(), manga_hint=True, ocr=ocr)
    caption = [t.text for t in reading.texts if "卒業から" in t.text]
    assert len(caption) == 1 and "3ヵ月" in caption[0], [t.text for t in reading.texts]
    assert not any("力月" in t.text for t in reading.texts)


def test_simplified_chinese_glyphs_become_the_japanese_kanji_they_stand_for() -> None:
    assert japanese_forms("自動車损害赔償保険") == "自動車損害賠償保険"
    assert japanese_forms("一点单価") == "一点単価"
    assert japanese_forms("超音波検查") == "超音波検査"
    # Characters Japanese writes stay, even where Chinese uses them too (冲 is also a simplified 衝).
    assert japanese_forms("衝突 冲 个 沖縄 単価 時間") == "衝突 冲 个 沖縄 単価 時間"


def test_a_manga_page_read_with_chinese_glyphs_is_said_in_japanese(ocr: RapidOcrEngine) -> None:
    """Black Jack p. 25: the recogniser returns 赔 for 賠 and 单 for 単, which a Japanese voice cannot say."""
    image = np.asarray(Image.open(DATA / "blackjack-training" / "bj01_000025.jpg").convert("RGB"))
    reading = read_page(image, page_for(image), config=VisionConfig(), manga_hint=True, ocr=ocr)
    words = "".join(t.text for t in reading.texts)
    assert "損害賠償保険" in words and "一点単価" in words, [t.text for t in reading.texts]
    assert not set(words) & set("损赔单时查")
