"""Page work on a Ray cluster (``--executor ray [--ray-address ADDR]``; the ``ray`` extra).

The same two offers as the local executor: readings in book order, read by reader actors a few pages ahead (each
actor builds its own OCR engine once), and segments rendered by Ray tasks, one CPU each. Artifacts live in the run's
work folder, which every worker must see at the same path (one machine, or a shared file system). Voicing stays
with the driver, which balances its lines over the TTS endpoints it was given.

Without an address a local Ray instance is started for the run and stopped after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from comic_narrator.artifacts import Book, PageImage
from comic_narrator.config import RenderConfig, RunConfig
from comic_narrator.errors import EngineError
from comic_narrator.flow.engines import Engines
from comic_narrator.flow.executor import READ_AHEAD_PAGES, PageRead, pages_in_flight
from comic_narrator.ingest.book import BookFeed
from comic_narrator.progress import StageProgress
from comic_narrator.video.segments import Segment


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise EngineError(
            "--executor ray needs the ray package: pip install 'comic-narrator[ray]' (or pip install ray)"
        ) from exc
    return ray


class _Reader:
    """A reader actor: one OCR engine for the pages it is given."""

    def __init__(self) -> None:
        from comic_narrator.backends.rapidocr_engine import RapidOcrEngine

        self.ocr = RapidOcrEngine()
        self.ocr.__enter__()

    def read(self, book: Book, page: PageImage, run: RunConfig) -> PageRead:
        from comic_narrator.reading.stage import read_one_page, vision_for_book

        return read_one_page(book, page, vision_for_book(run.vision, book), run.work_dir, self.ocr)


def _render(segment: Segment, image: str, output: str, config: RenderConfig) -> int:
    from comic_narrator.video.frames import PagePyramid
    from comic_narrator.video.segments import render_segment

    return render_segment(segment, PagePyramid.load(Path(image)), Path(output), config)


class RayExecutor:
    """Reading actors and render tasks on Ray; see the module's note."""

    def __init__(
        self,
        run: RunConfig,
        render_stage: StageProgress | None,
        address: str | None = None,
        read_ahead: int = READ_AHEAD_PAGES,
        readers: int = 2,
        after_reading: Callable[[], None] | None = None,
    ) -> None:
        if run.vision.vision == "llm":
            raise EngineError("--executor ray reads with the local reader; use the local executor with --vision llm")
        self.ray = _import_ray()
        self.run = run
        self.render_stage = render_stage
        self.read_ahead = read_ahead
        self.after_reading = after_reading
        self._started_here = not self.ray.is_initialized()
        if self._started_here:
            self.ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
            )
        # Reader actors live for the whole run: holding a CPU each, they would leave none for the render tasks.
        reader_class = self.ray.remote(num_cpus=0)(_Reader)
        self._readers = [reader_class.remote() for _ in range(max(1, readers))]
        self._render_task = self.ray.remote(num_cpus=1)(_render)
        self._pending: dict[Any, int] = {}
        self._submitted: set[str] = set()
        self.rendered = 0
        self.reused = 0
        self.busy_s: dict[str, float] = {}

    def read_pages(
        self, book: Book | BookFeed, run: RunConfig, engines: Engines
    ) -> Iterator[tuple[PageImage, PageRead]]:
        feed = BookFeed.of(book)
        ahead = -1 if self.read_ahead < 0 else max(self.read_ahead, len(self._readers))

        def submit(page: PageImage) -> Any:
            actor = self._readers[page.index % len(self._readers)]
            return actor.read.remote(feed.header, page, run)

        reads = pages_in_flight(feed, ahead, submit, lambda ref: None)  # a read in flight finishes unread
        with closing(reads):
            ordered: Iterable[tuple[PageImage, Any]] = reads
            if self.read_ahead < 0:
                ordered = list(reads)
                self.ray.get([ref for _, ref in ordered])
                if self.after_reading is not None:
                    self.after_reading()
            for page, ref in ordered:
                yield page, self.ray.get(ref)

    def render(self, segment: Segment, image: Path) -> None:
        output = self.run.work_dir / segment.file_name
        if self.render_stage is not None:
            self.render_stage.grow(segment.frames)
        if output.exists() or segment.key in self._submitted:
            self.reused += 1
            if self.render_stage is not None:
                self.render_stage.advance(segment.frames, detail=f"page {segment.page + 1} (reused)")
            return
        output.parent.mkdir(parents=True, exist_ok=True)
        self._submitted.add(segment.key)
        self.rendered += 1
        ref = self._render_task.remote(segment, str(image), str(output), self.run.render)
        self._pending[ref] = segment.page
        self._collect(timeout_s=0)

    def _collect(self, timeout_s: float | None) -> None:
        if not self._pending:
            return
        done, _ = self.ray.wait(list(self._pending), num_returns=len(self._pending), timeout=timeout_s)
        for ref in done:
            page = self._pending.pop(ref)
            frames = self.ray.get(ref)  # re-raises a task's error here
            if self.render_stage is not None:
                self.render_stage.advance(frames, detail=f"page {page + 1}")

    def rendered_note(self) -> str:
        return f"{self.rendered} segment(s) rendered on Ray, {self.reused} reused"

    def finish(self) -> None:
        while self._pending:
            self._collect(timeout_s=0.5)
        self._shutdown()

    def cancel(self) -> None:
        for ref in self._pending:
            self.ray.cancel(ref, force=True)
        self._pending.clear()
        self._shutdown()

    def _shutdown(self) -> None:
        if self._started_here and self.ray.is_initialized():
            self.ray.shutdown()
