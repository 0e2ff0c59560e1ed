"""`inspect`'s overlay pictures (reading/overlay.py): a grey page drawn on in colour, a page kind spelled across the
page, the input left as it was."""

from __future__ import annotations

import numpy as np

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.reading.overlay import draw_overlay


def _reading(kind: str = "story") -> PageReading:
    return PageReading(
        page=0,
        width=400,
        height=600,
        reading_direction="ltr",
        panels=[Panel(bbox=(20, 20, 360, 260))],
        texts=[TextRegion(bbox=(60, 60, 120, 40), kind="speech", text="Hello!", speaker="char1", panel=0)],
        page_kind=kind,
    )


def test_a_grey_page_is_drawn_on_in_colour_and_left_as_it_was() -> None:
    grey = np.full((600, 400), 235, dtype=np.uint8)
    drawn = draw_overlay(grey, _reading())
    assert drawn.shape == (600, 400, 3)
    assert np.all(grey == 235), "the input is not modified"
    red = (drawn[..., 0] > 200) & (drawn[..., 1] < 80)
    blue = (drawn[..., 2] > 200) & (drawn[..., 0] < 60)
    assert red[20, 20:380].mean() > 0.9 and blue[60, 60:180].mean() > 0.9  # the panel's and the balloon's tops


def test_a_page_kind_is_spelled_across_the_page() -> None:
    """A cover gets its label at mid-height; a story page has nothing drawn there."""
    page = np.full((600, 400, 3), 255, dtype=np.uint8)
    band = slice(290, 350)
    story, cover = draw_overlay(page, _reading()), draw_overlay(page, _reading("cover"))
    assert np.all(story[band] == 255)
    assert ((cover[band, :, 0] > 150) & (cover[band, :, 1] < 120)).sum() > 200
