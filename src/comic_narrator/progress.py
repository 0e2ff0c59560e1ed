"""Progress reporting for long work: stage name, items done/total, elapsed and ETA, on stderr."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from typing import TextIO

PACE_WINDOW_S = 5.0
"""The ETA's pace is taken over at least the last this many seconds of finished items, from the stage's first
finished item on, never from when the stage was set up: a streamed stage waits for the stages before it, and that
wait is no pace. On the bundled manga sample (`--layout manga`, 2 cores) the first render line said ETA 2422 s
with 21 s left when the pace ran from the stage's start; over all of a run's lines the ETA was off by a factor of
e^1.06 on average that way and e^0.63 this way (one run each). A stage slowed by the stages beside it on the same
cores still reads slow until they finish: its worst line in the second run was 1163 s with 23 s left."""


class StageProgress:
    """Counts finished items of one stage and prints a line per step (throttled) with an ETA."""

    def __init__(
        self, name: str, total: int, stream: TextIO | None, min_interval_s: float = 0.5, as_json: bool = False
    ) -> None:
        self.name = name
        self._as_json = as_json
        self.total = max(total, 0)
        self.done = 0
        self._stream = stream
        self._started_s = time.monotonic()
        self._last_print_s = 0.0
        self._min_interval_s = min_interval_s
        self._lock = threading.Lock()
        self._ticks: deque[tuple[float, int]] = deque()
        """(time, items done) at each advance: the oldest kept is the newest at least PACE_WINDOW_S old."""

    def advance(self, n: int = 1, detail: str = "") -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            self._ticks.append((now, self.done))
            while len(self._ticks) > 2 and self._ticks[1][0] <= now - PACE_WINDOW_S:
                self._ticks.popleft()
            last = self.done >= self.total
            if last or now - self._last_print_s >= self._min_interval_s:
                self._last_print_s = now
                self._emit(detail)

    def grow(self, n: int) -> None:
        """More work became known (pages streaming in hand over their frames as they are planned)."""
        with self._lock:
            self.total += max(n, 0)

    def eta_s(self) -> float | None:
        """Seconds left at the recent pace: 0 when done, None before two items have finished."""
        if self.total <= 0 or self.done <= 0:
            return None
        if self.done >= self.total:
            return 0.0
        since_s, since_done = self._ticks[0]
        if self.done <= since_done:
            return None
        return (time.monotonic() - since_s) / (self.done - since_done) * (self.total - self.done)

    def _emit(self, detail: str) -> None:
        if self._stream is None:
            return
        eta = self.eta_s()
        elapsed = time.monotonic() - self._started_s
        if self._as_json:
            event = {"event": "progress", "stage": self.name, "done": self.done, "total": self.total}
            event |= {"elapsed_s": round(elapsed, 2), "eta_s": None if eta is None else round(eta, 1)}
            self._stream.write(json.dumps(event | {"detail": detail}, ensure_ascii=False) + "\n")
            self._stream.flush()
            return
        eta_text = f" ETA {eta:4.0f}s" if eta is not None and self.done < self.total else ""
        suffix = f"  {detail}" if detail else ""
        self._stream.write(f"[{self.name}] {self.done}/{self.total} ({elapsed:.1f}s{eta_text}){suffix}\n")
        self._stream.flush()

    def finish(self, detail: str = "") -> None:
        with self._lock:
            if self.done < self.total:
                self.done = self.total
            self._emit(detail)


class Progress:
    """Hands out one StageProgress per stage; ``quiet`` silences everything; ``as_json`` writes one JSON object
    a line (``{"event": "progress", "stage", "done", "total", "elapsed_s", "eta_s", "detail"}``, notes as
    ``{"event": "note", "message"}``) for scripts that follow a run."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, as_json: bool = False) -> None:
        self._stream = None if quiet else (stream if stream is not None else sys.stderr)
        self.as_json = as_json

    def stage(self, name: str, total: int) -> StageProgress:
        return StageProgress(name, total, self._stream, as_json=self.as_json)

    def note(self, message: str) -> None:
        if self._stream is not None:
            line = json.dumps({"event": "note", "message": message}, ensure_ascii=False) if self.as_json else message
            self._stream.write(line + "\n")
            self._stream.flush()

    def event(self, payload: dict[str, object]) -> None:
        """A structured event (the run's summary): JSON with ``as_json``, else nothing (the CLI prints prose)."""
        if self._stream is not None and self.as_json:
            self._stream.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")
            self._stream.flush()


SILENT = Progress(quiet=True)
