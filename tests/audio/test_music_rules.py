"""The music bed's rules: which mood a page gets from its lines and its darkness, and the chords that follow the
book's clock (a mood going on over a page turn goes on where it was)."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.audio.music import CHORD_S, PROGRESSIONS, ROOT_HZ, page_mood, synthesise_music

RATE = 16_000


def _page(*lines: tuple[str, str | None]) -> PageReading:
    texts = [
        TextRegion(bbox=(10, 10 + 40 * n, 80, 30), kind=kind, text="words", panel=0, emotion=emotion)  # type: ignore[arg-type]
        for n, (kind, emotion) in enumerate(lines)
    ]
    return PageReading(
        page=0, width=400, height=600, reading_direction="ltr", panels=[Panel(bbox=(0, 0, 400, 600))], texts=texts
    )


@pytest.mark.parametrize(
    ("lines", "dark", "mood"),
    [
        ([("speech", "sad"), ("speech", "neutral"), ("speech", "neutral")], None, "sad"),  # a third of them sad
        ([("speech", "sad"), ("speech", "neutral"), ("speech", "neutral"), ("speech", "neutral")], None, "calm"),
        ([("speech", "sad"), ("shout", "angry"), ("shout", "angry")], 0.9, "sad"),  # sad before tense
        ([("shout", None), ("speech", None), ("speech", None), ("speech", None), ("speech", None)], None, "calm"),
        ([("shout", None), ("shout", None), ("speech", None), ("speech", None), ("speech", None)], None, "tense"),
        ([("speech", "scared"), ("speech", "neutral")], None, "tense"),  # fear counts as loud
        ([("speech", None)], 0.6, "tense"),  # a dark page
        ([("speech", None)], 0.5, "calm"),
        ([("sound", None), ("caption", None)], None, "calm"),  # nobody speaks: no division by nothing
        ([("speech", "excited"), ("speech", "neutral")], None, "bright"),
        ([("speech", "excited"), ("speech", "neutral")], 0.1, "bright"),
        ([("speech", "excited"), ("speech", "neutral")], 0.2, "calm"),  # excited on a dim page is no brighter
        ([("speech", "neutral")], 0.05, "calm"),  # light but nobody excited
    ],
)
def test_a_page_s_mood(lines: list[tuple[str, str | None]], dark: float | None, mood: str) -> None:
    assert page_mood(_page(*lines), dark) == mood


def _strongest_hz(signal: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(signal * np.hanning(len(signal))))
    return float(np.fft.rfftfreq(len(signal), 1 / RATE)[int(np.argmax(spectrum))])


def test_the_chords_change_on_the_book_s_clock() -> None:
    chord = CHORD_S["calm"]
    n = int(2 * chord * RATE)
    music = synthesise_music("calm", 0, n, RATE)
    assert len(music) == n and np.all(np.isfinite(music))
    # Mid-chord, each chord's strongest partial is one of its own notes.
    for k in range(2):
        middle = music[int((k + 0.3) * chord * RATE) : int((k + 0.7) * chord * RATE)]
        notes = {round(ROOT_HZ * 2 ** (note / 12)) for note in PROGRESSIONS["calm"][k]}
        assert min(abs(_strongest_hz(middle) - hz) for hz in notes) < 3, (k, _strongest_hz(middle), notes)
    # A page that starts mid-book picks the chords up where the book is.
    later = synthesise_music("calm", int(chord * RATE), int(chord * RATE), RATE)
    window = slice(int(0.3 * chord * RATE), int(0.7 * chord * RATE))
    assert np.allclose(later[window], music[int(chord * RATE) :][window], atol=0.02 * float(np.abs(music).max()))
    assert len(synthesise_music("sad", 123, 0, RATE)) == 0


def _plucked(music: np.ndarray, chord_s: float, chord: tuple[int, ...]) -> int:
    """How many of the first chord's eighth-notes sound their arpeggio note (an octave above the chord's note in
    turn) louder just after their time than just before it."""

    def level(hz: float, a: float, b: float) -> float:
        part = music[int(a * RATE) : int(b * RATE)]
        t = np.arange(len(part)) / RATE
        return float(abs(np.sum(part * np.hanning(len(part)) * np.exp(-2j * np.pi * hz * t))))

    step = chord_s / 8
    plucked = 0
    for j in range(1, 8):
        hz = ROOT_HZ * 2 ** ((chord[j % len(chord)] + 12) / 12)
        plucked += level(hz, j * step, j * step + 0.12) > 1.8 * level(hz, j * step - 0.12, j * step)
    return plucked


def test_bright_music_plucks_eight_notes_a_chord() -> None:
    chord_s, chord = CHORD_S["bright"], PROGRESSIONS["bright"][0]
    bright = synthesise_music("bright", 0, int(chord_s * RATE), RATE).astype(np.float64)
    assert _plucked(bright, chord_s, chord) >= 6
    calm = synthesise_music("calm", 0, int(chord_s * RATE), RATE).astype(np.float64)
    assert _plucked(calm, chord_s, chord) <= 1, "a calm pad swells, it does not pluck"


def test_tense_music_holds_a_low_drone_under_its_chords() -> None:
    drone_hz = ROOT_HZ / 2 * 2 ** (2 / 12)  # the D below the chords
    n = int(CHORD_S["tense"] * RATE)

    def low_share(mood: str) -> float:
        music = synthesise_music(mood, 0, n, RATE).astype(np.float64)  # type: ignore[arg-type]
        spectrum = np.abs(np.fft.rfft(music * np.hanning(n))) ** 2
        hz = np.fft.rfftfreq(n, 1 / RATE)
        return float(spectrum[np.abs(hz - drone_hz) < 2].sum() / spectrum.sum())

    assert low_share("tense") > 0.2
    assert low_share("calm") < 0.01
