"""A reference GPU tenant server: holds PyTorch cached blocks like a TTS worker and speaks the release protocol.

Run `python -m comic_narrator.gpu.tenant --port 8093 --cached-gib 70`: it allocates the tensors, frees them
without empty_cache (so NVML still counts them, as after a TTS worker's peak), and serves /health plus
/v1/gpu/memory and /v1/gpu/release on 127.0.0.1. Without CUDA it keeps a CPU buffer in their place.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from comic_narrator.gpu import release
from comic_narrator.gpu.sizes import GIB


class _Handler(BaseHTTPRequestHandler):
    server_version = "comic-narrator-tenant/1"

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _route(self, method: str) -> None:
        if self.path.split("?", 1)[0] == "/health" and method == "GET":
            self._send(200, b'{"status": "ok"}')
            return
        answer = release.handle_gpu_request(method, self.path)
        if answer is None:
            self._send(404, json.dumps({"error": f"no route {self.path}"}).encode())
        else:
            self._send(*answer)

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"tenant: {format % args}\n")


def _occupy(cached_bytes: int, live_bytes: int) -> object:
    """Allocate live + cached bytes, then drop the cached part without empty_cache(); returns the live tensor."""
    torch = release._torch_cuda()
    if torch is None:
        release.hold_cpu_cache(cached_bytes)
        return bytearray(live_bytes)
    live = torch.empty(live_bytes, dtype=torch.uint8, device="cuda") if live_bytes else None
    if cached_bytes:
        scratch = torch.empty(cached_bytes, dtype=torch.uint8, device="cuda")
        scratch.fill_(1)
        torch.cuda.synchronize()
        del scratch
    return live


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m comic_narrator.gpu.tenant", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8093)
    parser.add_argument("--cached-gib", type=float, default=0.0, help="freed-but-cached memory to hold")
    parser.add_argument("--live-gib", type=float, default=0.0, help="memory kept in live tensors (its weights)")
    args = parser.parse_args(argv)
    live = _occupy(int(args.cached_gib * GIB), int(args.live_gib * GIB))
    report = release.memory_report()
    server = ThreadingHTTPServer((args.host, args.port), _Handler)
    print(
        f"tenant pid {report.pid} on http://{args.host}:{server.server_port}: backend {report.backend}, "
        f"reserved {report.reserved_bytes / GIB:.2f} GiB, allocated {report.allocated_bytes / GIB:.2f} GiB",
        flush=True,
    )
    release.install_release_signal()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        del live
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
