"""What an LLM answer may change in a page's local reading: checks that confine a model misled by the page itself
(lettering that says "ignore previous instructions ...") to the region that misled it."""

from __future__ import annotations

import re

from comic_narrator.artifacts import TextKind
from comic_narrator.reading.metrics import edit_distance, normalise_letters

CORRECTION_SLACK_EDITS = 2
"""Edits any corrected text may make, however short the lettering."""
CORRECTION_EDIT_SHARE = 0.4
"""Edits a corrected text may make per letter of the longer of the two texts (letters and digits, NFKC,
case-folded). Measured (benchmarks/llm_text_checks.py): the corpus's ground truth against its OCR needs at most
0.17 per letter where OCR was sure; a balloon rewritten into another balloon's words passes 3 % of the time, all
of them a few letters long."""
UNSURE_OCR = 0.7
"""OCR confidence under which a region's reading is taken as unknown (the garbled sound words of the corpus read
0.51-0.60, its median is 0.98): any correction is accepted whose letters number at most UNSURE_LETTERS_FACTOR x
OCR's + CORRECTION_SLACK_EDITS + 2."""
UNSURE_LETTERS_FACTOR = 3

KIND_GROUPS: dict[TextKind, frozenset[str]] = {
    "speech": frozenset({"speech", "shout"}),
    "shout": frozenset({"speech", "shout", "sound"}),
    "sound": frozenset({"sound", "shout"}),
    "caption": frozenset({"caption"}),
    "furniture": frozenset({"furniture"}),
}
"""The kinds the model may give a region the local reader found as each kind. What the local kind rests on is
the geometry (a balloon, a caption box, lettering with no container): lettering in a balloon is said, loud or
not; a caption box stays the narrator's; lettering outside any container may be a sound or a cry (a shout), and a
shout may be a sound. A caption never becomes speech, nor speech a caption or a sound."""

INSTRUCTIONS = re.compile(
    r"\b(ignore|disregard|forget|override)\b[^.!?\n]{0,40}\b(instructions?|prompts?|rules|directions)\b"
    r"|\bsystem prompt\b|\bnew instructions\b|\byou are now (a|an|the)\b",
    re.IGNORECASE,
)
"""Lettering that addresses the reader rather than the story: the page's answer is then not trusted beyond the
checks that compare it with the page (corrected texts, kinds)."""

DISTRUST_AFTER_REJECTED = 2
"""Regions whose corrected text or kind fails its check before the whole answer is distrusted: a model that
rewrote two balloons has stopped reading the page."""


def lettering_distance(ocr_text: str, corrected: str) -> tuple[int, int]:
    """(edits, letters): the edit distance between the two texts' letters and digits, and the longer's length."""
    a, b = normalise_letters(ocr_text), normalise_letters(corrected)
    return edit_distance(a, b), max(len(a), len(b))


def plausible_correction(ocr_text: str, corrected: str, confidence: float = 1.0) -> bool:
    """Whether ``corrected`` can be the lettering OCR read as ``ocr_text`` with ``confidence``: at most
    CORRECTION_SLACK_EDITS + CORRECTION_EDIT_SHARE x letters edits, or, where OCR was unsure, not much longer."""
    if confidence < UNSURE_OCR:
        ocr_letters, new_letters = len(normalise_letters(ocr_text)), len(normalise_letters(corrected))
        return new_letters <= UNSURE_LETTERS_FACTOR * ocr_letters + CORRECTION_SLACK_EDITS + 2
    edits, letters = lettering_distance(ocr_text, corrected)
    return edits <= CORRECTION_SLACK_EDITS + CORRECTION_EDIT_SHARE * letters


def kind_allowed(local: TextKind, answered: str) -> bool:
    return answered in KIND_GROUPS[local]


def addresses_the_reader(text: str) -> bool:
    """Lettering that reads as instructions to the model reading the page."""
    return INSTRUCTIONS.search(text) is not None
