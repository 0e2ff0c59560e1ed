"""Sound words pulse when the bed plays their effects: which words, when, how the swell rises and settles, and
the lettering drawn bigger about its centre with the frame around it left alone."""

from __future__ import annotations

import numpy as np

from comic_narrator.artifacts import PageReading, Panel, ShotTiming, TextRegion, Timing
from comic_narrator.video.pulse import SWELL, Pulse, PulsePainter, page_pulses, swell_at


def _sound(text: str, panel: int, x: int) -> TextRegion:
    return TextRegion(bbox=(x, 100, 60, 40), kind="sound", text=text, panel=panel)


def test_a_panels_first_three_sound_words_pulse_when_their_effects_play() -> None:
    # A sound word of no panel and a balloon of this one come first: neither pulses.
    texts = [_sound("DOOM", -1, 500), TextRegion(bbox=(0, 0, 5, 5), kind="speech", text="hi", panel=0)]
    texts += [_sound(word, 0, 10 * n) for n, word in enumerate(["BAM", "POW", "ZAP", "FOUR"])]
    page = PageReading(
        page=0, width=800, height=600, reading_direction="ltr", panels=[Panel(bbox=(0, 0, 800, 600))], texts=texts
    )
    shots = [
        ShotTiming(page=0, panel=-1, start_s=0.0, duration_s=2.0, frames=48, line_ids=[], line_starts_s=[]),
        ShotTiming(page=0, panel=0, start_s=2.0, duration_s=3.0, frames=72, line_ids=[], line_starts_s=[]),
    ]
    pulses = page_pulses(page, Timing(fps=24, sample_rate_hz=48_000, shots=shots, duration_s=5.0))
    assert [(p.start_frame, p.box[0]) for p in pulses] == [(49, 0), (58, 10), (66, 20)]
    assert all(p.end_frame - p.start_frame == 11 for p in pulses)


def test_the_swell_rises_fast_and_settles() -> None:
    pulse = Pulse(10, 21, (0, 0, 10, 10))
    swells = [swell_at(pulse, n) for n in range(9, 23)]
    assert swells[0] == 0.0 and swells[-1] == 0.0 and swells[-2] == 0.0
    peak = int(np.argmax(swells))
    assert max(swells) <= SWELL and max(swells) > 0.9 * SWELL
    assert peak < 6, "up within the first half, down over the rest"


def test_the_lettering_grows_about_its_centre_and_the_rest_is_left_alone() -> None:
    width, height = 320, 240
    frame = np.full((height * 3 // 2, width), 128, dtype=np.uint8)
    frame[:height] = 30
    frame[100:140, 100:160] = 220  # the word: page box (100, 100, 60, 40) seen at scale 1
    painter = PulsePainter((Pulse(0, 11, (100, 100, 60, 40)),), width, height)
    grown = frame.copy()
    painter.paint(grown, 3, (0.0, 0.0, 320.0, 240.0))
    before, after = int((frame[:height] > 125).sum()), int((grown[:height] > 125).sum())
    assert 1.15 * before < after < 1.4 * before, (before, after)
    rows, cols = np.nonzero(grown[:height] > 125)
    assert abs((rows.min() + rows.max()) / 2 - 119.5) <= 1 and abs((cols.min() + cols.max()) / 2 - 129.5) <= 1
    assert np.array_equal(grown[:80], frame[:80]) and np.array_equal(grown[:height, :80], frame[:height, :80])


def test_a_word_out_of_view_or_seen_too_small_is_left_alone() -> None:
    width, height = 320, 240
    frame = np.full((height * 3 // 2, width), 128, dtype=np.uint8)
    frame[100:140, 100:160] = 220
    painter = PulsePainter(
        (Pulse(0, 11, (900, 100, 60, 40)), Pulse(0, 11, (100, 100, 1, 40)), Pulse(0, 11, (100, 100, 60, 1))),
        width,
        height,
    )
    painted = frame.copy()
    painter.paint(painted, 3, (0.0, 0.0, 640.0, 480.0))  # seen at half size: a 1-pixel side stays under 8 pixels
    assert np.array_equal(painted, frame)
