"""The reference tenant's own routes, over real HTTP on 127.0.0.1: /health on GET only, the release protocol
behind it, a named 404 for anything else, and the start-up line with its CPU stand-in cache."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from comic_narrator.gpu.sizes import GIB
from tests.conftest import IMPORTED_SRC

# The source the tests import (a copy of it under benchmarks/mutation_sweep.py), so the server runs the same code.
SRC = IMPORTED_SRC
CACHED_GIB = 0.01


@contextmanager
def running_tenant(port: int, cached_gib: float = CACHED_GIB) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The tenant in a process of its own, with its start-up line; stopped on leaving."""
    command = [sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(port), "--cached-gib", str(cached_gib)]
    env = {**os.environ, "PYTHONPATH": SRC, "CUDA_VISIBLE_DEVICES": ""}  # the CPU stand-in, also beside a GPU
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        # Printed once the socket is bound: requests made from here on wait in its backlog, so no polling.
        yield proc, proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def tenant(port: int) -> Iterator[tuple[subprocess.Popen[str], str]]:
    with running_tenant(port) as started:
        yield started


def _ask(port: int, method: str, path: str) -> tuple[int, str, object]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=b"" if method == "POST" else None)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), json.loads(response.read())
    finally:
        connection.close()


def test_the_start_up_line_names_the_pid_the_address_and_the_stand_in_cache(
    tenant: tuple[subprocess.Popen[str], str], port: int
) -> None:
    proc, line = tenant
    assert line == (
        f"tenant pid {proc.pid} on http://127.0.0.1:{port}: backend cpu, "
        f"reserved {CACHED_GIB:.2f} GiB, allocated 0.00 GiB"
    )


def test_health_answers_get_only_and_ignores_the_query(tenant: tuple[subprocess.Popen[str], str], port: int) -> None:
    assert _ask(port, "GET", "/health") == (200, "application/json", {"status": "ok"})
    assert _ask(port, "GET", "/health?probe=1") == (200, "application/json", {"status": "ok"})
    assert _ask(port, "POST", "/health") == (404, "application/json", {"error": "no route /health"})


def test_the_release_protocol_is_served_beside_health(tenant: tuple[subprocess.Popen[str], str], port: int) -> None:
    proc, _line = tenant
    status, _kind, memory = _ask(port, "GET", "/v1/gpu/memory")
    held = int(CACHED_GIB * GIB)
    assert (status, memory) == (200, {"pid": proc.pid, "backend": "cpu", "allocated_bytes": 0, "reserved_bytes": held})
    status, _kind, report = _ask(port, "POST", "/v1/gpu/release")
    assert status == 200 and isinstance(report, dict)
    assert (report["released_bytes"], report["reserved_after_bytes"]) == (held, 0)


def test_any_other_route_is_a_named_404(tenant: tuple[subprocess.Popen[str], str], port: int) -> None:
    assert _ask(port, "GET", "/v1/models") == (404, "application/json", {"error": "no route /v1/models"})
    assert _ask(port, "POST", "/v1/audio/speech") == (404, "application/json", {"error": "no route /v1/audio/speech"})
