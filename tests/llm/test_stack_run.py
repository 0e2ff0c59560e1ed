"""`comic-narrator INPUT --stack STACK.yaml`: the run reads with the LLM of a stack that `gpu up` recorded."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from comic_narrator.cli import main
from comic_narrator.gpu.state import StackState, TenantState, write_state
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import chat_server


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
