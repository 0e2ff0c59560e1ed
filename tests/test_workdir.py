"""Files written atomically get the permissions the user's umask gives any new file, not mkstemp's 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from comic_narrator.backends.protocols import Speech
from comic_narrator.voice.synthesis import write_wav_atomic
from comic_narrator.workdir import atomic_temp_path, atomic_write_bytes


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
