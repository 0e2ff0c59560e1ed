"""The ambiences of the sound bed, synthesised from seeded noise and oscillators: one function per setting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

import numpy as np

from comic_narrator.artifacts import SceneCue
from comic_narrator.audio.synth import Audio, band, brown, decaying, drift, noise, peak, scatter, unit

Ambience = Literal[SceneCue, "neutral"]
"""A scene's ambience, or ``neutral`` (soft air) for a page nothing tells about."""
AMBIENCES: tuple[Ambience, ...] = (*get_args(SceneCue), "neutral")


def _wind(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Gusts: three bands of noise, each swelling on its own slow drift, over a low rumble."""
    out = unit(band(brown(n, rate, rng), 0, 150, rate)) * 0.3
    for low, high, speed, level in ((180, 450, 0.15, 1.0), (400, 900, 0.22, 0.7), (850, 1700, 0.3, 0.4)):
        gust = drift(n, rate, rng, speed)
        out += unit(band(noise(n, rng), low, high, rate, order=3)) * (0.15 + gust**2) * level
    return out


def _rain(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """A steady hiss of far drops and a patter of near ones (short bright bursts)."""
    out = unit(band(noise(n, rng), 1200, 9000, rate)) * (0.8 + 0.2 * drift(n, rate, rng, 0.1))
    drop = peak(band(noise(round(0.012 * rate), rng), 1800, 7000, rate) * decaying(round(0.012 * rate), rate, 0.003))
    scatter(out, drop, rng, 60.0, rate, 3.0)
    scatter(out, peak(band(drop, 0, 2500, rate)), rng, 4.0, rate, 4.0)
    return out


def _sea(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Waves: a swell every 5 to 9 s (a slow rise, a faster fall) on surf rumble, the wash hissing after it."""
    swell = np.zeros(n, dtype=np.float32)
    start_s = -rng.uniform(0, 6)
    while start_s < n / rate:
        period_s = rng.uniform(5.0, 9.0)
        lo, hi = max(0, round(start_s * rate)), min(n, round((start_s + period_s) * rate))
        phase = (np.arange(lo, hi) / rate - start_s) / period_s
        shape = np.where(phase < 0.6, np.sin(np.pi / 2 * phase / 0.6) ** 2, np.cos(np.pi / 2 * (phase - 0.6) / 0.4))
        swell[lo:hi] = np.maximum(swell[lo:hi], shape * rng.uniform(0.6, 1.0))
        start_s += period_s * rng.uniform(0.7, 1.0)
    surf = unit(band(brown(n, rate, rng), 40, 500, rate)) * (0.3 + swell)
    wash = unit(band(noise(n, rng), 500, 4000, rate)) * np.roll(swell, round(0.8 * rate)) ** 2 * 0.5
    return np.asarray(surf + wash, dtype=np.float32)


def _city(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Traffic far off: a low rumble, cars swelling past every few seconds."""
    out = unit(band(brown(n, rate, rng), 30, 250, rate)) * 0.6
    passes = np.zeros(n, dtype=np.float32)
    for centre_s in np.cumsum(rng.uniform(2.0, 6.0, int(n / rate / 2) + 2)) - 2.0:
        width_s, level = rng.uniform(0.8, 1.8), rng.uniform(0.3, 1.0)
        lo, hi = max(0, round((centre_s - 3 * width_s) * rate)), min(n, round((centre_s + 3 * width_s) * rate))
        passes[lo:hi] += np.exp(-(((np.arange(lo, hi) / rate - centre_s) / width_s) ** 2)) * level
    return out + unit(band(noise(n, rng), 120, 900, rate)) * passes * 0.5


def _forest(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Leaves in a breeze and birds: short phrases of two to five chirps between 2.5 and 5 kHz."""
    out = unit(band(noise(n, rng), 1500, 8000, rate)) * 0.3 * (0.2 + drift(n, rate, rng, 0.2) ** 2)
    out += unit(band(brown(n, rate, rng), 60, 300, rate)) * 0.2
    for start in rng.integers(0, max(1, n), rng.poisson(0.5 * n / rate)):
        pitch, at = rng.uniform(2500, 4500), int(start)
        for _ in range(int(rng.integers(2, 6))):
            length = int(rng.uniform(0.05, 0.12) * rate)
            ct = np.arange(length) / rate
            sweep = pitch * (1 + rng.uniform(-0.25, 0.25) * ct / ct[-1]) + 300 * np.sin(2 * np.pi * 30 * ct)
            chirp = np.sin(2 * np.pi * np.cumsum(sweep) / rate) * np.sin(np.pi * ct / ct[-1]) ** 2
            stop = min(n, at + length)
            out[at:stop] += (chirp[: stop - at] * 0.6).astype(np.float32)
            at += length + int(rng.uniform(0.03, 0.1) * rate)
            if at >= n:
                break
    return out


def _crowd(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """A murmur: eight far voices, each a formant band of noise opening and closing at syllable rate."""
    out = np.zeros(n, dtype=np.float32)
    for _ in range(8):
        low = rng.uniform(250, 700)
        syllables = drift(n, rate, rng, rng.uniform(3.0, 5.0)) ** 3
        talking = drift(n, rate, rng, 0.15) > 0.35
        out += unit(band(noise(n, rng), low, low * rng.uniform(2.5, 4.0), rate)) * syllables * talking
    return band(out, 0, 2500, rate)


def _fire(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """A low roar under crackles: sparse sharp clicks with a heavy tail of loud ones."""
    out = unit(band(brown(n, rate, rng), 40, 300, rate)) * (0.4 + 0.6 * drift(n, rate, rng, 0.4))
    click = peak(band(noise(round(0.004 * rate), rng), 1500, 12000, rate) * decaying(round(0.004 * rate), rate, 0.0008))
    scatter(out, click, rng, 25.0, rate, 2.0)
    scatter(out, peak(band(click, 0, 3000, rate)), rng, 1.5, rate, 3.0)
    return out


def _night(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Crickets (a 4 to 5 kHz tone pulsed in short chirps, three of them at their own pitch and pace) over still
    air."""
    t = np.arange(n) / rate
    out = unit(band(brown(n, rate, rng), 40, 400, rate)) * 0.1
    for level in (1.0, 0.6, 0.35):
        pitch, every = rng.uniform(4000, 5200), rng.uniform(0.5, 0.9)
        chirp = np.clip(((t + rng.uniform(0, every)) % every) / 0.15, 0.0, 1.0)
        pulses = np.sin(np.pi * ((t * 28) % 1.0)) ** 4 * np.sin(np.pi * chirp) ** 2  # no edge: no click
        out += (np.sin(2 * np.pi * pitch * t) * pulses * level * 0.3).astype(np.float32)
    return out


def _interior(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Room tone: low air in a closed space, a faint hiss above it."""
    return unit(band(brown(n, rate, rng), 60, 500, rate)) + unit(band(noise(n, rng), 2000, 8000, rate)) * 0.05


def _neutral(n: int, rate: int, rng: np.random.Generator) -> Audio:
    """Soft air, barely moving: a floor under pauses that says nothing about the place."""
    return unit(band(brown(n, rate, rng), 80, 900, rate)) * (0.8 + 0.2 * drift(n, rate, rng, 0.1))


SYNTHS: dict[Ambience, Callable[[int, int, np.random.Generator], Audio]] = {
    "wind": _wind,
    "rain": _rain,
    "sea": _sea,
    "city": _city,
    "forest": _forest,
    "crowd": _crowd,
    "fire": _fire,
    "night": _night,
    "interior": _interior,
    "neutral": _neutral,
}


def synthesise_ambience(kind: Ambience, n: int, rate_hz: int, rng: np.random.Generator) -> Audio:
    """``n`` samples of ``kind``, at an arbitrary level (the bed sets it by loudness). Deterministic for ``rng``."""
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    return np.asarray(SYNTHS[kind](n, rate_hz, rng), dtype=np.float32)
