"""Turning any supported input (image, folder, PDF, CBZ/ZIP) into a Book of page PNGs in the work folder."""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import cv2
import numpy as np

from comic_narrator.artifacts import Book, PageImage
from comic_narrator.config import IngestConfig
from comic_narrator.errors import InputError
from comic_narrator.ingest.archive import ComicInfo, iter_archive_images, list_archive, parse_comic_info
from comic_narrator.ingest.images import RgbImage, decode_image, is_image_name
from comic_narrator.ingest.pdf import pdf_page_count, render_pdf_pages
from comic_narrator.ingest.selection import natural_key, parse_page_selection
from comic_narrator.ingest.webtoon import content_segments
from comic_narrator.progress import SILENT, Progress, StageProgress
from comic_narrator.workdir import atomic_write_bytes

log = logging.getLogger("comic_narrator")

RAR_SIGNATURE = b"Rar!\x1a\x07"
"""RAR 1.5-4.x add 00, RAR 5 adds 01 00 (https://www.rarlab.com/technote.htm)."""
SEVEN_ZIP_SIGNATURE = b"7z\xbc\xaf\x27\x1c"


@dataclass(frozen=True)
class SourcePage:
    number: int
    """1-based page number in the input."""
    source: str
    image: RgbImage
    unreadable: str | None = None
    """Why the page's image could not be decoded; ``image`` is then a blank page standing in for it."""


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


STAND_IN_SIZE_PX = (1240, 1754)
"""Width and height of the blank page that stands in for an undecodable one before any page was decoded."""


