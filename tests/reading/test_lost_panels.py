"""A panel both finders lose: motion streaks and light sky between two slanted gutters (Pepper&Carrot ep. 16 p. 5)
are paper to the classical detector and to the segmenter, so the tier was read as two panels with a hole between
them. A hole that wide, mostly art, is a panel."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from comic_narrator.artifacts import BBox
from comic_narrator.reading.lost_panels import lost_between_panels
from comic_narrator.reading.panels import PageBackground
from tests.conftest import REPO
from tests.reading.conftest import DATA, assert_panels_in_order

GT = REPO / "training" / "eval" / "peppercarrot-ep16" / "gt.json"


def test_the_panel_between_two_slanted_gutters_is_read() -> None:
    """The bundled lettered page at 0.6 scale: five panels, the middle tier's middle one lost before (4 boxes)."""
    page = next(p for p in json.loads(GT.read_text(encoding="utf-8"))["pages"] if p["image"].endswith("E16P05.jpg"))
    rgb = np.asarray(Image.open(DATA / "peppercarrot-training" / "E16P05-lettered.jpg").convert("RGB"))
    scale = rgb.shape[1] / page["width"]
    truth: list[BBox] = [tuple(round(v * scale) for v in p["bbox"]) for p in page["panels"]]  # type: ignore[misc]
    assert_panels_in_order(rgb, truth, "ltr")


def _page(art: tuple[int, int, int, int] | None, scale: float = 0.5) -> PageBackground:
    """A 1000x1400 page of paper, analysed at ``scale``, with art filling ``art`` (page pixels) and the panels."""
    paper = np.ones((round(1400 * scale), round(1000 * scale)), bool)
    for x, y, w, h in [(40, 40, 300, 400), (660, 40, 300, 400), (40, 500, 920, 400), *([art] if art else [])]:
        paper[round(y * scale) : round((y + h) * scale), round(x * scale) : round((x + w) * scale)] = False
    return PageBackground((255, 255, 255), 1.0, paper, scale)


PANELS: list[BBox] = [(40, 40, 300, 400), (660, 40, 300, 400), (40, 500, 920, 400)]


def test_a_hole_of_art_between_two_panels_of_a_tier_is_a_panel() -> None:
    assert lost_between_panels(PANELS, _page((340, 40, 320, 400)), 1000, 1400) == [(340, 40, 320, 400)]
    # A hole an eighth of the page wide is wide enough.
    pair: list[BBox] = [(40, 40, 400, 400), (560, 40, 400, 400)]
    assert lost_between_panels(pair, _page((440, 40, 120, 400)), 1000, 1400) == [(440, 40, 120, 400)]
    # A small box in the hole (a twentieth of it: a caption the finders boxed) does not fill it.
    assert lost_between_panels([*PANELS, (400, 100, 64, 100)], _page((340, 40, 320, 400)), 1000, 1400) == [
        (340, 40, 320, 400)
    ]
    # Two thirds art (a slanted panel's middle with its gutters' paper): still a panel.
    assert lost_between_panels(PANELS, _page((340, 40, 200, 400)), 1000, 1400) == [(340, 40, 320, 400)]


def test_no_panel_in_a_hole_of_paper_a_narrow_gutter_or_one_a_panel_fills() -> None:
    # Half art: a figure on the paper between two panels, not a lost panel.
    assert lost_between_panels(PANELS, _page((340, 40, 150, 400)), 1000, 1400) == []
    # A gutter under a tenth of the page wide, all art, is no hole.
    narrow: list[BBox] = [(40, 40, 420, 400), (550, 40, 410, 400), (40, 500, 920, 400)]
    assert lost_between_panels(narrow, _page((460, 40, 90, 400)), 1000, 1400) == []
    # A panel found in the hole already (a box covering a ninth of it is enough), or panels of different tiers.
    assert lost_between_panels([*PANELS, (345, 60, 310, 380)], _page((340, 40, 320, 400)), 1000, 1400) == []
    assert lost_between_panels([*PANELS, (400, 100, 100, 140)], _page((340, 40, 320, 400)), 1000, 1400) == []
    offset: list[BBox] = [(40, 40, 300, 400), (660, 300, 300, 400)]
    assert lost_between_panels(offset, _page((340, 40, 320, 660)), 1000, 1400) == []


def test_a_hole_of_art_between_two_panels_of_a_column_is_a_panel() -> None:
    column: list[BBox] = [(40, 40, 920, 400), (40, 900, 920, 460)]
    assert lost_between_panels(column, _page((40, 440, 920, 460)), 1000, 1400) == [(40, 440, 920, 460)]
