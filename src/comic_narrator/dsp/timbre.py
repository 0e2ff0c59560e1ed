"""Pitch and timbre changes applied to synthesised speech: resampling shifts and level handling."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from comic_narrator.dsp.samples import FloatAudio

SPEECH_RMS_DBFS = -20.0
"""Every clip leaves the voice bank at this RMS level over its voiced part (before the delivery's gain)."""
PEAK_CEILING = 0.97
"""Samples are scaled down (never clipped) to stay below this peak."""


def semitones_to_ratio(semitones: float) -> float:
    return float(2.0 ** (semitones / 12.0))


def shift_by_resampling(samples: FloatAudio, ratio: float) -> FloatAudio:
    """Play ``samples`` ``ratio`` times faster: pitch and formants rise by ``ratio``, duration falls by it.

    An engine that synthesises ``ratio`` times slower first gets a voice of the same tempo whose whole
    vocal tract is scaled: above 1 it sounds younger/smaller, below 1 older/bigger. Polyphase filtering
    keeps it free of aliasing.
    """
    from scipy.signal import resample_poly

    if abs(ratio - 1.0) < 1e-4 or len(samples) == 0:
        return samples.astype(np.float32, copy=False)
    frac = Fraction(ratio).limit_denominator(97)
    # Faster playback = fewer samples at the same rate: up by denominator, down by numerator.
    out = resample_poly(samples.astype(np.float64), frac.denominator, frac.numerator)
    return np.asarray(out, dtype=np.float32)


def voiced_rms(samples: FloatAudio, sample_rate_hz: int) -> float:
    """RMS over the 20 ms frames that carry speech (within 35 dB of the loudest frame)."""
    frame = max(1, int(0.02 * sample_rate_hz))
    n_frames = len(samples) // frame
    if n_frames == 0:
        return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    frames = samples[: n_frames * frame].astype(np.float64).reshape(n_frames, frame)
    energy = np.mean(frames * frames, axis=1)
    loudest = float(energy.max())
    if loudest <= 1e-12:
        return 0.0
    active = energy[energy >= loudest * 10 ** (-35 / 10)]
    return float(np.sqrt(active.mean()))


def level_speech(samples: FloatAudio, sample_rate_hz: int, gain_db: float) -> FloatAudio:
    """Bring a clip to SPEECH_RMS_DBFS plus ``gain_db``, then scale down if the peak would pass the ceiling."""
    rms = voiced_rms(samples, sample_rate_hz)
    if rms <= 1e-9:
        return samples.astype(np.float32, copy=True)
    target = 10 ** ((SPEECH_RMS_DBFS + gain_db) / 20.0)
    out = samples.astype(np.float64) * (target / rms)
    peak = float(np.abs(out).max())
    if peak > PEAK_CEILING:
        out *= PEAK_CEILING / peak
    return out.astype(np.float32)


def trim_silence(samples: FloatAudio, sample_rate_hz: int, pad_s: float = 0.04) -> FloatAudio:
    """Cut leading/trailing near-silence (below -50 dBFS), keeping ``pad_s`` either side."""
    if len(samples) == 0:
        return samples
    loud = np.flatnonzero(np.abs(samples) > 10 ** (-50 / 20))
    if len(loud) == 0:
        return samples[:0]
    pad = int(pad_s * sample_rate_hz)
    return samples[max(0, int(loud[0]) - pad) : int(loud[-1]) + pad + 1]
