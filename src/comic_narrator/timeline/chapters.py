"""Chapters on the timeline: chapter starts given as input page numbers (``--chapters 1,13,25``, ComicInfo.xml
bookmarks, a PDF's outline) laid on the video's frames, for the MP4's chapter markers and ``--split-chapters``.

A chapter starts on the first frame of its page; a chapter whose page is not in the video (left out by
``--pages``) starts at the next page that is, and two chapters that land on the same page keep the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from comic_narrator.errors import InputError


@dataclass(frozen=True)
class ChapterMark:
    """A chapter of the video: frames ``start_frame`` up to (not including) ``end_frame``."""

    start_frame: int
    end_frame: int
    title: str

    def start_s(self, fps: int) -> float:
        return self.start_frame / fps

    def end_s(self, fps: int) -> float:
        return self.end_frame / fps


def parse_chapter_pages(spec: str) -> tuple[int, ...]:
    """``1,13,25`` -> (1, 13, 25): 1-based input page numbers, each a chapter's first page, increasing."""
    pages = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        if not item.isdigit() or int(item) < 1:
            raise InputError(f"--chapters: {item!r} is not a page number (1-based, e.g. '1,13,25')")
        pages.append(int(item))
    if not pages:
        raise InputError("--chapters: no page numbers given (e.g. '1,13,25')")
    if sorted(set(pages)) != pages:
        raise InputError(f"--chapters: pages must increase, each once ({spec!r})")
    return tuple(pages)


def chapter_marks(
    page_starts: Sequence[tuple[int, int]], chapters: Sequence[tuple[int, str]], total_frames: int
) -> list[ChapterMark]:
    """``page_starts``: (input page number, first frame) of each page of the video in order; ``chapters``:
    (first input page, title). Frames before the first chapter belong to it, so the marks cover the video."""
    marks: list[tuple[int, str]] = []
    for page, title in sorted(chapters):
        start = next((frame for number, frame in page_starts if number >= page), None)
        if start is None or (marks and marks[-1][0] == start):
            continue
        marks.append((start, title))
    if not marks:
        return []
    marks[0] = (0, marks[0][1])
    ends = [start for start, _ in marks[1:]] + [total_frames]
    return [ChapterMark(start, end, title) for (start, title), end in zip(marks, ends, strict=True) if end > start]
