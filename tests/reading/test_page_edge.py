"""Light running off the page on real pages (reading/bubbles.py, the page-edge rule): the paper of a bleed splash
is no balloon, so its lettering is narrated, not spoken; balloons the trim cuts stay balloons, each read whole."""

from __future__ import annotations

from comic_narrator.artifacts import PageReading
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from tests.conftest import training_path
from tests.reading.conftest import DATA, read_bundled


def _holding(reading: PageReading, *parts: str) -> list[tuple[str, str]]:
    """(kind, text) of each text holding every one of ``parts``."""
    return [(t.kind, t.text) for t in reading.texts if all(p in t.text for p in parts)]


def test_lettering_on_a_bleed_splash_s_light_is_narration_not_speech(ocr: RapidOcrEngine) -> None:
    """Black Jack vol. 1 p. 35: a night city bled to the page's edges, narration in white-rimmed columns. The light
    around the first column runs off the top of the page; taken for a balloon it made that column speech, cut off
    from the rest of its caption (the annotations, training/eval/blackjack-vol01-p21-40: one caption)."""
    reading = read_bundled(ocr, training_path("blackjack-ni-yoroshiku", "vol01", "bj01_000035.jpg"))
    assert _holding(reading, "全国の") == _holding(reading, "全国の", "アンケート"), "one block, first column first"
    ((kind, text),) = _holding(reading, "全国の")
    assert kind == "caption" and text.startswith("全国の")


def test_balloons_the_trim_cuts_are_read_whole(ocr: RapidOcrEngine) -> None:
    """The stress set's bleed page: its top panel runs off the page, and so do its two balloons. Each touches the
    edge along less than its width, so each stays one balloon; as margins their lines fell apart."""
    reading = read_bundled(ocr, DATA / "stress" / "bleed-05-golden.jpg")
    assert [kind for kind, _ in _holding(reading, "how about", "of this car")] == ["speech"]
    assert [kind for kind, _ in _holding(reading, "what was that", "stranger")] == ["speech"]
