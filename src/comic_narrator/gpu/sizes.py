"""Byte sizes as people write them ('32GiB', '9.5 GiB', '24000MiB') and as vLLM prints them (GiB, 2 decimals)."""

from __future__ import annotations

import re

from comic_narrator.errors import GpuError

KIB = 1024
MIB = 1024**2
GIB = 1024**3

_UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "k": KIB,
    "kib": KIB,
    "kb": 1000,
    "m": MIB,
    "mib": MIB,
    "mb": 1000**2,
    "g": GIB,
    "gib": GIB,
    "gb": 1000**3,
    "t": 1024**4,
    "tib": 1024**4,
    "tb": 1000**4,
}

_SIZE = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_bytes(text: str) -> int:
    """'32GiB' -> 34359738368. Binary units (GiB) are 1024-based, decimal ones (GB) 1000-based; no unit = bytes."""
    match = _SIZE.match(text)
    if match is None:
        raise GpuError(f"cannot read the size {text!r}: write it like 32GiB, 9.5GiB or 24000MiB")
    number = float(match.group(1).replace(",", "").replace("_", ""))
    unit = match.group(2).lower()
    if unit not in _UNITS:
        raise GpuError(f"unknown size unit {match.group(2)!r} in {text!r}: use B, MiB, GiB (or MB, GB)")
    return round(number * _UNITS[unit])


def gib(num_bytes: int | float) -> float:
    """Bytes as GiB (a float)."""
    return float(num_bytes) / GIB


def format_gib(num_bytes: int | float) -> str:
    """Bytes as vLLM prints them: GiB rounded to 2 decimals, without the unit."""
    return f"{round(float(num_bytes) / GIB, 2):.2f}"


def gib_to_bytes(value_gib: float) -> int:
    """GiB (as read from a log line) back to bytes."""
    return round(value_gib * GIB)
