"""The user's own sounds (``--sounds DIR``): a mapping file naming which recordings replace which synthesised
sounds, checked when the run starts, the recordings read when the bed is made."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import get_args

import numpy as np
import soundfile

from comic_narrator.audio.ambience import AMBIENCES
from comic_narrator.audio.music import Mood
from comic_narrator.audio.soundbed import Effect
from comic_narrator.audio.synth import Audio
from comic_narrator.errors import InputError

MAPPING_FILE = "sounds.toml"
SECTIONS: dict[str, tuple[str, ...]] = {
    "ambience": AMBIENCES,
    "effects": get_args(Effect),
    "music": get_args(Mood),
    "page": ("turn",),
}
"""What the mapping file may name: each section's keys are the sounds it replaces."""
LOOP_CROSSFADE_S = 1.0
"""A recording shorter than what it must cover is looped, each repeat faded into the last over this long."""


@dataclass(frozen=True)
class SoundLibrary:
    """The mapping, checked: ``files[section][key]`` is a readable audio file."""

    folder: Path
    files: dict[str, dict[str, Path]] = field(default_factory=dict)

    def file_for(self, section: str, key: str) -> Path | None:
        return self.files.get(section, {}).get(key)


def load_library(folder: Path) -> SoundLibrary:
    """The mapping file in ``folder``, checked: every section and key is one the bed knows, every file exists
    and reads as audio. A problem is one InputError naming the file and what is wrong."""
    mapping = folder / MAPPING_FILE
    if not folder.is_dir():
        raise InputError("is not a folder (--sounds wants a folder holding sounds.toml)", path=folder)
    try:
        data = tomllib.loads(mapping.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(f"no {MAPPING_FILE} in the --sounds folder", path=folder) from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot be read as TOML ({exc})", path=mapping) from exc
    files: dict[str, dict[str, Path]] = {}
    for section, entries in data.items():
        if section not in SECTIONS:
            raise InputError(f"unknown section [{section}]; known: {', '.join(SECTIONS)}", path=mapping)
        if not isinstance(entries, dict):
            raise InputError(f'[{section}] must be a table of name = "file" lines', path=mapping)
        for key, name in entries.items():
            if key not in SECTIONS[section]:
                raise InputError(f"[{section}] {key}: unknown; known: {', '.join(SECTIONS[section])}", path=mapping)
            if not isinstance(name, str):
                raise InputError(f"[{section}] {key}: the value must be a file name in quotes", path=mapping)
            path = (folder / name).resolve()
            try:
                soundfile.info(str(path))
            except (OSError, RuntimeError) as exc:
                raise InputError(f"[{section}] {key}: {name} is missing or not audio ({exc})", path=mapping) from exc
            files.setdefault(section, {})[key] = path
    return SoundLibrary(folder=folder, files=files)


@lru_cache(maxsize=32)
def read_sound(path: Path, rate_hz: int) -> Audio:
    """A recording as mono float samples at ``rate_hz`` (its channels averaged), cached for the run."""
    from scipy.signal import resample_poly

    try:
        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (OSError, RuntimeError) as exc:
        raise InputError(f"cannot be read as audio ({exc})", path=path) from exc
    mono = np.asarray(data.mean(axis=1), dtype=np.float32)
    if int(rate) != rate_hz:
        divisor = np.gcd(int(rate), rate_hz)
        mono = np.asarray(resample_poly(mono, rate_hz // divisor, int(rate) // divisor), dtype=np.float32)
    return mono


def looped(sound: Audio, n: int, rate_hz: int, offset: int = 0) -> Audio:
    """``n`` samples of ``sound`` repeated, from ``offset`` into the loop, each repeat crossfaded into the last
    (equal power) so the seam is not heard."""
    if len(sound) == 0:
        return np.zeros(n, dtype=np.float32)
    fade = min(round(LOOP_CROSSFADE_S * rate_hz), len(sound) // 3)  # none for a sound under three samples
    ramp = np.sin(np.linspace(0, np.pi / 2, fade)).astype(np.float32)
    body = sound[: len(sound) - fade].copy()
    body[:fade] = body[:fade] * ramp + sound[len(sound) - fade :] * ramp[::-1]  # the tail fades into the head
    start = (offset + fade) % len(body)  # the first pass plays the recording as it is, the seams come after
    return np.resize(np.roll(body, -start), n).astype(np.float32)
