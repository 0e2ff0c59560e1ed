"""The CLI's exit status and its one line for each way a run can end badly (README, "Errors"): 2 for a problem
with what was given, 1 for an internal error, 130 when interrupted; the traceback goes to the log, an earlier
output survives."""

from __future__ import annotations

from pathlib import Path

import pytest

from comic_narrator import pipeline
from comic_narrator.cli import main
from comic_narrator.errors import EngineError
from tests.conftest import SAMPLE_PAGE


@pytest.mark.parametrize(
    ("raised", "status", "fragment"),
    [
        (EngineError("the encoder is not installed"), 2, "error: the encoder is not installed"),
        (RuntimeError("the encoder went away"), 1, "error: internal error: RuntimeError: the encoder went away"),
        (KeyboardInterrupt(), 130, "interrupted: finished work is kept; re-run the same command to resume"),
    ],
)
def test_exit_status_and_one_line(
    raised: BaseException,
    status: int,
    fragment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(pipeline, "run", fail)
    out = tmp_path / "book.mp4"
    out.write_bytes(b"an earlier video")
    code = main([str(SAMPLE_PAGE), "-o", str(out), "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == status
    assert len(err) == 1, err
    assert err[0].startswith(fragment)
    log = Path(err[0].rsplit("(log: ", 1)[1].rstrip(")"))
    assert log.parent == tmp_path / "book.mp4.work"
    if status != 130:
        assert "Traceback" in log.read_text(encoding="utf-8")
    assert out.read_bytes() == b"an earlier video"
