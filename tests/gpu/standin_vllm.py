"""A stand-in for vLLM's OpenAI server in CPU tests: real HTTP on 127.0.0.1, real vLLM 0.20.0 log lines.

It fails its start-up exactly as vLLM does when --gpu-memory-utilization asks for more than --free-gib of
--total-gib (the line is vLLM's own wording, copied from tests/data/gpu/logs/c-cotenant-cached.log), otherwise it
logs the KV lines after --boot-s seconds and serves /health until SIGTERM. With --enable-sleep-mode it serves
vLLM's sleep endpoints; POST /wake_up answers only once the wake is done (--wake-s seconds), and GET /is_sleeping
says true until then, as vLLM's does (its /wake_up returns after the engine has woken). Nothing is on a GPU here.

With --moe-backend B it fails as vLLM 0.20.0 does when the flag forces a MoE kernel an NvFP4 checkpoint has no
use for (vllm/model_executor/layers/fused_moe/oracle/nvfp4.py, map_nvfp4_backend).

With --replay LOG --replay-at U it does not judge anything itself: started with utilisation U it prints LOG (a real
vLLM boot log) line by line and exits 1, as that boot did; started with any other utilisation it boots. Tests of
the doctor's retry use it so the failure they see is vLLM's real wording and real figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Health(BaseHTTPRequestHandler):
    sleeping = False
    wake_s = 0.0

    def _answer(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/is_sleeping":
            self._answer(200, b'{"is_sleeping": %s}' % (b"true" if _Health.sleeping else b"false"))
        else:
            self._answer(200 if self.path == "/health" else 404)

    def do_POST(self) -> None:
        # vLLM's sleep-mode endpoints (served with --enable-sleep-mode and VLLM_SERVER_DEV_MODE=1)
        if self.path.startswith("/sleep") and "--enable-sleep-mode" in sys.argv:
            _Health.sleeping = True
            print(f"sleep {self.path}", flush=True)
            self._answer(200)
        elif self.path == "/wake_up" and "--enable-sleep-mode" in sys.argv:
            time.sleep(_Health.wake_s)  # weights and KV pool coming back onto the device
            _Health.sleeping = False
            print("wake_up", flush=True)
            self._answer(200)
        else:
            self._answer(404)

    def log_message(self, format: str, *args: object) -> None:
        return


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.92)
    parser.add_argument("--total-gib", type=float, default=139.8)
    parser.add_argument("--free-gib", type=float, default=139.8)
    parser.add_argument("--boot-s", type=float, default=0.3)
    parser.add_argument("--wake-s", type=float, default=0.0, help="how long /wake_up takes")
    parser.add_argument("--health-before-kv", action="store_true", help="answer /health before the KV line")
    parser.add_argument("--replay", help="a real vLLM log to print when started with --replay-at's utilisation")
    parser.add_argument("--replay-at", type=float, help="the utilisation the replayed boot was started with")
    parser.add_argument("--moe-backend", help="fail as an NvFP4 checkpoint does with a forced MoE kernel")
    args, _rest = parser.parse_known_args()
    if args.replay and args.gpu_memory_utilization == args.replay_at:
        with open(args.replay, encoding="utf-8") as log:
            for line in log:
                print(line, end="", flush=True)
        return 1
    print(f"(APIServer pid=1) INFO [utils.py:233] non-default args: {{'host': '{args.host}', "
          f"'gpu_memory_utilization': {args.gpu_memory_utilization}}}", flush=True)  # fmt: skip
    if args.moe_backend:
        expected = ["cutlass", "flashinfer_trtllm", "flashinfer_cutlass", "flashinfer_cutedsl", "marlin", "emulation"]
        print(
            "(EngineCore_DP0 pid=2) ERROR 11-30 16:49:31 [core.py:1136] ValueError: "
            f"moe_backend='{args.moe_backend}' is not supported for NvFP4 MoE. Expected one of {expected}.",
            flush=True,
        )
        return 1
    requested = math.ceil(args.total_gib * args.gpu_memory_utilization * 100) / 100
    if requested > args.free_gib:
        print(
            "(EngineCore pid=2) ValueError: Free memory on device cuda:0 "
            f"({args.free_gib:.2f}/{args.total_gib} GiB) on startup is less than desired GPU memory utilization "
            f"({args.gpu_memory_utilization}, {requested:.2f} GiB). Decrease GPU memory utilization or reduce GPU "
            "memory used by other processes.",
            flush=True,
        )
        return 1
    _Health.wake_s = args.wake_s
    server = ThreadingHTTPServer((args.host, args.port), _Health)
    if not args.health_before_kv:
        time.sleep(args.boot_s)
    print("(EngineCore pid=2) INFO [gpu_worker.py:440] Available KV cache memory: 24.21 GiB", flush=True)
    if args.health_before_kv:
        server.timeout = args.boot_s
        server.handle_request()
        time.sleep(args.boot_s)
    print("(EngineCore pid=2) INFO [kv_cache_utils.py:1711] GPU KV cache size: 844,688 tokens", flush=True)
    print("(APIServer pid=1) INFO:     Application startup complete.", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
