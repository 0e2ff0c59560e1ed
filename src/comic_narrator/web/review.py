"""The review session: a narrated book's pages, reading, script and voices as the review page shows them, a line
voiced on demand (the cached clip when its text, voice and delivery are unchanged), and an edit checked and saved.
The HTTP side is :mod:`comic_narrator.web.server`; rendering is handed in by the command, as engines are."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from comic_narrator.artifacts import (
    BBox,
    Book,
    BookReading,
    Cast,
    CastMember,
    Emotion,
    Script,
    ScriptLine,
    SpokenKind,
    TextKind,
)
from comic_narrator.config import VoiceConfig
from comic_narrator.progress import SILENT
from comic_narrator.voice.synthesis import synthesize_with_bank
from comic_narrator.voice.voicebank import VoiceBank
from comic_narrator.web.edits import (
    SPEAKER_ID,
    EditError,
    LineEdit,
    cast_pins,
    edited_script,
    parse_edit,
    save_review,
    saved_pins,
)
from comic_narrator.web.guided import line_bbox
from comic_narrator.web.panel_edits import edited_reading, review_reading_file
from comic_narrator.workdir import read_artifact


class ReviewText(BaseModel):
    model_config = ConfigDict(frozen=True)

    bbox: BBox
    kind: TextKind
    text: str
    speaker: str | None


class ReviewPage(BaseModel):
    model_config = ConfigDict(frozen=True)

    page: int
    image: str
    width: int
    height: int
    panels: list[BBox]
    texts: list[ReviewText]


class ReviewLine(BaseModel):
    """A script line with what the page shows beside it: the lettering it was read from."""

    model_config = ConfigDict(frozen=True)

    line: ScriptLine
    bbox: BBox | None


class ReviewVoice(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    language: str
    gender: str
    age: str
    tier: str
    description: str


class ReviewBook(BaseModel):
    """Everything the review page starts from (``GET /api/book``)."""

    model_config = ConfigDict(frozen=True)

    title: str
    lang: str
    pages: list[ReviewPage]
    lines: list[ReviewLine]
    voices: dict[str, str]
    bank: list[ReviewVoice]
    emotions: list[str]
    kinds: list[str]
    can_render: bool


class ClipRequest(BaseModel):
    """``POST /api/clip``: a line as it stands on the page, in the voice chosen for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: LineEdit
    voice: str


class ReviewSession:
    """One work folder under review. Not thread-safe by itself: the server serialises voicing and saving."""

    def __init__(
        self, work_dir: Path, bank: VoiceBank, voice: VoiceConfig, render: Callable[[], str] | None = None
    ) -> None:
        self.work_dir = work_dir
        self._bank = bank
        self._voice = voice
        self._render = render
        self._lock = threading.Lock()
        self.reload()

    def _voices(self) -> dict[str, str]:
        chosen = {member.character: member.voice for member in self.cast.members}
        return {**chosen, **saved_pins(self.work_dir)}

    def reload(self) -> None:
        """The work folder's artifacts as they stand (the reading a review saved, if any)."""
        reading_file = review_reading_file(self.work_dir) or self.work_dir / "reading.json"
        self.reading = read_artifact(reading_file, BookReading)
        self.script = read_artifact(self.work_dir / "script.json", Script)
        self.cast = read_artifact(self.work_dir / "cast.json", Cast)

    def book(self) -> ReviewBook:
        pages = {page.page: page for page in self.reading.pages}
        images = {page.index: page.image_file for page in read_artifact(self.work_dir / "book.json", Book).pages}
        return ReviewBook(
            title=Path(self.reading.source).stem or "comic",
            lang=self.script.lang,
            pages=[
                ReviewPage(
                    page=page.page,
                    image=images[page.page],
                    width=page.width,
                    height=page.height,
                    panels=[panel.bbox for panel in page.panels],
                    texts=[ReviewText(bbox=t.bbox, kind=t.kind, text=t.text, speaker=t.speaker) for t in page.texts],
                )
                for page in self.reading.pages
            ],
            lines=[ReviewLine(line=line, bbox=line_bbox(line, pages[line.page])) for line in self.script.lines],
            voices=self._voices(),
            bank=[
                ReviewVoice(
                    id=v.id, language=v.language, gender=v.gender, age=v.age, tier=v.tier, description=v.description
                )
                for v in self._bank.voices()
                if v.language == self.script.lang
            ],
            emotions=list(get_args(Emotion)),
            kinds=list(get_args(SpokenKind)),
            can_render=self._render is not None,
        )

    def book_json(self) -> str:
        return self.book().model_dump_json()

    def clip(self, raw: bytes) -> str:
        """Voice one line (or a voice preview) and return its WAV, relative to the work folder."""
        try:
            request = ClipRequest.model_validate_json(raw)
        except ValidationError as exc:
            raise EditError(f"not a valid line to play: {exc.errors()[0]['msg']}") from exc
        known = {voice.id for voice in self._bank.voices()}
        if request.voice not in known:
            raise EditError(f"unknown voice {request.voice!r} (`comic-narrator voices` lists them)")
        line = request.line
        if not SPEAKER_ID.fullmatch(line.speaker) or not line.text.strip():
            raise EditError("a line to play needs a speaker id and some text")
        spoken = ScriptLine(**{**line.model_dump(), "id": line.id or "preview", "text": line.text.strip()})
        member = next((m for m in self.cast.members if m.character == line.speaker), None)
        member = (member or CastMember(character=line.speaker, voice=request.voice)).model_copy(
            update={"voice": request.voice}
        )
        with self._lock:
            [clip] = synthesize_with_bank(
                Script(lang=self.script.lang, lines=[spoken]),
                Cast(members=[member]),
                self._voice,
                self.work_dir / "clips",
                SILENT,
                self._bank,
            )
        return clip.audio_file

    def save(self, raw: bytes) -> str:
        """Check the whole edit, then write the script and the voices (nothing is written if any of it fails)."""
        edit = parse_edit(raw)
        with self._lock:
            reading = edited_reading(self.reading, edit.panels)
            script = edited_script(edit, reading, self.script.lang)
            voices = self._bank.voices()
            pins = cast_pins(edit, script, voices)
            keep_reading = bool(edit.panels) or review_reading_file(self.work_dir) is not None
            written = save_review(self.work_dir, script, pins, voices, reading if keep_reading else None)
            self.script, self.reading = script, reading
        names = ", ".join(path.name for path in written)
        return f"saved {len(script.lines)} line(s), {len(pins)} voice(s){' and the panels' * keep_reading}: {names}"

    def render(self) -> str:
        if self._render is None:
            raise EditError("this review was started without an output to render")
        with self._lock:
            message = self._render()
            self.reload()
        return message
