"""Peak memory of narrating a 1,000 x 40,000 px webtoon strip: the whole `comic-narrator strip.png -o out.mp4` run.

    python benchmarks/strip_memory.py [--width 1000] [--height 40000] [--keep DIR] [--interval 0.1]

No free webtoon exists (../shared/corpus/README.md), so the strip is built the way one is laid out: real panels
(the Pepper&Carrot panels cut out along their ground-truth boxes) and real pages (the bundled sample, wikipe-tan's
English page and, when ../shared/corpus is there, the Golden-Age and newspaper pages), each scaled to the column's
width, stacked down a white column with gaps of 250-700 px, and a lettered balloon drawn in every other gap, so
there is text between the panels to read too. The layout is seeded: every run builds the same strip.

The CLI runs in a subprocess with its default settings and a cold work folder. While it runs, the process tree
(the CLI and its render workers) is sampled from /proc every --interval seconds:

- tree RSS: the sum of the resident sets of every process in the tree. Pages that processes share (libraries
  mapped by the CLI and every render worker) count once per process, so this is an upper bound.
- tree PSS: the sum of the proportional sets (/proc/PID/smaps_rollup): shared pages divided among their users.
  This is what the run takes from the machine's memory.
- largest process: ``ru_maxrss`` from ``wait4`` on the CLI, the high-water mark of the largest single process of
  the tree (the kernel takes the maximum over a process and its descendants, never their sum).

Each sample is labelled with the stage the run was in (the last ``--json-progress`` event), so the peak is also
printed per stage; "after X" means X had reported its last item and the next stage had not reported yet. The
target (issue 12) is a peak under 2 GiB for the whole run on 2 cores.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
DATA = REPO / "tests" / "data" / "vision"
CLI = Path(sys.executable).with_name("comic-narrator")
GiB = 1024**3
MiB = 1024**2

BALLOON_LINES = (
    ("WAIT FOR ME!", "I'M COMING TOO!"),
    ("Where are we going", "this time?"),
    ("The market opens at dawn.", "We must hurry."),
    ("CARROT! Come back", "here right now!"),
    ("It's only a little", "further, I promise."),
    ("Did you hear that?",),
    ("That was close...", "too close."),
    ("We made it!",),
)

Rgb = npt.NDArray[np.uint8]


# ------------------------------------------------------------------------------------------------ the strip


def _rgb(data: bytes) -> Rgb:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.uint8)


def _panel_crops(folder: Path) -> list[Rgb]:
    """The panels of the Pepper&Carrot pages that have ground truth, cut along their boxes (frames trimmed)."""
    gt_file = folder / "gt.json"
    if not gt_file.is_file():
        return []
    crops = []
    for page in json.loads(gt_file.read_text(encoding="utf-8"))["pages"]:
        path = folder / page["image"]
        if not path.is_file():
            continue
        image = _rgb(path.read_bytes())
        for panel in page["panels"]:
            x, y, w, h = panel["bbox"]
            crops.append(image[y + 10 : y + h - 10, x + 10 : x + w - 10])
    return crops


def _cbz_pages(path: Path) -> list[Rgb]:
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if n.lower().endswith((".jpg", ".jpeg", ".png")))
        names = [n for n in names if "__MACOSX" not in n and not Path(n).name.startswith(".")]
        return [_rgb(archive.read(n)) for n in names]


def strip_sources() -> tuple[list[Rgb], list[str]]:
    """Real artwork to stack, English only (so the run's language is stable), and where it came from."""
    pepper = CORPUS / "peppercarrot-ep17" if (CORPUS / "peppercarrot-ep17" / "gt.json").is_file() else None
    items = _panel_crops(pepper or DATA / "peppercarrot-ep17")
    used = [f"Pepper&Carrot ep. 17 panels ({pepper or DATA / 'peppercarrot-ep17'})"]
    pages = [REPO / "samples" / "peppercarrot-ep17-page2.jpg", DATA / "wikipe-tan" / "page1.en-machine.jpg"]
    items += [_rgb(p.read_bytes()) for p in pages]
    used += [str(p.relative_to(REPO)) for p in pages]
    for name in ("golden-age/BusterBear10.cbz", "newspaper-strips/dingbat-family-strip.cbz"):
        if (CORPUS / name).is_file():
            items += _cbz_pages(CORPUS / name)
            used.append(f"corpus/{name}")
    return items, used


def _fit_width(image: Rgb, width: int) -> Rgb:
    if image.shape[1] == width:
        return image
    height = max(1, round(image.shape[0] * width / image.shape[1]))
    resized = Image.fromarray(image).resize((width, height), Image.Resampling.LANCZOS)
    return np.asarray(resized, dtype=np.uint8)


def _balloon(canvas: ImageDraw.ImageDraw, box: tuple[int, int, int, int], lines: tuple[str, ...]) -> None:
    """A white speech balloon with a black outline and a tail, lettered in a sans-serif."""
    font = ImageFont.load_default(size=34)
    x0, y0, x1, y1 = box
    canvas.ellipse(box, fill="white", outline="black", width=4)
    tail_x = (x0 + x1) // 2 - 40
    canvas.polygon([(tail_x, y1 - 12), (tail_x + 50, y1 - 10), (tail_x + 10, y1 + 50)], fill="white", outline="black")
    canvas.line([(tail_x + 2, y1 - 8), (tail_x + 48, y1 - 8)], fill="white", width=6)
    heights = [canvas.textbbox((0, 0), line, font=font)[3] for line in lines]
    y = (y0 + y1) // 2 - (sum(heights) + 12 * (len(lines) - 1)) // 2
    for line, line_height in zip(lines, heights, strict=True):
        line_width = canvas.textlength(line, font=font)
        canvas.text(((x0 + x1) / 2 - line_width / 2, y), line, fill="black", font=font)
        y += line_height + 12


def build_strip(width: int, height: int, seed: int = 17) -> Rgb:
    """A width x height webtoon-like column of real panels and pages, white gaps, lettered balloons between."""
    rng = random.Random(seed)
    sources, _ = strip_sources()
    art_width = width - 100
    fitted = [_fit_width(image, art_width) for image in sources]
    strip = Image.new("RGB", (width, height), "white")
    canvas = ImageDraw.Draw(strip)
    y, index, gap_no = 200, 0, 0
    while True:
        art = fitted[index % len(fitted)]
        index += 1
        if y + art.shape[0] + 200 > height:
            break
        strip.paste(Image.fromarray(art), (50, y))
        canvas.rectangle((47, y - 3, 50 + art_width + 2, y + art.shape[0] + 2), outline="black", width=3)
        y += art.shape[0]
        gap = rng.randint(250, 700)
        if gap_no % 2 == 0 and gap >= 330:
            lines = BALLOON_LINES[(gap_no // 2) % len(BALLOON_LINES)]
            balloon_h = 70 + 46 * len(lines)
            top = y + (gap - balloon_h) // 2
            left = rng.randint(60, width - 660)
            _balloon(canvas, (left, top, left + 600, top + balloon_h), lines)
        gap_no += 1
        y += gap
    return np.asarray(strip, dtype=np.uint8)


# ------------------------------------------------------------------------------------------------ sampling


def _children_by_parent() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _tree(root: int) -> list[int]:
    children = _children_by_parent()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _kib_field(path: str, name: str) -> int:
    try:
        with open(path, encoding="ascii") as handle:
            for line in handle:
                if line.startswith(name):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class Sampler:
    """Samples the tree's RSS and PSS sums until stopped; labels each sample with the run's current stage."""

    root: int
    interval_s: float
    stage: str = "start"
    peak_rss: int = 0
    peak_pss: int = 0
    peak_processes: int = 0
    peak_root_rss: int = 0
    """The CLI's own process (reading, voices, mixing, the join), apart from its render workers."""
    peak_workers_rss: int = 0
    """The render workers together, at their highest."""
    by_stage: dict[str, tuple[int, int]] = field(default_factory=dict)
    samples: list[tuple[float, str, int, int]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            pids = _tree(self.root)
            each = [_kib_field(f"/proc/{pid}/status", "VmRSS:") for pid in pids]
            rss = sum(each)
            self.peak_root_rss = max(self.peak_root_rss, each[0])
            self.peak_workers_rss = max(self.peak_workers_rss, rss - each[0])
            pss = sum(_kib_field(f"/proc/{pid}/smaps_rollup", "Pss:") for pid in pids)
            stage = self.stage
            self.samples.append((time.monotonic() - started, stage, rss, pss))
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.peak_processes = max(self.peak_processes, len(pids))
            old = self.by_stage.get(stage, (0, 0))
            self.by_stage[stage] = (max(old[0], rss), max(old[1], pss))
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()


def _follow_progress(stream: io.TextIOBase, sampler: Sampler, log: list[str]) -> None:
    for line in stream:
        log.append(line)
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "progress":
            done, total = event.get("done", 0), event.get("total", 0)
            sampler.stage = f"after {event['stage']}" if done >= total else str(event["stage"])


# ------------------------------------------------------------------------------------------------ the run


@dataclass
class SampledRun:
    """A finished CLI run: its exit code, wall time, rusage (``ru_maxrss``: its largest process), the memory
    samples and its stderr lines."""

    exit_code: int
    wall_s: float
    usage: resource.struct_rusage
    sampler: Sampler
    log: list[str]

    def summary(self) -> dict[str, object]:
        """The run's closing ``--json-progress`` summary event (empty when it printed none)."""
        return next((json.loads(x) for x in reversed(self.log) if '"summary"' in x), {})


def run_sampled(command: list[str], interval_s: float) -> SampledRun:
    """Run ``command`` (a CLI call with --json-progress) to its end, sampling its process tree meanwhile."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(process.pid, interval_s)
    log: list[str] = []
    assert process.stderr is not None
    threads = [
        threading.Thread(target=sampler.run, daemon=True),
        threading.Thread(target=_follow_progress, args=(process.stderr, sampler, log), daemon=True),
    ]
    for thread in threads:
        thread.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall_s = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop()
    for thread in threads:
        thread.join()
    return SampledRun(process.returncode, wall_s, usage, sampler, log)


def _video_duration_s(path: Path) -> float:
    import av

    with av.open(str(path)) as container:
        return float(container.duration or 0) / 1_000_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--height", type=int, default=40_000)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between memory samples")
    parser.add_argument("--keep", type=Path, help="keep the strip, the video and the work folder in this folder")
    parser.add_argument("--samples", type=Path, help="write every sample (s, stage, RSS, PSS) to this CSV")
    parser.add_argument("cli_args", nargs="*", help="extra CLI options after --, e.g. -- --voice-quality fast")
    args = parser.parse_args()
    if not CLI.exists():
        print(f"no {CLI}: run this with the project's venv Python", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="strip-memory-"))
    try:
        folder = args.keep or tmp
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        strip = build_strip(args.width, args.height)
        strip_path = folder / "strip.png"
        Image.fromarray(strip).save(strip_path, compress_level=1)
        del strip
        _, used = strip_sources()
        print(f"strip: {args.width} x {args.height} px from {', '.join(used)} ({time.perf_counter() - started:.1f} s)")
        output = folder / "strip.mp4"
        shutil.rmtree(folder / "strip.mp4.work", ignore_errors=True)  # always cold
        command = [str(CLI), str(strip_path), "-o", str(output), "--json-progress", *args.cli_args]
        print("run:", " ".join(command), flush=True)
        run = run_sampled(command, args.interval)
        sampler, usage, wall_s = run.sampler, run.usage, run.wall_s
        if run.exit_code != 0:
            print("".join(run.log[-20:]), file=sys.stderr)
            print(f"the run failed with exit code {run.exit_code}", file=sys.stderr)
            return 1
        summary = run.summary()
        video_s = _video_duration_s(output) if output.exists() else 0.0  # none with --vision-only
        print("peak memory by stage (tree RSS / tree PSS):")
        for stage, (rss, pss) in sampler.by_stage.items():
            print(f"  {stage:<16} {rss / MiB:7.0f} MiB / {pss / MiB:7.0f} MiB")
        print(
            f"pages {summary.get('pages', '?')} | video {video_s:.1f} s | wall {wall_s:.1f} s "
            f"({wall_s / max(video_s, 1e-9):.2f} of the video) | CPU {usage.ru_utime + usage.ru_stime:.1f} s"
        )
        print(
            f"peak tree PSS {sampler.peak_pss / GiB:.2f} GiB | peak tree RSS {sampler.peak_rss / GiB:.2f} GiB "
            f"({sampler.peak_processes} processes at most) | largest process {usage.ru_maxrss * 1024 / GiB:.2f} GiB"
        )
        print(
            f"the CLI's own process at most {sampler.peak_root_rss / MiB:.0f} MiB RSS, its children together at "
            f"most {sampler.peak_workers_rss / MiB:.0f} MiB"
        )
        within = max(sampler.peak_pss, usage.ru_maxrss * 1024) < 2 * GiB
        print(f"under 2 GiB: {'yes' if within else 'NO'} (tree PSS and largest process)")
        if args.samples:
            rows = [f"{t:.2f},{stage},{rss},{pss}" for t, stage, rss, pss in sampler.samples]
            args.samples.write_text("seconds,stage,rss_bytes,pss_bytes\n" + "\n".join(rows) + "\n")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
