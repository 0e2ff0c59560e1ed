"""Stage order, the content-addressed stage cache in the work folder, resume, and failure records."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import Book, BookReading, Cast, ClipList, Script
from comic_narrator.config import IngestConfig, RunConfig
from comic_narrator.errors import ArtifactError
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.stages import book_key, render_key, script_key
from comic_narrator.flow.stream import Streamed
from comic_narrator.ingest.book import BookFeed, input_kind
from comic_narrator.progress import SILENT, Progress, StageProgress
from comic_narrator.workdir import (
    StageCache,
    atomic_write_text,
    file_sha256,
    make_folder,
    read_artifact,
    write_artifact,
)

if TYPE_CHECKING:
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
    from comic_narrator.flow.book_audio import BookAudio
    from comic_narrator.flow.executor import LocalExecutor
    from comic_narrator.flow.ray_executor import RayExecutor
    from comic_narrator.gpu.session import Turns

log = logging.getLogger("comic_narrator")


@dataclass
class RunResult:
    """What a run produced, for the CLI to report."""

    work_dir: Path
    output: Path | None = None
    subtitles: Path | None = None
    reading_file: Path | None = None
    duration_s: float = 0.0
    pages: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------- stages


def load_or_ingest(input_path: Path, config: IngestConfig, work_dir: Path, progress: Progress = SILENT) -> Book:
    """Stage 1: pages as PNGs. Reused when the input's bytes and the ingest options are unchanged."""
    feed, remember = open_book(input_path, config, work_dir, progress)
    book = feed.book()
    remember()
    return book


def open_book(
    input_path: Path, config: IngestConfig, work_dir: Path, progress: Progress = SILENT
) -> tuple[BookFeed, Callable[[], None]]:
    """Stage 1 as pages come: the book cached by an earlier run with the same input bytes and ingest options, or
    a feed ingesting it page by page on a thread of its own; with it, what records the whole book in the cache
    once every page is stored (a run that stops half-way ingests again)."""
    input_kind(input_path)  # fail early and clearly on a missing/empty/unknown input
    make_folder(work_dir)
    key, cache = book_key(input_path, config), StageCache(work_dir)
    book_file = work_dir / "book.json"
    stored = cache.load(book_file, Book) if cache.recorded("book") == [key] else None
    if stored is not None and all((work_dir / page.image_file).exists() for page in stored.pages):
        progress.note(f"[ingest] reusing {len(stored.pages)} page(s) from {work_dir}")
        return BookFeed.whole(stored), lambda: None
    feed = BookFeed.start(input_path, config, work_dir / "pages", progress)

    def remember() -> None:
        cache.store(book_file, feed.book())
        cache.record("book", key)

    return feed, remember


def load_reading_file(path: Path, book: Book) -> BookReading:
    reading = read_artifact(path, BookReading)
    if len(reading.pages) != len(book.pages):
        raise ArtifactError(f"holds {len(reading.pages)} page(s) but the input has {len(book.pages)}", path=path)
    return reading


def given_script(run: RunConfig, progress: Progress) -> tuple[Script | None, Path | None]:
    """The script the user gave (``--script``) or edited in the work folder (its bytes differ from what the last
    run wrote), else None: the writer makes each page's lines as the page streams by."""
    if run.script_file is not None:
        progress.note(f"[script] using {run.script_file}")
        return read_artifact(run.script_file, Script), run.script_file
    script_file, stored = run.work_dir / "script.json", StageCache(run.work_dir).recorded("script")
    if script_file.exists() and stored:
        written_sha = stored[1] if len(stored) == 2 else ""
        if file_sha256(script_file) != written_sha:
            progress.note(f"[script] {script_file} was edited: using it as it is")
            return read_artifact(script_file, Script), script_file
    return None, None


def _write_script(run: RunConfig, reading: BookReading, script: Script, edited: bool) -> None:
    if edited:
        return
    cache = StageCache(run.work_dir)
    written_sha = cache.store(run.work_dir / "script.json", script)
    cache.record("script", script_key(reading, run.voice), written_sha)


