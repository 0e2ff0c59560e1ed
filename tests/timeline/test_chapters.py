"""Chapter starts given as input pages laid on the video's frames, and the --chapters list checked."""

from __future__ import annotations

import pytest

from comic_narrator.errors import InputError
from comic_narrator.timeline.chapters import ChapterMark, chapter_marks, parse_chapter_pages


def test_chapters_start_on_their_pages_first_frames_and_cover_the_video() -> None:
    starts = [(1, 0), (2, 100), (3, 250), (4, 400)]
    marks = chapter_marks(starts, [(1, "One"), (3, "Two")], 500)
    assert marks == [ChapterMark(0, 250, "One"), ChapterMark(250, 500, "Two")]
    assert marks[1].start_s(25) == 10.0


def test_a_chapter_whose_page_was_left_out_starts_at_the_next_page_and_frames_before_the_first_are_its() -> None:
    starts = [(3, 0), (5, 120), (6, 200)]  # --pages 3,5-6
    marks = chapter_marks(starts, [(2, "A"), (4, "B"), (5, "C"), (9, "D")], 300)
    assert marks == [ChapterMark(0, 120, "A"), ChapterMark(120, 300, "B")], "C lands with B; D is past the end"
    assert chapter_marks(starts, [(5, "Late")], 300) == [ChapterMark(0, 300, "Late")]
    assert chapter_marks(starts, [], 300) == []


def test_chapter_pages_are_parsed_and_bad_lists_named() -> None:
    assert parse_chapter_pages("1, 13,25") == (1, 13, 25)
    assert parse_chapter_pages("1,,13,") == (1, 13), "empty items (a doubled or trailing comma) are skipped"
    for bad in ("0", "1,x", "5,3", "2,2", ","):
        with pytest.raises(InputError, match="--chapters"):
            parse_chapter_pages(bad)
