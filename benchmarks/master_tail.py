"""What the book's audio master costs after the last page is voiced: wall seconds to master a finished run's book
page by page (voices and bed mixed, the loudness passes through the limiter, the last pass) and to encode it as
AAC with the true-peak check, on one thread and on the master's threads; and the same book streamed.

    python benchmarks/master_tail.py WORK_DIR [--repeat 2]

WORK_DIR is the work folder of a finished run; its timeline is cut back into pages (as the run streamed them) and
mastered again in this process, as `pipeline._finish_book` does after the last page (a run over an existing
output), and as a first run does while the pages stream (flow/book_audio.py). Figures are wall seconds, the best
of --repeat.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Iterator
from itertools import chain, groupby
from pathlib import Path

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import Book, BookReading, ClipList, Timing
from comic_narrator.audio import mix
from comic_narrator.audio.mix import DUAL_MONO_LU, PageSound, StreamingMaster, block_powers, master_pages, mix_voices
from comic_narrator.config import AudioConfig
from comic_narrator.flow.stream import replace_shot
from comic_narrator.video.mux import encode_aac


def page_sounds(work: Path) -> list[PageSound]:
    """The book's timeline cut back into its pages, each starting at 0 s, with its clips and reading."""
    reading = BookReading.model_validate_json((work / "reading.json").read_text())
    timing = Timing.model_validate_json((work / "timing.json").read_text())
    clips = ClipList.model_validate_json((work / "clips.json").read_text()).clips
    book = Book.model_validate_json((work / "book.json").read_text())
    images = {page.index: work / page.image_file for page in book.pages}
    by_id = {clip.line_id: clip for clip in clips}
    sounds = []
    for number, shots in groupby(timing.shots, key=lambda shot: shot.page):
        own = list(shots)
        offset = own[0].start_s
        page_timing = Timing(
            fps=timing.fps,
            sample_rate_hz=timing.sample_rate_hz,
            shots=[replace_shot(shot, -offset) for shot in own],
            duration_s=sum(shot.frames for shot in own) / timing.fps,
        )
        page_clips = [by_id[line] for shot in own for line in shot.line_ids if line in by_id]
        page_reading = BookReading(source="", lang=reading.lang, pages=[p for p in reading.pages if p.page == number])
        voices = mix_voices(work, page_timing, page_clips)
        sounds.append(
            PageSound(
                page_timing,
                page_clips,
                page_reading,
                block_powers(voices, timing.sample_rate_hz),
                images.get(number),
            )
        )
    return sounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work_dir", type=Path)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    work: Path = args.work_dir
    sounds = page_sounds(work)
    seconds = sum(sum(shot.frames for shot in s.timing.shots) for s in sounds) / sounds[0].timing.fps
    print(f"{len(sounds)} pages, {seconds:.1f} s of audio")
    print(f"{'threads':>7} {'total s':>8} {'passes':>8} {'+ AAC':>8}")
    threads_default = mix.MASTER_THREADS
    for threads in sorted({1, threads_default}):
        mix.MASTER_THREADS = threads
        print(f"{threads:>7} " + " ".join(f"{x:>8.2f}" for x in best_of(args.repeat, lambda: exact(work, sounds))))
    mix.MASTER_THREADS = threads_default
    # Streamed (what a first run does): pages mastered as they come and encoded as they are mastered. Here they
    # come at once; the tail is what is left from the last page handed over to the file's end.
    print(f"\n{'streamed':>8} {'all s':>9} {'tail s':>8} {'LUFS':>8}")
    print(f"{'':>8} " + " ".join(f"{x:>8.2f}" for x in best_of(args.repeat, lambda: streamed(work, sounds))))


def best_of(repeat: int, run: Callable[[], tuple[float, ...]]) -> tuple[float, ...]:
    return min((run() for _ in range(repeat)), key=lambda figures: figures[0])


def exact(work: Path, sounds: list[PageSound]) -> tuple[float, float, float]:
    """(passes, AAC, total) seconds: the master's first piece comes after both loudness passes."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        stream = master_pages(work, sounds, AudioConfig())
        first = next(stream)
        passes = time.perf_counter() - start
        encode_aac(Path(folder) / "audio.m4a", chain([first], stream), sounds[0].timing.sample_rate_hz)
        total = time.perf_counter() - start
    return total, passes, total - passes


def streamed(work: Path, sounds: list[PageSound]) -> tuple[float, float, float]:
    """(all, tail, LUFS): wall seconds for the whole, and from the last page handed over to the file's end."""
    master = StreamingMaster(work, AudioConfig())
    handed: list[float] = []

    def pieces() -> Iterator[npt.NDArray[np.float32]]:
        for sound in sounds:
            yield from master.add(sound)
        handed.append(time.perf_counter())
        yield from master.finish()

    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        encode_aac(Path(folder) / "audio.m4a", pieces(), sounds[0].timing.sample_rate_hz)
        end = time.perf_counter()
    return end - start, end - handed[0], master.loudness + DUAL_MONO_LU


if __name__ == "__main__":
    main()
