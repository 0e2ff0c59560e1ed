"""Page furniture: page numbers, credit lines, URLs, copyright and licence notices, publisher watermarks, artists'
signatures, and the credits page closing an episode. Kept in the reading (kind "furniture", for the credits) but
never narrated.

Issue 9: a Pepper&Carrot episode's closing page had its ~5,000 characters of patron names read aloud, and the
"漫画onWeb" mark in the corner of every Black Jack ni Yoroshiku page was narrated as a caption."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Literal

import numpy as np

from comic_narrator.artifacts import BBox, TextRegion
from comic_narrator.reading.bubbles import TextBlock, is_cjk
from comic_narrator.reading.geometry import area_px2, overlap_of_smaller
from comic_narrator.reading.lettering import DRAWN_OUT, block_text, page_letter_px

FurnitureReason = Literal[
    "page-number", "notice", "watermark", "credit", "margin", "dateline", "signature", "credits-page"
]

_PAGE_NUMBER = re.compile(
    r"^(?:[\W\d_]{1,4}|(?:p\.?|pg\.?|page)?\s*[-–—~·\s]*\d{1,4}\s*(?:/\s*\d{1,4})?[-–—~·\s]*)$", re.IGNORECASE
)
# Wherever they stand outside a balloon: a web address, a copyright or licence line, a patronage appeal. Words a
# narration might use ("his licence", "the inn's patrons") need the notice's own phrasing.
_NOTICE = re.compile(
    r"https?:|www\.|\b[a-z0-9-]{2,}\.(?:com|org|net|io|info|jp|fr|de|eu|uk)\b|©|\(c\)\s*\d{4}|copyright|"
    r"all rights reserved|licen[cs]ed\s+under|licen[cs]e\s*[:：]|creative\s*commons|\bcc[- ]?by(?:-sa)?\b|\bcc0\b|"
    r"patreon|tipeee|liberapay|ko-fi|著作権|無断(?:転載|複製)",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"[,、・;]|\s[-–]\s")
"""What sets one name apart from the next in a list of credits: commas, Japanese list marks, a spaced dash."""
_LIST_SEPARATORS = 10
"""A list of names with this many separators (one every four words or more often) is credits on any page."""
_LICENCE_BADGE = re.compile(r"\W*(?:c\W?c|by|cc\W*by(?:\W*(?:sa|nc|nd))*)\W*", re.IGNORECASE)
"""What the recogniser reads from a Creative Commons badge: "cc", "BY", "cc by-sa"."""
# What a closing credits page says besides the names.
_THANKS = re.compile(r"patron|supporters|special thanks|thanks go to|sponsored|credits", re.IGNORECASE)
# Publisher and site marks stamped on every page (spaces removed, lower case).
_WATERMARKS = ("漫画onweb", "mangaonweb")
# Who made it, said outside the panels: "art by ...", "描いた人／カスガ".
_CREDIT = re.compile(
    r"\b(?:art|story|script|written|drawn|pencil(?:s|ed)?|inks?|inked|colou?rs?|colou?red|letter(?:s|ed|ing)|"
    r"translat(?:ion|ed|or)|edit(?:ed|or)|proofread(?:ing)?)\s*(?:by\b|:)|描いた人|作画|原作|翻訳|"
    r"(?:^|\s)(?:作|画|著|文)\s*[:：/／]",
    re.IGNORECASE,
)
# Who made it, as an episode's last panel signs it over the art: "09/2015 - Art & Scenario: David Revoy -
# Translation: Alex Gryson", "Artwork and story by ... - Translation by ...". Inside a panel a narration may say
# "written by" once; a credit line names two roles, or one after the date it opens with.
_CREDIT_ROLE = re.compile(
    r"\b(?:art(?:work)?|story|scenario|script(?:\s+doctor)?|written|drawn|pencils?|inks?|colou?rs?|lettering|"
    r"translation|corrections?|proofreading|dialog(?:ue)?|contributions?|created)(?:\s*(?:&|and)\s*[a-z]+)?\s*"
    r"(?:by\b|:)",
    re.IGNORECASE,
)
_CREDIT_DATE = re.compile(
    r"^\W*(?:(?:0?[1-9]|1[0-2])/|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+)(?:19|20)\d\d\s*[-–—]",
    re.IGNORECASE,
)
"""The month it was drawn, opening the line before a dash: "09/2015 -", "July 2015 -"."""
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATELINE = re.compile(
    rf"^\W*(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day\W+)?(?:{_MONTH}\s*\d{{1,2}}(?:st|nd|rd|th)?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH})\W+(?:1[6-9]|20)\d\d\W*$",
    re.IGNORECASE,
)
"""A newspaper's dateline or an issue date, alone: "TUESDAY. DECEMBER 14. 1915", "March 3rd, 1907", "14 May 1952"."""
_SIGNED = re.compile(r"[A-Z][A-Za-z][A-Za-z0-9]{2,10}[-~.,]?")
"""One signed name: a capital and 4-12 letters or digits in all (a recogniser's 0 for a pen's final flourish:
Herriman's signature reads "ERRUAN0")."""
_SIGNATURE_TILT = 5.0
"""Degrees a signature's line may lean: signed level on the frame, where sounds and signs on the art slant (the
lettered Pepper&Carrot pages' "Wooosh", "Shhshh" and an "Invitation" card at 11-24 degrees)."""
_SIGNATURE_LETTER = 1.7
"""A signature's line may stand taller than the lettering (small letters with ascenders and descenders against
capitals), up to the size at which loose lettering is display lettering (a title, a sound)."""
_MARGIN_FRAC = 0.05
"""The outer band of the page (share of its height or width) where running heads, folios and marks sit."""
_HEAD_BAND_FRAC = 0.1
"""Above the top tier, lettering within this share of the page's height of its top is a running head (a scan
keeps the book's margins: Buster Bear #10's head ends 5.8 % down its page)."""
_HEAD_LETTER = 1.3
"""... when its letters are at most this many times the page's balloon lettering (the head is lettered by the
same hand as the balloons, 1.15x their median there; a title is display lettering, two times and more)."""


