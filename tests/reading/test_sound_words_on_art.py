"""Sound words lettered over the art, on lettered Pepper&Carrot pages: a light patch of the art around them (a sky,
a pale wall) is found as a balloon, but a word at a slant there is a sound, not a shout somebody gives."""

from __future__ import annotations

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from tests.reading.conftest import DATA, read_bundled

PAGES = DATA / "peppercarrot-training"


def test_a_slanted_sound_word_on_the_sky_is_a_sound(ocr: RapidOcrEngine) -> None:
    """Episode 13 p. 5: "CRACK ! !" crosses the pale sky of the fourth panel at a slant, three times the page's
    letter size; the sky around it was taken for its balloon and the crack was shouted by a character. The page's
    real shouts (bursts with level lettering) stay shouts."""
    reading = read_bundled(ocr, PAGES / "E13P05-lettered.jpg")
    crack = [t for t in reading.texts if "crack" in t.text.lower()]
    assert len(crack) == 1, [(t.kind, t.text) for t in reading.texts]
    assert crack[0].kind == "sound" and crack[0].speaker is None
    shouts = [t.text.lower() for t in reading.texts if t.kind == "shout"]
    assert any("grr" in t for t in shouts) and any("pay for that" in t for t in shouts), shouts


def test_a_swish_at_a_slant_is_a_sound(ocr: RapidOcrEngine) -> None:
    """Episode 18 p. 6: "swiiip !" is lettered at a slant on the light art of the second panel (read as a shout);
    the giggle in the last panel's balloon stays speech."""
    reading = read_bundled(ocr, PAGES / "E18P06-lettered.jpg")
    kinds = {t.text.lower(): t.kind for t in reading.texts}
    swish = [k for text, k in kinds.items() if text.startswith("swi")]
    assert swish == ["sound"], kinds
    assert any(k == "speech" for text, k in kinds.items() if text.startswith("hee")), kinds


def test_a_noise_said_twice_over_the_art_is_a_sound(ocr: RapidOcrEngine) -> None:
    """Episode 2 p. 4: the cats drink, "Gulp / Gulp" lettered beside three of them, a word a line over the art; they
    were narrated as three captions."""
    reading = read_bundled(ocr, PAGES / "E02P04-lettered.jpg")
    gulps = [t for t in reading.texts if "gulp" in t.text.lower()]
    assert len(gulps) == 3, [(t.kind, t.text) for t in reading.texts]
    assert all(t.kind == "sound" for t in gulps), [(t.kind, t.text) for t in gulps]
    assert not [t for t in reading.texts if t.kind in ("caption", "speech", "shout")]
