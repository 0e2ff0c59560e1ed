"""Text drawn into the picture with the font that ships with the project (assets/fonts, OFL): lines wrapped to
a width, rendered once into coverage masks (the glyphs and their dark outline), and blended into I420 frames.

A fresh machine has no system fonts, so nothing here asks the system for one; the font covers Latin, kana and
JIS level-1 and level-2 kanji (assets/fonts/NOTICE.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

from comic_narrator.video.color import CHROMA_ZERO, LUMA_BLACK, i420_planes
from comic_narrator.video.frames import Frame

FONT_FILE = Path(__file__).resolve().parents[1] / "assets" / "fonts" / "NarratorSansJP-Bold.ttf"
LUMA_WHITE = 235
"""BT.709 limited-range white: the text's fill."""
NO_LINE_START = set("、。，．・：；？！ー）」』】〕〉》’”…‥ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ,.;:!?)]}")
"""Characters a Japanese line does not start with (JIS X 4051 line-start prohibitions, the common ones)."""

Mask = npt.NDArray[np.uint8]


@lru_cache(maxsize=16)
def font(size_px: int) -> ImageFont.FreeTypeFont:
    """The shipped font at ``size_px`` pixels (loaded once per size per process)."""
    return ImageFont.truetype(str(FONT_FILE), size_px)


def _width(text: str, face: ImageFont.FreeTypeFont) -> float:
    return float(face.getlength(text))


def _wrap_words(words: list[str], face: ImageFont.FreeTypeFont, max_width_px: float) -> list[str]:
    lines: list[str] = []
    for word in words:
        if lines and _width(f"{lines[-1]} {word}", face) <= max_width_px:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _wrap_characters(text: str, face: ImageFont.FreeTypeFont, max_width_px: float) -> list[str]:
    """Japanese breaks between any two characters, except before closing marks and small kana."""
    lines = [""]
    for char in text:
        if lines[-1] and _width(lines[-1] + char, face) > max_width_px and char not in NO_LINE_START:
            lines.append(char)
        else:
            lines[-1] += char
    return lines


def _balanced(break_at: Callable[[float], list[str]], max_width_px: float) -> list[str]:
    """The fewest lines that fit ``max_width_px``, as even as they go: broken at the narrowest width that needs no
    more lines, so no last line is left with one word or one character."""
    lines = break_at(max_width_px)
    if len(lines) < 2:
        return lines
    low, high = 0.0, max_width_px
    for _ in range(12):
        middle = (low + high) / 2
        if len(break_at(middle)) <= len(lines):
            high = middle
        else:
            low = middle
    return break_at(high)


def wrap(text: str, face: ImageFont.FreeTypeFont, max_width_px: float) -> list[str]:
    """``text``'s lines (its own line breaks kept) broken to fit ``max_width_px`` into lines of even length: at
    spaces where a line has them, else between characters (Japanese has no spaces); a word too wide stays whole."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split()
        if not words:
            continue
        if len(words) > 1 or re.fullmatch(r"[\x00-\u024f]+", paragraph):
            out.extend(_balanced(partial(_wrap_words, words, face), max_width_px))
        else:
            out.extend(_balanced(partial(_wrap_characters, paragraph, face), max_width_px))
    return out


@dataclass(frozen=True)
class TextImage:
    """Lines of text as two coverage masks of one size: ``fill`` the glyphs, ``outline`` the glyphs grown by the
    outline width (drawn dark under the fill so the text reads on any picture)."""

    fill: Mask
    outline: Mask

    @property
    def width_px(self) -> int:
        return int(self.fill.shape[1])

    @property
    def height_px(self) -> int:
        return int(self.fill.shape[0])


def render_lines(lines: Sequence[str], size_px: int, outline_px: int, line_gap: float = 0.25) -> TextImage:
    """``lines`` centred under each other at ``size_px`` with an outline ``outline_px`` wide."""
    face = font(size_px)
    ascent, descent = face.getmetrics()
    step = round((ascent + descent) * (1 + line_gap))
    widths = [_width(line, face) for line in lines]
    width = int(max(widths, default=0)) + 2 * outline_px + 2
    height = max(1, step * (len(lines) - 1) + ascent + descent + 2 * outline_px)
    fill, outline = Image.new("L", (width, height)), Image.new("L", (width, height))
    for draw, stroke in ((ImageDraw.Draw(fill), 0), (ImageDraw.Draw(outline), outline_px)):
        for number, (line, line_width) in enumerate(zip(lines, widths, strict=True)):
            origin = ((width - line_width) / 2, outline_px + number * step)
            draw.text(origin, line, font=face, fill=255, stroke_width=stroke, stroke_fill=255)
    return TextImage(np.asarray(fill, dtype=np.uint8), np.asarray(outline, dtype=np.uint8))


def mix_toward(plane: npt.NDArray[np.uint8], alpha: Mask, value: int) -> None:
    """``plane`` moved toward ``value`` by ``alpha`` / 255, in place: plane x (255 - alpha) / 255 + value x alpha
    / 255, each term rounded by OpenCV's saturating arithmetic (within one level of the exact blend, at a quarter
    of numpy's cost)."""
    kept = cv2.multiply(plane, cv2.bitwise_not(alpha), scale=1 / 255)
    plane[...] = cv2.add(kept, cv2.convertScaleAbs(alpha, alpha=value / 255))


def _clipped(mask: Mask, x: int, y: int, width: int, height: int) -> tuple[Mask, tuple[slice, slice]] | None:
    """The part of ``mask`` placed at (x, y) that falls inside a width x height plane, and where it falls."""
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(width, x + mask.shape[1]), min(height, y + mask.shape[0])
    if x1 <= x0 or y1 <= y0:
        return None
    return mask[y0 - y : y1 - y, x0 - x : x1 - x], (slice(y0, y1), slice(x0, x1))


def blend_text(
    frame: Frame, width_px: int, height_px: int, text: TextImage, x: int, y: int, opacity: float = 1.0
) -> None:
    """Draw ``text`` with its top-left corner at (x, y) into the I420 ``frame``, in place: the outline dark and
    colourless, the glyphs white; ``opacity`` fades both (0 draws nothing)."""
    if opacity <= 0.0:
        return
    luma, cb, cr = i420_planes(frame, width_px, height_px)
    fill, outline = text.fill, text.outline
    if opacity < 1.0:
        fill = (fill.astype(np.float32) * opacity).astype(np.uint8)
        outline = (outline.astype(np.float32) * opacity).astype(np.uint8)
    for mask, value in ((outline, LUMA_BLACK), (fill, LUMA_WHITE)):
        placed = _clipped(mask, x, y, width_px, height_px)
        if placed is not None:
            mix_toward(luma[placed[1]], placed[0], value)
    # Chroma at half size: the outline's coverage of each 2x2 block takes the colour out (white and black alike).
    x2, y2 = x // 2, y // 2
    pad = np.zeros((outline.shape[0] + (y & 1) + 1, outline.shape[1] + (x & 1) + 1), dtype=np.uint8)
    pad[y & 1 : (y & 1) + outline.shape[0], x & 1 : (x & 1) + outline.shape[1]] = outline
    half = (pad.shape[1] // 2, pad.shape[0] // 2)
    even = pad[: half[1] * 2, : half[0] * 2]
    chroma_mask = np.asarray(cv2.resize(even, half, interpolation=cv2.INTER_AREA), dtype=np.uint8)
    for plane in (cb, cr):
        placed = _clipped(chroma_mask, x2, y2, plane.shape[1], plane.shape[0])
        if placed is not None:
            mix_toward(plane[placed[1]], placed[0], CHROMA_ZERO)
