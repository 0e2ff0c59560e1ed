"""Stage order, the content-addressed stage cache in the work folder, resume, and failure records."""

from __future__ import annotations

import json
import logging
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from comic_narrator import __version__
from comic_narrator.artifacts import Book, BookReading, Cast, ClipList, Script
from comic_narrator.config import IngestConfig, RunConfig
from comic_narrator.errors import ArtifactError, InputError
from comic_narrator.ingest.book import ingest_book, input_kind
from comic_narrator.progress import SILENT, Progress
from comic_narrator.reading.stage import read_pages
from comic_narrator.workdir import (
    atomic_write_text,
    file_sha256,
    read_artifact,
    read_cached_artifact,
    text_sha256,
    write_artifact,
)

if TYPE_CHECKING:
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


# --------------------------------------------------------------------------------------------- cache keys


def input_fingerprint(path: Path) -> str:
    """Content hash of the input: the file's bytes, or every file's name and bytes in a folder."""
    if path.is_dir():
        parts = [f"{p.relative_to(path).as_posix()}:{_input_sha256(p)}" for p in sorted(path.rglob("*")) if p.is_file()]
        return text_sha256(*parts)
    return _input_sha256(path)


def _input_sha256(path: Path) -> str:
    try:
        return file_sha256(path)
    except OSError as exc:  # an unreadable page in a folder is bad input, named, not an internal error
        raise InputError(f"cannot read ({exc.strerror})", path=path) from exc


def _key_matches(key_file: Path, key: str) -> bool:
    try:
        return key_file.read_text(encoding="utf-8").strip() == key
    except OSError:
        return False


# --------------------------------------------------------------------------------------------- stages


def load_or_ingest(input_path: Path, config: IngestConfig, work_dir: Path, progress: Progress = SILENT) -> Book:
    """Stage 1: pages as PNGs. Reused when the input's bytes and the ingest options are unchanged."""
    input_kind(input_path)  # fail early and clearly on a missing/empty/unknown input
    key = text_sha256(
        "book",
        str(Book.model_fields["schema_version"].default),
        input_fingerprint(input_path),
        json.dumps(asdict(config), sort_keys=True, default=str),
    )
    book_file, key_file = work_dir / "book.json", work_dir / "book.key"
    stored = read_cached_artifact(book_file, Book) if _key_matches(key_file, key) else None
    if stored is not None and all((work_dir / page.image_file).exists() for page in stored.pages):
        progress.note(f"[ingest] reusing {len(stored.pages)} page(s) from {work_dir}")
        return stored
    book = ingest_book(input_path, config, work_dir / "pages", progress)
    write_artifact(book_file, book)
    atomic_write_text(key_file, key)
    return book


def load_reading_file(path: Path, book: Book) -> BookReading:
    reading = read_artifact(path, BookReading)
    if len(reading.pages) != len(book.pages):
        raise ArtifactError(f"holds {len(reading.pages)} page(s) but the input has {len(book.pages)}", path=path)
    return reading


def load_script_file(path: Path, reading: BookReading) -> Script:
    """An edited script; a line placed on a page or panel the reading lacks would be voiced but never heard (the
    timeline has no shot for it), so it is refused, naming the line."""
    script = read_artifact(path, Script)
    places = {(page.page, panel) for page in reading.pages for panel in range(-1, len(page.panels))}
    for index, line in enumerate(script.lines):
        if (line.page, line.panel) not in places:
            pages = ", ".join(f"{page.page} (panels -1..{len(page.panels) - 1})" for page in reading.pages)
            raise ArtifactError(
                f"lines.{index}: page {line.page}, panel {line.panel} is not in the reading; its pages are {pages}",
                path=path,
            )
    return script


