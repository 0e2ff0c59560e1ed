"""Spreading requests over the endpoints of one service by load, each within its own slots, skipping dead ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from comic_narrator.config import split_urls

T = TypeVar("T")

REST_S = 30.0
"""How long an endpoint that refused a connection is passed over before it is tried again."""


class Unreachable(Exception):
    """Raised by a request function when its endpoint could not be reached (refused, reset, no route): the
    balancer rests that endpoint and sends the request to another one."""

    def __init__(self, reason: object) -> None:
        self.reason = reason
        super().__init__(str(reason))


class AllUnreachable(Exception):
    """No endpoint could be reached; ``failures`` holds (url, reason) for each one tried, in the order tried."""

    def __init__(self, failures: list[tuple[str, object]]) -> None:
        self.failures = failures
        super().__init__("; ".join(f"{url}: {reason}" for url, reason in failures))

    @property
    def urls(self) -> str:
        return ", ".join(url for url, _ in self.failures)

    @property
    def reasons(self) -> str:
        if len(self.failures) == 1:
            return str(self.failures[0][1])
        return "; ".join(f"{url}: {reason}" for url, reason in self.failures)


class Balancer:
    """Hands out endpoints for requests: at most ``slots`` requests in flight per endpoint (a caller waits for a
    free slot), the endpoint with the fewest in flight first, ties in turn. Thread-safe; no I/O of its own."""

    def __init__(
        self, urls: str | Sequence[str], slots: int, rest_s: float = REST_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.urls: tuple[str, ...] = split_urls(urls) if isinstance(urls, str) else tuple(u.rstrip("/") for u in urls)
        if not self.urls:
            raise ValueError("a balancer needs at least one endpoint")
        self.slots = max(1, slots)
        self._rest_s = rest_s
        self._clock = clock
        self._in_flight = dict.fromkeys(self.urls, 0)
        self._resting_until = dict.fromkeys(self.urls, 0.0)
        self._turn = 0
        self._changed = threading.Condition()

    @property
    def capacity(self) -> int:
        """Requests in flight across all endpoints at most: how many workers can keep every endpoint busy."""
        return self.slots * len(self.urls)

    def in_flight(self) -> dict[str, int]:
        with self._changed:
            return dict(self._in_flight)

    def call(self, request: Callable[[str], T], *, in_order: bool = False) -> T:
        """``request(url)`` on one endpoint; when it raises :class:`Unreachable`, that endpoint rests and the next
        one is tried, until each has been tried once (then :class:`AllUnreachable`). ``in_order`` tries the
        endpoints in the configured order instead of by load (for listings that the first endpoint answers)."""
        failures: list[tuple[str, object]] = []
        tried: set[str] = set()
        while len(tried) < len(self.urls):
            url = self._acquire(tried, in_order)
            try:
                return request(url)
            except Unreachable as exc:
                failures.append((url, exc.reason))
                tried.add(url)
                self._rest(url)
            finally:
                self._release(url)
        raise AllUnreachable(failures)

    def each(self, request: Callable[[str], T], *, skip_unreachable: bool = False) -> list[tuple[str, T]]:
        """``request(url)`` on every endpoint in order, within each one's slots, for what all of them must agree
        on or hold (the model served, a registered voice): (url, answer) pairs. An endpoint that raises
        :class:`Unreachable` rests, and is left out when ``skip_unreachable`` (unless all are), else raises
        :class:`AllUnreachable`."""
        answers: list[tuple[str, T]] = []
        failures: list[tuple[str, object]] = []
        for url in self.urls:
            with self._slot(url):
                try:
                    answers.append((url, request(url)))
                except Unreachable as exc:
                    self._rest(url)
                    failures.append((url, exc.reason))
                    if not skip_unreachable:
                        raise AllUnreachable(failures) from exc
        if not answers:
            raise AllUnreachable(failures)
        return answers

    # ------------------------------------------------------------------------------------------ slots

    @contextmanager
    def _slot(self, url: str) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: self._in_flight[url] < self.slots)
            self._in_flight[url] += 1
        try:
            yield
        finally:
            self._release(url)

    def _acquire(self, tried: set[str], in_order: bool) -> str:
        """Wait for a free slot on an endpoint not yet tried for this request: one that is not resting if any
        is left, else a resting one (so a request still gets an answer or an error when all are resting)."""
        with self._changed:
            while True:
                now = self._clock()
                untried = [u for u in self.urls if u not in tried]
                awake = [u for u in untried if self._resting_until[u] <= now]
                pool = awake or untried
                url = self._pick([u for u in pool if self._in_flight[u] < self.slots], in_order)
                if url is not None:
                    self._in_flight[url] += 1
                    return url
                # Every candidate is full: wait for a release, or for a rest to end (which may add a candidate).
                ends = [self._resting_until[u] - now for u in untried if self._resting_until[u] > now]
                self._changed.wait(timeout=min(ends) if ends and awake else None)

    def _pick(self, free: list[str], in_order: bool) -> str | None:
        if not free:
            return None
        if in_order:
            return free[0]
        fewest = min(self._in_flight[u] for u in free)
        order = {url: i for i, url in enumerate(self.urls)}
        n = len(self.urls)
        # Ties go round robin: the first least-loaded endpoint at or after the turn pointer.
        url = min((u for u in free if self._in_flight[u] == fewest), key=lambda u: (order[u] - self._turn) % n)
        self._turn = (order[url] + 1) % n
        return url

    def _release(self, url: str) -> None:
        with self._changed:
            self._in_flight[url] -= 1
            self._changed.notify_all()

    def _rest(self, url: str) -> None:
        with self._changed:
            self._resting_until[url] = self._clock() + self._rest_s
            self._changed.notify_all()
