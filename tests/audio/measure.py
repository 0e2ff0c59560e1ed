"""Measurements of decoded audio for the sound tests, written here independently of the code under test:
BS.1770 integrated loudness (pyloudnorm), true peak (4x oversampled), the longest quiet stretch."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pyloudnorm
from scipy.signal import resample_poly

Audio = npt.NDArray[np.float64]


def decoded_audio(path: Path) -> tuple[Audio, int]:
    """Every channel of the file's first audio track, decoded by PyAV: (channels, samples), and the rate."""
    with av.open(str(path)) as container:
        rate_hz = container.streams.audio[0].codec_context.sample_rate
        audio = np.concatenate([frame.to_ndarray() for frame in container.decode(audio=0)], axis=1)
    return audio.astype(np.float64), rate_hz


def loudness_lufs(audio: Audio, rate_hz: int) -> float:
    """Integrated loudness of all channels together, as a player's meter reads the file."""
    return float(pyloudnorm.Meter(rate_hz).integrated_loudness(audio.T))


def true_peak_dbtp(audio: Audio) -> float:
    return float(20 * np.log10(max(np.abs(resample_poly(channel, 4, 1)).max() for channel in np.atleast_2d(audio))))


def longest_quiet_s(audio: Audio, rate_hz: int, below_dbfs: float = -50.0, window_s: float = 0.05) -> float:
    """The longest run of 50 ms windows whose RMS (over every channel) is under ``below_dbfs``."""
    size = round(window_s * rate_hz)
    channels = np.atleast_2d(audio)
    count = channels.shape[1] // size
    power = np.square(channels[:, : count * size]).reshape(len(channels), count, size).mean(axis=(0, 2))
    quiet = power < 10 ** (below_dbfs / 10)
    longest = current = 0
    for is_quiet in quiet:
        current = current + 1 if is_quiet else 0
        longest = max(longest, current)
    return longest * window_s
