"""`gpu up | down | status` on the CPU: real subprocesses and real HTTP on 127.0.0.1, NVML absent.

The LLM is tests/gpu/standin_vllm.py (vLLM's log lines and failure wording, /health, sleep endpoints); the TTS is
the project's reference tenant (comic_narrator.gpu.tenant) speaking the release protocol, with a CPU buffer in
place of CUDA cached blocks. The same scenarios ran with real vLLM 0.20.0 on an H200: tests/data/gpu/device-run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from comic_narrator.errors import GpuError, ServerError
from comic_narrator.gpu import release
from comic_narrator.gpu.accounting import tenant_status
from comic_narrator.gpu.flags import flag_value
from comic_narrator.gpu.model_info import model_info_from_config
from comic_narrator.gpu.nvml import GpuProcess, GpuSnapshot
from comic_narrator.gpu.plan import DeviceMemory, PlanRequest, TtsTenant, VllmFlags, make_plan
from comic_narrator.gpu.session import Turns, running_stack
from comic_narrator.gpu.sizes import GIB, MIB
from comic_narrator.gpu.stack import Stack, _alive, http_ok
from comic_narrator.gpu.stackfile import StackFile, TenantSpec, load_stack, parse_stack
from comic_narrator.gpu.state import read_state
from tests.conftest import IMPORTED_SRC

from .conftest import CONFIGS, DATA, free_port

STANDIN = str(Path(__file__).with_name("standin_vllm.py"))
SRC = IMPORTED_SRC
ENV = (("PYTHONPATH", SRC), ("CUDA_VISIBLE_DEVICES", ""))
"""The tenant keeps its stand-in cache in CPU memory here, also on a machine with a GPU (exact byte counts)."""


def _llm(port: int, *extra: str, timeout_s: float = 20, retries: int = 2) -> TenantSpec:
    command = (sys.executable, STANDIN, "--port", str(port), "--host", "127.0.0.1", *extra)
    return TenantSpec(
        "llm",
        "llm",
        command,
        f"http://127.0.0.1:{port}",
        ready_pattern="GPU KV cache size",
        boot_timeout_s=timeout_s,
        retries=retries,
    )


def _tts(port: int, cached_gib: float = 0.0) -> TenantSpec:
    command = (sys.executable, "-m", "comic_narrator.gpu.tenant", "--port", str(port), "--cached-gib", str(cached_gib))
    return TenantSpec(
        "tts",
        "tts",
        command,
        f"http://127.0.0.1:{port}",
        release_path=release.RELEASE_PATH,
        memory_path=release.MEMORY_PATH,
        boot_timeout_s=20,
        env=ENV,
    )


def _stack(tmp_path: Path, llm: TenantSpec, tts: TenantSpec | None, **kw: object) -> StackFile:
    return StackFile(llm=llm, tts=tts, state_dir=tmp_path / "state", gpu_memory_bytes=32 * GIB, **kw)  # type: ignore[arg-type]


@pytest.fixture
def said() -> list[str]:
    return []


def test_up_starts_the_llm_first_then_the_tts_and_down_stops_both(tmp_path: Path, said: list[str]) -> None:
    llm, tts = _llm(free_port(), "--boot-s", "0.5", "--health-before-kv"), _tts(free_port())
    stack = Stack(_stack(tmp_path, llm, tts), None, said.append, poll_s=0.05)
    state = stack.up()
    try:
        assert [t.name for t in state.tenants] == ["llm", "tts"]
        # /health answered before the KV line: `up` still waited for the line before starting the TTS.
        llm_ready = next(i for i, line in enumerate(said) if line.startswith("llm: ready after"))
        tts_start = next(i for i, line in enumerate(said) if line.startswith("tts: attempt 1"))
        assert llm_ready < tts_start
        assert stack.attempts[0].duration_s >= 0.5
        assert "GPU KV cache size" in Path(state.tenants[0].log_path).read_text()
        assert read_state(tmp_path / "state") == state
        statuses = [tenant_status(t, None, _alive(t.pid), http_ok(t.url + t.health_path)) for t in state.tenants]
        assert all(s.alive and s.healthy for s in statuses)
        assert statuses[1].reported_reserved_bytes == 0 and statuses[1].gpu_bytes is None  # no NVML here
    finally:
        said_down = stack.down(grace_s=10)
    assert said_down == (f"tts: stopped (pid {state.tenants[1].pid})", f"llm: stopped (pid {state.tenants[0].pid})")
    assert not any(_alive(t.pid) for t in state.tenants)
    assert read_state(tmp_path / "state") is None
    assert stack.down() == ("nothing is up (no state file)",)


def test_a_running_tts_is_asked_to_release_before_the_llm_boots(tmp_path: Path, said: list[str]) -> None:
    tts = _tts(free_port(), cached_gib=0.05)
    already = subprocess.Popen(list(tts.command), env={**os.environ, **dict(ENV)})
    try:
        deadline = time.monotonic() + 20
        while not http_ok(tts.url + "/health") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert release.read_memory(tts.url).reserved_bytes == int(0.05 * GIB)
        stack = Stack(_stack(tmp_path, _llm(free_port()), tts), None, said.append, poll_s=0.05)
        state = stack.up()
        released = next(i for i, line in enumerate(said) if "released 0.05 GiB of cached blocks" in line)
        llm_start = next(i for i, line in enumerate(said) if line.startswith("llm: attempt 1"))
        assert released < llm_start
        assert release.read_memory(tts.url).reserved_bytes == 0
        assert state.tenants[1].adopted and state.tenants[1].pid == already.pid
        assert stack.down(grace_s=10)[0] == "tts: adopted at up, left running"
        assert already.poll() is None  # `down` leaves what it did not start
    finally:
        already.terminate()
        already.wait(timeout=10)


def test_a_failed_boot_is_retried_with_the_doctors_fix(tmp_path: Path, said: list[str]) -> None:
    """Real: vLLM 0.20.0's failed boot on the H200 (device-run/retry-vllm-attempt1.log, replayed verbatim: its
    wording and its figures, 68.69 of 139.8 GiB free against 0.6 x 139.8 = 83.88 GiB), the Stack, the doctor,
    subprocesses on loopback. Stand-in: the process that prints that log (standin_vllm.py --replay) and the
    second boot, which comes up whatever utilisation it is given (on the H200 the doctor's 0.49 booted)."""
    real_log = DATA / "device-run" / "retry-vllm-attempt1.log"
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.6", "--replay", str(real_log), "--replay-at", "0.6")
    stack = Stack(_stack(tmp_path, llm, None), None, said.append, poll_s=0.05)
    try:
        stack.up()
        assert [a.outcome for a in stack.attempts] == ["exited with status 1", "ready"]
        # The fix from the real line: what is free (68.69 GiB) less the 0.5 GiB margin, as a fraction of 139.8 GiB,
        # rounded down to hundredths: 68.19 / 139.8 = 0.4877 -> 0.48.
        assert stack.attempts[1].command[stack.attempts[1].command.index("--gpu-memory-utilization") + 1] == "0.48"
        assert any("retrying with --gpu-memory-utilization 0.48" in line for line in said)
        assert any("only 68.69 GiB is free; utilisation 0.6 asks for 83.88 GiB" in line for line in said)
        assert stack.attempts[0].log_path.read_text() == real_log.read_text()
    finally:
        stack.down(grace_s=10)


def test_a_failure_without_a_fix_stops_with_the_log_path(tmp_path: Path, said: list[str]) -> None:
    llm = replace(_llm(free_port()), command=(sys.executable, "-c", "print('boom'); raise SystemExit(3)"))
    stack = Stack(_stack(tmp_path, llm, None), None, said.append, poll_s=0.05)
    with pytest.raises(ServerError, match=r"llm did not start \(exited with status 3\); see .*llm-1\.log"):
        stack.up()
    assert len(stack.attempts) == 1


def test_a_forced_moe_kernel_is_dropped_and_the_boot_retried(tmp_path: Path, said: list[str]) -> None:
    llm = _llm(free_port(), "--moe-backend", "triton")
    stack = Stack(_stack(tmp_path, llm, None), None, said.append, poll_s=0.05)
    try:
        stack.up()
        assert [a.outcome for a in stack.attempts] == ["exited with status 1", "ready"]
        assert "--moe-backend" not in stack.attempts[1].command and "triton" not in stack.attempts[1].command
        assert any("retrying with remove --moe-backend" in line for line in said)
    finally:
        stack.down(grace_s=10)


def test_a_fix_that_changes_nothing_is_not_retried(tmp_path: Path, said: list[str]) -> None:
    # The kernel was forced by the environment, so removing --moe-backend (absent here) cannot help.
    line = "ValueError: NvFp4 MoE backend 'FLASHINFER_TRTLLM' does not support the deployment configuration."
    llm = replace(_llm(free_port()), command=(sys.executable, "-c", f"print({line!r}); raise SystemExit(1)"))
    stack = Stack(_stack(tmp_path, llm, None), None, said.append, poll_s=0.05)
    with pytest.raises(ServerError, match="llm did not start"):
        stack.up()
    assert len(stack.attempts) == 1
    assert any("changes nothing" in line for line in said)
    assert any("forced-kernel" in line for line in said)


def test_a_boot_that_never_becomes_healthy_times_out_and_is_stopped(tmp_path: Path, said: list[str]) -> None:
    llm = _llm(free_port(), "--boot-s", "30", timeout_s=1.0, retries=0)
    stack = Stack(_stack(tmp_path, llm, None), None, said.append, poll_s=0.05)
    with pytest.raises(ServerError, match="not healthy within 1 s"):
        stack.up()
    assert not http_ok(llm.url + "/health")


def test_preflight_lowers_the_utilisation_before_the_first_boot(tmp_path: Path, said: list[str]) -> None:
    # An NVML reading (the figures of the H200 with a co-tenant's 70 GiB of cached blocks, c-cotenant-cached).
    snapshot = GpuSnapshot(
        0,
        "NVIDIA H200",
        150_109_880_320,
        int(69.2 * GIB),
        int(70.6 * GIB),
        0,
        (GpuProcess(4242, int(70.6 * GIB), "python3 tts_worker.py"),),
    )
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.6")
    stack = Stack(_stack(tmp_path, llm, None), lambda _index: snapshot, said.append, poll_s=0.05)
    try:
        stack.up()
        first = stack.attempts[0].command
        assert first[first.index("--gpu-memory-utilization") + 1] == "0.49"
        assert any("pid    4242   70.60 GiB  not in the stack" in line for line in said)
    finally:
        stack.down(grace_s=10)


def _is_sleeping(url: str) -> bool:
    with urllib.request.urlopen(url + "/is_sleeping", timeout=5) as response:
        return bool(json.loads(response.read())["is_sleeping"])


def test_time_share_puts_the_llm_to_sleep_before_the_tts_starts_and_wakes_it(tmp_path: Path, said: list[str]) -> None:
    """Real: the Stack, its subprocesses and HTTP on loopback. Stand-in: vLLM (standin_vllm.py, whose /wake_up
    takes --wake-s seconds and answers once awake, as vLLM's does) and the TTS (the reference tenant)."""
    wake_s = 0.4
    llm = _llm(free_port(), "--wake-s", str(wake_s))
    stack = Stack(_stack(tmp_path, llm, _tts(free_port()), mode="timeshare"), None, said.append, poll_s=0.05)
    state = stack.up()
    try:
        command = state.tenants[0].command
        assert "--enable-sleep-mode" in command
        # A woken vLLM 0.20 lost the images its API server's cache says it holds: time-sharing sends them whole.
        assert command[command.index("--mm-processor-cache-gb") + 1] == "0"
        asleep = next(i for i, line in enumerate(said) if line.startswith("llm: asleep after"))
        assert asleep < next(i for i, line in enumerate(said) if line.startswith("tts: attempt 1"))
        log_path = Path(state.tenants[0].log_path)
        assert "sleep /sleep?level=1" in log_path.read_text() and "wake_up" not in log_path.read_text()
        assert _is_sleeping(llm.url) is True
        took_s = stack.wake_llm()
        # The call returned only once the server was awake: no poll, no wait by the caller.
        assert _is_sleeping(llm.url) is False and http_ok(llm.url + "/health")
        assert took_s >= wake_s
        lines = log_path.read_text().splitlines()
        assert lines.count("wake_up") == 1 and lines.index("wake_up") > lines.index("sleep /sleep?level=1")
    finally:
        stack.down(grace_s=10)


def test_without_nvml_or_a_size_up_says_what_to_give(tmp_path: Path) -> None:
    def no_nvml(_index: int) -> GpuSnapshot:
        raise GpuError("NVML is not available (NVML Shared Library Not Found): no NVIDIA driver here")

    stack_file = replace(_stack(tmp_path, _llm(free_port()), None), gpu_memory_bytes=None)
    with pytest.raises(GpuError, match="or set gpu_memory in the stack file"):
        Stack(stack_file, no_nvml, print).up()


def test_stack_file_binds_vllm_to_loopback_unless_told(tmp_path: Path) -> None:
    data = {
        "gpu_memory": "32GiB",
        "headroom": "1GiB",
        "llm": {"command": "vllm serve Qwen/Qwen2.5-VL-7B-Instruct --port 8000", "url": "http://127.0.0.1:8000/"},
        "tts": {"command": ["python", "-m", "tts_server"], "url": "http://127.0.0.1:8093", "footprint": "1.5GiB"},
    }
    stack = parse_stack(data, tmp_path)
    assert stack.llm.command[-2:] == ("--host", "127.0.0.1")
    assert stack.llm.url == "http://127.0.0.1:8000" and stack.llm.ready_pattern == "GPU KV cache size"
    assert stack.tts is not None and stack.tts.release_path == "/v1/gpu/release"
    # Each role's defaults are its own: the TTS prints no KV line, vLLM speaks no release protocol.
    assert stack.tts.ready_pattern is None and stack.llm.release_path is None and stack.llm.memory_path is None
    assert (stack.llm.boot_timeout_s, stack.tts.boot_timeout_s) == (900, 300)  # vLLM compiles; a TTS loads
    assert stack.tts.footprint_bytes == int(1.5 * GIB) and stack.headroom_bytes == 1024 * MIB
    assert stack.state_dir == tmp_path / ".gpu-stack"
    told = parse_stack({**data, "llm": {**data["llm"], "command": "vllm serve m --host 0.0.0.0"}}, tmp_path)
    assert told.llm.command[-2:] == ("--host", "0.0.0.0")
    # Another server's flags are its own: nothing is added to a command that is not vLLM's.
    other = parse_stack({**data, "llm": {**data["llm"], "command": "llama-server -m m.gguf --port 8000"}}, tmp_path)
    assert other.llm.command == ("llama-server", "-m", "m.gguf", "--port", "8000")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tts": {}}, "an 'llm' section"),
        ({"llm": {"command": "vllm serve m"}}, "needs command and url"),
        ({"llm": {"command": "x", "url": "u"}, "mode": "both"}, "use coreside, timeshare or auto"),
        ({"llm": {"command": "x", "url": "u"}, "gpu_memory": "lots"}, "cannot read the size"),
        ({"llm": "vllm serve m"}, "'llm' must be a mapping"),
        ({"llm": {"command": [], "url": "u"}}, "llm.command must be a string or a list of strings"),
        ({"llm": {"command": [{"run": "vllm"}], "url": "u"}}, "llm.command must be a string or a list"),
        ({"llm": {"command": "x", "url": "u", "env": ["A=1"]}}, "llm.env must be a mapping"),
    ],
)
def test_bad_stack_files_are_clear_errors(tmp_path: Path, data: dict[str, object], message: str) -> None:
    with pytest.raises(GpuError, match=message):
        parse_stack(data, tmp_path)


