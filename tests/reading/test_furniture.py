"""Page furniture on real pages, read by the real reader: kept in the reading, never in the script.

Credit lines (wikipe-tan), a publisher's watermark (the bundled Black Jack sample and ../shared/training),
newspaper copyright lines and folios (the Dingbat Family band), and an episode's closing credits page, built here
from a real Pepper&Carrot page because the real credits pages are not in the corpus."""

from __future__ import annotations

import io
import json
import random
import textwrap
import zipfile

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw, ImageFont

from comic_narrator.artifacts import BookReading, PageReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig, VoiceConfig
from comic_narrator.ingest.images import decode_image
from comic_narrator.reading.bubbles import BubbleShape, TextBlock, TextLine
from comic_narrator.reading.furniture import (
    _said_on_credits_page,
    furniture_reason,
    furniture_regions,
    is_credits_page,
)
from comic_narrator.reading.geometry import overlap_of_smaller
from comic_narrator.reading.reader import read_page
from comic_narrator.voice.writer import write_script
from tests.conftest import corpus_path, training_path
from tests.reading.conftest import DATA, blackjack_sample_pages, load_rgb, page_for, read_bundled

_LIMIT_PX = 64_000_000


def _script_text(reading: PageReading, lang: str) -> str:
    script = write_script(BookReading(source="test", lang=lang, pages=[reading]), VoiceConfig())  # type: ignore[arg-type]
    return " ".join(line.text for line in script.lines)


def _read(image: npt.NDArray[np.uint8], ocr: RapidOcrEngine, manga: bool | None = None) -> PageReading:
    return read_page(image, page_for(image), config=VisionConfig(), manga_hint=manga, ocr=ocr)


def test_wikipe_tan_credit_line_is_furniture_and_the_title_is_not(ocr: RapidOcrEngine) -> None:
    gt = json.loads((DATA / "wikipe-tan" / "gt.json").read_text(encoding="utf-8"))
    reading = read_bundled(ocr, DATA / "wikipe-tan" / "page1.ja.jpg")
    regions = {r["kind"]: tuple(r["bbox_xywh"]) for r in gt["non_story_regions"]}
    credit = [t for t in reading.texts if overlap_of_smaller(t.bbox, regions["credit"]) >= 0.5]
    assert [t.kind for t in credit] == ["furniture"]  # "描いた人／カスガ": who drew it, kept for the credits
    title = [t for t in reading.texts if overlap_of_smaller(t.bbox, regions["title"]) >= 0.5 and "百科" in t.text]
    assert title and title[0].kind == "caption"  # the title is said
    spoken = _script_text(reading, "ja")
    assert "カスガ" not in spoken and "百科事典娘" in spoken and "係船柱" in spoken
    assert reading.texts[-1].kind == "furniture"  # furniture comes after the story's lettering


@pytest.mark.parametrize("index", [0, 3])
def test_publisher_watermark_on_the_bundled_manga_is_furniture(index: int, ocr: RapidOcrEngine) -> None:
    image = blackjack_sample_pages()[index]
    reading = _read(image, ocr, manga=True)
    marks = [t for t in reading.texts if "onweb" in t.text.lower().replace(" ", "")]
    assert len(marks) == 1 and marks[0].kind == "furniture" and marks[0].speaker is None
    x, y, _, _ = marks[0].bbox
    assert x < 0.1 * image.shape[1] and y > 0.9 * image.shape[0]  # the mark in the bottom-left corner
    spoken = _script_text(reading, "ja")
    assert "onweb" not in spoken.lower().replace(" ", "") and len(spoken) >= 20


def test_watermark_on_full_size_training_pages_is_furniture(ocr: RapidOcrEngine) -> None:
    path = training_path("blackjack-ni-yoroshiku", "vol01", "bj01_000030.jpg")
    reading = _read(load_rgb(path), ocr, manga=True)
    assert [t.kind for t in reading.texts if "漫画" in t.text and "web" in t.text.lower()] == ["furniture"]
    assert "web" not in _script_text(reading, "ja").lower()


