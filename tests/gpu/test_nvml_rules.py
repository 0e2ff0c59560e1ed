"""The NVML probe's own logic on the CPU: which GPU exists, a process whose memory NVML cannot tell, where a
process's name comes from. Real: /proc, the processes named, and nvidia-ml-py itself for names (uninitialised here,
as on a machine without the driver, its calls raise). For probe(), whose every call needs the driver, the library
is replaced by a unit-test stand-in holding one H200 (the card of tests/data/gpu/device-run); the GPU run of
test_device_release.py reads a real one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace

import pynvml
import pytest

from comic_narrator.errors import GpuError
from comic_narrator.gpu import nvml
from comic_narrator.gpu.sizes import GIB, MIB

from .test_stack_rules import H200_BYTES

RESERVED_BYTES = 512 * MIB
"""The driver's reserved part, a chosen figure: NVML's v2 total includes it and CUDA's total does not."""
SLEEPER = [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
"""Says when it runs: until its exec is done, /proc shows an empty command line."""


def _start(command: list[str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[str]]:
    proc = _start(SLEEPER)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


class _OneH200:
    """nvidia-ml-py's calls that probe() makes, answered for one H200: 84.25 GiB held by one process (vLLM's engine
    on the H200) and a process NVML has no figure for (NVML's "value not available", which nvidia-ml-py hands back
    as a usedGpuMemory of None)."""

    nvmlMemory_v2 = pynvml.nvmlMemory_v2

    def __init__(self, engine_pid: int, unknown_pid: int) -> None:
        self.processes = [
            SimpleNamespace(pid=unknown_pid, usedGpuMemory=None),
            SimpleNamespace(pid=engine_pid, usedGpuMemory=int(84.25 * GIB)),
        ]
        self.shut_down = False

    def nvmlInit(self) -> None:
        return None

    def nvmlShutdown(self) -> None:
        self.shut_down = True

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:
        if index != 0:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return "handle-0"

    def nvmlDeviceGetName(self, _handle: str) -> bytes:
        return b"NVIDIA H200"

    def nvmlDeviceGetMemoryInfo(self, _handle: str, version: int = 0) -> SimpleNamespace:
        used = int(84.25 * GIB)
        total = H200_BYTES + RESERVED_BYTES
        return SimpleNamespace(total=total, reserved=RESERVED_BYTES, used=used, free=total - RESERVED_BYTES - used)

    def nvmlDeviceGetComputeRunningProcesses(self, _handle: str) -> list[SimpleNamespace]:
        return self.processes


def test_probe_reads_the_card_and_counts_a_process_without_a_figure_as_zero(
    monkeypatch: pytest.MonkeyPatch, sleeper: subprocess.Popen[str]
) -> None:
    library = _OneH200(engine_pid=os.getpid(), unknown_pid=sleeper.pid)
    monkeypatch.setitem(sys.modules, "pynvml", library)
    snap = nvml.probe(0)
    assert (snap.name, snap.total_bytes, snap.reserved_bytes) == ("NVIDIA H200", H200_BYTES, RESERVED_BYTES)
    assert (snap.used_bytes, snap.free_bytes) == (int(84.25 * GIB), H200_BYTES - int(84.25 * GIB))
    assert [(p.pid, p.used_bytes) for p in snap.processes] == [(os.getpid(), int(84.25 * GIB)), (sleeper.pid, 0)]
    assert snap.processes[1].name == " ".join(SLEEPER)  # its command line, from /proc
    assert library.shut_down


def test_probe_names_a_gpu_index_that_is_not_there(monkeypatch: pytest.MonkeyPatch) -> None:
    library = _OneH200(engine_pid=os.getpid(), unknown_pid=os.getpid())
    monkeypatch.setitem(sys.modules, "pynvml", library)
    with pytest.raises(GpuError, match=r"^GPU 1 does not exist: NVML sees 1 GPU\(s\)$"):
        nvml.probe(1)
    assert library.shut_down


def test_a_process_is_named_by_its_command_line_cut_at_120_else_by_nvml_else_unknown() -> None:
    command = [*SLEEPER, "x" * 150]
    proc = _start(command)
    try:
        assert nvml._process_name(pynvml, proc.pid) == " ".join(command)[:120]
    finally:
        proc.kill()
        # Exited and left unreaped (WNOWAIT): a zombie, whose /proc cmdline is empty; NVML, uninitialised here,
        # has no name for it either.
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        assert nvml._process_name(pynvml, proc.pid) == "?"
        proc.wait(timeout=10)


def test_held_by_sums_the_given_pids_only(sleeper: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _OneH200(engine_pid=os.getpid(), unknown_pid=sleeper.pid))
    snap = nvml.probe(0)
    assert snap.held_by(frozenset({os.getpid()})) == int(84.25 * GIB)
    assert snap.held_by(frozenset({sleeper.pid})) == 0 and snap.held_by(frozenset()) == 0
