"""How a derived voice differs from the natural voice it is made from, and the cache token of a voice recipe."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class VoiceShift:
    """Pitch, vocal tract and texture changes that turn one speaker into another (applied by ``psola``)."""

    f0_ratio: float = 1.0
    """Multiplies the fundamental frequency (1.7 ~ an adult male to an adult female)."""
    formant_ratio: float = 1.0
    """Scales the spectral envelope upward (>1 = shorter vocal tract: female ~1.15, child ~1.25)."""
    flat_f0_hz: float | None = None
    """Replace the melody by a monotone at this pitch (a machine voice)."""
    breathiness: float = 0.0
    """0..1: mixes in breath noise that follows the voice (an old or growling texture)."""
    tremolo_depth: float = 0.0
    """Relative F0 wobble at TREMOLO_HZ (an old voice's shake)."""


RESHAPER_VERSION = "psola-1"
"""Part of every derived voice's cache token: changing the reshaping code re-voices the clips made with it."""


def voice_recipe_token(recipe: str, shifted: bool) -> str:
    """A short hash of a voice's recipe (and of the reshaper that renders it, when it is a derived voice)."""
    if shifted:
        recipe += f";{RESHAPER_VERSION}"
    return hashlib.sha256(recipe.encode("utf-8")).hexdigest()[:12]
