"""Voice statistics that measure how distinct two voices are: median F0, spectral centroid, mel-cepstral timbre."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from comic_narrator.dsp.samples import FloatAudio

ANALYSIS_RATE_HZ = 16_000
FRAME_S = 0.04
HOP_S = 0.01
N_MELS = 40
N_CEPS = 13
F0_CEIL_HZ = 600
"""Highest pitch tracked: the HTS voice Mei as a girl sits at 450 Hz."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class VoiceStats:
    """Summary of a stretch of speech."""

    f0_median_hz: float
    f0_spread_semitones: float
    centroid_hz: float
    cepstrum: tuple[float, ...]
    """Mean mel-cepstrum over voiced frames (coefficients 1..N_CEPS-1): the timbre fingerprint."""

    def timbre_distance(self, other: VoiceStats) -> float:
        """Euclidean distance of the mean mel-cepstra (natural-log units)."""
        return float(np.linalg.norm(np.subtract(self.cepstrum, other.cepstrum)))

    def pitch_distance_semitones(self, other: VoiceStats) -> float:
        if self.f0_median_hz <= 0 or other.f0_median_hz <= 0:
            return 0.0
        return float(abs(12 * np.log2(self.f0_median_hz / other.f0_median_hz)))


def _to_analysis_rate(samples: FloatAudio, sample_rate_hz: int, rate_hz: int = ANALYSIS_RATE_HZ) -> FloatArray:
    from scipy.signal import resample_poly

    x = samples.astype(np.float64)
    if sample_rate_hz != rate_hz:
        g = np.gcd(sample_rate_hz, rate_hz)
        x = resample_poly(x, rate_hz // g, sample_rate_hz // g)
    return np.asarray(x, dtype=np.float64)


def _frames(x: FloatArray) -> FloatArray:
    size, hop = int(FRAME_S * ANALYSIS_RATE_HZ), int(HOP_S * ANALYSIS_RATE_HZ)
    if len(x) < size:
        x = np.pad(x, (0, size - len(x)))
    count = 1 + (len(x) - size) // hop
    idx = np.arange(size)[None, :] + hop * np.arange(count)[:, None]
    return np.asarray(x[idx] * np.hanning(size)[None, :], dtype=np.float64)


def _mel_filters(n_fft: int) -> FloatArray:
    def hz_to_mel(f: FloatArray) -> FloatArray:
        return np.asarray(2595 * np.log10(1 + f / 700.0), dtype=np.float64)

    mel_points = np.linspace(hz_to_mel(np.array([60.0]))[0], hz_to_mel(np.array([7600.0]))[0], N_MELS + 2)
    hz_points = 700 * (10 ** (mel_points / 2595) - 1)
    bins = np.floor((n_fft + 1) * hz_points / ANALYSIS_RATE_HZ).astype(int)
    filters = np.zeros((N_MELS, n_fft // 2 + 1))
    for m in range(1, N_MELS + 1):
        lo, mid, hi = bins[m - 1], bins[m], bins[m + 1]
        for k in range(lo, mid):
            filters[m - 1, k] = (k - lo) / max(mid - lo, 1)
        for k in range(mid, hi):
            filters[m - 1, k] = (hi - k) / max(hi - mid, 1)
    return filters


def f0_track(
    samples: FloatAudio,
    sample_rate_hz: int,
    hop_s: float,
    threshold: float = 0.15,
    rate_hz: int = ANALYSIS_RATE_HZ,
) -> FloatArray:
    """YIN F0 (Hz, 0 = unvoiced) for frames centred at 0, hop_s, 2 hop_s, ... of ``samples``.

    ``threshold`` is YIN's aperiodicity threshold: lower keeps only clearly periodic frames (statistics), higher
    calls more frames voiced (pitch marking, where a missed voiced frame costs more than a doubtful one).
    ``rate_hz`` is the analysis rate: 8 kHz costs a third of 16 kHz and still resolves F0 to about 2 %.
    """
    x = _to_analysis_rate(samples, sample_rate_hz, rate_hz)
    half = int(FRAME_S * rate_hz) // 2
    count = int(len(samples) / sample_rate_hz / hop_s) + 1
    return _f0_per_frame(np.pad(x, (half, 0)), count, hop_s, threshold, rate_hz)


def _f0_per_frame(
    x: FloatArray, count: int, hop_s: float = HOP_S, threshold: float = 0.15, rate_hz: int = ANALYSIS_RATE_HZ
) -> FloatArray:
    """YIN pitch (de Cheveigne & Kawahara 2002) per hop in 60..F0_CEIL_HZ; 0 where the frame is unvoiced."""
    size, hop = int(FRAME_S * rate_hz), int(hop_s * rate_hz)
    lag_min, lag_max = rate_hz // F0_CEIL_HZ, rate_hz // 60
    x = np.pad(x, (0, size + lag_max + hop))
    lags = np.arange(1, lag_max + 1)
    idx = np.arange(size + lag_max)[None, :] + hop * np.arange(count)[:, None]
    windows = x[idx]
    heads = windows[:, :size]
    n_fft = 1 << int(np.ceil(np.log2(2 * (size + lag_max))))
    corr = np.fft.irfft(np.fft.rfft(windows, n_fft) * np.conj(np.fft.rfft(heads, n_fft)), n_fft)[:, 1 : lag_max + 1]
    sq = np.concatenate([np.zeros((count, 1)), np.cumsum(windows**2, axis=1)], axis=1)
    energy_head = sq[:, size][:, None]
    energy_shift = sq[:, lags + size] - sq[:, lags]
    diffs = np.maximum(energy_head + energy_shift - 2 * corr, 0.0)
    cmnd = diffs * lags[None, :] / np.maximum(np.cumsum(diffs, axis=1), 1e-12)
    # First lag (from lag_min) under the threshold, then down to the bottom of that dip; all frames at once.
    under = cmnd < threshold
    under[:, : lag_min - 1] = False
    voiced = under.any(axis=1) & (energy_head[:, 0] > 1e-12)
    first = np.argmax(under, axis=1)
    rising = np.concatenate([cmnd[:, 1:] >= cmnd[:, :-1], np.ones((count, 1), dtype=bool)], axis=1)
    rising &= np.arange(lag_max)[None, :] >= first[:, None]
    bottom = np.argmax(rising, axis=1)
    f0 = np.where(voiced, rate_hz / lags[bottom], 0.0)
    return f0


def voice_stats(samples: FloatAudio, sample_rate_hz: int) -> VoiceStats:
    """Statistics over the loud (voiced) frames of ``samples``."""
    x = _to_analysis_rate(samples, sample_rate_hz)
    frames = _frames(x)
    energy = np.mean(frames**2, axis=1)
    loud = energy > energy.max() * 10 ** (-30 / 10) if energy.max() > 0 else np.zeros(len(frames), bool)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    freqs = np.fft.rfftfreq(frames.shape[1], 1.0 / ANALYSIS_RATE_HZ)
    f0 = _f0_per_frame(x, len(frames))
    voiced = loud & (f0 > 0)
    chosen = voiced if voiced.sum() >= 3 else loud
    mel = np.log(power[chosen] @ _mel_filters(frames.shape[1]).T + 1e-10)
    n = np.arange(N_MELS)
    dct = np.cos(np.pi / N_MELS * (n[None, :] + 0.5) * np.arange(N_CEPS)[:, None])
    ceps = (mel @ dct.T).mean(axis=0) * (2.0 / N_MELS)
    centroid = float(np.sum(power[chosen] * freqs[None, :]) / max(np.sum(power[chosen]), 1e-12))
    voiced_f0 = f0[voiced]
    median = float(np.median(voiced_f0)) if len(voiced_f0) else 0.0
    spread = float(np.std(12 * np.log2(voiced_f0 / median))) if len(voiced_f0) and median > 0 else 0.0
    return VoiceStats(median, spread, centroid, tuple(float(c) for c in ceps[1:]))
