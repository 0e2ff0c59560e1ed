"""Per-tenant GPU accounting and `gpu status`: which process (group) holds how much, by NVML or self-report."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

from comic_narrator.errors import ServerError
from comic_narrator.gpu import release
from comic_narrator.gpu.nvml import GpuSnapshot, process_group_of
from comic_narrator.gpu.sizes import format_gib
from comic_narrator.gpu.state import TenantState


@dataclass(frozen=True)
class TenantStatus:
    name: str
    role: str
    pid: int
    alive: bool
    healthy: bool
    gpu_bytes: int | None
    """NVML: memory of every process in the tenant's process group (vLLM's EngineCore included)."""
    gpu_pids: tuple[int, ...]
    reported_reserved_bytes: int | None
    """The tenant's own allocator figure from the release protocol's memory endpoint."""
    asleep: bool | None = None
    """vLLM sleep mode (GET /is_sleeping, served in dev mode only); None when unknown."""


def tenant_pids(snap: GpuSnapshot, tenant: TenantState) -> tuple[int, ...]:
    """GPU processes that belong to the tenant: its pid or any process in its process group."""
    found = []
    for proc in snap.processes:
        if proc.pid == tenant.pid or (tenant.pgid > 0 and process_group_of(proc.pid) == tenant.pgid):
            found.append(proc.pid)
    return tuple(found)


def describe_snapshot(snap: GpuSnapshot, tenants: tuple[TenantState, ...] = ()) -> tuple[str, ...]:
    """Lines: the device's totals, then each process with the tenant it belongs to."""
    lines = [
        f"{snap.name} #{snap.index}: total {format_gib(snap.total_bytes)} GiB, used {format_gib(snap.used_bytes)} "
        f"GiB, free {format_gib(snap.free_bytes)} GiB"
    ]
    owners: dict[int, str] = {}
    for tenant in tenants:
        for pid in tenant_pids(snap, tenant):
            owners[pid] = tenant.name
    for proc in snap.processes:
        owner = owners.get(proc.pid, "not in the stack")
        lines.append(f"  pid {proc.pid:>7} {format_gib(proc.used_bytes):>7} GiB  {owner:<16} {proc.name[:60]}")
    if not snap.processes:
        lines.append("  no compute processes")
    return tuple(lines)


def tenant_status(tenant: TenantState, snap: GpuSnapshot | None, alive: bool, healthy: bool) -> TenantStatus:
    pids = tenant_pids(snap, tenant) if snap is not None else ()
    gpu = sum(p.used_bytes for p in snap.processes if p.pid in pids) if snap is not None else None
    reported = None
    if tenant.memory_path and healthy:
        try:
            reported = release.read_memory(tenant.url, tenant.memory_path).reserved_bytes
        except ServerError:
            reported = None
    asleep = _is_sleeping(tenant.url) if tenant.role == "llm" and healthy else None
    return TenantStatus(tenant.name, tenant.role, tenant.pid, alive, healthy, gpu, pids, reported, asleep)


def _is_sleeping(url: str) -> bool | None:
    try:
        with urllib.request.urlopen(url + "/is_sleeping", timeout=2.0) as response:
            data = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    value = data.get("is_sleeping") if isinstance(data, dict) else None
    return value if isinstance(value, bool) else None
