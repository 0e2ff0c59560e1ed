"""Mixing the clips onto one track exactly as long as the video, loudness-normalised (EBU R128)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from math import gcd
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import soundfile

from comic_narrator.artifacts import BookReading, Clip, Timing
from comic_narrator.audio.bed import PageScene, build_bed
from comic_narrator.audio.library import load_library
from comic_narrator.audio.music import page_mood
from comic_narrator.audio.scene import choose_scene, page_colours
from comic_narrator.audio.truepeak import limit_peaks
from comic_narrator.config import AudioConfig
from comic_narrator.errors import EngineError

log = logging.getLogger("comic_narrator")

T = TypeVar("T")
MASTER_THREADS = 8
"""Pages the exact master limits and measures at once at most (one per core up to this): on 2 cores the loudness
passes over Black Jack p. 21-40's mix (384.5 s) took 4.1 s against 5.6 s one page at a time
(benchmarks/master_tail.py)."""

DUAL_MONO_LU = 10 * np.log10(2.0)
"""The mono mix goes to both channels of the AAC (video/encode.py), and BS.1770 sums the channels' power: the file
measures 3.01 LU louder than the mono track. The target is for the file as delivered."""


def resample(samples: npt.NDArray[np.float32], from_hz: int, to_hz: int) -> npt.NDArray[np.float32]:
    from scipy.signal import resample_poly

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
    import pyloudnorm  # with scipy.signal: a second of start-up, so where it is used

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
    threads = max(1, min(os.cpu_count() or 1, MASTER_THREADS))
    workers = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="master")

    def in_order(makeup_db: float, then: Callable[[int, npt.NDArray[np.float32]], T]) -> Iterator[T]:
        """``then(page number, limited page)`` for every page in order, a few pages worked on at once (numpy and
        scipy let go of the interpreter in the filters and the oversampling); never more than that in memory."""
        ahead: deque[Future[T]] = deque()
        for number, page in enumerate(pages):
            ahead.append(workers.submit(lambda n, p: then(n, limited(n, p, makeup_db)), number, page))
            if len(ahead) >= threads:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()

    def loudness_at(makeup_db: float) -> float:
        nonlocal passes
        passes += 1
        powers = []
        for n, measured in enumerate(
            in_order(makeup_db, lambda n, track: block_powers(track, pages[n].timing.sample_rate_hz))
        ):
            powers.append(measured)
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
        for number, track in enumerate(in_order(makeup_db, lambda _n, track: track)):
            yield track
            said(f"page {number + 1} of {len(pages)} mastered")
    finally:
        workers.shutdown(cancel_futures=True)
        shutil.rmtree(spool, ignore_errors=True)


SETTLE_VOICE_BLOCKS = 150
"""Gated voice blocks (100 ms apart, so 15 s of speech) the streaming master waits for before it settles the
voices' gain; a book with less speech is mastered at its end, whole, as the exact master does."""
MAKEUP_STEP_DB = 1.0
"""How far the streaming master's makeup may move from one page to the next: a level change between pages stays
under what a listener hears as a jump."""
STREAM_TOLERANCE_LU = 0.3
"""How far from the target the streamed master may land (EBU R128 allows +-1 LU for programmes; docs/sound.md
promises -16 +-1): past this, the book is mastered again exactly after the last page."""


