"""The typed, JSON-serialisable artifacts that cross stage boundaries.

Every artifact is a frozen pydantic model with a ``schema_version``; the version is part of every cache key, so
changing a model's shape invalidates what older code stored. What ``read --json`` prints is exactly
:class:`BookReading`, and ``--script`` accepts exactly the :class:`Script` the tool wrote.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BBox = tuple[int, int, int, int]
"""[x, y, w, h] in page pixels, origin top-left."""

ReadingDirection = Literal["ltr", "rtl", "ttb"]
Layout = Literal["auto", "manga", "western", "webtoon"]
Lang = Literal["auto", "en", "ja"]
SpokenKind = Literal["speech", "shout", "caption", "sound"]
"""What a script line can be: lettering someone (or the narrator) says."""
TextKind = Literal[SpokenKind, "furniture"]
"""A lettered element of a page. ``furniture`` (page numbers, credits, URLs, copyright and licence notices,
publisher watermarks) is kept in the reading for the credits and never narrated."""
PageKind = Literal["story", "cover", "non-story", "credits", "blank"]
"""``credits``: an episode's closing page of names (patrons, contributors); its loose print is furniture."""
Emotion = Literal["neutral", "excited", "angry", "sad", "scared", "whisper", "calm"]
SceneCue = Literal["wind", "rain", "sea", "city", "forest", "crowd", "fire", "night", "interior"]
"""Where a page is set, as far as its sound goes: the ambience the sound bed plays under its pauses."""


class Artifact(BaseModel):
    """Base: frozen, no unknown keys (an edited file with a typo fails loudly instead of being ignored)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------------------------- ingest


class PageImage(Artifact):
    """One page (or one segment of a tall webtoon page) as stored in the work folder."""

    index: int = Field(description="0-based position in the book after --pages selection and slicing")
    source: str = Field(description="where it came from: file path, archive entry, or 'file.pdf#page=3'")
    source_page_number: int = Field(description="1-based page number in the input before selection")
    segment: int = Field(default=0, description="0 for a whole page; 1.. for webtoon slices of one page")
    image_file: str = Field(description="PNG file name relative to the work folder")
    width_px: int
    height_px: int
    sha256: str = Field(description="hash of the decoded pixels, the cache key of everything read from it")
    unreadable: str | None = Field(
        default=None,
        description="why the page's image could not be decoded (--keep-going): a blank page stands in for it",
    )


class Book(Artifact):
    """The ingested input: its pages in reading order plus what the container said about them."""

    schema_version: int = 1
    source: str
    pages: list[PageImage]
    manga_hint: bool | None = Field(default=None, description="ComicInfo.xml Manga=YesAndRightToLeft")
    language_hint: str | None = Field(default=None, description="ComicInfo.xml LanguageISO")


# --------------------------------------------------------------------------------------------- reading


class Panel(Artifact):
    """A panel in reading order."""

    bbox: BBox


class TextRegion(Artifact):
    """One lettered element: a bubble, a caption box, or a sound effect."""

    bbox: BBox
    kind: TextKind
    text: str
    speaker: str | None = Field(default=None, description="character id, e.g. 'char1'; None for captions")
    panel: int = Field(description="index into the page's panels (reading order); -1 when outside any panel")
    lang: Literal["en", "ja"] = "en"
    vertical: bool = False
    confidence: float = 1.0
    emotion: Emotion | None = Field(default=None, description="tone read by an LLM reader; None = from lettering")
    speaker_signature: list[float] | None = Field(
        default=None,
        description="local reader: colour histogram of the figure the balloon points at (links speakers across pages)",
    )
    translation: str | None = Field(
        default=None,
        description="the lettering in English when the page is not (set by the LLM reader); the .en subtitles",
    )
    speaker_xy: tuple[float, float] | None = Field(
        default=None,
        description="local reader: the point past the balloon's tail tip (page pixels), where its speaker's "
        "figure probably is; the camera favours it",
    )


class Character(Artifact):
    """A character an LLM reader named on a page, with what casting needs to pick a voice."""

    id: str = Field(description="the id used in TextRegion.speaker")
    name: str
    gender: Literal["male", "female", "unknown"] = "unknown"
    age: Literal["child", "young", "adult", "old", "unknown"] = "unknown"
    nature: Literal["human", "creature", "machine", "unknown"] = "unknown"


class PageReading(Artifact):
    """What was read off one page: panels and texts, both in reading order (furniture last, top to bottom)."""

    schema_version: int = 6
    page: int = Field(description="index of the PageImage")
    width: int
    height: int
    reading_direction: ReadingDirection
    page_kind: PageKind = "story"
    panels: list[Panel]
    texts: list[TextRegion]
    vision: str = Field(default="local", description="which reader produced it: local | llm:<model>")
    characters: list[Character] = Field(default_factory=list, description="named by an LLM reader; else empty")
    scene: list[SceneCue] = Field(
        default_factory=list,
        description="the page's setting for its ambience, most evident first (an LLM reader's or an edited "
        "reading's cues); empty: the sound bed tells what it can from the lettering and the colours",
    )


class BookReading(Artifact):
    """Exactly what ``comic-narrator read --json`` prints and ``--reading FILE`` accepts."""

    schema_version: int = 6
    source: str
    lang: Literal["en", "ja"]
    pages: list[PageReading]


# --------------------------------------------------------------------------------------------- cast & script


class CastMember(Artifact):
    """A character (or the narrator) and the voice that speaks for it for the whole book."""

    character: str = Field(description="'narrator' or a character id from the readings")
    voice: str = Field(description="voice id from `comic-narrator voices`")
    gender: Literal["male", "female", "unknown"] = "unknown"
    age: Literal["child", "young", "adult", "old", "unknown"] = "unknown"
    speed: float = Field(default=1.0, description="1.0 = the voice's natural rate")
    pitch_semitones: float = 0.0
    lines: int = Field(default=0, description="how many script lines this character speaks")


class Cast(Artifact):
    schema_version: int = 1
    members: list[CastMember]

    def voice_for(self, character: str) -> CastMember:
        for member in self.members:
            if member.character == character:
                return member
        for member in self.members:
            if member.character == "narrator":
                return member
        raise KeyError(character)


class CharacterSource(Artifact):
    """A page's own id for a book character: what the page's reading called it before it was linked."""

    page: int = Field(description="the page (from 0)")
    speaker: str = Field(description="the page-local id (the local reader's per-page 'char2', an LLM's name slug)")
    regions: int = Field(default=0, description="balloons of that page the reading gives it")


class BookCharacter(Artifact):
    """One character of the book, as pages added it: its book-wide id, what is known of it, its voice."""

    id: str = Field(description="the book-wide id used in TextRegion.speaker and ScriptLine.speaker")
    name: str | None = Field(default=None, description="as an LLM reader or the user's cast file named it")
    gender: Literal["male", "female", "unknown"] = "unknown"
    age: Literal["child", "young", "adult", "old", "unknown"] = "unknown"
    nature: Literal["human", "creature", "machine", "unknown"] = "unknown"
    first_page: int = Field(description="the page (from 0) it is first met on")
    lines: int = Field(default=0, description="script lines it speaks (0: met, or renamed away, but silent)")
    voice: str | None = Field(default=None, description="the voice it keeps for the book, once it has spoken")
    sources: list[CharacterSource] = Field(
        default_factory=list, description="the page-local ids it was linked from, in book order"
    )

    @property
    def regions(self) -> int:
        """Balloons the readings give it, over the book so far."""
        return sum(source.regions for source in self.sources)


class BookCharacters(Artifact):
    """Who is who for the whole book (``characters.json``), grown page by page in book order
    (reading/book_characters.py), so ids, names and voices do not depend on which page finishes first. The LLM
    reader is shown it as of the pages before each page; casting reads it and records each voice in it."""

    schema_version: int = 2
    pages: int = Field(default=0, description="how many pages, from the book's first, it holds")
    characters: list[BookCharacter] = Field(default_factory=list, description="in order of first appearance")

    def get(self, character_id: str) -> BookCharacter | None:
        return next((c for c in self.characters if c.id == character_id), None)


class ScriptLine(Artifact):
    """One utterance in book order. Editing ``text``, ``speaker`` or ``emotion`` re-voices only this line."""

    id: str = Field(description="stable id, e.g. 'p001-t03'")
    page: int = Field(description="the reading's page number, counted from 0 (the id's p001 counts from 1)")
    panel: int = Field(description="-1 for a line over the whole page (establishing shot), else from 0")
    speaker: str = Field(description="'narrator' or a character id present in the cast")
    kind: SpokenKind
    text: str
    emotion: Emotion = "neutral"
    pause_after_s: float = 0.35


class Script(Artifact):
    """The whole book's spoken lines in order. Written to ``script.json``; ``--script FILE`` reads it back."""

    schema_version: int = 1
    lang: Literal["en", "ja"]
    lines: list[ScriptLine]


