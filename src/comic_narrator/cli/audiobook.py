"""``--audiobook`` on the main command: ``OUT.m4b`` beside the video, its narration with chapter marks."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_audiobook_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--audiobook",
        action="store_true",
        help="also write OUT.m4b: the narration without the picture (the video's AAC, not encoded again), with "
        "the book's chapters, or one chapter per page when it has none",
    )


def write_audiobook(video: Path, work_dir: Path) -> None:
    from comic_narrator.publish.audiobook import write_audiobook as write

    made = write(video, work_dir, video.with_suffix(".m4b"))
    print(f"audiobook: {made.path} ({made.duration_s:.1f} s, {len(made.chapters)} chapter(s))")
