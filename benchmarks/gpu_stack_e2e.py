"""End to end on a real GPU: `gpu up/status/down` with real vLLM and a PyTorch co-tenant holding cached blocks.

Scenarios (each prints a transcript into OUT/<name>.txt and keeps the vLLM logs in OUT/logs.tar.gz):
  release  a TTS-like tenant already holds 70 GiB of cached blocks; `up` asks it to release, then boots vLLM
  order    nothing runs; `up` boots vLLM first (waits for /health and the KV line), then starts the tenant
  timeshare vLLM boots with sleep mode, sleeps (level 1), then the tenant starts; then it is woken and slept again
  retry    a foreign process holds 70 GiB and the preflight is off: vLLM fails its free-memory check, the doctor's
           fix (--gpu-memory-utilization) is applied and the second boot succeeds
usage: python benchmarks/gpu_stack_e2e.py --model DIR --out DIR [--vllm-site /tmp/vllm-site] [scenario ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
VLLM_FLAGS = [
    "--load-format", "dummy", "--skip-tokenizer-init", "--port", "8000", "--gpu-memory-utilization", "0.6",
    "--max-num-seqs", "2", "--max-num-batched-tokens", "4096", "--max-model-len", "32768", "--enforce-eager",
]  # fmt: skip


def _env(extra: str) -> dict[str, str]:
    return {"PYTHONPATH": extra, "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "PYTHONUNBUFFERED": "1"}


def _tenant_cmd(port: int, cached_gib: float, live_gib: float) -> list[str]:
    return [sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(port),
            "--cached-gib", str(cached_gib), "--live-gib", str(live_gib)]  # fmt: skip


def _stack(model: Path, site: str, state: Path, *, tts: dict[str, object] | None, preflight: bool) -> dict[str, object]:
    llm = {
        "name": "vllm",
        "command": [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model), *VLLM_FLAGS],
        "url": "http://127.0.0.1:8000",
        "env": _env(site),
        "boot_timeout_s": 420,
        "retries": 1,
    }
    data: dict[str, object] = {"state_dir": str(state), "headroom": "1GiB", "llm": llm, "preflight": preflight}
    if tts is not None:
        data["tts"] = tts
    return data


def _wait_health(url: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{url} never became healthy")


def _cli(args: list[str], transcript: list[str]) -> int:
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "comic_narrator.cli.gpu", *args], capture_output=True, text=True, env=env
    )
    transcript.append(
        f"$ comic-narrator gpu {' '.join(args)}   # {time.monotonic() - started:.1f} s, rc {proc.returncode}"
    )
    transcript.append(proc.stderr.rstrip())
    transcript.append(proc.stdout.rstrip())
    return proc.returncode


def _nvidia_smi(transcript: list[str], when: str) -> None:
    out = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
        capture_output=True, text=True,
    )  # fmt: skip
    transcript.append(f"# nvidia-smi {when}:\n{out.stdout.rstrip() or '(no compute processes)'}")


def _wake_and_sleep(stack_path: Path, transcript: list[str]) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from comic_narrator.gpu.stack import Stack
    from comic_narrator.gpu.stackfile import load_stack

    stack = Stack(load_stack(stack_path), None, transcript.append)
    transcript.append(f"# wake_llm: {stack.wake_llm():.2f} s")
    _nvidia_smi(transcript, "after wake (the tenant still holds its memory)")
    transcript.append(f"# sleep_llm(1): {stack.sleep_llm(1):.2f} s")
    _nvidia_smi(transcript, "after sleep")


def run(name: str, model: Path, site: str, out: Path) -> None:
    work = Path("/tmp") / f"gpu-e2e-{name}"
    work.mkdir(parents=True, exist_ok=True)
    transcript: list[str] = [f"# scenario {name}"]
    outside: subprocess.Popen[bytes] | None = None
    tts_spec = {"name": "tts", "url": "http://127.0.0.1:8093", "env": _env(str(REPO / "src"))}
    if name == "release":
        # A TTS-like tenant that already ran: 1 GiB of weights live, 70 GiB of freed-but-cached blocks.
        outside = subprocess.Popen(_tenant_cmd(8093, 70, 1), env={**os.environ, **_env(str(REPO / "src"))})
        _wait_health("http://127.0.0.1:8093/health")
        stack = _stack(model, site, work, tts={**tts_spec, "command": _tenant_cmd(8093, 70, 1)}, preflight=True)
    elif name in ("order", "timeshare"):
        stack = _stack(model, site, work, tts={**tts_spec, "command": _tenant_cmd(8093, 20, 2)}, preflight=True)
        stack["mode"] = "coreside" if name == "order" else "timeshare"
    else:
        # A foreign process (not in the stack, no release) holds 70 GiB; the preflight is off so vLLM really fails.
        outside = subprocess.Popen(_tenant_cmd(8094, 70, 0), env={**os.environ, **_env(str(REPO / "src"))})
        _wait_health("http://127.0.0.1:8094/health")
        stack = _stack(model, site, work, tts=None, preflight=False)
    stack_path = work / "stack.yaml"
    stack_path.write_text(yaml.safe_dump(stack, sort_keys=False))
    _nvidia_smi(transcript, "before up")
    try:
        if _cli(["up", str(stack_path)], transcript) == 0:
            _cli(["status", str(stack_path)], transcript)
            _nvidia_smi(transcript, "after up")
            if name == "timeshare":
                _wake_and_sleep(stack_path, transcript)
        _cli(["down", str(stack_path)], transcript)
    finally:
        if outside is not None:
            outside.terminate()
            outside.wait(timeout=30)
    _nvidia_smi(transcript, "after down")
    (out / f"{name}.txt").write_text("\n".join(transcript) + "\n")
    with tarfile.open(out / f"logs-{name}.tar.gz", "w:gz") as tar:
        for log in sorted(work.glob("*.log")):
            tar.add(log, arcname=f"{name}/{log.name}")
    print("\n".join(transcript), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--vllm-site", default="/tmp/vllm-site")
    parser.add_argument("scenarios", nargs="*", default=["release", "order", "retry"])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.scenarios:
        run(name, args.model.resolve(), args.vllm_site, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
