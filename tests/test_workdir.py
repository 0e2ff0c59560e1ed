"""Files written atomically get the permissions the user's umask gives any new file, not mkstemp's 0600."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from comic_narrator.artifacts import PageReading, Panel
from comic_narrator.backends.protocols import Speech
from comic_narrator.errors import ArtifactError, OutputError
from comic_narrator.voice.synthesis import write_wav_atomic
from comic_narrator.workdir import (
    atomic_temp_path,
    atomic_write_bytes,
    ensure_writable_output,
    read_artifact,
    read_cached_artifact,
    write_artifact,
)


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path: Path, mask: int, mode: int) -> None:
    with _umask(mask):
        atomic_write_bytes(tmp_path / "book.srt", b"1\n00:00:00,000 --> 00:00:01,000\nHello\n")
        encoded = atomic_temp_path(tmp_path / "book.mp4")
        encoded.write_bytes(b"not really a video")
        encoded.replace(tmp_path / "book.mp4")
        write_wav_atomic(tmp_path / "clip.wav", Speech(samples=np.zeros(100, np.float32), sample_rate_hz=16_000))
    for name in ("book.srt", "book.mp4", "clip.wav"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.mp4", "book.srt", "clip.wav"]


def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    (tmp_path / "out.mp4").mkdir()
    cases = {
        tmp_path / "missing" / "out.mp4": f"the folder {tmp_path / 'missing'} does not exist",
        a_file / "out.mp4": f"{a_file} is not a folder",
        tmp_path / "out.mp4": "is a folder, not a file",
    }
    for path, message in cases.items():
        with pytest.raises(OutputError) as caught:
            ensure_writable_output(path)
        assert caught.value.message == message and caught.value.path == str(path)
    ensure_writable_output(tmp_path / "fine.mp4")  # a new file in a folder that exists
    ensure_writable_output(a_file)  # an existing file is replaced


def test_a_damaged_artifact_names_its_first_problem_and_a_cache_redoes_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "reading.json"
    good = PageReading(
        page=0, width=100, height=200, reading_direction="rtl", panels=[Panel(bbox=(0, 0, 100, 200))], texts=[]
    )
    write_artifact(path, good)
    assert read_artifact(path, PageReading) == good
    path.write_text(good.model_dump_json().replace('"width":100', '"width":"wide"'))
    with pytest.raises(ArtifactError, match=r"not a valid PageReading \(1 problem\(s\); first at width: "):
        read_artifact(path, PageReading)
    path.write_text("[1, 2]")
    with pytest.raises(ArtifactError, match=r"first at \(top level\): "):
        read_artifact(path, PageReading)
    # A cache entry that is missing is simply redone; a damaged one is redone with a warning naming it.
    with caplog.at_level(logging.WARNING, logger="comic_narrator"):
        assert read_cached_artifact(tmp_path / "absent.json", PageReading) is None
        assert not caplog.records
        assert read_cached_artifact(path, PageReading) is None
    assert "ignoring a damaged cache file" in caplog.text and str(path) in caplog.text
