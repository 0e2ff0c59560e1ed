"""Tempo and pitch for engines without native controls: WSOLA time-stretch plus resampling."""

from __future__ import annotations

import numpy as np

from comic_narrator.dsp.samples import FloatAudio
from comic_narrator.dsp.timbre import semitones_to_ratio, shift_by_resampling

FRAME_S = 0.03
SEARCH_S = 0.008


def time_stretch(samples: FloatAudio, sample_rate_hz: int, speed: float) -> FloatAudio:
    """WSOLA (Verhelst & Roelands 1993): ``speed`` > 1 shortens the audio without changing its pitch."""
    if abs(speed - 1.0) < 1e-3 or len(samples) == 0:
        return samples.astype(np.float32, copy=False)
    frame = max(16, int(FRAME_S * sample_rate_hz))
    hop_out = frame // 2
    hop_in = hop_out * speed
    search = int(SEARCH_S * sample_rate_hz)
    window = np.hanning(frame).astype(np.float64)
    x = np.pad(samples.astype(np.float64), (search, frame + search))
    n_out = int(len(samples) / speed)
    out = np.zeros(n_out + frame, dtype=np.float64)
    norm = np.zeros(n_out + frame, dtype=np.float64)
    prev_tail: np.ndarray | None = None
    pos_out = 0
    k = 0
    while pos_out < n_out:
        centre = search + round(k * hop_in)
        if centre + frame + search > len(x):
            break
        if prev_tail is None:
            best = centre
        else:
            # Pick the offset whose start best continues the previous frame's natural successor.
            region = x[centre - search : centre + search + hop_out]
            scores = np.correlate(region, prev_tail, mode="valid")
            best = centre - search + int(np.argmax(scores))
        seg = x[best : best + frame]
        out[pos_out : pos_out + frame] += seg * window
        norm[pos_out : pos_out + frame] += window
        prev_tail = x[best + hop_out : best + hop_out + hop_out]
        pos_out += hop_out
        k += 1
    out = out[:n_out] / np.maximum(norm[:n_out], 1e-3)
    return out.astype(np.float32)


def speed_and_pitch(samples: FloatAudio, sample_rate_hz: int, speed: float, pitch_semitones: float) -> FloatAudio:
    """Speed and pitch applied after synthesis (tempo kept when pitch moves, and vice versa)."""
    ratio = semitones_to_ratio(pitch_semitones)
    # Resampling by `ratio` raises pitch and speeds up by `ratio`; stretch so the net tempo is `speed`.
    stretched = time_stretch(samples, sample_rate_hz, speed / ratio)
    return shift_by_resampling(stretched, ratio)