@pytest.mark.parametrize(("footprint_gib", "timeshare"), [(4.0, True), (1.0, False)])
def test_auto_mode_time_shares_only_when_the_tts_does_not_fit(
    tmp_path: Path, said: list[str], footprint_gib: float, timeshare: bool
) -> None:
    # 32 GiB card, utilisation 0.9: 28.8 GiB for vLLM + 0.5 GiB context leaves 2.7 GiB; the TTS needs its
    # footprint + 0.5 GiB context + 0.5 GiB headroom.
    llm = _llm(free_port(), "--gpu-memory-utilization", "0.9", "--total-gib", "32", "--free-gib", "32")
    tts = replace(_tts(free_port()), footprint_bytes=int(footprint_gib * GIB))
    stack = Stack(_stack(tmp_path, llm, tts, mode="auto"), None, said.append, poll_s=0.05)
    state = stack.up()
    try:
        assert state.timeshare is timeshare
        assert "--enable-sleep-mode" in state.tenants[0].command
        assert any(
            line.startswith(f"auto: the TTS needs {footprint_gib + 1:.2f} GiB, 2.70 GiB is free") for line in said
        )
        statuses = [tenant_status(t, None, True, http_ok(t.url + t.health_path)) for t in state.tenants]
        assert statuses[0].asleep is timeshare
    finally:
        stack.down(grace_s=10)


