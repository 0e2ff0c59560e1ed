"""`read` and `inspect` keep their work in the user's cache folder, not beside the user's files (real reader,
real bundled sample page; XDG_CACHE_HOME points at a temporary folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE


def test_read_leaves_nothing_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here, cache = tmp_path / "here", tmp_path / "cache"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert main(["read", str(SAMPLE_PAGE), "-q"]) == 0
    assert list(here.iterdir()) == []
    (work,) = (cache / "comic-narrator" / "work").iterdir()
    assert work.name.startswith(SAMPLE_PAGE.name) and list((work / "readings").glob("page-0001.*.json"))
    # The same input again reuses that folder; another input of the same name elsewhere gets its own.
    assert main(["read", str(SAMPLE_PAGE), "-q"]) == 0
    twin = tmp_path / "elsewhere" / SAMPLE_PAGE.name
    twin.parent.mkdir()
    twin.write_bytes(SAMPLE_PAGE.read_bytes())
    assert main(["read", str(twin), "-q"]) == 0
    assert len(list((cache / "comic-narrator" / "work").iterdir())) == 2


def test_reading_a_missing_input_creates_nothing_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))
    assert main(["read", "nothing-here.cbz", "-q"]) != 0
    assert [p.name for p in tmp_path.iterdir()] == [".cache"]
