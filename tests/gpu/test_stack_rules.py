"""`gpu up | down`'s own rules, each on its own: what is adopted, released, checked and stopped, and when not.

Real: the Stack, its subprocesses, HTTP on 127.0.0.1, the state file. Stand-ins, as in test_stack.py: vLLM
(standin_vllm.py) and NVML's readings, which are the H200's figures from tests/data/gpu/device-run.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from comic_narrator.errors import GpuError, ServerError
from comic_narrator.gpu import release
from comic_narrator.gpu.nvml import GpuProcess, GpuSnapshot
from comic_narrator.gpu.sizes import GIB
from comic_narrator.gpu.stack import Probe, Stack, http_ok
from comic_narrator.gpu.stackfile import Role
from comic_narrator.gpu.state import StackState, TenantState, read_state, write_state

from .conftest import DATA, free_port
from .test_stack import STANDIN, _llm, _stack, _tts
from .test_tenant_rules import running_tenant

H200_BYTES = 150_109_880_320
"""The H200's memory as CUDA counts it (139.80 GiB)."""
EMPTY_H200 = GpuSnapshot(0, "NVIDIA H200", H200_BYTES, H200_BYTES, 0, 0, ())
"""order-transcript.txt's preflight: nothing on the card."""
VLLM_BOOTED = GpuSnapshot(
    0,
    "NVIDIA H200",
    H200_BYTES,
    H200_BYTES - int(84.25 * GIB),
    int(84.25 * GIB),
    0,
    (GpuProcess(894, int(84.25 * GIB), "VLLM::EngineCore"),),
)
"""release-transcript.txt's vLLM at utilisation 0.6, once booted: its EngineCore holds 84.25 GiB."""
COTENANT = GpuSnapshot(
    0, "NVIDIA H200", H200_BYTES, int(69.2 * GIB), int(70.6 * GIB), 0, (GpuProcess(4242, int(70.6 * GIB), "tts"),)
)
"""c-cotenant-cached.log's card: a co-tenant's 70.6 GiB of cached blocks, 69.2 GiB free."""


@pytest.fixture
def said() -> list[str]:
    return []


def _readings(*snapshots: GpuSnapshot) -> Probe:
    """NVML read at each call: the snapshots in turn, the last one repeated."""
    left = list(snapshots)
    return lambda _index: left.pop(0) if len(left) > 1 else left[0]


