"""Segmented render: segments join into one MP4 as long as the audio, frame for frame; a re-run or a resumed run
renders only the segments that are missing. Real pages, real libx264 (PyAV), small frames to stay quick."""

from __future__ import annotations

import io
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from comic_narrator.artifacts import Book, BookReading, CameraPlan, PageImage, PageReading, Panel, ShotTiming, Timing
from comic_narrator.config import RenderConfig
from comic_narrator.errors import EngineError, InputError
from comic_narrator.progress import Progress
from comic_narrator.video.camera import plan_camera
from comic_narrator.video.color import ycbcr_of
from comic_narrator.video.frames import PagePyramid
from comic_narrator.video.mux import mux_segments
from comic_narrator.video.render import render_video, worker_count
from comic_narrator.video.segments import SEGMENT_DIR, iter_segment_frames, plan_segments
from comic_narrator.workdir import file_sha256, write_artifact
from tests.conftest import REPO, SAMPLE_PAGE
from tests.video.mp4_probe import probe_mp4

RATE_HZ = 48_000
FPS = 24
SMALL = RenderConfig(width_px=384, height_px=216, fps=FPS, segment_s=2.0, jobs=2)
# Two real pages; shots of uneven length so segments cut inside pages as well as between them.
PAGES = [SAMPLE_PAGE, REPO / "samples" / "peppercarrot-ep17-page2.jpg"]
SHOT_FRAMES = [[30, 40, 20, 45], [30, 25, 50]]


