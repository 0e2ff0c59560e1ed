"""Scoring a reading against ground truth: read the pages of a gt.json folder and score panels, order, text and
speakers (`comic-narrator eval DIR` is cli/eval.py)."""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox, PageImage, PageReading
from comic_narrator.backends.protocols import OcrEngine
from comic_narrator.config import IngestConfig, VisionConfig
from comic_narrator.errors import InputError
from comic_narrator.ingest.images import decode_image
from comic_narrator.reading.direction import script_language
from comic_narrator.reading.geometry import overlap_of_smaller
from comic_narrator.reading.metrics import (
    best_speaker_mapping,
    edit_distance,
    in_order,
    kendall_tau,
    match_boxes,
    match_text_boxes,
    match_texts_by_content,
    normalise_letters,
    pairwise_speaker_f1,
)
from comic_narrator.reading.reader import book_language, follow_book_direction, read_page
from comic_narrator.reading.speakers import link_speakers


@dataclass
class PageScore:
    image: str
    lang: Literal["en", "ja"]
    seconds: float
    panels_gt: int
    panels_pred: int
    panels_matched: int
    panel_precision: float
    panel_recall: float
    panel_f1: float
    panel_order_exact: bool
    panel_kendall_tau: float
    texts_gt: int
    texts_found: int
    text_recall: float
    text_order_exact: bool
    text_kendall_tau: float
    order_exact: bool
    cer_edits: int
    cer_letters: int
    cer: float
    speakers_known: int
    speaker_pairs: list[tuple[str | None, str]] = field(default_factory=list)
    kinds_right: int = 0
    """Found texts whose kind (speech/shout/caption/sound) agrees with the ground truth."""


@dataclass
class Summary:
    folder: str
    pages: int
    panel_precision: float
    panel_recall: float
    panel_f1: float
    order_exact_rate: float
    panel_kendall_tau: float
    text_kendall_tau: float
    text_recall: float
    cer_by_lang: dict[str, float]
    speaker_accuracy: float | None
    speakers_known: int
    speaker_pair_f1: float | None
    """Lines of one character grouped together, different characters kept apart: F1 over line pairs."""
    speaker_pair_f1_one_id: float | None
    """The same measure for one id given to every line: the floor a speaker guesser must beat."""
    kind_accuracy: float | None
    seconds_per_page: float
    page_scores: list[PageScore]


