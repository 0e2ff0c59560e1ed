"""The pipeline's view of a stack that `gpu up` started: its URLs, and whose turn the GPU is when time-sharing.

The pipeline does not switch modes itself: it asks `running_stack(state_dir)` for the servers, and wraps its
reading phase in `turns.llm()` and its voicing phase in `turns.tts()`. In a co-resident stack both are no-ops;
in a time-shared one (the LLM sleeps while the TTS works) they wake and sleep vLLM, so the run becomes the
two-pass flow: read every page, then voice everything.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from comic_narrator.errors import GpuError, ServerError
from comic_narrator.gpu import release
from comic_narrator.gpu.state import read_state


@dataclass(frozen=True)
class RunningStack:
    llm_url: str
    tts_url: str | None
    timeshare: bool
    tts_release_path: str | None = None

    @property
    def openai_base_url(self) -> str:
        """What an OpenAI client takes (vLLM serves /v1/chat/completions)."""
        return self.llm_url.rstrip("/") + "/v1"


def _get(url: str, timeout_s: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return bytes(response.read())


def running_stack(state_dir: Path) -> RunningStack:
    """The stack recorded by `gpu up` in state_dir; fails loudly when it is not up or a server is down."""
    state = read_state(state_dir)
    if state is None:
        raise GpuError(f"no GPU stack is up in {state_dir}: run `comic-narrator gpu up STACK.yaml` first")
    llm = next((t for t in state.tenants if t.role == "llm"), None)
    tts = next((t for t in state.tenants if t.role == "tts"), None)
    if llm is None:
        raise GpuError(f"the stack in {state_dir} has no LLM")
    for tenant in (llm, tts):
        if tenant is None:
            continue
        try:
            _get(tenant.url + tenant.health_path)
        except (urllib.error.URLError, OSError) as exc:
            raise ServerError(
                f"{tenant.name} at {tenant.url} is down ({exc}): run `comic-narrator gpu up` again"
            ) from exc
    return RunningStack(
        llm_url=llm.url,
        tts_url=tts.url if tts else None,
        timeshare=state.timeshare,
        tts_release_path=release.RELEASE_PATH if tts and tts.memory_path else None,
    )


class Turns:
    """Whose turn the GPU is. The constructor does no I/O; each turn wakes or sleeps vLLM only when time-sharing."""

    def __init__(self, stack: RunningStack, sleep_level: int = 1, timeout_s: float = 900.0) -> None:
        self.stack = stack
        self.sleep_level = sleep_level
        self.timeout_s = timeout_s

    def _post(self, path: str) -> None:
        request = urllib.request.Request(self.stack.llm_url + path, method="POST", data=b"")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s):
                return
        except (urllib.error.URLError, OSError) as exc:
            raise ServerError(f"POST {self.stack.llm_url}{path} failed ({exc}): was vLLM started by `gpu up`?") from exc

    def llm_asleep(self) -> bool | None:
        try:
            data = json.loads(_get(self.stack.llm_url + "/is_sleeping"))
        except (urllib.error.URLError, OSError, ValueError):
            return None
        value = data.get("is_sleeping") if isinstance(data, dict) else None
        return value if isinstance(value, bool) else None

    @contextmanager
    def llm(self) -> Iterator[None]:
        """The reading phase: the TTS releases its cache, vLLM wakes; afterwards vLLM sleeps again."""
        if not self.stack.timeshare:
            yield
            return
        if self.stack.tts_url and self.stack.tts_release_path:
            release.request_release(self.stack.tts_url, self.stack.tts_release_path)
        self._post("/wake_up")
        try:
            yield
        finally:
            self._post(f"/sleep?level={self.sleep_level}")

    @contextmanager
    def tts(self) -> Iterator[None]:
        """The voicing phase: vLLM must be asleep (it is put to sleep if something woke it)."""
        if self.stack.timeshare and self.llm_asleep() is False:
            self._post(f"/sleep?level={self.sleep_level}")
        yield