def test_down_runs_the_stop_command_first(tmp_path: Path, said: list[str]) -> None:
    marker = tmp_path / "stopped"
    stop = (sys.executable, "-c", f"open({str(marker)!r}, 'w').write('docker stop vllm')")
    llm = replace(_llm(free_port()), stop_command=stop)
    stack = Stack(_stack(tmp_path, llm, None), None, said.append, poll_s=0.05)
    stack.up()
    stack.down(grace_s=10)
    assert marker.read_text() == "docker stop vllm"


def test_docker_ports_are_published_on_loopback(tmp_path: Path) -> None:
    command = "docker run --rm --gpus all -p 8000:8000 --publish=8001:8001 -p 0.0.0.0:9000:9000 vllm/vllm-openai"
    stack = parse_stack(
        {"llm": {"command": command, "url": "http://127.0.0.1:8000", "stop": "docker stop v"}}, tmp_path
    )
    assert stack.llm.command == (
        "docker",
        "run",
        "--rm",
        "--gpus",
        "all",
        "-p",
        "127.0.0.1:8000:8000",
        "--publish=127.0.0.1:8001:8001",
        "-p",
        "0.0.0.0:9000:9000",
        "vllm/vllm-openai",
    )
    assert stack.llm.stop_command == ("docker", "stop", "v")


