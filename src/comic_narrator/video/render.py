"""The render: walks the camera plan frame by frame over the stored pages and hands frames to the encoder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from comic_narrator.artifacts import Book, CameraPlan
from comic_narrator.config import RenderConfig
from comic_narrator.progress import SILENT, Progress
from comic_narrator.video.camera import rect_at
from comic_narrator.video.frames import Frame, PagePyramid


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
            yield pyramid.render(rect, plan.width_px, plan.height_px, config.background_rgb)
        stage.advance(shot.frames, detail=f"page {shot.page + 1}")
