"""What each render setting costs: CPU per frame (warp + dimming apart from encoding), CPU seconds per second of
video, size, and luma PSNR of the encoded frames against the rendered ones, on one core.

    python benchmarks/render_settings.py WORK_DIR [--seconds 20] [--repeat 3] [--variant NAME ...]

WORK_DIR is the work folder of a finished run (e.g. `comic-narrator book/ -o book.mp4` leaves book.mp4.work); its
reading, script and clips are re-timed at each variant's frame rate and the first --seconds of video rendered
in this process (no cache, no parallelism), so the figures are per core.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import av
import cv2
import numpy as np

from comic_narrator.artifacts import Book, BookReading, CameraPlan, ClipList, Script
from comic_narrator.config import AudioConfig, RenderConfig
from comic_narrator.timeline.timing import build_timing
from comic_narrator.video.camera import plan_camera
from comic_narrator.video.encode import encode_segment
from comic_narrator.video.frames import Frame, PagePyramid
from comic_narrator.video.segments import iter_segment_frames, plan_segments
from comic_narrator.workdir import read_artifact

DEFAULT = RenderConfig()
VARIANTS: dict[str, RenderConfig] = {
    "default": DEFAULT,
    "30fps": replace(DEFAULT, fps=30),
    "veryfast-plain": replace(DEFAULT, x264_params="", tune=""),
    "superfast": replace(DEFAULT, preset="superfast", x264_params="", tune=""),
    "ultrafast": replace(DEFAULT, preset="ultrafast", x264_params="", tune=""),
    "no-tune": replace(DEFAULT, tune=""),
    "tune-stillimage": replace(DEFAULT, tune="stillimage"),
    "with-partitions": replace(DEFAULT, x264_params=DEFAULT.x264_params.replace(":partitions=none", "")),
    "crf23": replace(DEFAULT, crf=23),
    "held-camera": DEFAULT,
    "no-mbtree": replace(DEFAULT, x264_params=DEFAULT.x264_params + ":mbtree=0:rc-lookahead=0"),
    "no-aq": replace(DEFAULT, x264_params=DEFAULT.x264_params + ":aq-mode=0"),
}
HELD = {"held-camera"}
"""Variants whose panel shots hold still (rect_to = rect_from; glides between panels kept): what a camera hold
costs the encoder. The camera itself always moves; this only prices the alternative."""
PSNR_EVERY = 10


def _plan(work: Path, config: RenderConfig, held: bool) -> CameraPlan:
    reading = read_artifact(work / "reading.json", BookReading)
    script = read_artifact(work / "script.json", Script)
    clips = read_artifact(work / "clips.json", ClipList).clips
    plan = plan_camera(reading, build_timing(reading, script, clips, AudioConfig(), config.fps), config)
    if held:
        plan = plan.model_copy(update={"shots": [s.model_copy(update={"rect_to": s.rect_from}) for s in plan.shots]})
    return plan


def _measure(
    work: Path, book: Book, config: RenderConfig, seconds: float, scratch: Path, held: bool
) -> dict[str, float]:
    plan = _plan(work, config, held)
    segments = plan_segments(plan, {page.index: page.sha256 for page in book.pages}, config)
    frames_s = encode_plus_frames_s = 0.0
    frames = size_bytes = 0
    squared_error, compared = 0.0, 0
    for number, segment in enumerate(segments):
        if frames >= seconds * plan.fps:
            break
        pyramid = PagePyramid.load(work / book.pages[segment.page].image_file)
        kept: list[np.ndarray] = []

        def timed(source: Iterator[Frame]) -> Iterator[Frame]:
            nonlocal frames_s
            while True:
                started = time.process_time()
                frame = next(source, None)
                frames_s += time.process_time() - started
                if frame is None:
                    return
                yield frame

        def sampled(source: Iterator[Frame], keep: list[np.ndarray] = kept) -> Iterator[Frame]:
            for index, frame in enumerate(source):
                if index % PSNR_EVERY == 0:
                    keep.append(frame[: plan.height_px].astype(np.float64))
                yield frame

        out = scratch / f"{number}.mp4"
        started = time.process_time()
        frames += encode_segment(out, sampled(timed(iter_segment_frames(segment, pyramid, config))), plan.fps, config)
        encode_plus_frames_s += time.process_time() - started
        size_bytes += out.stat().st_size
        with av.open(str(out)) as container:
            decoded = [f for i, f in enumerate(container.decode(video=0)) if i % PSNR_EVERY == 0]
        for reference, frame in zip(kept, decoded, strict=True):
            luma = frame.to_ndarray(format="yuv420p")[: plan.height_px].astype(np.float64)
            squared_error += float(((luma - reference) ** 2).mean())
            compared += 1
    video_s = frames / plan.fps
    return {
        "frames": frames,
        "frame_ms": 1000 * frames_s / frames,
        "encode_ms": 1000 * (encode_plus_frames_s - frames_s) / frames,
        "cpu_per_video_s": encode_plus_frames_s / video_s,
        "mb_per_min": size_bytes / video_s * 60 / 1e6,
        "psnr_db": 10 * np.log10(255**2 / (squared_error / compared)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work", type=Path, help="work folder of a finished run")
    parser.add_argument("--seconds", type=float, default=20.0, help="video seconds rendered per variant")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="default: all")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each variant; the median is printed")
    args = parser.parse_args()
    cv2.setNumThreads(1)  # per core, as each render process runs
    book = read_artifact(args.work / "book.json", Book)
    names = args.variant or list(VARIANTS)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for _ in range(args.repeat):  # interleaved, so a busy spell on a shared machine hits every variant alike
        for name in names:
            with tempfile.TemporaryDirectory() as scratch:
                rows[name].append(_measure(args.work, book, VARIANTS[name], args.seconds, Path(scratch), name in HELD))
    print(f"median of {args.repeat} run(s) each, CPU on one core")
    print(
        f"{'variant':<16} {'frames':>6} {'warp+dim':>9} {'encode':>8} {'CPU s/video s':>14} {'MB/min':>7} {'Y PSNR':>7}"
    )
    for name in names:
        row = {key: statistics.median(r[key] for r in rows[name]) for key in rows[name][0]}
        print(
            f"{name:<16} {row['frames']:>6.0f} {row['frame_ms']:>7.1f}ms {row['encode_ms']:>6.1f}ms "
            f"{row['cpu_per_video_s']:>14.2f} {row['mb_per_min']:>7.1f} {row['psnr_db']:>6.2f}dB",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
