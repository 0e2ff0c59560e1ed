"""Per-stage seconds for the bundled sample (or any input) and wall time divided by the video's duration.

    python benchmarks/pipeline_stages.py [INPUT] [--repeat N] [--warm] [--voice-quality fast|natural]
                                         [--fps 24|25|30|60] [--preset NAME]
                                         [--aspect wide|vertical|square] [--draft]

Each run is cold: a new work folder, nothing cached. --repeat runs it N times and prints the best and the median
(the machine may be shared: the best is the least disturbed run). --warm also times a second run over the same
work folder to show what the stage cache saves. CPU is this process plus its render processes.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from comic_narrator.config import ASPECT_SIZE_PX, RenderConfig, RunConfig, VoiceConfig
from comic_narrator.pipeline import run
from comic_narrator.progress import Progress

REPO = Path(__file__).resolve().parents[1]


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed_run(config: RunConfig, label: str) -> dict[str, float]:
    started_s, cpu_before_s = time.perf_counter(), _cpu_s()
    result = run(config, Progress(quiet=True))
    wall_s, cpu_s = time.perf_counter() - started_s, _cpu_s() - cpu_before_s
    row = {**result.stage_seconds, "wall": wall_s, "cpu": cpu_s, "video": result.duration_s}
    stages = "  ".join(f"{name} {seconds:.2f}" for name, seconds in result.stage_seconds.items())
    busy = sum(seconds for name, seconds in result.stage_seconds.items() if name.endswith(" busy"))
    if result.stage_seconds.get("stream"):
        # Above 1: page work overlapped (reading, voicing and rendering were busy at once).
        stages += f" | overlap {busy / result.stage_seconds['stream']:.2f}"
    size_mb = config.output_path.stat().st_size / 1e6
    print(
        f"{label}: video {result.duration_s:.2f} s | {stages} | wall {wall_s:.2f} s, CPU {cpu_s:.1f} s, "
        f"wall / video {wall_s / result.duration_s:.2f} | {size_mb:.2f} MB",
        flush=True,
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", type=Path, default=REPO / "samples" / "peppercarrot-ep17-page2.jpg")
    parser.add_argument("--repeat", type=int, default=1, help="cold runs, each in a new work folder")
    parser.add_argument("--warm", action="store_true", help="also time a second run over the same work folder")
    parser.add_argument("--voice-quality", choices=("fast", "natural"), default="fast", help="the voices cast")
    parser.add_argument("--fps", type=int, default=RenderConfig.fps)
    parser.add_argument("--preset", default=RenderConfig.preset)
    parser.add_argument("--aspect", choices=list(ASPECT_SIZE_PX), default="wide")
    parser.add_argument("--draft", action="store_true", help="the --draft preview (overrides --fps)")
    args = parser.parse_args()
    width_px, height_px = ASPECT_SIZE_PX[args.aspect]
    render = RenderConfig(width_px=width_px, height_px=height_px, fps=args.fps, preset=args.preset)
    if args.preset != RenderConfig.preset:
        render = replace(render, x264_params="")  # as the CLI does
    if args.draft:
        render = render.draft()
    rows = []
    for attempt in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            config = RunConfig(
                input_path=args.input,
                output_path=Path(tmp) / "bench.mp4",
                work_dir=Path(tmp) / "bench.work",
                voice=VoiceConfig(quality=args.voice_quality),
                render=render,
            )
            rows.append(_timed_run(config, f"cold run {attempt + 1} of {args.input.name}"))
            if args.warm:
                _timed_run(config, "  warm re-run")
    if args.repeat > 1:
        for label, pick in (("best", min), ("median", statistics.median)):
            ratios = [row["wall"] / row["video"] for row in rows]
            stages = "  ".join(f"{n} {pick(r[n] for r in rows):.2f}" for n in rows[0] if n not in ("video",))
            print(f"{label:<6} of {len(rows)}: {stages} | wall / video {pick(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
