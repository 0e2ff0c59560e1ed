"""OCR lines to text lines, and their grouping into balloons and blocks (reading/bubbles.py), rule by rule on a
drawn page: lines in one balloon, vertical columns read right to left, loose lettering grouped only when it sits
together, and what is not a balloon. tests/reading/test_synthetic_pages.py and test_reader.py run the same code
through the whole reader."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from comic_narrator.backends.protocols import OcrLine
from comic_narrator.reading.bubbles import BubbleShape, TextLine, group_lines, is_cjk, printed_lines, to_text_lines

PAPER = 255.0


def _quad(x: float, y: float, w: float, h: float) -> tuple[tuple[float, float], ...]:
    return ((x, y), (x + w, y), (x + w, y + h), (x, y + h))


def _line(x: int, y: int, w: int, h: int, text: str = "Hello there", vertical: bool = False) -> TextLine:
    return TextLine(
        bbox=(x, y, w, h), text=text, score=0.9, vertical=vertical, angle_deg=0.0, letter_px=float(w if vertical else h)
    )


def test_ocr_lines_become_text_lines_and_what_cannot_be_read_is_dropped() -> None:
    lines = to_text_lines(
        [
            OcrLine(_quad(10, 10, 200, 30), "ＨＥＬＬＯ ", 0.9),  # full-width letters: NFKC, stripped
            OcrLine(_quad(10, 60, 200, 30), "faint", 0.4),  # under the score
            OcrLine(_quad(10, 110, 200, 30), "   ", 0.99),  # nothing in it
            OcrLine(_quad(10, 160, 0, 30), "flat", 0.99),  # no width
            OcrLine(_quad(300, 10, 30, 200), "こんにちは", 0.9),  # a Japanese column
            OcrLine(_quad(400, 10, 30, 200), "I", 0.9),  # tall but Latin: not a column
            OcrLine(_quad(450, 10, 30, 200), "あ", 0.9),  # one kana: no column either
        ],
        min_score=0.5,
    )
    assert [(ln.text, ln.vertical) for ln in lines] == [
        ("HELLO", False),
        ("こんにちは", True),
        ("I", False),
        ("あ", False),
    ]
    assert lines[0].letter_px == 30 and lines[1].letter_px == 30, "a column's letters are its width"


def test_a_tilted_line_keeps_its_angle_and_letter_size_from_its_quad() -> None:
    angle = np.radians(20)
    ux, uy = np.cos(angle), np.sin(angle)
    quad = ((100.0, 100.0), (100 + 300 * ux, 100 + 300 * uy), (100 + 300 * ux - 40 * uy, 100 + 300 * uy + 40 * ux))
    quad = (*quad, (100 - 40 * uy, 100 + 40 * ux))
    (line,) = to_text_lines([OcrLine(quad, "Tilted words", 0.9)], min_score=0.5)
    assert line.angle_deg == pytest.approx(20.0, abs=0.01)
    assert line.letter_px == pytest.approx(40.0, abs=0.01)
    assert line.bbox[3] > 120, "the box of a tilted line is far taller than its letters"


@pytest.mark.parametrize(
    ("text", "cjk"),
    [
        ("ひらがな", True),
        ("カタカナ", True),
        ("漢字", True),
        ("ｶﾀｶﾅ", True),
        ("㐀", True),
        ("Latin!", False),
        ("", False),
    ],
)
def test_cjk_ranges(text: str, cjk: bool) -> None:
    assert is_cjk(text) == cjk


def _page() -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """A grey panel with two white balloons: a wide one at the top left with a tail down to (300, 520), a tall
    one at the right without."""
    gray = np.full((1400, 1000), 255, dtype=np.uint8)
    panel = (20, 20, 960, 1360)
    gray[20:1380, 20:980] = 120
    cv2.ellipse(gray, (300, 250), (240, 130), 0, 0, 360, 255, -1)
    cv2.fillPoly(gray, [np.array([[260, 370], [340, 370], [300, 520]], dtype=np.int32)], 255)  # its tail
    cv2.ellipse(gray, (750, 350), (110, 230), 0, 0, 360, 255, -1)
    return gray, [panel]


def test_lines_in_one_balloon_are_one_block_top_to_bottom_with_the_balloon_s_shape() -> None:
    gray, panels = _page()
    lower, upper = _line(120, 255, 360, 32, "there."), _line(110, 215, 380, 32, "Hello")
    (block,) = group_lines([lower, upper], gray, PAPER, panels)
    assert [ln.text for ln in block.lines] == ["Hello", "there."]
    assert block.bubble is not None
    bx, by, bw, bh = block.bubble.bbox
    assert abs(bx - 60) <= 3 and abs(by - 120) <= 3 and abs(bw - 481) <= 4 and abs(bh - 401) <= 4
    assert not block.bubble.boxy
    assert block.bubble.tail_xy is not None
    assert abs(block.bubble.tail_xy[0] - 300) <= 4 and abs(block.bubble.tail_xy[1] - 520) <= 4


_Box = tuple[int, int, int, int, str]


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        # The OCR's boxes on Buster Bear #10 p. 2 (public domain; the corpus page, moved onto this drawn
        # balloon): the hand-lettered "I'LL BUY A CAR AND TAKE YOU" curves, so "I'LL" was found alone and lower
        # than the rest of its line, its middle below theirs.
        (
            [
                (101, 186, 273, 31, "BUY A CAR AND TAKE YOU"),
                (102, 204, 184, 34, "FOR A RIDE IN IT,"),
                (141, 226, 99, 30, "BUSTER!"),
                (72, 195, 32, 18, "I'LL"),
            ],
            ["I'LL", "BUY A CAR AND TAKE YOU", "FOR A RIDE IN IT,", "BUSTER!"],
        ),
        # p. 2's last balloon: a lone "I" whose box runs 9 px into the rest of its line.
        (
            [
                (109, 192, 204, 24, "DON'T CARE, WILLIE"),
                (100, 215, 21, 19, "I"),
                (112, 212, 197, 25, "JUST CAN'T CARRY"),
                (115, 231, 170, 25, "YOU ANY MORE!"),
            ],
            ["DON'T CARE, WILLIE", "I", "JUST CAN'T CARRY", "YOU ANY MORE!"],
        ),
        # A long title the OCR read in two overlapping pieces (Pepper&Carrot ep. 14's cover) keeps their order.
        (
            [(462, 1006, 237, 36, "The Dragon's Tooth"), (295, 1008, 233, 34, "Episode 14: The D")],
            ["Episode 14: The D", "The Dragon's Tooth"],
        ),
        # Stacked lines whose boxes touch stay one above the other, whichever starts further left.
        ([(100, 222, 200, 30, "SHARE IT!"), (140, 200, 300, 30, "WE OUGHT TO")], ["WE OUGHT TO", "SHARE IT!"]),
    ],
)
def test_the_pieces_of_a_printed_line_the_ocr_cut_read_left_to_right(boxes: list[_Box], expected: list[str]) -> None:
    gray, panels = _page()
    lines = [_line(*box) for box in boxes]
    (block,) = group_lines(lines, gray, PAPER, panels)
    assert [ln.text for ln in block.lines] == expected
    if "I" in expected:  # the lone "I" is a piece of the line it starts
        assert [[ln.text for ln in row] for row in printed_lines(lines)][1] == ["I", "JUST CAN'T CARRY"]


def test_vertical_columns_in_a_balloon_read_right_to_left() -> None:
    gray, panels = _page()
    left = _line(700, 230, 34, 220, "ですか", vertical=True)
    right = _line(745, 260, 34, 200, "なんで", vertical=True)  # starts lower: columns are not read by height
    (block,) = group_lines([left, right], gray, PAPER, panels)
    assert [ln.text for ln in block.lines] == ["なんで", "ですか"]
    assert block.bubble is not None and block.bubble.tail_xy is None and not block.bubble.boxy


def test_loose_lettering_groups_only_when_it_sits_together() -> None:
    gray, panels = _page()
    first, second = _line(100, 700, 300, 30, "FAR AWAY,"), _line(110, 740, 280, 30, "LONG AGO")  # stacked, close
    big = _line(150, 780, 300, 90, "BOOM")  # just below them, three times their size
    apart = _line(100, 900, 300, 30, "LATER")  # a letter's height below BOOM, which is no neighbour
    column = _line(150, 945, 30, 120, "ドーン", vertical=True)  # under LATER, but a column is never a row's
    blocks = group_lines([first, second, apart, big, column], gray, PAPER, panels)
    texts = sorted([ln.text for ln in block.lines] for block in blocks)
    assert texts == [["BOOM"], ["FAR AWAY,", "LONG AGO"], ["LATER"], ["ドーン"]]
    assert all(block.bubble is None for block in blocks), "on the panel's grey: no balloon"


def test_paper_reaching_the_page_edge_or_filling_the_panel_is_no_balloon() -> None:
    gray = np.full((1400, 1000), 255, dtype=np.uint8)
    gray[600:1400, :] = 110  # the white top of the page runs off its edges
    (block,) = group_lines([_line(300, 300, 300, 30, "Meanwhile")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is None
    white = np.full((1400, 1000), 255, dtype=np.uint8)
    white[100:110, :] = 0  # a white panel's own background, framed
    white[1290:1300, :] = 0
    white[:, 100:110] = 0
    white[:, 890:900] = 0
    (block,) = group_lines([_line(300, 600, 300, 30, "Quiet")], white, PAPER, [(100, 100, 800, 1200)])
    assert block.bubble is None


def test_no_lines_no_blocks() -> None:
    gray, panels = _page()
    assert group_lines([], gray, PAPER, panels) == []


def test_a_caption_box_is_boxy_and_a_balloon_is_not() -> None:
    gray = np.full((800, 800), 110, dtype=np.uint8)
    gray[100:200, 100:500] = 255  # a caption box
    cv2.ellipse(gray, (400, 500), (200, 90), 0, 0, 360, 255, -1)
    caption, said = _line(120, 130, 360, 40, "Meanwhile, far away"), _line(240, 480, 320, 40, "Who goes?")
    blocks = group_lines([caption, said], gray, PAPER, [(0, 0, 800, 800)])
    shapes = {block.lines[0].text: block.bubble for block in blocks}
    box, balloon = shapes["Meanwhile, far away"], shapes["Who goes?"]
    assert box is not None and balloon is not None
    assert box.boxy and box.rectangularity > 0.97 and box.corners == 4
    assert not balloon.boxy and 0.7 < balloon.rectangularity < 0.85


def test_a_light_region_too_big_for_its_small_panel_is_not_a_balloon() -> None:
    """Lettering on a white patch that fills most of its panel: the panel's background, not a balloon, even where
    the patch is small beside the page."""
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    gray[110:290, 110:490] = 255  # 180 x 380 of a 200 x 400 panel
    (block,) = group_lines([_line(130, 180, 340, 40, "So quiet here")], gray, PAPER, [(100, 100, 400, 200)])
    assert block.bubble is None


@pytest.mark.parametrize(
    ("rectangularity", "solidity", "corners", "boxy"),
    [
        (0.95, 0.99, 0, True),  # a filled rectangle
        (0.93, 0.97, 4, True),  # a box drawn askew or with a corner hidden: still four corners
        (0.94, 0.97, 5, False),  # a balloon cut by its panel's frame: straight on the cut sides, round elsewhere
        (0.89, 0.97, 4, False),  # ... which simplifies to four corners when the cut leaves one round side
        (0.91, 0.99, 6, False),
        (0.93, 0.94, 4, False),
        (0.95, 0.94, 0, False),  # rectangular but spiky: a shout
        (0.78, 0.99, 0, False),  # an ellipse
    ],
)
def test_what_counts_as_a_caption_box(rectangularity: float, solidity: float, corners: int, boxy: bool) -> None:

    shape = BubbleShape(
        bbox=(0, 0, 10, 10),
        area_px2=100,
        solidity=solidity,
        rectangularity=rectangularity,
        tail_xy=None,
        corners=corners,
    )
    assert shape.boxy == boxy


def test_small_lettering_in_a_light_region_five_times_its_size_has_no_balloon() -> None:
    """Display lettering on open sky: the light region around it is not its balloon."""
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    cv2.ellipse(gray, (500, 500), (300, 200), 0, 0, 360, 255, -1)
    (block,) = group_lines([_line(420, 480, 160, 40, "Hush")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is None
    (block,) = group_lines([_line(240, 460, 520, 80, "Hush, little one")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is not None, "the same region around lettering that fills it is a balloon"


def _turned(gray: np.ndarray, box: tuple[int, int, int, int], quarter_turns: int) -> tuple[np.ndarray, TextLine]:
    """The page turned a quarter anticlockwise ``quarter_turns`` times, and the line's box turned with it."""
    x, y, w, h = box
    for _ in range(quarter_turns):
        x, y, w, h = y, gray.shape[1] - (x + w), h, w
        gray = np.ascontiguousarray(np.rot90(gray))
    return gray, _line(x, y, w, h, "CHAPTER TWELVE: THE STORM")


