"""Mixing the clips onto one track exactly as long as the video, loudness-normalised (EBU R128)."""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyloudnorm
import soundfile
from scipy.signal import resample_poly

from comic_narrator.artifacts import BookReading, Clip, Timing
from comic_narrator.audio.soundbed import build_bed
from comic_narrator.config import AudioConfig
from comic_narrator.errors import EngineError

PEAK_CEILING = 0.944
"""-0.5 dBFS: the limiter keeps peaks under this so AAC encoding does not clip."""


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


def loudness_gain(track: npt.NDArray[np.float32], sample_rate_hz: int, target_lufs: float) -> float:
    """Linear gain that brings the track's integrated loudness (EBU R128) to the target; 1.0 for silence."""
    if len(track) < sample_rate_hz // 2 or float(np.abs(track).max(initial=0.0)) < 1e-6:
        return 1.0
    loudness = pyloudnorm.Meter(sample_rate_hz).integrated_loudness(track.astype(np.float64))
    if not np.isfinite(loudness):
        return 1.0
    return float(10 ** ((target_lufs - loudness) / 20))


def soft_limit(track: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Soft knee above the ceiling: tanh keeps the waveform continuous instead of flat-topping it."""
    limited = track.copy()
    over = np.abs(limited) > PEAK_CEILING
    if over.any():
        headroom = 1.0 - PEAK_CEILING
        excess = (np.abs(limited[over]) - PEAK_CEILING) / headroom
        limited[over] = np.sign(limited[over]) * (PEAK_CEILING + headroom * np.tanh(excess))
    return np.asarray(np.clip(limited, -1.0, 1.0), dtype=np.float32)


def _db(dbfs: float) -> float:
    return float(10 ** (dbfs / 20))


def mix_track(
    work_dir: Path,
    timing: Timing,
    clips: list[Clip],
    config: AudioConfig,
    reading: BookReading | None = None,
) -> npt.NDArray[np.float32]:
    """One mono track, sample-exact to the timeline (len == total frames x rate / fps): the voices at the
    loudness target, the sound bed (when a reading is given and the bed is on) at fixed levels beneath."""
    rate = timing.sample_rate_hz
    total_frames = sum(shot.frames for shot in timing.shots)
    total_samples = round(total_frames * rate / timing.fps)
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
    voices *= np.float32(loudness_gain(voices, rate, config.target_lufs))
    if reading is not None and config.sound_bed:
        voices += build_bed(
            reading,
            timing,
            total_samples,
            effects_peak=_db(config.effects_peak_dbfs),
            page_turn_peak=_db(config.page_turn_peak_dbfs),
            room_tone_peak=_db(config.room_tone_peak_dbfs),
        )
    return soft_limit(voices)


def write_wav(path: Path, samples: npt.NDArray[np.float32], sample_rate_hz: int) -> None:
    from comic_narrator.workdir import atomic_temp_path

    tmp = atomic_temp_path(path)
    try:
        soundfile.write(str(tmp), samples, sample_rate_hz, subtype="PCM_16", format="WAV")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
