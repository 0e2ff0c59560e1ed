"""The release protocol over real HTTP and signals, on the CPU (the GPU case: test_device_release.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from threading import Thread

import pytest

from comic_narrator.errors import ServerError
from comic_narrator.gpu import release
from comic_narrator.gpu.sizes import MIB
from tests.conftest import IMPORTED_SRC

SRC = IMPORTED_SRC


def test_the_tenant_server_reports_and_releases_its_cache(port: int) -> None:
    cmd = [sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(port), "--cached-gib", "0.03"]
    env = {**os.environ, "PYTHONPATH": SRC, "CUDA_VISIBLE_DEVICES": ""}  # the CPU backend, also beside a GPU
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                before = release.read_memory(url)
                break
            except ServerError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert before.pid == proc.pid and before.backend == "cpu"
        assert before.reserved_bytes == int(0.03 * 1024**3)
        report = release.request_release(url)
        assert report.released_bytes == before.reserved_bytes and report.reserved_after_bytes == 0
        assert release.read_memory(url).reserved_bytes == 0
        assert release.request_release(url).released_bytes == 0  # a second release frees nothing more
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_sigusr1_releases_for_tenants_without_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release, "_torch_cuda", lambda: None)  # the CPU backend, also on a machine with a GPU
    release.hold_cpu_cache(8 * MIB)
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        release.install_release_signal()
        assert release.memory_report().reserved_bytes == 8 * MIB
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.05)
        assert release.memory_report().reserved_bytes == 0
    finally:
        signal.signal(signal.SIGUSR1, previous)
        release.hold_cpu_cache(0)


def test_routes_of_the_protocol() -> None:
    status, body = release.handle_gpu_request("GET", "/v1/gpu/memory")  # type: ignore[misc]
    assert status == 200 and set(json.loads(body)) == {"pid", "backend", "allocated_bytes", "reserved_bytes"}
    assert release.handle_gpu_request("GET", "/v1/gpu/release") == (405, b'{"error": "method not allowed"}')
    assert release.handle_gpu_request("POST", "/v1/audio/speech") is None


def test_the_release_route_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release, "_torch_cuda", lambda: None)  # the CPU backend, also on a machine with a GPU
    release.hold_cpu_cache(4 * MIB)
    try:
        status, body = release.handle_gpu_request("POST", "/v1/gpu/release?now=1")  # type: ignore[misc]
        report = json.loads(body)
        assert status == 200 and report["released_bytes"] == 4 * MIB and report["reserved_after_bytes"] == 0
        assert release.memory_report().reserved_bytes == 0
    finally:
        release.hold_cpu_cache(0)


def test_an_answer_that_is_no_json_object_is_named_so(port: int) -> None:
    class Listing(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"[1, 2]"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = HTTPServer(("127.0.0.1", port), Listing)
    Thread(target=server.handle_request, daemon=True).start()
    try:
        with pytest.raises(ServerError, match=r"answered \[1, 2\], not a JSON object"):
            release.read_memory(f"http://127.0.0.1:{port}", timeout_s=5)
    finally:
        server.server_close()


def test_a_server_without_the_protocol_is_a_clear_error(port: int) -> None:
    class NotFound(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return

    server = HTTPServer(("127.0.0.1", port), NotFound)
    Thread(target=server.handle_request, daemon=True).start()
    try:
        with pytest.raises(ServerError, match="does it speak the release protocol"):
            release.request_release(f"http://127.0.0.1:{port}", timeout_s=5)
    finally:
        server.server_close()
