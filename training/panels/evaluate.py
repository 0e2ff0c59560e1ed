"""Panel F1 (IoU >= 0.5) and whole-page order exactness of the classical detector and the learned model on
annotated pages the model never trained on.

    python training/panels/evaluate.py GT.json IMAGE_DIR [GT.json IMAGE_DIR ...]

With --pages A-B only pages whose number is in A..B are scored (the held-out range of the manga).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np
from PIL import Image

from comic_narrator.reading.metrics import in_order, match_boxes
from comic_narrator.reading.order import reading_order
from comic_narrator.reading.panel_model import detect_panels_learned
from comic_narrator.reading.panels import detect_panels


def score(gt: list[tuple[int, int, int, int]], pred: list[tuple[int, int, int, int]], direction: str
          ) -> tuple[int, int, int, bool]:
    ordered = [pred[i] for i in reading_order(pred, direction)]  # type: ignore[arg-type]
    matched = match_boxes(gt, ordered)
    ranks = [matched[g] for g in range(len(gt)) if g in matched]
    return len(matched), len(ordered), len(gt), len(matched) == len(gt) and in_order(ranks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pairs", nargs="+")
    parser.add_argument("--pages", default="")
    args = parser.parse_args()
    lo, hi = (int(v) for v in args.pages.split("-")) if args.pages else (0, 10**9)
    totals: dict[str, list[int]] = {"classical": [0, 0, 0, 0, 0], "model": [0, 0, 0, 0, 0]}
    seconds: dict[str, list[float]] = {"classical": [], "model": []}
    for gt_path, image_dir in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        for page in json.loads(Path(gt_path).read_text())["pages"]:
            number = int(re.findall(r"\d+", page["image"])[-1])
            if not lo <= number <= hi:
                continue
            rgb = np.asarray(Image.open(Path(image_dir) / page["image"]).convert("RGB"))
            grey = np.asarray(Image.open(Path(image_dir) / page["image"]).convert("L"))
            gt = [tuple(p["bbox"]) for p in page["panels"]]
            direction = page.get("reading_direction", "ltr")
            for name, detect in (("classical", lambda: detect_panels(rgb)), ("model", lambda: detect_panels_learned(grey, detect_panels(rgb)))):
                start = time.perf_counter()
                pred = detect() or []
                seconds[name].append(time.perf_counter() - start)
                m, p, g, exact = score(gt, pred, direction)
                t = totals[name]
                t[0] += m
                t[1] += p
                t[2] += g
                t[3] += exact
                t[4] += 1
                if name == "model" and not exact:
                    print(f"  {page['image']}: model {m}/{g} matched, {p} found")
    for name, (m, p, g, exact, n) in totals.items():
        precision, recall = m / max(p, 1), m / max(g, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        print(f"{name:9s} pages {n:3d}  P {precision:.3f} R {recall:.3f} F1 {f1:.3f}  order exact {exact}/{n} "
              f"({exact / max(n, 1):.0%})  median {np.median(seconds[name]):.3f} s/page")


if __name__ == "__main__":
    main()
