"""Where the speaker heuristic looks and what it keeps: the anchor past a balloon's tail (measured from the
balloon, not from its lettering), windows with nothing to describe, signatures that cannot be compared, and
which texts the book's linker renames."""

from __future__ import annotations

import math

import numpy as np

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.reading.bubbles import BubbleShape, TextBlock
from comic_narrator.reading.speakers import (
    SIGNATURE_HUE_BINS,
    appearance_signature,
    link_speakers,
    speaker_anchor,
)
from comic_narrator.reading.turns import signature_distance

GREY = [0.0] * SIGNATURE_HUE_BINS + [0.2, 0.5, 0.3]


def _balloon(tail: tuple[float, float] | None) -> TextBlock:
    """Lettering 40 x 20 px inside a balloon 200 x 100 px whose centre is (200, 150)."""
    bubble = BubbleShape(bbox=(100, 100, 200, 100), area_px2=15_700, solidity=0.97, rectangularity=0.78, tail_xy=tail)
    return TextBlock(lines=(), bbox=(180, 140, 40, 20), bubble=bubble)


def test_the_anchor_lies_past_the_tail_by_six_tenths_of_the_balloon() -> None:
    x, y = speaker_anchor(_balloon((200.0, 260.0)), None)
    # Straight down from the balloon's centre through the tip, 0.6 x the balloon's larger side (200) beyond it:
    # the lettering's own size (40) would put it at 284.
    assert math.isclose(x, 200.0) and math.isclose(y, 260.0 + 120.0)
    x, y = speaker_anchor(_balloon((60.0, 150.0)), None)
    assert math.isclose(x, 60.0 - 120.0) and math.isclose(y, 150.0)


def test_without_a_tail_the_anchor_is_below_the_balloon() -> None:
    x, y = speaker_anchor(_balloon(None), None)
    assert math.isclose(x, 200.0) and math.isclose(y, 100 + 100 + 60.0)  # 0.6 of the balloon's height below it


def test_loose_lettering_anchors_below_its_own_box() -> None:
    block = TextBlock(lines=(), bbox=(180, 140, 40, 20), bubble=None)
    x, y = speaker_anchor(block, None)
    assert math.isclose(x, 200.0) and math.isclose(y, 140 + 20 + 12.0)


def test_a_window_off_the_page_describes_nothing() -> None:
    image = np.full((100, 100, 3), (40, 60, 220), np.uint8)  # coloured everywhere
    inside = appearance_signature(image, (50.0, 50.0), 40, (0, 0, 0, 0))
    assert sum(inside) > 0.99
    # Centred beyond the bottom right corner: the window keeps under 4 px of the page on each side.
    assert sum(appearance_signature(image, (122.0, 122.0), 40, (0, 0, 0, 0))) == 0.0
    assert sum(appearance_signature(image, (50.0, 122.0), 40, (0, 0, 0, 0))) == 0.0


def test_a_window_of_solid_black_carries_no_identity() -> None:
    # Outlines and shadows are left out of coloured art's window, so a window with almost nothing lighter than
    # them has no signature at all (rather than "all black", which would match every other dark window).
    image = np.zeros((120, 120, 3), np.uint8)
    image[5:8, 5:8] = 255  # 9 light pixels: fewer than 16
    assert sum(appearance_signature(image, (60.0, 60.0), 120, (0, 0, 0, 0))) == 0.0
    image[5:10, 5:10] = 255  # 25: enough to describe (as grey art)
    assert sum(appearance_signature(image, (60.0, 60.0), 120, (0, 0, 0, 0))) > 0.99


def test_signatures_that_cannot_be_compared_are_as_far_apart_as_can_be() -> None:
    red = (1.0,) + (0.0,) * (SIGNATURE_HUE_BINS + 2)
    assert signature_distance(red, red) == 0.0
    assert signature_distance((), red) == 1.0
    assert signature_distance(red, ()) == 1.0
    assert signature_distance(red, red[:-1]) == 1.0  # different lengths
    zero = (0.0,) * (SIGNATURE_HUE_BINS + 3)
    assert signature_distance(zero, red) == 1.0 and signature_distance(red, zero) == 1.0


def _page(texts: list[TextRegion]) -> PageReading:
    return PageReading(
        page=0, width=400, height=600, reading_direction="rtl", panels=[Panel(bbox=(0, 0, 400, 600))], texts=texts
    )


def test_the_linker_renames_only_lines_with_a_speaker_and_a_signature() -> None:
    named = TextRegion(bbox=(10, 10, 80, 40), kind="speech", text="Hello.", speaker="pepper", panel=0, lang="en")
    unnamed = TextRegion(
        bbox=(10, 100, 80, 40), kind="speech", text="Hi.", speaker=None, panel=0, lang="en", speaker_signature=GREY
    )
    both = TextRegion(
        bbox=(10, 200, 80, 40), kind="speech", text="Bye.", speaker="x", panel=0, lang="en", speaker_signature=GREY
    )
    (linked,) = link_speakers([_page([named, unnamed, both])])
    assert [t.speaker for t in linked.texts] == ["pepper", None, "char1"]


def test_a_window_is_read_as_coloured_art_from_eight_percent_of_coloured_pixels() -> None:
    def window(coloured_rows: int) -> tuple[float, ...]:
        image = np.full((100, 100, 3), 200, np.uint8)  # light grey paper and shading
        image[:coloured_rows] = (40, 60, 220)
        return appearance_signature(image, (50.0, 50.0), 100, (0, 0, 0, 0))

    assert sum(window(10)[:SIGNATURE_HUE_BINS]) > 0.99  # 10 %: the hues of the coloured pixels alone
    assert len(window(10)) == len(window(6)) == SIGNATURE_HUE_BINS + 3  # comparable with every other signature
    assert sum(window(6)[:SIGNATURE_HUE_BINS]) == 0.0 and sum(window(6)[SIGNATURE_HUE_BINS:]) > 0.99
