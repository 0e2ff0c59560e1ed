"""The render: which segments the work folder lacks, rendering those in parallel processes, then the join.

Workers are spawned (not forked: the parent holds OCR and voice engines with threads of their own), so a script
that calls the pipeline needs the usual ``if __name__ == "__main__":`` guard; the CLI has it.

A resumed or re-run job re-renders only segments whose key has no file yet; every file is written atomically,
so a run killed mid-render keeps the segments it finished.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import Book, CameraPlan
from comic_narrator.config import RenderConfig
from comic_narrator.progress import SILENT, Progress, StageProgress
from comic_narrator.timeline.chapters import ChapterMark
from comic_narrator.video.frames import PagePyramid
from comic_narrator.video.mux import SideTrack, encode_aac, mux_segments
from comic_narrator.video.segments import SEGMENT_DIR, Segment, plan_segments, render_segment
from comic_narrator.workdir import text_sha256

POLL_S = 0.2


class RenderReport(NamedTuple):
    """How many segments the video has, how many this run rendered (the rest were reused), its frames."""

    segments: int
    rendered: int
    frames: int


def worker_count(config: RenderConfig) -> int:
    if config.jobs > 0:
        return config.jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# Worker-process state: the progress queue and the last page loaded (a worker often gets a page's next segment).
_progress_queue: Any = None
_pyramid: tuple[str, PagePyramid] | None = None


def _init_worker(progress_queue: Any) -> None:
    global _progress_queue
    _progress_queue = progress_queue
    cv2.setNumThreads(1)  # one process per core already


def _pyramid_for(image: str) -> PagePyramid:
    global _pyramid
    if _pyramid is None or _pyramid[0] != image:
        _pyramid = (image, PagePyramid.load(Path(image)))
    return _pyramid[1]


def _timed_render_job(segment: Segment, image: str, output: str, config: RenderConfig) -> float:
    """Render one segment; returns the seconds it took (what the render was busy for)."""
    started = time.perf_counter()
    _render_job(segment, image, output, config)
    return time.perf_counter() - started


def _render_job(segment: Segment, image: str, output: str, config: RenderConfig) -> int:
    def report(frames: int) -> None:
        if _progress_queue is not None:
            _progress_queue.put((frames, segment.page))

    return render_segment(segment, _pyramid_for(image), Path(output), config, report)


class SegmentRenderer:
    """Renders segments as pages hand them in, in worker processes (spawned once, reused for the whole book;
    with one worker, on a thread), so the video of page N is made while page N+1 is voiced. Segments whose file
    exists are skipped; every file is written atomically, so a killed run keeps the segments it finished."""

    def __init__(self, work_dir: Path, config: RenderConfig, stage: StageProgress, workers: int) -> None:
        self.work_dir = work_dir
        self.config = config
        self.stage = stage
        self.rendered = 0
        self.reused = 0
        self.busy_s = 0.0
        """Seconds spent rendering, summed over the workers."""
        self._pending: set[Future[float]] = set()
        self._submitted: set[str] = set()
        self._progress_queue: Any = None
        self._pool: ProcessPoolExecutor | ThreadPoolExecutor
        folder = work_dir / SEGMENT_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for leftover in folder.glob(".*.part.mp4"):  # a killed run's half-written segment
            leftover.unlink(missing_ok=True)
        if workers > 1:
            context = multiprocessing.get_context("spawn")  # fork would copy the OCR and voice engines' threads
            self._progress_queue = context.Queue()
            self._pool = ProcessPoolExecutor(
                workers, mp_context=context, initializer=_init_worker, initargs=(self._progress_queue,)
            )
        else:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="render")

    def submit(self, segment: Segment, image: Path) -> None:
        output = self.work_dir / segment.file_name
        self.stage.grow(segment.frames)
        if output.exists() or segment.key in self._submitted:
            self.reused += 1
            self.stage.advance(segment.frames, detail=f"page {segment.page + 1} (reused)")
            return
        self._submitted.add(segment.key)
        self.rendered += 1
        if isinstance(self._pool, ProcessPoolExecutor):
            self._pending.add(self._pool.submit(_timed_render_job, segment, str(image), str(output), self.config))
        else:
            report = partial(_advance, self.stage, f"page {segment.page + 1}")
            self._pending.add(
                self._pool.submit(_timed_render_here, segment, str(image), str(output), self.config, report)
            )
        self.poll()

    def poll(self, wait_s: float = 0.0) -> None:
        """Progress from the workers, and the first worker error re-raised here."""
        if self._progress_queue is not None:
            try:
                frames, page = self._progress_queue.get(timeout=wait_s) if wait_s else self._progress_queue.get_nowait()
                self.stage.advance(frames, detail=f"page {page + 1}")
                while True:
                    frames, page = self._progress_queue.get_nowait()
                    self.stage.advance(frames, detail=f"page {page + 1}")
            except queue.Empty:
                pass
        elif wait_s:
            wait(self._pending, timeout=wait_s, return_when=FIRST_COMPLETED)
        finished = {future for future in self._pending if future.done()}
        for future in finished:
            self.busy_s += future.result()
        self._pending -= finished

    def finish(self) -> None:
        """Wait for every segment handed in."""
        while self._pending:
            self.poll(POLL_S)
        self.poll()
        self._pool.shutdown(wait=True)

    def cancel(self) -> None:
        """A failed page or Ctrl-C: drop the queued segments; the ones being written finish or vanish atomically."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> SegmentRenderer:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is not None:
            self.cancel()


