"""The M4B audiobook: the narration of a finished MP4 (its AAC packets copied, nothing encoded again) in an
audio-only MP4 with the book's metadata and chapter marks, for listening without the picture.

Chapters are the video's own when it has them (``--chapters``, ComicInfo.xml bookmarks, a PDF's outline), else
one per page, so a listener can skip page by page. FFmpeg's ``ipod`` muxer writes them both as a chapter text
track (what Apple's players read) and as a Nero ``chpl`` list (what most others read)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av

from comic_narrator.artifacts import Book, Timing
from comic_narrator.errors import ArtifactError, OutputError
from comic_narrator.workdir import atomic_temp_path, read_artifact

CHAPTER_TIME_BASE = Fraction(1, 1000)


@dataclass(frozen=True)
class AudioChapter:
    start_s: float
    end_s: float
    title: str


@dataclass(frozen=True)
class Audiobook:
    path: Path
    duration_s: float
    chapters: list[AudioChapter]


def page_chapters(book: Book, timing: Timing, duration_s: float) -> list[AudioChapter]:
    """One chapter per page of the timeline, titled by the input's page number ("Page 3"), the last running to
    the end of the audio (an end card included)."""
    numbers = {page.index: page.source_page_number for page in book.pages}
    starts: list[tuple[float, str]] = []
    for shot in timing.shots:
        if not starts or starts[-1][1] != f"Page {numbers.get(shot.page, shot.page + 1)}":
            starts.append((shot.start_s, f"Page {numbers.get(shot.page, shot.page + 1)}"))
    ends = [start for start, _ in starts[1:]] + [duration_s]
    return [AudioChapter(start, end, title) for (start, title), end in zip(starts, ends, strict=True) if end > start]


def _video_chapters(container: Any) -> list[AudioChapter]:
    found: list[AudioChapter] = []
    for chapter in container.chapters():
        base = chapter["time_base"]
        title = str(chapter.get("metadata", {}).get("title", "")) or f"Chapter {len(found) + 1}"
        found.append(AudioChapter(float(chapter["start"] * base), float(chapter["end"] * base), title))
    return found


def write_audiobook(video: Path, work_dir: Path, target: Path) -> Audiobook:
    """``target`` (an .m4b) from the finished ``video`` and its work folder; written atomically."""
    if not video.is_file():
        raise ArtifactError("no video here to take the narration from: finish the run first", path=video)
    book = read_artifact(work_dir / "book.json", Book)
    timing = read_artifact(work_dir / "timing.json", Timing)
    temp = atomic_temp_path(target)
    try:
        with av.open(str(video)) as source:
            if not source.streams.audio:
                raise ArtifactError("has no audio track", path=video)
            audio = source.streams.audio[0]
            duration_s = float((audio.duration or 0) * audio.time_base) if audio.time_base else timing.duration_s
            chapters = _video_chapters(source) or page_chapters(book, timing, duration_s)
            with av.open(str(temp), "w", format="ipod", options={"brand": "M4B "}) as sink:
                sink.metadata.update(
                    {k: v for k, v in source.metadata.items() if k in ("title", "artist", "comment", "album")}
                )
                sink.metadata.setdefault("genre", "Audiobook")
                sink.set_chapters(
                    [
                        {
                            "id": number,
                            "start": round(c.start_s * 1000),
                            "end": round(c.end_s * 1000),
                            "time_base": CHAPTER_TIME_BASE,
                            "metadata": {"title": c.title},
                        }
                        for number, c in enumerate(chapters, start=1)
                    ]
                )
                stream = sink.add_stream_from_template(audio)
                for packet in source.demux(audio):
                    if packet.dts is None or packet.size == 0:
                        continue
                    packet.stream = stream
                    sink.mux(packet)
        os.replace(temp, target)
    except OSError as exc:
        raise OutputError(f"cannot write the audiobook: {exc.strerror or exc}", path=target) from exc
    finally:
        temp.unlink(missing_ok=True)
    return Audiobook(path=target, duration_s=duration_s, chapters=chapters)
