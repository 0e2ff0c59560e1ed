"""The render: walks the camera plan frame by frame over the stored pages and hands frames to the encoder."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path

from comic_narrator.artifacts import Book, CameraPlan
from comic_narrator.config import RenderConfig
from comic_narrator.progress import SILENT, Progress
from comic_narrator.video.camera import focus_at, rect_at
from comic_narrator.video.frames import Frame, PagePyramid, dim_outside


def iter_frames(
    plan: CameraPlan, book: Book, work_dir: Path, config: RenderConfig, progress: Progress = SILENT
) -> Iterator[Frame]:
    total = sum(shot.frames for shot in plan.shots)
    stage = progress.stage("render", total)
    files = {page.index: work_dir / page.image_file for page in book.pages}
    current_page = -1
    pyramid: PagePyramid | None = None
    for index, shot in enumerate(plan.shots):
        if shot.page != current_page or pyramid is None:
            pyramid = PagePyramid.load(files[shot.page])
            current_page = shot.page
        for frame_in_shot in range(shot.frames):
            rect = rect_at(plan, index, frame_in_shot)
            frame = pyramid.render(rect, plan.width_px, plan.height_px, config.background_rgb)
            focus, strength = focus_at(plan, index, frame_in_shot)
            if focus is not None and config.dim_outside_panel:
                frame = dim_outside(frame, rect, focus, strength)
            yield frame
        stage.advance(shot.frames, detail=f"page {shot.page + 1}")


def prefetch(frames: Iterator[Frame], depth: int = 8) -> Iterator[Frame]:
    """Render ahead on a second thread (OpenCV releases the GIL) while the encoder works on this one."""
    buffer: queue.Queue[Frame | BaseException | None] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for frame in frames:
                if stop.is_set():
                    return
                buffer.put(frame)
        except BaseException as exc:  # handed to the consumer, which re-raises it on its own thread
            buffer.put(exc)
            return
        buffer.put(None)

    worker = threading.Thread(target=produce, name="frame-renderer", daemon=True)
    worker.start()
    try:
        while True:
            item = buffer.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():
            try:
                buffer.get_nowait()
            except queue.Empty:
                worker.join(timeout=0.05)
