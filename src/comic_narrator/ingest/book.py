"""Turning any supported input (image, folder, PDF, CBZ/ZIP) into a Book of page PNGs in the work folder."""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cv2

from comic_narrator.artifacts import Book, PageImage
from comic_narrator.config import IngestConfig
from comic_narrator.errors import InputError
from comic_narrator.ingest.archive import ComicInfo, iter_archive_images, list_archive, parse_comic_info
from comic_narrator.ingest.images import RgbImage, decode_image, is_image_name
from comic_narrator.ingest.pdf import pdf_page_count, render_pdf_pages
from comic_narrator.ingest.selection import natural_key, parse_page_selection
from comic_narrator.ingest.webtoon import content_segments
from comic_narrator.progress import SILENT, Progress
from comic_narrator.workdir import atomic_write_bytes

RAR_SIGNATURE = b"Rar!\x1a\x07"
"""RAR 1.5-4.x add 00, RAR 5 adds 01 00 (https://www.rarlab.com/technote.htm)."""
SEVEN_ZIP_SIGNATURE = b"7z\xbc\xaf\x27\x1c"


@dataclass(frozen=True)
class SourcePage:
    number: int
    """1-based page number in the input."""
    source: str
    image: RgbImage


def input_kind(path: Path) -> str:
    """'folder', 'pdf', 'archive' or 'image', from the file's first bytes (suffixes can lie)."""
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if path.is_dir():
        return "folder"
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path=path) from exc
    if not head:
        raise InputError("the file is empty", path=path)
    if head.startswith(b"%PDF"):
        return "pdf"
    if head.startswith(b"PK"):
        return "archive"
    if head.startswith((RAR_SIGNATURE, SEVEN_ZIP_SIGNATURE)):
        kind = "RAR" if head.startswith(RAR_SIGNATURE) else "7z"
        raise InputError(f"{kind} comics are not supported: repack as CBZ (zip)", path=path)
    if path.suffix.lower() == ".pdf":
        raise InputError("not a PDF (no %PDF header): the file is corrupt or mislabelled", path=path)
    if path.suffix.lower() in (".cbz", ".zip"):
        raise InputError("not a ZIP/CBZ archive (no PK header): the file is corrupt", path=path)
    if path.suffix.lower() in (".cbr", ".rar", ".cb7", ".7z"):
        raise InputError("RAR/7z comics are not supported: repack as CBZ (zip)", path=path)
    return "image"


def _folder_images(folder: Path) -> list[Path]:
    files = [
        p
        for p in folder.rglob("*")
        if p.is_file()
        and is_image_name(p.name)
        and not any(part.startswith(".") or part == "__MACOSX" for part in p.relative_to(folder).parts)
    ]
    files.sort(key=lambda p: natural_key(p.relative_to(folder).as_posix()))
    if not files:
        raise InputError("the folder holds no page images (jpg/png/webp)", path=folder)
    return files


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path=path) from exc


def _source_pages(path: Path, kind: str, config: IngestConfig) -> tuple[Iterator[SourcePage], int, ComicInfo]:
    """The selected pages of the input as a lazy iterator, their count, and ComicInfo hints."""
    limit = config.max_image_pixels
    if kind == "pdf":
        total = pdf_page_count(path)
        numbers = parse_page_selection(config.pages, total)
        images = render_pdf_pages(path, numbers, dpi=config.pdf_dpi, max_pixels=limit)
        return (
            (SourcePage(n, f"{path.name}#page={n}", im) for n, im in zip(numbers, images, strict=True)),
            len(numbers),
            ComicInfo(None, None),
        )
    if kind == "archive":
        listing = list_archive(path, max_total_bytes=config.max_archive_bytes, max_ratio=config.max_compression_ratio)
        numbers = parse_page_selection(config.pages, len(listing.image_names))
        names = [listing.image_names[n - 1] for n in numbers]
        entries = iter_archive_images(
            path, names, max_total_bytes=config.max_archive_bytes, max_ratio=config.max_compression_ratio
        )
        return (
            (
                SourcePage(n, f"{path.name}:{name}", decode_image(data, source=f"{path}:{name}", max_pixels=limit))
                for n, (name, data) in zip(numbers, entries, strict=True)
            ),
            len(numbers),
            listing.comic_info,
        )
    if kind == "folder":
        files = _folder_images(path)
        numbers = parse_page_selection(config.pages, len(files))
        info_file = path / "ComicInfo.xml"
        info = (
            parse_comic_info(info_file.read_text("utf-8", "replace")) if info_file.is_file() else ComicInfo(None, None)
        )
        return (
            (
                SourcePage(
                    n,
                    str(files[n - 1]),
                    decode_image(_read_file(files[n - 1]), source=str(files[n - 1]), max_pixels=limit),
                )
                for n in numbers
            ),
            len(numbers),
            info,
        )
    numbers = parse_page_selection(config.pages, 1)
    return (
        (SourcePage(1, str(path), decode_image(_read_file(path), source=str(path), max_pixels=limit)) for _ in numbers),
        1,
        ComicInfo(None, None),
    )


