"""CBZ/ZIP archives read safely: no path traversal, a cap on decompressed size, junk entries skipped."""

from __future__ import annotations

import copy
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from comic_narrator.errors import InputError, UnsafeArchiveError
from comic_narrator.ingest.images import is_image_name
from comic_narrator.ingest.selection import natural_key

_READ_BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class ComicInfo:
    """What ComicInfo.xml says about reading direction and language."""

    manga_rtl: bool | None
    language: str | None


@dataclass(frozen=True)
class ArchiveListing:
    image_names: list[str]
    comic_info: ComicInfo


def _is_junk(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return any(part == "__MACOSX" or part.startswith(".") for part in parts)


def _check_entry_name(archive: Path, name: str) -> None:
    normalised = name.replace("\\", "/")
    if normalised.startswith("/") or re.match(r"^[A-Za-z]:", normalised):
        raise UnsafeArchiveError(f"entry {name!r} has an absolute path; refusing the archive", path=archive)
    if ".." in PurePosixPath(normalised).parts:
        raise UnsafeArchiveError(f"entry {name!r} climbs out of the archive ('..'); refusing it", path=archive)


def _open(archive: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise InputError(f"not a valid ZIP/CBZ archive ({exc})", path=archive) from exc
    except OSError as exc:
        raise InputError(f"cannot read the archive ({exc.strerror})", path=archive) from exc


def _size_text(size_bytes: int) -> str:
    return f"{size_bytes / 1e9:.1f} GB" if size_bytes >= 1e9 else f"{size_bytes / 1e6:.0f} MB"


def _check_ratio(archive: Path, name: str, inflated_bytes: int, compressed_bytes: int, max_ratio: float) -> None:
    if compressed_bytes > 0 and inflated_bytes / compressed_bytes > max_ratio and inflated_bytes > 1 << 20:
        raise UnsafeArchiveError(
            f"entry {name!r} inflates {inflated_bytes / compressed_bytes:.0f}x "
            f"(over {max_ratio:.0f}x): looks like a zip bomb",
            path=archive,
        )


def list_archive(archive: Path, *, max_total_bytes: int, max_ratio: float) -> ArchiveListing:
    """Validate every entry and list the page images in natural order."""
    with _open(archive) as zf:
        infos = zf.infolist()
        total_bytes = 0
        for info in infos:
            _check_entry_name(archive, info.filename)
            total_bytes += info.file_size
            _check_ratio(archive, info.filename, info.file_size, info.compress_size, max_ratio)
        if total_bytes > max_total_bytes:
            raise UnsafeArchiveError(
                f"decompresses to {_size_text(total_bytes)}, over the cap of {_size_text(max_total_bytes)}",
                path=archive,
            )
        names = [
            info.filename
            for info in infos
            if not info.is_dir() and not _is_junk(info.filename) and is_image_name(info.filename)
        ]
        names.sort(key=natural_key)
        info_entry = next((i for i in infos if PurePosixPath(i.filename).name.lower() == "comicinfo.xml"), None)
        comic_info = ComicInfo(None, None)
        if info_entry is not None and info_entry.file_size < 1 << 20:
            comic_info = parse_comic_info(zf.read(info_entry).decode("utf-8", "replace"))
    if not names:
        raise InputError("the archive holds no page images (jpg/png/webp)", path=archive)
    return ArchiveListing(names, comic_info)


def iter_archive_images(
    archive: Path, names: list[str], *, max_total_bytes: int, max_ratio: float
) -> Iterator[tuple[str, bytes]]:
    """Yield (name, bytes) for the given entries, counting real decompressed bytes: headers can lie, so the size
    caps and the ratio are applied to what the data inflates to, not to what the headers declare."""
    budget = max_total_bytes
    with _open(archive) as zf:
        for name in names:
            declared = zf.getinfo(name)
            # zipfile stops an entry at its declared size and then reports a CRC error; let it inflate to the end
            # of its data, or one read block past the budget so the cap below fires before that stop.
            info = copy.copy(declared)
            info.file_size = budget + _READ_BLOCK_BYTES + 1
            chunks: list[bytes] = []
            inflated = 0
            try:
                with zf.open(info) as handle:
                    while block := handle.read(_READ_BLOCK_BYTES):
                        inflated += len(block)
                        budget -= len(block)
                        if budget < 0:
                            raise UnsafeArchiveError(
                                f"decompressed data exceeds the cap of {_size_text(max_total_bytes)} "
                                f"(at entry {name!r}): looks like a zip bomb",
                                path=archive,
                            )
                        _check_ratio(archive, name, inflated, declared.compress_size, max_ratio)
                        chunks.append(block)
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise InputError(f"entry {name!r} is corrupt ({exc})", path=archive) from exc
            yield name, b"".join(chunks)


def parse_comic_info(xml_text: str) -> ComicInfo:
    """Read the Manga and LanguageISO fields of ComicInfo.xml (Anansi schema) without a full XML parser."""
    manga = re.search(r"<Manga>\s*([^<]+?)\s*</Manga>", xml_text)
    lang = re.search(r"<LanguageISO>\s*([^<]+?)\s*</LanguageISO>", xml_text)
    manga_rtl: bool | None = None
    if manga:
        manga_rtl = manga.group(1).lower() == "yesandrighttoleft"
    return ComicInfo(manga_rtl, lang.group(1).lower() if lang else None)