@contextmanager
def running_llm(port: int, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """A vLLM stand-in started by hand, before `up`, and ready; what it prints after that is left in its stdout."""
    command = [sys.executable, STANDIN, "--port", str(port), "--boot-s", "0", *extra]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert any("Application startup complete" in line for line in proc.stdout)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_without_nvml_and_without_a_size_nothing_is_started(tmp_path: Path, said: list[str]) -> None:
    stack = Stack(replace(_stack(tmp_path, _llm(free_port()), None), gpu_memory_bytes=None), None, said.append)
    try:
        with pytest.raises(GpuError, match="no GPU size: NVML is unavailable; give gpu_memory"):
            stack.up()
    finally:
        stack.down(grace_s=10)
    assert stack.attempts == [] and said == []


def test_an_llm_already_healthy_is_adopted_never_put_to_sleep_and_left_running(tmp_path: Path, said: list[str]) -> None:
    llm = _llm(free_port())
    with running_llm(int(llm.url.rsplit(":", 1)[1])) as already:
        stack = Stack(_stack(tmp_path, llm, None, mode="timeshare"), None, said.append, poll_s=0.05)
        state = stack.up()
        assert stack.attempts == []
        assert said == [f"llm: already healthy at {llm.url}; adopted"]
        # It speaks no memory route, so its pid is unknown: 0, and no process group (not the caller's own).
        tenant = state.tenants[0]
        assert tenant.adopted and (tenant.pid, tenant.pgid, tenant.log_path) == (0, 0, "")
        assert state.timeshare is False  # not started with sleep mode, so never asked to sleep
        assert stack.down(grace_s=10) == ("llm: adopted at up, left running",)
        assert already.poll() is None and http_ok(llm.url + "/health")


def test_a_running_tts_without_a_release_endpoint_keeps_its_blocks(tmp_path: Path, said: list[str]) -> None:
    tts = replace(_tts(free_port()), release_path=None)
    with running_tenant(int(tts.url.rsplit(":", 1)[1]), cached_gib=0.02) as (proc, _line):
        stack = Stack(_stack(tmp_path, _llm(free_port()), tts), None, said.append, poll_s=0.05)
        state = stack.up()
        try:
            assert said[0] == "tts: running, and has no release endpoint: its cached blocks stay"
            assert release.read_memory(tts.url).reserved_bytes == int(0.02 * GIB)
            tenant = state.tenants[1]  # adopted: its pid read from its memory route, its group looked up
            assert tenant.adopted and tenant.pid == proc.pid and tenant.pgid > 0
        finally:
            stack.down(grace_s=10)


def test_auto_mode_without_a_tts_footprint_co_resides(tmp_path: Path, said: list[str]) -> None:
    stack = Stack(_stack(tmp_path, _llm(free_port()), _tts(free_port()), mode="auto"), None, said.append, poll_s=0.05)
    state = stack.up()
    try:
        assert "auto: no TTS footprint in the stack file; co-residing" in said
        assert state.timeshare is False and [t.adopted for t in state.tenants] == [False, False]
        # The TTS was not running at `up`: nothing to ask to release.
        assert not any("release" in line for line in said)
        assert "llm: preflight skipped (no NVML reading of free memory)" in said
    finally:
        stack.down(grace_s=10)


def test_auto_mode_reads_what_is_free_from_nvml_once_the_llm_has_booted(tmp_path: Path, said: list[str]) -> None:
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.6")
    # order-transcript.txt's TTS holds 22.60 GiB; beside vLLM's 84.25 GiB it fits, where the stack file's 32 GiB
    # at utilisation 0.6 would leave 12.30 GiB.
    tts = replace(_tts(free_port()), footprint_bytes=int(22.6 * GIB))
    stack = Stack(_stack(tmp_path, llm, tts, mode="auto"), _readings(EMPTY_H200, VLLM_BOOTED), said.append, 0.05)
    state = stack.up()
    try:
        # The preflight's line is the one `gpu up` printed on the H200 (order-transcript.txt), the command kept.
        assert (
            "llm: preflight ok: utilisation 0.6 requests 83.88 GiB; 139.30 GiB will be free after its CUDA context"
            in said
        )
        first = stack.attempts[0].command
        assert first[first.index("--gpu-memory-utilization") + 1] == "0.6"
        assert "auto: the TTS needs 23.60 GiB, 55.55 GiB is free: co-residing" in said
        assert state.timeshare is False
    finally:
        stack.down(grace_s=10)


def test_preflight_off_in_the_stack_file_keeps_the_utilisation(tmp_path: Path, said: list[str]) -> None:
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.6")
    stack = Stack(_stack(tmp_path, llm, None, preflight=False), _readings(COTENANT), said.append, poll_s=0.05)
    stack.up()
    try:
        assert "llm: preflight skipped (disabled in the stack file)" in said
        first = stack.attempts[0].command
        assert first[first.index("--gpu-memory-utilization") + 1] == "0.6"
    finally:
        stack.down(grace_s=10)


@pytest.mark.parametrize(
    ("auto_fix", "snapshot", "fitting"),
    [
        (False, COTENANT, "0.49"),  # a fix exists, but the stack file says not to apply it
        # Less free than vLLM's own CUDA context: no utilisation fits, even with fixes on.
        (True, replace(COTENANT, free_bytes=int(0.4 * GIB)), "0.00"),
    ],
)
def test_preflight_stops_before_any_boot_when_it_may_not_or_cannot_fix(
    tmp_path: Path, said: list[str], auto_fix: bool, snapshot: GpuSnapshot, fitting: str
) -> None:
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.6")
    stack = Stack(_stack(tmp_path, llm, None, auto_fix=auto_fix), _readings(snapshot), said.append, poll_s=0.05)
    try:
        with pytest.raises(GpuError, match=rf"free memory or pass --gpu-memory-utilization {fitting}$"):
            stack.up()
    finally:
        stack.down(grace_s=10)
    assert stack.attempts == []


def test_without_auto_fix_a_failed_boot_is_not_retried(tmp_path: Path, said: list[str]) -> None:
    """The real failed H200 boot of test_stack.py's retry test, which the doctor fixes with 0.48."""
    real_log = DATA / "device-run" / "retry-vllm-attempt1.log"
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.6", "--replay", str(real_log), "--replay-at", "0.6")
    stack = Stack(_stack(tmp_path, llm, None, auto_fix=False), None, said.append, poll_s=0.05)
    try:
        with pytest.raises(ServerError, match=r"llm did not start \(exited with status 1\)"):
            stack.up()
    finally:
        stack.down(grace_s=10)
    assert [a.outcome for a in stack.attempts] == ["exited with status 1"]
    assert not any("retrying" in line for line in said)


def tenant_state(
    role: Role, url: str, pid: int = 0, pgid: int = 0, memory_path: str | None = None, adopted: bool = False
) -> TenantState:
    """A tenant as `up` records it, named after its role."""
    return TenantState(role, role, pid, pgid, url, "/health", "", (role,), adopted, time.time(), memory_path)


def _record(tmp_path: Path, pid: int) -> Stack:
    """The state `up` writes for a tenant it started (pid and process group alike), without `up`."""
    write_state(tmp_path / "state", StackState(0, (tenant_state("tts", "http://127.0.0.1:9", pid, pid),)))
    return Stack(_stack(tmp_path, _llm(free_port()), None), None, print)


GRACEFUL = """
import pathlib, signal, sys, time
def stop(_signum, _frame):
    time.sleep(0.3)  # a server's own shutdown: its engine closed, its memory handed back
    pathlib.Path(sys.argv[1]).write_text("shut down")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def test_down_gives_a_tenant_its_grace_before_killing_it(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    command = [sys.executable, "-c", GRACEFUL, str(marker)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        assert _record(tmp_path, proc.pid).down(grace_s=10) == (f"tts: stopped (pid {proc.pid})",)
        assert marker.read_text() == "shut down"  # SIGTERM's handler ran to its end: no SIGKILL came first
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert read_state(tmp_path / "state") is None


def test_down_never_signals_process_group_zero(tmp_path: Path) -> None:
    # killpg(0) would signal the caller's own group: `gpu down` (here the test run) itself.
    assert _record(tmp_path, 0).down(grace_s=1) == ("tts: was not running (pid 0)",)