def test_newspaper_copyright_lines_and_folio_are_furniture(ocr: RapidOcrEngine) -> None:
    archive = corpus_path("newspaper-strips", "dingbat-family-strip.cbz")
    with zipfile.ZipFile(archive) as zipped:
        name = next(n for n in zipped.namelist() if n.lower().endswith((".jpg", ".png")) and "/." not in n)
        image = decode_image(zipped.read(name), source=name, max_pixels=_LIMIT_PX)
    reading = _read(image, ocr)
    furniture = [t.text for t in reading.texts if t.kind == "furniture"]
    assert sum("copyright" in t.lower() for t in furniture) >= 1
    assert "21" in furniture  # the page number in the masthead
    spoken = _script_text(reading, "en").lower()
    assert "copyright" not in spoken and "dingbat" in spoken


_SYLLABLES = ("ka", "ri", "mo", "an", "el", "to", "su", "ne", "vi", "la", "do", "mi", "ar", "os", "be", "lin")


def _patron_name(rng: random.Random) -> str:
    def word(syllables: int) -> str:
        return "".join(rng.choice(_SYLLABLES) for _ in range(syllables)).capitalize()

    return f"{word(rng.randint(2, 3))} {word(rng.randint(2, 4))}"


def _credits_page(names_chars: int = 5000, seed: int = 17) -> tuple[npt.NDArray[np.uint8], list[str]]:
    """Pepper&Carrot's closing page as the episodes print it: the last picture, then thanks to the patrons, about
    5,000 characters of their names in small print, the patronage link and the licence."""
    with Image.open(DATA / "peppercarrot-ep17" / "page4.jpg") as opened:
        page = opened.convert("RGB")
    width_px, height_px = page.size
    top_px = int(0.3 * height_px)
    draw = ImageDraw.Draw(page)
    draw.rectangle((0, top_px, width_px, height_px), fill=(255, 255, 255))
    heading, small = ImageFont.load_default(size=18), ImageFont.load_default(size=13)
    x_px, y_px = int(0.05 * width_px), top_px + 20
    thanks = (
        "Pepper&Carrot is entirely free (libre), open-source and sponsored thanks to the patronage of readers. "
        "For this episode, thanks go to the 879 Patrons:"
    )
    for line in textwrap.wrap(thanks, 80):
        draw.text((x_px, y_px), line, fill=(20, 20, 20), font=heading)
        y_px += 24
    rng = random.Random(seed)
    names: list[str] = []
    while sum(len(n) + 2 for n in names) < names_chars:
        names.append(_patron_name(rng))
    for line in textwrap.wrap(", ".join(names), 118):
        draw.text((x_px, y_px + 8), line, fill=(40, 40, 40), font=small)
        y_px += 16
    for line in (
        "You too can become a patron of Pepper&Carrot for the next episode at www.patreon.com/davidrevoy",
        "License: Creative Commons Attribution 4.0. Art & scenario: David Revoy. Translation: Alex Gryson",
    ):
        draw.text((x_px, y_px + 18), line, fill=(20, 20, 20), font=heading)
        y_px += 24
    buffer = io.BytesIO()
    page.save(buffer, format="PNG")
    return decode_image(buffer.getvalue(), source="credits page", max_pixels=_LIMIT_PX), names


def test_closing_credits_page_is_kept_but_not_narrated(ocr: RapidOcrEngine) -> None:
    image, names = _credits_page()
    reading = _read(image, ocr)
    assert reading.page_kind == "credits"
    kept = "".join(t.text for t in reading.texts if t.kind == "furniture")
    assert len(kept) >= 3000 and "Patrons" in kept  # the names stay in the reading, for the credits
    spoken = _script_text(reading, "en")
    # Only the balloon of the picture left at the top is said; none of the names, the link or the licence.
    assert len(spoken) <= 60 and "panic" in spoken
    assert not any(name in spoken for name in names)


