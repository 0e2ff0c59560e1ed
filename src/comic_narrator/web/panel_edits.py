"""Fixing the reading on the review page: a page's panels redrawn, added, removed or put in another reading
order. The edited reading is what ``--reading`` accepts; the review saves it beside the work folder's own, and
the next run of that work folder starts from it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from comic_narrator.artifacts import BBox, BookReading, PageReading, Panel, TextRegion
from comic_narrator.errors import ArtifactError

REVIEW_READING = "review-reading.json"
"""The reading as the review page left it, in the work folder; the next run starts from it (an explicit
``--reading FILE`` wins)."""
MIN_PANEL_PX = 8
MAX_PANELS = 200


class PanelEdit(BaseModel):
    """A panel as the page sends it, in the new reading order: its box, and which panel it was (None: new)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bbox: tuple[int, int, int, int]
    was: int | None = None


class PanelOrderError(ArtifactError):
    """A panel edit that cannot be applied; the message names the page and the panel."""


def _check_panels(page: PageReading, panels: list[PanelEdit]) -> None:
    where = f"page {page.page + 1}"
    if len(panels) > MAX_PANELS:
        raise PanelOrderError(f"{where}: {len(panels)} panels; at most {MAX_PANELS}")
    seen: set[int] = set()
    for number, panel in enumerate(panels, start=1):
        x, y, w, h = panel.bbox
        if w < MIN_PANEL_PX or h < MIN_PANEL_PX:
            raise PanelOrderError(f"{where}, panel {number}: {w}x{h} px is smaller than {MIN_PANEL_PX}x{MIN_PANEL_PX}")
        if x < 0 or y < 0 or x + w > page.width or y + h > page.height:
            raise PanelOrderError(
                f"{where}, panel {number}: ({x}, {y}, {w}, {h}) is not inside the {page.width}x{page.height} page"
            )
        if panel.was is not None:
            if not 0 <= panel.was < len(page.panels) or panel.was in seen:
                raise PanelOrderError(f"{where}, panel {number}: it was panel {panel.was + 1}, which is not a panel")
            seen.add(panel.was)


def _panel_of(text: TextRegion, old_to_new: dict[int, int], boxes: list[BBox]) -> int:
    """The new index of a text's panel: the same panel where it survived, else the new panel holding the text's
    centre, else none (-1, the whole page)."""
    if text.panel in old_to_new:
        return old_to_new[text.panel]
    cx, cy = text.bbox[0] + text.bbox[2] / 2, text.bbox[1] + text.bbox[3] / 2
    return next((i for i, (x, y, w, h) in enumerate(boxes) if x <= cx < x + w and y <= cy < y + h), -1)


def edited_reading(reading: BookReading, panels_by_page: dict[int, list[PanelEdit]]) -> BookReading:
    """``reading`` with the given pages' panels replaced (in the given order) and their texts' panels following."""
    pages = {page.page: page for page in reading.pages}
    for number in panels_by_page:
        if number not in pages:
            raise PanelOrderError(f"page {number + 1} is not in the book (it has {len(pages)} page(s))")
    edited = []
    for page in reading.pages:
        panels = panels_by_page.get(page.page)
        if panels is None:
            edited.append(page)
            continue
        _check_panels(page, panels)
        boxes: list[BBox] = [p.bbox for p in panels]
        old_to_new = {p.was: i for i, p in enumerate(panels) if p.was is not None}
        texts = [t.model_copy(update={"panel": _panel_of(t, old_to_new, boxes)}) for t in page.texts]
        edited.append(page.model_copy(update={"panels": [Panel(bbox=box) for box in boxes], "texts": texts}))
    return reading.model_copy(update={"pages": edited})


def review_reading_file(work_dir: Path) -> Path | None:
    """The reading a review saved in this work folder, which the next run starts from unless given ``--reading``."""
    path = work_dir / REVIEW_READING
    return path if path.is_file() else None
