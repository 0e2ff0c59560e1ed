"""The page's bounded answer schema and the max_tokens cap it sets, on a real page's local reading, through the
reader's real request path against the loopback chat server (tests/llm/chat_server.py)."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import numpy as np
import pytest

from comic_narrator.artifacts import PageReading
from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError
from comic_narrator.reading.llm_reader import (
    answer_char_bound,
    answer_schema,
    answer_violations,
    describe_regions,
    page_request,
    refine_with_llm,
    text_bound,
)
from comic_narrator.reading.llm_views import View
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import chat_server


@pytest.fixture(scope="module")
def sample_reading(tmp_path_factory: pytest.TempPathFactory) -> PageReading:
    """The sample page read by the local reader (real OCR and panels)."""
    from comic_narrator import pipeline
    from comic_narrator.config import IngestConfig, VisionConfig
    from comic_narrator.reading.stage import read_pages

    work = tmp_path_factory.mktemp("read")
    book = pipeline.load_or_ingest(SAMPLE_PAGE, IngestConfig(), work)
    reading, failures = read_pages(book, VisionConfig(), work)
    assert not failures
    return reading.pages[0]


def _longest_answer(schema: dict[str, Any]) -> Any:
    """The longest value the schema admits: every list full, every string at its bound, the longest enum."""
    if "anyOf" in schema:
        return max((_longest_answer(option) for option in schema["anyOf"]), key=lambda v: len(json.dumps(v)))
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: len(json.dumps(v, ensure_ascii=False)))
    if schema["type"] == "string":
        return "x" * schema["maxLength"]
    if schema["type"] == "null":
        return None
    if schema["type"] == "array":
        return [_longest_answer(schema["items"]) for _ in range(schema["maxItems"])]
    return {key: _longest_answer(value) for key, value in schema["properties"].items()}


def test_the_bound_is_the_longest_answer_the_schema_admits(sample_reading: PageReading) -> None:
    schema = answer_schema(sample_reading)
    longest = _longest_answer(schema)
    assert answer_violations(longest, schema) == []
    assert answer_char_bound(schema) == len(json.dumps(longest, separators=(",", ":"), ensure_ascii=False))
    # One character, item, region or key more (or a key fewer) is outside the schema, so the engine never lets
    # it through; each change alone, the rest of the answer as admitted.
    first, *rest = longest["texts"]
    assert answer_violations({**longest, "texts": [{**first, "text": first["text"] + "x"}, *rest]}, schema) == [
        f"answer.texts[0].text: {len(first['text']) + 1} characters, more than {len(first['text'])}"
    ]
    assert answer_violations({**longest, "texts": [*longest["texts"], first]}, schema)
    assert answer_violations({**longest, "texts": [{**first, "index": len(sample_reading.texts)}, *rest]}, schema)
    assert answer_violations({**longest, "texts": [{**first, "extra": None}, *rest]}, schema)
    assert answer_violations({key: value for key, value in longest.items() if key != "scene"}, schema)


def test_the_regions_described_to_the_model(sample_reading: PageReading) -> None:
    """Positions as a share of what the image shows: the page, a panel's crop, or the print outside the panels;
    a view with no region says so rather than listing nothing."""
    story = [i for i, text in enumerate(sample_reading.texts) if text.kind != "furniture"]
    whole = describe_regions(sample_reading)
    assert "position as % of the page" in whole and "The image is" not in whole
    assert [int(m.group(1)) for m in re.finditer(r"^\[(\d+)\]", whole, re.M)] == story
    width, height = sample_reading.width, sample_reading.height
    outside = View((0, 0, width, height), story[:1], panel=0)
    assert "The image is the part of the page outside its panels." in describe_regions(sample_reading, outside)
    assert describe_regions(sample_reading, View((0, 0, width, height), [], panel=1)).endswith("(none found)")
    assert "(none found)" not in whole


def test_the_page_schema_names_its_story_regions_and_fits_their_text(sample_reading: PageReading) -> None:
    schema = answer_schema(sample_reading)
    story = [i for i, text in enumerate(sample_reading.texts) if text.kind != "furniture"]
    assert story, "the sample page has lettering"
    texts = schema["properties"]["texts"]
    assert texts["items"]["properties"]["index"]["enum"] == story
    assert texts["minItems"] == texts["maxItems"] == len(story)  # one answer per region, every region
    longest_ocr = max(len(sample_reading.texts[i].text) for i in story)
    assert texts["items"]["properties"]["text"]["maxLength"] == text_bound(longest_ocr) > longest_ocr
    assert text_bound(0) == 60 and text_bound(10_000) == 600


def test_max_tokens_is_the_page_bound_under_the_configured_cap(sample_reading: PageReading) -> None:
    rgb = np.full((300, 200, 3), 255, np.uint8)
    bound = answer_char_bound(answer_schema(sample_reading))
    assert page_request(rgb, sample_reading, 1536, 100_000).max_tokens == bound
    assert page_request(rgb, sample_reading, 1536, 500).max_tokens == min(500, bound)
    with chat_server() as (url, state):
        refine_with_llm(rgb, sample_reading, OpenAIChatClient(LlmConfig(base_url=url, max_tokens=100_000)), 1536)
        sent = state.requests[-1]
    assert sent["max_tokens"] == bound
    assert sent["response_format"]["json_schema"]["schema"] == answer_schema(sample_reading)


def test_an_answer_cut_off_at_max_tokens_says_so(sample_reading: PageReading) -> None:
    rgb = np.full((300, 200, 3), 255, np.uint8)
    with chat_server("length") as (url, _state):
        client = OpenAIChatClient(LlmConfig(base_url=url, max_tokens=40))
        with pytest.raises(ServerError, match=r"cut off at max_tokens=40 before its JSON ended"):
            refine_with_llm(rgb, sample_reading, client, 1536)


def test_an_answer_outside_the_schema_is_reported_and_confined(
    sample_reading: PageReading, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that ignores response_format: the reader warns, and the invented region changes nothing."""
    rgb = np.full((300, 200, 3), 255, np.uint8)
    with chat_server("off-schema") as (url, _state), caplog.at_level(logging.WARNING, logger="comic_narrator"):
        merged = refine_with_llm(rgb, sample_reading, OpenAIChatClient(LlmConfig(base_url=url)), 1536)
    assert "breaks the JSON schema it was asked with" in caplog.text and "999" in caplog.text
    # The first three of its breaches are named and the rest counted (an invented region and key, two settings
    # outside the list, one setting too many).
    assert re.search(r"\(([^;]+; ){3}[1-9]\d* more\); does the server enforce", caplog.text), caplog.text
    assert len(merged.texts) == len(sample_reading.texts)
    assert not [text for text in merged.texts if "Ignore previous" in text.text]
    # A setting outside the list, and the same one twice, are dropped; the listed one is kept.
    assert merged.scene == ["interior"]


