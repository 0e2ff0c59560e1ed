"""What the review page may change, and the check every change passes before anything is written: the edited
lines become a :class:`Script`, the voice choices a cast file and redrawn or reordered panels a reading, each
validated exactly as ``--script``, ``--cast`` and ``--reading`` validate them, and written only when all of it is
valid (a bad edit changes nothing on disk)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from comic_narrator.artifacts import Book, BookReading, Emotion, Script, ScriptLine, SpokenKind
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.errors import ArtifactError
from comic_narrator.voice.casting import load_cast_file
from comic_narrator.web.panel_edits import REVIEW_READING, PanelEdit
from comic_narrator.workdir import atomic_write_text, read_artifact, write_artifact

REVIEW_CAST = "review-cast.yaml"
"""The voices chosen on the review page, in the work folder; the next run of that work folder pins them (an
explicit ``--cast FILE`` wins)."""
MAX_BODY_BYTES = 4 << 20
MAX_TEXT_CHARS = 2000
SPEAKER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
LINE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""An id the page may keep: the writer's ``pPPP-tNN``, a review's ``pPPP-nNN``, or a hand-edited script's own."""


class EditError(ArtifactError):
    """An edit that cannot be applied; the message says which line and what is wrong."""


class LineEdit(BaseModel):
    """One line as the page sends it: a script line whose id may be empty (a line added on the page)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    page: int
    panel: int
    speaker: str
    kind: SpokenKind = "speech"
    text: str
    emotion: Emotion = "neutral"
    pause_after_s: float = Field(default=0.35, ge=0.0, le=5.0)


class ReviewEdit(BaseModel):
    """The whole edited script (lines in the order they are to be said), the voice of each speaker, and the
    pages whose panels were redrawn or reordered (page index -> its panels in reading order; lines' panels
    already count in that order)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lines: list[LineEdit]
    voices: dict[str, str] = Field(default_factory=dict)
    panels: dict[int, list[PanelEdit]] = Field(default_factory=dict)


def parse_edit(raw: bytes) -> ReviewEdit:
    if len(raw) > MAX_BODY_BYTES:
        raise EditError(f"the edit is {len(raw)} bytes; at most {MAX_BODY_BYTES} are accepted")
    try:
        return ReviewEdit.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        raise EditError(f"not a valid edit ({exc.error_count()} problem(s); first at {where}: {first['msg']})") from exc


def edited_script(edit: ReviewEdit, reading: BookReading, lang: str) -> Script:
    """The edit as a script in the order it is said; every line on a page and panel the reading has, said by a valid
    speaker, with text; a line without an id gets a new one (``pPPP-nNN``)."""
    pages = {page.page: page for page in reading.pages}
    taken = {line.id for line in edit.lines if line.id}
    lines: list[ScriptLine] = []
    seen: set[str] = set()
    for number, line in enumerate(edit.lines, start=1):
        where = f"line {number}"
        page = pages.get(line.page)
        if page is None:
            raise EditError(f"{where}: page {line.page + 1} is not in the book (it has {len(pages)} page(s))")
        if not -1 <= line.panel < len(page.panels):
            raise EditError(
                f"{where}: page {line.page + 1} has panels 1..{len(page.panels)} (0 = the whole page); "
                f"got {line.panel + 1}"
            )
        if not SPEAKER_ID.fullmatch(line.speaker):
            raise EditError(f"{where}: speaker {line.speaker!r} is not an id (letters, digits, '_', '-', '.'; 1-40)")
        text = re.sub(r"\s+", " ", line.text).strip()
        if not text:
            raise EditError(f"{where}: the text is empty (delete the line instead)")
        if len(text) > MAX_TEXT_CHARS:
            raise EditError(f"{where}: the text has {len(text)} characters; at most {MAX_TEXT_CHARS}")
        line_id = line.id
        if line_id and not LINE_ID.fullmatch(line_id):
            raise EditError(f"{where}: id {line_id!r} is not a line id (letters, digits, '_', '-', '.'; e.g. p001-t02)")
        if not line_id:
            line_id = _new_id(line.page, taken)
            taken.add(line_id)
        if line_id in seen:
            raise EditError(f"{where}: id {line_id} is used twice")
        seen.add(line_id)
        lines.append(ScriptLine(**{**line.model_dump(), "id": line_id, "text": text}))
    # Lines are said panel by panel in reading order (the timeline visits panels so); within a panel, in the
    # order the page gave.
    lines.sort(key=lambda line: (line.page, line.panel))
    return Script.model_validate({"lang": lang, "lines": [line.model_dump() for line in lines]})


def _new_id(page: int, taken: set[str]) -> str:
    number = 1
    while f"p{page + 1:03d}-n{number:02d}" in taken:
        number += 1
    return f"p{page + 1:03d}-n{number:02d}"


def cast_pins(edit: ReviewEdit, script: Script, voices: list[VoiceInfo]) -> dict[str, str]:
    """The speakers' voices to pin: each a voice the bank has, for the narrator or a speaker of the script."""
    known = {voice.id for voice in voices}
    speakers = {line.speaker for line in script.lines} | {"narrator"}
    pins: dict[str, str] = {}
    for speaker, voice in sorted(edit.voices.items()):
        if speaker not in speakers:
            continue  # a speaker whose lines were all deleted or renamed: nothing to pin
        if voice not in known:
            raise EditError(f"{speaker}: unknown voice {voice!r} (`comic-narrator voices` lists them)")
        pins[speaker] = voice
    return pins


def save_review(
    work_dir: Path, script: Script, pins: dict[str, str], voices: list[VoiceInfo], reading: BookReading | None = None
) -> list[Path]:
    """Write ``script.json``, ``review-cast.yaml`` and (when given) ``review-reading.json`` after each passes
    ``--script``, ``--cast`` and ``--reading``'s own checks on a temporary copy, so that a file reaching the work
    folder is one the next run accepts; returns what was written."""
    cast_text = "# Voices chosen in `comic-narrator review`; the next run of this work folder pins them.\n"
    cast_text += yaml.safe_dump(pins, sort_keys=True, allow_unicode=True) if pins else "{}\n"
    with tempfile.TemporaryDirectory(prefix=".review-", dir=work_dir) as scratch:
        trial = Path(scratch)
        write_artifact(trial / "script.json", script)
        atomic_write_text(trial / REVIEW_CAST, cast_text)
        try:
            read_artifact(trial / "script.json", Script)
            load_cast_file(trial / REVIEW_CAST, voices)
            if reading is not None:
                write_artifact(trial / REVIEW_READING, reading)
                pages = len(read_artifact(trial / REVIEW_READING, BookReading).pages)
                book_pages = len(read_artifact(work_dir / "book.json", Book).pages)
                if pages != book_pages:
                    raise EditError(f"the reading holds {pages} page(s) but the book has {book_pages}")
        except ArtifactError as exc:
            raise EditError(str(exc).replace(str(trial), str(work_dir))) from exc
    written = [work_dir / "script.json", work_dir / REVIEW_CAST]
    write_artifact(written[0], script)
    atomic_write_text(written[1], cast_text)
    if reading is not None:
        written.append(work_dir / REVIEW_READING)
        write_artifact(written[2], reading)
    return written


def review_cast_file(work_dir: Path) -> Path | None:
    """The cast file a review saved in this work folder, which the next run pins unless given ``--cast``."""
    path = work_dir / REVIEW_CAST
    return path if path.is_file() else None


def saved_pins(work_dir: Path) -> dict[str, str]:
    """The voices a review saved before (speaker -> voice id), or none."""
    path = work_dir / REVIEW_CAST
    if not path.exists():
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, dict) else {}
