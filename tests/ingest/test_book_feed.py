"""The book fed page by page: page 1 is handed over (and read) while later pages are still being decoded, a page
that cannot be decoded fails whoever waits with the ingest's own error, and the feed's Book is ingest_book's.
Real pages: the bundled Black Jack excerpt (a CBZ) and the Pepper&Carrot page."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from comic_narrator.artifacts import Book, PageImage
from comic_narrator.config import IngestConfig
from comic_narrator.errors import InputError
from comic_narrator.flow.executor import pages_in_flight
from comic_narrator.ingest.book import INGEST_AHEAD, BookFeed, SourcePage, ingest_book
from comic_narrator.ingest.images import decode_image
from tests.conftest import REPO, SAMPLE_PAGE

MANGA_CBZ = REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"
WAIT_S = 60.0
"""Generous: nothing here is timed, the limit only turns a hang into a failure."""


class HeldSource:
    """Source pages handed over one at a time: page N+1 is decoded only once the test releases it."""

    def __init__(self, count: int, broken_at: int | None = None) -> None:
        self.image = decode_image(
            SAMPLE_PAGE.read_bytes(), source=str(SAMPLE_PAGE), max_pixels=IngestConfig().max_image_pixels
        )
        self.count = count
        self.broken_at = broken_at
        self.released = [threading.Event() for _ in range(count)]
        self.released[0].set()
        self.decoded: list[int] = []

    def __iter__(self) -> Iterator[SourcePage]:
        for n in range(1, self.count + 1):
            assert self.released[n - 1].wait(WAIT_S), f"page {n} was never released"
            if n == self.broken_at:
                raise InputError("cannot decode the image (truncated JPEG)", path=Path(f"book/p{n}.jpg"))
            self.decoded.append(n)
            yield SourcePage(n, f"book/p{n}.jpg", self.image)

    def release_all(self) -> None:
        for event in self.released:
            event.set()


def _feed(source: HeldSource, pages_dir: Path) -> BookFeed:
    header = Book(source="book", pages=[])
    return BookFeed.from_pages(header, iter(source), source.count, IngestConfig(), pages_dir)


def test_page_one_is_handed_over_before_the_rest_is_decoded(tmp_path: Path) -> None:
    source = HeldSource(3)
    feed = _feed(source, tmp_path / "pages")
    first = feed.page(0)  # would wait forever if the feed waited for the whole book
    assert first is not None and first.index == 0 and source.decoded == [1]
    assert (tmp_path / first.image_file).is_file()
    source.release_all()
    book = feed.book()
    assert [p.index for p in book.pages] == [0, 1, 2]
    assert [p.source_page_number for p in book.pages] == [1, 2, 3]
    assert feed.is_last(2) and not feed.is_last(1)
    assert feed.page(3) is None


def test_a_page_that_cannot_be_decoded_fails_the_waiter_with_its_own_error(tmp_path: Path) -> None:
    source = HeldSource(3, broken_at=2)
    feed = _feed(source, tmp_path / "pages")
    assert feed.page(0) is not None
    source.release_all()
    with pytest.raises(InputError, match=r"p2\.jpg.*truncated JPEG"):
        feed.page(1)
    with pytest.raises(InputError, match="truncated JPEG"):
        feed.book()


def test_reads_start_before_the_book_is_ingested_and_stay_in_order(tmp_path: Path) -> None:
    source = HeldSource(4)
    feed = _feed(source, tmp_path / "pages")
    submitted: list[int] = []
    reads = pages_in_flight(feed, 1, lambda page: submitted.append(page.index) or page.index, lambda _: None)
    page, handle = next(reads)  # page 2 is not decoded yet: page 1 is handed over anyway
    assert (page.index, handle) == (0, 0) and source.decoded == [1]
    source.release_all()
    rest = [(page.index, handle) for page, handle in reads]
    assert rest == [(1, 1), (2, 2), (3, 3)]
    assert submitted == [0, 1, 2, 3]


def test_reads_keep_to_their_window(tmp_path: Path) -> None:
    source = HeldSource(5)
    source.release_all()
    feed = _feed(source, tmp_path / "pages")
    feed.book()
    submitted: list[int] = []
    cancelled: list[int] = []

    def submit(page: PageImage) -> int:
        submitted.append(page.index)
        return page.index

    reads = pages_in_flight(feed, 2, submit, cancelled.append)
    assert next(reads)[0].index == 0
    deadline = threading.Event()
    for _ in range(100):  # the feeder submits on its own thread: wait until it has filled the window
        if len(submitted) >= 3:
            break
        deadline.wait(0.05)
    assert submitted == [0, 1, 2]  # the page waited for and two beyond it, never more
    reads.close()
    assert sorted(cancelled) == [1, 2]  # submitted, never handed out
    deadline.wait(0.3)
    assert submitted == [0, 1, 2]  # and nothing more is submitted once the reads are closed


def test_an_ingest_error_stops_the_reads_with_that_error(tmp_path: Path) -> None:
    source = HeldSource(3, broken_at=3)
    source.release_all()
    feed = _feed(source, tmp_path / "pages")
    reads = pages_in_flight(feed, 5, lambda page: page.index, lambda _: None)
    with pytest.raises(InputError, match=r"p3\.jpg"):
        list(reads)


def test_the_fed_book_is_the_ingested_book(tmp_path: Path) -> None:
    whole = ingest_book(MANGA_CBZ, IngestConfig(), tmp_path / "a" / "pages")
    feed = BookFeed.start(MANGA_CBZ, IngestConfig(), tmp_path / "b" / "pages")
    fed = list(feed.pages())
    assert len(fed) == len(whole.pages) == 4
    assert [(p.index, p.sha256, p.image_file, p.source) for p in fed] == [
        (p.index, p.sha256, p.image_file, p.source) for p in whole.pages
    ]
    assert feed.book() == whole
    assert feed.header.pages == [] and feed.header.source == whole.source


def test_the_ingest_keeps_only_a_few_pages_beyond_the_furthest_one_asked_for(tmp_path: Path) -> None:
    source = HeldSource(40)
    source.release_all()
    feed = _feed(source, tmp_path / "pages")
    assert feed.page(5) is not None
    threading.Event().wait(0.5)  # room for the ingest to run ahead, if it would
    assert len(source.decoded) <= 6 + INGEST_AHEAD + 1  # the pages asked for, the window, one decoded waiting
    assert len(feed.book().pages) == 40  # the whole book asked for: all of it


def test_a_stopped_feed_stores_nothing_more_and_says_so(tmp_path: Path) -> None:
    source = HeldSource(40)
    source.release_all()
    feed = _feed(source, tmp_path / "pages")
    assert feed.page(0) is not None
    feed.stop()  # the run failed: the ingest ends after what it holds
    with pytest.raises(RuntimeError, match="stopped before the book's last page"):
        feed.book()
    assert len(source.decoded) <= 1 + INGEST_AHEAD + 1
    assert len(list((tmp_path / "pages").glob("*.png"))) < 40


def test_whether_a_page_is_the_last_waits_until_the_ingest_can_tell(tmp_path: Path) -> None:
    source = HeldSource(2)
    feed = _feed(source, tmp_path / "pages")
    assert feed.page(0) is not None
    answer: list[bool] = []
    asking = threading.Thread(target=lambda: answer.append(feed.is_last(0)))
    asking.start()
    asking.join(0.3)  # page 2 is held back: page 1 may or may not be the last yet
    source.release_all()
    asking.join(WAIT_S)
    assert answer == [False]
    assert feed.is_last(1)


def test_a_machine_of_many_cores_hands_over_every_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With 16 cores the ingest stores 8 pages at once; the pages it is storing are handed over even while the
    window (INGEST_AHEAD beyond the furthest page asked for) holds it back from the next, so a reader asking for
    page after page is never left waiting on pages the ingest keeps to itself (a 20-page book once hung after page
    1 on a 16-core machine)."""
    import comic_narrator.ingest.book as book

    monkeypatch.setattr(book.os, "cpu_count", lambda: 16)
    source = HeldSource(20)
    source.release_all()
    feed = _feed(source, tmp_path / "pages")
    got: list[int] = []
    reading = threading.Thread(target=lambda: got.extend(page.index for page in feed.pages()), daemon=True)
    reading.start()
    reading.join(WAIT_S)
    assert got == list(range(20)), f"the reader got pages {got} and waits for the rest"
