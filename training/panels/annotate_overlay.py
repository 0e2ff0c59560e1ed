"""Overlay PNGs that make hand annotation of panels quick: the detector's boxes (numbered, with their
coordinates) over the page, and a labelled 100 px grid in page pixels.

    python training/panels/annotate_overlay.py OUT_DIR PAGE.jpg [PAGE.jpg ...]

Prints each page's detected boxes as JSON so an annotator starts from them and corrects what is wrong.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from comic_narrator.reading.panels import detect_panels


def overlay(path: Path, out_dir: Path) -> list[list[int]]:
    image = np.asarray(Image.open(path).convert("RGB"))
    boxes = [list(map(int, b)) for b in detect_panels(image)]
    out = image.copy()
    height, width = out.shape[:2]
    for gx in range(0, width, 100):
        cv2.line(out, (gx, 0), (gx, height), (0, 170, 0), 1)
        cv2.putText(out, str(gx), (gx + 2, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 140, 0), 1)
    for gy in range(0, height, 100):
        cv2.line(out, (0, gy), (width, gy), (0, 170, 0), 1)
        cv2.putText(out, str(gy), (2, gy - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 140, 0), 1)
    for i, (x, y, w, h) in enumerate(boxes):
        cv2.rectangle(out, (x, y), (x + w, y + h), (255, 0, 0), 4)
        cv2.putText(out, f"{i}", (x + 12, y + 48), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (255, 0, 0), 4)
    Image.fromarray(out).save(out_dir / (path.stem + ".png"))
    return boxes


def main(argv: list[str]) -> None:
    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in argv[1:]:
        print(json.dumps({"image": Path(name).name, "detected": overlay(Path(name), out_dir)}))


if __name__ == "__main__":
    main(sys.argv[1:])
