"""What the sound costs: CPU milliseconds per second of audio to synthesise each ambience, to master a finished
run's book (voices, bed, limiter, loudness passes) with and without the bed and the music, and to encode the AAC
with its true-peak check; and the decoded file's loudness and true peak.

    python benchmarks/sound_bed.py WORK_DIR [--repeat 3]

WORK_DIR is the work folder of a finished run (e.g. `comic-narrator book/ -o book.mp4` leaves book.mp4.work); its
reading, timeline and clips are mastered again in this process. Figures are the best of --repeat runs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import pyloudnorm
from scipy.signal import resample_poly

from comic_narrator.artifacts import Book, BookReading, ClipList, Timing
from comic_narrator.audio.ambience import AMBIENCES, synthesise_ambience
from comic_narrator.audio.mix import PageSound, block_powers, master_pages, mix_voices
from comic_narrator.config import AudioConfig
from comic_narrator.video.mux import encode_aac


def best_of(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work_dir", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work: Path = args.work_dir
    rate = 48_000
    print("ambience   ms CPU per audio s (60 s synthesised)")
    for kind in AMBIENCES:
        seconds = best_of(args.repeat, lambda k=kind: synthesise_ambience(k, 60 * rate, rate, np.random.default_rng(1)))
        print(f"{kind:<10} {seconds / 60 * 1000:6.1f}")

    reading = BookReading.model_validate_json((work / "reading.json").read_text())
    timing = Timing.model_validate_json((work / "timing.json").read_text())
    clips = ClipList.model_validate_json((work / "clips.json").read_text()).clips
    book = Book.model_validate_json((work / "book.json").read_text())
    image = work / book.pages[0].image_file if len(book.pages) == 1 else None
    voices = mix_voices(work, timing, clips)
    sound = PageSound(timing, clips, reading, block_powers(voices, rate), image)
    duration_s = len(voices) / rate
    print(f"\nmastering {duration_s:.1f} s of audio (the whole book as one piece)   ms CPU per audio s")
    pieces: list[np.ndarray] = []
    for name, config in (
        ("voices only", AudioConfig(sound_bed=False)),
        ("voices + bed", AudioConfig()),
        ("voices + bed + music", AudioConfig(music=True)),
    ):

        def master(config: AudioConfig = config) -> None:
            pieces[:] = list(master_pages(work, [sound], config))

        print(f"{name:<22} {best_of(args.repeat, master) / duration_s * 1000:6.1f}")
    with tempfile.TemporaryDirectory() as folder:
        m4a = Path(folder) / "audio.m4a"
        pieces[:] = list(master_pages(work, [sound], AudioConfig()))
        seconds = best_of(args.repeat, lambda: encode_aac(m4a, pieces, rate))
        print(f"{'AAC + true-peak check':<22} {seconds / duration_s * 1000:6.1f}")
        with av.open(str(m4a)) as container:
            decoded = np.concatenate([f.to_ndarray() for f in container.decode(audio=0)], axis=1).astype(np.float64)
    loudness = pyloudnorm.Meter(rate).integrated_loudness(decoded.T)
    peak = max(np.abs(resample_poly(channel, 4, 1)).max() for channel in decoded)
    print(f"\ndecoded: {loudness:.2f} LUFS integrated (stereo), {20 * np.log10(peak):.2f} dBTP true peak")


if __name__ == "__main__":
    main()
