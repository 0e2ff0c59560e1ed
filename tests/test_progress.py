"""Progress lines and events: the count, the ETA from the pace so far, throttling, work that grows, JSON events."""

from __future__ import annotations

import io
import json

import pytest

from comic_narrator import progress as progress_module
from comic_narrator.progress import Progress


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", fake)
    return fake


def test_lines_count_the_work_and_estimate_what_is_left_from_the_pace(clock: _Clock) -> None:
    out = io.StringIO()
    stage = Progress(out).stage("voice", 4)
    assert stage.eta_s() is None  # nothing done: no pace yet
    clock.now += 2.0
    stage.advance(detail="page 1")
    assert stage.eta_s() is None  # one item: the time before it may be a wait, not a pace
    clock.now += 2.0
    stage.advance()
    assert stage.eta_s() == pytest.approx(4.0)  # 2 s an item, 2 left
    clock.now += 0.1
    stage.advance()  # within half a second of the last line: counted, not printed
    clock.now += 0.1
    stage.advance(detail="done")  # the last item always prints, without an ETA
    assert out.getvalue().splitlines() == [
        "[voice] 1/4 (2.0s)  page 1",
        "[voice] 2/4 (4.0s ETA    4s)",
        "[voice] 4/4 (4.2s)  done",
    ]
    lines = io.StringIO()
    paced = Progress(lines).stage("voice", 9)
    for _ in range(3):
        clock.now += 0.6  # more than half a second since the last line: each one prints
        paced.advance()
    assert len(lines.getvalue().splitlines()) == 3
    assert stage.eta_s() == pytest.approx(0.0)


def test_work_that_grows_and_a_finish_that_comes_early(clock: _Clock) -> None:
    out = io.StringIO()
    stage = Progress(out).stage("render", 2)
    clock.now += 1.0
    stage.advance()
    stage.grow(3)
    stage.grow(-2)  # never shrinks
    assert stage.total == 5
    clock.now += 1.0
    stage.advance()
    assert stage.eta_s() == pytest.approx(3.0)  # 1 s an item, 3 left
    stage.finish("cancelled early")
    assert stage.done == 5
    assert out.getvalue().splitlines()[-1] == "[render] 5/5 (2.0s)  cancelled early"
    assert Progress(io.StringIO()).stage("empty", -3).total == 0


def test_the_pace_starts_at_the_first_item_and_follows_the_last_seconds(clock: _Clock) -> None:
    out = io.StringIO()
    stage = Progress(out).stage("render", 100)
    clock.now += 40.0  # the stages before it: a wait, not the render's pace
    stage.advance(10)
    clock.now += 1.0
    stage.advance(10)
    assert stage.eta_s() == pytest.approx(8.0)  # 10 items a second since the first, 80 left
    for _ in range(5):  # then one item a second
        clock.now += 1.0
        stage.advance()
    clock.now += 3.0  # and one in three seconds
    stage.advance()
    # the pace since the newest item at least 5 s old (3 items in 5 s), not since the first (16 in 9 s) nor over the
    # last item alone (1 in 3 s): 74 left
    assert stage.eta_s() == pytest.approx(74 * 5 / 3)
    assert out.getvalue().splitlines()[0] == "[render] 10/100 (40.0s)"
    sparse = Progress(io.StringIO()).stage("voices", 4)
    for step_s in (1.0, 1.0, 19.0):  # two items a second apart, then one 19 s later
        clock.now += step_s
        sparse.advance()
    assert sparse.eta_s() == pytest.approx(19.0)  # the window holds the last two items: 19 s an item, 1 left


def test_json_events_notes_and_quiet(clock: _Clock) -> None:
    out = io.StringIO()
    progress = Progress(out, as_json=True)
    stage = progress.stage("read", 3)
    clock.now += 1.0
    stage.advance()
    clock.now += 3.14159
    stage.advance(detail="ページ 2")
    progress.note("[stack] ready")
    progress.event({"event": "summary", "pages": 2})
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[0]["eta_s"] is None  # one page read: no pace yet
    assert events[1:] == [
        {
            "event": "progress",
            "stage": "read",
            "done": 2,
            "total": 3,
            "elapsed_s": 4.14,
            "eta_s": 3.1,
            "detail": "ページ 2",
        },
        {"event": "note", "message": "[stack] ready"},
        {"event": "summary", "pages": 2},
    ]
    assert "ページ" in out.getvalue()  # not escaped
    single = io.StringIO()
    Progress(single, as_json=True).stage("join", 1).advance()
    assert json.loads(single.getvalue())["eta_s"] == 0.0  # done: nothing left, not unknown
    prose = io.StringIO()
    Progress(prose).event({"event": "summary"})  # prose runs print their own summary
    quiet = Progress(prose, quiet=True)
    quiet.note("x")
    quiet.stage("read", 1).advance()
    assert prose.getvalue() == ""
