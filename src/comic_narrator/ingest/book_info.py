"""What an input says about the book besides its pages: title, the people who made it, its web address and
licence notes, and where its chapters start; from ComicInfo.xml (in a CBZ or beside a folder's pages) or a PDF's
document information and outline (bookmarks).

ComicInfo.xml is the Anansi Project's schema (github.com/anansi-project/comicinfo): ``Title``, ``Series``,
``Number``, ``Writer``, ``Penciller``, ``Translator``, ``Web``, ``Notes`` ..., and under ``Pages`` a ``Page`` per
image whose ``Bookmark`` attribute names a chapter starting there (``Image`` counts from 0).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pypdfium2 as pdfium

from comic_narrator.errors import InputError

CREDIT_FIELDS = (
    ("Writer", "Writer"),
    ("Penciller", "Art"),
    ("Inker", "Inks"),
    ("Colorist", "Colours"),
    ("Letterer", "Lettering"),
    ("Translator", "Translation"),
    ("Editor", "Editor"),
    ("Publisher", "Publisher"),
    ("Web", "Web"),
)
"""ComicInfo.xml fields shown on the end card, in order, with the label each is shown under."""
MAX_INFO_BYTES = 1 << 20
"""A ComicInfo.xml larger than this is not read (it is a few hundred bytes in practice)."""


@dataclass(frozen=True)
class Chapter:
    """A chapter of the input: ``page`` is its first page, 1-based in the input (before ``--pages``)."""

    page: int
    title: str


@dataclass(frozen=True)
class BookInfo:
    title: str | None = None
    artist: str | None = None
    """Who made it, for the MP4's artist tag: the writer and the penciller (once when the same person)."""
    credits: tuple[tuple[str, str], ...] = ()
    """(label, value) lines for the end card, e.g. ("Writer", "Shuho Sato")."""
    notes: str | None = None
    """Licence or other notes (ComicInfo ``Notes``)."""
    chapters: tuple[Chapter, ...] = ()


def _clean(text: str | None) -> str | None:
    """Blanks collapsed, control characters (a PDF title's trailing NUL) dropped; None when nothing is left."""
    value = " ".join("".join(c for c in (text or "") if c.isprintable() or c.isspace()).split())
    return value or None


def _merged(credits: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """One line per person: ("Writer", X) and ("Art", X) become ("Writer & Art", X)."""
    labels: dict[str, list[str]] = {}
    for label, value in credits:
        labels.setdefault(value, []).append(label)
    return tuple((" & ".join(names), value) for value, names in labels.items())


def parse_comic_info_xml(xml_text: str, source: Path) -> BookInfo:
    """Title, credits, notes and chapter bookmarks of a ComicInfo.xml (any namespace); a file that is not XML is
    one clear error naming it."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise InputError(f"ComicInfo.xml is not well-formed XML ({exc})", path=source) from exc

    def field(name: str) -> str | None:
        node = next((child for child in root if child.tag.rpartition("}")[2] == name), None)
        return _clean(node.text) if node is not None else None

    title = field("Title")
    series, number = field("Series"), field("Number")
    if series and title:
        title = f"{series}: {title}"
    elif series:
        title = f"{series} {number}" if number else series
    credits = _merged([(label, value) for name, label in CREDIT_FIELDS if (value := field(name))])
    makers = [field("Writer"), field("Penciller")]
    artist = "; ".join(dict.fromkeys(name for name in makers if name)) or None
    chapters = []
    for node in root.iter():
        if node.tag.rpartition("}")[2] != "Page" or not _clean(node.get("Bookmark")):
            continue
        try:
            image = int(node.get("Image", ""))
        except ValueError:
            continue
        chapters.append(Chapter(image + 1, _clean(node.get("Bookmark")) or ""))
    chapters.sort(key=lambda chapter: chapter.page)
    return BookInfo(title, artist, credits, field("Notes"), tuple(chapters))


def _archive_comic_info(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            entry = next(
                (i for i in archive.infolist() if PurePosixPath(i.filename).name.lower() == "comicinfo.xml"), None
            )
            if entry is None or entry.file_size > MAX_INFO_BYTES:
                return None
            return archive.read(entry).decode("utf-8", "replace")
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"cannot read the archive ({exc})", path=path) from exc


def _pdf_info(path: Path) -> BookInfo:
    """The document information's Title and Author, and the outline's top-level entries as chapters."""
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise InputError(f"not a readable PDF ({exc})", path=path) from exc
    try:
        meta = document.get_metadata_dict(skip_empty=True)
        chapters: list[Chapter] = []
        for bookmark in document.get_toc():
            destination = bookmark.get_dest() if bookmark.level == 0 else None
            index = destination.get_index() if destination is not None else None
            if index is not None:
                title = _clean(bookmark.get_title()) or f"Chapter {len(chapters) + 1}"
                chapters.append(Chapter(index + 1, title))
    finally:
        document.close()
    author = _clean(meta.get("Author"))
    credits = (("Author", author),) if author else ()
    chapters.sort(key=lambda chapter: chapter.page)
    return BookInfo(_clean(meta.get("Title")), author, credits, None, tuple(chapters))


def read_book_info(path: Path) -> BookInfo:
    """What ``path`` (a CBZ/ZIP, a folder, a PDF or an image) says about its book; nothing for a lone image."""
    if path.is_dir():
        info_file = path / "ComicInfo.xml"
        if info_file.is_file() and info_file.stat().st_size <= MAX_INFO_BYTES:
            return parse_comic_info_xml(info_file.read_text("utf-8", "replace"), info_file)
        return BookInfo()
    with path.open("rb") as handle:
        head = handle.read(4)
    if head.startswith(b"%PDF"):
        return _pdf_info(path)
    if head.startswith(b"PK"):
        text = _archive_comic_info(path)
        return parse_comic_info_xml(text, path) if text is not None else BookInfo()
    return BookInfo()
