"""Stand-ins for the two tenants of a time-shared stack, run as subprocesses by `comic-narrator gpu up` in tests.

`vllm`: NOT vLLM. It serves the loopback chat server's answers (tests/llm/chat_server.py) on /v1, prints the KV
lines `gpu up` waits for (vLLM 0.20.0's wording), and with --enable-sleep-mode serves vLLM's /sleep, /wake_up and
/is_sleeping; a chat request that arrives while it sleeps is refused with 503 (real vLLM cannot serve then).
`tts`: NOT Fish Speech. It serves the loopback Fish-API server's tones (tests/backends/tts_servers.py), /v1/health,
and the project's release protocol (comic_narrator.gpu.release, CPU backend).

Both append one line per event to --events (one file shared by the two processes, opened for appending, one
write per line), so a test can read the order in which the run used them.

    python tests/llm/timeshare_standins.py vllm|tts --port PORT --events FILE [vLLM flags...]
"""

from __future__ import annotations

import argparse
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from comic_narrator.gpu import release
from tests.backends.tts_servers import ServerState
from tests.backends.tts_servers import _handler as tts_handler
from tests.llm.chat_server import ChatState
from tests.llm.chat_server import _handler as chat_handler

REFERENCES = ("hero", "mira", "tom")
"""The reference voices the TTS stand-in lists (a test casts with them through --tts-voices)."""


def _event(events: Path, line: str) -> None:
    fd = os.open(events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def vllm_handler(events: Path, sleep_mode: bool) -> type[BaseHTTPRequestHandler]:
    base = chat_handler(ChatState("ok"))
    asleep = [False]

    class Handler(base):  # type: ignore[valid-type,misc]
        def do_GET(self) -> None:
            if self.path == "/is_sleeping" and sleep_mode:
                self._send(200, b'{"is_sleeping": %s}' % (b"true" if asleep[0] else b"false"))
            else:
                super().do_GET()

        def do_POST(self) -> None:
            if self.path.startswith("/sleep") and sleep_mode:
                asleep[0] = True
                _event(events, f"llm sleep {self.path}")
                self._send(200, b"")
            elif self.path == "/wake_up" and sleep_mode:
                asleep[0] = False
                _event(events, "llm wake_up")
                self._send(200, b"")
            elif self.path == "/v1/chat/completions" and asleep[0]:
                self.rfile.read(int(self.headers["Content-Length"]))
                _event(events, "llm chat refused: asleep")
                self._send(503, b'{"error": "the engine is sleeping"}')
            else:
                if self.path == "/v1/chat/completions":
                    _event(events, "llm chat")
                super().do_POST()

    return Handler


def tts_handler_with_release(events: Path) -> type[BaseHTTPRequestHandler]:
    base = tts_handler(ServerState(references={name: "transcript" for name in REFERENCES}))

    class Handler(base):  # type: ignore[valid-type,misc]
        def do_GET(self) -> None:
            answer = release.handle_gpu_request("GET", self.path)
            if answer is None:
                super().do_GET()
            else:
                self._send(answer[0], "application/json", answer[1])

        def do_POST(self) -> None:
            answer = release.handle_gpu_request("POST", self.path)
            if answer is not None:
                _event(events, f"tts {self.path}")
                self._send(answer[0], "application/json", answer[1])
                return
            if self.path in ("/v1/tts", "/v1/audio/speech"):
                _event(events, f"tts {self.path}")
            super().do_POST()

    return Handler


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=["vllm", "tts"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--enable-sleep-mode", action="store_true")
    args, _vllm_flags = parser.parse_known_args()
    if args.role == "vllm":
        handler = vllm_handler(args.events, args.enable_sleep_mode)
    else:
        handler = tts_handler_with_release(args.events)
    server = ThreadingHTTPServer((args.host, args.port), handler)
    if args.role == "vllm":
        # the lines `gpu up` waits for (vLLM 0.20.0's wording, tests/data/gpu/logs/b-bt4096.log)
        print("(EngineCore pid=2) INFO [gpu_worker.py:440] Available KV cache memory: 24.21 GiB", flush=True)
        print("(EngineCore pid=2) INFO [kv_cache_utils.py:1711] GPU KV cache size: 844,688 tokens", flush=True)
    _event(args.events, f"{args.role} up")
    with server:  # until `gpu down` stops the process group
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
