"""--json-progress: every progress line is one JSON object, and the run ends with a summary event (real reader on
the bundled sample page; the narration's own summary fields are checked on the reading pass, which is quick)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from comic_narrator.cli import main
from comic_narrator.progress import Progress
from tests.conftest import SAMPLE_PAGE


def test_progress_lines_are_json_with_an_eta_field() -> None:
    stream = io.StringIO()
    progress = Progress(stream=stream, as_json=True)
    stage = progress.stage("voice", 4)
    stage.advance(detail="line 1")
    stage.finish()
    progress.note("cast: narrator joe")
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert events[0] == events[0] | {"event": "progress", "stage": "voice", "done": 1, "total": 4, "detail": "line 1"}
    assert events[0]["eta_s"] is None and events[0]["elapsed_s"] >= 0  # one line voiced: no pace yet
    assert events[1]["done"] == 4 and events[1]["eta_s"] == 0.0
    assert events[-1] == {"event": "note", "message": "cast: narrator joe"}
    # Without JSON the same stage prints the human line, and a summary event is not printed at all.
    human = io.StringIO()
    plain = Progress(stream=human)
    plain.stage("voice", 2).advance()
    plain.event({"event": "summary"})
    assert human.getvalue().startswith("[voice] 1/2 (") and "summary" not in human.getvalue()


def test_a_run_reports_json_progress_and_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sample.mp4"
    assert main([str(SAMPLE_PAGE), "-o", str(out), "--vision-only", "--json-progress"]) == 0
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.err.splitlines() if line.strip()]
    stages = {e["stage"] for e in events if e["event"] == "progress"}
    assert {"ingest", "read"} <= stages, stages
    assert not stages & {"voices", "render", "master"}, stages  # a reading-only run voices and masters nothing
    summary = events[-1]
    assert summary["event"] == "summary" and summary["pages"] == 1 and summary["failures"] == []
    assert summary["wall_s"] > 0 and Path(summary["reading"]).is_file() and summary["output"] is None
    assert captured.out == f"reading written to {summary['reading']}\n"  # no video, so no "wrote" line
    # the run's parts: ingest, then the stream (a reading-only run stops there)
    assert list(summary["stage_s"])[:2] == ["ingest", "stream"], summary["stage_s"]
    assert 0 < summary["stage_s"]["stream"] < summary["wall_s"]
    assert Path(summary["work_dir"]) == out.with_name("sample.mp4.work")


def test_the_books_audio_master_shows_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A first run masters the book's audio page by page as the pages are voiced (one step a page, landing on
    the loudness target, so nothing is mastered again); a run over an output that is no longer current masters
    after the last page (two measured passes through the limiter and the last: tens of seconds on a long book),
    reporting each page of each pass like any other stage."""
    out = tmp_path / "sample.mp4"
    args = [str(SAMPLE_PAGE), "-o", str(out), "--draft", "--voice-quality", "fast", "--json-progress"]

    def master_events(run: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        assert main(run) == 0
        events = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
        return events, [e for e in events if e["event"] == "progress" and e["stage"] == "master"]

    events, master = master_events(args)
    assert master, "no progress from the master"
    assert master[-1]["done"] == master[-1]["total"] == 1  # one page, streamed, on target: not mastered again
    assert [e["detail"] for e in master[:-1]] == ["page 1 mastered"]
    assert not any("mastered again" in e.get("message", "") for e in events)
    assert events.index(master[-1]) < len(events) - 1 and events[-1]["event"] == "summary"
    events, master = master_events([*args, "--music"])  # the output is there but its audio is not current
    assert master[-1]["done"] == master[-1]["total"] == 3  # one page: at most two measured passes and the last
    assert any(e["detail"].startswith("loudness pass 1: page 1 of 1") for e in master)
    assert events.index(master[-1]) < len(events) - 1 and events[-1]["event"] == "summary"
