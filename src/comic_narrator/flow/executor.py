"""Where page work runs. The local executor (the default): reading on a small thread pool a few pages ahead of
the voicing, segments rendered in worker processes. An executor offers ``read_pages`` (readings in book order)
and ``render`` (a segment to make); another one (a cluster's) plugs in here with the same two."""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Protocol, TypeVar

from comic_narrator.artifacts import Book, PageImage, PageReading
from comic_narrator.config import RunConfig
from comic_narrator.flow.engines import Engines
from comic_narrator.ingest.book import BookFeed
from comic_narrator.progress import StageProgress
from comic_narrator.reading.known_characters import CharacterLedger
from comic_narrator.video.render import SegmentRenderer, worker_count
from comic_narrator.video.segments import Segment

if TYPE_CHECKING:
    from pathlib import Path

READ_AHEAD_PAGES = 3
"""Pages read beyond the one being voiced: enough to keep the reader busy, few enough that a book's readings
are never all held at once (and a killed run has not read far past what it voiced)."""
LLM_READ_AHEAD_ROUNDS = 4
"""With the LLM reading, pages read beyond the one being voiced, in rounds of its slots (4 slots: 16 pages): the
GPU's reader then never waits on the voices of a page with many lines, and the book's last pages go in together
instead of one by one as the voices take pages; a reading held is a few KB, and each is cached as it lands."""

LOCAL_READS_AT_ONCE = 2
"""With the LLM reading, pages read locally at once (OCR, panels, balloons), handed out lowest page first. The
reading threads (one a slot, and one for each local reading at once) each take a page through its local reading
and then its request: before this gate, on the H200 all 16 threads read their pages locally together, sharing
the interpreter and the cores, so page 1's request went out 4.8-5.3 s into the run (ingest 0.8 s) and vLLM sat
idle until then. Two at a time, in page order, page 1's reading is done first and later pages still stay ahead
of the LLM."""

FIRST_PAGE_PERMITS = LOCAL_READS_AT_ONCE
"""Permits page 1's local reading holds: every one, so it has the cores to itself and its request goes first."""

PageRead = tuple[PageReading, str | None, bool]
log = logging.getLogger("comic_narrator")


Handle = TypeVar("Handle")


def pages_in_flight(
    feed: BookFeed, ahead: int, submit: Callable[[PageImage], Handle], cancel: Callable[[Handle], object]
) -> Generator[tuple[PageImage, Handle], None, None]:
    """The book's pages in order, each with its handle from ``submit``, which is called for a page as soon as the
    ingest has stored it and it is at most ``ahead`` pages beyond the one being waited for (every page at once
    when ``ahead`` < 0), so reading never waits for the rest of the book to be ingested. A page the ingest
    cannot store stops the iteration at once, with the ingest's error; handles submitted and never handed out
    (the iteration closed early) go to ``cancel``."""
    changed = threading.Condition()
    submitted: dict[int, tuple[PageImage, Handle]] = {}
    waited_for = [0]
    ended = [False]
    stop = [False]
    failure: list[BaseException] = []

    def feeder() -> None:
        try:
            for page in feed.pages():

                def in_window(at: int = page.index) -> bool:
                    return stop[0] or ahead < 0 or at <= waited_for[0] + ahead

                with changed:
                    changed.wait_for(in_window)
                    if stop[0]:
                        return
                    submitted[page.index] = (page, submit(page))
                    changed.notify_all()
        except BaseException as exc:  # the ingest's error, or submit's
            with changed:
                failure.append(exc)
        finally:
            with changed:
                ended[0] = True
                changed.notify_all()

    threading.Thread(target=feeder, name="read-feed", daemon=True).start()
    index = 0
    try:
        while True:

            def ready(at: int = index) -> bool:
                return bool(failure) or at in submitted or ended[0]

            with changed:
                changed.wait_for(ready)
                if failure:
                    raise failure[0]
                if index not in submitted:
                    return
                item = submitted.pop(index)
            yield item
            index += 1
            with changed:
                waited_for[0] = index
                changed.notify_all()
    finally:
        with changed:
            stop[0] = True
            left = list(submitted.values())
            submitted.clear()
            changed.notify_all()
        for _, handle in left:
            cancel(handle)


class OrderedGate:
    """At most ``permits`` holders at once; a free permit goes to the lowest ``order`` waiting for one."""

    def __init__(self, permits: int) -> None:
        if permits < 1:
            raise ValueError("a gate needs at least one permit")
        self._permits = permits
        self._free = permits
        self._waiting: list[int] = []
        self._changed = threading.Condition()

    @contextmanager
    def held(self, order: int, permits: int = 1) -> Iterator[None]:
        """Inside, ``permits`` of the gate's permits are held (at most all of them)."""
        permits = min(permits, self._permits)
        with self._changed:
            heapq.heappush(self._waiting, order)
            self._changed.wait_for(lambda: self._free >= permits and self._waiting[0] == order)
            heapq.heappop(self._waiting)
            self._free -= permits
            self._changed.notify_all()  # the next in line may take another free permit
        try:
            yield
        finally:
            with self._changed:
                self._free += permits
                self._changed.notify_all()


class Executor(Protocol):
    """What the page stream needs of an executor (the local one here, Ray's in ray_executor.py)."""

    def read_pages(
        self, book: Book | BookFeed, run: RunConfig, engines: Engines
    ) -> Iterator[tuple[PageImage, PageRead]]: ...

    def render(self, segment: Segment, image: Path) -> None: ...


