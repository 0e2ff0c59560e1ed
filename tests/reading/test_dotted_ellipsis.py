"""A row of separate dots across a balloon's middle is an ellipsis ("……"); fewer dots, a short row, dots off the
line, big blobs or a row off centre are not (a drawer's handles, buttons, hatching)."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.reading.mute_balloons import MuteBalloonParams, _dotted_ellipsis

LETTER = 45.0


def _balloon(
    centres: list[tuple[int, int]], dot: int = 5, shape: tuple[int, int] = (180, 100)
) -> tuple[np.ndarray, np.ndarray]:
    filled = np.ones(shape, dtype=bool)
    ink = np.zeros(shape, dtype=bool)
    for cx, cy in centres:
        ink[cy - dot // 2 : cy - dot // 2 + dot, cx - dot // 2 : cx - dot // 2 + dot] = True
    return ink, filled


def _column(n: int, x: int = 50, top: int = 40, step: int = 8) -> list[tuple[int, int]]:
    return [(x, top + step * k) for k in range(n)]


@pytest.mark.parametrize(
    ("centres", "dot", "ellipsis"),
    [
        (_column(12), 5, True),  # Black Jack's "……": twelve dots down the middle, two letters long
        ([(y, x) for x, y in _column(12, x=50, top=46)], 5, True),  # lettered across: a row (transposed below)
        (_column(5, step=18), 5, False),  # too few dots for "……"
        (_column(8, step=6), 5, False),  # eight dots but barely a letter long
        ([(50 + (7 if k % 2 else -7), 40 + 8 * k) for k in range(12)], 5, False),  # a zigzag, not a line
        (_column(8, top=20, step=20), 16, False),  # blobs a third of a letter across
        (_column(12, x=12), 5, False),  # a row along the region's edge
        (_column(6, step=8) + _column(6, top=128, step=8), 5, False),  # two rows with a gap far wider than the rest
    ],
)
def test_what_counts_as_a_dotted_ellipsis(centres: list[tuple[int, int]], dot: int, ellipsis: bool) -> None:
    across = centres[0][1] == centres[-1][1]
    ink, filled = _balloon(centres, dot, (100, 180) if across else (180, 100))
    assert _dotted_ellipsis(ink, filled, LETTER, MuteBalloonParams()) == ellipsis
