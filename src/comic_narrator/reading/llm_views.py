"""What one LLM request shows of a page: the whole page, or one panel's crop and the lettering in it (for models
with small image budgets); and the answers of a page's requests joined into one."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from comic_narrator.artifacts import BBox, PageReading

MARGIN_FRAC = 0.02
"""Margin kept around a panel's crop, as a share of the page's long side (a balloon's tail, a border)."""
LOOSE_MARGIN_FRAC = 0.05
"""Margin around lettering outside every panel, whose crop is that lettering alone: enough to show what is near."""


@dataclass(frozen=True)
class View:
    """One request's share of a page: the box the image is cut to and the story regions answered for."""

    box: BBox
    """x, y, width, height in page pixels."""
    indices: list[int]
    """Indices into the page's texts (story lettering only)."""
    panel: int | None = None
    """The panel shown, counted from 1 (0: lettering outside every panel); None: the whole page."""


def whole_page(reading: PageReading) -> View:
    story = [index for index, text in enumerate(reading.texts) if text.kind != "furniture"]
    return View((0, 0, reading.width, reading.height), story)


def _union(boxes: list[BBox], margin: int, width: int, height: int) -> BBox:
    x0 = max(0, min(x for x, _, _, _ in boxes) - margin)
    y0 = max(0, min(y for _, y, _, _ in boxes) - margin)
    x1 = min(width, max(x + w for x, _, w, _ in boxes) + margin)
    y1 = min(height, max(y + h for _, y, _, h in boxes) + margin)
    return (x0, y0, max(1, x1 - x0), max(1, y1 - y0))


def panel_views(reading: PageReading) -> list[View]:
    """One view per panel holding story lettering, in reading order (the panel and its regions, which may cross
    its border, with a margin), then the lettering outside every panel; a page without panels is one view."""
    story = whole_page(reading)
    by_panel: dict[int, list[int]] = {}
    for index in story.indices:
        panel = reading.texts[index].panel
        by_panel.setdefault(panel if 0 <= panel < len(reading.panels) else -1, []).append(index)
    long_side = max(reading.width, reading.height)
    views: list[View] = []
    for panel in sorted(by_panel, key=lambda p: (p < 0, p)):
        indices = by_panel[panel]
        boxes = [reading.texts[index].bbox for index in indices]
        if panel >= 0:
            box = _union([reading.panels[panel].bbox, *boxes], round(MARGIN_FRAC * long_side), *_size(reading))
        else:
            box = _union(boxes, round(LOOSE_MARGIN_FRAC * long_side), *_size(reading))
        views.append(View(box, indices, panel + 1))
    return views or [story]


def _size(reading: PageReading) -> tuple[int, int]:
    return reading.width, reading.height


def joined_answers(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """A page's answers as one: every listed character (by name, first listing first) and every region's item,
    and the settings most of the answers gave (ties: the earlier)."""
    if len(answers) == 1:
        return answers[0]
    characters: dict[str, Any] = {}
    texts: list[Any] = []
    votes: Counter[str] = Counter()
    first: dict[str, int] = {}
    for answer in answers:
        for item in answer.get("characters") or []:
            if isinstance(item, dict):
                characters.setdefault(str(item.get("name", "")).strip().casefold(), item)
        texts += answer.get("texts") or []
        for cue in dict.fromkeys(answer.get("scene") or []):
            if isinstance(cue, str):
                votes[cue] += 1
                first.setdefault(cue, len(first))
    scene = sorted(votes, key=lambda cue: (-votes[cue], first[cue]))
    return {"characters": list(characters.values()), "texts": texts, "scene": scene}
