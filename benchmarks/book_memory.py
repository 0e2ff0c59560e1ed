"""Does memory grow with the book? Peak memory of narrating a PDF of N pages against one of M pages.

    python benchmarks/book_memory.py [--pages 10 100] [--interval 0.2] [-- CLI OPTIONS]

The PDFs are built from real pages: Pepper&Carrot ep. 17 (../shared/corpus, when present) and the bundled sample
page, in turn, each stamped with its page number in a corner so no two pages are the same image. Each size runs
the installed CLI cold in a subprocess; its process tree is sampled by ``run_sampled`` of benchmarks/strip_memory.py
(tree PSS: what the run takes from the machine; largest process: ``ru_maxrss``). The target (issue 12): the 100-page
book's peak within 200 MB of the 10-page book's. Options after ``--`` go to the CLI (``--voice-quality fast
--preset ultrafast`` make a 100-page run shorter without changing what is held in memory per page).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strip_memory import CLI, GiB, MiB, _video_duration_s, run_sampled

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "peppercarrot-ep17"


def source_pages() -> list[Path]:
    pages = sorted(CORPUS.glob("page*.jpg")) if CORPUS.is_dir() else []
    return [*pages, REPO / "samples" / "peppercarrot-ep17-page2.jpg"]


def build_pdf(path: Path, count: int) -> None:
    sources = source_pages()

    def page(number: int) -> Image.Image:
        image = Image.open(sources[number % len(sources)]).convert("RGB")
        ImageDraw.Draw(image).text((8, 8), f"{number + 1}", fill=(0, 0, 0))
        return image

    first = page(0)
    first.save(path, "PDF", resolution=150, save_all=True, append_images=(page(n) for n in range(1, count)))


def measure(pdf: Path, cli_args: list[str], interval_s: float) -> dict[str, float]:
    output = pdf.with_suffix(".mp4")
    command = [str(CLI), str(pdf), "-o", str(output), "--json-progress", *cli_args]
    run = run_sampled(command, interval_s)
    if run.exit_code != 0:
        raise SystemExit("".join(run.log[-20:]) + f"\nthe run on {pdf} failed")
    summary, sampler, usage, wall_s = run.summary(), run.sampler, run.usage, run.wall_s
    return {
        "pages": float(summary.get("pages", 0)),
        "video_s": _video_duration_s(output),
        "wall_s": wall_s,
        "pss": float(sampler.peak_pss),
        "rss": float(sampler.peak_rss),
        "largest": float(usage.ru_maxrss * 1024),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, nargs=2, default=[10, 100], metavar=("SMALL", "LARGE"))
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("cli_args", nargs="*")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="book-memory-"))
    try:
        rows = []
        for count in args.pages:
            pdf = tmp / f"book-{count}.pdf"
            build_pdf(pdf, count)
            row = measure(pdf, args.cli_args, args.interval)
            rows.append(row)
            print(
                f"{count:4d} pages: video {row['video_s']:7.1f} s | wall {row['wall_s']:7.1f} s "
                f"({row['wall_s'] / max(row['video_s'], 1e-9):.2f} of the video) | peak tree PSS "
                f"{row['pss'] / MiB:6.0f} MiB | tree RSS {row['rss'] / MiB:6.0f} MiB | largest process "
                f"{row['largest'] / MiB:6.0f} MiB",
                flush=True,
            )
        growth = max(rows[1]["pss"], rows[1]["largest"]) - max(rows[0]["pss"], rows[0]["largest"])
        print(f"growth {args.pages[0]} -> {args.pages[1]} pages: {growth / MiB:+.0f} MiB (target: within 200 MB)")
        print(f"(peaks above {2 * GiB / MiB:.0f} MiB would also miss the strip target)")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
