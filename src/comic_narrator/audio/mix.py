"""Mixing the clips onto one track exactly as long as the video, loudness-normalised (EBU R128)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyloudnorm
import soundfile
from scipy.ndimage import minimum_filter1d, uniform_filter1d
from scipy.signal import resample_poly

from comic_narrator.artifacts import BookReading, Clip, Timing
from comic_narrator.audio.soundbed import build_bed
from comic_narrator.config import AudioConfig
from comic_narrator.errors import EngineError

PEAK_CEILING = 0.944
"""-0.5 dBFS: the limiter keeps true peaks (4x oversampled) under this so AAC encoding does not clip."""
LIMITER_LOOKAHEAD_S = 0.005
"""The limiter's gain starts falling this long before a peak and recovers as long after it: short enough to
catch a plosive or a BOOM, long enough that the gain change is not itself a click."""
TRUE_PEAK_OVERSAMPLING = 4
"""ITU-R BS.1770-4 annex 2 measures true peak at 4x oversampling (at 48 kHz; enough to see intersample overs)."""
DUAL_MONO_LU = 10 * np.log10(2.0)
"""The mono mix goes to both channels of the AAC (video/encode.py), and BS.1770 sums the channels' power: the file
measures 3.01 LU louder than the mono track. The target is for the file as delivered."""


def resample(samples: npt.NDArray[np.float32], from_hz: int, to_hz: int) -> npt.NDArray[np.float32]:
    if from_hz == to_hz:
        return samples
    divisor = gcd(from_hz, to_hz)
    return np.asarray(resample_poly(samples, to_hz // divisor, from_hz // divisor), dtype=np.float32)


def load_clip(work_dir: Path, clip: Clip, sample_rate_hz: int) -> npt.NDArray[np.float32]:
    path = work_dir / clip.audio_file
    try:
        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (OSError, RuntimeError) as exc:
        raise EngineError(f"cannot read clip for line {clip.line_id} ({exc})", path=path) from exc
    return resample(np.asarray(data.mean(axis=1), dtype=np.float32), int(rate), sample_rate_hz)


def true_peak_envelope(track: npt.NDArray[np.float32], block: int = 1 << 20) -> npt.NDArray[np.float64]:
    """Per sample, the largest magnitude of the 4x-oversampled waveform around it (the sample itself included).
    Oversampled in blocks with a margin wider than the interpolation filter, so a long book stays small in memory."""
    factor, margin = TRUE_PEAK_OVERSAMPLING, 256
    envelope = np.abs(track).astype(np.float64)
    for start in range(0, len(track), block):
        lo, hi = max(0, start - margin), min(len(track), start + block + margin)
        upsampled = np.abs(resample_poly(track[lo:hi].astype(np.float64), factor, 1))[: (hi - lo) * factor]
        peaks = upsampled.reshape(hi - lo, factor).max(axis=1)[start - lo : start - lo + block]
        end = start + len(peaks)
        envelope[start:end] = np.maximum(envelope[start:end], peaks)
    return envelope


def limit_peaks(track: npt.NDArray[np.float32], sample_rate_hz: int) -> npt.NDArray[np.float32]:
    """A look-ahead peak limiter: a smooth gain that is never above what each sample's true peak needs to sit under
    the ceiling (a minimum filter over +-lookahead, then a moving average half as wide, so the average of minima
    near a sample never exceeds that sample's need). Unlike a waveshaper it adds no harmonics of its own, which
    would themselves overshoot between samples."""
    if len(track) == 0:
        return track.copy()
    need = np.minimum(1.0, PEAK_CEILING / np.maximum(true_peak_envelope(track), 1e-12))
    if need.min() >= 1.0:
        return track.copy()
    half = max(1, round(LIMITER_LOOKAHEAD_S * sample_rate_hz))
    gain = minimum_filter1d(need, size=2 * half + 1, mode="nearest")
    gain = uniform_filter1d(gain, size=half + 1, mode="nearest")
    limited = track.astype(np.float64) * np.minimum(gain, need)
    # What smoothing leaves between samples is a hair; the sample peak itself never passes the ceiling.
    return np.asarray(np.clip(limited, -PEAK_CEILING, PEAK_CEILING), dtype=np.float32)


def _db(dbfs: float) -> float:
    return float(10 ** (dbfs / 20))


def mix_voices(work_dir: Path, timing: Timing, clips: list[Clip]) -> npt.NDArray[np.float32]:
    """The voices alone, as recorded, sample-exact to the timeline (len == total frames x rate / fps)."""
    rate = timing.sample_rate_hz
    total_samples = round(sum(shot.frames for shot in timing.shots) * rate / timing.fps)
    voices = np.zeros(total_samples, dtype=np.float32)
    clip_by_line = {clip.line_id: clip for clip in clips}
    for shot in timing.shots:
        shot_end = round((shot.start_s + shot.duration_s) * rate)
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            clip = clip_by_line[line_id]
            if clip.duration_s <= 0:
                continue
            samples = load_clip(work_dir, clip, rate)
            start = round(start_s * rate)
            end = min(start + len(samples), shot_end, total_samples)
            voices[start:end] += samples[: end - start]
    return voices


def block_powers(track: npt.NDArray[np.float32], sample_rate_hz: int) -> npt.NDArray[np.float64]:
    """The K-weighted mean square of every 400 ms block, 100 ms apart (ITU-R BS.1770-4): what integrated
    loudness is made of, so a book's loudness can be measured page by page without holding the book."""
    block, hop = round(0.4 * sample_rate_hz), round(0.1 * sample_rate_hz)
    if len(track) < block:
        return np.zeros(0)
    weighted = track.astype(np.float64)
    for stage in pyloudnorm.Meter(sample_rate_hz)._filters.values():  # the meter's own K-weighting
        weighted = stage.apply_filter(weighted)
    cumulative = np.concatenate([[0.0], np.cumsum(np.square(weighted))])
    starts = np.arange(0, len(track) - block + 1, hop)
    return np.asarray((cumulative[starts + block] - cumulative[starts]) / block, dtype=np.float64)


def gated_loudness(powers: Sequence[npt.NDArray[np.float64]]) -> float:
    """Integrated loudness (LUFS) of blocks gathered from many pieces: the absolute gate at -70 LUFS, then the
    relative one 10 LU under the mean of what passed; -inf when nothing passes."""
    z = np.concatenate([np.zeros(0), *powers])
    with np.errstate(divide="ignore"):
        loudness = -0.691 + 10 * np.log10(z)
    kept = z[loudness >= -70.0]
    if len(kept) == 0:
        return float("-inf")
    relative = -0.691 + 10 * np.log10(kept.mean()) - 10.0
    kept = z[(loudness >= -70.0) & (loudness >= relative)]
    return float(-0.691 + 10 * np.log10(kept.mean())) if len(kept) else float("-inf")


def gain_for(loudness_lufs: float, target_lufs: float) -> float:
    return 1.0 if not np.isfinite(loudness_lufs) else float(10 ** ((target_lufs - loudness_lufs) / 20))


def bed_for(
    reading: BookReading, timing: Timing, total_samples: int, config: AudioConfig, seed: int = 17
) -> npt.NDArray[np.float32]:
    """The sound bed at its fixed levels (room tone, page turns, sound words), sample-aligned with ``timing``."""
    return build_bed(
        reading,
        timing,
        total_samples,
        effects_peak=_db(config.effects_peak_dbfs),
        page_turn_peak=_db(config.page_turn_peak_dbfs),
        room_tone_peak=_db(config.room_tone_peak_dbfs),
        seed=seed,
    )


@dataclass(frozen=True)
class PageSound:
    """What a piece of the book's audio (a page) is made from: its timeline, its clips, the reading the sound bed
    is drawn from (None: no bed), and its voices' block powers (:func:`block_powers`, unscaled)."""

    timing: Timing
    clips: list[Clip]
    reading: BookReading | None
    powers: npt.NDArray[np.float64]


def master_pages(work_dir: Path, pages: Sequence[PageSound], config: AudioConfig) -> Iterator[npt.NDArray[np.float32]]:
    """The audio, a piece at a time, never all of it at once: the voices brought to the loudness target measured
    over every piece, the limiter's loss made up once (on the voices alone, so their level does not depend on the
    bed), the sound bed beneath at fixed levels, peaks limited. Each piece is sample-exact to its timeline."""
    target = config.target_lufs - DUAL_MONO_LU
    gain = np.float32(gain_for(gated_loudness([page.powers for page in pages]), target))

    def voices(page: PageSound) -> npt.NDArray[np.float32]:
        return mix_voices(work_dir, page.timing, page.clips) * gain

    # The limiter takes loudness off the peaks (0.5 LU on the sample page): measured once over every piece.
    limited = [block_powers(limit_peaks(voices(p), p.timing.sample_rate_hz), p.timing.sample_rate_hz) for p in pages]
    shortfall = gain_for(gated_loudness(limited), target)
    makeup = np.float32(shortfall if shortfall > 10 ** (0.1 / 20) else 1.0)
    for number, page in enumerate(pages):
        track = voices(page) * makeup
        if page.reading is not None and config.sound_bed:
            track += bed_for(page.reading, page.timing, len(track), config, seed=17 + number)
        yield limit_peaks(track, page.timing.sample_rate_hz)


def mix_track(
    work_dir: Path,
    timing: Timing,
    clips: list[Clip],
    config: AudioConfig,
    reading: BookReading | None = None,
) -> npt.NDArray[np.float32]:
    """One mono track, sample-exact to the timeline (len == total frames x rate / fps): the voices at the
    loudness target, the sound bed (when a reading is given and the bed is on) at fixed levels beneath."""
    powers = block_powers(mix_voices(work_dir, timing, clips), timing.sample_rate_hz)
    (track,) = master_pages(work_dir, [PageSound(timing, clips, reading, powers)], config)
    return track


def write_wav(path: Path, samples: npt.NDArray[np.float32], sample_rate_hz: int) -> None:
    from comic_narrator.workdir import atomic_temp_path

    tmp = atomic_temp_path(path)
    try:
        soundfile.write(str(tmp), samples, sample_rate_hz, subtype="PCM_16", format="WAV")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
