"""The shipped font: what it covers, its licence and provenance, and text laid out and rendered with it."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.video.color import CHROMA_ZERO, i420_planes
from comic_narrator.video.text import FONT_FILE, blend_text, font, render_lines, wrap

FONT_DIR = FONT_FILE.parent


def test_the_font_ships_small_with_its_licence_and_provenance() -> None:
    assert FONT_FILE.stat().st_size < 3_000_000
    licence = (FONT_DIR / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence
    notice = (FONT_DIR / "NOTICE.md").read_text(encoding="utf-8")
    assert "@expo-google-fonts/noto-sans-jp" in notice and "subset_font.py" in notice
    assert (FONT_DIR / "subset_font.py").exists()


@pytest.mark.parametrize("char", list("AzÉßあアッ漢東京嵐読「」。！、"))
def test_latin_kana_and_level_one_kanji_have_glyphs(char: str) -> None:
    mask = font(40).getmask(char)
    assert mask.getbbox() is not None, f"{char!r} draws nothing"


def test_different_characters_draw_differently() -> None:
    images = {char: bytes(font(32).getmask(char)) for char in "東京漢字AB"}
    assert len(set(images.values())) == len(images)


def test_wrapping_keeps_within_the_width_and_never_starts_a_line_with_a_closing_mark() -> None:
    face = font(40)
    english = wrap("We have to get out of here before the storm comes, Carrot!", face, 400)
    assert len(english) > 1 and all(face.getlength(line) <= 400 for line in english)
    assert " ".join(english) == "We have to get out of here before the storm comes, Carrot!"
    japanese = wrap("嵐が来る前にここを出なきゃ、キャロット！急いで！", face, 240)
    assert "".join(japanese) == "嵐が来る前にここを出なきゃ、キャロット！急いで！"
    assert len(japanese) > 1 and not any(line[0] in "、。！」ッ" for line in japanese)


def test_outline_surrounds_the_fill() -> None:
    image = render_lines(["Hello"], 40, 3)
    assert image.fill.shape == image.outline.shape
    inked = image.fill > 128
    assert inked.any() and (image.outline[inked] > 128).all()
    assert (image.outline > 128).sum() > inked.sum() * 1.3


def test_wrapped_lines_are_even_and_none_is_left_with_one_character() -> None:
    face = font(21)
    japanese = wrap("僕は今永禄大学附属病院で研修医をしている", face, 412)
    assert len(japanese) == 2 and min(len(line) for line in japanese) >= 8, japanese
    english = wrap("Alright then, off to the land of the setting moons Shichimi can tell us how", face, 500)
    widths = [face.getlength(line) for line in english]
    assert len(english) == 2 and max(widths) - min(widths) < 0.3 * max(widths), english


def test_blank_lines_are_dropped_and_a_lone_latin_word_stays_whole() -> None:
    face = font(40)
    assert wrap("Run!\n\nNow!", face, 400) == ["Run!", "Now!"], "an empty paragraph is no line"
    word = "Supercalifragilistic"
    assert face.getlength(word) > 120
    assert wrap(word, face, 120) == [word], "a word too wide stays whole, even alone"


def _coloured_frame(width: int, height: int) -> np.ndarray:
    frame = np.full((height * 3 // 2, width), 120, dtype=np.uint8)
    _luma, cb, cr = i420_planes(frame, width, height)
    cb[...], cr[...] = 60, 200  # a saturated red picture
    return frame


def test_text_takes_the_colour_out_under_its_outline_and_off_frame_text_draws_nothing() -> None:
    width, height = 320, 180
    text = render_lines(["Hello"], 40, 3)
    frame = _coloured_frame(width, height)
    blend_text(frame, width, height, text, 40, 40)
    _luma, cb, cr = i420_planes(frame, width, height)
    rows, cols = np.nonzero(text.outline > 250)
    y, x = (40 + int(np.median(rows))) // 2, (40 + int(np.median(cols))) // 2
    assert abs(int(cb[y, x]) - CHROMA_ZERO) <= 8 and abs(int(cr[y, x]) - CHROMA_ZERO) <= 8, "colour left under text"
    assert cb[0, 0] == 60 and cr[0, 0] == 200, "the picture beside the text keeps its colour"
    for x_at, y_at in ((width + 10, 40), (40, height + 10), (-text.width_px - 10, 40)):
        untouched = _coloured_frame(width, height)
        blend_text(untouched, width, height, text, x_at, y_at)
        assert np.array_equal(untouched, _coloured_frame(width, height)), (x_at, y_at)
