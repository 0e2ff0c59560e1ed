"""The pipeline's view of a running stack, rule by rule: which tenant is which, when a release is asked, and which
turns wake or sleep vLLM. Real: the state file, HTTP on 127.0.0.1, the reference tenant; vLLM is standin_vllm.py,
whose /sleep and /wake_up answer 404 unless started with --enable-sleep-mode (as vLLM's do outside dev mode)."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from comic_narrator.errors import GpuError
from comic_narrator.gpu import release
from comic_narrator.gpu.session import RunningStack, Turns, running_stack
from comic_narrator.gpu.state import StackState, TenantState, write_state

from .conftest import free_port, free_ports
from .test_stack_rules import running_llm, tenant_state
from .test_tenant_rules import running_tenant

SLEPT = "sleep /sleep?level=1"
"""What the stand-in prints for each POST /sleep?level=1; it prints "wake_up" for each POST /wake_up."""


def _record(tmp_path: Path, *tenants: TenantState, timeshare: bool = False) -> Path:
    write_state(tmp_path / "state", StackState(0, tenants, timeshare))
    return tmp_path / "state"


def post(url: str) -> None:
    with urllib.request.urlopen(urllib.request.Request(url, method="POST", data=b""), timeout=10):
        return


@contextmanager
def _sleeping_llm(*extra: str) -> Iterator[tuple[str, list[str]]]:
    """A stand-in started with sleep mode and put to sleep as `gpu up` leaves it when time-sharing; on leaving,
    the list holds what it printed after that (each sleep and wake asked of it)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    printed: list[str] = []
    with running_llm(port, "--enable-sleep-mode", *extra) as proc:
        post(url + "/sleep?level=1")
        yield url, printed
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stdout is not None
        printed.extend(proc.stdout.read().splitlines()[1:])  # the first is up's own sleep


def test_a_stack_without_an_llm_is_a_clear_error(tmp_path: Path) -> None:
    state_dir = _record(tmp_path, tenant_state("tts", "http://127.0.0.1:9", memory_path=release.MEMORY_PATH))
    with pytest.raises(GpuError, match="has no LLM"):
        running_stack(state_dir)


def test_the_release_route_is_offered_only_for_a_tts_that_speaks_the_protocol(tmp_path: Path) -> None:
    llm_port, tts_port = free_ports(2)
    llm = tenant_state("llm", f"http://127.0.0.1:{llm_port}")
    tts_url = f"http://127.0.0.1:{tts_port}"
    with running_llm(llm_port), running_tenant(tts_port):
        alone = running_stack(_record(tmp_path, llm))
        assert (alone.llm_url, alone.tts_url, alone.tts_release_path) == (llm.url, None, None)
        speaking = running_stack(_record(tmp_path, llm, tenant_state("tts", tts_url, memory_path=release.MEMORY_PATH)))
        assert (speaking.llm_url, speaking.tts_url, speaking.tts_release_path) == (
            llm.url,
            tts_url,
            release.RELEASE_PATH,
        )
        silent = running_stack(_record(tmp_path, llm, tenant_state("tts", tts_url)))
        assert (silent.tts_url, silent.tts_release_path) == (tts_url, None)


def test_a_co_resident_stack_takes_its_turns_without_a_request() -> None:
    port = free_port()
    with running_llm(port):  # no sleep mode: a sleep or a wake would be answered 404, a ServerError here
        turns = Turns(RunningStack(f"http://127.0.0.1:{port}", None, timeshare=False))
        assert turns.llm_asleep() is False
        with turns.llm():
            pass
        with turns.tts():
            pass


def test_the_reading_turn_wakes_the_llm_without_a_release_when_the_tts_has_no_route() -> None:
    with _sleeping_llm() as (url, printed):
        turns = Turns(RunningStack(url, "http://127.0.0.1:9", timeshare=True, tts_release_path=None))
        with turns.llm():
            assert turns.llm_asleep() is False
        assert turns.llm_asleep() is True
    assert printed == ["wake_up", SLEPT]


def test_the_voicing_turn_sleeps_a_woken_llm_and_leaves_a_sleeping_one_alone() -> None:
    with _sleeping_llm() as (url, printed):
        turns = Turns(RunningStack(url, None, timeshare=True))
        with turns.tts():
            assert turns.llm_asleep() is True
        post(url + "/wake_up")  # something outside the turns woke it
        with turns.tts():
            assert turns.llm_asleep() is True
    assert printed == ["wake_up", SLEPT]
