"""Panel F1 (IoU 0.5) and whole panel order per kind of page on the stress set (training/panels/stress.py), with
the reader's own choice of detector (`--panels auto`), panels only (no OCR, so no insets: `comic-narrator eval`
scores the whole reader on the same folders).

    python training/panels/stress_eval.py STRESS_DIR [--kinds a,b] [--panels auto|model|classical] [-v]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from comic_narrator.artifacts import BBox
from comic_narrator.config import VisionConfig
from comic_narrator.reading.insets import add_insets
from comic_narrator.reading.metrics import in_order, match_boxes
from comic_narrator.reading.order import spread_aware_order
from comic_narrator.reading.panels import PanelParams, art_paper_luma, page_paper
from comic_narrator.reading.reader import _find_panels


def panels_of(rgb: np.ndarray, mode: str) -> tuple[list[BBox], dict[int, int]]:
    """The reader's panels and insets (the inset search without the OCR's lettering: caption boxes are not
    told from insets here), with each inset's parent."""
    grey = np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
    params = PanelParams()
    rgb, grey, background, dark = page_paper(rgb, grey, params)
    panels = _find_panels(rgb, grey, params, background, VisionConfig(panels=mode), dark)  # type: ignore[arg-type]
    return add_insets(grey, panels, background.scale, art_paper_luma(background, dark), [])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("stress_dir", type=Path)
    parser.add_argument("--kinds", default="")
    parser.add_argument("--panels", default="auto")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    wanted = set(args.kinds.split(",")) - {""}
    totals = [0, 0, 0, 0, 0]
    seconds: list[float] = []
    for folder in sorted(p for p in args.stress_dir.iterdir() if (p / "gt.json").is_file()):
        if wanted and folder.name not in wanted:
            continue
        t = [0, 0, 0, 0, 0]
        for page in json.loads((folder / "gt.json").read_text())["pages"]:
            rgb = np.asarray(Image.open(folder / page["image"]).convert("RGB"))
            start = time.perf_counter()
            pred, parents = panels_of(rgb, args.panels)
            seconds.append(time.perf_counter() - start)
            ordered = [
                pred[i]
                for i in spread_aware_order(pred, parents, page["reading_direction"], rgb.shape[1], rgb.shape[0])
            ]
            gt = [tuple(p["bbox"]) for p in page["panels"]]
            matched = match_boxes(gt, ordered)  # type: ignore[arg-type]
            ranks = [matched[g] for g in range(len(gt)) if g in matched]
            exact = len(matched) == len(gt) and in_order(ranks)
            for k, v in enumerate((len(matched), len(ordered), len(gt), int(exact), 1)):
                t[k] += v
            if args.verbose and not exact:
                print(
                    f"    {folder.name}/{page['image']}: {len(matched)}/{len(gt)} matched, {len(ordered)} found"
                    f"{'' if len(matched) < len(gt) else ', order wrong'}"
                )
        m, p, g, e, n = t
        precision, recall = m / max(p, 1), m / max(g, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        print(f"{folder.name:18s} pages {n:3d}  P {precision:.3f} R {recall:.3f} F1 {f1:.3f}  order exact {e}/{n}")
        totals = [a + b for a, b in zip(totals, t, strict=True)]
    m, p, g, e, n = totals
    precision, recall = m / max(p, 1), m / max(g, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    print(
        f"{'all':18s} pages {n:3d}  P {precision:.3f} R {recall:.3f} F1 {f1:.3f}  order exact {e}/{n}  "
        f"median {np.median(seconds):.2f} s/page"
    )


if __name__ == "__main__":
    main()
