"""A page that ends on a figure drawn straight on the paper, with its balloons: an open last row is a panel."""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.geometry import iou
from comic_narrator.reading.metrics import normalise_letters
from comic_narrator.reading.panels import PanelParams, estimate_background
from comic_narrator.reading.reader import open_last_row, read_page
from tests.reading.conftest import page_for
from tests.reading.synthetic import Balloon, PanelSpec, draw_balloon, draw_page

FRAMED = [
    PanelSpec((120, 30, 385, 560), (("red", (300, 330)),), (Balloon(("WHERE ARE YOU",), (310, 120), "speech", "red"),)),
    PanelSpec((525, 30, 420, 560), (("blue", (740, 330)),), (Balloon(("OUT HERE!",), (760, 120), "speech", "blue"),)),
]


def _read(page: np.ndarray, ocr: RapidOcrEngine):  # type: ignore[no-untyped-def]
    page = np.ascontiguousarray(page)
    return read_page(page, page_for(page, 0), config=VisionConfig(panels="classical"), manga_hint=None, ocr=ocr)


def test_balloons_over_a_figure_below_every_panel_make_an_open_last_row(ocr: RapidOcrEngine) -> None:
    page = draw_page(FRAMED)
    # Below the framed tier, no frame: a figure standing on the paper, and two balloons beside it.
    cv2.ellipse(page, (480, 1120), (70, 220), 0, 0, 360, (40, 90, 160), -1)
    cv2.circle(page, (480, 860), 60, (200, 150, 120), -1)
    font = ImageFont.load_default(size=26)
    draw_balloon(page, Balloon(("HA HA HA!",), (230, 760), "speech", None), {}, font)
    draw_balloon(page, Balloon(("VERY FUNNY.",), (760, 780), "speech", None), {}, font)
    reading = _read(page, ocr)
    assert len(reading.panels) == 3, reading.panels
    open_row = reading.panels[2].bbox
    # As wide as the framed panels (their frames included), from under them to the figure's feet.
    assert iou(open_row, (116, 717, 832, 624)) >= 0.95, open_row
    said = [(normalise_letters(t.text), t.panel) for t in reading.texts]
    assert said[2:] == [("hahaha", 2), ("veryfunny", 2)], said


def test_a_closing_caption_below_the_panels_with_no_picture_makes_no_panel(ocr: RapidOcrEngine) -> None:
    # Three lines of large print, as tall as an open row may be, but nothing drawn below them.
    image = Image.fromarray(draw_page(FRAMED))
    font = ImageFont.load_default(size=70)
    for k, line in enumerate(("AND SO", "THEY WENT", "HOME")):
        ImageDraw.Draw(image).text((300, 660 + 90 * k), line, fill=(0, 0, 0), font=font)
    reading = _read(np.asarray(image), ocr)
    assert len(reading.panels) == 2, reading.panels
    assert reading.texts[-1].panel == -1


def test_a_figure_below_the_panels_with_no_lettering_is_left_to_the_panel_finders(ocr: RapidOcrEngine) -> None:
    page = draw_page(FRAMED)
    cv2.ellipse(page, (480, 1120), (70, 220), 0, 0, 360, (40, 90, 160), -1)
    reading = _read(page, ocr)
    assert len(reading.panels) == 2, reading.panels


def test_a_page_with_no_panel_has_no_open_row() -> None:
    image = np.full((1400, 1000, 3), 255, np.uint8)
    params = PanelParams()
    assert open_last_row([], [], estimate_background(image, params)) is None
