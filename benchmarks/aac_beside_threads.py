"""What a busy Python thread does to the book's AAC encode: wall seconds to encode a run's audio.wav (true-peak
check included) in this process (`encode_aac`) and in a process of its own (`encode_aac_aside`, what a run does),
alone and beside a thread that keeps the interpreter busy, as the run's own threads do at times.

    python benchmarks/aac_beside_threads.py WORK_DIR/audio.wav

PyAV lets go of the GIL for each codec call and must take it back after each; beside a busy thread every such
return waits out the interpreter's switch interval (5 ms), thousands of times a minute of sound.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from comic_narrator.video.mux import encode_aac, encode_aac_aside


def _timed(encode: Callable[..., None], track: np.ndarray, rate: int, busy: bool) -> float:
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    spinner = threading.Thread(target=spin, daemon=True)
    if busy:
        spinner.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            pieces = [track[i : i + rate * 7] for i in range(0, len(track), rate * 7)]
            started = time.perf_counter()
            encode(Path(folder) / "audio.m4a", iter(pieces), rate)
            return time.perf_counter() - started
    finally:
        stop.set()
        if busy:
            spinner.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wav", type=Path)
    args = parser.parse_args()
    track, rate = sf.read(str(args.wav), dtype="float32")
    print(f"{len(track) / rate:.1f} s of sound")
    print("encode            alone s   beside a busy thread s")
    for name, encode in (("in this process", encode_aac), ("aside (the run)", encode_aac_aside)):
        print(f"{name:16} {_timed(encode, track, rate, False):8.2f} {_timed(encode, track, rate, True):14.2f}")


if __name__ == "__main__":
    main()
