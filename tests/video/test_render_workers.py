"""The render's worker processes: spawned as SegmentRenderer spawns them, with its initializer."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from comic_narrator.video import render


def test_render_workers_run_below_the_run_s_priority() -> None:
    """Workers (one per core) yield the CPU to the engines beside them: the reader's and the voices' servers and
    the run's own reading and master, whose work the stream waits on."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context, initializer=render._init_worker, initargs=(None,)) as pool:
        niceness = {pool.submit(os.nice, 0).result() for _ in range(4)}
    assert niceness == {min(19, os.nice(0) + render.RENDER_NICENESS)}
