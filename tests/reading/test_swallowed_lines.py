"""A caption line the OCR's detector boxed together with the display lettering it touches (a story's title) is read
apart, on a real golden-age splash; display lettering alone gives no line."""

from __future__ import annotations

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.reading.bubbles import to_text_lines
from comic_narrator.reading.swallowed_lines import swallowed_lines
from tests.reading.conftest import DATA, load_rgb, read_bundled

SPLASH = DATA / "golden-age" / "chilling-tales-13-story-p1.jpg"


def test_the_caption_line_boxed_with_the_title_is_read_and_narrated(ocr: RapidOcrEngine) -> None:
    """The opening narration's second line touches "THE SCREAMING SKULL" under it; the detector's box around the
    title took it in, and the recogniser read the title alone, so the line was never narrated."""
    image = load_rgb(SPLASH)
    lines = to_text_lines(ocr.recognize(image, "en"), 0.5)
    assert not any("shrieking" in ln.text.lower() for ln in lines), "the detector alone does not find the line"
    (found,) = swallowed_lines(image, lines, ocr)
    assert "shrieking for revenge" in found.text.lower()
    assert found.letter_px < max(ln.letter_px for ln in lines) / 3  # a line of the caption's size
    narrated = " ".join(t.text.lower() for t in read_bundled(ocr, SPLASH).texts if t.kind == "caption")
    assert "the place of murder" in narrated and "shrieking for revenge" in narrated


def test_display_lettering_with_nothing_beside_it_gives_no_line(ocr: RapidOcrEngine) -> None:
    """Pepper&Carrot ep. 4's header: the logo, five times the title's letters, with paper around it."""
    image = load_rgb(DATA / "peppercarrot-training" / "E04P00-lettered.jpg")
    lines = to_text_lines(ocr.recognize(image, "en"), 0.5)
    assert swallowed_lines(image, lines, ocr) == []
