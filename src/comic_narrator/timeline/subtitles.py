"""Every subtitle of a run: the cues (spoken lines, sound words, speaker names) laid on the timeline, and what is
made of them: ``OUT.srt`` and ``OUT.vtt`` beside the video, ``OUT.en.srt`` / ``OUT.en.vtt`` when the reading
carries English translations, and the matching soft mov_text tracks inside the MP4.

The cues are written for viewers who cannot hear, after the DCMP Captioning Key (captioningkey.org, "Sound
Effects" and "Speaker Identification"): a sound word is shown in brackets as it is lettered (``[BrrOoooOoo!!]``,
``[ドン]``), and a speaker the picture may not show is named in parentheses on a line of its own above the words
(``(Pepper)``; full-width ``（…）`` in Japanese).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

import av
from av.subtitles.stream import SubtitleStream
from av.subtitles.subtitle import SubtitleSet

from comic_narrator.artifacts import BookReading, Clip, Script, ScriptLine, ShotTiming, Timing
from comic_narrator.workdir import atomic_write_text, text_sha256

LANGUAGE_TAGS = {"en": "eng", "ja": "jpn"}
"""ISO 639-2 codes, the form an MP4 track's language box takes."""
SOUND_CUE_MIN_S = 1.5
"""A sound word stays up at least this long from its shot's start (a bracketed word read at ease; Netflix's
shortest event is 5/6 s), longer while the line under it is spoken, never past its shot."""
CHARACTER_ID = re.compile(r"char\d+|unknown|narrator", re.IGNORECASE)
"""Ids that are not names: the local reader's ``charN``, the writer's ``unknown`` and the narrator."""
FORMATS = ("srt", "vtt")

_MS = Fraction(1, 1000)
# mov_text is encoded by FFmpeg from ASS events: the encoder opens only with a script header, and takes each
# event as ``ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`` (FFmpeg's ASS subtitle rects).
_ASS_HEADER = (
    "[Script Info]\nScriptType: v4.00+\nPlayResX: 384\nPlayResY: 288\n\n"
    "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, "
    "Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, "
    "MarginL, MarginR, MarginV, Encoding\n"
    "Style: Default,Sans-Serif,18,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0\n\n"
    "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
)
_ASS_EVENT_PREFIX = "0,0,Default,,0,0,0,,"


@dataclass(frozen=True)
class Cue:
    """One subtitle on screen: whole milliseconds, so the SRT, the VTT and the MP4 track agree exactly."""

    start_ms: int
    end_ms: int
    text: str


@dataclass(frozen=True)
class SubtitleTrack:
    """The cues of one language. ``suffix`` goes before the file extension: ``""`` for the book's own language,
    ``".en"`` for the English translation."""

    lang: Literal["en", "ja"]
    cues: tuple[Cue, ...]
    suffix: str = ""

    @property
    def language_tag(self) -> str:
        return LANGUAGE_TAGS[self.lang]

    def between(self, start_ms: int, end_ms: int) -> SubtitleTrack:
        """The cues shown from ``start_ms`` to ``end_ms``, clipped to that span and timed from its start (one
        chapter's track)."""
        cues = tuple(
            Cue(max(c.start_ms, start_ms) - start_ms, min(c.end_ms, end_ms) - start_ms, c.text)
            for c in self.cues
            if c.start_ms < end_ms and c.end_ms > start_ms
        )
        return SubtitleTrack(self.lang, cues, self.suffix)

    def fingerprint(self) -> str:
        """What the MP4 holds of this track, for the render's cache key."""
        return text_sha256(self.lang, self.suffix, *(f"{c.start_ms}:{c.end_ms}:{c.text}" for c in self.cues))

    def add_to(self, container: av.container.OutputContainer) -> Iterator[av.Packet[SubtitleStream]]:
        """Add this track to ``container`` as a mov_text stream tagged with its language (done now, before the
        container starts), and return its packets, in time order, to be muxed as the video is."""
        stream = container.add_stream("mov_text")
        stream.metadata["language"] = self.language_tag
        context = stream.codec_context
        context.subtitle_header = _ASS_HEADER.encode("utf-8")
        context.time_base = _MS
        context.open()  # so cues can be encoded before the container writes its header
        return self._packets(stream)

    def _packets(self, stream: SubtitleStream) -> Iterator[av.Packet[SubtitleStream]]:
        for cue in self.cues:
            event = _ASS_EVENT_PREFIX + cue.text.replace("\n", "\\N")
            packet = stream.codec_context.encode_subtitle(
                SubtitleSet.create(event.encode("utf-8"), start=0, end=cue.end_ms - cue.start_ms)
            )
            packet.stream = stream
            packet.time_base = _MS
            packet.pts = packet.dts = cue.start_ms
            packet.duration = cue.end_ms - cue.start_ms
            yield packet