@pytest.mark.parametrize("name", ["stack.yaml", "stack-docker.yaml"])
def test_example_stack_files_parse_and_fit_the_card_they_are_written_for(name: str) -> None:
    stack = load_stack(Path(__file__).resolve().parents[2] / "examples" / name)
    assert stack.tts is not None and stack.tts.footprint_bytes is not None
    utilization = float(flag_value(stack.llm.command, "--gpu-memory-utilization") or 0)
    model = model_info_from_config(json.loads((CONFIGS / "qwen2.5-vl-7b-instruct.config.json").read_text()))
    flags = VllmFlags(utilization, 16384, 8, limit_images_per_prompt=2)
    tts = TtsTenant("tts", stack.tts.footprint_bytes, "measured")
    plan = make_plan(PlanRequest(DeviceMemory(int(31.36 * GIB)), model, flags, tts, stack.headroom_bytes))
    assert plan.fits and plan.boots, plan.lines
    assert "127.0.0.1" in " ".join(stack.llm.command)


def test_the_pipeline_sees_the_running_stack_and_takes_turns(tmp_path: Path, said: list[str]) -> None:
    llm, tts = _llm(free_port()), _tts(free_port(), cached_gib=0.01)
    stack = Stack(_stack(tmp_path, llm, tts, mode="timeshare"), None, said.append, poll_s=0.05)
    state = stack.up()
    try:
        running = running_stack(tmp_path / "state")
        assert running.timeshare and running.openai_base_url == llm.url + "/v1" and running.tts_url == tts.url
        turns = Turns(running)
        assert turns.llm_asleep() is True
        with turns.llm():
            assert turns.llm_asleep() is False
            assert release.read_memory(tts.url).reserved_bytes == 0  # the TTS released before vLLM woke
        assert turns.llm_asleep() is True
        with turns.tts():
            assert turns.llm_asleep() is True
        log = Path(state.tenants[0].log_path).read_text()
        assert log.count("sleep /sleep?level=1") == 2 and log.count("wake_up") == 1
    finally:
        stack.down(grace_s=10)
    with pytest.raises(GpuError, match="no GPU stack is up"):
        running_stack(tmp_path / "state")


def test_a_stack_whose_server_died_is_a_loud_error(tmp_path: Path, said: list[str]) -> None:
    stack = Stack(_stack(tmp_path, _llm(free_port()), None), None, said.append, poll_s=0.05)
    state = stack.up()
    os.killpg(state.tenants[0].pgid, 15)
    deadline = time.monotonic() + 10
    while http_ok(state.tenants[0].url + "/health") and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(ServerError, match=r"llm at http://127\.0\.0\.1:\d+ is down .*gpu up"):
        running_stack(tmp_path / "state")
    stack.down(grace_s=5)
