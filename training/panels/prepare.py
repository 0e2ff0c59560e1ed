"""Build the training folder for the panel model from ../shared/training (see data_list.md).

    python training/panels/prepare.py OUT_DIR

Writes OUT_DIR/art/*.png (grey crops from inside panels of the training pages, used to fill synthetic pages)
and OUT_DIR/real/*.png + OUT_DIR/real.json (annotated training pages with their panel boxes, long side 768 px).
Held-out pages (HELD_OUT) contribute nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from comic_narrator.reading.panels import detect_panels

TRAINING = Path(__file__).resolve().parents[3] / "shared" / "training"
ANNOTATIONS = Path(__file__).resolve().parent / "annotations"
HELD_OUT_MANGA = {f"bj01_{n:06d}.jpg" for n in range(41, 61)}
"""Black Jack vol. 1 pages 41-60 measure the model; they are never trained on."""
REAL_LONG_SIDE_PX = 768


def _annotated() -> dict[str, list[list[int]]]:
    boxes: dict[str, list[list[int]]] = {}
    for path in sorted(ANNOTATIONS.glob("bj01-[a-z].json")):
        for page in json.loads(path.read_text())["pages"]:
            boxes[page["image"]] = [p["bbox"] for p in page["panels"]]
    return boxes


def _crops(image: np.ndarray, boxes: list[list[int]], shrink: float) -> list[np.ndarray]:
    out = []
    for x, y, w, h in boxes:
        dx, dy = int(w * shrink), int(h * shrink)
        crop = image[y + dy : y + h - dy, x + dx : x + w - dx]
        if crop.shape[0] >= 64 and crop.shape[1] >= 64:
            scale = min(1.0, 512 / max(crop.shape[:2]))
            out.append(cv2.resize(crop, (int(crop.shape[1] * scale), int(crop.shape[0] * scale))))
    return out


def main(out_dir: Path) -> None:
    (out_dir / "art").mkdir(parents=True, exist_ok=True)
    (out_dir / "real").mkdir(parents=True, exist_ok=True)
    annotated = _annotated()
    real: dict[str, list[list[int]]] = {}
    n_art = 0
    for path in sorted((TRAINING / "blackjack-ni-yoroshiku" / "vol01").glob("*.jpg")):
        if path.name in HELD_OUT_MANGA:
            continue
        rgb = np.asarray(Image.open(path).convert("RGB"))
        grey = np.asarray(Image.open(path).convert("L"))
        boxes = annotated.get(path.name) or [list(b) for b in detect_panels(rgb)]
        for crop in _crops(grey, boxes, 0.06):
            cv2.imwrite(str(out_dir / "art" / f"bj{n_art:05d}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 88])
            n_art += 1
        if path.name in annotated:
            scale = REAL_LONG_SIDE_PX / max(grey.shape)
            small = cv2.resize(grey, (round(grey.shape[1] * scale), round(grey.shape[0] * scale)),
                               interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(out_dir / "real" / (path.stem + ".jpg")), small, [cv2.IMWRITE_JPEG_QUALITY, 92])
            real[path.stem + ".jpg"] = [[round(v * scale) for v in b] for b in annotated[path.name]]
    for path in sorted((TRAINING / "peppercarrot").glob("ep*/gfx_*.jpg")):
        if "P00" in path.name:
            continue
        rgb = np.asarray(Image.open(path).convert("RGB"))
        grey = np.asarray(Image.open(path).convert("L"))
        boxes = [list(b) for b in detect_panels(rgb)]
        if boxes:
            # Painted pages, labelled by the classical detector (panel F1 0.92 on unseen episodes of this comic):
            # they teach the model soft, pale gutters that synthetic pages draw poorly.
            scale = REAL_LONG_SIDE_PX / max(grey.shape)
            small = cv2.resize(grey, (round(grey.shape[1] * scale), round(grey.shape[0] * scale)),
                               interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(out_dir / "real" / ("pc-" + path.stem + ".jpg")), small, [cv2.IMWRITE_JPEG_QUALITY, 90])
            real["pc-" + path.stem + ".jpg"] = [[round(v * scale) for v in b] for b in boxes]
        for crop in _crops(grey, boxes, 0.04):
            cv2.imwrite(str(out_dir / "art" / f"pc{n_art:05d}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 88])
            n_art += 1
    (out_dir / "real.json").write_text(json.dumps(real))
    print(f"{n_art} art crops, {len(real)} annotated training pages")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
