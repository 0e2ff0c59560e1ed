"""Ducking: the gain that lowers the beds under speech, easing down before each line and back up after it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

CONTROL_HZ = 200
"""The gain curve is computed at this rate and interpolated: 5 ms steps are far finer than any ramp."""


def duck_gain(
    total_samples: int,
    rate_hz: int,
    speech_s: Sequence[tuple[float, float]],
    depth_db: float,
    attack_s: float,
    release_s: float,
) -> npt.NDArray[np.float32]:
    """Per sample, the beds' gain: 1 in pauses, ``depth_db`` down under speech. The timeline says where every
    line is, so the gain starts down ``attack_s`` before a line (it is already down when the voice starts) and
    comes back over ``release_s`` after it, both on a raised cosine; a pause too short to come back up in stays
    down rather than pump."""
    if total_samples == 0 or not speech_s or depth_db <= 0:
        return np.ones(total_samples, dtype=np.float32)
    steps = int(np.ceil(total_samples / rate_hz * CONTROL_HZ)) + 1
    speaking = np.zeros(steps, dtype=bool)
    for start_s, end_s in sorted(speech_s):
        speaking[max(0, int(start_s * CONTROL_HZ)) : min(steps, int(np.ceil(end_s * CONTROL_HZ)) + 1)] = True
    bridge = round((attack_s + release_s) * CONTROL_HZ)
    index = np.arange(steps)
    last = np.maximum.accumulate(np.where(speaking, index, -(10**9)))  # the latest speaking step so far
    following = np.minimum.accumulate(np.where(speaking, index, 10**9)[::-1])[::-1]  # the next one
    speaking |= (following - last) <= bridge
    last = np.maximum.accumulate(np.where(speaking, index, -(10**9)))
    following = np.minimum.accumulate(np.where(speaking, index, 10**9)[::-1])[::-1]

    def ramp(distance: npt.NDArray[np.int64], length_s: float) -> npt.NDArray[np.float64]:
        x = np.clip(distance / max(length_s * CONTROL_HZ, 1.0), 0.0, 1.0)
        return np.asarray(0.5 + 0.5 * np.cos(np.pi * x), dtype=np.float64)

    depth = np.maximum(ramp(following - index, attack_s), ramp(index - last, release_s))
    gain = 10 ** (-depth_db * depth / 20)
    positions = np.arange(total_samples) * (CONTROL_HZ / rate_hz)
    return np.asarray(np.interp(positions, index, gain), dtype=np.float32)
