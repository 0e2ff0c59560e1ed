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
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
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
from comic_narrator.video.frames import PagePyramid
from comic_narrator.video.mux import encode_aac, mux_segments
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


def _render_job(segment: Segment, image: str, output: str, config: RenderConfig) -> int:
    def report(frames: int) -> None:
        if _progress_queue is not None:
            _progress_queue.put((frames, segment.page))

    return render_segment(segment, _pyramid_for(image), Path(output), config, report)


def _render_in_processes(
    jobs: list[tuple[Segment, str, str]], workers: int, config: RenderConfig, stage: StageProgress
) -> None:
    context = multiprocessing.get_context("spawn")  # fork would copy the OCR and voice engines' threads
    progress_queue = context.Queue()

    def drain(wait_s: float) -> None:
        try:
            frames, page = progress_queue.get(timeout=wait_s) if wait_s else progress_queue.get_nowait()
            stage.advance(frames, detail=f"page {page + 1}")
            while True:
                frames, page = progress_queue.get_nowait()
                stage.advance(frames, detail=f"page {page + 1}")
        except queue.Empty:
            return

    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(progress_queue,))
    try:
        pending: set[Future[int]] = {pool.submit(_render_job, seg, image, out, config) for seg, image, out in jobs}
        while pending:
            drain(POLL_S)
            finished = {future for future in pending if future.done()}
            for future in finished:
                future.result()  # re-raises a worker's error here
            pending -= finished
    except BaseException:
        # A failed segment or Ctrl-C: drop the queued segments instead of rendering them all before exiting;
        # the ones being written finish or vanish atomically.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    drain(0)


def _advance(stage: StageProgress, detail: str, frames: int) -> None:
    stage.advance(frames, detail)


def _render_here(jobs: list[tuple[Segment, str, str]], config: RenderConfig, stage: StageProgress) -> None:
    """One segment to do, or one core: no process to start."""
    loaded: tuple[str, PagePyramid] | None = None
    for segment, image, out in jobs:
        if loaded is None or loaded[0] != image:
            loaded = (image, PagePyramid.load(Path(image)))
        render_segment(segment, loaded[1], Path(out), config, partial(_advance, stage, f"page {segment.page + 1}"))


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
    """Render the segments the work folder lacks, then join all of them under the audio into ``output``."""
    pages = {page.index: page for page in book.pages}
    segments = plan_segments(plan, {index: page.sha256 for index, page in pages.items()}, config)
    folder = work_dir / SEGMENT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    names = {Path(segment.file_name).name for segment in segments}
    for leftover in folder.glob(".*.part.mp4"):  # a killed run's half-written segment
        leftover.unlink(missing_ok=True)
    missing: dict[str, Segment] = {}
    for segment in segments:
        if not (work_dir / segment.file_name).exists():
            missing.setdefault(segment.key, segment)
    stage = progress.stage("render", sum(segment.frames for segment in segments))
    reused = len(segments) - len(missing)
    if reused:
        stage.advance(sum(s.frames for s in segments if s.key not in missing), detail=f"{reused} segment(s) reused")
    # Longest first, so the last segment to finish is a short one and no core waits long.
    order = sorted(missing.values(), key=lambda segment: -segment.frames)
    jobs = [(s, str(work_dir / pages[s.page].image_file), str(work_dir / s.file_name)) for s in order]
    workers = min(worker_count(config), len(jobs))
    audio_file = (
        folder / f"audio-{text_sha256(str(sample_rate_hz), hashlib.sha256(audio.tobytes()).hexdigest())[:20]}.m4a"
    )
    with _encoding_aac_meanwhile(audio_file, audio, sample_rate_hz):
        if workers > 1:
            _render_in_processes(jobs, workers, config, stage)
        else:
            _render_here(jobs, config, stage)
    frames = mux_segments(output, [(work_dir / s.file_name, s.frames) for s in segments], plan.fps, audio_file)
    _remove_leftovers(folder, names | {audio_file.name})
    return RenderReport(segments=len(segments), rendered=len(missing), frames=frames)
