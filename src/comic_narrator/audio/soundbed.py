"""The sound bed: synthesised effects for lettered sound words, page-turn swishes, and a quiet room tone."""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.signal import butter, sosfilt

from comic_narrator.artifacts import BookReading, Timing

Audio = npt.NDArray[np.float32]
Effect = Literal["impact", "whoosh", "wind", "zap", "soft"]

# Lettered onomatopoeia in English and Japanese (katakana/hiragana) mapped to a family of synthesised sounds.
_EFFECT_PATTERNS: list[tuple[Effect, re.Pattern[str]]] = [
    (
        "impact",
        re.compile(r"boo+m|ba+m|ba+ng|cra+sh|thu+d|po+w|kra+k|wha+m|smash|slam|ドン|バン|ドカ|ガシャ|どん", re.I),
    ),
    ("zap", re.compile(r"za+p|bz+|zz+t|crackle|kz+|ビリ|バチ|ピカ", re.I)),
    ("whoosh", re.compile(r"w?h?o+sh|swoo+sh|fw+o+|zoo+m|swi+sh|shh+|ひゅ|シュ|ビュ|サッ", re.I)),
    ("wind", re.compile(r"brr+|wo+o+|hoo+|o{3,}|wind|ゴォ|ゴゴ|ヒュー|びゅ", re.I)),
]


def effect_for(text: str) -> Effect:
    """The effect family a sound word suggests; 'soft' (a gentle swish) when nothing matches."""
    for effect, pattern in _EFFECT_PATTERNS:
        if pattern.search(text):
            return effect
    return "soft"


def _band(noise: Audio, low_hz: float, high_hz: float, rate_hz: int) -> Audio:
    sos = butter(2, [low_hz, min(high_hz, rate_hz / 2 - 100)], btype="bandpass", fs=rate_hz, output="sos")
    return np.asarray(sosfilt(sos, noise), dtype=np.float32)


def _envelope(n: int, attack_s: float, rate_hz: int) -> Audio:
    t = np.arange(n, dtype=np.float32) / rate_hz
    attack = np.clip(t / max(attack_s, 1e-3), 0.0, 1.0)
    release = np.clip((n / rate_hz - t) / max(0.6 * n / rate_hz, 1e-3), 0.0, 1.0)
    return np.asarray(attack * release**2, dtype=np.float32)


def _peak_normalise(samples: Audio, peak: float) -> Audio:
    top = float(np.abs(samples).max(initial=0.0))
    return samples if top == 0.0 else np.asarray(samples * (peak / top), dtype=np.float32)


def synthesise_effect(effect: Effect, rate_hz: int, rng: np.random.Generator) -> Audio:
    """A short effect, peak 1.0. Every family is made from seeded noise and oscillators: no sample files."""
    if effect == "impact":
        n = int(0.7 * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        thump = np.sin(2 * np.pi * (55 + 40 * np.exp(-t / 0.05)) * t) * np.exp(-t / 0.18)
        crack = _band(rng.standard_normal(n).astype(np.float32), 800, 5000, rate_hz) * np.exp(-t / 0.03)
        out = thump + 0.3 * crack
    elif effect == "zap":
        n = int(0.45 * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        chirp = np.sign(np.sin(2 * np.pi * np.cumsum(2200 * np.exp(-t / 0.12) + 150) / rate_hz))
        out = 0.5 * chirp * np.exp(-t / 0.15) + 0.3 * rng.standard_normal(n) * np.exp(-t / 0.05)
        out = _band(out.astype(np.float32), 150, 6000, rate_hz)
    elif effect == "wind":
        n = int(2.2 * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        low = _band(rng.standard_normal(n).astype(np.float32), 150, 900, rate_hz)
        howl = _band(rng.standard_normal(n).astype(np.float32), 500, 700, rate_hz) * 3
        out = (low + howl) * (0.6 + 0.4 * np.sin(2 * np.pi * 0.7 * t)) * _envelope(n, 0.5, rate_hz)
    else:
        length_s = 0.6 if effect == "whoosh" else 0.4
        n = int(length_s * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        noise = rng.standard_normal(n).astype(np.float32)
        low, high = _band(noise, 300, 1500, rate_hz), _band(noise, 1500, 7000, rate_hz)
        sweep = t / t[-1]
        out = (low * (1 - sweep) + high * sweep) * _envelope(n, length_s * 0.45, rate_hz)
    return _peak_normalise(np.asarray(out, dtype=np.float32), 1.0)


def room_tone(n: int, rate_hz: int, rng: np.random.Generator) -> Audio:
    """Brown-ish noise band-limited to 80-600 Hz: a barely-there floor that keeps pauses from sounding dead."""
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    return _peak_normalise(_band(rng.standard_normal(n).astype(np.float32), 80, 600, rate_hz), 1.0)


def build_bed(
    reading: BookReading,
    timing: Timing,
    total_samples: int,
    *,
    effects_peak: float,
    page_turn_peak: float,
    room_tone_peak: float,
    seed: int = 17,
) -> Audio:
    """The bed under the voices, sample-aligned with the timeline. Deterministic for a given timeline."""
    rate = timing.sample_rate_hz
    rng = np.random.default_rng(seed)
    bed = room_tone(total_samples, rate, rng) * np.float32(room_tone_peak)
    pages = {page.page: page for page in reading.pages}
    previous_page: int | None = None
    for shot in timing.shots:
        start = round(shot.start_s * rate)
        end = min(total_samples, start + shot.frames * rate // timing.fps)
        layers: list[tuple[int, Audio]] = []
        if shot.panel < 0 and previous_page is not None and shot.page != previous_page:
            layers.append((start, synthesise_effect("soft", rate, rng) * np.float32(page_turn_peak)))
        previous_page = shot.page
        page = pages.get(shot.page)
        if page is not None and shot.panel >= 0:
            words = [t.text for t in page.texts if t.kind == "sound" and t.panel == shot.panel]
            for number, word in enumerate(words[:3]):  # a cluttered panel gets its first three effects
                offset = start + int((0.05 + 0.35 * number) * rate)
                layers.append((offset, synthesise_effect(effect_for(word), rate, rng) * np.float32(effects_peak)))
        for offset, sound in layers:
            stop = min(end, offset + len(sound))  # an effect never spills into the next shot
            if stop > offset:
                bed[offset:stop] += sound[: stop - offset]
    return bed
