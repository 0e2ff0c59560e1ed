"""Lines of ordinary lettering the OCR's detector swallowed into the box of display lettering beside them.

A story's opening page sets its title in letters several lines tall, often right under (or over) a caption. The
detector then draws one box around the title and the caption line touching it, and the recogniser, reading that
tall box, gives the title alone: Chilling Tales #13's splash lost the second line of its opening narration
("GROSSO, SHRIEKING FOR REVENGE; ...") into "THE SCREAMING SKULL". The recogniser alone, on a band one line tall
at the top and at the bottom of such a box, reads the swallowed line."""

from __future__ import annotations

import re
import statistics

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox
from comic_narrator.backends.protocols import CropRecognizer
from comic_narrator.reading.bubbles import TextLine
from comic_narrator.reading.geometry import intersection_px2

_TALL = 3.0
"""A line at least this many times the page's median letter size is display lettering."""
_BAND = 1.25
"""A band is this many median letters tall (a line and its spacing)."""
_MIN_SCORE = 0.9
_MIN_LETTERS = 8
"""What a band must read to be a line: the recogniser sure of it, and a run of words, not a cut letter's stroke."""
_COVERED = 0.3
"""A band this much covered by a line the detector found holds nothing it swallowed."""


def swallowed_lines(image_rgb: npt.NDArray[np.uint8], lines: list[TextLine], ocr: CropRecognizer) -> list[TextLine]:
    """Lines read from the top and bottom bands of every level line of display lettering, where the detector
    found nothing else."""
    level = [ln for ln in lines if not ln.vertical]
    if len(level) < 3:
        return []
    letter = statistics.median(ln.letter_px for ln in level)
    band_h = round(_BAND * letter)
    height_px, width_px = image_rgb.shape[:2]
    display = [ln for ln in level if ln.letter_px >= _TALL * letter and abs(ln.angle_deg) <= 5]
    bands: list[BBox] = []
    for line in display:
        x, y, w, h = line.bbox
        for top in (y, y + h - band_h):
            box = (x, max(0, top), min(w, width_px - x), min(band_h, height_px - max(0, top)))
            if box[2] > 0 and box[3] > 0 and not _covered(box, lines, line):
                bands.append(box)
    if not bands:
        return []
    read = ocr.recognize_crops([image_rgb[y : y + h, x : x + w] for x, y, w, h in bands])
    # Words of the display lettering read again (a cut through its letters, or the running head printed over the
    # title: Buster Bear's "BUSTER BEAR" over its logo) are nothing new to say.
    display_words = {word for line in display for word in _words(line.text)}
    display_letters = ["".join(_words(line.text)) for line in display]
    found: list[TextLine] = []
    for (x, y, w, h), (text, score) in zip(bands, read, strict=True):
        words = _words(text)
        letters = "".join(words)
        if score < _MIN_SCORE or len(letters) < _MIN_LETTERS or set(words) <= display_words:
            continue
        if any(letters in shown for shown in display_letters):
            continue  # a cut through the display letters themselves ("SCREAMING" read off its tops)
        found.append(
            TextLine(bbox=(x, y, w, h), text=text.strip(), score=score, vertical=False, angle_deg=0.0, letter_px=letter)
        )
    return found


def _words(text: str) -> list[str]:
    return [word for word in re.split(r"[\W_]+", text.lower()) if word]


def _covered(box: BBox, lines: list[TextLine], own: TextLine) -> bool:
    area = box[2] * box[3]
    return any(ln is not own and intersection_px2(box, ln.bbox) > _COVERED * area for ln in lines)