def script_stage(reading: BookReading, run: RunConfig, progress: Progress) -> Script:
    """Stage 4: the script. A script.json the user edited in the work folder wins over a regenerated one."""
    from comic_narrator.voice.writer import write_script

    if run.script_file is not None:
        progress.note(f"[script] using {run.script_file}")
        return load_script_file(run.script_file, reading)
    script_file, key_file = run.work_dir / "script.json", run.work_dir / "script.key"
    inputs_key = text_sha256("script", reading.model_dump_json(), json.dumps(asdict(run.voice), default=str))
    if script_file.exists() and key_file.exists():
        stored = key_file.read_text(encoding="utf-8").split()
        written_sha = stored[1] if len(stored) == 2 else ""
        if file_sha256(script_file) != written_sha:
            progress.note(f"[script] {script_file} was edited: using it as it is")
            return load_script_file(script_file, reading)
        if stored[0] == inputs_key:
            return read_artifact(script_file, Script)
    script = write_script(reading, run.voice)
    written_sha = write_artifact(script_file, script)
    atomic_write_text(key_file, f"{inputs_key} {written_sha}")
    return script


def _output_stamp(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _output_is_current(key_file: Path, key: str, output: Path) -> bool:
    """True when ``output`` is the very file an earlier render with the same inputs wrote (size and mtime)."""
    if not output.exists() or not key_file.exists():
        return False
    return key_file.read_text(encoding="utf-8").split() == [key, _output_stamp(output)]


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


def run(config: RunConfig, progress: Progress = SILENT) -> RunResult:
    """The whole job: ingest, read, cast, script, voice, time, mix, plan the camera, render."""
    import time

    from comic_narrator.audio.mix import mix_track, write_wav
    from comic_narrator.timeline.subtitles import build_srt
    from comic_narrator.timeline.timing import build_timing
    from comic_narrator.video.camera import plan_camera
    from comic_narrator.video.render import render_video
    from comic_narrator.voice.casting import cast_characters
    from comic_narrator.voice.synthesis import synthesize_script
    from comic_narrator.voice.voicebank import open_voice_bank

    work = config.work_dir
    work.mkdir(parents=True, exist_ok=True)
    result = RunResult(work_dir=work)
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        result.stage_seconds[name] = round(now - clock, 3)
        clock = now

    config, turns = _attach_stack(config, progress)
    book = load_or_ingest(config.input_path, config.ingest, work, progress)
    result.pages = len(book.pages)
    lap("ingest")
    if config.reading_file is not None:
        reading = load_reading_file(config.reading_file, book)
    else:
        with turns.llm() if turns else nullcontext():
            reading, result.failures = read_pages(book, config.vision, work, progress, config.llm)
    write_artifact(work / "reading.json", reading)
    _record_failures(work, result.failures)
    result.reading_file = work / "reading.json"
    lap("read")
    if config.vision_only:
        return result

    with open_voice_bank(config.voice) as bank:
        voices = bank.voices()
    script = script_stage(reading, config, progress)
    cast = cast_characters(reading, voices, config.voice, script.lang, script)
    write_artifact(work / "cast.json", cast)
    print_cast(cast, progress)
    lap("script")
    with turns.tts() if turns else nullcontext():
        clips = synthesize_script(script, cast, config.voice, work / "clips", progress)
    write_artifact(work / "clips.json", ClipList(clips=clips))
    lap("voice")
    timing = build_timing(reading, script, clips, config.audio, config.render.fps)
    write_artifact(work / "timing.json", timing)
    track = mix_track(work, timing, clips, config.audio, reading)
    write_wav(work / "audio.wav", track, timing.sample_rate_hz)
    srt_path = config.output_path.with_suffix(".srt")
    subtitles = build_srt(script, clips, timing)  # written beside the video once the video is written
    lap("mix")
    plan = plan_camera(reading, timing, config.render)
    write_artifact(work / "camera.json", plan)
    render_key = text_sha256(
        "render",
        __version__,
        plan.model_dump_json(),
        file_sha256(work / "audio.wav"),
        json.dumps(asdict(config.render), default=str),
        *(page.sha256 for page in book.pages),
    )
    if _output_is_current(work / "render.key", render_key, config.output_path):
        progress.note(f"[render] {config.output_path} is up to date")
    else:
        report = render_video(
            plan, book, work, config.render, track, timing.sample_rate_hz, config.output_path, progress
        )
        progress.note(f"[render] {report.rendered} of {report.segments} segment(s) rendered, the rest reused")
        atomic_write_text(work / "render.key", f"{render_key} {_output_stamp(config.output_path)}")
    atomic_write_text(srt_path, subtitles)
    lap("render")
    result.output, result.subtitles, result.duration_s = config.output_path, srt_path, timing.duration_s
    return result