def _segments(image: RgbImage, config: IngestConfig) -> list[tuple[int, int]]:
    height, width = image.shape[:2]
    if config.layout == "webtoon" or height / width >= config.webtoon_aspect:
        return content_segments(image)
    return [(0, height)]


def _encode_png(image: RgbImage) -> bytes:
    ok, buf = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise InputError("cannot encode page image as PNG")
    return bytes(buf.tobytes())


def _store_page(source_page: SourcePage, config: IngestConfig, pages_dir: Path) -> list[tuple[int, str, RgbImage, str]]:
    """A source page sliced (tall pages) and each slice stored as a PNG: (segment, file name, image, sha256)."""
    segments = _segments(source_page.image, config)
    stored = []
    for seg_no, (y0, y1) in enumerate(segments, start=1 if len(segments) > 1 else 0):
        image = source_page.image[y0:y1]
        name = f"page-{source_page.number:04d}" + (f"-s{seg_no:02d}" if seg_no else "") + ".png"
        atomic_write_bytes(pages_dir / name, _encode_png(image))
        stored.append((seg_no, name, image, hashlib.sha256(image.tobytes() + repr(image.shape).encode()).hexdigest()))
    return stored


INGEST_THREADS = 8
"""Pages encoded as PNG at once at most (one per core up to this; OpenCV's encoder lets go of the interpreter).
The PNG encode is 80 % of ingesting a folder of JPEGs: Black Jack p. 21-40 took 1.1 s on 2 cores, 1.9 s on one."""


def ingest_book(path: Path, config: IngestConfig, pages_dir: Path, progress: Progress = SILENT) -> Book:
    """Decode the selected pages, slice tall ones, and store each as a PNG under ``pages_dir`` (a few pages at
    once, decoded in order and never more than twice the threads held in memory)."""
    kind = input_kind(path)
    pages_iter, count, info = _source_pages(path, kind, config)
    stage = progress.stage("ingest", count)
    pages: list[PageImage] = []
    threads = max(1, min(os.cpu_count() or 1, INGEST_THREADS))

    def collect(source_page: SourcePage, stored: list[tuple[int, str, RgbImage, str]]) -> None:
        for seg_no, name, image, digest in stored:
            pages.append(
                PageImage(
                    index=len(pages),
                    source=source_page.source,
                    source_page_number=source_page.number,
                    segment=seg_no,
                    image_file=f"{pages_dir.name}/{name}",
                    width_px=int(image.shape[1]),
                    height_px=int(image.shape[0]),
                    sha256=digest,
                )
            )
        stage.advance(detail=source_page.source)

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ingest") as workers:
        ahead: deque[tuple[SourcePage, Future[list[tuple[int, str, RgbImage, str]]]]] = deque()
        for source_page in pages_iter:
            ahead.append((source_page, workers.submit(_store_page, source_page, config, pages_dir)))
            if len(ahead) >= 2 * threads:
                page, stored = ahead.popleft()
                collect(page, stored.result())
        while ahead:
            page, stored = ahead.popleft()
            collect(page, stored.result())
    return Book(source=str(path), pages=pages, manga_hint=info.manga_rtl, language_hint=info.language)
