"""Building blocks of the synthesised sounds: filtered noise, slow random motion, envelopes, loudness scaling."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Audio = npt.NDArray[np.float32]


def band(signal: Audio, low_hz: float, high_hz: float, rate_hz: int, order: int = 2) -> Audio:
    """Band-pass; ``low_hz`` 0 makes it a low-pass, ``high_hz`` at or above Nyquist a high-pass."""
    from scipy.signal import butter, sosfilt

    nyquist = rate_hz / 2
    if low_hz <= 0:
        sos = butter(order, min(high_hz, nyquist - 100), btype="lowpass", fs=rate_hz, output="sos")
    elif high_hz >= nyquist - 100:
        sos = butter(order, low_hz, btype="highpass", fs=rate_hz, output="sos")
    else:
        sos = butter(order, [low_hz, high_hz], btype="bandpass", fs=rate_hz, output="sos")
    return np.asarray(sosfilt(sos, signal), dtype=np.float32)


def noise(n: int, rng: np.random.Generator) -> Audio:
    return rng.standard_normal(n).astype(np.float32)


def unit(signal: Audio) -> Audio:
    """``signal`` at RMS 1, so layers are mixed at the levels written, whatever their filters took away."""
    rms = float(np.sqrt(np.mean(np.square(signal, dtype=np.float64)))) if len(signal) else 0.0
    return signal if rms == 0.0 else np.asarray(signal / np.float32(rms), dtype=np.float32)


def brown(n: int, rate_hz: int, rng: np.random.Generator) -> Audio:
    """Noise falling 6 dB an octave above 40 Hz (a leaky integral of white noise): rumble, surf, room air."""
    from scipy.signal import butter, sosfilt

    sos = butter(1, 40, btype="lowpass", fs=rate_hz, output="sos")
    out = np.asarray(sosfilt(sos, noise(n, rng)), dtype=np.float32)
    return band(out, 25, rate_hz / 2, rate_hz)  # no DC drift


def drift(n: int, rate_hz: int, rng: np.random.Generator, speed_hz: float) -> Audio:
    """A slow random motion between 0 and 1 whose changes take about 1/``speed_hz`` seconds: gusts, swells."""
    from scipy.signal import butter, sosfilt

    control_hz = max(8.0, 8 * speed_hz)
    count = int(n / rate_hz * control_hz) + 4
    sos = butter(2, speed_hz, btype="lowpass", fs=control_hz, output="sos")
    warm = int(4 * control_hz / speed_hz)  # the filter settles before the part that is kept
    control = sosfilt(sos, rng.standard_normal(count + warm))[warm:]
    control = control / max(float(np.std(control)), 1e-9)
    curve = 0.5 + 0.5 * np.tanh(control)
    return np.asarray(np.interp(np.arange(n) * control_hz / rate_hz, np.arange(count), curve), dtype=np.float32)


def peak(signal: Audio) -> Audio:
    """``signal`` at peak 1."""
    top = float(np.abs(signal).max(initial=0.0))
    return signal if top == 0.0 else np.asarray(signal / np.float32(top), dtype=np.float32)


def decaying(n: int, rate_hz: int, decay_s: float) -> Audio:
    return np.asarray(np.exp(-np.arange(n) / (decay_s * rate_hz)), dtype=np.float32)


def scatter(out: Audio, events: Audio, rng: np.random.Generator, per_s: float, rate_hz: int, level: float) -> None:
    """Adds copies of ``events`` (a short sound) at Poisson-random times, each at a random level up to
    ``level``, into ``out`` in place: raindrops, crackles."""
    count = rng.poisson(per_s * len(out) / rate_hz)
    for start, gain in zip(rng.integers(0, max(1, len(out)), count), rng.random(count) ** 2 * level, strict=True):
        stop = min(len(out), start + len(events))
        out[start:stop] += events[: stop - start] * np.float32(gain)


def fades(samples: Audio, rate_hz: int, in_s: float, out_s: float) -> Audio:
    """Raised-cosine fade in and out, so a piece starts and ends at silence without a click."""
    out = samples.copy()
    for length_s, head in ((in_s, True), (out_s, False)):
        n = min(len(samples) // 2, round(length_s * rate_hz))
        if n:
            ramp = (0.5 - 0.5 * np.cos(np.linspace(0, np.pi, n))).astype(np.float32)
            if head:
                out[:n] *= ramp
            else:
                out[-n:] *= ramp[::-1]
    return out


def at_loudness(samples: Audio, rate_hz: int, lufs: float) -> Audio:
    """``samples`` scaled to read ``lufs`` integrated (BS.1770, mono). A piece shorter than one 400 ms block, or
    one the gates leave nothing of, is scaled by its plain mean square instead; silence stays silent."""
    import pyloudnorm  # with scipy.signal: a second of start-up, so where it is used

    if not np.any(samples):
        return samples
    measured = float("-inf")
    if len(samples) >= round(0.4 * rate_hz):
        measured = pyloudnorm.Meter(rate_hz).integrated_loudness(samples.astype(np.float64))
    if not np.isfinite(measured):
        measured = -0.691 + 10 * float(np.log10(np.mean(np.square(samples, dtype=np.float64))))
    return np.asarray(samples * np.float32(10 ** ((lufs - measured) / 20)), dtype=np.float32)