def test_an_episodes_credit_line_in_its_last_panel_is_furniture(ocr: RapidOcrEngine) -> None:
    """Pepper&Carrot ep. 11's last page: the date, artist and translator lettered over the last picture, inside the
    panel, where a credit said outside the panels would already be furniture."""
    reading = _read(load_rgb(DATA / "peppercarrot-training" / "E11P06-lettered.jpg"), ocr)
    credit = [t for t in reading.texts if "Scenario" in t.text]
    assert len(credit) == 1 and credit[0].kind == "furniture" and credit[0].speaker is None
    spoken = _script_text(reading, "en")
    assert "Revoy" not in spoken and "Gryson" not in spoken and "work ahead of us" in spoken


def test_a_credits_pages_badge_and_numbers_are_not_said(ocr: RapidOcrEngine) -> None:
    """Pepper&Carrot ep. 5's closing credits: the Creative Commons badge's "cc" sits in a closed circle, so it read
    as a balloon, and on a credits page every balloon was narrated ("cc", and a lone "1")."""
    reading = _read(load_rgb(DATA / "peppercarrot-training" / "E05P05-lettered.jpg"), ocr)
    assert reading.page_kind == "credits"
    assert _script_text(reading, "en") == ""
    assert any(t.kind == "furniture" and "patron" in t.text for t in reading.texts)


def test_an_early_episodes_patrons_are_not_said(ocr: RapidOcrEngine) -> None:
    """Pepper&Carrot ep. 3's last page thanks 93 patrons by name in a block on a light paper patch, and the licence
    badge's "cc" and "BY" sit in circles: read as a caption and balloons, the narrator said all of it (the page
    is not dense enough to be taken for a credits page). Pepper's "Thank you!" is still said."""
    reading = _read(load_rgb(DATA / "peppercarrot-training" / "E03P08-lettered.jpg"), ocr)
    spoken = _script_text(reading, "en")
    assert "Thank you" in spoken
    assert "Westra" not in spoken and "Prieto" not in spoken
    assert not {"cc", "by"} & {word.strip(".,!").lower() for word in spoken.split()}
    assert any(t.kind == "furniture" and "Westra" in t.text for t in reading.texts)


@pytest.mark.parametrize(
    ("text", "badge"),
    [("cc", True), ("cC", True), ("BY", True), ("(cc) BY-SA", True), ("Bye!", False), ("cc me", False)],
)
def test_the_licence_badge(text: str, badge: bool) -> None:
    block = _block(text, (20, 20, 40, 30), balloon=True)
    assert (furniture_reason(block, [(0, 0, 400, 400)], 400, 400, 20.0) == "notice") is badge


@pytest.mark.parametrize(
    ("text", "credit"),
    [
        (
            "Alex Lusco, Alex Silver, Alex Vandiver, Alexander Sopicki, Anna Orlova, Antan Karmola, Antoine, "
            "Aslak Kjølås-Sæverud, Axel Bordelon, Ben Evans, Boonsak Watanavisit, Boudewijn Rempt",
            True,
        ),
        ("佐藤、鈴木、高橋、田中、伊藤、渡辺、山本、中村、小林、加藤、吉田", True),
        # narration with ten commas or more, in either language, is no list of names
        (
            "The heart of the Matto Grosso, Brazil's mysterious jungle, where, as the old maps say, no man has "
            "walked for a thousand years, and where, they say, the river, the rain and the trees, patient and "
            "silent, keep the temple, its gold and its curse, for whoever comes next",
            False,
        ),
        (
            "全国の大学附属病院に対するアンケートの結果、研修医のアルバイトが禁止されているのは全体の2%に過ぎず、"
            "アルバイトに出た研修医のうち、実に8割が、夜間の救急外来で、たった一人で、診療を経験しているという。"
            "しかも、その多くが、不安を抱えながら、指導医もいないまま、患者を診ているのが実態である",
            False,
        ),
    ],
)
def test_a_list_of_names_is_credits_on_any_page(text: str, credit: bool) -> None:
    block = _block(text, (20, 20, 300, 120))
    assert (furniture_reason(block, [(0, 0, 400, 400)], 400, 400, 20.0) == "credit") is credit


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("I'm glad you like it, Carrot!", True),
        ("Above all, don't panic, Carrot...", True),  # two commas are a sentence's
        ("No!", False),  # (a word of two letters: on a credits page it is the badge's "cc" as well as a "No")
        ("cc", False),
        ("1", False),
        # a row of patrons in a frame of its own (ep. 9's credits)
        ("David Brennan David Kerdudo - David Tang - DecMoon - Derek Zan - Dio", False),
        ("Ann Lee, Bo Chen, Cy Twombly, Dee Dee", False),
    ],
)
def test_what_a_credits_page_says_in_a_balloon(text: str, said: bool) -> None:
    assert _said_on_credits_page(text) is said


