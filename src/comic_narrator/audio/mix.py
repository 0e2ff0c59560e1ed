"""Mixing the clips onto one track exactly as long as the video, loudness-normalised (EBU R128)."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyloudnorm
import soundfile
from scipy.signal import resample_poly

from comic_narrator.artifacts import BookReading, Clip, Timing
from comic_narrator.audio.bed import PageScene, build_bed
from comic_narrator.audio.library import load_library
from comic_narrator.audio.music import page_mood
from comic_narrator.audio.scene import choose_scene, page_colours
from comic_narrator.audio.truepeak import limit_peaks
from comic_narrator.config import AudioConfig
from comic_narrator.errors import EngineError

log = logging.getLogger("comic_narrator")

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


def speech_spans(timing: Timing, clips: list[Clip]) -> list[tuple[float, float]]:
    """Where the voices speak on ``timing``: (start, end) seconds of every line, cut at its shot's end."""
    durations = {clip.line_id: clip.duration_s for clip in clips}
    spans = []
    for shot in timing.shots:
        shot_end_s = shot.start_s + shot.duration_s
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            if durations.get(line_id, 0.0) > 0:
                spans.append((start_s, min(shot_end_s, start_s + durations[line_id])))
    return spans


def scenes_for(reading: BookReading, image_files: dict[int, Path], config: AudioConfig) -> dict[int, PageScene]:
    """Every page's ambience (and music mood when the music bed is on), chosen from its reading and its image's
    colours (a page without an image file is chosen from its reading alone)."""
    scenes = {}
    for page in reading.pages:
        image = image_files.get(page.page)
        colours = page_colours(image) if image is not None else None
        choice = choose_scene(page, colours)
        mood = page_mood(page, colours.dark if colours is not None else None) if config.music else None
        scenes[page.page] = PageScene(choice, mood)
    return scenes


