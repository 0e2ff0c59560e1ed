"""Where page work runs. The local executor (the default): reading on a small thread pool a few pages ahead of
the voicing, segments rendered in worker processes. An executor offers ``read_pages`` (readings in book order)
and ``render`` (a segment to make); another one (a cluster's) plugs in here with the same two."""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from comic_narrator.artifacts import Book, PageImage, PageReading
from comic_narrator.config import RunConfig
from comic_narrator.flow.engines import Engines
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
LLM's slots are reading threads, and each page's local reading comes before its request: on the H200 all 16
threads read their pages locally together, sharing the interpreter and the cores, so page 1's request went out
4.8-5.3 s into the run (ingest 0.8 s) and vLLM sat idle until then. Two at a time, in page order, page 1's
reading is done first and later pages still stay ahead of the LLM."""

PageRead = tuple[PageReading, str | None, bool]


class OrderedGate:
    """At most ``permits`` holders at once; a free permit goes to the lowest ``order`` waiting for one."""

    def __init__(self, permits: int) -> None:
        if permits < 1:
            raise ValueError("a gate needs at least one permit")
        self._free = permits
        self._waiting: list[int] = []
        self._changed = threading.Condition()

    @contextmanager
    def held(self, order: int) -> Iterator[None]:
        with self._changed:
            heapq.heappush(self._waiting, order)
            self._changed.wait_for(lambda: self._free > 0 and self._waiting[0] == order)
            heapq.heappop(self._waiting)
            self._free -= 1
            self._changed.notify_all()  # the next in line may take another free permit
        try:
            yield
        finally:
            with self._changed:
                self._free += 1
                self._changed.notify_all()


class Executor(Protocol):
    """What the page stream needs of an executor (the local one here, Ray's in ray_executor.py)."""

    def read_pages(self, book: Book, run: RunConfig, engines: Engines) -> Iterator[tuple[PageImage, PageRead]]: ...

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
        with gate.held(page.index):
            reading, failure, cached = read_one_page(book, page, vision, run.work_dir, engines.ocr)
    except BaseException:
        ledger.abandon()
        raise
    if run.vision.vision == "llm" and engines.llm_client is not None:
        from comic_narrator.backends.openai_chat import OpenAIChatClient

        assert isinstance(engines.llm_client, OpenAIChatClient)
        local = reading if failure is None else None
        refined, llm_cached = refine_in_book(
            page, local, engines.llm_client, engines.llm_model, run.llm, run.work_dir, ledger
        )
        reading = refined or reading
        cached = cached and llm_cached
    return reading, failure, cached


class LocalExecutor:
    """In-process pools: ``read_workers`` reading threads (the LLM's concurrency when it reads), and
    ``render_workers`` processes for the video (one per core by default)."""

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
        self.read_workers = max(1, run.llm.slots) if run.vision.vision == "llm" else 1
        self.renderer = (
            SegmentRenderer(run.work_dir, run.render, render_stage, worker_count(run.render))
            if render_stage is not None
            else None
        )

    def read_pages(self, book: Book, run: RunConfig, engines: Engines) -> Iterator[tuple[PageImage, PageRead]]:
        """Each page's reading in book order, reading up to ``read_ahead`` pages (with the LLM reading,
        LLM_READ_AHEAD_ROUNDS times its concurrency) ahead of the one handed out; all of them at once before
        anything is handed out when ``read_ahead`` < 0."""
        ahead = len(book.pages) if self.read_ahead < 0 else max(self.read_ahead, self.read_workers)
        if run.vision.vision == "llm":
            ahead = max(ahead, LLM_READ_AHEAD_ROUNDS * self.read_workers)
        ledger = CharacterLedger([page.index for page in book.pages], run.llm.slots)
        gate = OrderedGate(LOCAL_READS_AT_ONCE)
        with ThreadPoolExecutor(self.read_workers, thread_name_prefix="read") as pool:
            futures: dict[int, Future[tuple[PageRead, float]]] = {}
            try:
                if self.read_ahead < 0:  # everything read before anything is voiced (a time-shared GPU)
                    for index, page in enumerate(book.pages):
                        futures[index] = pool.submit(_timed_read, book, page, run, engines, ledger, gate)
                    for future in futures.values():
                        future.result()
                    if self.after_reading is not None:
                        self.after_reading()
                for index, page in enumerate(book.pages):
                    for upcoming in range(index, min(len(book.pages), index + 1 + ahead)):
                        if upcoming not in futures:
                            futures[upcoming] = pool.submit(
                                _timed_read, book, book.pages[upcoming], run, engines, ledger, gate
                            )
                    read, seconds = futures.pop(index).result()
                    self.busy_s["read"] = self.busy_s.get("read", 0.0) + seconds
                    yield page, read
            finally:
                for future in futures.values():
                    future.cancel()

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
