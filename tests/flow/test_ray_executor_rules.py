"""The Ray executor's rules one by one, on a real local Ray instance and real pages (the bundled manga excerpt): what
it refuses, when it starts and stops Ray, reading every page before the first is handed on, and the render
progress and segments it reuses. `test_ray_executor.py` checks that a whole run on Ray gives the local run's video.

Skipped where the ray package is not installed (it is part of the test extras)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from comic_narrator import pipeline
from comic_narrator.cli import main
from comic_narrator.config import RunConfig, VisionConfig
from comic_narrator.errors import EngineError
from comic_narrator.flow.engines import Engines
from tests.conftest import SAMPLE_PAGE
from tests.reading.conftest import BLACKJACK_SAMPLE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="ray is an optional extra (pip install 'comic-narrator[ray]'); not installed here",
    ),
]


def _run_config(tmp_path: Path, **vision: str) -> RunConfig:
    return RunConfig(
        input_path=BLACKJACK_SAMPLE,
        output_path=tmp_path / "out.mp4",
        work_dir=tmp_path / "work",
        vision=VisionConfig(**vision),  # type: ignore[arg-type]
        executor="ray",
    )


def test_the_llm_reader_is_refused_before_ray_starts(tmp_path: Path) -> None:
    import ray

    from comic_narrator.flow.ray_executor import RayExecutor

    with pytest.raises(EngineError, match="--executor ray reads with the local reader"):
        RayExecutor(_run_config(tmp_path, vision="llm"), None)
    assert not ray.is_initialized()


def test_reading_every_page_first_hands_them_on_in_order_after_the_last_is_read(tmp_path: Path) -> None:
    """``read_ahead=-1`` (a time-shared stack: every page is read before the voices may start): the callback comes
    once, after every page's reading and before the first page is handed on; the pages come in book order; and the
    Ray instance the executor started is stopped when it finishes."""
    import ray

    from comic_narrator.flow.ray_executor import RayExecutor

    run = _run_config(tmp_path, layout="manga")
    book = pipeline.load_or_ingest(run.input_path, run.ingest, run.work_dir)
    assert len(book.pages) == 4
    events: list[str] = []
    executor = RayExecutor(run, None, read_ahead=-1, after_reading=lambda: events.append("all read"))
    try:
        assert ray.is_initialized()
        for page, (reading, _error, _cached) in executor.read_pages(book, run, Engines(ocr=None, bank=None)):
            events.append(f"page {page.index}")
            assert reading.page == page.index and reading.panels
    finally:
        executor.finish()
    assert events == ["all read", "page 0", "page 1", "page 2", "page 3"]
    assert not ray.is_initialized(), "the Ray instance started for the run is stopped after it"


def test_a_ray_instance_already_running_is_joined_and_left_running(tmp_path: Path) -> None:
    import ray

    from comic_narrator.flow.ray_executor import RayExecutor

    run = _run_config(tmp_path, layout="manga")
    book = pipeline.load_or_ingest(run.input_path, run.ingest, run.work_dir)
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        executor = RayExecutor(run, None)
        pages = [page.index for page, _ in executor.read_pages(book, run, Engines(ocr=None, bank=None))]
        executor.finish()
        assert pages == [0, 1, 2, 3]
        assert ray.is_initialized(), "a Ray instance the executor did not start is not its to stop"
    finally:
        ray.shutdown()


def _render_events(err: str) -> list[dict[str, object]]:
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    return [e for e in events if e.get("event") == "progress" and e.get("stage") == "render"]


def test_a_second_run_on_ray_reuses_every_segment_and_counts_the_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The render progress of a run on Ray ends with every frame counted (its total grown by each segment as it is
    planned), and a second run over the same work folder renders nothing: each segment is there already."""
    out = tmp_path / "page.mp4"
    options = [str(SAMPLE_PAGE), "-o", str(out), "--executor", "ray", "--preset", "ultrafast", "--fps", "24"]
    assert main([*options, "--json-progress"]) == 0
    first = capsys.readouterr().err
    renders = _render_events(first)
    assert renders and renders[-1]["done"] == renders[-1]["total"] and int(str(renders[-1]["total"])) > 0
    segments = sorted((tmp_path / "page.mp4.work" / "segments").glob("page-*.mp4"))
    assert segments
    assert f"{len(segments)} segment(s) rendered on Ray, 0 reused" in first
    out.unlink()  # the video is made again from the work folder's segments
    assert main([*options, "--json-progress"]) == 0
    second = capsys.readouterr().err
    assert f"0 segment(s) rendered on Ray, {len(segments)} reused" in second
    renders = _render_events(second)
    assert renders and renders[-1]["done"] == renders[-1]["total"] and int(str(renders[-1]["total"])) > 0