@dataclass(frozen=True)
class SplitBlocks:
    """A page's text blocks parted into story lettering and furniture."""

    story: list[TextBlock]
    furniture: list[TextBlock]
    credits_page: bool
    """Most of the page is a dense list of names (an episode's closing credits): nothing on it but balloons is
    narrated."""


def split_furniture(blocks: list[TextBlock], panels: list[BBox], width_px: int, height_px: int) -> SplitBlocks:
    """Part the blocks into story and furniture, judging each block by its words and where it stands."""
    story: list[TextBlock] = []
    furniture: list[TextBlock] = []
    if is_credits_page(blocks, height_px):
        for block in blocks:
            said = block.bubble is not None and _said_on_credits_page(block_text(block))
            (story if said else furniture).append(block)
        return SplitBlocks(story=story, furniture=furniture, credits_page=True)
    typical_letter_px = page_letter_px(blocks)
    for block in blocks:
        reason = furniture_reason(block, panels, width_px, height_px, typical_letter_px)
        (furniture if reason is not None else story).append(block)
    return SplitBlocks(story=story, furniture=furniture, credits_page=False)


def furniture_reason(
    block: TextBlock, panels: list[BBox], width_px: int, height_px: int, typical_letter_px: float
) -> FurnitureReason | None:
    """Why this block is furniture, or None when it is story lettering."""
    text = block_text(block).strip()
    if _LICENCE_BADGE.fullmatch(text):
        return "notice"  # the Creative Commons badge, round like a balloon
    if _name_list(text, at_least=_LIST_SEPARATORS):
        return "credit"  # a list of patrons or contributors, wherever it stands: nobody says it
    outside = not any(overlap_of_smaller(block.bbox, p) >= 0.5 for p in panels)
    in_balloon = block.bubble is not None and not outside
    if not text or in_balloon:
        return None  # a character may say "www." or "licence": words in a balloon are spoken
    squashed = re.sub(r"\s+", "", text).lower()
    if any(mark in squashed for mark in _WATERMARKS):
        return "watermark"
    if _NOTICE.search(text):
        return "notice"
    if block.bubble is None and len(_CREDIT_ROLE.findall(text)) + bool(_CREDIT_DATE.search(text)) >= 2:
        return "credit"
    if not outside:
        return "signature" if _signature(block, text, panels, typical_letter_px) else None
    if _PAGE_NUMBER.match(text):
        return "page-number"
    if _DATELINE.match(text):
        return "dateline"
    if _CREDIT.search(text):
        return "credit"
    letter_px = max(ln.letter_px for ln in block.lines)
    small = typical_letter_px <= 0 or letter_px <= 1.2 * typical_letter_px
    if small and block.bubble is None and _in_margin(block.bbox, width_px, height_px):
        return "margin"  # a running head, a folio or a mark in the page's outer band, outside every panel
    near_size = typical_letter_px <= 0 or letter_px <= _HEAD_LETTER * typical_letter_px
    if near_size and block.bubble is None and _above_panels(block.bbox, panels, height_px):
        return "margin"  # a running head over the top tier of a scan whose margins are wide
    return None


