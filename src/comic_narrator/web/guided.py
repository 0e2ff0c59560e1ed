"""The book's guided navigation: pages, panels in reading order and balloons with their text, speaker and the
stretch of the narration that speaks them, as a Readium Guided Navigation Document
(https://readium.org/guided-navigation/) that validates against its published JSON Schema (a pinned copy in
tests/data/readium-guided-navigation): ``imgref`` with a ``#xywh=`` media fragment for a panel or a balloon,
``audioref`` with a ``#t=start,end`` fragment, ``text``, ``role`` from the schema's roles and ``character``."""

from __future__ import annotations

import re
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from comic_narrator.artifacts import BBox, BookReading, ClipList, PageReading, Script, ScriptLine, Timing

GUIDED_MEDIA_TYPE = "application/guided-navigation+json"
ROLE_OF_KIND = {"speech": "bubble", "shout": "bubble", "caption": "caption", "sound": "sound"}
"""The schema's roles (roles.schema.json) for each kind of line. Its enum has ``bubble``, not the comic examples'
``speechBubble`` and ``shoutBubble``, so a shout is a bubble too; a page has no role of its own in the enum and
is left without one (roles are optional: it is the top-level object whose ``imgref`` is the whole page)."""
_LINE_ID = re.compile(r"p(\d+)-t(\d+)$")


class GuidedObject(BaseModel):
    """One Guided Navigation Object: a page, a panel or a balloon (fields left unset are not written). The schema
    wants at least one of ``imgref``, ``audioref``, ``text`` or ``children``; ``character`` is the comic examples'
    extension, which the schema allows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = None
    role: list[str] | None = None
    imgref: str | None = None
    audioref: str | None = None
    text: str | None = None
    character: list[str] | None = None
    children: list[GuidedObject] | None = Field(default=None, min_length=1)


class GuidedDocument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    guided: list[GuidedObject] = Field(min_length=1)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2, exclude_none=True) + "\n"


def xywh(image: str, bbox: BBox) -> str:
    """A rectangle of an image as a spatial media fragment (https://www.w3.org/TR/media-frags/#naming-space)."""
    x, y, w, h = bbox
    return f"{uri_path(image)}#xywh={x},{y},{w},{h}"


def time_ref(audio: str, start_s: float, end_s: float) -> str:
    """A stretch of the narration as a temporal media fragment (https://www.w3.org/TR/media-frags/#naming-time)."""
    return f"{uri_path(audio)}#t={start_s:.3f},{end_s:.3f}"


def uri_path(relative: str) -> str:
    """A file of the export as a relative URI reference (the schema's ``format: uri-reference``): a space or a
    ``#`` in a name is percent-encoded, the folder separators kept."""
    return quote(relative, safe="/")


def line_times(timing: Timing, clips: ClipList) -> dict[str, tuple[float, float]]:
    """Each voiced line's (start, end) on the book's timeline: where the timeline starts it, for its clip's length."""
    durations = {clip.line_id: clip.duration_s for clip in clips.clips}
    times: dict[str, tuple[float, float]] = {}
    for shot in timing.shots:
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            times[line_id] = (start_s, start_s + durations.get(line_id, 0.0))
    return times


def line_bbox(line: ScriptLine, page: PageReading) -> BBox | None:
    """The lettering a line was written from (the writer's ids are ``pPPP-tTT``, TT counting the page's texts
    from 1); None for a line added by hand."""
    match = _LINE_ID.match(line.id)
    if match is None or int(match.group(1)) != page.page + 1:
        return None
    number = int(match.group(2))
    return page.texts[number - 1].bbox if 1 <= number <= len(page.texts) else None


def speaker_names(reading: BookReading) -> dict[str, str]:
    """Character id -> the name an LLM reader gave it (the local reader names none: its ids stand)."""
    return {c.id: c.name for page in reading.pages for c in page.characters if c.name}


def _balloons(
    lines: list[ScriptLine],
    page: PageReading,
    image: str,
    audio: str,
    times: dict[str, tuple[float, float]],
    names: dict[str, str],
) -> list[GuidedObject]:
    found = []
    for line in lines:
        bbox = line_bbox(line, page)
        span = times.get(line.id)
        if bbox is None and span is None and not line.text:
            continue  # an empty line added by hand and never voiced: nothing to show or play
        found.append(
            GuidedObject(
                id=line.id,
                role=[ROLE_OF_KIND[line.kind]],
                imgref=xywh(image, bbox) if bbox is not None else None,
                audioref=time_ref(audio, *span) if span is not None else None,
                text=line.text or None,
                character=[names.get(line.speaker, line.speaker)],
            )
        )
    return found


def guided_document(
    reading: BookReading, script: Script, clips: ClipList, timing: Timing, audio: str, images: list[str]
) -> GuidedDocument:
    """Pages (``images[i]`` is page i's file in the export) with their page-wide lines first, then each panel in
    reading order with its lines; every object spoken or shown carries its stretch of ``audio``."""
    times = line_times(timing, clips)
    names = speaker_names(reading)
    shot_times: dict[tuple[int, int], tuple[float, float]] = {}
    for shot in timing.shots:
        start, end = shot_times.get((shot.page, shot.panel), (shot.start_s, shot.start_s))
        shot_times[(shot.page, shot.panel)] = (min(start, shot.start_s), max(end, shot.start_s + shot.duration_s))
    pages: list[GuidedObject] = []
    for image, page in zip(images, reading.pages, strict=True):
        lines = [line for line in script.lines if line.page == page.page]
        children = _balloons([line for line in lines if line.panel == -1], page, image, audio, times, names)
        for number, panel in enumerate(page.panels):
            said = _balloons([line for line in lines if line.panel == number], page, image, audio, times, names)
            span = shot_times.get((page.page, number))
            children.append(
                GuidedObject(
                    id=f"page{page.page + 1}-panel{number + 1}",
                    role=["panel"],
                    imgref=xywh(image, panel.bbox),
                    audioref=time_ref(audio, *span) if span is not None else None,
                    character=sorted({c for b in said for c in b.character or []}) or None,
                    children=said or None,
                )
            )
        page_spans = [span for (p, _), span in shot_times.items() if p == page.page]
        pages.append(
            GuidedObject(
                id=f"page{page.page + 1}",
                imgref=uri_path(image),
                audioref=time_ref(audio, min(s for s, _ in page_spans), max(e for _, e in page_spans))
                if page_spans
                else None,
                children=children or None,
            )
        )
    return GuidedDocument(guided=pages)
