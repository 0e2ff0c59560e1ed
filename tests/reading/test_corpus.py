"""The whole corpus in ../shared/corpus: ground-truth targets, and sanity on the pages without ground truth."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.evaluate import evaluate_folder
from comic_narrator.reading.reader import read_page
from tests.conftest import corpus_path
from tests.reading.conftest import page_for

AUTO = VisionConfig()


def _cbz_pages(path: Path) -> list[npt.NDArray[np.uint8]]:
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if n.lower().endswith((".jpg", ".png")) and "/._" not in f"/{n}")
        return [np.asarray(Image.open(io.BytesIO(archive.read(n))).convert("RGB")) for n in names]


def _pdf_pages(path: Path, long_side: int | None = None) -> list[npt.NDArray[np.uint8]]:
    """The pages at 150 dpi, or with their long side ``long_side`` px as the command renders them (2000)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    pages = [document[i] for i in range(len(document))]
    scales = [150 / 72 if long_side is None else long_side / max(page.get_size()) for page in pages]
    return [np.asarray(page.render(scale=k).to_pil().convert("RGB")) for page, k in zip(pages, scales, strict=True)]


def test_ground_truth_targets(ocr: RapidOcrEngine) -> None:
    """All four pages of the episode (two of them are bundled in tests/data/vision). The corpus's wikipe-tan folder
    is the bundled one file for file, scored against the same targets by test_eval_cli.py."""
    summary = evaluate_folder(corpus_path("peppercarrot-ep17"), ocr, AUTO)
    assert summary.pages == 4
    assert summary.panel_f1 >= 0.95
    assert summary.order_exact_rate == 1.0
    assert summary.cer_by_lang["en"] <= 0.05


def test_chilling_tales_cover_and_ad_pages(ocr: RapidOcrEngine) -> None:
    pages = _pdf_pages(corpus_path("golden-age", "ChillingTales013.pdf"))
    assert len(pages) == 5
    # Pages 3 and 4 repeat pages 1 and 2 (99% of pixels identical): reading them again would only cost time.
    picked = {0: "cover", 1: "non-story", 4: "story"}
    readings = {i: read_page(pages[i], page_for(pages[i], i), config=AUTO, manga_hint=None, ocr=ocr) for i in picked}
    assert {i: r.page_kind for i, r in readings.items()} == picked
    # A cover and an ad are shown, and narrated, as one picture holding all their print; the story page keeps its
    # panels.
    for i in (0, 1):
        (panel,) = readings[i].panels
        assert readings[i].texts and all(t.panel == 0 for t in readings[i].texts)
        for text in (t for t in readings[i].texts if t.kind != "furniture"):
            x, y, w, h = text.bbox
            px, py, pw, ph = panel.bbox
            assert px <= x and py <= y and x + w <= px + pw and y + h <= py + ph
    assert len(readings[4].panels) > 1
    # The story's opening narration, boxed in yellow across the splash (the title's yellow runs into the box, so
    # it is no rectangle), is the narrator's, read at the size the command renders a PDF page (long side 2000 px).
    image = _pdf_pages(corpus_path("golden-age", "ChillingTales013.pdf"), long_side=2000)[4]
    reading = read_page(image, page_for(image, 4), config=AUTO, manga_hint=None, ocr=ocr)
    (opening,) = [t for t in reading.texts if t.text.lower().startswith("screaming, it came from")]
    assert opening.kind == "caption"
    # The ad's print, set loose on light paper as balloon lettering with an open outline would be, is the
    # narrator's to read, not somebody talking.
    assert not [t.text for t in readings[1].texts if t.kind in ("speech", "shout")]


def test_buster_bear_story_pages(ocr: RapidOcrEngine) -> None:
    pages = _cbz_pages(corpus_path("golden-age", "BusterBear10.cbz"))
    readings = [read_page(p, page_for(p, i), config=AUTO, manga_hint=None, ocr=ocr) for i, p in enumerate(pages)]
    # Counted by eye on the scans: a splash plus two, a 3-2-2 grid, a 1-3-2 grid.
    assert [len(r.panels) for r in readings] == [3, 7, 6]
    for reading in readings:
        assert reading.page_kind == "story" and reading.reading_direction == "ltr"
        assert sum(t.kind in ("speech", "shout") for t in reading.texts) >= 4
        for before, after in zip(reading.panels, reading.panels[1:], strict=False):
            bx, by, _bw, bh = before.bbox
            ax, ay, _aw, _ah = after.bbox
            same_row = abs(ay - by) < 0.2 * bh
            assert (same_row and ax > bx) or ay >= by + 0.5 * bh  # rows top to bottom, each left to right
    # A curving hand-lettered line the OCR found in two pieces reads in the order it is written.
    assert any(t.text.lower().startswith("ill buy a car and take you for a ride") for t in readings[1].texts)
    # The last balloon's lines are centred: "I" found apart from the rest of its line does not make them flush
    # left like a caption's.
    (last,) = [t for t in readings[1].texts if "carry you any more" in t.text.lower()]
    assert last.kind == "speech"
    # Page 1's running head, which the detector boxed with the logo under it, is the logo's words again: not said.
    assert [t.text.lower() for t in readings[0].texts if t.kind != "furniture"].count("buster bear") == 0
    # The running head over the top tier of pages 2 and 3 (the scan keeps the book's margins) is not narrated.
    for reading in readings[1:]:
        (head,) = [t for t in reading.texts if "buster" in t.text.lower() and "bear" in t.text.lower()]
        assert head.kind == "furniture"
    # The used-car lot's sign on its posts and the price card on a windscreen are nobody's line.
    (sign,) = [t for t in readings[1].texts if "used cars" in t.text.lower()]
    (price,) = [t for t in readings[2].texts if "15000" in t.text]
    assert (sign.kind, sign.speaker) == ("caption", None) and (price.kind, price.speaker) == ("caption", None)


def test_baron_bean_strip(ocr: RapidOcrEngine) -> None:
    (strip,) = _cbz_pages(corpus_path("newspaper-strips", "baron-bean-strip.cbz"))
    reading = read_page(strip, page_for(strip), config=AUTO, manga_hint=None, ocr=ocr)
    assert len(reading.panels) == 4  # four panels sharing single ruled frame lines
    lefts = [p.bbox[0] for p in reading.panels]
    assert lefts == sorted(lefts)


def test_dingbat_family_band(ocr: RapidOcrEngine) -> None:
    # Four panels printed in faded brown on a newspaper band: leaky frames, shared frame lines, dense hatching.
    (band,) = _cbz_pages(corpus_path("newspaper-strips", "dingbat-family-strip.cbz"))
    reading = read_page(band, page_for(band), config=AUTO, manga_hint=None, ocr=ocr)
    assert reading.page_kind == "story"
    assert len(reading.panels) == 4
    lefts = [p.bbox[0] for p in reading.panels]
    assert lefts == sorted(lefts)
    assert any("surrender" in t.text.lower() for t in reading.texts)
    # The masthead's date is the paper's, not the story's.
    (date,) = [t for t in reading.texts if "1915" in t.text and "december" in t.text.lower()]
    assert date.kind == "furniture"
