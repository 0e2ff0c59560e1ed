"""Who speaks each balloon: the figure its tail points at, described by colour, linked across pages."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import BBox, PageReading, TextRegion
from comic_narrator.reading.bubbles import TextBlock
from comic_narrator.reading.geometry import centre, clip_box

SIGNATURE_HUE_BINS = 12
_SAME_FIGURE_DISTANCE = 0.5
"""Signatures closer than this (half the L1 distance of two normalised histograms) are the same figure."""


def speaker_anchor(block: TextBlock, panel_box: BBox | None) -> tuple[float, float]:
    """Where the speaker probably is: past the tail tip along the tail, else just below the balloon."""
    box = block.bubble.bbox if block.bubble is not None else block.bbox
    cx, cy = centre(box)
    size = float(max(box[2], box[3]))
    if block.bubble is not None and block.bubble.tail_xy is not None:
        tx, ty = block.bubble.tail_xy
        dx, dy = tx - cx, ty - cy
        norm = math.hypot(dx, dy) or 1.0
        return (tx + dx / norm * 0.6 * size, ty + dy / norm * 0.6 * size)
    return (cx, box[1] + box[3] + 0.6 * box[3])


def appearance_signature(
    image_rgb: npt.NDArray[np.uint8], anchor_xy: tuple[float, float], window_px: int, exclude: BBox
) -> tuple[float, ...]:
    """Histogram of the art around the anchor (balloon and outlines left out): the hues of its coloured pixels
    when there are some (8% or more), else three lightness bins. A coloured and a grey signature are 1.0 apart."""
    height_px, width_px = image_rgb.shape[:2]
    half = max(8, window_px // 2)
    x, y, w, h = clip_box(
        (round(anchor_xy[0]) - half, round(anchor_xy[1]) - half, 2 * half, 2 * half), width_px, height_px
    )
    bins = SIGNATURE_HUE_BINS + 3
    if w < 4 or h < 4:
        return tuple([0.0] * bins)
    patch = image_rgb[y : y + h, x : x + w]
    hsv = cv2.cvtColor(np.ascontiguousarray(patch), cv2.COLOR_RGB2HSV).reshape(-1, 3).astype(np.int32)
    keep = np.ones(len(hsv), dtype=bool)
    ex0, ey0, ew, eh = exclude
    yy, xx = np.mgrid[y : y + h, x : x + w]
    inside = (xx >= ex0) & (xx < ex0 + ew) & (yy >= ey0) & (yy < ey0 + eh)
    keep &= ~inside.reshape(-1)
    everything = hsv[keep]
    sel = everything[everything[:, 2] > 50]  # in colour art, outlines and shadows carry no identity
    if len(sel) < 16:
        return tuple([0.0] * bins)
    colourful = sel[:, 1] > 60
    if colourful.mean() >= 0.08:
        # Colour carries identity (a costume, hair, skin); the grey of paper, sky and shading does not.
        hist = np.concatenate(
            [np.bincount(sel[colourful, 0] * SIGNATURE_HUE_BINS // 180, minlength=SIGNATURE_HUE_BINS), np.zeros(3)]
        ).astype(np.float64)
    else:
        # Black-and-white art: only the lightness mix is left, solid blacks (hair, clothes) included.
        grey = np.digitize(everything[:, 2], [70, 185])
        hist = np.concatenate([np.zeros(SIGNATURE_HUE_BINS), np.bincount(grey, minlength=3)]).astype(np.float64)
    total = float(hist.sum())
    return tuple(float(v) for v in hist / total) if total > 0 else tuple([0.0] * bins)


def signature_distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    if not a or not b or len(a) != len(b) or sum(a) == 0 or sum(b) == 0:
        return 1.0
    return 0.5 * float(sum(abs(x - y) for x, y in zip(a, b, strict=True)))


Register = Literal["polite", "blunt", "feminine"]

# Sentence ends and words that mark how a Japanese line is said (its register), not what it says. Plain copula
# endings (だ, だよ, だな) count as blunt: they are a man's casual speech to an equal or below.
_REGISTER_MARKS: tuple[tuple[Register, re.Pattern[str]], ...] = (
    ("feminine", re.compile(r"わ[!?！？…。ー〜]*$|わよ|わね|かしら|のよ[!?！？…。]*$|のね[!?！？…。]*$|あたし")),
    ("polite", re.compile(r"です|ます|まし[たょ]|ません|でし[たょ]|下さい|ください|ございま")),
    (
        "blunt",
        re.compile(
            r"俺|オレ|おれ|お前|おまえ|てめ|貴様|ぞ[!?！？…。]*$|ぜ[!?！？…。]*$|じゃねえ|じゃねー|ねーよ|しろ[!！…。]*$"
            r"|かよ|だろ|んだよ|だ[!?！？…。]*$|だな|だよ|なー|なあ"
        ),
    ),
)


def speech_register(text: str) -> Register | None:
    """How a Japanese line is said: polite (です/ます), blunt (俺/お前/ぞ/plain だ) or feminine (わ/かしら/のよ), by
    which marks it holds most of (feminine first: it rides on polite or plain speech); None for a line without
    marks or not in Japanese."""
    counts = {name: len(pattern.findall(text.strip())) for name, pattern in _REGISTER_MARKS}
    if counts["feminine"]:
        return "feminine"
    if counts["polite"] and counts["polite"] >= counts["blunt"]:
        return "polite"
    return "blunt" if counts["blunt"] else None


@dataclass(frozen=True)
class Utterance:
    """What the speaker heuristic knows of one balloon: where it is, what its pointed-at figure looks like and
    how its line is said."""

    page: int
    panel: int
    centre_x_frac: float
    """Balloon centre as a fraction of the page width."""
    signature: tuple[float, ...]
    register: Register | None = None


def is_colourful(signature: tuple[float, ...]) -> bool:
    """A hue signature (coloured art around the figure), as opposed to the lightness bins of grey art."""
    return sum(signature[:SIGNATURE_HUE_BINS]) > 0


def speaker_distance(a: Utterance, b: Utterance) -> float:
    """Appearance distance, halved for two balloons stacked on the same side of one panel (a speaker who goes
    on talking: the usual layout of a continued line)."""
    distance = signature_distance(a.signature, b.signature)
    if a.page == b.page and a.panel == b.panel and a.panel >= 0 and abs(a.centre_x_frac - b.centre_x_frac) < 0.15:
        distance *= 0.5
    return distance


class SpeakerLinker:
    """Book-wide character ids, grown page by page in reading order. Pages must be added in book order; the ids
    then do not depend on how many pages were read ahead, so a page's own cached reading stays valid.

    Coloured art: each speaking balloon joins the character whose balloons it looks most like (average linkage
    of hue signatures), or starts a new one; the speaker of the previous balloon is favoured (its distance counts
    0.8 times): a character often speaks several balloons in a row, and a colour histogram is noisy evidence.

    Grey art, where what a tail points at carries no identity that a histogram can see (measured on 169 annotated
    manga lines: grouping by it scored below one id for everybody), a balloon goes on with the previous speaker
    when it is in the same panel or its line has no register marks; a line whose register (polite, blunt,
    feminine) differs from the previous speaker's goes to the latest character who spoke in that register, or
    starts one. So a book gets a few voices that follow how people speak (a junior's polite lines apart from his
    seniors' blunt ones) instead of ids that follow the shading behind the balloons."""

    def __init__(self, threshold: float = _SAME_FIGURE_DISTANCE) -> None:
        self.threshold = threshold
        self.items: list[Utterance] = []
        self.clusters: list[list[int]] = []
        self.registers: list[Register | None] = []
        self.previous = -1
        self.pages = 0

    def _by_register(self, item: Utterance) -> int:
        """The cluster a balloon of grey art joins (-1: a new one)."""
        last = self.items[-1] if self.items else None
        if self.previous < 0 or last is None:
            return -1
        same_panel = last.page == item.page and last.panel == item.panel and item.panel >= 0
        spoken = self.registers[self.previous]
        if same_panel or item.register is None or spoken in (None, item.register):
            return self.previous
        return max((c for c, r in enumerate(self.registers) if r == item.register), default=-1)

    def assign(self, item: Utterance) -> int:
        """The cluster index (numbered by first appearance) the utterance joins."""
        best, best_d = -1, self.threshold
        if not is_colourful(item.signature):
            best = self._by_register(item)
        else:
            for c, members in enumerate(self.clusters):
                coloured = [m for m in members if is_colourful(self.items[m].signature)]
                if not coloured:
                    continue
                d = float(np.mean([speaker_distance(item, self.items[m]) for m in coloured]))
                if c == self.previous:
                    d *= 0.8
                if d < best_d:
                    best, best_d = c, d
        self.items.append(item)
        if best < 0:
            self.clusters.append([len(self.items) - 1])
            self.registers.append(None)
            best = len(self.clusters) - 1
        else:
            self.clusters[best].append(len(self.items) - 1)
        if self.registers[best] is None:
            self.registers[best] = item.register
        self.previous = best
        return best

    def add_page(self, reading: PageReading) -> PageReading:
        """The page with its speakers renamed to book-wide ids (``char1``, ``char2``, ...)."""
        texts: list[TextRegion] = []
        for text in reading.texts:
            if text.speaker is None or not text.speaker_signature:
                texts.append(text)
                continue
            item = Utterance(
                page=self.pages,
                panel=text.panel,
                centre_x_frac=(text.bbox[0] + text.bbox[2] / 2) / max(reading.width, 1),
                signature=tuple(text.speaker_signature),
                register=speech_register(text.text) if text.lang == "ja" else None,
            )
            texts.append(text.model_copy(update={"speaker": f"char{self.assign(item) + 1}"}))
        self.pages += 1
        return reading.model_copy(update={"texts": texts})


def cluster_utterances(items: list[Utterance], threshold: float = _SAME_FIGURE_DISTANCE) -> list[int]:
    """Average-linkage clustering in reading order (see :class:`SpeakerLinker`): a cluster index per item."""
    linker = SpeakerLinker(threshold)
    return [linker.assign(item) for item in items]


def link_speakers(readings: list[PageReading]) -> list[PageReading]:
    """Character ids consistent across the book: balloons whose pointed-at figures look alike share an id."""
    linker = SpeakerLinker()
    return [linker.add_page(reading) for reading in readings]