# --------------------------------------------------------------------------------------------- cues


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def speaker_names(reading: BookReading) -> dict[str, str]:
    """Character id -> the name a reader gave it (the LLM reader names them; the local reader's ``charN`` ids
    have none and are never shown)."""
    names: dict[str, str] = {}
    for page in reading.pages:
        for character in page.characters:
            name = _one_line(character.name)
            if name and not CHARACTER_ID.fullmatch(name) and not CHARACTER_ID.fullmatch(character.id):
                names.setdefault(character.id, name)
    return names


def needs_name(line: ScriptLine, previous_speaker: str | None, shot: ShotTiming) -> bool:
    """Whether a character's line is labelled with its speaker. The reader cannot tell who a panel shows, so the
    rule is about what the viewer can tell: a page's establishing shot (or lettering outside every panel) shows
    no one in particular, and within a panel the first voice is taken to be the figure the panel is framed on,
    while a voice that takes over from another may well be off-panel."""
    if line.kind == "caption" or line.kind == "sound":
        return False
    return shot.panel < 0 or (previous_speaker is not None and line.speaker != previous_speaker)


def _labelled(text: str, name: str, lang: str) -> str:
    return f"（{name}）\n{text}" if lang == "ja" else f"({name})\n{text}"


_Shown = Callable[[int, str], str | None]
"""(page, lettering as the writer spaces it) -> what a track shows for it; None leaves it out."""


@dataclass(frozen=True)
class _Layer:
    """A cue before flattening: sound words and spoken lines overlap, a subtitle track's cues may not."""

    start_ms: int
    end_ms: int
    text: str
    ident: int


def _translations(reading: BookReading) -> dict[tuple[int, str], str]:
    """(page, lettering as the writer spaces it) -> its English translation, when the reader gave one. A line
    whose text was edited after reading has none: its old translation would be wrong."""
    found: dict[tuple[int, str], str] = {}
    for page in reading.pages:
        for region in page.texts:
            if region.translation and region.translation.strip():
                found.setdefault((page.page, _one_line(region.text)), _one_line(region.translation))
    return found


def _sound_layers(reading: BookReading, script: Script, timing: Timing, shown: _Shown) -> list[_Layer]:
    """A bracketed cue per shot for its panel's sound words, unless the script speaks them (``--read-sfx``, or
    a line the user kept): then the spoken line is their cue."""
    spoken = {(line.page, _one_line(line.text)) for line in script.lines if line.kind == "sound"}
    pages = {page.page: page for page in reading.pages}
    layers: list[_Layer] = []
    for shot in timing.shots:
        page = pages.get(shot.page)
        if page is None:
            continue
        tags = []
        for region in page.texts:
            in_panel = region.panel if 0 <= region.panel < len(page.panels) else -1
            word = _one_line(region.text)
            if region.kind != "sound" or in_panel != shot.panel or not word or (page.page, word) in spoken:
                continue
            tag = shown(page.page, word)
            if tag:
                tags.append(f"[{tag}]")
        if tags:
            start_ms, shot_end_ms = _ms(shot.start_s), _ms(shot.start_s + shot.duration_s)
            end_ms = min(shot_end_ms, start_ms + _ms(SOUND_CUE_MIN_S))
            layers.append(_Layer(start_ms, end_ms, " ".join(tags), len(layers)))
    return layers


def _line_layers(
    script: Script, clips: list[Clip], timing: Timing, names: dict[str, str], shown: _Shown, lang: str
) -> list[_Layer]:
    line_by_id = {line.id: line for line in script.lines}
    clip_by_line = {clip.line_id: clip for clip in clips}
    layers: list[_Layer] = []
    for shot in timing.shots:
        previous: str | None = None
        for line_id, start_s in zip(shot.line_ids, shot.line_starts_s, strict=True):
            line, clip = line_by_id[line_id], clip_by_line[line_id]
            character = line.kind in ("speech", "shout")
            label = character and needs_name(line, previous, shot) and line.speaker in names
            previous = line.speaker if character else previous
            text = shown(line.page, _one_line(line.text))
            if clip.duration_s <= 0 or not text:
                continue
            if label:
                text = _labelled(text, names[line.speaker], lang)
            layers.append(_Layer(_ms(start_s), _ms(start_s + clip.duration_s), text, len(layers)))
    return layers


