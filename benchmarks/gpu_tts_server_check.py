"""The voice server as a GPU tenant, measured over HTTP: lines per second at 1, 4 and 16 requests in flight, the
GPU memory NVML counts for its process, and what a release (the memory release protocol) hands back.

    PYTHONPATH=SITE:src python benchmarks/gpu_tts_server_check.py [--device cuda] [--voice en-heart]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from comic_narrator.gpu.tts_server import make_server

LINE = "If we win this year, the whole village will finally stop laughing at the witches of Chaosah."


def _call(url: str, path: str, body: dict[str, object] | None = None, method: str = "GET") -> bytes:
    data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return bytes(response.read())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--voice", default="en-heart")
    args = parser.parse_args()
    server = make_server("127.0.0.1", 0, args.device)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    print(json.dumps({"memory_before_first_line": json.loads(_call(url, "/v1/gpu/memory"))}), flush=True)
    _call(url, "/v1/audio/speech", {"input": LINE, "voice": args.voice}, "POST")
    for in_flight in (1, 4, 16):
        started = time.perf_counter()
        with ThreadPoolExecutor(in_flight) as pool:
            wavs = list(
                pool.map(
                    lambda _: _call(url, "/v1/audio/speech", {"input": LINE, "voice": args.voice}, "POST"), range(32)
                )
            )
        wall = time.perf_counter() - started
        audio_s = sum((len(w) - 44) / 2 / 24000 for w in wavs)
        print(
            json.dumps(
                {
                    "in_flight": in_flight,
                    "lines": 32,
                    "wall_s": round(wall, 2),
                    "audio_s": round(audio_s, 1),
                    "lines_per_s": round(32 / wall, 2),
                    "rtf": round(wall / audio_s, 4),
                }
            ),
            flush=True,
        )
    print(json.dumps({"memory_after_lines": json.loads(_call(url, "/v1/gpu/memory"))}), flush=True)
    print(json.dumps({"release": json.loads(_call(url, "/v1/gpu/release", method="POST"))}), flush=True)
    started = time.perf_counter()
    _call(url, "/v1/audio/speech", {"input": LINE, "voice": args.voice}, "POST")
    print(
        json.dumps(
            {
                "first_line_after_release_s": round(time.perf_counter() - started, 2),
                "memory_then": json.loads(_call(url, "/v1/gpu/memory")),
            }
        ),
        flush=True,
    )
    server.shutdown()


if __name__ == "__main__":
    main()
