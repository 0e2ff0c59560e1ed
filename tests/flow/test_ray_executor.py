"""`--executor ray`: page readings and segment renders run on a local Ray instance (the optional ``ray`` extra).

Skipped where the ray package is not installed (the default install stays lean: pip install 'comic-narrator[ray]').
Real: the CLI, a local Ray instance with its reader actors and render tasks, the shared work folder, the join."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE
from tests.e2e.test_resume import _assert_valid_mp4

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="ray is an optional extra (pip install 'comic-narrator[ray]'); not installed here",
    ),
]

OPTIONS = ["--preset", "ultrafast", "--fps", "24"]


def test_a_run_on_ray_gives_the_local_runs_video(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local, on_ray = tmp_path / "local.mp4", tmp_path / "ray.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(local), *OPTIONS, "-q"]) == 0
    capsys.readouterr()
    # Without -q: the run's render note says where its segments were rendered. A run that quietly fell back to
    # the local executor would pass every other check below.
    assert main([str(SAMPLE_PAGE), "-o", str(on_ray), "--executor", "ray", *OPTIONS]) == 0
    assert re.search(r"\[render\] [1-9]\d* segment\(s\) rendered on Ray", capsys.readouterr().err)
    _assert_valid_mp4(on_ray)
    assert on_ray.with_suffix(".srt").read_text() == local.with_suffix(".srt").read_text()
    segments = sorted(p.name for p in (tmp_path / "ray.mp4.work" / "segments").glob("page-*.mp4"))
    assert segments == sorted(p.name for p in (tmp_path / "local.mp4.work" / "segments").glob("page-*.mp4"))
    assert segments, "the render tasks wrote the segments into the shared work folder"
