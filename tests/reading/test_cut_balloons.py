"""Balloons cut by their panel's frame are speech, and caption boxes stay captions: the bundled Black Jack sample
(pages 8-11 of vol. 1), read by the real reader.

A balloon that runs into the panel's border is straight where the frame cuts it and round elsewhere: its light
region fills 0.84-0.92 of its bounding box, close to a caption box's 0.97-0.99, and such balloons used to be
read as narration (no speaker, the narrator's voice)."""

from __future__ import annotations

import pytest

from comic_narrator.artifacts import PageReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.config import VisionConfig
from comic_narrator.reading.reader import read_page
from tests.reading.conftest import blackjack_sample_pages, page_for


def _read(index: int, ocr: RapidOcrEngine) -> PageReading:
    image = blackjack_sample_pages()[index]
    return read_page(image, page_for(image), config=VisionConfig(), manga_hint=True, ocr=ocr)


def _text(reading: PageReading, words: str) -> tuple[str, str | None]:
    found = [t for t in reading.texts if words in t.text.replace(" ", "")]
    assert len(found) == 1, [t.text for t in reading.texts]
    return found[0].kind, found[0].speaker


@pytest.mark.parametrize(
    ("index", "words"),
    [
        (0, "僕の勝ち"),  # p. 8: じゃあ僕の勝ちだ, cut by the panel's left and bottom edges
        (3, "人の心"),  # p. 11: オレはこのままでは人の心を失くしてしまう
    ],
)
def test_a_balloon_cut_by_the_frame_is_speech_with_a_speaker(index: int, words: str, ocr: RapidOcrEngine) -> None:
    kind, speaker = _text(_read(index, ocr), words)
    assert kind in ("speech", "shout") and speaker is not None


def test_the_narration_boxes_stay_captions(ocr: RapidOcrEngine) -> None:
    reading = _read(2, ocr)  # p. 10: six narration boxes about becoming a doctor
    for words in ("医師国家試験", "研修医というのは", "大学で6年間"):
        assert _text(reading, words) == ("caption", None)


def test_a_balloon_of_dots_alone_is_a_silent_line_of_the_speaker(ocr: RapidOcrEngine) -> None:
    # p. 11: a balloon cut by the frame holding "……" lettered as a column of twelve separate dots, which the OCR
    # does not see at all.
    reading = _read(3, ocr)
    dots = [t for t in reading.texts if t.text == "……"]
    assert len(dots) == 1 and dots[0].kind == "speech" and dots[0].speaker is not None
    x, y, w, h = dots[0].bbox
    assert 1.5 < h / w < 2.5 and x < 0.5 * reading.width and y > 0.5 * reading.height  # the tall one, lower left
