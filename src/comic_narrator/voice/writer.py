"""Writing the script: readings in, one spoken line per caption/bubble in book order, out."""

from __future__ import annotations

import re
from typing import Literal

from comic_narrator.artifacts import BookReading, Emotion, PageReading, Script, ScriptLine, TextRegion
from comic_narrator.config import VoiceConfig

NARRATOR = "narrator"
UNKNOWN_SPEAKER = "unknown"


def emotion_for(region: TextRegion) -> Emotion:
    """Tone from an LLM reader when it gave one; else from the lettering: shouts and exclamations are excited,
    trailing dots calm, '?!' angry."""
    if region.emotion is not None:
        return region.emotion
    text = region.text.strip()
    if region.kind == "shout":
        return "angry" if "?!" in text or "!?" in text else "excited"
    if text.endswith("!") or text.endswith("！"):
        return "excited"
    if text.endswith(("...", "…", "……")):
        return "calm"
    return "neutral"


def speaker_for(region: TextRegion) -> str:
    if region.kind in ("caption", "sound"):
        return NARRATOR
    return region.speaker or UNKNOWN_SPEAKER


def page_lines(page: PageReading, config: VoiceConfig) -> list[ScriptLine]:
    if page.page_kind in ("blank",):
        return []
    lines: list[ScriptLine] = []
    for number, region in enumerate(page.texts, start=1):
        text = re.sub(r"\s+", " ", region.text).strip()
        if not text or region.kind == "furniture":
            continue  # page numbers, credits, notices, watermarks: kept in the reading, never said
        if region.kind == "sound" and not config.read_sound_effects:
            continue
        if region.kind == "caption" and not config.read_captions:
            continue
        panel = region.panel if 0 <= region.panel < len(page.panels) else -1
        lines.append(
            ScriptLine(
                id=f"p{page.page + 1:03d}-t{number:02d}",
                page=page.page,
                panel=panel,
                speaker=speaker_for(region),
                kind=region.kind,
                text=text,
                emotion=emotion_for(region),
                pause_after_s=0.5 if region.kind == "caption" else 0.35,
            )
        )
    # Lines keep the reader's order within a panel; panels are visited in reading order, page-level lines first.
    return sorted(lines, key=lambda line: line.panel)


def write_script(reading: BookReading, config: VoiceConfig) -> Script:
    lang: Literal["en", "ja"] = reading.lang
    lines = [line for page in reading.pages for line in page_lines(page, config)]
    return Script(lang=lang, lines=lines)