def _decoded_pages(pages: Iterator[tuple[int, str, Callable[[], RgbImage]]], keep_going: bool) -> Iterator[SourcePage]:
    """Each (number, source, decode) decoded. With ``keep_going`` a page that cannot be decoded becomes a blank
    page the size of the page before it, marked unreadable with the reason; else its error ends the book."""
    width, height = STAND_IN_SIZE_PX
    for number, source, decode in pages:
        try:
            image = decode()
        except InputError as exc:
            if not keep_going:
                raise
            log.warning("page %d (%s) cannot be decoded, a blank page stands in: %s", number, source, exc)
            blank = np.full((height, width, 3), 255, np.uint8)
            yield SourcePage(number, source, blank, unreadable=exc.message)
            continue
        height, width = image.shape[:2]
        yield SourcePage(number, source, image)


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
            _decoded_pages(
                (
                    (n, f"{path.name}:{name}", partial(decode_image, data, source=f"{path}:{name}", max_pixels=limit))
                    for n, (name, data) in zip(numbers, entries, strict=True)
                ),
                config.keep_going,
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

        def decode_file(file: Path) -> RgbImage:
            return decode_image(_read_file(file), source=str(file), max_pixels=limit)

        return (
            _decoded_pages(
                ((n, str(files[n - 1]), partial(decode_file, files[n - 1])) for n in numbers), config.keep_going
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
    blank = source_page.unreadable is not None
    segments = [(0, source_page.image.shape[0])] if blank else _segments(source_page.image, config)
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


INGEST_AHEAD = 8
"""Source pages decoded and stored beyond the furthest page asked for: the reader (a few pages ahead of the
voices, or the LLM's slots) never waits, and the ingest does not take the cores from page 1's reading to
store page 200."""


def ingest_book(path: Path, config: IngestConfig, pages_dir: Path, progress: Progress = SILENT) -> Book:
    """Decode the selected pages, slice tall ones, and store each as a PNG under ``pages_dir`` (a few pages at
    once, decoded in order and never more than twice the threads held in memory); the whole Book."""
    return BookFeed.start(path, config, pages_dir, progress).book()


class BookFeed:
    """A book whose pages are stored on a thread of its own (:meth:`start`): its ``header`` (a Book holding the
    source and the ComicInfo hints, no pages) and ``expected`` (the input's pages selected; a tall page sliced
    makes more) at once, each page as soon as it is stored (:meth:`pages`), the whole Book once the last one is
    (:meth:`book`). A run reads page 1 while the rest of a 200-page PDF is still being rendered, and the ingest
    keeps only INGEST_AHEAD source pages beyond the furthest page asked for (so a 2-core machine's reading is not
    slowed by storing pages it will not need for minutes). An input that cannot be opened or listed fails in
    :meth:`start`; a page that cannot be decoded fails whoever waits on the feed next, with the ingest's own
    error."""

    def __init__(self, header: Book, expected: int) -> None:
        self.header = header.model_copy(update={"pages": []})
        self.expected = expected
        self._pages: list[PageImage] = []
        self._finished = False
        self._error: BaseException | None = None
        self._stopped = False
        self._wanted = 0
        """The furthest page anybody has asked for (the ingest stays at most INGEST_AHEAD source pages beyond it)."""
        self._changed = threading.Condition()

    @classmethod
    def whole(cls, book: Book) -> BookFeed:
        """A feed over a book already ingested (a cached one)."""
        feed = cls(book, len(book.pages))
        feed._pages = list(book.pages)
        feed._finished = True
        return feed

    @classmethod
    def of(cls, book: Book | BookFeed) -> BookFeed:
        return book if isinstance(book, BookFeed) else cls.whole(book)

    @classmethod
    def start(cls, path: Path, config: IngestConfig, pages_dir: Path, progress: Progress = SILENT) -> BookFeed:
        kind = input_kind(path)
        pages_iter, count, info = _source_pages(path, kind, config)
        header = Book(source=str(path), pages=[], manga_hint=info.manga_rtl, language_hint=info.language)
        return cls.from_pages(header, pages_iter, count, config, pages_dir, progress)

    @classmethod
    def from_pages(
        cls,
        header: Book,
        pages_iter: Iterator[SourcePage],
        count: int,
        config: IngestConfig,
        pages_dir: Path,
        progress: Progress = SILENT,
    ) -> BookFeed:
        """A feed storing ``pages_iter``'s pages (decoded lazily, in order; ``count`` of them expected)."""
        feed = cls(header, count)
        stage = progress.stage("ingest", count)
        threading.Thread(
            target=feed._ingest, args=(pages_iter, config, pages_dir, stage), name="ingest", daemon=True
        ).start()
        return feed

    def _ingest(
        self, pages_iter: Iterator[SourcePage], config: IngestConfig, pages_dir: Path, stage: StageProgress
    ) -> None:
        threads = max(1, min(os.cpu_count() or 1, INGEST_THREADS))

        def collect(source_page: SourcePage, stored: list[tuple[int, str, RgbImage, str]]) -> None:
            with self._changed:
                for seg_no, name, image, digest in stored:
                    self._pages.append(
                        PageImage(
                            index=len(self._pages),
                            source=source_page.source,
                            source_page_number=source_page.number,
                            segment=seg_no,
                            image_file=f"{pages_dir.name}/{name}",
                            width_px=int(image.shape[1]),
                            height_px=int(image.shape[0]),
                            sha256=digest,
                            unreadable=source_page.unreadable,
                        )
                    )
                self._changed.notify_all()
            stage.advance(detail=source_page.source)

        try:
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ingest") as workers:
                ahead: deque[tuple[SourcePage, Future[list[tuple[int, str, RgbImage, str]]]]] = deque()
                for number, source_page in enumerate(pages_iter):

                    def wanted(at: int = number) -> bool:
                        return self._stopped or at <= self._wanted + INGEST_AHEAD

                    # Store only what the reader will soon want (it shares the cores). Until this page is wanted,
                    # the pages already being stored are handed over as they are done: the reader may be waiting
                    # for one of them, and only it can move the window on.
                    while True:
                        while ahead and ahead[0][1].done():
                            page, stored = ahead.popleft()
                            collect(page, stored.result())
                        with self._changed:
                            if wanted() or not ahead:  # nothing stored to hand over: wait for the reader
                                self._changed.wait_for(wanted)
                                break
                        page, stored = ahead.popleft()
                        collect(page, stored.result())
                    if self._stopped:
                        break
                    ahead.append((source_page, workers.submit(_store_page, source_page, config, pages_dir)))
                    # page 1 is handed over as soon as it is stored; later pages once the pool is full
                    if len(ahead) >= (1 if not self._pages else 2 * threads):
                        page, stored = ahead.popleft()
                        collect(page, stored.result())
                while ahead and not self._stopped:
                    page, stored = ahead.popleft()
                    collect(page, stored.result())
        except BaseException as exc:  # handed to whoever waits on the feed
            with self._changed:
                self._error = exc
                self._changed.notify_all()
            return
        with self._changed:
            if self._stopped:
                self._error = RuntimeError("the ingest was stopped before the book's last page")
            else:
                self._finished = True
            self._changed.notify_all()

    def _wait(self, ready: Callable[[], bool], wanted: int) -> None:
        with self._changed:
            if wanted > self._wanted:
                self._wanted = wanted
                self._changed.notify_all()
            self._changed.wait_for(lambda: self._error is not None or ready())
            if self._error is not None:
                raise self._error

    def page(self, index: int) -> PageImage | None:
        """Page ``index`` (0 for the first) once it is stored; None when the book turns out to have fewer."""
        self._wait(lambda: index < len(self._pages) or self._finished, index)
        return self._pages[index] if index < len(self._pages) else None

    def pages(self) -> Iterator[PageImage]:
        """Every page in book order, each as soon as it is stored."""
        index = 0
        while (page := self.page(index)) is not None:
            yield page
            index += 1

    def is_last(self, index: int) -> bool:
        """Whether page ``index`` (stored) is the book's last, once the ingest can tell."""
        self._wait(lambda: len(self._pages) > index + 1 or self._finished, index + 1)
        return len(self._pages) == index + 1

    def book(self) -> Book:
        """The whole Book, once every page is stored."""
        self._wait(lambda: self._finished, sys.maxsize)
        return self.header.model_copy(update={"pages": list(self._pages)})

    def stop(self) -> None:
        """No more pages wanted (the run failed): the ingest stops after the pages it holds."""
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