_here: tuple[str, PagePyramid] | None = None
_here_lock = threading.Lock()


def _timed_render_here(segment: Segment, image: str, output: str, config: RenderConfig, report: Any) -> float:
    started = time.perf_counter()
    _render_one_here(segment, image, output, config, report)
    return time.perf_counter() - started


def _render_one_here(segment: Segment, image: str, output: str, config: RenderConfig, report: Any) -> int:
    global _here
    with _here_lock:
        if _here is None or _here[0] != image:
            _here = (image, PagePyramid.load(Path(image)))
        pyramid = _here[1]
    return render_segment(segment, pyramid, Path(output), config, report)


def book_audio_file(work_dir: Path) -> Path:
    """Where the book's AAC is encoded before the join."""
    return work_dir / SEGMENT_DIR / "audio.m4a"


def join_video(
    output: Path,
    segments: list[Segment],
    work_dir: Path,
    fps: int,
    audio: Iterable[npt.NDArray[np.float32]] | Path,
    sample_rate_hz: int,
    side_tracks: Sequence[SideTrack] = (),
    tail: Sequence[tuple[Path, int]] = (),
    metadata: Mapping[str, str] | None = None,
    chapters: Sequence[ChapterMark] = (),
) -> int:
    """The book's AAC (encoded here from its pieces, a page each, or already encoded at ``audio``), then every
    segment and the ``tail`` (the end card: (file, frames)) joined under it into ``output`` with the
    ``side_tracks`` (subtitles), the ``metadata`` and the ``chapters``; segment files of other keys are removed.
    Returns the frames written."""
    folder = work_dir / SEGMENT_DIR
    audio_file = audio if isinstance(audio, Path) else book_audio_file(work_dir)
    if not isinstance(audio, Path):
        encode_aac(audio_file, audio, sample_rate_hz)
    jobs = [*((work_dir / s.file_name, s.frames) for s in segments), *tail]
    frames = mux_segments(output, jobs, fps, audio_file, side_tracks, metadata, chapters)
    keep = {Path(s.file_name).name for s in segments} | {path.name for path, _ in tail} | {audio_file.name}
    _remove_leftovers(folder, keep)
    return frames


def _advance(stage: StageProgress, detail: str, frames: int) -> None:
    stage.advance(frames, detail)


def _remove_leftovers(folder: Path, keep: set[str]) -> None:
    """Segments and audio of older keys, and temp files of a killed run."""
    for path in [*folder.glob("*.mp4"), *folder.glob("*.m4a")]:
        if path.name not in keep:
            path.unlink(missing_ok=True)


@contextmanager
def _encoding_aac_meanwhile(path: Path, audio: npt.NDArray[np.float32], sample_rate_hz: int) -> Iterator[None]:
    """Encode the book's AAC on a thread while the body renders the video (the main process only waits on its
    workers then); reused when the same track was encoded before."""
    failures: list[BaseException] = []

    def encode() -> None:
        try:
            encode_aac(path, audio, sample_rate_hz)
        except BaseException as exc:  # handed to the caller's thread below
            failures.append(exc)

    worker = None if path.exists() else threading.Thread(target=encode, name="aac-encoder", daemon=True)
    if worker is not None:
        worker.start()
    try:
        yield
    finally:
        if worker is not None:
            worker.join()
    if failures:
        raise failures[0]


def render_video(
    plan: CameraPlan,
    book: Book,
    work_dir: Path,
    config: RenderConfig,
    audio: npt.NDArray[np.float32],
    sample_rate_hz: int,
    output: Path,
    progress: Progress = SILENT,
) -> RenderReport:
    """A whole plan at once: render the segments the work folder lacks (longest first, so the last to finish is
    a short one), encoding the track meanwhile (reused when the same track was encoded before), then the join."""
    pages = {page.index: page for page in book.pages}
    segments = plan_segments(plan, {index: page.sha256 for index, page in pages.items()}, config)
    missing = {segment.key for segment in segments if not (work_dir / segment.file_name).exists()}
    digest = text_sha256(str(sample_rate_hz), hashlib.sha256(audio.tobytes()).hexdigest())[:20]
    audio_file = work_dir / SEGMENT_DIR / f"audio-{digest}.m4a"
    audio_file.parent.mkdir(parents=True, exist_ok=True)
    workers = max(1, min(worker_count(config), len(missing)))
    with (
        _encoding_aac_meanwhile(audio_file, audio, sample_rate_hz),
        SegmentRenderer(work_dir, config, progress.stage("render", 0), workers) as renderer,
    ):
        for segment in sorted(segments, key=lambda segment: -segment.frames):
            renderer.submit(segment, work_dir / pages[segment.page].image_file)
        renderer.finish()
    frames = join_video(output, segments, work_dir, plan.fps, audio_file, sample_rate_hz)
    return RenderReport(segments=len(segments), rendered=renderer.rendered, frames=frames)