def _flatten(sounds: list[_Layer], lines: list[_Layer]) -> tuple[Cue, ...]:
    """Non-overlapping cues (a mov_text track cannot hold overlapping ones): where a sound word is up while a
    line is spoken, the cue shows both, the tag above. A sound word is held on to the end of the line it
    overlaps, so no line's cue is cut in two. Each list is in time order and overlaps nothing of its own."""
    held = []
    for sound in sounds:
        end_ms = sound.end_ms
        for line in lines:  # lines end inside their shot, so a tag held to one's end stays inside it too
            if line.start_ms < end_ms < line.end_ms:
                end_ms = line.end_ms
        held.append(_Layer(sound.start_ms, end_ms, sound.text, sound.ident))
    stamps = sorted({t for layer in [*held, *lines] for t in (layer.start_ms, layer.end_ms)})
    cues: list[Cue] = []
    last_key: tuple[int | None, int | None] | None = None
    next_tag = next_line = 0
    for start_ms, end_ms in itertools.pairwise(stamps):
        while next_tag < len(held) and held[next_tag].end_ms <= start_ms:
            next_tag += 1
        while next_line < len(lines) and lines[next_line].end_ms <= start_ms:
            next_line += 1
        tag = held[next_tag] if next_tag < len(held) and held[next_tag].start_ms <= start_ms else None
        said = lines[next_line] if next_line < len(lines) and lines[next_line].start_ms <= start_ms else None
        key = (tag.ident if tag else None, said.ident if said else None)
        if key == (None, None):
            last_key = None
        elif key == last_key:
            cues[-1] = Cue(cues[-1].start_ms, end_ms, cues[-1].text)
        else:
            cues.append(Cue(start_ms, end_ms, "\n".join(part.text for part in (tag, said) if part is not None)))
            last_key = key
    return tuple(cues)


def build_tracks(reading: BookReading, script: Script, clips: list[Clip], timing: Timing) -> list[SubtitleTrack]:
    """The book's subtitle track, then an English one when the book is not in English and its reading carries
    translations (a line or sound word without one is left out of that track)."""
    names = speaker_names(reading)

    def track(lang: Literal["en", "ja"], suffix: str, shown: _Shown) -> SubtitleTrack:
        sounds = _sound_layers(reading, script, timing, shown)
        return SubtitleTrack(lang, _flatten(sounds, _line_layers(script, clips, timing, names, shown, lang)), suffix)

    own = track(script.lang, "", lambda _page, lettering: lettering)
    translated = _translations(reading)
    if script.lang == "en" or not translated:
        return [own]
    english = track("en", ".en", lambda page, lettering: translated.get((page, lettering)))
    return [own, english] if english.cues else [own]


# --------------------------------------------------------------------------------------------- files


def _stamp(ms: int, separator: str) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{millis:03d}"


def to_srt(cues: tuple[Cue, ...]) -> str:
    """SubRip: numbered cues, ``HH:MM:SS,mmm``, a blank line between cues."""
    return "\n".join(
        f"{n}\n{_stamp(c.start_ms, ',')} --> {_stamp(c.end_ms, ',')}\n{c.text}\n" for n, c in enumerate(cues, 1)
    )


def to_vtt(cues: tuple[Cue, ...]) -> str:
    """WebVTT (w3.org/TR/webvtt1): the header, ``HH:MM:SS.mmm`` timings, and cue text with ``&``, ``<`` and ``>``
    escaped (they would start a tag or an entity)."""

    def escaped(text: str) -> str:
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    body = "\n".join(f"{_stamp(c.start_ms, '.')} --> {_stamp(c.end_ms, '.')}\n{escaped(c.text)}\n" for c in cues)
    return "WEBVTT\n\n" + body


WRITERS: dict[str, Callable[[tuple[Cue, ...]], str]] = {"srt": to_srt, "vtt": to_vtt}
"""One writer per subtitle file format."""


def subtitle_path(output: Path, track: SubtitleTrack, fmt: str) -> Path:
    """``OUT.srt``, ``OUT.vtt``, ``OUT.en.srt``, ... beside the video."""
    return output.with_name(f"{output.stem}{track.suffix}.{fmt}")


def write_subtitles(output: Path, tracks: list[SubtitleTrack]) -> list[Path]:
    """Every track in every format beside ``output``, each written atomically; returns the paths, the book's SRT
    first."""
    paths = []
    for track in tracks:
        for fmt in FORMATS:
            path = subtitle_path(output, track, fmt)
            atomic_write_text(path, WRITERS[fmt](track.cues))
            paths.append(path)
    return paths
