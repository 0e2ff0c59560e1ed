"""`comic-narrator INPUT --stack STACK.yaml`: the run reads with the LLM of a stack that `gpu up` recorded."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml

from comic_narrator.artifacts import Cast, ClipList
from comic_narrator.cli import main
from comic_narrator.gpu.state import StackState, TenantState, read_state, write_state
from tests.conftest import SAMPLE_PAGE, free_ports
from tests.llm.chat_server import chat_server

STANDINS = str(Path(__file__).with_name("timeshare_standins.py"))


def _stack_file(tmp_path: Path, llm_url: str) -> Path:
    path = tmp_path / "stack.yaml"
    path.write_text(
        f"gpu: 0\ngpu_memory: 32GiB\nstate_dir: {tmp_path / 'state'}\n"
        f"llm:\n  name: vllm\n  command: vllm serve some/model --port 8000\n  url: {llm_url}\n  health: /health\n"
    )
    return path


def _record_up(tmp_path: Path, llm_url: str) -> None:
    tenant = TenantState(
        name="vllm",
        role="llm",
        pid=os.getpid(),
        pgid=os.getpgid(0),
        url=llm_url,
        health_path="/health",
        log_path=str(tmp_path / "vllm.log"),
        command=("vllm",),
        adopted=True,
        started_at_s=time.time(),
    )
    write_state(tmp_path / "state", StackState(gpu_index=0, tenants=(tenant,)))


def test_run_reads_with_the_stacks_llm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real: the run's --stack lookup and the HTTP client. Stand-ins: the state file is written here as `gpu up`
    would (an adopted server), and the LLM is the loopback chat server. The time-shared test below starts its
    stack with `gpu up` itself and runs to the MP4."""
    with chat_server() as (url, state):
        base = url.removesuffix("/v1")
        stack = _stack_file(tmp_path, base)
        _record_up(tmp_path, base)
        out = tmp_path / "s.mp4"
        assert main([str(SAMPLE_PAGE), "-o", str(out), "--stack", str(stack), "--vision-only"]) == 0
        assert state.requests, "the page went to the stack's LLM"
    err = capsys.readouterr().err
    assert f"[stack] LLM {base}" in err
    reading = json.loads((tmp_path / "s.mp4.work" / "reading.json").read_text())
    assert reading["pages"][0]["vision"] == "llm:test-vlm"


def test_a_stack_that_is_not_up_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = _stack_file(tmp_path, "http://127.0.0.1:9")
    code = main([str(SAMPLE_PAGE), "-o", str(tmp_path / "s.mp4"), "--stack", str(stack), "-q"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1
    assert "no GPU stack is up" in err and "gpu up" in err


@pytest.mark.slow
def test_a_time_shared_run_wakes_the_llm_to_read_and_puts_it_to_sleep_to_voice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real: `gpu up` / `gpu down` (subprocesses, process groups, state file), the whole run on the bundled sample
    page (OCR, script, casting, mix, encode), the HTTP clients, sleep/wake turns. Stand-ins, both loopback test
    servers in tests/llm/timeshare_standins.py: the vLLM (canned chat answers, sleep endpoints, refuses chat while
    asleep) and the TTS (Fish-API tones, release protocol). Neither is the real server."""
    events = tmp_path / "events.log"
    llm_port, tts_port = free_ports(2)
    stack = tmp_path / "stack.yaml"
    tenant = [sys.executable, STANDINS]
    stack.write_text(
        yaml.safe_dump(
            {
                "gpu_memory": "32GiB",
                "mode": "timeshare",
                "state_dir": str(tmp_path / "state"),
                "llm": {
                    "command": [
                        *tenant,
                        "vllm",
                        "--port",
                        str(llm_port),
                        "--host",
                        "127.0.0.1",
                        "--events",
                        str(events),
                    ],
                    "url": f"http://127.0.0.1:{llm_port}",
                    "boot_timeout_s": 60,
                },
                "tts": {
                    "command": [*tenant, "tts", "--port", str(tts_port), "--events", str(events)],
                    "url": f"http://127.0.0.1:{tts_port}",
                    "health": "/v1/health",
                    "footprint": "1GiB",
                    "boot_timeout_s": 60,
                },
            }
        )
    )
    assert main(["gpu", "up", str(stack)]) == 0, capsys.readouterr().err
    try:
        state = read_state(tmp_path / "state")
        assert state is not None and state.timeshare and not any(t.adopted for t in state.tenants)
        out = tmp_path / "s.mp4"
        voices = "hero:en:male:adult,mira:en:female:young,tom:en:male:young"
        command = [str(SAMPLE_PAGE), "-o", str(out), "--stack", str(stack), "--tts-voices", voices]
        code = main([*command, "--preset", "ultrafast", "--fps", "24"])
        assert code == 0, capsys.readouterr().err
    finally:
        assert main(["gpu", "down", str(stack)]) == 0
    assert "time-shared: vLLM sleeps while voices are made" in capsys.readouterr().err
    lines = events.read_text().splitlines()
    booted = lines.index("tts up")
    assert lines[:booted] == ["vllm up", "llm sleep /sleep?level=1"], "gpu up put vLLM to sleep before the TTS"
    run = lines[booted + 1 :]
    # Reading: the TTS gives back its cache, then vLLM wakes, then the page is read.
    assert run[:3] == ["tts /v1/gpu/release", "llm wake_up", "llm chat"]
    asleep = run.index("llm sleep /sleep?level=1")
    voiced = [i for i, line in enumerate(run) if line == "tts /v1/tts"]
    # Voicing: only after vLLM went back to sleep, and no chat request after that.
    assert voiced and min(voiced) > asleep
    assert "llm chat" not in run[asleep:] and not any("refused" in line for line in run)
    work = tmp_path / "s.mp4.work"
    assert json.loads((work / "reading.json").read_text())["pages"][0]["vision"] == "llm:test-vlm"
    # Every line cast to a server voice was one request to the TTS (casting may still give a creature a bundled
    # voice: those lines are made in-process during the same turn).
    cast = Cast.model_validate_json((work / "cast.json").read_text())
    server_lines = sum(member.lines for member in cast.members if member.voice.startswith("fish:"))
    assert server_lines >= 1 and len(voiced) == server_lines
    assert len(ClipList.model_validate_json((work / "clips.json").read_text()).clips) >= server_lines
    assert out.stat().st_size > 0