def _block(text: str, box: tuple[int, int, int, int], *, balloon: bool = False, letter_px: float = 20.0) -> TextBlock:
    line = TextLine(bbox=box, text=text, score=0.95, vertical=False, angle_deg=0.0, letter_px=letter_px)
    bubble = BubbleShape(bbox=box, area_px2=box[2] * box[3], solidity=0.98, rectangularity=0.8, tail_xy=None)
    return TextBlock(lines=(line,), bbox=box, bubble=bubble if balloon else None)


_PANELS = [(50, 50, 900, 600), (50, 700, 900, 600)]


@pytest.mark.parametrize(
    ("text", "box", "balloon", "expected"),
    [
        ("12", (480, 1360, 30, 20), False, "page-number"),
        ("- 12 -", (460, 1360, 70, 20), False, "page-number"),
        ("p. 7", (900, 1360, 50, 20), False, "page-number"),
        ("12", (480, 300, 30, 20), False, None),  # a number inside a panel is the art's, not a folio
        ("www.peppercarrot.com", (300, 1340, 300, 20), False, "notice"),
        ("© 2016 David Revoy", (300, 660, 300, 20), False, "notice"),
        ("This comic is licensed under CC BY 4.0", (300, 300, 400, 20), False, "notice"),
        ("Go to www.example.com, quick!", (300, 300, 300, 40), True, None),  # said in a balloon: spoken
        ("He lost his licence, and the inn its patrons.", (300, 300, 400, 20), False, None),  # narration
        ("Art by David Revoy", (300, 662, 300, 20), False, "credit"),
        # An episode's last panel signed over the art: two roles, or one after the month it opens with.
        ("09/2015 - Art & Scenario: David Revoy - Translation: Alex Gryson", (300, 1200, 500, 20), False, "credit"),
        ("Artwork and story by David Revoy - Translation by Alex Gryson", (300, 1200, 500, 20), False, "credit"),
        ("03/2016 - Art & Scenario : David Revoy", (300, 1200, 400, 20), False, "credit"),
        ("May 1952. The letter, written by his mother, arrived.", (300, 300, 400, 20), False, None),  # narration
        ("The story by the fire: a tale of old.", (300, 300, 400, 20), False, None),
        ("Art & Scenario: David Revoy - Translation: Alex Gryson", (300, 300, 400, 40), True, None),  # said
        ("漫画 on Web", (5, 1340, 110, 40), False, "watermark"),
        ("Meanwhile, at the castle...", (300, 662, 300, 30), False, None),  # a caption between panels
        ("Chapter 3", (300, 5, 200, 30), False, "margin"),  # a running head in the top band
        ("TUESDAY. DECEMBER 14. 1915", (600, 655, 300, 30), False, "dateline"),  # a newspaper's, between panels
        ("Sunday, Jan. 5, 1936", (600, 660, 250, 20), False, "dateline"),
        ("December 14, 1941", (300, 300, 300, 30), False, None),  # a caption inside a panel: narration
        ("May 1952. The letter arrived.", (600, 660, 300, 20), False, None),  # a sentence, not a dateline
        ("THE END", (300, 1340, 200, 55), False, None),  # display lettering in the bottom band, not furniture
    ],
)
def test_furniture_reason_by_words_and_place(
    text: str, box: tuple[int, int, int, int], balloon: bool, expected: str | None
) -> None:
    letter_px = 60.0 if text == "THE END" else 20.0
    block = _block(text, box, balloon=balloon, letter_px=letter_px)
    assert furniture_reason(block, _PANELS, 1000, 1400, typical_letter_px=20.0) == expected


