"""Script synthesis: every line voiced in parallel, one cached WAV per (text, voice, delivery, engine version)."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from comic_narrator.artifacts import Cast, Clip, Script, ScriptLine
from comic_narrator.backends.protocols import Delivery, Speech
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ComicNarratorError, EngineError, UnsayableTextError
from comic_narrator.progress import Progress
from comic_narrator.voice.delivery import delivery_for
from comic_narrator.voice.normalize import normalize_for_speech
from comic_narrator.voice.voicebank import VoiceBank, open_voice_bank
from comic_narrator.workdir import shareable

log = logging.getLogger("comic_narrator")

EMPTY_SAMPLE_RATE_HZ = 24_000
"""Sample rate written into the zero-length WAV of a line with nothing to say."""
_SILENCE = Speech(samples=np.zeros(0, dtype=np.float32), sample_rate_hz=EMPTY_SAMPLE_RATE_HZ)


@dataclass(frozen=True)
class LineJob:
    """One line ready to voice: what to say, with which voice and delivery, and where the WAV goes."""

    line: ScriptLine
    text: str
    voice: str
    delivery: Delivery
    cache_key: str
    wav_path: Path


def clip_cache_key(text: str, voice: str, delivery: Delivery, engine_version: str) -> str:
    """The content address of a clip: changing any input re-voices the line, nothing else does."""
    token = "\x1f".join(("clip", text, voice, delivery.cache_token(), engine_version))
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]


def default_jobs(config: VoiceConfig) -> int:
    return config.jobs if config.jobs > 0 else max(1, os.cpu_count() or 1)


def write_wav_atomic(path: Path, speech: Speech) -> None:
    """16-bit PCM WAV via temp file + rename, so a killed run never leaves a half-written clip."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp.wav", dir=path.parent)
    try:
        shareable(fd)
    finally:
        os.close(fd)
    try:
        sf.write(tmp, np.clip(speech.samples, -1.0, 1.0), speech.sample_rate_hz, subtype="PCM_16", format="WAV")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def plan_jobs(script: Script, cast: Cast, config: VoiceConfig, bank: VoiceBank, clips_dir: Path) -> list[LineJob]:
    jobs: list[LineJob] = []
    for line in script.lines:
        member = cast.voice_for(line.speaker)
        text = normalize_for_speech(line.text, script.lang, line.kind)
        delivery = delivery_for(line, member, config)
        key = clip_cache_key(text, member.voice, delivery, bank.engine_version(member.voice, delivery))
        jobs.append(LineJob(line, text, member.voice, delivery, key, clips_dir / f"{key}.wav"))
    return jobs


def _riff_is_whole(path: Path) -> bool:
    """True when the file holds every byte its RIFF header declares. libsndfile reads a WAV cut short without a
    word (it shortens the clip), so a truncated clip would otherwise be trusted forever under its cache key."""
    with path.open("rb") as handle:
        head = handle.read(8)
    return len(head) == 8 and head[:4] == b"RIFF" and int.from_bytes(head[4:], "little") + 8 <= path.stat().st_size


def _cached_clip(job: LineJob, work_dir: Path) -> Clip | None:
    if not job.wav_path.exists() or not _riff_is_whole(job.wav_path):
        return None
    try:
        info = sf.info(str(job.wav_path))
    except (RuntimeError, sf.LibsndfileError):
        return None  # unreadable: re-voice it
    return _clip(job, work_dir, info.frames / float(info.samplerate), int(info.samplerate))


def _clip(job: LineJob, work_dir: Path, duration_s: float, sample_rate_hz: int) -> Clip:
    return Clip(
        line_id=job.line.id,
        audio_file=job.wav_path.relative_to(work_dir).as_posix(),
        duration_s=duration_s,
        sample_rate_hz=sample_rate_hz,
        voice=job.voice,
        cache_key=job.cache_key,
    )


def _voice_line(job: LineJob, bank: VoiceBank, work_dir: Path) -> Clip:
    cached = _cached_clip(job, work_dir)
    if cached is not None:
        return cached
    # Nothing speakable (punctuation only): a zero-length clip keeps clips and lines one to one.
    speech = _speech(job, bank) if job.text else _SILENCE
    write_wav_atomic(job.wav_path, speech)
    return _clip(job, work_dir, speech.duration_s, speech.sample_rate_hz)


def _speech(job: LineJob, bank: VoiceBank) -> Speech:
    """The line as its voice says it. Where the voice cannot say it, or makes no sound for it (a lone 々 or ー an OCR
    read in a stray mark), it is one silent line with a warning naming it, not a failed book; its text stays in
    the subtitles."""
    try:
        speech = bank.synthesize(job.text, job.voice, job.delivery)
    except UnsayableTextError as exc:
        log.warning("line %s: voice %s cannot say %r, so it stays silent (%s)", job.line.id, job.voice, job.text, exc)
        return _SILENCE
    except ComicNarratorError:
        raise
    except Exception as exc:  # an engine bug must name the line it failed on
        raise EngineError(f"line {job.line.id}: voice {job.voice} failed: {exc}") from exc
    if len(speech.samples) == 0:
        log.warning("line %s: voice %s made no audio for %r, so it stays silent", job.line.id, job.voice, job.text)
    return speech


def synthesize_with_bank(
    script: Script,
    cast: Cast,
    config: VoiceConfig,
    clips_dir: Path,
    progress: Progress,
    bank: VoiceBank,
    stop: threading.Event | None = None,
) -> list[Clip]:
    """One Clip per script line, in script order, voicing only lines whose WAV is not cached yet. Once ``stop``
    is set (the run failed or was interrupted elsewhere), lines not started yet are left out."""
    work_dir = clips_dir.parent
    clips_dir.mkdir(parents=True, exist_ok=True)
    jobs = plan_jobs(script, cast, config, bank, clips_dir)
    stage = progress.stage("voices", len(jobs))
    results: list[Clip | None] = [None] * len(jobs)

    def run(index: int) -> None:
        if stop is not None and stop.is_set():
            return
        results[index] = _voice_line(jobs[index], bank, work_dir)
        stage.advance(detail=jobs[index].line.id)

    workers = min(max(default_jobs(config), bank.parallelism()), max(1, len(jobs)))
    if workers == 1:
        for i in range(len(jobs)):
            run(i)
    else:
        # onnxruntime releases the GIL, so threads share one loaded model per engine and still use every core.
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tts") as pool:
            futures = [pool.submit(run, i) for i in range(len(jobs))]
            try:
                for future in futures:
                    future.result()
            except BaseException:
                # The first failure ends the stage: lines not started yet are dropped, finished WAVs stay cached.
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    stage.finish()
    return [clip for clip in results if clip is not None]


def synthesize_script(
    script: Script, cast: Cast, config: VoiceConfig, clips_dir: Path, progress: Progress
) -> list[Clip]:
    """Voice a whole script with the bundled/configured engines (see :func:`synthesize_with_bank`)."""
    with open_voice_bank(config) as bank:
        return synthesize_with_bank(script, cast, config, clips_dir, progress, bank)
