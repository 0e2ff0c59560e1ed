"""Balloons that break their panel's frame, on lettered Pepper&Carrot pages: found whole on the page's paper (the
panel's box cuts them), read as one balloon, and said between the two panels they lie across; and a shout
lettered in two sizes in one balloon."""

from __future__ import annotations

from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from tests.reading.conftest import DATA, read_bundled

PAGES = DATA / "peppercarrot-training"


def test_a_balloon_across_the_frame_is_one_balloon(ocr: RapidOcrEngine) -> None:
    """Episode 18 p. 3: the teacher's four-line balloon runs out of the bottom of her panel, and the lines below the
    frame were grouped apart from those above it (read "I remind you that a magic for making", then "Hippiah is
    not weedkillers!..."); her burst crosses into the panel beside hers and was read as a sound."""
    reading = read_bundled(ocr, PAGES / "E18P03-lettered.jpg")
    texts = [t.text for t in reading.texts]
    scolding = [t for t in reading.texts if "remind" in t.text]
    assert len(scolding) == 1, texts
    words = scolding[0].text.split()
    assert words[:3] == ["I", "remind", "you"] and words[-1].startswith("weedkillers"), texts
    assert "is not a magic for making" in scolding[0].text
    burst = next(t for t in reading.texts if "failure" in t.text)
    assert burst.kind in ("speech", "shout") and burst.speaker is not None


def test_balloons_on_the_paper_below_the_panels_are_spoken(ocr: RapidOcrEngine) -> None:
    """The same page's last row: the classmates laugh in four balloons on white paper around a borderless figure,
    outside every panel's box; without their outlines the laughs were read as sound words, said by nobody."""
    reading = read_bundled(ocr, PAGES / "E18P03-lettered.jpg")
    laughs = [t for t in reading.texts if t.text.lower().startswith("ha")]
    assert len(laughs) == 4, [t.text for t in reading.texts]
    assert all(t.kind in ("speech", "shout") and t.speaker is not None for t in laughs)


def test_a_thought_across_two_panels_is_said_between_them(ocr: RapidOcrEngine) -> None:
    """Episode 11 p. 4: two thought clouds cross the border of the third row's panels ("The King ?..." in the
    left panel, "...so young ?!" half in each). The second was said after the right panel's thought, as if it
    were lettering in the gutter below; it follows the first."""
    reading = read_bundled(ocr, PAGES / "E11P04-lettered.jpg")
    texts = [t.text for t in reading.texts]
    king = next(i for i, t in enumerate(texts) if "King" in t)
    young = next(i for i, t in enumerate(texts) if "young" in t)
    same_age = next(i for i, t in enumerate(texts) if "same" in t)
    assert young == king + 1 and same_age > young, texts
    assert reading.texts[young].kind == "speech"


def test_a_shout_lettered_in_two_sizes_is_one_balloon(ocr: RapidOcrEngine) -> None:
    """Episode 18 p. 4: Pepper's burst holds "I said..." over a "STOP !!!" lettered two and a half times larger.
    The two lines were kept apart as too different in size, and "I said..." alone was too small for the burst,
    so it was read as a sound word."""
    reading = read_bundled(ocr, PAGES / "E18P04-lettered.jpg")
    said = [t for t in reading.texts if "I said" in t.text]
    assert len(said) == 1, [t.text for t in reading.texts]
    assert said[0].kind in ("speech", "shout") and said[0].text.lower().replace(" ", "").startswith("isaid...stop")
