"""`comic-narrator eval DIR`: read every page listed in DIR/gt.json and print the scores (reading/evaluate.py)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from comic_narrator.artifacts import Layout
from comic_narrator.config import VisionConfig
from comic_narrator.errors import ComicNarratorError
from comic_narrator.reading.evaluate import evaluate_folder, format_summary


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="comic-narrator eval",
        description="Read every page listed in DIR/gt.json and score the reading against it.",
    )
    parser.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="folder(s) holding gt.json and pages")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--layout", choices=["auto", "manga", "western", "webtoon"], default="auto")
    parser.add_argument("--lang", choices=["auto", "en", "ja"], default="auto")
    parser.add_argument("--panels", choices=["auto", "model", "classical"], default=VisionConfig.panels)
    args = parser.parse_args(argv)
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine

    layout: Layout = args.layout
    config = VisionConfig(layout=layout, lang=args.lang, panels=args.panels)
    try:
        with RapidOcrEngine() as ocr:
            summaries = [evaluate_folder(folder, ocr, config) for folder in args.folders]
    except ComicNarratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.json:
        print(json.dumps([asdict(s) for s in summaries], indent=1, ensure_ascii=False))
    else:
        print("\n".join(format_summary(s) for s in summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
