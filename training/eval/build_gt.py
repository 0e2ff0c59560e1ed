"""Join the hand annotations of a page range (panels from one file, lines and speakers from another) into one
corpus-schema gt.json that `comic-narrator eval` reads, with `image_dir` pointing at the pages.

    python training/eval/build_gt.py PANELS.json SPEAKERS.json IMAGE_DIR OUT_DIR
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _inside(text: list[int], panel: list[int]) -> float:
    ix = max(0, min(text[0] + text[2], panel[0] + panel[2]) - max(text[0], panel[0]))
    iy = max(0, min(text[1] + text[3], panel[1] + panel[3]) - max(text[1], panel[1]))
    return ix * iy / max(1, text[2] * text[3])


def main(panels_file: Path, speakers_file: Path, image_dir: Path, out_dir: Path) -> None:
    panels = {p["image"]: p for p in json.loads(panels_file.read_text(encoding="utf-8"))["pages"]}
    speakers = json.loads(speakers_file.read_text(encoding="utf-8"))
    pages = []
    for page in speakers["pages"]:
        boxes = [dict(order=p["order"], bbox=p["bbox"], texts=[]) for p in panels[page["image"]]["panels"]]
        for text in page["texts"]:
            best = max(range(len(boxes)), key=lambda i: _inside(text["bbox"], boxes[i]["bbox"]))
            entry = {k: text[k] for k in ("kind", "text", "speaker", "bbox")}
            entry["order"] = len(boxes[best]["texts"]) + 1
            boxes[best]["texts"].append(entry)
        pages.append(dict(image=page["image"], width=page["width"], height=page["height"],
                          reading_direction=page["reading_direction"], panels=boxes))
    out_dir.mkdir(parents=True, exist_ok=True)
    gt = {
        "source": speakers["source"],
        "box_accuracy": "panels +-15 px on a grid; text boxes from OCR corrected by hand, +-10 px",
        "image_dir": os.path.relpath(image_dir.resolve(), out_dir.resolve()),
        "pages": pages,
    }
    (out_dir / "gt.json").write_text(json.dumps(gt, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(pages)} pages, {sum(len(p['texts']) for p in speakers['pages'])} lines -> {out_dir / 'gt.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
