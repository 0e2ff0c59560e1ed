"""Pages (and lines) per minute with 1, 2 and 4 LLM and TTS endpoints, balanced by load.

    python benchmarks/endpoint_scaling.py [--endpoints 1 2 4] [--latency-s 0.5] [--pages 24] [--lines 32]

Each endpoint is a loopback server (tests/llm/chat_server.py, tests/backends/tts_servers.py: the documented APIs,
NOT vLLM or Fish Speech) that takes ``--latency-s`` per request and works on one request at a time; a second one
waits for the slot, as on a real server with bounded concurrency. The target (issue 12): N endpoints give at
least 0.8 x N the pages per minute of one.

- ``llm client``: the reader's real request for the bundled sample page (downscaled, JPEG-encoded, its local
  reading as text; the answer merged) through ``refine_with_llm`` and one client over the N endpoints, with one
  slot per endpoint (``concurrency=1``) and as many threads as the client has slots.
- ``llm read``: ``read_pages`` with ``--vision llm`` over a book of copies of the sample page (the ``read``
  command's path; its local readings cached beforehand, and the time of that cached local pass, mostly starting
  the OCR engine, left out of the rate), default settings: its request pool is ``LlmConfig.concurrency`` (4)
  threads, whatever the number of endpoints.
- ``tts``: the synthesis stage (``synthesize_with_bank``) over a script of distinct lines, through the Fish Speech
  engine over the N endpoints with one slot each.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the loopback servers of the tests

from tests.backends.tts_servers import ServerState, tts_server  # noqa: E402
from tests.llm.chat_server import chat_server  # noqa: E402

from comic_narrator.artifacts import Book, Cast, CastMember, PageReading, Script, ScriptLine  # noqa: E402
from comic_narrator.backends.openai_chat import OpenAIChatClient  # noqa: E402
from comic_narrator.config import IngestConfig, LlmConfig, VisionConfig, VoiceConfig  # noqa: E402
from comic_narrator.ingest.book import ingest_book  # noqa: E402
from comic_narrator.progress import SILENT  # noqa: E402
from comic_narrator.reading.llm_reader import refine_with_llm  # noqa: E402
from comic_narrator.reading.stage import load_page_rgb, read_pages  # noqa: E402
from comic_narrator.voice.synthesis import synthesize_with_bank  # noqa: E402
from comic_narrator.voice.voicebank import open_voice_bank  # noqa: E402

SAMPLE_PAGE = REPO / "samples" / "peppercarrot-ep17-page2.jpg"


@dataclass(frozen=True)
class Row:
    path: str
    endpoints: int
    items: int
    wall_s: float
    cpu_s: float
    fixed_s: float = 0.0
    """Of ``wall_s``, the part that does not depend on the servers (left out of the rate)."""

    @property
    def per_min(self) -> float:
        return 60.0 * self.items / (self.wall_s - self.fixed_s)


@contextmanager
def llm_servers(count: int, latency_s: float) -> Iterator[str]:
    with ExitStack() as stack:
        urls = [stack.enter_context(chat_server(latency_s=latency_s, slots=1))[0] for _ in range(count)]
        yield ",".join(urls)


@contextmanager
def tts_servers(count: int, latency_s: float) -> Iterator[str]:
    with ExitStack() as stack:
        yield ",".join(stack.enter_context(tts_server(ServerState(latency_s=latency_s, slots=1))) for _ in range(count))


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds: the client and the loopback servers together)."""
    started_s, cpu_before_s = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - started_s, time.process_time() - cpu_before_s


def llm_client(endpoints: int, latency_s: float, pages: int, page: tuple[npt.NDArray[np.uint8], PageReading]) -> Row:
    image, local = page
    with llm_servers(endpoints, latency_s) as urls:
        client = OpenAIChatClient(LlmConfig(base_url=urls, concurrency=1))
        client.resolve_model()

        def read(_: int) -> PageReading:
            return refine_with_llm(image, local, client, LlmConfig.max_image_side_px)

        def all_pages() -> None:
            with ThreadPoolExecutor(client.slots) as pool:
                list(pool.map(read, range(pages)))

        return Row("llm client", endpoints, pages, *timed(all_pages))