def _book_and_reading(work: Path) -> tuple[Book, BookReading]:
    images, readings = [], []
    for index, source in enumerate(PAGES):
        image = cv2.imread(str(source), cv2.IMREAD_COLOR)
        if index == 1:
            image = cv2.flip(image, 1)  # a second page that differs from the first, from the same real art
        name = f"pages/page-{index + 1:04d}.png"
        (work / "pages").mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(work / name), image)
        height, width = image.shape[:2]
        images.append(
            PageImage(
                index=index,
                source=str(source),
                source_page_number=index + 1,
                image_file=name,
                width_px=width,
                height_px=height,
                sha256=file_sha256(work / name),
            )
        )
        panels = [
            Panel(bbox=(40, 40, width - 80, height // 3)),
            Panel(bbox=(40, height // 3 + 60, width // 2 - 60, height // 3)),
            Panel(bbox=(width // 2 + 20, height // 3 + 60, width // 2 - 60, height // 2)),
        ][: len(SHOT_FRAMES[index]) - 1]
        readings.append(
            PageReading(page=index, width=width, height=height, reading_direction="ltr", panels=panels, texts=[])
        )
    return Book(source="test", pages=images), BookReading(source="test", lang="en", pages=readings)


def _timing() -> Timing:
    lengths = [(page, panel - 1, frames) for page, row in enumerate(SHOT_FRAMES) for panel, frames in enumerate(row)]
    starts = [0, *itertools.accumulate(frames for _, _, frames in lengths)]
    shots = [
        ShotTiming(
            page=page, panel=panel, start_s=start / FPS, duration_s=n / FPS, frames=n, line_ids=[], line_starts_s=[]
        )
        for (page, panel, n), start in zip(lengths, starts, strict=False)
    ]
    return Timing(fps=FPS, sample_rate_hz=RATE_HZ, shots=shots, duration_s=starts[-1] / FPS)


def _job(work: Path, config: RenderConfig = SMALL) -> tuple[CameraPlan, Book, np.ndarray]:
    book, reading = _book_and_reading(work)
    plan = plan_camera(reading, _timing(), config)
    frames = sum(shot.frames for shot in plan.shots)
    seconds = np.arange(frames * RATE_HZ // FPS) / RATE_HZ
    audio = (0.2 * np.sin(2 * np.pi * 440 * seconds)).astype(np.float32)
    write_artifact(work / "camera.json", plan)
    write_artifact(work / "book.json", book)
    return plan, book, audio


def _segment_mtimes(work: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (work / SEGMENT_DIR).glob("page-*.mp4")}


def _decoded_luma(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        frames = [frame.to_ndarray(format="yuv420p") for frame in container.decode(video=0)]
    return [frame[: frame.shape[0] * 2 // 3].astype(np.int16) for frame in frames]  # Y as coded, no range change


def _reference_luma(plan: CameraPlan, book: Book, work: Path) -> list[np.ndarray]:
    """Every frame rendered straight from the whole plan, no encoder: what the MP4 must show, in order."""
    luma = []
    for segment in plan_segments(plan, {p.index: p.sha256 for p in book.pages}, SMALL):
        pyramid = PagePyramid.load(work / book.pages[segment.page].image_file)
        luma += [f[: plan.height_px].astype(np.int16) for f in iter_segment_frames(segment, pyramid, SMALL)]
    return luma


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CameraPlan, Book, np.ndarray]:
    work = tmp_path_factory.mktemp("render")
    plan, book, audio = _job(work)
    report = render_video(plan, book, work, SMALL, audio, RATE_HZ, work / "out.mp4")
    assert report.rendered == report.segments >= 4
    return work, plan, book, audio


def test_segments_cut_between_pages_and_inside_long_pages(rendered: tuple) -> None:
    work, plan, book, _ = rendered
    segments = plan_segments(plan, {p.index: p.sha256 for p in book.pages}, SMALL)
    assert [s.page for s in segments] == sorted(s.page for s in segments)
    assert len({s.page for s in segments}) == 2 and len(segments) > 2, "a page longer than segment_s is cut"
    assert sum(s.frames for s in segments) == sum(shot.frames for shot in plan.shots)
    assert len(_segment_mtimes(work)) == len(segments)


def test_joined_mp4_is_as_long_as_the_audio_and_has_every_frame(rendered: tuple) -> None:
    work, plan, _, audio = rendered
    streams = probe_mp4(work / "out.mp4")
    assert (streams.video_codec, streams.audio_codec) == ("h264", "aac")
    total = sum(shot.frames for shot in plan.shots)
    assert streams.frames == total == round(len(audio) / RATE_HZ * FPS)
    assert abs(streams.video_s - len(audio) / RATE_HZ) <= 1 / FPS + 1e-9
    assert abs(streams.video_s - streams.audio_s) <= 1 / FPS + 1e-9


def test_frames_at_each_join_are_the_right_frames(rendered: tuple) -> None:
    """No duplicated or dropped frame at a join: timestamps run 0, 1, 2 ... one frame apart; every frame is the
    one rendered for its place; where a page changes, frame i is nearer reference i than i-1 or i+1. (Inside a
    page a segment ends with its shot, where the eased camera has all but stopped and a shot's last frame is the
    next one's first: neighbours there cannot be told apart by their pixels, so the timestamps carry the proof.)"""
    work, plan, book, _ = rendered
    with av.open(str(work / "out.mp4")) as container:
        stream = container.streams.video[0]
        assert stream.time_base is not None
        stamps = [
            round(frame.pts * stream.time_base * FPS) for frame in container.decode(video=0) if frame.pts is not None
        ]
    assert stamps == list(range(sum(shot.frames for shot in plan.shots)))
    decoded = _decoded_luma(work / "out.mp4")
    reference = _reference_luma(plan, book, work)
    segments = plan_segments(plan, {p.index: p.sha256 for p in book.pages}, SMALL)
    at = 0
    for segment, following in itertools.pairwise(segments):
        at += segment.frames
        for i in (at - 1, at):
            own = np.abs(decoded[i] - reference[i]).mean()
            assert own < 4.0, f"frame {i} decodes close to what was rendered for it"
            if following.page != segment.page:
                for j in (i - 1, i + 1):
                    assert own < np.abs(decoded[i] - reference[j]).mean(), f"frame {i} shows frame {j}"


def test_rerun_after_deleting_one_segment_renders_only_that_one(rendered: tuple, tmp_path: Path) -> None:
    work, plan, book, audio = rendered
    before = _segment_mtimes(work)
    victim = sorted(before)[1]
    (work / SEGMENT_DIR / victim).unlink()
    (aac,) = (work / SEGMENT_DIR).glob("audio-*.m4a")
    aac_written_ns = aac.stat().st_mtime_ns
    report = render_video(plan, book, work, SMALL, audio, RATE_HZ, tmp_path / "again.mp4")
    after = _segment_mtimes(work)
    assert report.rendered == 1
    assert aac.stat().st_mtime_ns == aac_written_ns, "the same track is not encoded again"
    assert set(after) == set(before)
    assert {k: v for k, v in after.items() if k != victim} == {k: v for k, v in before.items() if k != victim}
    assert len(_decoded_luma(tmp_path / "again.mp4")) == sum(shot.frames for shot in plan.shots)


def test_unchanged_rerun_renders_nothing_and_a_changed_page_only_its_segments(tmp_path: Path) -> None:
    plan, book, audio = _job(tmp_path)
    config = RenderConfig(width_px=192, height_px=108, fps=FPS, segment_s=2.0, jobs=1)
    first = render_video(plan, book, tmp_path, config, audio, RATE_HZ, tmp_path / "a.mp4")
    assert render_video(plan, book, tmp_path, config, audio, RATE_HZ, tmp_path / "a.mp4").rendered == 0
    # The second page's image changes: only its segments are stale.
    pages = [book.pages[0], book.pages[1].model_copy(update={"sha256": "0" * 64})]
    second_page = sum(1 for s in plan_segments(plan, {0: pages[0].sha256, 1: "0" * 64}, config) if s.page == 1)
    report = render_video(
        plan, book.model_copy(update={"pages": pages}), tmp_path, config, audio, RATE_HZ, tmp_path / "b.mp4"
    )
    assert report.rendered == second_page < first.segments


def test_segment_keys_ignore_where_the_page_sits_in_the_book() -> None:
    """A longer earlier page shifts every later shot's start frame; later pages' segments stay valid."""
    plan = plan_camera(_book_reading_only(), _timing(), SMALL)
    shas = {0: "a" * 64, 1: "b" * 64}
    longer = plan.model_copy(
        update={
            "shots": [plan.shots[0].model_copy(update={"frames": 60})]
            + [s.model_copy(update={"start_frame": s.start_frame + 30}) for s in plan.shots[1:]]
        }
    )
    keys = {s.page: s.key for s in plan_segments(plan, shas, SMALL) if s.page == 1}
    keys_after = {s.page: s.key for s in plan_segments(longer, shas, SMALL) if s.page == 1}
    assert keys == keys_after
    assert plan_segments(plan, shas, SMALL)[0].key != plan_segments(longer, shas, SMALL)[0].key
    other_look = RenderConfig(width_px=384, height_px=216, fps=FPS, segment_s=2.0, jobs=1, crf=23)
    assert [s.key for s in plan_segments(plan, shas, SMALL)] != [s.key for s in plan_segments(plan, shas, other_look)]
    more_workers = RenderConfig(width_px=384, height_px=216, fps=FPS, segment_s=2.0, jobs=7)
    assert [s.key for s in plan_segments(plan, shas, SMALL)] == [s.key for s in plan_segments(plan, shas, more_workers)]


def _book_reading_only() -> BookReading:
    pages = [
        PageReading(
            page=i,
            width=1000,
            height=1400,
            reading_direction="ltr",
            texts=[],
            panels=[Panel(bbox=(40, 40, 900, 400)), Panel(bbox=(40, 500, 400, 400)), Panel(bbox=(500, 500, 400, 800))][
                : len(frames) - 1
            ],
        )
        for i, frames in enumerate(SHOT_FRAMES)
    ]
    return BookReading(source="t", lang="en", pages=pages)


_KILLABLE = """
import sys
from pathlib import Path
import numpy as np
from comic_narrator.artifacts import Book, CameraPlan
from comic_narrator.config import RenderConfig
from comic_narrator.errors import EngineError, InputError
from comic_narrator.video.render import render_video
from comic_narrator.workdir import read_artifact

work = Path(sys.argv[1])
plan = read_artifact(work / "camera.json", CameraPlan)
book = read_artifact(work / "book.json", Book)
audio = np.load(work / "audio.npy")
config = RenderConfig(width_px=1280, height_px=720, fps=24, segment_s=2.0, jobs=1)
render_video(plan, book, work, config, audio, 48000, work / "out.mp4")
"""


def test_a_render_killed_midway_resumes_from_the_segments_it_finished(tmp_path: Path) -> None:
    config = RenderConfig(width_px=1280, height_px=720, fps=FPS, segment_s=2.0, jobs=1)  # slow enough to kill
    plan, book, audio = _job(tmp_path, config)
    np.save(tmp_path / "audio.npy", audio)
    total = len(plan_segments(plan, {p.index: p.sha256 for p in book.pages}, config))
    child = subprocess.Popen([sys.executable, "-c", _KILLABLE, str(tmp_path)], cwd=REPO)
    folder = tmp_path / SEGMENT_DIR
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None and not list(folder.glob("page-*.mp4")):
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    finished = _segment_mtimes(tmp_path)
    assert 1 <= len(finished) < total, "killed after the first segment and before the last"
    assert not (tmp_path / "out.mp4").exists()
    report = render_video(plan, book, tmp_path, config, audio, RATE_HZ, tmp_path / "out.mp4")
    assert report.rendered == total - len(finished)
    after = _segment_mtimes(tmp_path)
    assert {name: after[name] for name in finished} == finished, "finished segments are reused, not re-rendered"
    assert not list(folder.glob(".*")), "the killed run's half-written segment is gone"
    assert len(_decoded_luma(tmp_path / "out.mp4")) == sum(shot.frames for shot in plan.shots)


def test_uniform_page_renders_its_colour_and_the_letterbox_fill() -> None:
    page = np.zeros((400, 300, 3), dtype=np.uint8)
    page[:] = (200, 40, 90)
    frame = PagePyramid(page).render((-100.0, 0.0, 500.0, 281.25), 320, 180, ycbcr_of((12, 12, 14)))
    y, cb, cr = ycbcr_of((200, 40, 90))
    assert abs(int(frame[90, 160]) - y) <= 1
    assert abs(int(frame[180 + 22, 80]) - cb) <= 1 and abs(int(frame[180 + 45 + 22, 80]) - cr) <= 1
    assert abs(int(frame[90, 5]) - ycbcr_of((12, 12, 14))[0]) <= 1, "left of the page is the letterbox"


def test_a_page_that_cannot_be_read_fails_the_render_naming_it(tmp_path: Path) -> None:
    """The error crosses from the worker process to the caller as the same one-line error, naming the file."""
    plan, book, audio = _job(tmp_path)
    broken = tmp_path / book.pages[1].image_file
    broken.write_bytes(b"not a png")
    with pytest.raises(InputError, match="cannot read the stored page image") as caught:
        render_video(plan, book, tmp_path, SMALL, audio, RATE_HZ, tmp_path / "out.mp4")
    assert str(broken) in str(caught.value)
    assert not (tmp_path / "out.mp4").exists()


def _segment_files(work: Path, plan: CameraPlan, book: Book) -> list[tuple[Path, int]]:
    segments = plan_segments(plan, {p.index: p.sha256 for p in book.pages}, SMALL)
    return [(work / s.file_name, s.frames) for s in segments]


def test_a_segment_short_of_its_frames_fails_the_join_naming_it_and_writes_nothing(
    rendered: tuple, tmp_path: Path
) -> None:
    """Segments are read ahead on threads while earlier ones are joined: the failure of one in the middle still
    names that segment, and no output file is left."""
    work, plan, book, _ = rendered
    jobs = _segment_files(work, plan, book)
    assert len(jobs) >= 4
    broken = jobs[2][0]
    jobs[2] = (broken, jobs[2][1] + 1)
    output = tmp_path / "joined.mp4"
    with pytest.raises(EngineError, match=r"holds \d+ frame\(s\), \d+ expected") as failure:
        mux_segments(output, jobs, FPS, next((work / SEGMENT_DIR).glob("audio-*.m4a")))
    assert failure.value.path == str(broken)
    assert not output.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_segment_encoded_otherwise_fails_the_join_naming_it(rendered: tuple, tmp_path: Path) -> None:
    work, plan, book, _ = rendered
    jobs = _segment_files(work, plan, book)
    other = tmp_path / "other.mp4"
    with av.open(str(other), "w", format="mp4") as container:  # the same frames count, another picture size
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 320, 180, "yuv420p"
        for _ in range(jobs[-1][1]):
            frame = av.VideoFrame.from_ndarray(np.zeros((180, 320, 3), np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    jobs[-1] = (other, jobs[-1][1])
    output = tmp_path / "joined.mp4"
    with pytest.raises(EngineError, match="other settings than the first segment") as failure:
        mux_segments(output, jobs, FPS, next((work / SEGMENT_DIR).glob("audio-*.m4a")))
    assert failure.value.path == str(other)
    assert not output.exists()


def test_jobs_sets_the_render_workers_and_zero_means_one_per_usable_core(monkeypatch: pytest.MonkeyPatch) -> None:
    assert worker_count(RenderConfig(jobs=3)) == 3
    assert worker_count(RenderConfig(jobs=0)) == len(os.sched_getaffinity(0))
    # A process held to two cores (taskset, a container's cpuset) gets two workers, whatever the host has.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {4, 5})
    assert worker_count(RenderConfig()) == 2
    # Where the call does not exist (not Linux): the cores the system reports, at least one.
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert worker_count(RenderConfig()) == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_render_progress_counts_every_frame_as_the_workers_make_it(tmp_path: Path, jobs: int) -> None:
    # With worker processes the frames are counted from what the workers send back while they render; with one
    # worker, on its thread. Either way the render stage ends at the plan's frames, page by page.
    plan, book, audio = _job(tmp_path)
    stream = io.StringIO()
    config = RenderConfig(width_px=192, height_px=108, fps=FPS, segment_s=2.0, jobs=jobs)
    render_video(
        plan, book, tmp_path, config, audio, RATE_HZ, tmp_path / "out.mp4", Progress(stream=stream, as_json=True)
    )
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    render = [e for e in events if e.get("event") == "progress" and e.get("stage") == "render"]
    frames = sum(shot.frames for shot in plan.shots)
    assert render[-1]["done"] == render[-1]["total"] == frames
    # Frames are reported as they are made (the stream throttles what it prints), not once at the end.
    assert any(0 < e["done"] < frames and e["detail"] == "page 1" for e in render)


def test_one_worker_renders_each_page_from_its_own_art(tmp_path: Path) -> None:
    # With --jobs 1 the segments render on one thread that keeps the last page's image loaded: the second page's
    # segments must show the second page (here the first one mirrored), each frame what the plan renders for it.
    plan, book, audio = _job(tmp_path)
    render_video(plan, book, tmp_path, replace(SMALL, jobs=1), audio, RATE_HZ, tmp_path / "out.mp4")
    decoded = _decoded_luma(tmp_path / "out.mp4")
    reference = _reference_luma(plan, book, tmp_path)
    assert len(decoded) == len(reference)
    assert max(float(np.abs(d - r).mean()) for d, r in zip(decoded, reference, strict=True)) < 4.0


def test_the_join_removes_segments_and_audio_of_older_keys(tmp_path: Path) -> None:
    # A rerun whose plan changed leaves the old segments behind; the join keeps only what this video is made of,
    # so a work folder does not grow by a book's video at every edit.
    plan, book, audio = _job(tmp_path)
    folder = tmp_path / SEGMENT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stale = [folder / "page-0001-0000-0123456789abcdef.mp4", folder / "audio-older.m4a", folder / ".x.part.mp4"]
    for path in stale:
        path.write_bytes(b"old")
    render_video(plan, book, tmp_path, replace(SMALL, jobs=1), audio, RATE_HZ, tmp_path / "out.mp4")
    assert not any(path.exists() for path in stale)
    segments = plan_segments(plan, {p.index: p.sha256 for p in book.pages}, SMALL)
    assert sorted(_segment_mtimes(tmp_path)) == sorted(Path(s.file_name).name for s in segments)