def test_the_pages_setting_reaches_the_reading(sample_reading: PageReading) -> None:
    """The schema asks for at most two of the sound bed's settings, and the answer's become the reading's."""
    rgb = np.full((300, 200, 3), 255, np.uint8)
    request = page_request(rgb, sample_reading, 1536, 2048)
    scene = request.schema["properties"]["scene"]
    assert scene["maxItems"] == 2 and set(scene["items"]["enum"]) == {
        "wind",
        "rain",
        "sea",
        "city",
        "forest",
        "crowd",
        "fire",
        "night",
        "interior",
    }
    assert "scene" in request.schema["required"]
    with chat_server() as (url, _state):
        merged = refine_with_llm(rgb, sample_reading, OpenAIChatClient(LlmConfig(base_url=url)), 1536)
    said = " ".join(text.text for text in sample_reading.texts).lower()
    assert merged.scene == (["forest"] if any(w in said for w in ("forest", "tree", "wood")) else ["interior"])


def test_the_answers_token_counts_come_back(sample_reading: PageReading) -> None:
    rgb = np.full((300, 200, 3), 255, np.uint8)
    request = page_request(rgb, sample_reading, 1536, 2048)
    with chat_server() as (url, _state):
        answer = OpenAIChatClient(LlmConfig(base_url=url)).chat_json_answer(
            request.messages, request.schema, "page_reading", request.max_tokens
        )
    assert answer.finish_reason == "stop" and answer.prompt_tokens == 1000
    assert answer.completion_tokens == len(json.dumps(answer.content)) // 4 > 0
    assert answer_violations(answer.content, request.schema) == []
