"""How far real corrections move a region's text from what OCR read, against the LLM reader's bound on a corrected
text (reading/llm_checks.py: ``plausible_correction``).

    python benchmarks/llm_text_checks.py [-v]

The corpus's ground truth stands for a perfect correction: each ground-truth text of ../shared/corpus's annotated
pages (Pepper&Carrot ep. 17 pages 1-4, English; Wikipe-tan page 1, Japanese; Black Jack vol. 1 pages 41-60,
Japanese, annotated in training/eval with the pages in ../shared/training) is matched to the region the local
reader found for it (by box, or by content where the truth has no boxes), the texts of one region joined in
reading order, and the distance measured as the reader measures it (edits over the letters and digits of the
longer text, NFKC and case-folded, with the region's OCR confidence). Pepper&Carrot's truth is the translation
script, not the lettering ("Woosh !" is lettered "woooosh !"), so its distances are larger than a correction of
the lettering needs. Prints each pair the bound refuses (every pair with -v), the share of pairs the bound
accepts, and the same for rewrites (each region's truth against another region's OCR text: what an answer that
rewrote a balloon would look like).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"

from comic_narrator.config import IngestConfig, VisionConfig  # noqa: E402
from comic_narrator.pipeline import load_or_ingest  # noqa: E402
from comic_narrator.reading.llm_checks import lettering_distance, plausible_correction  # noqa: E402
from comic_narrator.reading.metrics import match_text_boxes, match_texts_by_content  # noqa: E402
from comic_narrator.reading.stage import read_pages  # noqa: E402


def pairs(folder: Path, work: Path) -> list[tuple[str, str, float]]:
    """(OCR text, ground truth joined, OCR confidence) for every region the truth was matched to."""
    gt = json.loads((folder / "gt.json").read_text(encoding="utf-8"))
    found: list[tuple[str, str, float]] = []
    for index, gt_page in enumerate(gt["pages"]):
        path = folder / str(gt.get("image_dir", ".")) / gt_page["image"]
        book = load_or_ingest(path, IngestConfig(), work / f"{folder.name}-{index}")
        reading = read_pages(book, VisionConfig(), work / f"{folder.name}-{index}")[0].pages[0]
        story = [t for t in reading.texts if t.kind != "furniture"]
        truth = [t for panel in gt_page["panels"] for t in panel["texts"]]
        if truth and all(t.get("bbox") for t in truth):
            match = match_text_boxes([tuple(t["bbox"]) for t in truth], [t.bbox for t in story])
        else:
            match = match_texts_by_content([t["text"] for t in truth], [t.text for t in story])
        joined: dict[int, list[str]] = {}
        for g, p in sorted(match.items()):
            joined.setdefault(p, []).append(truth[g]["text"])
        found += [(story[p].text, " ".join(texts), story[p].confidence) for p, texts in sorted(joined.items())]
    return found


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    folders = [CORPUS / "peppercarrot-ep17", CORPUS / "wikipe-tan", REPO / "training/eval/blackjack-vol01-p41-60"]
    if not all((folder / "gt.json").is_file() for folder in folders):
        print(f"the annotated corpus ({CORPUS}) is absent", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as work:
        found = [pair for folder in folders for pair in pairs(folder, Path(work))]
    print("edits letters accepted  OCR -> truth")
    for ocr_text, truth, confidence in found:
        edits, letters = lettering_distance(ocr_text, truth)
        ok = plausible_correction(ocr_text, truth, confidence)
        if verbose or not ok:
            print(f"{edits:5d} {letters:7d} {ok!s:8}  {ocr_text!r} ({confidence:.2f}) -> {truth!r}")
    shares = sorted(e / max(n, 1) for e, n in (lettering_distance(o, t) for o, t, _ in found))
    print(
        "edits per letter, quantiles 0.5 / 0.9 / 0.95 / 0.99 / max:",
        " / ".join(f"{shares[min(len(shares) - 1, int(q * len(shares)))]:.3f}" for q in (0.5, 0.9, 0.95, 0.99, 1.0)),
    )
    accepted = sum(plausible_correction(o, t, c) for o, t, c in found)
    print(f"corrections accepted: {accepted} of {len(found)}")
    rewrites = [(o, t, c) for i, (o, _, c) in enumerate(found) for j, (_, t, _) in enumerate(found) if i != j]
    passed = sum(plausible_correction(o, t, c) for o, t, c in rewrites)
    print(f"rewrites (another region's truth) accepted: {passed} of {len(rewrites)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
