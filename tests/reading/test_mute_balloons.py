"""Balloons that hold only punctuation ('！', '?', '…'): read from a crop, never invented on empty paper."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from comic_narrator.artifacts import BBox
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.reading.bubbles import TextLine
from comic_narrator.reading.geometry import intersection_px2
from comic_narrator.reading.mute_balloons import MuteBalloonParams, is_mark_only, mute_balloons
from tests.reading.conftest import DATA, load_rgb, read_bundled


class _Credulous:
    """A recogniser that reads '!' in anything: only the balloon finder stands between it and invented text."""

    def __init__(self) -> None:
        self.crops = 0

    def recognize_crops(self, crops_rgb: list[npt.NDArray[np.uint8]]) -> list[tuple[str, float]]:
        self.crops += len(crops_rgb)
        return [("!", 0.99)] * len(crops_rgb)


def _line(box: BBox, letter: float = 20.0) -> TextLine:
    return TextLine(bbox=box, text="HELLO", score=0.9, vertical=False, angle_deg=0.0, letter_px=letter)


def _page(mark: str | None, outline: bool = True) -> npt.NDArray[np.uint8]:
    """A framed white panel with a lettered line far off, and one small balloon (optionally holding a mark)."""
    page = np.full((600, 500, 3), 250, np.uint8)
    cv2.rectangle(page, (20, 20), (480, 580), (0, 0, 0), 3)
    cv2.putText(page, "HELLO", (60, 520), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 2)
    if outline:
        cv2.ellipse(page, (250, 200), (34, 30), 0, 0, 360, (0, 0, 0), 2)
    if mark:
        cv2.putText(page, mark, (240, 214), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 0, 0), 3)
    return page


def _find(page: npt.NDArray[np.uint8], recognizer: object) -> list[str]:
    gray = np.asarray(cv2.cvtColor(page, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
    blocks = mute_balloons(page, gray, 250.0, [(20, 20, 461, 561)], [_line((60, 500, 110, 22))], recognizer)  # type: ignore[arg-type]
    return [b.lines[0].text for b in blocks]


def test_the_lone_exclamation_balloon_of_the_manga_page_is_read(ocr: RapidOcrEngine) -> None:
    reading = read_bundled(ocr, DATA / "wikipe-tan" / "page1.ja.jpg")
    marks = [t for t in reading.texts if is_mark_only(t.text)]
    assert len(marks) == 1  # the page has one letterless balloon (its ground truth lists it), nothing else
    mark = marks[0]
    gt_box = (228, 192, 27, 26)  # the '！' balloon in the corpus ground truth
    assert intersection_px2(mark.bbox, gt_box) >= 0.5 * gt_box[2] * gt_box[3]
    assert mark.kind == "speech" and mark.panel >= 0 and mark.speaker is not None


@pytest.mark.parametrize("name", ["peppercarrot-ep17/page1.jpg", "peppercarrot-ep17/page4.jpg"])
def test_pages_without_letterless_balloons_get_none(ocr: RapidOcrEngine, name: str) -> None:
    reading = read_bundled(ocr, DATA / name)
    assert [t.text for t in reading.texts if is_mark_only(t.text)] == []


def test_a_drawn_exclamation_balloon_is_read_by_the_real_recogniser(ocr: RapidOcrEngine) -> None:
    assert _find(_page("!"), ocr) == ["!"]


@pytest.mark.parametrize(
    ("mark", "outline"),
    [(None, True), (None, False), ("!", False)],
    ids=["empty balloon", "plain white panel", "mark on open paper"],
)
def test_nothing_is_invented_where_there_is_no_closed_balloon_with_a_mark(mark: str | None, outline: bool) -> None:
    recognizer = _Credulous()
    assert _find(_page(mark, outline), recognizer) == []
    assert recognizer.crops == 0


def test_blank_and_letterless_pages_give_no_mark() -> None:
    recognizer = _Credulous()
    white = np.full((400, 300, 3), 255, np.uint8)
    gray = np.full((400, 300), 255, np.uint8)
    assert mute_balloons(white, gray, 255.0, [(0, 0, 300, 400)], [], recognizer) == []
    # A page with a balloon but no lettering anywhere has no letter size to judge a balloon by.
    page = _page("!")
    page_gray = np.asarray(cv2.cvtColor(page, cv2.COLOR_RGB2GRAY), dtype=np.uint8)
    assert mute_balloons(page, page_gray, 250.0, [(20, 20, 461, 561)], [], recognizer) == []
    assert recognizer.crops == 0


def test_mark_only_text() -> None:
    assert all(is_mark_only(t) for t in ["!", "！", "?!", "…", "...", "!!"])
    assert not any(is_mark_only(t) for t in ["", ".", "・", "。", "A!", "4", "O"])


def test_recognising_crops_leaves_page_detection_on(ocr: RapidOcrEngine) -> None:
    page = load_rgb(DATA / "peppercarrot-ep17" / "page1.jpg")
    before = len(ocr.recognize(page, "en"))
    assert before > 0
    ocr.recognize_crops([np.full((48, 48, 3), 255, np.uint8)])
    assert len(ocr.recognize(page, "en")) == before


def test_at_most_max_crops_balloons_are_recognised_per_page() -> None:
    """Eight "!" balloons in the panel: the recogniser is asked about the first six (one batch), no more."""
    page = _page(None, outline=False)
    for k in range(8):
        cx, cy = 90 + 100 * (k % 4), 120 + 150 * (k // 4)
        cv2.ellipse(page, (cx, cy), (34, 30), 0, 0, 360, (0, 0, 0), 2)
        cv2.putText(page, "!", (cx - 10, cy + 14), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 0, 0), 3)
    recognizer = _Credulous()
    assert _find(page, recognizer) == ["!"] * MuteBalloonParams().max_crops == ["!"] * 6
    assert recognizer.crops == 6
