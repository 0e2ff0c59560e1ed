"""Pages read locally in page order, a few at a time, while the LLM reads: the gate on real threads, and the
page stream's executor with the real local reader (RapidOCR), the HTTP client and the loopback chat server
(tests/llm/chat_server.py), whose first request must not wait for every slot's local reading."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import pytest

from comic_narrator.backends.protocols import OcrLine
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine
from comic_narrator.flow.executor import FIRST_PAGE_PERMITS, LOCAL_READS_AT_ONCE, OrderedGate
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import chat_server
from tests.llm.page_stream import llm_page_stream, llm_stream_of


def test_the_gate_lets_the_lowest_waiting_order_in_and_no_more_than_its_permits() -> None:
    gate = OrderedGate(2)
    entered: list[int] = []
    inside = 0
    most_inside = 0
    lock = threading.Lock()
    release = threading.Event()

    def holder(order: int) -> None:
        nonlocal inside, most_inside
        with gate.held(order):
            with lock:
                entered.append(order)
                inside += 1
                most_inside = max(most_inside, inside)
            release.wait(10)
            time.sleep(0.01)
            with lock:
                inside -= 1

    blockers = [threading.Thread(target=holder, args=(order,)) for order in (100, 101)]
    for thread in blockers:  # both permits taken before the others queue up
        thread.start()
    while len(entered) < 2:
        time.sleep(0.01)
    waiting = [threading.Thread(target=holder, args=(order,)) for order in (7, 3, 9, 1, 5)]
    for thread in waiting:  # queued highest first, mostly
        thread.start()
        time.sleep(0.02)
    release.set()
    for thread in blockers + waiting:
        thread.join(10)
    assert entered[:2] == [100, 101]
    assert entered[2:] == [1, 3, 5, 7, 9]
    assert most_inside == 2


def test_a_holder_of_every_permit_is_alone_inside() -> None:
    """Page 1's local reading holds every permit (FIRST_PAGE_PERMITS), so the pages after it wait for it; asking
    for more permits than the gate has takes them all rather than waiting forever."""
    assert FIRST_PAGE_PERMITS == LOCAL_READS_AT_ONCE
    gate = OrderedGate(2)
    events: list[str] = []
    inside = threading.Event()
    leave = threading.Event()

    def first() -> None:
        with gate.held(0, permits=5):
            events.append("first in")
            inside.set()
            leave.wait(10)
            events.append("first out")

    def later(order: int) -> None:
        with gate.held(order):
            events.append(f"{order} in")

    holder = threading.Thread(target=first)
    holder.start()
    assert inside.wait(10)
    others = [threading.Thread(target=later, args=(order,)) for order in (1, 2)]
    for thread in others:
        thread.start()
    time.sleep(0.2)
    assert events == ["first in"], "nobody else got in beside the holder of every permit"
    leave.set()
    for thread in [holder, *others]:
        thread.join(10)
    assert events[:2] == ["first in", "first out"] and sorted(events[2:]) == ["1 in", "2 in"]


def test_a_gate_without_permits_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one permit"):
        OrderedGate(0)


class _Watched:
    """The real OCR engine, with who called it and how many calls ran at once."""

    def __init__(self, engine: RapidOcrEngine) -> None:
        self.engine = engine
        self.name = engine.name
        self.threads: list[int] = []
        self.inside = 0
        self.most_inside = 0
        self.calls: list[tuple[tuple[int, ...], float, float]] = []
        """Each call's image shape, start and end."""
        self.lock = threading.Lock()

    def recognize(self, image_rgb: npt.NDArray[np.uint8], lang: Literal["en", "ja"]) -> list[OcrLine]:
        with self.lock:
            if threading.get_ident() not in self.threads:
                self.threads.append(threading.get_ident())
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        started = time.perf_counter()
        try:
            return self.engine.recognize(image_rgb, lang)
        finally:
            with self.lock:
                self.inside -= 1
                self.calls.append((image_rgb.shape, started, time.perf_counter()))


