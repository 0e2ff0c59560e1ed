"""A tall webtoon strip through the whole command: sliced, read, voiced and rendered, its panels found top to bottom.

No free webtoon exists (../shared/corpus/README.md): the 800 x 12,000 px strip stacks the real panels of the
bundled Pepper&Carrot and wikipe-tan pages (cut along their ground-truth boxes) down a white column, with the
wide gaps a webtoon leaves between panels.
"""

from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from comic_narrator.artifacts import Book, BookReading, CameraPlan
from comic_narrator.cli import main
from comic_narrator.reading.geometry import iou
from tests.reading.conftest import DATA, load_rgb

pytestmark = pytest.mark.slow

WIDTH_PX, HEIGHT_PX = 800, 12_000
ART_WIDTH_PX = 700
FRAME_PX = 3
Box = tuple[int, int, int, int]


def _panels() -> list[npt.NDArray[np.uint8]]:
    """Every ground-truth panel of the bundled pages, frame trimmed, scaled towards the column's width."""
    crops = []
    for folder, image_name in (("peppercarrot-ep17", None), ("wikipe-tan", "page1.en-machine.jpg")):
        gt = json.loads((DATA / folder / "gt.json").read_text(encoding="utf-8"))
        for page in gt["pages"]:
            image = load_rgb(DATA / folder / (image_name or page["image"]))
            for panel in page["panels"]:
                x, y, w, h = panel["bbox"]
                crop = image[y + 6 : y + h - 6, x + 6 : x + w - 6]
                scale = min(ART_WIDTH_PX / crop.shape[1], 2.0)
                size = (round(crop.shape[1] * scale), round(crop.shape[0] * scale))
                crops.append(np.asarray(Image.fromarray(crop).resize(size, Image.Resampling.LANCZOS)))
    return crops


def _strip() -> tuple[npt.NDArray[np.uint8], list[Box]]:
    """The strip and where each panel sits on it (x, y, w, h), top to bottom."""
    crops = _panels()
    gap_px = (HEIGHT_PX - sum(c.shape[0] for c in crops)) // (len(crops) + 1)
    assert gap_px >= 300, "the panels should leave webtoon-wide gaps"
    strip = np.full((HEIGHT_PX, WIDTH_PX, 3), 255, dtype=np.uint8)
    boxes: list[Box] = []
    y = gap_px
    for crop in crops:
        height, width = crop.shape[:2]
        x = (WIDTH_PX - width) // 2
        strip[y - FRAME_PX : y + height + FRAME_PX, x - FRAME_PX : x + width + FRAME_PX] = 0  # the panel's frame
        strip[y : y + height, x : x + width] = crop
        boxes.append((x, y, width, height))
        y += height + gap_px
    return strip, boxes


def _row_offsets(strip: npt.NDArray[np.uint8], work: Path, book: Book) -> list[int]:
    """Where each stored slice starts on the strip, found by its rows (slices of blank gutter are dropped, so the
    heights alone do not tell)."""
    strip_rows = [row.tobytes() for row in strip]
    offsets, start = [], 0
    for page in book.pages:
        rows = [row.tobytes() for row in np.asarray(Image.open(work / page.image_file).convert("RGB"))]
        y0 = next(y for y in range(start, len(strip_rows) - len(rows) + 1) if strip_rows[y : y + len(rows)] == rows)
        offsets.append(y0)
        start = y0 + len(rows)
    return offsets


def test_tall_strip_reads_top_to_bottom_and_renders_every_panel(tmp_path: Path) -> None:
    strip, placed = _strip()
    source = tmp_path / "strip.png"
    Image.fromarray(strip).save(source)
    out = tmp_path / "strip.mp4"
    assert main([str(source), "-o", str(out), "-q", "--voice-quality", "fast"]) == 0

    work = tmp_path / "strip.mp4.work"
    book = Book.model_validate_json((work / "book.json").read_text(encoding="utf-8"))
    assert len(book.pages) >= 6 and {page.source_page_number for page in book.pages} == {1}
    assert all(page.width_px == WIDTH_PX and page.height_px <= 1.8 * WIDTH_PX + 1 for page in book.pages)
    offsets = _row_offsets(strip, work, book)

    # Every panel is found once, where it was put, and in the order it was put: top to bottom down the strip.
    reading = BookReading.model_validate_json((work / "reading.json").read_text(encoding="utf-8"))
    assert {page.reading_direction for page in reading.pages} == {"ttb"}
    found = [
        (x, y + offsets[page.page], w, h) for page in reading.pages for x, y, w, h in (p.bbox for p in page.panels)
    ]
    assert len(found) == len(placed)
    assert all(iou(box, truth) >= 0.5 for box, truth in zip(found, placed, strict=True)), (found, placed)
    said = " ".join(text.text for page in reading.pages for text in page.texts).lower()
    # find() is -1 for a line not read at all: the top panel's line must be found, then the lower one after it.
    assert 0 <= said.find("leaving") < said.find("long trip"), "lettering of the top panels before the lower ones"

    # Each panel gets its shot, in the same order, and the video holds every planned frame.
    plan = CameraPlan.model_validate_json((work / "camera.json").read_text(encoding="utf-8"))
    panel_shots = list(dict.fromkeys((shot.page, shot.panel) for shot in plan.shots if shot.panel >= 0))
    assert len(panel_shots) == len(placed)
    tops = [reading.pages[page].panels[panel].bbox[1] + offsets[page] for page, panel in panel_shots]
    assert tops == sorted(tops)
    with av.open(str(out)) as container:
        frames = [frame.to_ndarray(format="gray") for frame in container.decode(video=0)]
    assert len(frames) == sum(shot.frames for shot in plan.shots)
    # A panel's shot shows its art: the middle frame of each is far from a blank page.
    for page, panel in panel_shots:
        shot = next(s for s in plan.shots if (s.page, s.panel) == (page, panel))
        assert float(frames[shot.start_frame + shot.frames // 2].std()) > 20.0
