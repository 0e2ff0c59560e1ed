"""Figures of the local reader on the corpus: the ground-truth scores of `comic-narrator eval`, the
machine-lettered wikipe-tan page against the Japanese page's panels, and what it makes of the pages without
ground truth (panel counts, page kinds, texts).

Usage: python benchmarks/vision_eval.py [CORPUS_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.evaluate import evaluate_folder, format_summary, score_page
from comic_narrator.reading.reader import read_page

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vision_speed import DEFAULT_CORPUS, bench_page, corpus_pages


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CORPUS
    with RapidOcrEngine() as ocr:
        for folder in ("peppercarrot-ep17", "wikipe-tan"):
            print(format_summary(evaluate_folder(root / folder, ocr, VisionConfig())))
        gt = json.loads((root / "wikipe-tan" / "gt.json").read_text(encoding="utf-8"))["pages"][0]
        image = np.asarray(Image.open(root / "wikipe-tan" / "page1.en-machine.jpg").convert("RGB"))
        page = bench_page("wikipe-tan/page1.en-machine.jpg", image)
        for layout in ("auto", "manga"):
            reading = read_page(image, page, config=VisionConfig(layout=layout), manga_hint=None, ocr=ocr)  # type: ignore[arg-type]
            score = score_page(reading, gt, [], 0.0)
            print(
                f"wikipe-tan/page1.en-machine.jpg --layout {layout}: panels {score.panels_matched}/{score.panels_gt}"
                f" (F1 {score.panel_f1:.2f}), panel order {'exact' if score.panel_order_exact else 'WRONG'},"
                f" direction {reading.reading_direction}, {len(reading.texts)} texts"
            )
        print("pages without ground truth:")
        for name, image in corpus_pages(root):
            if not ("cbz" in name or "pdf" in name):
                continue
            page = bench_page(name, image)
            reading = read_page(image, page, config=VisionConfig(), manga_hint=None, ocr=ocr)
            kinds = {k: sum(t.kind == k for t in reading.texts) for k in ("speech", "shout", "caption", "sound")}
            print(f"  {name:<48} {reading.page_kind:<9} {len(reading.panels)} panels  texts {kinds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
