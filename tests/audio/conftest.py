"""The sample page narrated once for the sound tests (fast voices, draft picture): its MP4 and work folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator.cli import main
from tests.conftest import SAMPLE_PAGE


@pytest.fixture(scope="session")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sound") / "page.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--voice-quality", "fast", "--draft", "-q"]) == 0
    return out


def work_of(output: Path) -> Path:
    return output.with_name(output.name + ".work")
