"""True peak (ITU-R BS.1770-4 annex 2, 4x oversampled): measuring it, and the look-ahead limiter that holds it down."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

PEAK_CEILING_DBTP = -2.0
"""The limiter holds the mix's true peaks under this. The file must read <= -1 dBTP once AAC-encoded and decoded,
and the encoder adds up to about +0.7 dB of its own on a hard-limited mix (measured on the sample page's voices
driven 6 dB into the limiter); EBU Tech 3343 likewise leaves 2 dB under full scale for lossy codecs."""
PEAK_CEILING = float(10 ** (PEAK_CEILING_DBTP / 20))
LIMITER_LOOKAHEAD_S = 0.005
"""The limiter's gain starts falling this long before a peak and recovers as long after it: short enough to
catch a plosive or a BOOM, long enough that the gain change is not itself a click."""
TRUE_PEAK_OVERSAMPLING = 4
"""ITU-R BS.1770-4 annex 2 measures true peak at 4x oversampling (at 48 kHz; enough to see intersample overs)."""
_MARGIN = 256
"""Samples of context either side of a block: wider than resample_poly's interpolation filter at 4x."""
_REACH = 12
"""Input samples either side that one oversampled point depends on (resample_poly's 4x filter spans 10)."""
INTERPOLATOR_GAIN = 2.25
"""The most the 4x interpolator can make of the samples around a point: the largest sum of its taps' magnitudes
over its four phases (2.241 for resample_poly's Kaiser-windowed filter at 4x)."""


def dbfs(level: float) -> float:
    """A linear level in dB (full scale); -inf for silence."""
    return float(20 * np.log10(level)) if level > 0 else float("-inf")


def true_peak_envelope(
    track: npt.NDArray[np.float32], floor: float = 0.0, block: int = 1 << 20
) -> npt.NDArray[np.float64]:
    """Per sample, the largest magnitude of the 4x-oversampled waveform around it (the sample itself included).
    Only the stretches that can reach ``floor`` are oversampled (every sample within the interpolator's reach
    under ``floor`` / :data:`INTERPOLATOR_GAIN` keeps it under ``floor``): exact wherever the envelope reaches
    ``floor``, the sample's own magnitude elsewhere. Oversampled in blocks with a margin wider than the
    interpolation filter, so a long book stays small in memory."""
    from scipy.ndimage import maximum_filter1d

    envelope = np.abs(track).astype(np.float64)
    if floor <= 0:
        _oversample_into(envelope, track, 0, len(track), block)
        return envelope
    loud = maximum_filter1d(envelope >= floor / INTERPOLATOR_GAIN, size=2 * _REACH + 1)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], loud.astype(np.int8), [0]])))
    runs: list[list[int]] = []
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if runs and start - runs[-1][1] < 2 * _MARGIN:  # close runs share one resampling
            runs[-1][1] = int(stop)
        else:
            runs.append([int(start), int(stop)])
    for start, stop in runs:
        _oversample_into(envelope, track, start, stop, block)
    return envelope


def _oversample_into(
    envelope: npt.NDArray[np.float64], track: npt.NDArray[np.float32], first: int, last: int, block: int
) -> None:
    from scipy.signal import resample_poly

    factor = TRUE_PEAK_OVERSAMPLING
    for start in range(first, last, block):
        stop = min(last, start + block)
        lo, hi = max(0, start - _MARGIN), min(len(track), stop + _MARGIN)
        upsampled = np.abs(resample_poly(track[lo:hi].astype(np.float64), factor, 1))[: (hi - lo) * factor]
        peaks = upsampled.reshape(hi - lo, factor).max(axis=1)[start - lo : stop - lo]
        envelope[start:stop] = np.maximum(envelope[start:stop], peaks)


def block_true_peaks(chunks: Iterable[npt.NDArray[np.float32]], block: int, floor: float = 0.0) -> Iterator[float]:
    """The true peak of every ``block`` samples of a track given in chunks of any length (the last block may be
    shorter): a decoded file measured as it is decoded, never held whole. A chunk of shape (channels, samples)
    gives each block's largest true peak over its channels (a stereo file decoded once). Exact for the blocks
    whose true peak reaches ``floor`` (see :func:`true_peak_envelope`)."""
    pending: list[npt.NDArray[np.float32]] = []  # chunks not yet measured, after ``context`` already measured
    waiting = 0
    context: npt.NDArray[np.float32] | None = None
    step = block * max(1, (1 << 18) // block)

    def measure(samples: npt.NDArray[np.float32], after: npt.NDArray[np.float32]) -> Iterator[float]:
        window = samples if context is None else np.concatenate([context, samples], axis=1)
        window = np.concatenate([window, after], axis=1)
        lead = 0 if context is None else context.shape[1]
        envelope = np.max([true_peak_envelope(channel, floor) for channel in window], axis=0)
        envelope = envelope[lead : lead + samples.shape[1]]
        yield from np.maximum.reduceat(envelope, np.arange(0, len(envelope), block)).tolist()

    for chunk in chunks:
        pending.append(np.atleast_2d(np.asarray(chunk, dtype=np.float32)))
        waiting += pending[-1].shape[1]
        if waiting < step + _MARGIN:
            continue
        held = np.concatenate(pending, axis=1)
        while held.shape[1] >= step + _MARGIN:
            yield from measure(held[:, :step], held[:, step : step + _MARGIN])
            context, held = held[:, step - _MARGIN : step], held[:, step:]
        pending, waiting = [held], held.shape[1]
    if waiting:
        held = np.concatenate(pending, axis=1)
        yield from measure(held, held[:, :0])


def limit_peaks(
    track: npt.NDArray[np.float32], sample_rate_hz: int, ceiling: float = PEAK_CEILING
) -> npt.NDArray[np.float32]:
    """A look-ahead peak limiter: a smooth gain that is never above what each sample's true peak needs to sit under
    the ceiling (a minimum filter over +-lookahead, then a moving average half as wide, so the average of minima
    near a sample never exceeds that sample's need). Unlike a waveshaper it adds no harmonics of its own, which
    would themselves overshoot between samples."""
    from scipy.ndimage import minimum_filter1d, uniform_filter1d

    if len(track) == 0:
        return track.copy()
    need = np.minimum(1.0, ceiling / np.maximum(true_peak_envelope(track, ceiling), 1e-12))
    if need.min() >= 1.0:
        return track.copy()
    half = max(1, round(LIMITER_LOOKAHEAD_S * sample_rate_hz))
    gain = minimum_filter1d(need, size=2 * half + 1, mode="nearest")
    gain = uniform_filter1d(gain, size=half + 1, mode="nearest")
    limited = track.astype(np.float64) * np.minimum(gain, need)
    # What smoothing leaves between samples is a hair; the sample peak itself never passes the ceiling.
    return np.asarray(np.clip(limited, -ceiling, ceiling), dtype=np.float32)
