"""Who of the two GPU tenants is at work, sampled: vLLM's running and waiting requests (its /metrics gauges) and
the voice server's lines in flight (its /v1/busy), every --every-s seconds, one CSV row per sample.

    python benchmarks/gpu_busy_sampler.py sample OUT.csv [--llm URL] [--tts URL] [--every-s 0.2]   (until killed)
    python benchmarks/gpu_busy_sampler.py window OUT.csv START END                  (a run's busy figures, JSON)

`window` prints, between two epoch times (a run's start and end), the seconds each tenant was busy (the LLM with
at least one request running, the voices with at least one line in flight, from the samples) and the seconds both
were: what "both tenants at work at once" means in figures. The voice server's own busy counter (exact, not
sampled) is printed beside the sampled one, and where the wall outside the LLM's busy time lies: before its first
request (`before_llm_s`) and after its last answer (`after_llm_s`), to a sample.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import re
import sys
import time
import urllib.request
from pathlib import Path

_GAUGE = re.compile(r"^vllm:num_requests_(running|waiting)\{[^}]*\}\s+([0-9.eE+-]+)", re.MULTILINE)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=1.0) as response:
        return str(response.read().decode())


def _llm(url: str) -> tuple[float, float]:
    try:
        found = {name: float(value) for name, value in _GAUGE.findall(_get(url + "/metrics"))}
    except OSError:
        return -1.0, -1.0
    return found.get("running", 0.0), found.get("waiting", 0.0)


def _tts(url: str) -> tuple[int, float]:
    try:
        busy = json.loads(_get(url + "/v1/busy"))
    except (OSError, ValueError):
        return -1, -1.0
    return int(busy["in_flight"]), float(busy["busy_s"])


def sample(out: Path, llm: str, tts: str, every_s: float) -> None:
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["t", "llm_running", "llm_waiting", "tts_in_flight", "tts_busy_s"])
        while True:
            t = time.time()
            running, waiting = _llm(llm)
            in_flight, busy_s = _tts(tts)
            writer.writerow([f"{t:.3f}", running, waiting, in_flight, busy_s])
            handle.flush()
            time.sleep(max(0.0, every_s - (time.time() - t)))


def window(path: Path, start: float, end: float) -> dict[str, float]:
    rows = [r for r in csv.DictReader(path.open()) if start <= float(r["t"]) <= end]
    llm = tts = both = 0.0
    for row, following in itertools.pairwise(rows):
        dt = float(following["t"]) - float(row["t"])
        llm_busy = float(row["llm_running"]) > 0
        tts_busy = int(row["tts_in_flight"]) > 0
        llm += dt if llm_busy else 0.0
        tts += dt if tts_busy else 0.0
        both += dt if llm_busy and tts_busy else 0.0
    counted = [float(r["tts_busy_s"]) for r in rows if float(r["tts_busy_s"]) >= 0]
    # where the wall outside the LLM's busy time lies: before its first request, and after its last answer
    llm_times = [float(r["t"]) for r in rows if float(r["llm_running"]) > 0]
    return {
        "wall_s": round(end - start, 2),
        "llm_busy_s": round(llm, 2),
        "tts_busy_s": round(tts, 2),
        "tts_busy_s_counted": round(counted[-1] - counted[0], 2) if counted else -1.0,
        "both_busy_s": round(both, 2),
        "before_llm_s": round(llm_times[0] - start, 2) if llm_times else -1.0,
        "after_llm_s": round(end - llm_times[-1], 2) if llm_times else -1.0,
        "samples": len(rows),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("out", type=Path)
    s.add_argument("--llm", default="http://127.0.0.1:8000")
    s.add_argument("--tts", default="http://127.0.0.1:8092")
    s.add_argument("--every-s", type=float, default=0.2)
    w = sub.add_parser("window")
    w.add_argument("csv", type=Path)
    w.add_argument("start", type=float)
    w.add_argument("end", type=float)
    args = parser.parse_args(argv)
    if args.command == "sample":
        sample(args.out, args.llm, args.tts, args.every_s)
    else:
        print(json.dumps(window(args.csv, args.start, args.end)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