def _signature(block: TextBlock, text: str, panels: list[BBox], typical_letter_px: float) -> bool:
    """An artist's signature on the art: one name (a word of four letters or more with a capital first, no letter
    drawn out), loose, level, not display lettering, standing on a frame line: its foot at most its own height
    above (or half of it below) a panel's bottom edge or the top edge of a panel under it (Chilling Tales #13's
    "Harrison" over its lower inset, Baron Bean's "Herriman" in a panel's corner, both said in a character's
    voice)."""
    if block.bubble is not None or len(block.lines) != 1 or not _SIGNED.fullmatch(text):
        return False
    if abs(block.lines[0].angle_deg) > _SIGNATURE_TILT or DRAWN_OUT.search(text.lower()):
        return False  # a sound word drawn at a slant or drawn out (Wooosh, Shhshh), a sign in perspective
    if typical_letter_px > 0 and block.lines[0].letter_px >= _SIGNATURE_LETTER * typical_letter_px:
        return False
    x, y, w, h = block.bbox
    foot = y + h
    for px, py, pw, ph in panels:
        if px - h <= x + w / 2.0 <= px + pw + h and any(-h / 2.0 <= edge - foot <= h for edge in (py, py + ph)):
            return True
    return False


def _in_margin(box: BBox, width_px: int, height_px: int) -> bool:
    x, y, w, h = box
    band_y = _MARGIN_FRAC * height_px
    band_x = _MARGIN_FRAC * width_px
    return y + h <= band_y or y >= height_px - band_y or x + w <= band_x or x >= width_px - band_x


def _above_panels(box: BBox, panels: list[BBox], height_px: int) -> bool:
    """Above every panel (its middle above the topmost frame: panel boxes reach a few pixels past a frame drawn by
    hand) and within the page's top ``_HEAD_BAND_FRAC``: where a running head stands on a page scanned with its
    margins. (Print below the last tier is left to the story: a closing narration is set there.)"""
    if not panels:
        return False
    _x, y, _w, h = box
    return y + h / 2.0 <= min(p[1] for p in panels) and y + h <= _HEAD_BAND_FRAC * height_px


def _name_list(text: str, at_least: int = 0) -> bool:
    """Names one after another, ``at_least`` separators and one every few words (Ann Lee - Bo Chen - ..., 佐藤、鈴木):
    in Japanese, which has no spaces to count words by, one every six characters (prose has one every fifteen)."""
    separators = len(_SEPARATOR.findall(text))
    if separators < at_least:
        return False
    if is_cjk(text):
        return separators * 6 >= len(re.sub(r"\s+", "", text))
    return separators / max(len(text.split()), 1) >= 0.25


def _said_on_credits_page(text: str) -> bool:
    """Lettering in a closed outline on a credits page that a character says: a word of three letters or more
    (not the licence's "cc" logo or a lone digit) and no list of names (a row of patrons in a frame: three
    separators or more, where a sentence has a comma or two: "Above all, don't panic, Carrot")."""
    return any(len(word) >= 3 for word in re.findall(r"\w+", text)) and not _name_list(text, at_least=3)


def is_credits_page(blocks: list[TextBlock], height_px: int) -> bool:
    """An episode's closing credits: many lines of small loose print, hardly any balloon, reading as a list of
    names (a separator every few words) or as thanks to patrons and a licence."""
    loose = [b for b in blocks if b.bubble is None]
    loose_lines = [ln for b in loose for ln in b.lines]
    balloon_lines = sum(len(b.lines) for b in blocks if b.bubble is not None)
    if len(loose_lines) < 12 or balloon_lines * 4 > len(loose_lines):
        return False
    text = " ".join(block_text(b) for b in loose)
    if len(re.sub(r"\s+", "", text)) < 300:
        return False
    small_print = statistics.median(ln.letter_px for ln in loose_lines) <= 0.025 * height_px
    name_list = _name_list(text)
    notices = len({m.group(0).lower() for m in (*_NOTICE.finditer(text), *_THANKS.finditer(text))})
    return small_print and (name_list or notices >= 2)


def furniture_regions(blocks: list[TextBlock], panels: list[BBox], lang: Literal["en", "ja"]) -> list[TextRegion]:
    """Furniture as reading regions, top to bottom: no speaker, in the panel that holds it if any."""
    out: list[TextRegion] = []
    for block in sorted(blocks, key=lambda b: (b.bbox[1], b.bbox[0])):
        holders = [i for i, p in enumerate(panels) if overlap_of_smaller(block.bbox, p) >= 0.5]
        out.append(
            TextRegion(
                bbox=block.bbox,
                kind="furniture",
                text=block_text(block),
                speaker=None,
                panel=min(holders, key=lambda i: area_px2(panels[i])) if holders else -1,
                lang=lang,
                vertical=any(ln.vertical for ln in block.lines),
                confidence=round(float(np.mean([ln.score for ln in block.lines])), 4),
            )
        )
    return out
