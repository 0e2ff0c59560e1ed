"""The speaker linker's smaller rules, each on its own: what the appearance window leaves out and the register
read from Japanese lines only."""

from __future__ import annotations

import numpy as np

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.reading.speakers import (
    SIGNATURE_HUE_BINS,
    appearance_signature,
    link_speakers,
)

GREY = [0.0] * SIGNATURE_HUE_BINS + [0.2, 0.5, 0.3]


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