def llm_read(endpoints: int, latency_s: float, book: Book, work_dir: Path) -> Row:
    for cached in (work_dir / "readings").glob("*.llm.*.json"):
        cached.unlink()  # each run asks the servers again; the local readings stay cached
    # The local pass over cached readings (mostly starting the OCR engine) is timed alone and left out of the rate.
    fixed_s, _ = timed(lambda: read_pages(book, VisionConfig(), work_dir))
    with llm_servers(endpoints, latency_s) as urls:
        llm = LlmConfig(base_url=urls)
        wall_s, cpu_s = timed(lambda: read_pages(book, VisionConfig(vision="llm"), work_dir, SILENT, llm))
    return Row("llm read", endpoints, len(book.pages), wall_s, cpu_s, fixed_s)


def tts(endpoints: int, latency_s: float, lines: int, work_dir: Path) -> Row:
    script = Script(
        lang="en",
        lines=[
            ScriptLine(id=f"l{i}", page=0, panel=0, speaker="narrator", kind="speech", text=f"This is line {i}.")
            for i in range(lines)
        ],
    )
    cast = Cast(members=[CastMember(character="narrator", voice="fish:hero")])
    clips = work_dir / f"clips-{endpoints}"
    with tts_servers(endpoints, latency_s) as urls:
        config = VoiceConfig(tts_server=urls, tts_server_concurrency=1, quality="fast", jobs=1)
        with open_voice_bank(config) as bank:
            bank.voices()  # the server's voices learned before the clock starts
            wall_s, cpu_s = timed(lambda: synthesize_with_bank(script, cast, config, clips, SILENT, bank))
    return Row("tts", endpoints, lines, wall_s, cpu_s)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoints", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--latency-s", type=float, default=0.5, help="each server's time per request")
    parser.add_argument("--pages", type=int, default=24, help="pages per run through the LLM client")
    parser.add_argument("--book-pages", type=int, default=16, help="pages of the book read by read_pages")
    parser.add_argument("--lines", type=int, default=32, help="script lines per TTS run")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="endpoint-scaling-") as tmp:
        work_dir = Path(tmp) / "work"
        folder = Path(tmp) / "book"
        folder.mkdir()
        for n in range(args.book_pages):
            shutil.copy(SAMPLE_PAGE, folder / f"p{n:03d}.jpg")
        book = ingest_book(folder, IngestConfig(), work_dir / "pages")
        local, _ = read_pages(book, VisionConfig(), work_dir)  # the local readings, cached for the LLM runs
        page = (load_page_rgb(work_dir, book.pages[0]), local.pages[0])

        rows: list[Row] = []
        for endpoints in args.endpoints:
            rows.append(llm_client(endpoints, args.latency_s, args.pages, page))
            rows.append(llm_read(endpoints, args.latency_s, book, work_dir))
            rows.append(tts(endpoints, args.latency_s, args.lines, work_dir))
            for row in rows[-3:]:
                fixed = f" (of which {row.fixed_s:.2f} s local, cached)" if row.fixed_s else ""
                print(
                    f"{row.path:<10} {row.endpoints} endpoint(s): {row.items} in {row.wall_s:.2f} s{fixed}, "
                    f"CPU {row.cpu_s:.2f} s",
                    flush=True,
                )

    print(f"\nlatency {args.latency_s:g} s per request, one slot per server")
    print(f"{'path':<10} {'endpoints':>9} {'per min':>8} {'x one':>6} {'/ N':>5}")
    for path in ("llm client", "llm read", "tts"):
        base = next(row for row in rows if row.path == path and row.endpoints == args.endpoints[0])
        unit = base.per_min / base.endpoints
        for row in (r for r in rows if r.path == path):
            speedup, per_n = row.per_min / base.per_min, row.per_min / unit / row.endpoints
            print(f"{path:<10} {row.endpoints:>9} {row.per_min:>8.1f} {speedup:>6.2f} {per_n:>5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
