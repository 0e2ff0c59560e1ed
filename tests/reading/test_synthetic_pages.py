"""Balloons, kinds, order and who speaks on drawn pages where the truth is known exactly (real OCR engine)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.metrics import letters_found, normalise_letters
from comic_narrator.reading.reader import read_page
from comic_narrator.reading.speakers import link_speakers
from tests.reading.conftest import page_for
from tests.reading.synthetic import Balloon, PanelSpec, draw_page

PAGE_1 = [
    PanelSpec(
        (30, 30, 455, 640),
        (("red", (120, 380)), ("blue", (360, 420))),
        (
            Balloon(("WHERE ARE YOU", "GOING TONIGHT?"), (150, 130), "speech", "red"),
            Balloon(("TO THE OLD MILL,", "AS I TOLD YOU."), (340, 250), "speech", "blue"),
        ),
    ),
    PanelSpec(
        (515, 30, 455, 640),
        (("green", (740, 420)),),
        (
            Balloon(("LATER THAT NIGHT,", "AT THE OLD MILL", "BY THE RIVER..."), (690, 100), "caption", None),
            Balloon(("WATCH OUT!",), (760, 250), "shout", "green"),
        ),
    ),
    PanelSpec(
        (30, 700, 940, 670),
        (("red", (200, 1080)), ("green", (760, 1080))),
        (
            Balloon(("I TOLD YOU SO.",), (380, 820), "speech", "red"),
            Balloon(("FINE, FINE.", "LET US GO HOME."), (650, 900), "speech", "green"),
        ),
    ),
]
PAGE_2 = [
    PanelSpec(
        (30, 30, 940, 1340),
        (("blue", (250, 700)), ("green", (720, 700))),
        (
            Balloon(("WHO IS THERE?",), (300, 300), "speech", "blue"),
            Balloon(("ONLY ME, FRIEND.",), (700, 420), "speech", "green"),
        ),
    ),
]


def _read(  # type: ignore[no-untyped-def]
    ocr: RapidOcrEngine,
    panels: list[PanelSpec],
    index: int,
    loose: tuple[tuple[tuple[int, int], str, int], ...] = (),
    config: VisionConfig | None = None,
):
    """The drawn page read; ``loose``: lettering drawn straight on it, no balloon ((x, y), text, font size)."""
    image = Image.fromarray(draw_page(panels))
    draw = ImageDraw.Draw(image)
    for xy, text, size in loose:
        draw.text(xy, text, fill=(0, 0, 0), font=ImageFont.load_default(size=size))
    drawn = np.ascontiguousarray(np.asarray(image))
    return read_page(drawn, page_for(drawn, index), config=config or VisionConfig(), manga_hint=None, ocr=ocr)


def test_kinds_order_and_sentence_case(ocr: RapidOcrEngine) -> None:
    reading = _read(ocr, PAGE_1, 0)
    balloons = [b for p in PAGE_1 for b in p.balloons]
    assert [len(reading.panels), len(reading.texts)] == [3, len(balloons)]
    assert [t.kind for t in reading.texts] == [b.kind for b in balloons]
    assert [t.panel for t in reading.texts] == [0, 0, 1, 1, 2, 2]
    for text, balloon in zip(reading.texts, balloons, strict=True):
        # The spikes of the shout balloon can add a stray letter or two; the words must all be there.
        assert letters_found(normalise_letters(" ".join(balloon.lines)), normalise_letters(text.text)) >= 0.8
    assert reading.texts[0].text.startswith("Where are you going")


def test_every_balloon_said_gets_a_book_wide_speaker_and_no_caption_does(ocr: RapidOcrEngine) -> None:
    # The figures here are flat colours, but what a tail points at no longer decides who speaks (on painted pages
    # its hues told a speaker no better than a coin): the ids come from turns and words, and they must cover
    # exactly the lines somebody says, on both pages, in one namespace for the book.
    readings = link_speakers([_read(ocr, PAGE_1, 0), _read(ocr, PAGE_2, 1)])
    truth = [b.speaker for page in (PAGE_1, PAGE_2) for p in page for b in p.balloons]
    found = [t.speaker for r in readings for t in r.texts]
    assert len(found) == len(truth)
    assert [f is None for f in found] == [t is None for t in truth]
    assert all(f is None or f.startswith("char") for f in found)
    assert [t.speaker_xy is not None for r in readings for t in r.texts] == [t is not None for t in truth]


def test_a_title_above_the_panels_is_read_first_and_loose_print_below_them_last(ocr: RapidOcrEngine) -> None:
    # The lettering order within a page goes panel by panel; a title lettered above the first panel (outside every
    # panel) comes before the first panel's lines, and loose print below the last panel after the last one's. Both
    # are the narrator's (captions), not balloons with open outlines.
    panels = [
        PanelSpec(
            (30, 190, 940, 540),
            (("red", (250, 520)),),
            (Balloon(("WHERE ARE YOU", "GOING TONIGHT?"), (600, 330), "speech", "red"),),
        ),
        PanelSpec(
            (30, 760, 940, 520),
            (("blue", (720, 1080)),),
            (Balloon(("TO THE OLD MILL.",), (330, 900), "speech", "blue"),),
        ),
    ]
    title, after = ((190, 40), "THE OLD MILL", 90), ((300, 1310), "AND SO THEY WENT HOME AT LAST", 30)
    reading = _read(ocr, panels, 0, (title, after))
    letters = [normalise_letters(t.text) for t in reading.texts]
    assert len(reading.panels) == 2 and len(reading.texts) == 4
    assert letters[0] == "theoldmill" and reading.texts[0].panel == -1
    assert [t.panel for t in reading.texts[1:3]] == [0, 1]
    assert letters[3] == "andsotheywenthomeatlast" and reading.texts[3].panel == -1
    assert reading.texts[0].kind == reading.texts[3].kind == "caption"


def test_a_balloon_in_the_gutter_between_tiers_is_read_between_them(ocr: RapidOcrEngine) -> None:
    # A balloon set in the open gutter between the first two tiers, inside neither panel, is said after the first
    # tier's lines and before the second's, not after the page's last panel. (The segmenter makes the gutter
    # around such a balloon a panel of its own, which reads it in place too; the classical finder leaves it out.)
    panels = [
        PanelSpec(
            (30, 30, 940, 400), (("red", (250, 250)),), (Balloon(("WHERE ARE YOU",), (620, 150), "speech", "red"),)
        ),
        PanelSpec(
            (30, 640, 940, 340),
            (("blue", (720, 800)),),
            (
                Balloon(("WAIT FOR ME!",), (500, 535), "speech", None),  # in the gutter, 430-640
                Balloon(("TO THE OLD MILL.",), (330, 760), "speech", "blue"),
            ),
        ),
        PanelSpec(
            (30, 1010, 940, 360), (("red", (250, 1200)),), (Balloon(("TOLD YOU SO!",), (620, 1100), "speech", "red"),)
        ),
    ]
    reading = _read(ocr, panels, 0, config=VisionConfig(panels="classical"))
    letters = [normalise_letters(t.text) for t in reading.texts]
    assert len(reading.panels) == 3, reading.panels
    assert letters == ["whereareyou", "waitforme", "totheoldmill", "toldyouso"], letters
    assert [t.panel for t in reading.texts] == [0, -1, 1, 2]


def test_a_grey_or_transparent_page_array_reads_as_its_colour_form_does(ocr: RapidOcrEngine) -> None:
    # read_page takes the page's pixels in the form a caller has them: one grey channel, or RGBA.
    rgb = np.ascontiguousarray(draw_page(PAGE_1))
    grey = np.ascontiguousarray(rgb.min(axis=2))
    grey_rgb = np.ascontiguousarray(np.repeat(grey[:, :, None], 3, axis=2))
    rgba = np.ascontiguousarray(np.concatenate([rgb, np.full((*rgb.shape[:2], 1), 255, np.uint8)], axis=2))

    def read(image: np.ndarray) -> list[tuple[object, ...]]:
        reading = read_page(image, page_for(image, 0), config=VisionConfig(), manga_hint=None, ocr=ocr)
        return [(p.bbox,) for p in reading.panels] + [(t.bbox, t.text, t.kind) for t in reading.texts]

    assert read(grey) == read(grey_rgb)
    assert read(rgba) == read(rgb)


def test_loose_lettering_in_a_panel_is_speech_unless_it_spans_the_panel(ocr: RapidOcrEngine) -> None:
    # Lettering with no outline around it, on the panel's light art: a few centred words are a balloon whose outline
    # is open (speech); one line across most of the panel's width is a caption strip (the narrator's).
    panels = [
        PanelSpec((30, 30, 940, 640), (("red", (250, 420)),), ()),
        PanelSpec((30, 700, 940, 670), (("blue", (720, 1080)),), ()),
    ]
    loose = (
        ((520, 150), "WAIT FOR ME,", 30),
        ((530, 190), "PLEASE", 30),
        ((70, 740), "MEANWHILE THE RIVER ROSE QUIETLY ALL NIGHT LONG", 30),
    )
    reading = _read(ocr, panels, 0, loose)
    assert [(normalise_letters(t.text), t.panel, t.kind) for t in reading.texts] == [
        ("waitformeplease", 0, "speech"),
        ("meanwhiletheriverrosequietlyallnightlong", 1, "caption"),
    ]


def test_capitals_are_a_shout_only_on_a_page_lettered_in_mixed_case(ocr: RapidOcrEngine) -> None:
    # "STOP RIGHT THERE!" in an ordinary balloon: raised among mixed-case lines, ordinary lettering on a page set
    # all in capitals.
    def page(first: tuple[str, ...], second: tuple[str, ...]) -> list[PanelSpec]:
        return [
            PanelSpec(
                (30, 30, 455, 640),
                (("red", (120, 380)), ("blue", (360, 420))),
                (Balloon(first, (150, 130), "speech", "red"), Balloon(second, (340, 250), "speech", "blue")),
            ),
            PanelSpec(
                (515, 30, 455, 640),
                (("green", (740, 420)),),
                (Balloon(("STOP RIGHT", "THERE!"), (740, 200), "speech", "green"),),
            ),
        ]

    mixed = _read(ocr, page(("Where are you", "going tonight?"), ("To the old mill,", "as I told you.")), 0)
    capitals = _read(ocr, page(("WHERE ARE YOU", "GOING TONIGHT?"), ("TO THE OLD MILL,", "AS I TOLD YOU.")), 0)
    assert [t.kind for t in mixed.texts] == ["speech", "speech", "shout"]
    assert [t.kind for t in capitals.texts] == ["speech", "speech", "speech"]
    assert mixed.texts[2].text == capitals.texts[2].text == "Stop right there!"
