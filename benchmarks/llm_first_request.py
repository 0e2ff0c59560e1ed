"""When the LLM reader's first request goes out, and how long the whole read takes, with the pages read locally N
at a time in page order (flow/executor.py's LOCAL_READS_AT_ONCE) against every slot reading its page at once.

    python benchmarks/llm_first_request.py [--at-once 2 0] [--slots 8] [--copies 3] [--latency-s 1.0]

The book is the bundled manga sample's four pages, ``--copies`` times over; the LLM is the tests' loopback server
(tests/llm/chat_server.py: the documented chat API, NOT vLLM) answering each request in ``--latency-s`` with
``--slots`` requests at once, as a busy GPU would; the client has as many slots. ``--at-once 0`` lets every slot
read locally at once (the behaviour before the gate). Each setting starts from an empty work folder: the local
readings are not cached, the OCR engine is open before the clock starts.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the loopback server of the tests

from tests.llm.chat_server import chat_server  # noqa: E402
from tests.llm.page_stream import llm_stream_of  # noqa: E402

import comic_narrator.flow.executor as executor  # noqa: E402
from comic_narrator.backends.rapidocr_engine import RapidOcrEngine  # noqa: E402

SAMPLE = REPO / "samples" / "blackjack-ni-yoroshiku-v01-p08-11.cbz"


def _book(folder: Path, copies: int) -> None:
    folder.mkdir(parents=True)
    with zipfile.ZipFile(SAMPLE) as archive:
        names = sorted(n for n in archive.namelist() if n.lower().endswith((".jpg", ".jpeg", ".png")))
        for copy in range(copies):
            for name in names:
                (folder / f"{copy}-{Path(name).name}").write_bytes(archive.read(name))


def _measure(folder: Path, work: Path, at_once: int, slots: int, latency_s: float, ocr: RapidOcrEngine) -> str:
    executor.LOCAL_READS_AT_ONCE = at_once if at_once > 0 else 10_000
    arrivals: list[float] = []
    started = 0.0

    def arrived() -> None:
        arrivals.append(time.perf_counter() - started)

    with chat_server("ok", latency_s=latency_s, slots=slots, hold=arrived) as (url, _state):
        _book_read, stream = llm_stream_of(folder, work, url, slots, ocr)
        started = time.perf_counter()  # the stream starts reading when first asked for a page
        for _page, _read in stream:
            pass
        whole = time.perf_counter() - started
    label = "every slot" if at_once <= 0 else f"{at_once} at a time"
    firsts = ", ".join(f"{t:.1f}" for t in sorted(arrivals)[:4])
    return f"{label:>12}: first request {min(arrivals):5.2f} s (first four at {firsts} s), whole read {whole:5.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-once", type=int, nargs="+", default=[2, 0], help="local reads at once; 0: no bound")
    parser.add_argument("--slots", type=int, default=8, help="the LLM's slots and the client's")
    parser.add_argument("--copies", type=int, default=3, help="copies of the four sample pages")
    parser.add_argument("--latency-s", type=float, default=1.0, help="seconds the server takes a request")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="llm-first-"))
    try:
        _book(root / "book", args.copies)
        with RapidOcrEngine() as ocr:
            for at_once in args.at_once:
                work = root / f"work-{at_once}"
                shutil.rmtree(work, ignore_errors=True)
                print(_measure(root / "book", work, at_once, args.slots, args.latency_s, ocr), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
