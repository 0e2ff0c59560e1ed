"""The speaker linker's smaller rules, each on its own: what the appearance window leaves out, the two kinds of
continuity it favours on coloured art, and the register read from Japanese lines only."""

from __future__ import annotations

import numpy as np

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.reading.speakers import (
    SIGNATURE_HUE_BINS,
    SpeakerLinker,
    Utterance,
    appearance_signature,
    link_speakers,
    signature_distance,
    speaker_distance,
)

GREY = [0.0] * SIGNATURE_HUE_BINS + [0.2, 0.5, 0.3]


def _hue(*weights: float) -> tuple[float, ...]:
    values = list(weights) + [0.0] * (SIGNATURE_HUE_BINS - len(weights))
    total = sum(values)
    return (*(v / total for v in values), 0.0, 0.0, 0.0)


def test_the_balloon_is_left_out_of_the_appearance_window() -> None:
    image = np.zeros((200, 200, 3), np.uint8)
    image[:, :] = (40, 60, 220)  # a blue figure all around
    image[80:120, 80:120] = (230, 30, 30)  # the red balloon itself, inside the window
    signature = appearance_signature(image, (100.0, 100.0), 120, (80, 80, 40, 40))
    red_bin = 0  # hue 0: the first of the 12 bins
    assert signature[red_bin] == 0.0 and max(signature[:SIGNATURE_HUE_BINS]) > 0.9  # all of it the blue
    # Without the exclusion the red would count: the rule is what keeps it out.
    with_balloon = appearance_signature(image, (100.0, 100.0), 120, (0, 0, 0, 0))
    assert with_balloon[red_bin] > 0.05


def test_two_balloons_stacked_in_one_panel_count_half_the_distance() -> None:
    a = Utterance(page=0, panel=2, centre_x_frac=0.30, signature=_hue(1, 1))
    stacked = Utterance(page=0, panel=2, centre_x_frac=0.40, signature=_hue(1, 0, 1))
    across = Utterance(page=0, panel=2, centre_x_frac=0.80, signature=_hue(1, 0, 1))
    other_panel = Utterance(page=0, panel=3, centre_x_frac=0.40, signature=_hue(1, 0, 1))
    plain = signature_distance(a.signature, stacked.signature)
    assert speaker_distance(a, stacked) == plain / 2
    assert speaker_distance(a, across) == plain == speaker_distance(a, other_panel)


def test_the_previous_speaker_is_favoured_on_coloured_art() -> None:
    first = Utterance(page=0, panel=0, centre_x_frac=0.2, signature=_hue(1, 0, 0, 0))
    near = Utterance(page=0, panel=1, centre_x_frac=0.8, signature=_hue(9, 11, 0, 0))  # 0.55 from the first
    assert 0.5 < signature_distance(first.signature, near.signature) < 0.5 / 0.8
    linker = SpeakerLinker()
    assert [linker.assign(first), linker.assign(near)] == [0, 0]  # 0.55 x 0.8 is under the 0.5 threshold
    # After another character spoke, the same balloon is no longer the previous speaker's: a new character.
    linker = SpeakerLinker()
    other = Utterance(page=0, panel=1, centre_x_frac=0.5, signature=_hue(0, 0, 0, 0, 0, 0, 1))
    assert [linker.assign(first), linker.assign(other), linker.assign(near)] == [0, 1, 2]


def _page(index: int, lines: list[tuple[int, str]], lang: str) -> PageReading:
    panels = [Panel(bbox=(0, 100 * p, 400, 100)) for p in range(3)]
    texts = [
        TextRegion(
            bbox=(10, 100 * panel + 10, 80, 40),
            kind="speech",
            text=text,
            speaker="char1",
            panel=panel,
            lang=lang,  # type: ignore[arg-type]
            speaker_signature=GREY,
        )
        for panel, text in lines
    ]
    return PageReading(page=index, width=400, height=300, reading_direction="rtl", panels=panels, texts=texts)


def test_the_register_is_read_from_japanese_lines_only() -> None:
    lines = [(0, "分かってます!!"), (1, "お前は医者だ……"), (2, "院長はお金が欲しいだけじゃないですか!!")]
    japanese = link_speakers([_page(0, lines, "ja")])
    assert [t.speaker for t in japanese[0].texts] == ["char1", "char2", "char1"]
    # The same lettering tagged English (the OCR's language for the page) has no register: one speaker goes on.
    tagged_english = link_speakers([_page(0, lines, "en")])
    assert [t.speaker for t in tagged_english[0].texts] == ["char1", "char1", "char1"]
