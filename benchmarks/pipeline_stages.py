"""Per-stage seconds for the bundled sample (or any input) and wall time divided by the video's duration.

    python benchmarks/pipeline_stages.py [INPUT] [--fresh] [--voice-quality fast|natural]

--fresh (default) uses a new work folder so nothing is cached; --warm re-runs on the same folder to show what
the stage cache saves.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from comic_narrator.config import RunConfig, VoiceConfig
from comic_narrator.pipeline import run
from comic_narrator.progress import Progress

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", type=Path, default=REPO / "samples" / "peppercarrot-ep17-page2.jpg")
    parser.add_argument("--warm", action="store_true", help="also time a second run over the same work folder")
    parser.add_argument("--voice-quality", choices=("fast", "natural"), default="fast", help="the voices cast")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp) / "bench.mp4"
        config = RunConfig(
            input_path=args.input,
            output_path=output,
            work_dir=Path(tmp) / "bench.work",
            voice=VoiceConfig(quality=args.voice_quality),
        )
        runs = ["cold", "warm"] if args.warm else ["cold"]
        for label in runs:
            started = time.perf_counter()
            result = run(config, Progress(quiet=True))
            wall_s = time.perf_counter() - started
            print(f"{label} run of {args.input.name}: video {result.duration_s:.2f} s")
            for stage, seconds in result.stage_seconds.items():
                print(f"  {stage:<8} {seconds:8.2f} s")
            print(f"  {'total':<8} {wall_s:8.2f} s   wall / video duration = {wall_s / result.duration_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
