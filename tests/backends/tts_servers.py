"""Loopback TTS servers for tests, following Fish Speech's and OpenAI's documented speech APIs."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import soundfile as sf

SAMPLE_RATE_HZ = 16_000


def tone_wav(text: str, frequency_hz: float) -> bytes:
    """A WAV whose length follows the text (0.06 s per character) and whose pitch names the voice."""
    duration_s = max(0.3, 0.06 * len(text))
    t = np.arange(int(duration_s * SAMPLE_RATE_HZ)) / SAMPLE_RATE_HZ
    buffer = io.BytesIO()
    sf.write(buffer, (0.3 * np.sin(2 * np.pi * frequency_hz * t)).astype(np.float32), SAMPLE_RATE_HZ, format="WAV")
    return buffer.getvalue()


@dataclass
class ServerState:
    """What the test server does (``mode``) and what it saw."""

    mode: str = "ok"
    """ok | 500 | garbage | html | silence | slow"""
    fail_text: str = ""
    """When set, a request whose text contains it is answered 500 whatever the mode (one page's line failing)."""
    references: dict[str, str] = field(default_factory=lambda: {"hero": "transcript"})
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    latency_s: float = 0.0
    """How long each speech request takes, holding one of the ``slots`` (like a busy GPU)."""
    slots: int = 0
    """Speech requests worked on at once (0: no bound); one more waits for a free slot, as on a real server."""
    hold: Callable[[], object] | None = None
    """Called with each speech request before it is worked on (a test's barrier across several servers)."""
    answer: tuple[int, str, bytes] | None = None
    """When set, every speech request is answered with this (status, content type, body), whatever the mode."""
    content_types: list[str | None] = field(default_factory=list)
    """Each POST's Content-Type header (None when absent)."""
    replies: dict[str, Any] = field(default_factory=dict)
    """Canned JSON answers (status 200) by ``"METHOD /path"``, in place of what the server would answer there."""
    gets: list[str] = field(default_factory=list)
    """Each GET's path."""
    _slots: threading.BoundedSemaphore | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._slots = threading.BoundedSemaphore(self.slots) if self.slots > 0 else None

    @property
    def spoken(self) -> int:
        """Speech requests received."""
        return len([r for r in self.requests if r["path"] in ("/v1/tts", "/v1/audio/speech")])


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        counted = False

        def _leave(self) -> None:
            # A request stops counting as in flight before its answer is written: the client may send its next
            # request the moment it has the answer, before this thread gets to run again.
            if self.counted:
                self.counted = False
                with state.lock:
                    state.in_flight -= 1

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self._leave()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, payload: Any) -> None:
            self._send(status, "application/json", json.dumps(payload).encode())

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length", "0"))
            parsed: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
            return parsed

        def _canned(self, method: str) -> bool:
            """Answer with the test's canned reply for this request, if it set one."""
            key = f"{method} {self.path}"
            if key not in state.replies:
                return False
            self._json(200, state.replies[key])
            return True

        def do_GET(self) -> None:
            with state.lock:
                state.gets.append(self.path)
            if self._canned("GET"):
                return
            if self.path == "/v1/health":
                self._json(200, {"status": "ok"})
            elif self.path == "/v1/references/list":
                self._json(200, {"success": True, "reference_ids": sorted(state.references), "message": "Success"})
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": "tts-1", "object": "model"}]})
            else:
                self._json(404, {"detail": "Not Found"})

        def do_DELETE(self) -> None:
            body = self._body()
            if self._canned("DELETE"):
                return
            if self.path == "/v1/references/delete" and body.get("reference_id") in state.references:
                del state.references[body["reference_id"]]
                self._json(200, {"success": True, "message": "deleted", "reference_id": body["reference_id"]})
            else:
                self._json(404, {"detail": "Reference not found"})

        def do_POST(self) -> None:
            body = self._body()
            with state.lock:
                state.requests.append({"path": self.path, **body})
                state.content_types.append(self.headers.get("Content-Type"))
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            self.counted = True
            try:
                self._post(body)
            finally:
                self._leave()

        def _post(self, body: dict[str, Any]) -> None:
            if self._canned("POST"):
                return
            if self.path == "/v1/references/add":
                base64.b64decode(body["audio"], validate=True)
                state.references[body["id"]] = body["text"]
                self._json(200, {"success": True, "message": "added", "reference_id": body["id"]})
                return
            if self.path == "/v1/tts":
                text, voice = (
                    body.get("text", ""),
                    body.get("reference_id") or ("inline" if body.get("references") else "default"),
                )
                if voice not in state.references and voice not in ("default", "inline"):
                    self._json(404, {"detail": f"Reference {voice} not found"})
                    return
            elif self.path == "/v1/audio/speech":
                text, voice = body.get("input", ""), body.get("voice", "")
            else:
                self._json(404, {"detail": "Not Found"})
                return
            if state.answer is not None:
                self._send(*state.answer)
            elif state.mode == "500" or (state.fail_text and state.fail_text in text):
                self._json(500, {"detail": "CUDA out of memory"})
            elif state.mode == "garbage":
                self._send(200, "audio/wav", b"RIFF\x00\x00not really a wav")
            elif state.mode == "html":
                self._send(200, "text/html; charset=utf-8", b"<html>proxy login</html>")
            elif state.mode == "silence":
                self._send(200, "audio/wav", tone_wav(text, 0.0))
            else:
                if state.mode == "slow":
                    time.sleep(0.2)
                if state.hold is not None:
                    state.hold()
                with state._slots or contextlib.nullcontext():
                    time.sleep(state.latency_s)
                    frequency = 180.0 + 40.0 * (sum(map(ord, voice)) % 7)
                    self._send(200, "audio/wav", tone_wav(text, frequency))

    return Handler


@contextmanager
def tts_server(state: ServerState) -> Iterator[str]:
    """Serve on 127.0.0.1 at a free port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port_url() -> str:
    """A loopback URL where nothing listens."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
