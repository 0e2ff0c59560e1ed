"""The TTS memory release protocol: a GPU tenant hands its cached allocator blocks back to the driver on request.

Why: a PyTorch server keeps freed tensors as cached blocks; NVML and vLLM's start-up check count them as used
(measured: 70 GiB cached made vLLM's boot fail; `torch.cuda.empty_cache()` cured it). The protocol, over HTTP on
the tenant's own port (any server this project starts mounts `handle_gpu_request`):

  GET  /v1/gpu/memory   -> 200 {"pid", "backend", "allocated_bytes", "reserved_bytes"}
  POST /v1/gpu/release  -> 200 {"pid", "backend", "reserved_before_bytes", "reserved_after_bytes", "released_bytes"}

and, for a tenant without HTTP, the signal SIGUSR1 (`install_release_signal`) does the same release.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from types import FrameType
from typing import Any

from comic_narrator.errors import ServerError

MEMORY_PATH = "/v1/gpu/memory"
RELEASE_PATH = "/v1/gpu/release"


@dataclass(frozen=True)
class TenantMemory:
    """What a tenant's own allocator holds (reserved = allocated + cached blocks)."""

    pid: int
    backend: str
    allocated_bytes: int
    reserved_bytes: int


@dataclass(frozen=True)
class ReleaseReport:
    pid: int
    backend: str
    reserved_before_bytes: int
    reserved_after_bytes: int
    released_bytes: int


class _Hold:
    """Bytes a CPU-only tenant keeps as its stand-in 'cache' (so the protocol runs where there is no GPU)."""

    buffer: bytearray = bytearray()


def hold_cpu_cache(num_bytes: int) -> None:
    _Hold.buffer = bytearray(num_bytes)


def _torch_cuda() -> Any | None:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def memory_report() -> TenantMemory:
    """This process's allocator figures: PyTorch's CUDA caching allocator, or the CPU stand-in."""
    torch = _torch_cuda()
    if torch is None:
        held = len(_Hold.buffer)
        return TenantMemory(os.getpid(), "cpu", 0, held)
    return TenantMemory(
        os.getpid(), "torch-cuda", int(torch.cuda.memory_allocated()), int(torch.cuda.memory_reserved())
    )


def release_cached_memory() -> ReleaseReport:
    """Return cached blocks to the driver: gc, then torch.cuda.empty_cache() (live tensors stay)."""
    before = memory_report()
    gc.collect()
    torch = _torch_cuda()
    if torch is None:
        _Hold.buffer = bytearray()
    else:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    after = memory_report()
    released = max(before.reserved_bytes - after.reserved_bytes, 0)
    return ReleaseReport(os.getpid(), after.backend, before.reserved_bytes, after.reserved_bytes, released)


def install_release_signal(signum: int = signal.SIGUSR1) -> None:
    """Release cached memory whenever the process receives `signum` (for tenants without HTTP)."""

    def _handler(_signum: int, _frame: FrameType | None) -> None:
        release_cached_memory()

    signal.signal(signum, _handler)


def handle_gpu_request(method: str, path: str) -> tuple[int, bytes] | None:
    """Serve the protocol inside any HTTP server: (status, JSON body), or None when the path is not ours."""
    route = path.split("?", 1)[0]
    if route == MEMORY_PATH and method == "GET":
        return 200, json.dumps(asdict(memory_report())).encode()
    if route == RELEASE_PATH and method == "POST":
        return 200, json.dumps(asdict(release_cached_memory())).encode()
    if route in (MEMORY_PATH, RELEASE_PATH):
        return 405, b'{"error": "method not allowed"}'
    return None


def _call(url: str, method: str, timeout_s: float) -> dict[str, Any]:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            payload = json.loads(response.read())
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
        raise ServerError(
            f"{method} {url} failed ({exc}): is the tenant up and does it speak the release protocol?"
        ) from exc
    if not isinstance(payload, dict):
        raise ServerError(f"{method} {url} answered {payload!r}, not a JSON object")
    return payload


def request_release(base_url: str, path: str = RELEASE_PATH, timeout_s: float = 30.0) -> ReleaseReport:
    """Ask a tenant to release its cached memory; returns what it says it freed."""
    data = _call(base_url.rstrip("/") + path, "POST", timeout_s)
    try:
        return ReleaseReport(
            int(data["pid"]),
            str(data["backend"]),
            int(data["reserved_before_bytes"]),
            int(data["reserved_after_bytes"]),
            int(data["released_bytes"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ServerError(f"POST {base_url}{path} answered without the release fields ({exc})") from exc


def read_memory(base_url: str, path: str = MEMORY_PATH, timeout_s: float = 5.0) -> TenantMemory:
    data = _call(base_url.rstrip("/") + path, "GET", timeout_s)
    try:
        return TenantMemory(
            int(data["pid"]), str(data["backend"]), int(data["allocated_bytes"]), int(data["reserved_bytes"])
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ServerError(f"GET {base_url}{path} answered without the memory fields ({exc})") from exc
