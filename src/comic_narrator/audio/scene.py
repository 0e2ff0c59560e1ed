"""Which ambience a page gets: the reading's scene cues when it has them, else what its lettering and colours
tell, else a neutral bed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import PageReading, SceneCue
from comic_narrator.audio.ambience import Ambience

_PATTERNS: dict[SceneCue, str] = {
    "wind": r"\bwind|breez|gust|storm|tempest|blizzard|turbulen|\bbr+r+|\bw?h?o{3,}"
    r"|ヒュー|ビュー|ゴォ|ゴゴ|びゅ|強風|突風|風が|風の音|嵐",
    "rain": r"\brain|drizzl|downpour|pitter|patter|\bdrip|plip|plop|splish|ザー|ざー|ポツ|ぽつ|シトシト|雨(?!戸)",
    "sea": r"\bsea\b|ocean|\bwaves?\b|shore|beach|\bsurf\b|harbou?r|\bship|\bboat|splash"
    r"|ザブ|ざぶ|ザザーン|海(?!外)|浜辺|(?<!電)波",
    "city": r"\bcity|street|traffic|\btown\b|downtown|\bcars?\b|honk|\bbeep|vroom|taxi|\bbus\b|ブロロ|街|都会|大通り",
    "forest": r"forest|\bwoods\b|woodland|jungle|\btrees?\b|leaves|tweet|chirp|\bbirds?\b|rustl"
    r"|チュン|ピヨ|森の|森林|ジャングル|木々",
    "crowd": r"crowd|market|festival|\bparty\b|cheer|applause|audience|tavern|chatter"
    r"|ワイワイ|ざわ|ガヤ|群衆|人混み|祭り",
    "fire": r"\bfire|flame|\bburn|blaze|campfire|torch|crackl|fwoosh|メラ|パチパチ|火事|炎|焚き火|たき火",
    "night": r"\bnight|midnight|\bmoon|\bstars\b|cricket|\bowl\b|\bhoot|リーン|夜|満月|月明かり|星空",
    "interior": r"\broom\b|\bhouse\b|\bhome\b|inside|kitchen|\bhall\b|castle|office|library|\bshop\b"
    r"|indoors|部屋|室内|屋内|家の中|病室|教室",
}
WORDS = {cue: re.compile(pattern, re.IGNORECASE) for cue, pattern in _PATTERNS.items()}
"""Words that place a page, in English and Japanese: said, captioned or lettered as sound. Japanese needs words,
not single kanji: 月 is also a month (3カ月), 家 a nation (国家), 火 Tuesday, 林 and 森 surnames."""
assert set(WORDS) == set(get_args(SceneCue))

KIND_WEIGHT = {"sound": 2.0, "caption": 1.5, "speech": 1.0, "shout": 1.0}
"""How much one text counts towards a setting: a lettered sound is the page's sound; a caption often says where
we are; a character may speak of a place that is elsewhere."""
CHOSEN_AT = 1.0
"""The score a setting needs (one line mentioning it, or clear colours); below it the page gets the neutral bed."""
LAYER_AT = 1.5
"""A second setting is layered beneath only when the page tells of it more than once in passing (a character
speaking of the moon does not bring crickets into a storm)."""
ANALYSIS_SIDE_PX = 200
"""Colours are measured on the page shrunk to this long side: enough for proportions, a few milliseconds."""


@dataclass(frozen=True)
class SceneChoice:
    """A page's ambience, a second one layered more quietly beneath when the page also clearly tells of it, and
    why (for the log and the tests)."""

    ambience: Ambience
    layer: SceneCue | None
    reason: str


@dataclass(frozen=True)
class PageColours:
    """Proportions of a page's pixels (0..1) that place it."""

    dark: float
    """below a quarter of full brightness"""
    green: float
    """saturated greens: foliage"""
    blue: float
    """saturated blues: water or sky"""
    warm: float
    """bright saturated reds and oranges: flame"""


def page_colours(image_file: Path) -> PageColours | None:
    """The page's colour proportions, or None when its image cannot be read."""
    image = cv2.imread(str(image_file), cv2.IMREAD_COLOR)
    if image is None:
        return None
    scale = ANALYSIS_SIDE_PX / max(image.shape[:2])
    if scale < 1:
        size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    hsv: npt.NDArray[np.float64] = cv2.cvtColor(image, cv2.COLOR_BGR2HSV).reshape(-1, 3).astype(np.float64)
    hue, saturation, value = hsv[:, 0] * 2, hsv[:, 1] / 255, hsv[:, 2] / 255  # hue in degrees
    coloured = (saturation > 0.3) & (value > 0.25)
    return PageColours(
        dark=float((value < 0.25).mean()),
        green=float((coloured & (hue >= 70) & (hue <= 170)).mean()),
        blue=float((coloured & (hue >= 190) & (hue <= 260)).mean()),
        warm=float(((saturation > 0.5) & (value > 0.5) & ((hue < 40) | (hue > 340))).mean()),
    )


def _colour_scores(colours: PageColours) -> dict[SceneCue, float]:
    """Measured on Pepper&Carrot ep. 17: its two jungle pages are 22 % and 31 % foliage green, its two others none;
    blue is often sky and red often clothes, so they count for less than green and darkness."""
    return {
        "forest": min(1.5, colours.green / 0.2),
        "night": min(1.5, colours.dark / 0.5),
        "sea": min(1.2, 0.8 * colours.blue / 0.3),
        "fire": min(1.2, 0.8 * colours.warm / 0.3),
    }


def choose_scene(page: PageReading, colours: PageColours | None) -> SceneChoice:
    """The reading's scene cues first (the first one, and the second beneath it); else the best-scoring setting
    from the page's words and colours when it reaches :data:`CHOSEN_AT`; else neutral."""
    if page.scene:
        layer = next((cue for cue in page.scene[1:] if cue != page.scene[0]), None)
        return SceneChoice(page.scene[0], layer, "the reading's scene cues")
    scores: dict[SceneCue, float] = dict.fromkeys(WORDS, 0.0)
    evidence: dict[SceneCue, list[str]] = {cue: [] for cue in WORDS}
    for text in page.texts:
        weight = KIND_WEIGHT.get(text.kind, 0.0)
        for cue, pattern in WORDS.items():
            if weight and (found := pattern.search(text.text)):
                scores[cue] += weight
                evidence[cue].append(f"{text.kind} '{found.group(0)}'")
    if colours is not None:
        for cue, score in _colour_scores(colours).items():
            scores[cue] += score
            if score >= 0.5:
                evidence[cue].append(f"colours {score:.1f}")
    ranked = sorted((cue for cue in scores if scores[cue] >= CHOSEN_AT), key=lambda cue: -scores[cue])
    if not ranked:
        return SceneChoice("neutral", None, "nothing on the page tells where it is")
    layer = ranked[1] if len(ranked) > 1 and scores[ranked[1]] >= LAYER_AT else None
    return SceneChoice(ranked[0], layer, f"{', '.join(evidence[ranked[0]])} ({scores[ranked[0]]:.1f})")