_SCAN_PANELS = [(60, 130, 880, 560), (60, 710, 880, 560)]
"""A scan that kept the book's margins: the top tier starts 9 % down the page, the bottom one ends at 91 %."""


@pytest.mark.parametrize(
    ("text", "box", "letter_px", "expected"),
    [
        ("BUSTER BEAR", (400, 90, 200, 30), 23.0, "margin"),  # a running head over the top tier, past the 5 % band
        ("BUSTER BEAR", (400, 110, 200, 30), 23.0, "margin"),  # its box runs into the frame; its middle does not
        ("AND SO THEY WENT HOME", (300, 1290, 300, 22), 20.0, None),  # under the bottom tier: a closing narration
        ("BUSTER BEAR", (400, 90, 200, 30), 40.0, None),  # display lettering twice the balloons': a title
        ("MEANWHILE...", (400, 692, 200, 16), 16.0, None),  # between the tiers, not beyond them
        ("THE NEXT MORNING", (400, 130, 250, 30), 20.0, None),  # at the top tier's frame, inside the panel
    ],
)
def test_lettering_above_every_panel_near_the_page_top_is_a_running_head(
    text: str, box: tuple[int, int, int, int], letter_px: float, expected: str | None
) -> None:
    block = _block(text, box, letter_px=letter_px)
    assert furniture_reason(block, _SCAN_PANELS, 1000, 1400, typical_letter_px=20.0) == expected


def test_furniture_keeps_the_smallest_panel_holding_it_or_none() -> None:
    splash_top, bottom, inset = (50, 50, 900, 600), (50, 700, 900, 600), (80, 80, 400, 300)
    blocks = [
        _block("Chapter 3", (100, 100, 200, 20)),  # in the top panel and in the inset drawn over it
        _block("www.peppercarrot.com", (300, 660, 300, 20)),  # in the gutter between the panels
        _block("- 12 -", (460, 1250, 70, 20)),  # in the bottom panel only
    ]
    regions = furniture_regions(blocks, [splash_top, bottom, inset], "en")
    assert [(r.text, r.panel) for r in regions] == [("Chapter 3", 2), ("www.peppercarrot.com", -1), ("- 12 -", 1)]
    assert {r.kind for r in regions} == {"furniture"} and {r.speaker for r in regions} == {None}


_NAMES = "Kamo Rine, Anto Suvi, Elmi Lado, Osbe Linka, Mira Tone,"
_PROSE = "The wind carried the two witches over the hills and into the valley"


def _small_print(lines: list[str], letter_px: float = 12.0) -> list[TextBlock]:
    return [_block(line, (40, 400 + 18 * i, 900, 16), letter_px=letter_px) for i, line in enumerate(lines)]


def test_a_credits_page_is_small_print_reading_as_names_or_as_thanks_and_a_licence() -> None:
    # 1400 px page: small print is at most 35 px (2.5 % of the height); 14 lines of 12 px letters are.
    assert is_credits_page(_small_print([_NAMES] * 14), 1400)  # a list: a comma every two words
    assert not is_credits_page(_small_print([_PROSE] * 14), 1400)  # prose in small print: a page of narration
    thanks = ["For this episode, thanks go to the patrons of the series", "License: Creative Commons Attribution"]
    assert is_credits_page(_small_print([_PROSE] * 12 + thanks), 1400)  # no list, but thanks and a licence
    assert not is_credits_page(_small_print([_NAMES] * 14, letter_px=40.0), 1400)  # names set large: not credits


