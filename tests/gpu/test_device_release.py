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

SRC = Path(__file__).resolve().parents[2] / "src"


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
