"""The NVML probe: device memory (as CUDA counts it) and each process's share, through nvidia-ml-py."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from comic_narrator.errors import GpuError


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    used_bytes: int
    name: str


@dataclass(frozen=True)
class GpuSnapshot:
    """One reading of one GPU. total_bytes excludes the driver-reserved part, as CUDA (and vLLM) count it."""

    index: int
    name: str
    total_bytes: int
    free_bytes: int
    used_bytes: int
    reserved_bytes: int
    processes: tuple[GpuProcess, ...]

    def held_by(self, pids: frozenset[int]) -> int:
        return sum(p.used_bytes for p in self.processes if p.pid in pids)


def _process_name(nvml: Any, pid: int) -> str:
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        parts = cmdline.read_bytes().split(b"\0")
        text = " ".join(p.decode(errors="replace") for p in parts if p)
        if text:
            return text[:120]
    except OSError:
        pass
    try:
        raw = nvml.nvmlSystemGetProcessName(pid)
        return raw.decode() if isinstance(raw, bytes) else str(raw)
    except Exception:  # NVML raises its own error classes; a name is only cosmetic
        return "?"


def _load_nvml() -> Any:
    try:
        import pynvml
    except ImportError as exc:
        raise GpuError(
            "NVML is not available (nvidia-ml-py missing): give the GPU size with --gpu-memory 32GiB"
        ) from exc
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        raise GpuError(f"NVML is not available ({exc}): no NVIDIA driver here; give --gpu-memory 32GiB") from exc
    return pynvml


def probe(index: int = 0) -> GpuSnapshot:
    """Read GPU `index` now: total/free/used and every compute process with its memory."""
    nvml = _load_nvml()
    try:
        count = nvml.nvmlDeviceGetCount()
        if index >= count:
            raise GpuError(f"GPU {index} does not exist: NVML sees {count} GPU(s)")
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        raw_name = nvml.nvmlDeviceGetName(handle)
        name = raw_name.decode() if isinstance(raw_name, bytes) else str(raw_name)
        reserved = 0
        try:
            info = nvml.nvmlDeviceGetMemoryInfo(handle, version=nvml.nvmlMemory_v2)
            reserved = int(info.reserved)
        except Exception:  # older drivers: v1 only (used then includes the reserved part)
            info = nvml.nvmlDeviceGetMemoryInfo(handle)
        processes: list[GpuProcess] = []
        for proc in nvml.nvmlDeviceGetComputeRunningProcesses(handle):
            used = int(proc.usedGpuMemory) if proc.usedGpuMemory is not None else 0
            processes.append(GpuProcess(int(proc.pid), used, _process_name(nvml, int(proc.pid))))
        return GpuSnapshot(
            index=index,
            name=name,
            total_bytes=int(info.total) - reserved,
            free_bytes=int(info.free),
            used_bytes=int(info.used),
            reserved_bytes=reserved,
            processes=tuple(sorted(processes, key=lambda p: -p.used_bytes)),
        )
    except GpuError:
        raise
    except Exception as exc:
        raise GpuError(f"NVML could not read GPU {index} ({exc})") from exc
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def process_group_of(pid: int) -> int | None:
    """The process group of a pid (tenants start in their own group, so children such as vLLM's EngineCore
    are counted with their server)."""
    try:
        return os.getpgid(pid)
    except OSError:
        return None
