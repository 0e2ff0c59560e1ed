"""Accuracy per set and seconds per page per part of the local reader.

Usage: python benchmarks/reader_parts.py [--sets DIR ...]

For each annotated set (the corpus folders and the held-out manga pages in training/eval) it prints the
`comic-narrator eval` summary with the learned panel finder and with the classical one; then, over every page
of those sets, the median wall seconds of each part: classical panels, learned panels, OCR, the whole read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import cv2
import numpy as np

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.ingest.images import decode_image
from comic_narrator.reading.evaluate import evaluate_folder, format_summary
from comic_narrator.reading.panel_model import detect_panels_learned
from comic_narrator.reading.panels import detect_panels

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SETS = [
    REPO.parent / "shared" / "corpus" / "peppercarrot-ep17",
    REPO.parent / "shared" / "corpus" / "wikipe-tan",
    REPO / "training" / "eval" / "blackjack-vol01-p41-60",
]


def _pages(folder: Path) -> list[np.ndarray]:
    gt = json.loads((folder / "gt.json").read_text(encoding="utf-8"))
    root = folder / str(gt.get("image_dir", "."))
    return [
        decode_image((root / p["image"]).read_bytes(), source=p["image"], max_pixels=64_000_000) for p in gt["pages"]
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", nargs="*", type=Path, default=DEFAULT_SETS)
    args = parser.parse_args()
    sets = [s for s in args.sets if (s / "gt.json").is_file()]
    parts: dict[str, list[float]] = {"panels classical": [], "panels model": [], "ocr": []}
    with RapidOcrEngine() as ocr:
        for folder in sets:
            for finder in ("auto", "model", "classical"):
                summary = evaluate_folder(folder, ocr, VisionConfig(panels=finder))  # type: ignore[arg-type]
                print(f"--panels {finder}: " + format_summary(summary).splitlines()[-1].strip())
            lang = "ja" if summary.cer_by_lang.get("ja") is not None else "en"
            for rgb in _pages(folder):
                grey = np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
                start = time.perf_counter()
                detect_panels(rgb)
                parts["panels classical"].append(time.perf_counter() - start)
                start = time.perf_counter()
                detect_panels_learned(grey)
                parts["panels model"].append(time.perf_counter() - start)
                start = time.perf_counter()
                ocr.recognize(rgb, lang)  # type: ignore[arg-type]
                parts["ocr"].append(time.perf_counter() - start)
    for name, seconds in parts.items():
        print(f"{name:17s} median {statistics.median(seconds):.3f} s/page over {len(seconds)} pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
