"""``--read-along DIR`` on the main command and ``comic-narrator export WORK DIR``: the read-along folder (pages,
narration, guided navigation and its player) made from a run's work folder."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path


def add_read_along_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--read-along",
        type=Path,
        metavar="DIR",
        help="also write a read-along folder: the pages, the narration, a guided-navigation JSON and a player "
        "that highlights each balloon as it is spoken (open DIR/index.html, or serve DIR from any web server)",
    )


def write_read_along(work_dir: Path, folder: Path) -> None:
    from comic_narrator.web.readalong import export_read_along

    made = export_read_along(work_dir, folder)
    print(
        f"read-along: {made.folder / 'index.html'} ({made.pages} page(s), {made.lines} line(s), "
        f"{made.duration_s:.1f} s of narration)"
    )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="comic-narrator export",
        description="Write the read-along folder of a narrated book from its work folder (OUTPUT.work/).",
    )
    parser.add_argument("work_dir", type=Path, metavar="WORK", help="the work folder of a finished run")
    parser.add_argument("folder", type=Path, metavar="DIR", help="the folder to write (created if missing)")
    args = parser.parse_args(list(argv))
    write_read_along(args.work_dir, args.folder)
    return 0
