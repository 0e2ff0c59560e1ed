"""The read-along export: a folder that plays the narration over the pages, highlighting each balloon as it is
spoken, from disk (file://) or any web server. Made from a finished run's work folder, nothing re-computed."""

from __future__ import annotations

import html
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from comic_narrator.artifacts import Book, BookReading, ClipList, Script, Timing
from comic_narrator.errors import ArtifactError, OutputError
from comic_narrator.video.render import book_audio_file
from comic_narrator.web.guided import guided_document
from comic_narrator.workdir import atomic_write_text, make_folder, read_artifact

PLAYER = Path(__file__).resolve().parents[1] / "assets" / "web" / "read-along"
FONTS = Path(__file__).resolve().parents[1] / "assets" / "fonts"
FONT_FILES = ("NarratorSansJP-Bold.ttf", "OFL.txt", "NOTICE.md")
"""The project's font for Japanese lettering (OFL: the licence and notice travel with it), for machines without
a Japanese system font; player.css asks for it only for kana and kanji."""
AUDIO_NAME = "narration.m4a"
"""The book's AAC, the very track the MP4 carries (mono, 48 kHz)."""


@dataclass(frozen=True)
class ReadAlong:
    folder: Path
    pages: int
    lines: int
    duration_s: float


def _needed(work_dir: Path, name: str) -> Path:
    path = work_dir / name
    if not path.exists():
        raise ArtifactError(
            f"has no {name}: narrate the book into this work folder first (comic-narrator INPUT -o OUT.mp4)",
            path=work_dir,
        )
    return path


def export_read_along(work_dir: Path, out_dir: Path) -> ReadAlong:
    """Write ``out_dir``: ``index.html`` + ``player.js`` + ``player.css``, ``guided.json`` (the guided navigation),
    ``guided.js`` (the same data as a script, which file:// pages can load where they cannot fetch), the page
    images under ``pages/``, the narration as ``narration.m4a`` and, for a Japanese book, the font under
    ``fonts/``."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError("is a file, not a folder", path=out_dir)
    book = read_artifact(_needed(work_dir, "book.json"), Book)
    reading = read_artifact(_needed(work_dir, "reading.json"), BookReading)
    script = read_artifact(_needed(work_dir, "script.json"), Script)
    clips = read_artifact(_needed(work_dir, "clips.json"), ClipList)
    timing = read_artifact(_needed(work_dir, "timing.json"), Timing)
    script_file = work_dir / "script.json"
    if script_file.stat().st_mtime_ns > (work_dir / "timing.json").stat().st_mtime_ns:
        # The timeline is the last run's: an edit made since (by hand or on the review page) is not voiced yet.
        raise ArtifactError("was edited after the last run: run the narration again, then export", path=script_file)
    audio = book_audio_file(work_dir)
    if not audio.exists():
        raise ArtifactError("has no narration audio yet: finish the run first (re-run the same command)", path=audio)
    if len(reading.pages) != len(book.pages):
        raise ArtifactError(f"holds {len(reading.pages)} page(s) but the book has {len(book.pages)}", path=work_dir)
    make_folder(out_dir, "read-along folder")
    images = []
    for page in book.pages:
        name = f"pages/{Path(page.image_file).name}"
        (out_dir / "pages").mkdir(exist_ok=True)
        shutil.copyfile(work_dir / page.image_file, out_dir / name)
        images.append(name)
    shutil.copyfile(audio, out_dir / AUDIO_NAME)
    document = guided_document(reading, script, clips, timing, AUDIO_NAME, images)
    atomic_write_text(out_dir / "guided.json", document.to_json())
    title = Path(book.source).stem or "comic"
    player_data = {
        "title": title,
        "lang": script.lang,
        "duration_s": timing.duration_s,
        "guided": json.loads(document.to_json()),
    }
    # "</" cannot end the script early: JSON allows "\/" for "/".
    script_text = json.dumps(player_data, ensure_ascii=False).replace("</", "<\\/")
    atomic_write_text(out_dir / "guided.js", f"window.READ_ALONG = {script_text};\n")
    index = (PLAYER / "index.html").read_text(encoding="utf-8")
    for key, value in (("title", title), ("lang", script.lang), ("audio", AUDIO_NAME)):
        index = index.replace("{{" + key + "}}", html.escape(value))
    atomic_write_text(out_dir / "index.html", index)
    for name in ("player.js", "player.css"):
        shutil.copyfile(PLAYER / name, out_dir / name)
    if script.lang == "ja":
        (out_dir / "fonts").mkdir(exist_ok=True)
        for name in FONT_FILES:
            shutil.copyfile(FONTS / name, out_dir / "fonts" / name)
    for written in out_dir.rglob("*"):
        if written.is_file():
            written.chmod(0o644)  # any web server's user may read it (the atomic writer makes files private)
    spoken = sum(1 for line in script.lines if any(line.id in shot.line_ids for shot in timing.shots))
    return ReadAlong(folder=out_dir, pages=len(book.pages), lines=spoken, duration_s=timing.duration_s)
