"""Page selection ('3-7', '1,4,9-') and natural sort order ('p2' before 'p10')."""

from __future__ import annotations

import re

from comic_narrator.errors import InputError

_NUMBER = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders embedded numbers numerically, case-insensitively otherwise."""
    parts: list[tuple[int, int | str]] = []
    for chunk in _NUMBER.split(name):
        if not chunk:
            continue
        parts.append((0, int(chunk)) if chunk.isdigit() else (1, chunk.casefold()))
    return tuple(parts)


def parse_page_selection(spec: str | None, page_count: int) -> list[int]:
    """1-based page numbers selected by ``spec`` (None = all), in book order, validated against the count."""
    if spec is None or not spec.strip():
        return list(range(1, page_count + 1))
    chosen: set[int] = set()
    for raw in spec.split(","):
        part = raw.strip()
        match = re.fullmatch(r"(\d*)\s*-\s*(\d*)|(\d+)", part)
        if not match:
            raise InputError(f"--pages {spec!r}: cannot read {part!r} (use e.g. 3-7 or 1,3,5-)")
        if match.group(3):
            first = last = int(match.group(3))
        else:
            first = int(match.group(1)) if match.group(1) else 1
            last = int(match.group(2)) if match.group(2) else page_count
        if first < 1 or last < first:
            raise InputError(f"--pages {spec!r}: {part!r} is not a valid range")
        if first > page_count:
            raise InputError(f"--pages {spec!r}: the input has only {page_count} page(s)")
        chosen.update(range(first, min(last, page_count) + 1))
    return sorted(chosen)
