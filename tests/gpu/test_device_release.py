"""On a real GPU: a PyTorch tenant's cached blocks show in NVML until the release protocol hands them back."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from comic_narrator.gpu import nvml, release
from comic_narrator.gpu.sizes import GIB
from tests.conftest import IMPORTED_SRC

SRC = Path(IMPORTED_SRC)


def _used() -> int:
    return nvml.probe(0).used_bytes


@pytest.mark.gpu
def test_release_returns_cached_blocks_to_the_driver(port: int) -> None:
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    cmd = [sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(port), "--cached-gib", "4"]
    proc = subprocess.Popen(cmd, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                memory = release.read_memory(url)
                break
            except Exception:
                time.sleep(0.5)
        else:
            pytest.fail("the tenant never answered")
        assert memory.backend == "torch-cuda"
        assert memory.reserved_bytes >= 4 * GIB and memory.allocated_bytes == 0
        before = _used()  # device-wide: NVML counts the cached blocks as used
        report = release.request_release(url)
        assert report.released_bytes >= 4 * GIB
        after = _used()
        assert before - after >= 3.5 * GIB
        print(f"NVML device used: {before / GIB:.2f} GiB with the cache, {after / GIB:.2f} GiB after release")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.gpu
def test_up_accounts_each_tenants_gpu_memory_by_nvml(tmp_path: Path) -> None:
    """`up` with NVML: the TTS tenant's real CUDA memory is attributed to it (the LLM is the CPU stand-in)."""
    pytest.importorskip("torch")
    from comic_narrator.gpu.accounting import tenant_status
    from comic_narrator.gpu.stack import Stack, http_ok
    from comic_narrator.gpu.stackfile import StackFile, TenantSpec

    from .conftest import free_ports

    llm_port, tts_port = free_ports(2)
    standin = str(Path(__file__).with_name("standin_vllm.py"))
    llm = TenantSpec("llm", "llm", (sys.executable, standin, "--port", str(llm_port)), f"http://127.0.0.1:{llm_port}",
                     ready_pattern="GPU KV cache size", boot_timeout_s=60)  # fmt: skip
    tenant = (sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(tts_port), "--live-gib", "2")
    tts = TenantSpec("tts", "tts", tenant, f"http://127.0.0.1:{tts_port}", release_path=release.RELEASE_PATH,
                     memory_path=release.MEMORY_PATH, boot_timeout_s=120, env=(("PYTHONPATH", str(SRC)),))  # fmt: skip
    said: list[str] = []
    stack = Stack(StackFile(llm, tts, tmp_path / "state"), nvml.probe, said.append)
    state = stack.up()
    try:
        snap = nvml.probe(0)
        statuses = [tenant_status(t, snap, True, http_ok(t.url + t.health_path)) for t in state.tenants]
        assert statuses[1].gpu_bytes is not None and statuses[1].gpu_bytes >= 2 * GIB
        assert statuses[1].reported_reserved_bytes == 2 * GIB
        assert any(line.startswith("up:") and " tts " in line for line in said)
        print("\n".join(said))
    finally:
        stack.down(grace_s=10)