def _timed_read(
    book: Book, page: PageImage, run: RunConfig, engines: Engines, ledger: CharacterLedger, gate: OrderedGate
) -> tuple[PageRead, float]:
    started = time.perf_counter()
    read = _read(book, page, run, engines, ledger, gate)
    return read, time.perf_counter() - started


def _read(
    book: Book, page: PageImage, run: RunConfig, engines: Engines, ledger: CharacterLedger, gate: OrderedGate
) -> PageRead:
    """One page read locally (inside ``gate``, in page order), then by the LLM when it reads; ``ledger`` holds the
    book's characters that each page is shown (reading.known_characters)."""
    from comic_narrator.reading.stage import read_one_page, refine_in_book, vision_for_book

    if engines.ocr is None:
        raise RuntimeError("no OCR engine was built for reading")
    vision = vision_for_book(run.vision, book)
    try:
        with gate.held(page.index, FIRST_PAGE_PERMITS if page.index == 0 else 1):
            started = time.perf_counter()
            reading, failure, cached = read_one_page(book, page, vision, run.work_dir, engines.ocr)
            seconds = time.perf_counter() - started
            log.info("page %d: read locally in %.2f s%s", page.index + 1, seconds, " (cached)" if cached else "")
    except BaseException:
        ledger.abandon()
        raise
    if run.vision.vision == "llm" and engines.llm_client is not None:
        # A page that failed (its image undecodable, or the reader crashed) reaches the LLM as None: it names
        # nobody, and the ledger hears so, or the pages after it would wait for it.
        from comic_narrator.backends.openai_chat import OpenAIChatClient

        assert isinstance(engines.llm_client, OpenAIChatClient)
        local = reading if failure is None else None
        started = time.perf_counter()
        refined, llm_cached = refine_in_book(
            page, local, engines.llm_client, engines.llm_model, run.llm, run.work_dir, ledger
        )
        seconds = time.perf_counter() - started
        log.info("page %d: the LLM's reading in %.2f s%s", page.index + 1, seconds, " (cached)" if llm_cached else "")
        reading = refined or reading
        cached = cached and llm_cached
    return reading, failure, cached


class LocalExecutor:
    """In-process pools: ``read_workers`` reading threads (with the LLM reading, its slots and the local readings
    at once; otherwise one), and ``render_workers`` processes for the video (one per core by default)."""

    def __init__(
        self,
        run: RunConfig,
        render_stage: StageProgress | None,
        read_ahead: int = READ_AHEAD_PAGES,
        after_reading: Callable[[], None] | None = None,
    ):
        self.run = run
        self.read_ahead = read_ahead
        self.after_reading = after_reading
        self.busy_s: dict[str, float] = {}
        """Seconds each kind of page work was busy (summed over workers), to compare with the wall time."""
        self.read_workers = run.llm.slots + LOCAL_READS_AT_ONCE if run.vision.vision == "llm" else 1
        """With the LLM reading, a thread for each of its slots and one for each local reading at once: a thread
        holds its page through the local reading and then the LLM's, so with only the slots' threads the next
        pages' local readings waited for answers, and the LLM for them (a 20-page book on an H100: pages read
        locally about a second apart, each LLM answer 1-5 s after its page's local reading). The client keeps
        the slots' bound on the requests in flight."""
        self.renderer = (
            SegmentRenderer(run.work_dir, run.render, render_stage, worker_count(run.render))
            if render_stage is not None
            else None
        )

    def read_pages(
        self, book: Book | BookFeed, run: RunConfig, engines: Engines
    ) -> Iterator[tuple[PageImage, PageRead]]:
        """Each page's reading in book order, reading up to ``read_ahead`` pages (with the LLM reading,
        LLM_READ_AHEAD_ROUNDS times its concurrency) ahead of the one handed out, each as soon as the ingest has
        stored it; all of them at once before anything is handed out when ``read_ahead`` < 0."""
        feed = BookFeed.of(book)
        ahead = max(self.read_ahead, self.read_workers)
        if run.vision.vision == "llm":
            ahead = max(ahead, LLM_READ_AHEAD_ROUNDS * run.llm.slots)
        ledger = CharacterLedger(run.llm.slots)
        gate = OrderedGate(LOCAL_READS_AT_ONCE)
        with ThreadPoolExecutor(self.read_workers, thread_name_prefix="read") as pool:

            def submit(page: PageImage) -> Future[tuple[PageRead, float]]:
                return pool.submit(_timed_read, feed.header, page, run, engines, ledger, gate)

            reads = pages_in_flight(feed, -1 if self.read_ahead < 0 else ahead, submit, Future.cancel)
            with closing(reads):
                ordered: Iterable[tuple[PageImage, Future[tuple[PageRead, float]]]] = reads
                if self.read_ahead < 0:  # everything read before anything is voiced (a time-shared GPU)
                    ordered = list(reads)
                    for _, future in ordered:
                        future.result()
                    if self.after_reading is not None:
                        self.after_reading()
                for page, future in ordered:
                    read, seconds = future.result()
                    self.busy_s["read"] = self.busy_s.get("read", 0.0) + seconds
                    yield page, read

    def render(self, segment: Segment, image: Path) -> None:
        if self.renderer is not None:
            self.renderer.submit(segment, image)

    def rendered_note(self) -> str:
        if self.renderer is None:
            return "nothing rendered"
        return f"{self.renderer.rendered} segment(s) rendered, {self.renderer.reused} reused"

    def finish(self) -> None:
        if self.renderer is not None:
            self.renderer.finish()
            self.busy_s["render"] = self.renderer.busy_s

    def cancel(self) -> None:
        if self.renderer is not None:
            self.renderer.cancel()
