"""What the book's video carries besides its pages, gathered once the pages are done: the end card, the MP4's
metadata (title, artist, notes) and its chapter marks, from the input's own information (ingest/book_info.py),
the reading and the options."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from comic_narrator.config import RunConfig
from comic_narrator.errors import InputError
from comic_narrator.flow.stream import Streamed
from comic_narrator.ingest.book_info import BookInfo, read_book_info
from comic_narrator.timeline.chapters import ChapterMark, chapter_marks
from comic_narrator.video.endcard import EndCard, end_card

log = logging.getLogger("comic_narrator")


@dataclass(frozen=True)
class BookEnd:
    card: EndCard | None
    """None when there is nothing to credit, or with ``--no-end-card``."""
    card_frames: int
    metadata: dict[str, str]
    chapters: list[ChapterMark]

    def fingerprint(self) -> str:
        """What the MP4 holds of these, for the render's cache key."""
        card = [self.card.title, self.card.lines, self.card.notes] if self.card is not None else None
        marks = [[m.start_frame, m.end_frame, m.title] for m in self.chapters]
        return json.dumps([card, self.card_frames, self.metadata, marks], ensure_ascii=False, sort_keys=True)


def book_end(config: RunConfig, streamed: Streamed, fps: int) -> BookEnd:
    """The end card, metadata and chapter marks of a streamed book. A ComicInfo.xml that cannot be parsed is
    logged and left out: the pages are narrated by then, and what it would add is optional."""
    try:
        info = read_book_info(config.input_path)
    except InputError as exc:
        log.warning("the book's information is left out: %s", exc)
        info = BookInfo()
    render = config.render
    made = end_card(info.title, info.credits, info.notes, render.credits, streamed.reading)
    card = made if render.end_card and not made.empty else None
    card_frames = card.frames(fps) if card is not None else 0
    metadata = {"title": info.title or Path(config.input_path).stem}
    if info.artist:
        metadata["artist"] = info.artist
    if info.notes:
        metadata["comment"] = info.notes
    page_starts, frame = [], 0
    for work in streamed.pages:
        if work.timing is None:
            continue
        page_starts.append((work.image.source_page_number, frame))
        frame += sum(shot.frames for shot in work.timing.shots)
    wanted = (
        [(page, f"Chapter {number}") for number, page in enumerate(render.chapters, start=1)]
        if render.chapters
        else [(chapter.page, chapter.title) for chapter in info.chapters]
    )
    marks = chapter_marks(page_starts, wanted, frame + card_frames)
    return BookEnd(card, card_frames, metadata, marks)