def bed_fingerprint(reading: BookReading, config: AudioConfig) -> str:
    """What the bed is made from beyond the timeline, clips and options (which the render key holds already):
    the reading (its scene cues and lettering) and the user's recordings (name, size, modification time)."""
    from comic_narrator.workdir import text_sha256

    parts = [reading.model_dump_json()]
    if config.sounds_dir is not None and config.sound_bed:
        for section, files in sorted(load_library(config.sounds_dir).files.items()):
            for key, path in sorted(files.items()):
                stat = path.stat()
                parts.append(f"{section}.{key}:{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return text_sha256("bed", *parts)


def bed_for(
    reading: BookReading,
    timing: Timing,
    clips: list[Clip],
    total_samples: int,
    config: AudioConfig,
    *,
    scenes: dict[int, PageScene] | None = None,
    start_sample: int = 0,
    joins: tuple[bool, bool] = (False, False),
    seed: int = 17,
) -> npt.NDArray[np.float32]:
    """The sound bed under ``timing``, at its levels under voices at the loudness target and ducked under
    ``clips`` (see :func:`comic_narrator.audio.bed.build_bed`); ``scenes`` default to what the reading tells."""
    library = load_library(config.sounds_dir) if config.sounds_dir is not None else None
    return build_bed(
        reading,
        timing,
        total_samples,
        config,
        voice_lufs=config.target_lufs - DUAL_MONO_LU,
        speech_s=speech_spans(timing, clips),
        scenes=scenes if scenes is not None else scenes_for(reading, {}, config),
        start_sample=start_sample,
        library=library,
        joins=joins,
        seed=seed,
    )


@dataclass(frozen=True)
class PageSound:
    """What a piece of the book's audio (a page) is made from: its timeline, its clips, the reading the sound bed
    is drawn from (None: no bed), its voices' block powers (:func:`block_powers`, unscaled), and its page's image
    (whose colours help choose the ambience; None: the reading alone)."""

    timing: Timing
    clips: list[Clip]
    reading: BookReading | None
    powers: npt.NDArray[np.float64]
    image_file: Path | None = None


def _same(one: str | None, other: str | None) -> bool:
    return one is not None and one == other


def master_pages(
    work_dir: Path, pages: Sequence[PageSound], config: AudioConfig, step: Callable[[str], None] | None = None
) -> Iterator[npt.NDArray[np.float32]]:
    """The audio, a piece at a time, never all of it at once: the voices brought to the loudness target measured
    over every piece, the sound bed beneath at its levels under them, then the whole mix measured again after the
    limiter and brought to the target once more (the file is what must read the target: the bed adds a little,
    the limiter takes a little off the peaks). Each piece is sample-exact to its timeline. The pieces' mixes are
    made once and spooled to a temporary folder in ``work_dir`` for the later passes (removed at the end).
    ``step`` hears of each page of each pass (at most three passes: two measured, one yielded) for progress."""
    target = config.target_lufs - DUAL_MONO_LU
    said = step or (lambda _detail: None)
    gain = np.float32(gain_for(gated_loudness([page.powers for page in pages]), target))
    starts = np.cumsum(
        [0] + [round(sum(s.frames for s in p.timing.shots) * p.timing.sample_rate_hz / p.timing.fps) for p in pages]
    )
    scenes: list[dict[int, PageScene]] = []
    for page in pages:
        images = {p.page: page.image_file for p in page.reading.pages} if page.reading and page.image_file else {}
        scenes.append(scenes_for(page.reading, images, config) if page.reading is not None and config.sound_bed else {})
        for number, scene in sorted(scenes[-1].items()):
            music = f"; music {scene.mood}" if scene.mood else ""
            log.info("page %d: %s bed (%s)%s", number + 1, scene.choice.ambience, scene.choice.reason, music)

    def ambience(number: int, first: bool) -> str | None:
        if not 0 <= number < len(scenes) or not scenes[number]:
            return None
        chosen = scenes[number][min(scenes[number]) if first else max(scenes[number])]
        return f"{chosen.choice.ambience}/{chosen.choice.layer}"

    spool = Path(tempfile.mkdtemp(prefix=".mix-", dir=work_dir))

    def mixed(number: int, page: PageSound) -> npt.NDArray[np.float32]:
        """The page's mix before the limiter; made once, then read back from the spool by the later passes."""
        spooled = spool / f"{number}.npy"
        if spooled.exists():
            return np.asarray(np.load(spooled), dtype=np.float32)
        track = mix_voices(work_dir, page.timing, page.clips) * gain
        if page.reading is not None and config.sound_bed:
            track += bed_for(
                page.reading,
                page.timing,
                page.clips,
                len(track),
                config,
                scenes=scenes[number],
                start_sample=int(starts[number]),
                joins=(
                    _same(ambience(number - 1, first=False), ambience(number, first=True)),
                    _same(ambience(number + 1, first=True), ambience(number, first=False)),
                ),
                seed=17 + number,
            )
        np.save(spooled, track)
        return track

    def limited(number: int, page: PageSound, makeup_db: float) -> npt.NDArray[np.float32]:
        return limit_peaks(mixed(number, page) * np.float32(10 ** (makeup_db / 20)), page.timing.sample_rate_hz)

    passes = 0

    def loudness_at(makeup_db: float) -> float:
        nonlocal passes
        passes += 1
        powers = []
        for n, p in enumerate(pages):
            powers.append(block_powers(limited(n, p, makeup_db), p.timing.sample_rate_hz))
            said(f"loudness pass {passes}: page {n + 1} of {len(pages)}")
        return gated_loudness(powers)

    try:
        # The limiter takes more off the louder it is driven (0.85 LU at the sample page's level, 0.3 LU more after
        # making that up): one more measured step and the secant through both lands within a few hundredths.
        makeup_db = 0.0
        first = loudness_at(0.0)
        if np.isfinite(first) and abs(target - first) > 0.05:
            makeup_db = target - first
            second = loudness_at(makeup_db)
            if np.isfinite(second) and abs(target - second) > 0.05:
                slope = float(np.clip((second - first) / makeup_db, 0.2, 1.5))
                makeup_db += (target - second) / slope
        for number, page in enumerate(pages):
            yield limited(number, page, makeup_db)
            said(f"page {number + 1} of {len(pages)} mastered")
    finally:
        shutil.rmtree(spool, ignore_errors=True)


def mix_track(
    work_dir: Path,
    timing: Timing,
    clips: list[Clip],
    config: AudioConfig,
    reading: BookReading | None = None,
) -> npt.NDArray[np.float32]:
    """One mono track, sample-exact to the timeline (len == total frames x rate / fps): the voices at the
    loudness target, the sound bed (when a reading is given and the bed is on) at its levels beneath."""
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
