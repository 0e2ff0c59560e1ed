"""Synthesised effects for lettered sound words (chosen from the word) and the page-turn swish."""

from __future__ import annotations

import re
from typing import Literal

import numpy as np

from comic_narrator.audio.synth import Audio, band, peak

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


def _envelope(n: int, attack_s: float, rate_hz: int) -> Audio:
    t = np.arange(n, dtype=np.float32) / rate_hz
    attack = np.clip(t / max(attack_s, 1e-3), 0.0, 1.0)
    release = np.clip((n / rate_hz - t) / max(0.6 * n / rate_hz, 1e-3), 0.0, 1.0)
    return np.asarray(attack * release**2, dtype=np.float32)


def synthesise_effect(effect: Effect, rate_hz: int, rng: np.random.Generator) -> Audio:
    """A short effect, peak 1.0. Every family is made from seeded noise and oscillators: no sample files."""
    if effect == "impact":
        n = int(0.7 * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        thump = np.sin(2 * np.pi * (55 + 40 * np.exp(-t / 0.05)) * t) * np.exp(-t / 0.18)
        crack = band(rng.standard_normal(n).astype(np.float32), 800, 5000, rate_hz) * np.exp(-t / 0.03)
        out = thump + 0.3 * crack
    elif effect == "zap":
        n = int(0.45 * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        chirp = np.sign(np.sin(2 * np.pi * np.cumsum(2200 * np.exp(-t / 0.12) + 150) / rate_hz))
        out = 0.5 * chirp * np.exp(-t / 0.15) + 0.3 * rng.standard_normal(n) * np.exp(-t / 0.05)
        out = band(out.astype(np.float32), 150, 6000, rate_hz)
    elif effect == "wind":
        n = int(2.2 * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        low = band(rng.standard_normal(n).astype(np.float32), 150, 900, rate_hz)
        howl = band(rng.standard_normal(n).astype(np.float32), 500, 700, rate_hz) * 3
        out = (low + howl) * (0.6 + 0.4 * np.sin(2 * np.pi * 0.7 * t)) * _envelope(n, 0.5, rate_hz)
    else:
        length_s = 0.6 if effect == "whoosh" else 0.4
        n = int(length_s * rate_hz)
        t = np.arange(n, dtype=np.float32) / rate_hz
        noise = rng.standard_normal(n).astype(np.float32)
        low, high = band(noise, 300, 1500, rate_hz), band(noise, 1500, 7000, rate_hz)
        sweep = t / t[-1]
        out = (low * (1 - sweep) + high * sweep) * _envelope(n, length_s * 0.45, rate_hz)
    return peak(np.asarray(out, dtype=np.float32))