def annotated_page(path: Path, image: npt.NDArray[np.uint8], index: int) -> PageImage:
    """The PageImage of the index-th page of an annotated set (gt.json), decoded from ``path``."""
    return PageImage(
        index=index,
        source=str(path),
        source_page_number=index + 1,
        image_file=path.name,
        width_px=int(image.shape[1]),
        height_px=int(image.shape[0]),
        sha256="",
    )


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def score_page(reading: PageReading, gt_page: dict[str, Any], non_story: list[BBox], seconds: float) -> PageScore:
    gt_panels: list[BBox] = [tuple(p["bbox"]) for p in gt_page["panels"]]  # type: ignore[misc]
    pred_panels = [p.bbox for p in reading.panels]
    matched = match_boxes(gt_panels, pred_panels)
    precision = len(matched) / len(pred_panels) if pred_panels else (1.0 if not gt_panels else 0.0)
    recall = len(matched) / len(gt_panels) if gt_panels else 1.0
    panel_ranks = [matched[g] for g in range(len(gt_panels)) if g in matched]
    panel_order_exact = len(matched) == len(gt_panels) and in_order(panel_ranks)

    gt_texts = [t for p in gt_page["panels"] for t in p["texts"]]
    lang = script_language([t["text"] for t in gt_texts]) or "en"
    # Furniture is not story lettering: it is neither matched to a line nor counted as misread text.
    pred_texts = [
        t
        for t in reading.texts
        if t.kind != "furniture" and not any(overlap_of_smaller(t.bbox, r) >= 0.5 for r in non_story)
    ]
    if gt_texts and all(t.get("bbox") for t in gt_texts):
        text_match = match_text_boxes([tuple(t["bbox"]) for t in gt_texts], [t.bbox for t in pred_texts])
    else:
        text_match = match_texts_by_content([t["text"] for t in gt_texts], [t.text for t in pred_texts])
    text_ranks: list[int] = []
    for g in range(len(gt_texts)):
        if g in text_match and (not text_ranks or text_match[g] != text_ranks[-1]):
            text_ranks.append(text_match[g])
    text_order_exact = all(a <= b for a, b in itertools.pairwise(text_ranks))

    gt_letters = "".join(normalise_letters(t["text"]) for t in gt_texts if t["kind"] != "sound")
    pred_letters = "".join(normalise_letters(t.text) for t in pred_texts if t.kind != "sound")
    edits = edit_distance(pred_letters, gt_letters)

    kinds_right = sum(1 for g, p in text_match.items() if pred_texts[p].kind == gt_texts[g]["kind"])
    pairs: list[tuple[str | None, str]] = []
    for g, t in enumerate(gt_texts):
        if t.get("speaker"):
            pred_speaker = pred_texts[text_match[g]].speaker if g in text_match else None
            pairs.append((pred_speaker, str(t["speaker"])))
    return PageScore(
        image=str(gt_page["image"]),
        lang=lang,
        seconds=round(seconds, 3),
        panels_gt=len(gt_panels),
        panels_pred=len(pred_panels),
        panels_matched=len(matched),
        panel_precision=round(precision, 4),
        panel_recall=round(recall, 4),
        panel_f1=round(_f1(precision, recall), 4),
        panel_order_exact=panel_order_exact,
        panel_kendall_tau=round(kendall_tau(panel_ranks), 4),
        texts_gt=len(gt_texts),
        texts_found=len(text_match),
        text_recall=round(len(text_match) / len(gt_texts), 4) if gt_texts else 1.0,
        text_order_exact=text_order_exact,
        text_kendall_tau=round(kendall_tau(text_ranks), 4),
        order_exact=panel_order_exact and text_order_exact,
        cer_edits=edits,
        cer_letters=len(gt_letters),
        cer=round(edits / len(gt_letters), 4) if gt_letters else 0.0,
        speakers_known=len(pairs),
        speaker_pairs=pairs,
        kinds_right=kinds_right,
    )


def evaluate_folder(folder: Path, ocr: OcrEngine, config: VisionConfig) -> Summary:
    gt_file = folder / "gt.json"
    if not gt_file.is_file():
        raise InputError("no gt.json in this folder (schema: ../shared/corpus/README.md)", path=folder)
    try:
        gt = json.loads(gt_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"gt.json does not parse: {exc}", path=gt_file) from exc
    non_story: list[BBox] = [tuple(r["bbox_xywh"]) for r in gt.get("non_story_regions", [])]  # type: ignore[misc]
    readings: list[PageReading] = []
    timings: list[float] = []
    # The pages may live elsewhere (annotations kept in the repository, pages in ../shared): "image_dir" is
    # relative to the folder holding gt.json.
    image_dir = folder / str(gt.get("image_dir", "."))
    if not image_dir.is_dir():
        raise InputError(f"the pages folder {image_dir} named by gt.json's image_dir is absent", path=gt_file)
    for index, gt_page in enumerate(gt["pages"]):
        path = image_dir / gt_page["image"]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read page image: {exc}", path=path) from exc
        # The same decoding as a narrated book's pages: 16-bit, CMYK, palette and alpha pages score as they read.
        image = decode_image(data, source=str(path), max_pixels=IngestConfig().max_image_pixels)
        page = annotated_page(path, image, index)
        started = time.perf_counter()
        readings.append(read_page(image, page, config=config, manga_hint=None, ocr=ocr))
        timings.append(time.perf_counter() - started)
    # The folder is one book: its wordless pages read the way its lettered ones say (a narrated run does the same).
    book_lang = book_language(readings)
    readings = [follow_book_direction(r, book_lang, config, None) for r in readings]
    linked = link_speakers(readings)
    scores = [score_page(r, g, non_story, s) for r, g, s in zip(linked, gt["pages"], timings, strict=True)]
    return summarise(folder.name, scores)


