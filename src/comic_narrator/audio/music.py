"""The optional music bed: slow synthesised chords in a mood chosen from the page, continuous across pages."""

from __future__ import annotations

from typing import Literal

import numpy as np

from comic_narrator.artifacts import PageReading
from comic_narrator.audio.synth import Audio, band

Mood = Literal["calm", "bright", "tense", "sad"]

ROOT_HZ = 130.81
"""C3: chords voiced from here sit under the voices' formants."""
PROGRESSIONS: dict[Mood, tuple[tuple[int, ...], ...]] = {
    "calm": ((0, 4, 7, 11), (-3, 0, 4, 7), (5, 9, 12, 16), (7, 11, 14, 16)),  # Cmaj7 Am7 Fmaj7 G6
    "bright": ((0, 4, 7, 12), (7, 11, 14, 19), (9, 12, 16, 21), (5, 9, 12, 17)),  # C G Am F
    "tense": ((2, 5, 9), (3, 6, 10), (2, 5, 9), (1, 5, 8)),  # Dm Ebdim-ish Dm C#aug over a D drone
    "sad": ((-3, 0, 4), (-7, -3, 0), (-12, -8, -5), (-10, -5, -1)),  # Am F C G, low
}
"""Semitones from :data:`ROOT_HZ`, a chord each ``CHORD_S``."""
CHORD_S: dict[Mood, float] = {"calm": 5.0, "bright": 4.0, "tense": 3.0, "sad": 6.0}
CROSSFADE_S = 1.5


def page_mood(page: PageReading, dark_fraction: float | None) -> Mood:
    """Tense when the page shouts, fights or fears; sad when its lines are sad; bright when it is light and
    excited; else calm. Emotions come from an LLM reader; the local reader's shouts and sound words count too."""
    emotions = [text.emotion for text in page.texts if text.emotion is not None]
    loud = sum(text.kind == "shout" for text in page.texts) + sum(e in ("angry", "scared") for e in emotions)
    spoken = max(1, sum(text.kind in ("speech", "shout") for text in page.texts))
    if emotions and sum(e == "sad" for e in emotions) * 3 >= len(emotions):
        return "sad"
    if loud / spoken >= 0.4 or (dark_fraction is not None and dark_fraction > 0.5):
        return "tense"
    if sum(e == "excited" for e in emotions) >= 1 and (dark_fraction is None or dark_fraction < 0.15):
        return "bright"
    return "calm"


def _chord(notes: tuple[int, ...], t: np.ndarray, mood: Mood) -> np.ndarray:
    out = np.zeros(len(t))
    for note in notes:
        hz = ROOT_HZ * 2 ** (note / 12)
        for partial, level in ((1, 1.0), (2, 0.3), (3, 0.12)):
            out += level * np.sin(2 * np.pi * hz * partial * t) + 0.5 * level * np.sin(
                2 * np.pi * hz * partial * 1.003 * t
            )
    if mood == "tense":
        out = out * (0.75 + 0.25 * np.sin(2 * np.pi * 5.0 * t)) + 1.5 * np.sin(
            2 * np.pi * ROOT_HZ / 2 * 2 ** (2 / 12) * t
        )
    return out


def synthesise_music(mood: Mood, start_sample: int, n: int, rate_hz: int) -> Audio:
    """``n`` samples of the mood's chords from ``start_sample`` of the book on: the chords follow the book's
    clock, so a mood that goes on over a page turn goes on where it was. Deterministic; level arbitrary."""
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    chord_s, chords = CHORD_S[mood], PROGRESSIONS[mood]
    t = (start_sample + np.arange(n)) / rate_hz
    out = np.zeros(n)
    first, last = int((t[0] - CROSSFADE_S) // chord_s), int(t[-1] // chord_s)
    for k in range(max(0, first), last + 1):
        lo = max(0, int(np.searchsorted(t, k * chord_s - CROSSFADE_S / 2)))
        hi = min(n, int(np.searchsorted(t, (k + 1) * chord_s + CROSSFADE_S / 2)))
        if hi <= lo:
            continue
        span = t[lo:hi]
        rise = np.clip((span - (k * chord_s - CROSSFADE_S / 2)) / CROSSFADE_S, 0, 1)
        fall = np.clip(((k + 1) * chord_s + CROSSFADE_S / 2 - span) / CROSSFADE_S, 0, 1)
        weight = np.sin(np.pi / 2 * np.minimum(rise, fall)) ** 2
        out[lo:hi] += weight * _chord(chords[k % len(chords)], span, mood)
        if mood == "bright":  # a soft arpeggio over the pad, a chord note an eighth of a chord apart
            step = chord_s / 8
            for j in range(8):
                at = k * chord_s + j * step
                pluck_lo, pluck_hi = int(np.searchsorted(t, at)), int(np.searchsorted(t, at + 0.6))
                if pluck_hi > pluck_lo:
                    pt = t[pluck_lo:pluck_hi] - at
                    hz = ROOT_HZ * 2 ** ((chords[k % len(chords)][j % len(chords[k % len(chords)])] + 12) / 12)
                    out[pluck_lo:pluck_hi] += 0.8 * np.sin(2 * np.pi * hz * pt) * np.exp(-pt / 0.15)
    return band(np.asarray(out, dtype=np.float32), 0, 2500, rate_hz)
