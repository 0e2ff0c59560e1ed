"""read_page with the real rapidocr engine on the bundled pages, odd pages, and a stacked webtoon strip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.geometry import iou
from comic_narrator.reading.metrics import edit_distance, normalise_letters
from comic_narrator.reading.overlay import draw_overlay
from comic_narrator.reading.reader import book_language, read_page
from comic_narrator.reading.speakers import link_speakers
from tests.reading.conftest import DATA, load_rgb, page_for, read_bundled

AUTO = VisionConfig()


def _cer(predicted: list[str], expected: list[str]) -> float:
    gt = "".join(normalise_letters(t) for t in expected)
    return edit_distance("".join(normalise_letters(t) for t in predicted), gt) / len(gt)


def test_pepper_page_reads_panels_texts_and_order(ocr: RapidOcrEngine) -> None:
    """Real rapidocr and reader on a real bundled page, against hand-made ground truth (tests/data/vision)."""
    gt = json.loads((DATA / "peppercarrot-ep17" / "gt.json").read_text(encoding="utf-8"))["pages"][0]
    reading = read_bundled(ocr, DATA / "peppercarrot-ep17" / gt["image"])
    assert reading.reading_direction == "ltr"
    assert reading.page_kind == "story"
    expected_panels = [tuple(p["bbox"]) for p in gt["panels"]]
    assert len(reading.panels) == len(expected_panels)
    for found, expected in zip(reading.panels, expected_panels, strict=True):
        assert iou(found.bbox, expected) >= 0.5  # same boxes, in the same (reading) order
    spoken = [t for t in reading.texts if t.kind != "sound"]
    expected_texts = [t["text"] for p in gt["panels"] for t in p["texts"] if t["kind"] != "sound"]
    assert _cer([t.text for t in spoken], expected_texts) <= 0.05
    # Each text sits in the panel the ground truth puts it in. Texts are paired with the ground truth by content,
    # one to one: a misread text is still paired with its nearest ground-truth text and must be within 30 % of its
    # letters, so no text (misread, extra or missing) escapes the check.
    unpaired = [(normalise_letters(t["text"]), i) for i, p in enumerate(gt["panels"]) for t in p["texts"]]
    for text in reading.texts:
        letters = normalise_letters(text.text)
        distance, truth = min((edit_distance(letters, g[0]) / len(g[0]), g) for g in unpaired)
        assert distance <= 0.3, f"{text.text!r} matches no ground-truth text (nearest {truth[0]!r})"
        assert text.panel == truth[1], text
        unpaired.remove(truth)
    assert unpaired == [], "ground-truth texts the reader did not find"
    # The shouted line is lettered in capitals: it comes out in sentence case, and the caps are not lost as a shout.
    shouted = next(t for t in reading.texts if normalise_letters(t.text).startswith("noim"))
    assert shouted.text.startswith("No! I'm leaving")
    assert all(t.speaker is not None for t in reading.texts if t.kind in ("speech", "shout"))
    assert all(t.speaker is None for t in reading.texts if t.kind in ("caption", "sound"))


def test_japanese_manga_page_reads_right_to_left(ocr: RapidOcrEngine) -> None:
    gt = json.loads((DATA / "wikipe-tan" / "gt.json").read_text(encoding="utf-8"))["pages"][0]
    reading = read_bundled(ocr, DATA / "wikipe-tan" / gt["image"])
    assert reading.reading_direction == "rtl"  # from the kana/kanji, with no ComicInfo hint
    assert [iou(p.bbox, tuple(g["bbox"])) >= 0.5 for p, g in zip(reading.panels, gt["panels"], strict=True)] == [
        True
    ] * 3
    in_panels = [t for t in reading.texts if t.panel >= 0]
    assert all(t.lang == "ja" and t.vertical for t in in_panels if len(t.text) > 2)
    expected = [t["text"] for p in gt["panels"] for t in p["texts"]]
    assert _cer([t.text for t in in_panels], expected) <= 0.10
    # Bubble order inside the first panel: the rightmost bubble first.
    first_panel = [t for t in in_panels if t.panel == 0 and len(t.text) > 2]
    assert [t.bbox[0] for t in first_panel] == sorted((t.bbox[0] for t in first_panel), reverse=True)
    assert book_language([reading]) == "ja"


def test_layout_option_and_manga_hint_override_the_language(ocr: RapidOcrEngine) -> None:
    path = DATA / "wikipe-tan" / "page1.en-machine.jpg"
    western = read_bundled(ocr, path)
    assert western.reading_direction == "ltr"
    hinted = read_bundled(ocr, path, manga_hint=True)
    assert hinted.reading_direction == "rtl"
    # Read right to left, the right-hand panel of the first row comes first.
    assert hinted.panels[0].bbox[0] > hinted.panels[1].bbox[0]
    forced = read_bundled(ocr, path, VisionConfig(layout="webtoon"), manga_hint=True)
    assert forced.reading_direction == "ttb"


def test_blank_page(ocr: RapidOcrEngine) -> None:
    image = np.full((1400, 1000, 3), 250, dtype=np.uint8)
    reading = read_page(image, page_for(image), config=AUTO, manga_hint=None, ocr=ocr)
    assert reading.page_kind == "blank"
    assert reading.panels == [] and reading.texts == []


def test_photo_like_page_without_text(ocr: RapidOcrEngine) -> None:
    # A stand-in for a photograph: smooth colour gradients with sensor-like noise, no lettering, no frames.
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[0:1200, 0:900]
    image = np.stack([xx * 255 // 900, yy * 255 // 1200, (xx + yy) * 255 // 2100], axis=-1).astype(np.int16)
    image = np.clip(image + rng.normal(0, 12, image.shape), 0, 255).astype(np.uint8)
    reading = read_page(image, page_for(image), config=AUTO, manga_hint=None, ocr=ocr)
    assert reading.page_kind in ("story", "cover")
    assert len(reading.panels) == 1
    assert reading.texts == []


def test_tall_webtoon_strip_built_from_real_panels(ocr: RapidOcrEngine) -> None:
    """No free webtoon exists in the corpus: this strip stacks the real Pepper&Carrot panels of the two bundled
    pages with 1,000 px white gaps into a 10,000+ px column, the way a webtoon is laid out."""
    gt = json.loads((DATA / "peppercarrot-ep17" / "gt.json").read_text(encoding="utf-8"))
    crops = []
    for page in gt["pages"]:
        image = load_rgb(DATA / "peppercarrot-ep17" / page["image"])
        for panel in page["panels"]:
            x, y, w, h = panel["bbox"]
            crops.append(image[y + 10 : y + h - 10, x + 10 : x + w - 10])
    width = 900
    parts = []
    for crop in crops:
        pad = np.full((crop.shape[0], width, 3), 255, dtype=np.uint8)
        pad[:, : min(width, crop.shape[1])] = crop[:, :width]
        parts.extend([pad, np.full((1000, width, 3), 255, dtype=np.uint8)])
    strip = np.ascontiguousarray(np.concatenate(parts, axis=0))
    assert strip.shape[0] >= 10_000
    reading = read_page(strip, page_for(strip), config=AUTO, manga_hint=None, ocr=ocr)
    assert reading.reading_direction == "ttb"
    assert reading.page_kind == "story"
    assert len(reading.panels) == len(crops)
    tops = [p.bbox[1] for p in reading.panels]
    assert tops == sorted(tops)
    letters = "".join(normalise_letters(t.text) for t in reading.texts)
    # Text from near the top and from the bottom panel of the strip, in that order.
    assert 0 <= letters.find("imleaving") < letters.find("thisisgoingtobealongtrip")


def test_overlay_draws_without_touching_the_input(ocr: RapidOcrEngine) -> None:
    image = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")
    before = image.copy()
    reading = read_bundled(ocr, DATA / "peppercarrot-ep17" / "page1.jpg")
    overlay = draw_overlay(image, reading)
    assert overlay.shape == image.shape
    assert np.array_equal(image, before)
    assert int(np.abs(overlay.astype(np.int16) - image).sum()) > 0


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_forced_language_is_kept(ocr: RapidOcrEngine, lang: str) -> None:
    config = VisionConfig(lang=lang)  # type: ignore[arg-type]
    reading = read_bundled(ocr, DATA / "wikipe-tan" / "page1.ja.jpg", config)
    assert reading.texts and {t.lang for t in reading.texts} == {lang}


def test_linking_real_pages_renames_speakers_only(ocr: RapidOcrEngine) -> None:
    """What linking does to real pages: ids book-wide, texts and order untouched. Whether one figure keeps one id
    from page to page is checked on drawn pages, where the truth is known (test_synthetic_pages.py); a linker that
    only kept each page's own ids passes this test and fails that one."""
    readings = [read_bundled(ocr, DATA / "peppercarrot-ep17" / name) for name in ("page1.jpg", "page4.jpg")]
    linked = link_speakers(readings)
    ids = [t.speaker for r in linked for t in r.texts if t.speaker is not None]
    assert ids and all(i.startswith("char") for i in ids)
    # Linking renames ids book-wide; texts and their order are untouched.
    assert [[t.text for t in r.texts] for r in linked] == [[t.text for t in r.texts] for r in readings]
    # The first page starts the book's characters: its ids are its own.
    assert linked[0].texts == readings[0].texts


def test_one_speaker_of_a_real_page_keeps_one_id_after_linking(ocr: RapidOcrEngine) -> None:
    """Page 4's four spoken lines are all Pepper's (tests/data/vision/peppercarrot-ep17/gt.json). Read alone, the
    page gives them one id, and linked after page 1 they keep one (while colour pages were clustered by the hues at
    the tails, her last line there got a new id)."""
    gt = json.loads((DATA / "peppercarrot-ep17" / "gt.json").read_text(encoding="utf-8"))["pages"][1]
    assert {t["speaker"] for p in gt["panels"] for t in p["texts"] if t["kind"] == "speech"} == {"Pepper"}
    readings = [read_bundled(ocr, DATA / "peppercarrot-ep17" / name) for name in ("page1.jpg", "page4.jpg")]
    alone = {t.speaker for t in readings[1].texts if t.kind in ("speech", "shout")}
    assert len(alone) == 1
    linked = link_speakers(readings)[1]
    assert len({t.speaker for t in linked.texts if t.kind in ("speech", "shout")}) == 1
