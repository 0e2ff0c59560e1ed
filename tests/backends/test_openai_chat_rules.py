"""The chat client's own rules against the loopback chat server (tests/llm/chat_server.py): thinking switched off
in the request unless the config leaves it on, and an answer that is JSON but not an object refused."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import PageReading
from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError
from comic_narrator.reading.llm_reader import PageRequest, page_request
from tests.llm.chat_server import chat_server


def _blank_page_request() -> PageRequest:
    """The reader's own request for a blank page with nothing read on it."""
    blank = PageReading(page=0, width=200, height=300, reading_direction="ltr", panels=[], texts=[])
    return page_request(np.full((300, 200, 3), 255, np.uint8), blank, 1536, 2048)


def test_thinking_is_switched_off_unless_the_config_leaves_it_on() -> None:
    # Reasoning models answer with empty content while thinking is on (DESIGN.md, vLLM facts).
    request = _blank_page_request()
    with chat_server() as (url, state):
        for disable in (True, False):
            client = OpenAIChatClient(LlmConfig(base_url=url, disable_thinking=disable))
            client.chat_json(request.messages, request.schema, "page_reading", request.max_tokens)
    off, on = state.requests
    assert off["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in on


def test_json_that_is_not_an_object_is_refused() -> None:
    request = _blank_page_request()
    with chat_server("array") as (url, _state):
        client = OpenAIChatClient(LlmConfig(base_url=url))
        with pytest.raises(ServerError, match="the LLM's JSON is not an object"):
            client.chat_json(request.messages, request.schema, "page_reading", request.max_tokens)
