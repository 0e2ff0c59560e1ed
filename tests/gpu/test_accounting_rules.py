"""`gpu status`'s accounting, rule by rule, over real processes: a server whose engine runs in a child process of
its group (as vLLM's EngineCore does), a tenant known by pid alone, a process outside the stack. The NVML reading
is the one `gpu up` printed on the H200 once both tenants were up (device-run/release-transcript.txt), its pids
replaced by these processes'."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from comic_narrator.gpu.accounting import describe_snapshot, tenant_status
from comic_narrator.gpu.nvml import GpuProcess, GpuSnapshot
from comic_narrator.gpu.sizes import GIB

from .conftest import free_port
from .test_session_rules import post
from .test_stack_rules import EMPTY_H200, H200_BYTES, running_llm, tenant_state

SERVER = """
import subprocess, sys
engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(engine.pid, flush=True)
engine.wait()
"""


@pytest.fixture
def server() -> Iterator[tuple[int, int]]:
    """A server in a process group of its own and its engine, a child in that group: (server pid, engine pid)."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        yield proc.pid, int(proc.stdout.readline())
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _reading(engine_pid: int) -> GpuSnapshot:
    processes = (
        GpuProcess(engine_pid, int(84.25 * GIB), "VLLM::EngineCore"),
        GpuProcess(os.getpid(), int(1.60 * GIB), "python3 -m comic_narrator.gpu.tenant"),
        GpuProcess(1, int(0.50 * GIB), "python3 other_job.py"),
    )
    return GpuSnapshot(0, "NVIDIA H200", H200_BYTES, int(53.94 * GIB), int(85.86 * GIB), 0, processes)


def test_each_process_is_counted_with_the_tenant_whose_pid_or_group_it_has(server: tuple[int, int]) -> None:
    server_pid, engine_pid = server
    llm = tenant_state("llm", "http://127.0.0.1:9", server_pid, server_pid)
    tts = tenant_state("tts", "http://127.0.0.1:9", os.getpid(), 0, adopted=True)  # its group unknown: by pid alone
    snap = _reading(engine_pid)
    assert describe_snapshot(snap, (llm, tts)) == (
        "NVIDIA H200 #0: total 139.80 GiB, used 85.86 GiB, free 53.94 GiB",
        f"  pid {engine_pid:>7}   84.25 GiB  llm              VLLM::EngineCore",
        f"  pid {os.getpid():>7}    1.60 GiB  tts              python3 -m comic_narrator.gpu.tenant",
        "  pid       1    0.50 GiB  not in the stack python3 other_job.py",
    )
    vllm_status = tenant_status(llm, snap, alive=True, healthy=False)
    assert (vllm_status.gpu_pids, vllm_status.gpu_bytes) == ((engine_pid,), int(84.25 * GIB))
    tts_status = tenant_status(tts, snap, alive=True, healthy=False)
    assert (tts_status.gpu_pids, tts_status.gpu_bytes) == ((os.getpid(),), int(1.60 * GIB))
    unread = tenant_status(llm, None, alive=True, healthy=False)
    assert (unread.gpu_pids, unread.gpu_bytes) == ((), None)


def test_a_card_without_compute_processes_says_so() -> None:
    # The lines `gpu up` printed on the H200 before starting anything (device-run/pytest-tests-gpu.txt).
    assert describe_snapshot(EMPTY_H200) == (
        "NVIDIA H200 #0: total 139.80 GiB, used 0.00 GiB, free 139.80 GiB",
        "  no compute processes",
    )


def test_sleep_is_asked_only_of_a_healthy_llm() -> None:
    """vLLM's API server answers its other routes while /health reports a dead engine: such a server is not
    reported asleep."""
    port = free_port()
    with running_llm(port, "--enable-sleep-mode"):
        url = f"http://127.0.0.1:{port}"
        post(url + "/sleep?level=1")
        llm = tenant_state("llm", url)
        assert tenant_status(llm, None, alive=True, healthy=True).asleep is True
        assert tenant_status(llm, None, alive=True, healthy=False).asleep is None
        assert tenant_status(tenant_state("tts", url), None, alive=True, healthy=True).asleep is None