# --------------------------------------------------------------------------------------------- audio & timing


class Clip(Artifact):
    """One synthesised line."""

    line_id: str
    audio_file: str = Field(description="WAV file relative to the work folder")
    duration_s: float
    sample_rate_hz: int
    voice: str
    cache_key: str


class ClipList(Artifact):
    """clips.json: the clips of the current script, in script order."""

    schema_version: int = 1
    clips: list[Clip]


class ShotTiming(Artifact):
    """One shot on the timeline: the establishing shot of a page (panel -1) or one panel."""

    page: int
    panel: int
    start_s: float
    duration_s: float
    frames: int
    line_ids: list[str]
    line_starts_s: list[float]


class Timing(Artifact):
    """The whole timeline. Shot durations are whole frames; the audio track is padded to match exactly."""

    schema_version: int = 1
    fps: int
    sample_rate_hz: int
    shots: list[ShotTiming]
    duration_s: float


class Shot(Artifact):
    """A camera move over one page: from one view rectangle to another (page pixels, x, y, w, h as floats)."""

    page: int
    panel: int
    start_frame: int
    frames: int
    rect_from: tuple[float, float, float, float]
    rect_to: tuple[float, float, float, float]
    focus: tuple[float, float, float, float] | None = Field(
        default=None, description="the panel (page pixels) kept bright while the rest of the view is dimmed"
    )


class CameraPlan(Artifact):
    schema_version: int = 2
    width_px: int
    height_px: int
    fps: int
    shots: list[Shot]