class StreamingMaster:
    """The book's audio mastered page by page while later pages are still read and voiced, against a loudness gain
    settled on the way (so the AAC can be encoded as the pages come instead of after the last one).

    Pages are added in book order. Once 15 s of speech are known (:data:`SETTLE_VOICE_BLOCKS`) the voices' gain is
    what brings every voice heard so far to the target; each page is mixed with its bed one page late (its bed's
    joins need the next page's ambience), and the makeup into the limiter is what brings the mix so far to the
    target less what the limiter took so far, moved at most :data:`MAKEUP_STEP_DB` a page. :attr:`loudness` is
    the integrated loudness of everything given out; :meth:`on_target` says whether it landed within
    :data:`STREAM_TOLERANCE_LU` (else master the book again with :func:`master_pages`)."""

    def __init__(self, work_dir: Path, config: AudioConfig) -> None:
        self.work_dir = work_dir
        self.config = config
        self.target = config.target_lufs - DUAL_MONO_LU
        self.pages: list[PageSound] = []
        self.scenes: list[dict[int, PageScene]] = []
        self.starts: list[int] = [0]
        self.unity: list[npt.NDArray[np.float64]] = []  # each page's block powers as mixed, before any makeup
        self.before: list[npt.NDArray[np.float64]] = []  # into the limiter, at its makeup
        self.after: list[npt.NDArray[np.float64]] = []  # and out of it
        self.makeup_db: float | None = None
        self.mastered = 0

    def add(self, page: PageSound) -> list[npt.NDArray[np.float32]]:
        """Take the next page; return the pages now mastered (none, or one, or all those waiting for the gain)."""
        self.pages.append(page)
        images = {p.page: page.image_file for p in page.reading.pages} if page.reading and page.image_file else {}
        bed = page.reading is not None and self.config.sound_bed
        self.scenes.append(scenes_for(page.reading, images, self.config) if page.reading is not None and bed else {})
        rate, fps = page.timing.sample_rate_hz, page.timing.fps
        self.starts.append(self.starts[-1] + round(sum(s.frames for s in page.timing.shots) * rate / fps))
        voiced = sum(
            int(np.count_nonzero(-0.691 + 10 * np.log10(np.maximum(p.powers, 1e-20)) >= -70)) for p in self.pages
        )
        if voiced < SETTLE_VOICE_BLOCKS:
            return []
        return [self._master(n) for n in range(self.mastered, len(self.pages) - 1)]

    def finish(self) -> list[npt.NDArray[np.float32]]:
        """The pages still waiting, mastered."""
        return [self._master(n) for n in range(self.mastered, len(self.pages))]

    @property
    def loudness(self) -> float:
        """The integrated loudness (LUFS, the mono track) of the pages given out so far."""
        return gated_loudness(self.after)

    def on_target(self) -> bool:
        return bool(np.isfinite(self.loudness)) and abs(self.loudness - self.target) <= STREAM_TOLERANCE_LU

    def _ambience(self, number: int, first: bool) -> str | None:
        if not 0 <= number < len(self.scenes) or not self.scenes[number]:
            return None
        chosen = self.scenes[number][min(self.scenes[number]) if first else max(self.scenes[number])]
        return f"{chosen.choice.ambience}/{chosen.choice.layer}"

    def _master(self, number: int) -> npt.NDArray[np.float32]:
        page = self.pages[number]
        rate = page.timing.sample_rate_hz
        gain = np.float32(gain_for(gated_loudness([p.powers for p in self.pages]), self.target))
        track = mix_voices(self.work_dir, page.timing, page.clips) * gain
        if page.reading is not None and self.config.sound_bed:
            track += bed_for(
                page.reading,
                page.timing,
                page.clips,
                len(track),
                self.config,
                scenes=self.scenes[number],
                start_sample=self.starts[number],
                joins=(
                    _same(self._ambience(number - 1, first=False), self._ambience(number, first=True)),
                    _same(self._ambience(number + 1, first=True), self._ambience(number, first=False)),
                ),
                seed=17 + number,
            )
        unity = block_powers(track, rate)
        self.unity.append(unity)

        def makeup(before: list[npt.NDArray[np.float64]], after: list[npt.NDArray[np.float64]]) -> float:
            """What brings the mix so far (at unity) to the target, less what the limiter took of ``before``."""
            taken = gated_loudness(before) - gated_loudness(after) if after else 0.0
            wanted = self.target + (taken if np.isfinite(taken) else 0.0) - gated_loudness(self.unity)
            wanted = wanted if np.isfinite(wanted) else 0.0
            if self.makeup_db is None:
                return wanted
            return float(np.clip(wanted, self.makeup_db - MAKEUP_STEP_DB, self.makeup_db + MAKEUP_STEP_DB))

        def limited_at(db: float) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
            out = limit_peaks(track * np.float32(10 ** (db / 20)), rate)
            return out, unity * 10 ** (db / 10), block_powers(out, rate)

        # Limited at the makeup the pages before call for, then once more if what the limiter took of this page
        # moves it (the first page has no pages before it to say how much the limiter takes).
        makeup_db = makeup(self.before, self.after)
        limited, before, after = limited_at(makeup_db)
        again = makeup([*self.before, before], [*self.after, after])
        if abs(again - makeup_db) > 0.05:
            makeup_db = again
            limited, before, after = limited_at(makeup_db)
        self.makeup_db = makeup_db
        self.before.append(before)
        self.after.append(after)
        self.mastered = number + 1
        return limited


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
