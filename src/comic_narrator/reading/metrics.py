"""Scores of a reading against ground truth: box matching, precision/recall, order agreement, CER."""

from __future__ import annotations

import difflib
import itertools
import unicodedata
from collections import Counter
from collections.abc import Sequence

from comic_narrator.artifacts import BBox
from comic_narrator.reading.geometry import iou, overlap_of_smaller


def normalise_letters(text: str) -> str:
    """The corpus CER alphabet: NFKC, case-folded, letters and digits only (no whitespace, no punctuation)."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def edit_distance(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def match_boxes(gt: Sequence[BBox], pred: Sequence[BBox], min_iou: float = 0.5) -> dict[int, int]:
    """Greedy one-to-one matching by IoU (highest first): gt index -> pred index."""
    pairs = sorted(((iou(g, p), gi, pi) for gi, g in enumerate(gt) for pi, p in enumerate(pred)), reverse=True)
    used_gt: set[int] = set()
    used_pred: set[int] = set()
    out: dict[int, int] = {}
    for score, gi, pi in pairs:
        if score < min_iou:
            break
        if gi in used_gt or pi in used_pred:
            continue
        out[gi] = pi
        used_gt.add(gi)
        used_pred.add(pi)
    return out


def match_text_boxes(gt: Sequence[BBox], pred: Sequence[BBox], min_overlap: float = 0.5) -> dict[int, int]:
    """gt text -> the predicted text covering it best (a balloon read as two pieces still counts once)."""
    out: dict[int, int] = {}
    for gi, g in enumerate(gt):
        best, best_score = -1, min_overlap
        for pi, p in enumerate(pred):
            score = overlap_of_smaller(g, p)
            if score >= best_score:
                best, best_score = pi, score
        if best >= 0:
            out[gi] = best
    return out


def letters_found(gt_letters: str, pred_letters: str) -> float:
    """Share of the gt text's letters that appear, in order, in the predicted text."""
    if not gt_letters:
        return 0.0
    matcher = difflib.SequenceMatcher(None, gt_letters, pred_letters, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(gt_letters)


def match_texts_by_content(gt: Sequence[str], pred: Sequence[str], min_found: float = 0.6) -> dict[int, int]:
    """For texts without boxes: gt text -> the predicted text that contains most of its letters."""
    out: dict[int, int] = {}
    gt_norm = [normalise_letters(t) for t in gt]
    pred_norm = [normalise_letters(t) for t in pred]
    for gi, g in enumerate(gt_norm):
        best, best_score = -1, min_found
        for pi, p in enumerate(pred_norm):
            score = letters_found(g, p)
            if score >= best_score and score > 0:
                best, best_score = pi, score
        if best >= 0:
            out[gi] = best
    return out


def kendall_tau(ranks: Sequence[int]) -> float:
    """Kendall's tau between 0..n-1 and ``ranks`` (1.0 same order, -1.0 reversed, 1.0 for fewer than 2)."""
    n = len(ranks)
    if n < 2:
        return 1.0
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            if ranks[i] < ranks[j]:
                concordant += 1
            elif ranks[i] > ranks[j]:
                discordant += 1
    total = n * (n - 1) / 2
    return (concordant - discordant) / total


def in_order(ranks: Sequence[int]) -> bool:
    return all(a < b for a, b in itertools.pairwise(ranks))


def best_speaker_mapping(pairs: Sequence[tuple[str | None, str]]) -> tuple[int, dict[str, str]]:
    """One-to-one mapping of predicted ids to gt names maximising agreement: (correct count, mapping)."""
    counts = Counter((p, g) for p, g in pairs if p is not None)
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for (pred_id, name), _n in counts.most_common():
        if pred_id in mapping or name in used:
            continue
        mapping[pred_id] = name
        used.add(name)
    correct = sum(1 for p, g in pairs if p is not None and mapping.get(p) == g)
    return correct, mapping


def pairwise_speaker_f1(pairs: Sequence[tuple[str | None, str]]) -> tuple[float, float, float]:
    """(precision, recall, F1) over pairs of lines with a known speaker: a pair is positive when both lines are
    the same character. Predicted ids are arbitrary labels, so no mapping is needed; a line read without a speaker
    (or missed, None) pairs with nobody, which counts against recall. Where no two lines share a character the
    scores are 1.0 only if no pair was predicted the same either."""
    same_gt = same_pred = both = 0
    for (p1, g1), (p2, g2) in itertools.combinations(pairs, 2):
        gt_same = g1 == g2
        pred_same = p1 is not None and p1 == p2
        same_gt += gt_same
        same_pred += pred_same
        both += gt_same and pred_same
    precision = both / same_pred if same_pred else float(same_gt == 0)
    recall = both / same_gt if same_gt else float(same_pred == 0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1
