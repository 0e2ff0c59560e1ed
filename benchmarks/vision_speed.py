"""Seconds per page of the local reader (rapidocr + classical vision) on the corpus pages, wall and CPU time.

Usage: python benchmarks/vision_speed.py [CORPUS_DIR] [--threads N] [--repeat K]
Prints one line per page read, then (with --repeat > 1) each page's median, and the median over all reads. CPU
seconds are the process's user+system time; wall seconds also count time lost to other processes on a busy
machine (the load average, which counts this process too, is printed before and after).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image

from comic_narrator.artifacts import PageImage
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.reader import read_page

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def corpus_pages(root: Path) -> list[tuple[str, npt.NDArray[np.uint8]]]:
    pages: list[tuple[str, npt.NDArray[np.uint8]]] = []
    for path in sorted(root.glob("*/*.jpg")):
        pages.append((f"{path.parent.name}/{path.name}", np.asarray(Image.open(path).convert("RGB"))))
    for path in sorted(root.glob("*/*.cbz")):
        with zipfile.ZipFile(path) as archive:
            for name in sorted(archive.namelist()):
                if name.lower().endswith(".jpg") and "/._" not in f"/{name}":
                    image = Image.open(io.BytesIO(archive.read(name))).convert("RGB")
                    pages.append((f"{path.name}:{Path(name).name}", np.asarray(image)))
    for path in sorted(root.glob("*/*.pdf")):
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(str(path))
        for i in range(len(document)):
            image = document[i].render(scale=150 / 72).to_pil().convert("RGB")
            pages.append((f"{path.name}#{i + 1}", np.asarray(image)))
    return pages


def bench_page(name: str, image: npt.NDArray[np.uint8]) -> PageImage:
    """A PageImage for a page decoded in memory (nothing is written to a work folder)."""
    return PageImage(
        index=0,
        source=name,
        source_page_number=1,
        image_file="-",
        width_px=int(image.shape[1]),
        height_px=int(image.shape[0]),
        sha256="",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: engine decides)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    pages = corpus_pages(args.corpus)
    walls: list[float] = []
    cpus: list[float] = []
    per_page: dict[str, tuple[list[float], list[float]]] = {}
    load_before = os.getloadavg()[0]
    with RapidOcrEngine(threads=args.threads) as ocr:
        threads = ocr.threads_in_use
        for name, image in pages:
            page = bench_page(name, image)
            for _ in range(args.repeat):
                cpu0, wall0 = os.times(), time.perf_counter()
                reading = read_page(image, page, config=VisionConfig(), manga_hint=None, ocr=ocr)
                cpu1, wall1 = os.times(), time.perf_counter()
                wall = wall1 - wall0
                cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
                walls.append(wall)
                cpus.append(cpu)
                per_page.setdefault(name, ([], []))[0].append(wall)
                per_page[name][1].append(cpu)
                print(
                    f"{name:<48} {image.shape[1]:>5}x{image.shape[0]:<5} wall {wall:5.2f} s  cpu {cpu:5.2f} s"
                    f"  {len(reading.panels)} panels,"
                    f" {len(reading.texts)} texts, {reading.page_kind}"
                )
    load = os.getloadavg()[0]
    if args.repeat > 1:
        for name, (page_walls, page_cpus) in per_page.items():
            print(
                f"median of {len(page_walls)}: {name:<38} wall {statistics.median(page_walls):5.2f} s"
                f"  cpu {statistics.median(page_cpus):5.2f} s"
            )
    wall_s, cpu_s = statistics.median(walls), statistics.median(cpus)
    print(
        f"median over {len(walls)} page reads: wall {wall_s:.2f} s, cpu {cpu_s:.2f} s"
        f" (onnxruntime threads {threads}, {os.cpu_count()} cores,"
        f" load average {load_before:.1f} before, {load:.1f} after)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
