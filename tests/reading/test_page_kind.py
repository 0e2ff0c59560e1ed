"""Page kinds from the page's layout, drawn by hand: a cover is one picture with display lettering and no
balloons; an ad or a text page is print everywhere with little of it in balloons; a blank page has next to nothing
on it. The real pages of these kinds are read in test_corpus.py and test_reader.py."""

from __future__ import annotations

import numpy as np

from comic_narrator.artifacts import BBox
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.reading.bubbles import BubbleShape, TextBlock, TextLine
from comic_narrator.reading.page_kind import classify_page, is_blank
from tests.reading.conftest import DATA, read_bundled

WIDTH, HEIGHT = 1000, 1400


def _lines(count: int, letter_px: float = 20.0, balloon: bool = False, top: int = 40) -> list[TextBlock]:
    """``count`` lines of print, 30 px apart, each a block 900 px wide (in a balloon or loose)."""
    blocks = []
    for i in range(count):
        box: BBox = (50, top + 30 * i, 900, int(letter_px) + 4)
        line = TextLine(bbox=box, text="WORDS", score=1.0, vertical=False, angle_deg=0.0, letter_px=letter_px)
        bubble = BubbleShape(bbox=box, area_px2=box[2] * box[3], solidity=0.98, rectangularity=0.78, tail_xy=None)
        blocks.append(TextBlock(lines=(line,), bbox=box, bubble=bubble if balloon else None))
    return blocks


def test_print_all_over_the_page_is_not_story_unless_it_is_in_balloons() -> None:
    text_page = _lines(40)  # 40 loose lines, 24 x 900 px each: 62 % of the page
    assert classify_page([], text_page, WIDTH, HEIGHT, full_bleed=False) == "non-story"
    assert classify_page([], _lines(40, balloon=True), WIDTH, HEIGHT, full_bleed=False) == "story"
    assert classify_page([], _lines(20), WIDTH, HEIGHT, full_bleed=False) == "story"  # too little print
    grid: list[BBox] = [(0, 0, 500, 700), (500, 0, 500, 700), (0, 700, 500, 700)]
    assert classify_page(grid, text_page, WIDTH, HEIGHT, full_bleed=False) == "story"  # three panels: a story page


def test_one_picture_with_a_big_title_and_no_balloons_is_a_cover() -> None:
    picture: list[BBox] = [(20, 20, 960, 1360)]  # 93 % of the page
    title = _lines(1, letter_px=60.0)  # 4.3 % of the page's height
    assert classify_page(picture, title, WIDTH, HEIGHT, full_bleed=False) == "cover"
    assert classify_page([], title, WIDTH, HEIGHT, full_bleed=True) == "cover"  # a full-bleed painting
    assert classify_page(picture, _lines(1, letter_px=30.0), WIDTH, HEIGHT, full_bleed=False) == "story"
    assert classify_page(picture, title + _lines(2, balloon=True, top=600), WIDTH, HEIGHT, full_bleed=False) == "story"
    small: list[BBox] = [(200, 300, 600, 700)]  # 30 % of the page: a splash panel, not a cover picture
    assert classify_page(small, title, WIDTH, HEIGHT, full_bleed=False) == "story"


def test_blank_is_flat_paper_or_a_few_specks() -> None:
    paper = np.full((1400, 1000), 236, np.uint8)
    assert is_blank(paper)
    dusty = paper.copy()
    dusty[::350, ::250] = 20  # 16 specks of scan dust
    assert is_blank(dusty)
    # A scan of an empty page: paper grain (sigma 6 grey levels) and the same dust; none of it is drawing.
    grain = np.random.default_rng(2).normal(0.0, 6.0, paper.shape)
    grainy = np.clip(dusty + grain, 0, 255).astype(np.uint8)
    assert float(grainy.std()) > 4.0 and is_blank(grainy)
    assert not is_blank(np.where(np.arange(1000) < 100, 30, grainy).astype(np.uint8))  # a dark band down one side
    drawn = paper.copy()
    drawn[600:800, 100:900] = 30  # one filled shape: 11 % of the page
    assert not is_blank(drawn)
    assert is_blank(np.zeros((0, 0), np.uint8))


def test_the_print_of_a_page_where_no_panel_is_found_is_nobody_s_line(ocr: RapidOcrEngine) -> None:
    """Pepper&Carrot ep. 4's title header (the logo and "Stroke of Genius" on white, lettered from the episode's
    SVG): no panel, only loose print; the title was said in a character's voice, as a balloon with an open
    outline would be. It is the narrator's now; on pages with panels such lettering stays speech."""
    title = read_bundled(ocr, DATA / "peppercarrot-training" / "E04P00-lettered.jpg")
    said = {t.text.lower(): (t.kind, t.speaker) for t in title.texts}
    assert said.get("stroke of genius") == ("caption", None), said
    assert all(kind in ("caption", "sound") and speaker is None for kind, speaker in said.values()), said
    page = read_bundled(ocr, DATA / "peppercarrot-training" / "E06P05-lettered.jpg")
    assert sum(t.kind in ("speech", "shout") for t in page.texts) >= 3