@pytest.mark.parametrize("quarter_turns", [0, 1, 2, 3], ids=["top", "left", "bottom", "right"])
def test_a_white_margin_running_off_the_page_is_no_balloon(quarter_turns: int) -> None:
    """The paper along one edge of a bleed page, lettered with a chapter title, between art that runs off the page
    too: a margin, not a caption box, though it is light, solid and only three times the size of its lettering."""
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    gray[:150, 60:940] = 255
    gray, title = _turned(gray, (100, 50, 800, 60), quarter_turns)
    height_px, width_px = gray.shape
    (block,) = group_lines([title], gray, PAPER, [(0, 0, width_px, height_px)])
    assert block.bubble is None
    for edge in (np.s_[:6, :], np.s_[-6:, :], np.s_[:, :6], np.s_[:, -6:]):
        gray[edge] = 110
    (block,) = group_lines([title], gray, PAPER, [(0, 0, width_px, height_px)])
    assert block.bubble is not None, "the same band six pixels in from the page's edges is a caption box"


def test_a_balloon_the_trim_cuts_is_still_a_balloon() -> None:
    """On a bleed page the trim cuts a balloon along a chord narrower than the balloon: it stays one, and its
    lines stay together."""
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    cv2.ellipse(gray, (300, 100), (260, 150), 0, 0, 360, 255, -1)  # a sixth of its height above the page
    lines = [_line(140, 20, 320, 40, "N-what was that"), _line(160, 70, 280, 40, "question, stranger?")]
    (block,) = group_lines(lines, gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is not None and [ln.text for ln in block.lines] == [ln.text for ln in lines]


def test_a_ragged_light_region_around_lettering_is_no_balloon_and_a_spiky_shout_is_one() -> None:
    """Lettering on the light gaps between figures (a band with fingers of paper running down between them, under
    five times the lettering's size) is not in a balloon: the region's body, its outline pulled back to 1.2 radii
    of its fitted ellipse, fills under 0.6 of its hull. A shout's spikes are pulled back with it, so a spiky
    balloon's body stays solid."""
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    gray[440:520, 200:800] = 255
    for x in range(200, 800, 120):
        gray[520:720, x : x + 40] = 255  # the paper between five figures
    (block,) = group_lines([_line(220, 455, 560, 50, "Over there")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is None
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    angles = 2 * np.pi * np.arange(32) / 32
    reach = np.where(np.arange(32) % 2 == 0, 1.0, 0.72)  # sixteen spikes
    star = np.stack([500 + 300 * reach * np.cos(angles), 500 + 190 * reach * np.sin(angles)], axis=1)
    cv2.fillPoly(gray, [star.astype(np.int32)], 255)
    (block,) = group_lines([_line(290, 455, 420, 90, "WHAT?!")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is not None and 0.6 < block.bubble.solidity < 0.8


def test_long_tails_do_not_make_a_balloon_ragged_and_lettering_a_sixth_of_its_region_has_none() -> None:
    """A balloon with long tails both ways (two speakers' balloon) keeps a solid body: its tails are pulled back to
    1.2 radii before the body's solidity is taken. And the spiky shout of the test above, around lettering under a
    fifth of its area, is the light around display lettering, not its balloon."""
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    cv2.ellipse(gray, (500, 500), (220, 120), 0, 0, 360, 255, -1)
    half_width = np.array([18, 0])
    for tip in ((500, 900), (500, 100)):  # three and a half of its radii away, up and down
        base = np.array([500, 500]) + (np.array(tip) - 500) * 0.3
        cv2.fillPoly(gray, [np.array([base + half_width, base - half_width, tip], dtype=np.int32)], 255)
    (block,) = group_lines([_line(320, 470, 360, 60, "We both say it")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is not None and block.bubble.tail_xy is not None
    gray = np.full((1400, 1000), 110, dtype=np.uint8)
    angles = 2 * np.pi * np.arange(32) / 32
    reach = np.where(np.arange(32) % 2 == 0, 1.0, 0.72)
    star = np.stack([500 + 300 * reach * np.cos(angles), 500 + 190 * reach * np.sin(angles)], axis=1)
    cv2.fillPoly(gray, [star.astype(np.int32)], 255)
    (block,) = group_lines([_line(320, 470, 360, 60, "WHAT?!")], gray, PAPER, [(0, 0, 1000, 1400)])
    assert block.bubble is None  # 5.9 times the lettering's box