_SPLASH_AND_INSET = [(50, 50, 900, 1250), (50, 700, 900, 600)]
"""A splash with an inset panel drawn over its lower half."""


@pytest.mark.parametrize(
    ("text", "box", "letter_px", "balloon", "panels", "signed"),
    [
        ("Harrison", (700, 615, 100, 30), 30.0, False, _PANELS, True),  # on the top panel's bottom frame (foot 645)
        ("Harrison", (700, 665, 100, 30), 30.0, False, _SPLASH_AND_INSET, True),  # on the inset's top frame
        ("HERRIMAN", (820, 1272, 120, 24), 20.0, False, _PANELS, True),  # in the lower panel's corner, on its frame
        ("Harrison", (700, 400, 100, 30), 30.0, False, _PANELS, False),  # mid-panel: somebody's word
        ("Harrison", (700, 570, 100, 30), 30.0, False, _PANELS, False),  # its foot 50 px over the frame: free
        ("Harrison", (700, 615, 100, 30), 30.0, True, _PANELS, False),  # in a balloon: a name called
        ("Harrison!", (700, 615, 100, 30), 30.0, False, _PANELS, False),  # a name shouted
        ("Run away", (700, 615, 100, 30), 30.0, False, _PANELS, False),  # two words: a line
        ("harrison", (700, 615, 100, 30), 30.0, False, _PANELS, False),  # no capital: no name
        ("Bob", (700, 615, 60, 30), 30.0, False, _PANELS, False),  # three letters: too little to tell
        ("Harrison", (700, 580, 200, 65), 65.0, False, _PANELS, False),  # display lettering: a title
        ("Wooosh", (700, 615, 100, 30), 30.0, False, _PANELS, False),  # a sound drawn out on the frame
    ],
)
def test_a_name_signed_on_a_frame_line_is_a_signature(
    text: str,
    box: tuple[int, int, int, int],
    letter_px: float,
    balloon: bool,
    panels: list[tuple[int, int, int, int]],
    signed: bool,
) -> None:
    block = _block(text, box, balloon=balloon, letter_px=letter_px)
    reason = furniture_reason(block, panels, 1000, 1400, typical_letter_px=20.0)
    assert (reason == "signature") is signed


def test_a_word_on_a_frame_line_at_a_slant_is_no_signature() -> None:
    """Sounds and signs on the art lean (the lettered Pepper&Carrot pages' "Shhshh" at -24 degrees, an
    "Invitation" card at 11); a signature is signed level."""
    for angle, signed in ((0.0, True), (4.0, True), (11.0, False), (-24.0, False)):
        box = (700, 615, 100, 30)
        line = TextLine(bbox=box, text="Invitation", score=0.95, vertical=False, angle_deg=angle, letter_px=30.0)
        block = TextBlock(lines=(line,), bbox=box, bubble=None)
        assert (furniture_reason(block, _PANELS, 1000, 1400, typical_letter_px=20.0) == "signature") is signed


def test_an_artists_signature_over_an_inset_is_kept_for_the_credits_and_not_said(ocr: RapidOcrEngine) -> None:
    """Chilling Tales #13's splash is signed "Harrison" just above the inset panel at its foot; it was said in a
    character's voice."""
    reading = read_bundled(ocr, DATA / "golden-age" / "chilling-tales-13-story-p1.jpg")
    signed = [t for t in reading.texts if "harrison" in t.text.lower()]
    assert [t.kind for t in signed] == ["furniture"] and signed[0].speaker is None
    spoken = _script_text(reading, "en").lower()
    assert "harrison" not in spoken and "we've found it" in spoken
