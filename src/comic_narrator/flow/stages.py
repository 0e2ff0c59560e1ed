"""The stage table: every stage of a run, what it works on, where its cache entries live in the work folder and
what its cache key is made of. Each key function lives with its stage; the book-level ones are here."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from comic_narrator import __version__
from comic_narrator.artifacts import Book, BookReading
from comic_narrator.config import AudioConfig, IngestConfig, VoiceConfig
from comic_narrator.errors import InputError
from comic_narrator.workdir import file_sha256, text_sha256

if TYPE_CHECKING:
    from comic_narrator.artifacts import Clip, Timing
    from comic_narrator.timeline.subtitles import SubtitleTrack
    from comic_narrator.video.segments import Segment

Scope = Literal["book", "page", "line", "segment"]


@dataclass(frozen=True)
class Stage:
    """One stage: a function over typed artifacts, run once per ``scope``. ``key`` is the function that makes
    its cache key (None: not cached, it costs less than a lookup), ``key_parts`` says in words what enters that
    key, and ``stored`` lists the work-folder paths (globs) its results are kept at."""

    name: str
    scope: Scope
    function: str
    """``module:attribute`` of the stage function (resolved on demand, so the table imports no engine)."""
    makes: str
    key: str | None
    key_parts: tuple[str, ...]
    stored: tuple[str, ...]

    def resolve(self) -> tuple[Callable[..., object], Callable[..., str] | None]:
        """The stage function and its key function."""
        return _attribute(self.function), (_attribute(self.key) if self.key else None)  # type: ignore[return-value]


def _attribute(spec: str) -> Callable[..., object]:
    module, _, name = spec.partition(":")
    target: object = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    assert callable(target), spec
    return target


STAGES: tuple[Stage, ...] = (
    Stage(
        "ingest",
        "book",
        "comic_narrator.ingest.book:ingest_book",
        "Book",
        "comic_narrator.flow.stages:book_key",
        ("the input's bytes (every file's name and bytes for a folder)", "the ingest options", "the Book schema"),
        ("book.json", "book.key", "pages/*.png"),
    ),
    Stage(
        "read",
        "page",
        "comic_narrator.reading.stage:read_one_page",
        "PageReading",
        "comic_narrator.reading.stage:local_reading_key",
        (
            "the page's pixels",
            "the reader's own source and panel-model weights",
            "the vision options",
            "the OCR engine",
            "the layout hint",
            "the version",
        ),
        ("readings/page-*.json",),
    ),
    Stage(
        "read-llm",
        "page",
        "comic_narrator.reading.stage:refine_one_page",
        "PageReading",
        "comic_narrator.reading.stage:llm_reading_key",
        (
            "the page's local reading",
            "the book's characters it is shown (characters.json as of the pages before it)",
            "the LLM request (instructions, answer schema, image size, token cap, thinking switch, page or panels)",
            "the model's name (not the server's address)",
        ),
        ("readings/page-*.llm.*.json",),
    ),
    Stage(
        "characters",
        "page",
        "comic_narrator.reading.book_characters:CharacterBook.add_page",
        "PageReading (book-wide character ids) and BookCharacters (who is who, grown in book order)",
        None,
        (),
        ("reading.json", "characters.json"),
    ),
    Stage(
        "script",
        "page",
        "comic_narrator.voice.writer:page_lines",
        "ScriptLine list",
        "comic_narrator.flow.stages:script_key",
        ("the book's reading", "the voice options (not --jobs)"),
        ("script.json", "script.key"),
    ),
    Stage(
        "cast",
        "page",
        "comic_narrator.voice.casting:cast_book",
        "Cast (each voice recorded in BookCharacters)",
        None,
        (),
        ("cast.json", "characters.json"),
    ),
    Stage(
        "voice",
        "line",
        "comic_narrator.voice.synthesis:synthesize_with_bank",
        "Clip",
        "comic_narrator.voice.synthesis:clip_cache_key",
        (
            "the line's text as spoken",
            "the voice",
            "its delivery (speed, pitch, gain, style blend)",
            "the engine's version",
        ),
        ("clips/*.wav", "clips.json"),
    ),
    Stage(
        "timing",
        "page",
        "comic_narrator.timeline.timing:build_timing",
        "Timing",
        None,
        (),
        ("timing.json",),
    ),
    Stage(
        "camera",
        "page",
        "comic_narrator.video.camera:plan_camera",
        "CameraPlan",
        None,
        (),
        ("camera.json",),
    ),
    Stage(
        "segment",
        "segment",
        "comic_narrator.video.segments:render_segment",
        "Segment (H.264 MP4)",
        "comic_narrator.video.segments:segment_key",
        (
            "the page's pixels",
            "its shots and the one it glides from",
            "size and rate",
            "the encoder, its build and settings",
            "the look",
            "the subtitles burned in",
            "the balloons lit, the sound words pulsed, the page it takes over from",
        ),
        ("segments/*.mp4",),
    ),
    Stage(
        "master",
        "book",
        "comic_narrator.audio.mix:master_pages",
        "audio pieces (WAV, AAC)",
        None,
        (),
        ("audio.wav", "segments/*.m4a"),
    ),
    Stage(
        "join",
        "book",
        "comic_narrator.video.render:join_video",
        "the MP4",
        "comic_narrator.flow.stages:render_key",
        (
            "the timeline",
            "every clip's key",
            "the audio options",
            "every segment's key",
            "the subtitle cues",
            "the end card, chapter marks and metadata",
        ),
        ("render.key",),
    ),
)


RUN_RECORDS = ("comic-narrator.log", "failures.json")
"""What a run keeps in the work folder besides its stages' artifacts: the log the error line points at, and the
pages that failed (``--keep-going``)."""


def stage(name: str) -> Stage:
    return next(s for s in STAGES if s.name == name)


# ---------------------------------------------------------------------------------------- book-level cache keys


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


def book_key(input_path: Path, config: IngestConfig) -> str:
    return text_sha256(
        "book",
        str(Book.model_fields["schema_version"].default),
        input_fingerprint(input_path),
        json.dumps(asdict(replace(config, keep_going=False)), sort_keys=True, default=str),
    )


def script_key(reading: BookReading, config: VoiceConfig) -> str:
    """What the lines depend on; how many voices are made at once (--jobs) is not among it."""
    options = json.dumps(asdict(replace(config, jobs=0)), default=str)
    return text_sha256("script", reading.model_dump_json(), options)


def render_key(
    timing: Timing,
    clips: Sequence[Clip],
    audio: AudioConfig,
    segments: Sequence[Segment],
    subtitles: Sequence[SubtitleTrack],
    *more: str,
) -> str:
    """What the MP4 is made of (``more``: what the book's end adds, as fingerprints)."""
    return text_sha256(
        "render",
        __version__,
        timing.model_dump_json(),
        *(f"{clip.line_id}:{clip.cache_key}" for clip in clips),
        json.dumps(asdict(audio), default=str),
        *(segment.key for segment in segments),
        *(track.fingerprint() for track in subtitles),
        *more,
    )
