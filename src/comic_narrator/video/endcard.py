"""The end card: a few seconds after the last page with the book's title, who made it and its licence notes, drawn
with the shipped font on the letterbox colour and faded in; rendered once into a segment of its own (keyed by
what it shows) and joined after the pages.

Its lines come from ComicInfo.xml or the PDF's information (ingest/book_info.py), ``--credits``, and the credit,
web and licence lines the reader found on the pages (kind ``furniture``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np

from comic_narrator.artifacts import BookReading
from comic_narrator.config import RenderConfig
from comic_narrator.errors import InputError
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.encode import encode_segment
from comic_narrator.video.frames import Frame
from comic_narrator.video.segments import RENDERER_VERSION, SEGMENT_DIR
from comic_narrator.video.text import TextImage, blend_text, font, render_lines, wrap
from comic_narrator.workdir import text_sha256

SECONDS_PER_LINE = 0.6
"""Reading time per line on the card (at least MIN_S, at most MAX_S in all)."""
MIN_S = 4.0
MAX_S = 10.0
FADE_S = 0.5
"""The text fades in over this long and out over the last as long."""
TITLE_SIZE = 0.065
LINE_SIZE = 0.038
NOTE_SIZE = 0.03
"""Letter sizes as shares of the frame's short side."""
MAX_WIDTH = 0.84
"""Widest line, as a share of the frame width."""
PAGE_CREDIT_LINES = 6
"""At most this many lines are taken from the pages (a closing page of patron names gives hundreds)."""
MAX_PAGE_LINE_CHARS = 120


@dataclass(frozen=True)
class EndCard:
    """What the card shows: a title, credit lines, and notes in smaller type (licence, attribution)."""

    title: str | None
    lines: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.lines and not self.notes

    def duration_s(self) -> float:
        shown = len(self.lines) + len(self.notes) + (1 if self.title else 0)
        return min(MAX_S, max(MIN_S, SECONDS_PER_LINE * shown))

    def frames(self, fps: int) -> int:
        return round(self.duration_s() * fps)


def given_credit_lines(value: str) -> tuple[str, ...]:
    """``--credits``: the text of a file when ``value`` names one, else the text itself; a line each (``\\n``
    between lines in the text form), blank lines dropped."""
    path = Path(value)
    if "\n" not in value and path.suffix.lower() in (".txt", ".md") and not path.is_file():
        raise InputError("no such file (give the file's path, or the credit lines themselves)", path=path)
    try:
        text = path.read_text(encoding="utf-8") if value and path.is_file() else value.replace("\\n", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the file as UTF-8 text ({exc})", path=path) from exc
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def page_credit_lines(reading: BookReading) -> tuple[str, ...]:
    """The page furniture worth crediting: lines with letters, not page numbers, each once (a watermark on every
    page is one line), in page order, the first few."""
    lines: dict[str, str] = {}
    for page in reading.pages:
        for text in page.texts:
            line = " ".join(text.text.split())
            if text.kind != "furniture" or len(line) > MAX_PAGE_LINE_CHARS or len(re.findall(r"\w", line)) < 4:
                continue
            if re.fullmatch(r"[\W\d_]*(?:p|pg|page)?[\W\d_]*", line, re.IGNORECASE):
                continue
            lines.setdefault(line.casefold(), line)
    return tuple(lines.values())[:PAGE_CREDIT_LINES]


def end_card(
    title: str | None,
    credits: Sequence[tuple[str, str]],
    notes: str | None,
    given: Sequence[str],
    reading: BookReading,
) -> EndCard:
    """The card from the book's information (title, (label, name) credits, notes), the user's ``--credits``
    lines (shown first: the user knows best) and the pages' credit lines, each line once whatever its case;
    empty when none says anything."""
    lines: dict[str, str] = {}
    for line in (*given, *(f"{label}: {name}" for label, name in credits), *page_credit_lines(reading)):
        lines.setdefault(line.casefold(), line)  # each once, as it first came
    return EndCard(title, tuple(lines.values()), (notes,) if notes else ())


class _Layout:
    """The card's text blocks at sizes that fit the frame (shrunk together until they do)."""

    def __init__(self, card: EndCard, width_px: int, height_px: int) -> None:
        short = min(width_px, height_px)
        for scale in (1.0, 0.85, 0.7, 0.6, 0.5, 0.4):
            blocks: list[TextImage] = []
            for texts, share in (
                ((card.title,) if card.title else (), TITLE_SIZE),
                (card.lines, LINE_SIZE),
                (card.notes, NOTE_SIZE),
            ):
                if not texts:
                    continue
                size = max(10, round(short * share * scale))
                lines = [line for text in texts for line in wrap(text, font(size), width_px * MAX_WIDTH)]
                blocks.append(render_lines(lines, size, max(1, size // 14)))
            self.gap_px = round(short * 0.04 * scale)
            self.blocks = blocks
            if self.height_px <= height_px * 0.9:
                break

    @property
    def height_px(self) -> int:
        return sum(block.height_px for block in self.blocks) + self.gap_px * max(0, len(self.blocks) - 1)


def end_card_frames(card: EndCard, config: RenderConfig, fps: int) -> Iterator[Frame]:
    """The card's I420 frames: the letterbox colour, the text fading in and out."""
    width, height = config.width_px, config.height_px
    y_fill, cb_fill, cr_fill = ycbcr_of(config.background_rgb)
    background = np.empty((height * 3 // 2, width), dtype=np.uint8)
    background[:height], background[height : height + height // 4], background[height + height // 4 :] = (
        y_fill,
        cb_fill,
        cr_fill,
    )
    layout = _Layout(card, width, height)
    total = card.frames(fps)
    fade = max(1, round(FADE_S * fps))
    for number in range(total):
        opacity = min(1.0, (number + 1) / fade, (total - number) / fade)
        frame = background.copy()
        y = (height - layout.height_px) // 2
        for block in layout.blocks:
            blend_text(frame, width, height, block, (width - block.width_px) // 2, y, opacity)
            y += block.height_px + layout.gap_px
        yield frame


def end_card_file(card: EndCard, work_dir: Path, config: RenderConfig, fps: int) -> tuple[Path, int]:
    """The card encoded as a segment in the work folder (reused when one of the same key is there); returns its
    path and frames."""
    key = text_sha256(
        "end-card",
        str(RENDERER_VERSION),
        av.__version__,
        f"{config.width_px}x{config.height_px}@{fps}",
        json.dumps([card.title, card.lines, card.notes], ensure_ascii=False),
        json.dumps([config.crf, config.preset, config.x264_params, config.tune, config.background_rgb]),
    )
    path = work_dir / SEGMENT_DIR / f"end-card-{key[:20]}.mp4"
    frames = card.frames(fps)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        encode_segment(path, end_card_frames(card, config, fps), fps, config)
    return path, frames