def _output_stamp(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _output_is_current(cache: StageCache, key: str, output: Path) -> bool:
    """True when ``output`` is the very file an earlier render with the same inputs wrote (size and mtime)."""
    return output.exists() and cache.recorded("render") == [key, _output_stamp(output)]


def _record_failures(work_dir: Path, failures: list[str]) -> None:
    atomic_write_text(work_dir / "failures.json", json.dumps(failures, indent=2) + "\n")


def print_cast(cast: Cast, progress: Progress) -> None:
    for member in cast.members:
        pins = f" speed {member.speed:g}" if member.speed != 1.0 else ""
        pins += f" pitch {member.pitch_semitones:+g}st" if member.pitch_semitones else ""
        progress.note(f"[cast] {member.character:<12} -> {member.voice} ({member.lines} lines){pins}")


def _attach_stack(config: RunConfig, progress: Progress) -> tuple[RunConfig, Turns | None]:
    """Point reading and voicing at the servers of a stack that `gpu up` started (fails loudly if it is down)."""
    if config.stack_file is None:
        return config, None
    from comic_narrator.gpu.session import Turns, running_stack
    from comic_narrator.gpu.stackfile import load_stack

    stack = running_stack(load_stack(config.stack_file).state_dir)
    progress.note(
        f"[stack] LLM {stack.llm_url}, TTS {stack.tts_url or '(offline voices)'}"
        + (" (time-shared: vLLM sleeps while voices are made)" if stack.timeshare else "")
    )
    config = replace(
        config,
        vision=replace(config.vision, vision="llm"),
        llm=replace(config.llm, base_url=stack.openai_base_url),
        voice=replace(config.voice, tts_server=stack.tts_url) if stack.tts_url else config.voice,
    )
    return config, Turns(stack)


def _opening_ocr(config: RunConfig) -> Future[RapidOcrEngine] | None:
    """The OCR engine opened on a thread of its own while the book is ingested (its models and configuration
    take about a second to load, before the first page can be read); None when no page is read."""
    if config.reading_file is not None:
        return None
    from comic_narrator.backends.rapidocr_engine import RapidOcrEngine

    pool = ThreadPoolExecutor(1, thread_name_prefix="ocr-open")
    opening = pool.submit(RapidOcrEngine().open)
    pool.shutdown(wait=False)  # its thread ends once the engine is open
    return opening


def _engines(config: RunConfig, stack: ExitStack, progress: Progress, ocr: Future[RapidOcrEngine] | None) -> Engines:
    """Every engine the run needs, built once here (the OCR engine from ``ocr``, :func:`_opening_ocr`'s, which
    is None exactly when no page is read) and handed to the stages."""
    from comic_narrator.voice.voicebank import open_voice_bank

    started = time.perf_counter()
    engines = Engines(ocr=None, bank=None)
    if ocr is not None:
        engines.ocr = stack.enter_context(ocr.result())
        log.info("the OCR engine is open (waited %.2f s for it)", time.perf_counter() - started)
        if config.vision.vision == "llm":
            from comic_narrator.backends.openai_chat import OpenAIChatClient

            client = OpenAIChatClient(config.llm)
            engines.llm_model = client.resolve_model()  # fails fast, with what to start, when the server is down
            engines.llm_client = client
    if not config.vision_only:
        engines.bank = stack.enter_context(open_voice_bank(config.voice))
    log.info("the engines are open (%.2f s)", time.perf_counter() - started)
    return engines


def _master(
    streamed: Streamed, config: RunConfig, stage: StageProgress | None = None
) -> Iterator[npt.NDArray[np.float32]]:
    """The book's audio, a page at a time (see :func:`master_pages`); ``stage`` counts its pages' passes."""
    from comic_narrator.audio.mix import PageSound, master_pages

    lang = streamed.reading.lang
    sounds = [
        PageSound(
            work.timing,
            work.clips,
            BookReading(source="", lang=lang, pages=[work.reading]),
            work.powers,
            config.work_dir / work.image.image_file,  # its colours help choose the page's ambience
        )
        for work in streamed.pages
        if work.timing is not None
    ]
    if stage is not None:
        stage.grow(3 * len(sounds))
    step = None if stage is None else (lambda detail: stage.advance(1, detail))
    return master_pages(config.work_dir, sounds, config.audio, step)


def run(config: RunConfig, progress: Progress = SILENT) -> RunResult:
    """The whole job: ingest, then every page through read, link, script, cast, voice, timing, camera and render
    as it streams; then the book's audio mastered page by page and the segments joined under it."""
    from comic_narrator.flow.executor import READ_AHEAD_PAGES, LocalExecutor
    from comic_narrator.flow.stream import stream_pages

    work = config.work_dir
    make_folder(work)
    log.info("the run starts: %s", config.input_path)
    result = RunResult(work_dir=work)
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        result.stage_seconds[name] = round(now - clock, 3)
        clock = now

    config, turns = _attach_stack(config, progress)
    if config.audio.sounds_dir is not None:  # a bad sounds.toml fails now, not after the render
        from comic_narrator.audio.library import load_library

        load_library(config.audio.sounds_dir)
    ocr = _opening_ocr(config)
    feed, remember_book = open_book(config.input_path, config.ingest, work, progress)
    with ExitStack() as stack, ExitStack() as turn:
        stack.callback(feed.stop)  # a run that fails stops the ingest; one that got to the end has nothing left
        # page 1 is read as soon as it is stored; "ingest" times what comes before (a given reading waits for all)
        given_reading = load_reading_file(config.reading_file, feed.book()) if config.reading_file else None
        lap("ingest")
        script, script_origin = (None, None) if config.vision_only else given_script(config, progress)
        render_stage = None if config.vision_only else progress.stage("render", 0)
        after_reading = None
        timeshare = turns is not None and turns.stack.timeshare
        if turns is not None and timeshare:  # vLLM reads every page, then sleeps while the voices are made
            turn.enter_context(turns.llm())

            def after_reading() -> None:
                turn.close()
                turn.enter_context(turns.tts())

        read_ahead = -1 if timeshare else READ_AHEAD_PAGES
        executor: LocalExecutor | RayExecutor
        if config.executor == "ray":
            from comic_narrator.flow.ray_executor import RayExecutor

            executor = RayExecutor(config, render_stage, config.ray_address, read_ahead, after_reading=after_reading)
        else:
            executor = LocalExecutor(config, render_stage, read_ahead, after_reading=after_reading)
        # A first run masters and encodes the book's audio while the pages stream; a run over an existing output
        # (a resumed or edited one) may find it current, so it masters after the last page, if at all.
        book_audio = None
        if not config.vision_only and not config.output_path.exists():
            from comic_narrator.flow.book_audio import BookAudio
            from comic_narrator.video.render import book_audio_file

            book_audio = BookAudio(config, book_audio_file(work), progress.stage("master", feed.expected))
        try:
            engines = _engines(config, stack, progress, ocr)
            streamed = stream_pages(
                feed,
                config,
                engines,
                executor,
                progress,
                given_reading,
                script,
                script_origin,
                on_voiced=book_audio.add if book_audio is not None else None,
            )
        except BaseException:
            executor.cancel()
            if book_audio is not None:
                book_audio.cancel()
            raise
    remember_book()
    result.pages = len(streamed.pages)
    try:  # the last pages' segments may still be rendering: the book-level work goes on meanwhile
        result = _finish_book(config, streamed, executor, script is not None, result, progress, lap, book_audio)
    except BaseException:
        executor.cancel()
        if book_audio is not None:
            book_audio.cancel()
        raise
    return result


def _finish_book(
    config: RunConfig,
    streamed: Streamed,
    executor: LocalExecutor | RayExecutor,
    script_given: bool,
    result: RunResult,
    progress: Progress,
    lap: Callable[[str], None],
    book_audio: BookAudio | None = None,
) -> RunResult:
    """The book-level artifacts; the audio mastered and encoded while the last segments render (finished, where
    ``book_audio`` made it as the pages streamed); the join."""
    import threading

    import soundfile

    from comic_narrator.audio.mix import DUAL_MONO_LU, bed_fingerprint
    from comic_narrator.flow.book_end import book_end, card_sound
    from comic_narrator.flow.stream import book_timing, page_segments
    from comic_narrator.timeline.subtitles import build_tracks, write_subtitles
    from comic_narrator.video.endcard import end_card_file
    from comic_narrator.video.mux import encode_aac_aside
    from comic_narrator.video.render import book_audio_file, join_video
    from comic_narrator.video.split import write_chapter_files

    work = config.work_dir
    result.failures = streamed.failures
    _record_failures(work, result.failures)
    write_artifact(work / "reading.json", streamed.reading)
    result.reading_file = work / "reading.json"
    if config.vision_only:
        executor.finish()
        lap("stream")
        return result
    _write_script(config, streamed.reading, streamed.script, edited=script_given)
    if streamed.cast is not None:
        write_artifact(work / "cast.json", streamed.cast)
        print_cast(streamed.cast, progress)
    write_artifact(work / "characters.json", streamed.characters)
    clips = [clip for page in streamed.pages for clip in page.clips]
    write_artifact(work / "clips.json", ClipList(clips=clips))
    timing, plan = book_timing(streamed.pages)
    write_artifact(work / "timing.json", timing)
    write_artifact(work / "camera.json", plan)
    subtitles = build_tracks(streamed.reading, streamed.script, clips, timing)
    segments = [
        segment
        for previous, page in zip([None, *streamed.pages], streamed.pages, strict=False)
        if page.plan is not None
        for segment in page_segments(page, config, streamed.script.lang, previous)
    ]
    end = book_end(config, streamed, timing.fps)
    bed = bed_fingerprint(streamed.reading, config.audio)  # an edited scene cue or recording is heard again
    key = render_key(timing, clips, config.audio, segments, subtitles, end.fingerprint(), bed)
    cache = StageCache(work)
    current = _output_is_current(cache, key, config.output_path) and (work / "audio.wav").exists()
    audio_file = book_audio_file(work)
    failures: list[BaseException] = []

    def master() -> None:
        """audio.wav and the AAC, a page at a time, on a thread while the last segments render."""
        try:
            if book_audio is not None:
                tail = card_sound(end.card_frames, timing.fps, config.audio) if end.card_frames else None
                if book_audio.finish(tail):
                    return
                landed = book_audio.master.loudness + DUAL_MONO_LU
                progress.note(f"[master] the streamed audio landed at {landed:.2f} LUFS: mastered again")
            with soundfile.SoundFile(
                str(work / "audio.wav"), "w", samplerate=timing.sample_rate_hz, channels=1, subtype="PCM_16"
            ) as wav:

                def pieces() -> Iterator[npt.NDArray[np.float32]]:
                    for piece in _master(streamed, config, master_stage):
                        wav.write(piece)
                        yield piece
                    if end.card_frames:  # the end card's time: the track ends with the video
                        tail = card_sound(end.card_frames, timing.fps, config.audio)
                        wav.write(tail)
                        yield tail

                audio_file.parent.mkdir(parents=True, exist_ok=True)
                encode_aac_aside(audio_file, pieces(), timing.sample_rate_hz)
        except BaseException as exc:  # handed to the run's thread below
            failures.append(exc)

    # The master (the loudness passes through the limiter, then the AAC) runs after the last page is voiced:
    # on a long book that is tens of seconds the user should see moving.
    master_stage = None if current else book_audio.stage if book_audio is not None else progress.stage("master", 0)
    mastering = None if current else threading.Thread(target=master, name="master", daemon=True)
    if mastering is not None:
        mastering.start()
    log.info("the stream ended; the end card, the last segments, the master and the join are left")
    tail = [] if end.card is None or current else [end_card_file(end.card, work, config.render, timing.fps)]
    log.info("the end card is encoded")
    executor.finish()
    log.info("every segment is rendered")
    busy = {**executor.busy_s, "voice": streamed.voice_busy_s}
    result.stage_seconds.update({f"{name} busy": round(seconds, 3) for name, seconds in sorted(busy.items())})
    lap("stream")
    if mastering is None:
        progress.note(f"[render] {config.output_path} is up to date")
    else:
        mastering.join()
        log.info("the book's audio is mastered and encoded")
        if failures:
            raise failures[0]
        if master_stage is not None:
            master_stage.finish("the book's audio at the loudness target")
        join_video(
            config.output_path,
            segments,
            work,
            timing.fps,
            audio_file,
            timing.sample_rate_hz,
            subtitles,
            tail,
            end.metadata,
            end.chapters,
        )
        if end.split and not end.chapters:
            progress.note("[chapters] none known (no --chapters, ComicInfo bookmarks or PDF outline): one file only")
        if end.split and end.chapters:
            write_chapter_files(
                config.output_path,
                end.chapters,
                [*((work / s.file_name, s.frames) for s in segments), *tail],
                timing.fps,
                work / "audio.wav",
                subtitles,
                end.metadata,
            )
        log.info("the MP4 is joined")
        progress.note(f"[render] {executor.rendered_note()}")
        cache.record("render", key, _output_stamp(config.output_path))
    srt_path = write_subtitles(config.output_path, subtitles)[0]
    lap("join")
    duration_s = timing.duration_s + end.card_frames / timing.fps
    result.output, result.subtitles, result.duration_s = config.output_path, srt_path, duration_s
    return result
