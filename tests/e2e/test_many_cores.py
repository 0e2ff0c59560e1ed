"""A whole run as on a machine of many cores: every pool sized from the core count (the ingest's threads and its
window, the voice jobs, the OCR's threads, the master's threads, the render workers) at the sizes a 12-core host
gets, on a 12-page book. Every other test runs with this machine's cores; a book of more than about ten pages
once hung after page 1 on a 16-core host, where the ingest's threads outnumbered its window (with that ingest this
test times out: a run of these twelve pages takes about 20 s on 2 cores)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import av

from tests.conftest import REPO

CORES = 12
PATCH = (
    "import os, sys; "
    f"os.cpu_count = lambda: {CORES}; "
    f"os.sched_getaffinity = lambda pid: set(range({CORES})); "
    "from comic_narrator.cli import main; sys.exit(main())"
)


def _book(folder: Path) -> Path:
    """The bundled manga's four pages, three times over: twelve pages."""
    folder.mkdir()
    with zipfile.ZipFile(REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz") as archive:
        pages = sorted(n for n in archive.namelist() if n.endswith(".jpg"))
        for copy in range(3):
            for number, name in enumerate(pages):
                (folder / f"p{copy * 4 + number + 1:02d}.jpg").write_bytes(archive.read(name))
    return folder


def _seconds(path: Path) -> float:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.duration is not None and stream.time_base is not None
        return float(stream.duration * stream.time_base)


def test_a_twelve_page_book_runs_to_the_end_with_every_pool_sized_for_twelve_cores(tmp_path: Path) -> None:
    book = _book(tmp_path / "book")
    out = tmp_path / "book.mp4"
    args = [str(book), "--layout", "manga", "--draft", "--voice-quality", "fast", "-q", "-o", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", PATCH, *args], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = (tmp_path / "book.mp4.work" / "comic-narrator.log").read_text(encoding="utf-8")
    assert "page 12: read locally" in log
    assert _seconds(out) > 150, "twelve narrated pages (about 20 s each)"