def summarise(name: str, scores: list[PageScore]) -> Summary:
    gt_n = sum(s.panels_gt for s in scores)
    pred_n = sum(s.panels_pred for s in scores)
    hit = sum(s.panels_matched for s in scores)
    precision = hit / pred_n if pred_n else 0.0
    recall = hit / gt_n if gt_n else 0.0
    cer_by_lang: dict[str, float] = {}
    for lang in ("en", "ja"):
        letters = sum(s.cer_letters for s in scores if s.lang == lang)
        if letters:
            cer_by_lang[lang] = round(sum(s.cer_edits for s in scores if s.lang == lang) / letters, 4)
    pairs = [p for s in scores for p in s.speaker_pairs]
    correct, _mapping = best_speaker_mapping(pairs)
    pair_f1 = pairwise_speaker_f1(pairs)[2] if len(pairs) >= 2 else None
    one_id_f1 = pairwise_speaker_f1([("all", g) for _p, g in pairs])[2] if len(pairs) >= 2 else None
    texts_gt = sum(s.texts_gt for s in scores)
    texts_found = sum(s.texts_found for s in scores)
    return Summary(
        folder=name,
        pages=len(scores),
        panel_precision=round(precision, 4),
        panel_recall=round(recall, 4),
        panel_f1=round(_f1(precision, recall), 4),
        order_exact_rate=round(sum(s.order_exact for s in scores) / len(scores), 4) if scores else 0.0,
        panel_kendall_tau=round(float(np.mean([s.panel_kendall_tau for s in scores])), 4) if scores else 0.0,
        text_kendall_tau=round(float(np.mean([s.text_kendall_tau for s in scores])), 4) if scores else 0.0,
        text_recall=round(sum(s.texts_found for s in scores) / texts_gt, 4) if texts_gt else 1.0,
        cer_by_lang=cer_by_lang,
        speaker_accuracy=round(correct / len(pairs), 4) if pairs else None,
        speakers_known=len(pairs),
        speaker_pair_f1=round(pair_f1, 4) if pair_f1 is not None else None,
        speaker_pair_f1_one_id=round(one_id_f1, 4) if one_id_f1 is not None else None,
        kind_accuracy=round(sum(s.kinds_right for s in scores) / texts_found, 4) if texts_found else None,
        seconds_per_page=round(float(np.mean([s.seconds for s in scores])), 3) if scores else 0.0,
        page_scores=scores,
    )


def format_summary(summary: Summary) -> str:
    lines = [f"{summary.folder}: {summary.pages} page(s)"]
    for s in summary.page_scores:
        lines.append(
            f"  {s.image:<24} panels P/R/F1 {s.panel_precision:.2f}/{s.panel_recall:.2f}/{s.panel_f1:.2f}"
            f" ({s.panels_matched}/{s.panels_gt} gt, {s.panels_pred} read)"
            f"  order {'exact' if s.order_exact else 'WRONG'}"
            f" tau {s.panel_kendall_tau:+.2f}/{s.text_kendall_tau:+.2f}  text recall {s.text_recall:.2f}"
            f" ({s.texts_found}/{s.texts_gt})  CER {s.cer:.3f} ({s.lang})  {s.seconds:.2f}s"
        )
    cer = ", ".join(f"{k} {v:.3f}" for k, v in summary.cer_by_lang.items()) or "n/a"
    speakers = (
        f"{summary.speaker_accuracy:.2f} over {summary.speakers_known} known"
        if summary.speaker_accuracy is not None
        else "n/a (no speakers in gt)"
    )
    if summary.speaker_pair_f1 is not None:
        speakers += f" (pair F1 {summary.speaker_pair_f1:.2f}; one id for all {summary.speaker_pair_f1_one_id:.2f})"
    lines.append(
        f"  overall: panel P/R/F1 {summary.panel_precision:.3f}/{summary.panel_recall:.3f}/{summary.panel_f1:.3f}"
        f"  order exact {summary.order_exact_rate:.2f}  tau panels {summary.panel_kendall_tau:+.2f}"
        f" texts {summary.text_kendall_tau:+.2f}  text recall {summary.text_recall:.3f}  CER {cer}"
        f"  kinds {summary.kind_accuracy if summary.kind_accuracy is not None else 'n/a'}"
        f"  speakers {speakers}  {summary.seconds_per_page:.2f} s/page"
    )
    return "\n".join(lines)
