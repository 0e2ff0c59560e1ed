"""The end card's lines (--credits as text or a file, the book's credits, the pages' credit lines), its length,
and its frames: every line inside the picture, fading in and out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from comic_narrator.artifacts import BookReading, PageReading, Panel, TextRegion
from comic_narrator.config import RenderConfig
from comic_narrator.errors import InputError
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.endcard import (
    MAX_S,
    MIN_S,
    EndCard,
    end_card,
    end_card_file,
    end_card_frames,
    given_credit_lines,
    page_credit_lines,
)


def _reading(*furniture: str) -> BookReading:
    pages = [
        PageReading(
            page=number,
            width=800,
            height=1200,
            reading_direction="ltr",
            panels=[Panel(bbox=(0, 0, 800, 1200))],
            texts=[
                TextRegion(bbox=(0, 0, 10, 10), kind="speech", text="Not a credit", speaker="char1", panel=0),
                *(TextRegion(bbox=(0, 1100, 200, 30), kind="furniture", text=text, panel=-1) for text in furniture),
            ],
        )
        for number in range(2)
    ]
    return BookReading(source="b", lang="en", pages=pages)


def test_credits_come_as_text_or_from_a_file(tmp_path: Path) -> None:
    assert given_credit_lines("Voices: joe (MIT)\\nCover: Ann") == ("Voices: joe (MIT)", "Cover: Ann")
    credits = tmp_path / "credits.txt"
    credits.write_text("Translation: Jo\n\n  Lettering: Lu  \n", encoding="utf-8")
    assert given_credit_lines(str(credits)) == ("Translation: Jo", "Lettering: Lu")
    with pytest.raises(InputError, match="no such file"):
        given_credit_lines(str(tmp_path / "credit.txt"))
    credits.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InputError, match="cannot read the file as UTF-8"):
        given_credit_lines(str(credits))


def test_page_furniture_worth_crediting_is_taken_once_and_page_numbers_are_not() -> None:
    reading = _reading("12", "p. 3", "www.peppercarrot.com", "Art by David Revoy", "WWW.PEPPERCARROT.COM")
    assert page_credit_lines(reading) == ("www.peppercarrot.com", "Art by David Revoy")


def test_the_users_lines_come_first_and_nothing_repeats() -> None:
    card = end_card(
        "Title", [("Writer", "Ann")], "CC BY 4.0", ["Narrated by us", "writer: ann"], _reading("Writer: Ann", "x.org")
    )
    assert card.lines == ("Narrated by us", "writer: ann", "x.org")
    assert card.notes == ("CC BY 4.0",)
    assert end_card(None, [], None, [], _reading()).empty


def test_the_card_lasts_long_enough_to_read_and_no_longer() -> None:
    assert EndCard("T", ("a",)).duration_s() == MIN_S
    assert EndCard("T", tuple("abcdefghij")).duration_s() == pytest.approx(6.6)
    assert EndCard("T", tuple("x" * 40)).duration_s() == MAX_S


@pytest.mark.parametrize("size", [(832, 468), (468, 832)])
def test_every_line_is_inside_the_frame_and_the_text_fades(size: tuple[int, int]) -> None:
    config = RenderConfig(width_px=size[0], height_px=size[1])
    notes = ("Pages 8-11 of volume 1. Black Jack ni Yoroshiku (c) Shuho Sato, Manga on Web: free for any use. " * 3,)
    card = EndCard("ブラックジャックによろしく (Black Jack ni Yoroshiku)", tuple(f"Line {n}" for n in range(12)), notes)
    frames = list(end_card_frames(card, config, 24))
    assert len(frames) == card.frames(24)
    width, height = size
    background = ycbcr_of(config.background_rgb)[0]
    luma = [frame[:height].astype(int) for frame in frames]
    middle = luma[len(luma) // 2]
    rows = np.nonzero((middle > background + 60).any(axis=1))[0]
    cols = np.nonzero((middle > background + 60).any(axis=0))[0]
    assert rows.min() > 0 and rows.max() < height - 1 and cols.min() > 0 and cols.max() < width - 1
    brightest = [int(frame.max()) for frame in luma]
    assert brightest[0] < brightest[len(luma) // 2] and brightest[-1] < brightest[len(luma) // 2]


def test_a_card_with_lines_or_notes_is_not_empty_and_page_numbers_are_never_credits() -> None:
    assert not EndCard(None, ("Art by Ann",)).empty
    assert not EndCard(None, (), ("CC BY 4.0",)).empty
    assert EndCard("A title alone", ()).empty
    reading = _reading("Page 123", "p. 1234 -", "PG 2025", "Lettering by Bo")
    assert page_credit_lines(reading) == ("Lettering by Bo",)


def _ink_rows(card: EndCard, config: RenderConfig) -> np.ndarray:
    frames = list(end_card_frames(card, config, 24))
    middle = frames[len(frames) // 2][: config.height_px].astype(int)
    return np.nonzero((middle > ycbcr_of(config.background_rgb)[0] + 60).any(axis=1))[0]


def test_a_short_card_is_centred_at_its_full_size() -> None:
    config = RenderConfig(width_px=640, height_px=360)
    rows = _ink_rows(EndCard(None, ("Narrated by comic-narrator",)), config)
    assert abs((rows.min() + rows.max()) / 2 - 180) <= 4, "one block, nothing above or below it"
    both = _ink_rows(EndCard("Hello", ("Narrated by comic-narrator",)), config)
    above, below = both.min(), 359 - both.max()
    assert abs(above - below) <= 8, f"title and lines centred together, no empty block beside them: {above}, {below}"
    title = _ink_rows(EndCard("Hello", ()), config)
    assert title.max() - title.min() >= 0.8 * 0.065 * 360 * 0.7, "the title at its full size, not shrunk"


def test_the_end_card_is_encoded_once(tmp_path: Path) -> None:
    config = RenderConfig(width_px=320, height_px=180)
    card = EndCard("Title", ("Art by Ann",))
    path, frames = end_card_file(card, tmp_path, config, 12)
    assert path.is_file() and frames == card.frames(12)
    path.write_bytes(b"kept")  # a second call finds the file and leaves it
    assert end_card_file(card, tmp_path, config, 12) == (path, frames) and path.read_bytes() == b"kept"
