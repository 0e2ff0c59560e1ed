"""Which way a page reads (ltr / rtl / ttb) and which language its lettering is in."""

from __future__ import annotations

from typing import Literal

from comic_narrator.artifacts import PageImage, ReadingDirection
from comic_narrator.config import VisionConfig

WEBTOON_ASPECT = 2.5
"""A page at least this many times taller than wide is a webtoon strip (same figure as the ingest slicer)."""


def script_language(texts: list[str]) -> Literal["en", "ja"] | None:
    """'ja' when kana/kanji outnumber Latin letters, 'en' when Latin letters dominate, None with no letters."""
    kana_kanji = 0
    latin = 0
    for text in texts:
        for c in text:
            code = ord(c)
            if 0x3040 <= code <= 0x30FF or 0x4E00 <= code <= 0x9FFF or 0xFF66 <= code <= 0xFF9D:
                kana_kanji += 1
            elif c.isascii() and c.isalpha():
                latin += 1
    if kana_kanji == 0 and latin == 0:
        return None
    # One kana stands for about two Latin letters of content.
    return "ja" if kana_kanji * 2 >= latin else "en"


def reading_direction(
    config: VisionConfig, page: PageImage, manga_hint: bool | None, lang: Literal["en", "ja"] | None
) -> ReadingDirection:
    """--layout wins; for auto: ComicInfo's manga flag, then a tall strip (or a webtoon slice), then language."""
    if config.layout == "manga":
        return "rtl"
    if config.layout == "western":
        return "ltr"
    if config.layout == "webtoon":
        return "ttb"
    if manga_hint:
        return "rtl"
    if page.segment > 0 or page.height_px >= WEBTOON_ASPECT * max(page.width_px, 1):
        return "ttb"
    if manga_hint is None and lang == "ja":
        return "rtl"
    return "ltr"