def test_with_eight_slots_the_first_page_is_asked_about_before_every_slot_has_read_locally(tmp_path: Path) -> None:
    slots = 8
    assert slots > LOCAL_READS_AT_ONCE + 2  # otherwise all slots may read before page 1 is asked about anyway
    with RapidOcrEngine() as real:
        ocr = _Watched(real)
        readers_at_first_request: list[int] = []

        def hold() -> None:  # each chat request, as it arrives: how many threads have read locally so far
            with ocr.lock:
                readers_at_first_request.append(len(ocr.threads))

        with chat_server("ok", hold=hold) as (url, state):
            book, stream = llm_page_stream(tmp_path, slots + 2, url, slots, ocr)
            handed = [page.index for page, _read in stream]
    assert handed == [page.index for page in book.pages]
    assert len(state.requests) == len(book.pages)
    # Page 1 is asked about once its own local reading is done: page 2's reading, begun with it, may be done too
    # by the time the request (the page encoded) reaches the server, so pages 3 and 4 may have begun; page 5
    # waits for page 3's whole reading. Without the gate every slot's thread has read before page 1 is asked.
    assert readers_at_first_request[0] <= LOCAL_READS_AT_ONCE + 2
    assert ocr.most_inside <= LOCAL_READS_AT_ONCE


def test_pages_are_read_locally_while_the_llm_holds_every_slot(tmp_path: Path) -> None:
    """A reading thread holds its page through the local reading and the LLM's answer; the pool has a thread for
    each local reading at once beside the slots' threads, so while the LLM holds page 1 (and the pages after it
    wait for its names), the next pages are read locally. With only the slots' threads, pages 3 and 4 waited for
    page 1's answer."""
    slots = 2
    pages = slots + LOCAL_READS_AT_ONCE
    with RapidOcrEngine() as real:
        ocr = _Watched(real)
        read_while_held: list[int] = []

        def hold() -> None:  # page 1's request, the first to arrive, is answered once every page is read locally
            if read_while_held:
                return
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                with ocr.lock:
                    if len(ocr.calls) >= pages:
                        break
                time.sleep(0.05)
            with ocr.lock:
                read_while_held.append(len(ocr.calls))

        with chat_server("ok", hold=hold) as (url, state):
            book, stream = llm_page_stream(tmp_path, pages, url, slots, ocr)
            handed = [page.index for page, _read in stream]
    assert handed == [page.index for page in book.pages]
    assert len(state.requests) == pages
    assert read_while_held == [pages]


def test_page_one_is_read_locally_with_the_cores_to_itself(tmp_path: Path) -> None:
    """Page 1's local reading holds every permit of the gate (FIRST_PAGE_PERMITS), so no other page's OCR runs
    beside it and its request goes out first. Page 1 is the sample page made larger, so its OCR call is told from
    the others' by the image's shape."""
    from PIL import Image

    folder = tmp_path / "book"
    folder.mkdir()
    with Image.open(SAMPLE_PAGE) as page:
        page.resize((page.width * 6 // 5, page.height * 6 // 5)).save(folder / "p00.jpg")
    for n in range(1, 5):
        (folder / f"p{n:02d}.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    with RapidOcrEngine() as real:
        ocr = _Watched(real)
        with chat_server("ok") as (url, _state):
            book, stream = llm_stream_of(folder, tmp_path / "work", url, 4, ocr)
            assert [page.index for page, _read in stream] == [page.index for page in book.pages]
    shapes = [shape for shape, _start, _end in ocr.calls]
    firsts = [call for call in ocr.calls if shapes.count(call[0]) == 1]
    assert len(firsts) == 1 and len(ocr.calls) == 5, shapes
    _shape, start, end = firsts[0]
    others = [call for call in ocr.calls if call is not firsts[0]]
    assert all(other_end <= start or other_start >= end for _s, other_start, other_end in others)
    # the four pages after it are read two at a time: pages 2 and 3 enter the gate together, as do 4 and 5
    assert ocr.most_inside == LOCAL_READS_AT_ONCE
