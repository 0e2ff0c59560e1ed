"""Speaker grouping (pair F1 over line pairs) with each cue of the grey-art turn model on and off.

Usage: python benchmarks/speaker_cues.py [--sets DIR ...] [--cache DIR] [--colour] [--lines-only]

For each annotated set (gt.json with speakers) it prints pair F1, against one id for every line, twice: on the
pages as the local reader reads them (rapidocr; the readings are cached in --cache so reruns take seconds), and
on the annotated lines themselves (a perfect reader's panels, text and kinds: what the linking alone is worth).
Develop on p. 21-40; p. 41-60 are held out, to report, never to tune on.

``--colour`` compares the hue past the tail as a cue at several weights (off by default) instead, on lettered
Pepper&Carrot episodes: ``python training/eval/letter_peppercarrot.py
/tmp/pcl ../shared/training/peppercarrot/ep06 ...`` writes them with their annotations, then ``--sets /tmp/pcl/ep06
...``. Episodes 6, 8, 11 and 13 are for developing; 16 and 18 are held out.

``--lines-only`` prints only the measure on the annotated lines, for sets whose pages carry no lettering: the same
episodes' lines in their Japanese translation (``python training/eval/peppercarrot_ja_lines.py /tmp/pcja
../shared/training/peppercarrot/ep06 ...``, then ``--lines-only --sets /tmp/pcja/ep06 ...``), a second Japanese
book for the turn model's cues.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import IngestConfig, VisionConfig
from comic_narrator.ingest.images import decode_image
from comic_narrator.reading.evaluate import annotated_page, score_page
from comic_narrator.reading.metrics import pairwise_speaker_f1
from comic_narrator.reading.reader import read_page
from comic_narrator.reading.speakers import SpeakerLinker
from comic_narrator.reading.turns import SIGNATURE_HUE_BINS, TurnCues

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SETS = [
    REPO / "training" / "eval" / "blackjack-vol01-p21-40",
    REPO / "training" / "eval" / "blackjack-vol01-p41-60",
]
GREY = [0.0] * SIGNATURE_HUE_BINS + [0.2, 0.5, 0.3]
DEFAULTS = TurnCues()
VARIANTS: list[tuple[str, TurnCues]] = [
    ("all cues (default)", DEFAULTS),
    ("without register", replace(DEFAULTS, register=0.0)),
    ("without pronoun", replace(DEFAULTS, pronoun=0.0)),
    ("without names called", replace(DEFAULTS, calls=0.0)),
    ("without question", replace(DEFAULTS, question=0.0)),
    ("with sentence endings", replace(DEFAULTS, ending=1.0)),
    ("greedy (beam 1)", replace(DEFAULTS, beam=1)),
    ("turn priors only", replace(DEFAULTS, register=0.0, pronoun=0.0, calls=0.0, question=0.0)),
]
COLOUR_VARIANTS: list[tuple[str, TurnCues]] = [
    ("turns (default: hue off)", DEFAULTS),
    *[(f"turns + hue, weight {w:g}", replace(DEFAULTS, look=w)) for w in (1.0, 2.0, 4.0, 8.0, 16.0)],
]


def read_set(folder: Path, gt: dict[str, Any], cache: Path, ocr: RapidOcrEngine) -> list[PageReading]:
    """The local reader's reading of each page (from ``cache`` when it holds one)."""
    root = folder / str(gt.get("image_dir", "."))
    out = []
    for index, page in enumerate(gt["pages"]):
        cached = cache / f"{page['image']}.json"
        if cached.is_file():
            out.append(PageReading.model_validate_json(cached.read_text(encoding="utf-8")))
            continue
        path = root / page["image"]
        image = decode_image(path.read_bytes(), source=str(path), max_pixels=IngestConfig().max_image_pixels)
        page_image = annotated_page(path, image, index)
        reading = read_page(image, page_image, config=VisionConfig(), manga_hint=None, ocr=ocr)
        cached.write_text(reading.model_dump_json(), encoding="utf-8")
        out.append(reading)
    return out


def annotated_set(gt: dict[str, Any]) -> list[PageReading]:
    """The annotated pages as a perfect reader would read them: their panels, lines and kinds."""
    out = []
    for index, page in enumerate(gt["pages"]):
        texts = []
        for p, panel in enumerate(page["panels"]):
            for t in panel["texts"]:
                spoken = t["kind"] in ("speech", "shout")
                texts.append(
                    TextRegion(
                        bbox=tuple(t["bbox"]),
                        kind=t["kind"],
                        text=t["text"],
                        speaker="char1" if spoken else None,
                        panel=p,
                        lang="ja" if re.search(r"[ぁ-んァ-ヴ一-龥]", t["text"]) else "en",
                        speaker_signature=GREY if spoken else None,
                    )
                )
        panels = [Panel(bbox=tuple(p["bbox"])) for p in page["panels"]]
        out.append(
            PageReading(
                page=index,
                width=page["width"],
                height=page["height"],
                reading_direction=page["reading_direction"],
                panels=panels,
                texts=texts,
            )
        )
    return out


def pair_f1(gt: dict[str, Any], readings: list[PageReading], link: Callable[[PageReading], PageReading]) -> str:
    scores = [score_page(link(r), g, [], 0.0) for r, g in zip(readings, gt["pages"], strict=True)]
    pairs = [pair for s in scores for pair in s.speaker_pairs]
    f1 = pairwise_speaker_f1(pairs)[2]
    one_id = pairwise_speaker_f1([("one", g) for _, g in pairs])[2]
    attributed = sum(p is not None for p, _ in pairs)
    return f"{f1:.3f} (one id {one_id:.3f}; {attributed}/{len(pairs)} lines attributed)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", nargs="*", type=Path, default=DEFAULT_SETS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/speaker-cues-readings"))
    parser.add_argument(
        "--colour", action="store_true", help="the cues of colour pages instead (the hue at the tail, English names)"
    )
    parser.add_argument(
        "--lines-only", action="store_true", help="only the annotated lines (pages without lettering: no reading)"
    )
    args = parser.parse_args()
    if args.lines_only:
        for folder in args.sets:
            gt = json.loads((folder / "gt.json").read_text(encoding="utf-8"))
            print(f"{folder.name}: pair F1 on the annotated lines")
            for name, cues in COLOUR_VARIANTS if args.colour else VARIANTS:
                print(f"  {name:28s} {pair_f1(gt, annotated_set(gt), SpeakerLinker(cues=cues).add_page)}")
        return 0
    args.cache.mkdir(parents=True, exist_ok=True)
    with RapidOcrEngine() as ocr:
        for folder in args.sets:
            gt = json.loads((folder / "gt.json").read_text(encoding="utf-8"))
            read = read_set(folder, gt, args.cache, ocr)
            perfect = annotated_set(gt)
            print(f"{folder.name}: pair F1 as read | on the annotated lines")
            for name, cues in COLOUR_VARIANTS if args.colour else VARIANTS:
                as_read = pair_f1(gt, read, SpeakerLinker(cues=cues).add_page)
                on_lines = pair_f1(gt, perfect, SpeakerLinker(cues=cues).add_page)
                print(f"  {name:28s} {as_read} | {on_lines}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
