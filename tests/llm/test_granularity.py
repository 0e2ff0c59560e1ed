"""``--llm-granularity page|panel``: one request with the page, or one per panel with its crop and its regions,
merged into the page's reading. Real: the CLI, the local reader on the sample page, the HTTP client, the cache
and the loopback chat server (tests/llm/chat_server.py), which decodes each request's image and records its
size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from comic_narrator.artifacts import PageReading, Panel, TextRegion
from comic_narrator.cli import main
from comic_narrator.reading.llm_views import joined_answers, panel_views
from tests.conftest import SAMPLE_PAGE
from tests.llm.chat_server import REGION, chat_server


def _read(work: Path, url: str, capsys: pytest.CaptureFixture[str], *more: str) -> dict[str, Any]:
    argv = ["read", str(SAMPLE_PAGE), "--json", "--vision", "llm", "--llm-url", url, "--work-dir", str(work)]
    assert main([*argv, *more]) == 0
    return dict(json.loads(capsys.readouterr().out)["pages"][0])


def _local(work: Path, capsys: pytest.CaptureFixture[str]) -> PageReading:
    assert main(["read", str(SAMPLE_PAGE), "--json", "--work-dir", str(work)]) == 0
    return PageReading.model_validate(json.loads(capsys.readouterr().out)["pages"][0])


def test_page_and_panel_requests_carry_the_page_and_each_panels_crop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "w"
    local = _local(work, capsys)
    views = panel_views(local)
    assert len(views) >= 3, "the sample page's lettering sits in several panels"
    with chat_server() as (url, state):
        page = _read(work, url, capsys)
        assert state.image_sizes == [(local.width, local.height)]
        whole = state.requests[0]["messages"][1]["content"][1]["text"]
        assert "The image is" not in whole and "position as % of the page" in whole
        panels = _read(work, url, capsys, "--llm-granularity", "panel")
        # One request per panel with lettering, each carrying that panel's crop (under the 1536 px cap, as sent).
        crops = state.image_sizes[1:]
        assert crops == [(view.box[2], view.box[3]) for view in views]
        assert all(w * h < local.width * local.height / 2 for w, h in crops)
        # Each request lists exactly its panel's regions, positioned within the crop.
        for request, view in zip(state.requests[1:], views, strict=True):
            prompt = request["messages"][1]["content"][1]["text"]
            assert [int(m.group(1)) for m in REGION.finditer(prompt)] == view.indices
            shows = f"panel {view.panel} of {len(local.panels)} of the page" if view.panel else "the part"
            assert f"The image is {shows}" in prompt and f"position as % of {shows}" in prompt
            assert request["response_format"]["json_schema"]["schema"]["properties"]["texts"]["minItems"] == len(
                view.indices
            )
        asked = len(state.requests)
        # Each granularity has its own cache entry: both are answered from the cache now.
        assert _read(work, url, capsys) == page
        assert _read(work, url, capsys, "--llm-granularity", "panel") == panels
        assert len(state.requests) == asked
    # The panels' answers merged into one reading: every story region answered, both characters named.
    story = [t for t in panels["texts"] if t["kind"] != "furniture"]
    assert len(panels["texts"]) == len(local.texts)
    assert [t["text"] for t in story] == [t.text.capitalize() for t in local.texts if t.kind != "furniture"]
    assert all(t["speaker"] for t in story if t["kind"] in ("speech", "shout"))
    assert {c["id"] for c in panels["characters"]} <= {"pepper", "carrot"} and panels["vision"] == "llm:test-vlm"


def test_later_panels_are_shown_the_characters_earlier_panels_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Panels of a page are asked in reading order, each shown the names the page's earlier panels gave, so a
    model that renames characters per request (the server's "drift" mode) keeps one name within the page."""
    with chat_server("drift") as (url, state):
        panels = _read(tmp_path / "w", url, capsys, "--llm-granularity", "panel")
    prompts = [r["messages"][1]["content"][1]["text"] for r in state.requests]
    assert "Characters already named" not in prompts[0]
    assert all("Characters already named" in prompt for prompt in prompts[1:])
    speakers = {t["speaker"] for t in panels["texts"] if t["speaker"]}
    assert len(speakers) <= 2, speakers


def test_joined_answers_keep_every_region_and_vote_on_the_setting() -> None:
    first = {"characters": [{"name": "Ann"}], "texts": [{"index": 0}], "scene": ["forest", "wind"]}
    second = {"characters": [{"name": "ann"}, {"name": "Bob"}], "texts": [{"index": 3}], "scene": ["wind"]}
    joined = joined_answers([first, second])
    assert [c["name"] for c in joined["characters"]] == ["Ann", "Bob"]
    assert [t["index"] for t in joined["texts"]] == [0, 3]
    assert joined["scene"] == ["wind", "forest"]


def test_a_panel_view_shows_its_whole_panel_and_loose_lettering_comes_last() -> None:
    reading = PageReading(
        page=0,
        width=1000,
        height=1400,
        reading_direction="ltr",
        panels=[Panel(bbox=(50, 50, 900, 600)), Panel(bbox=(50, 700, 900, 600))],
        texts=[
            TextRegion(bbox=(400, 20, 200, 20), kind="caption", text="Meanwhile", panel=-1),  # over the panels
            TextRegion(bbox=(100, 100, 150, 60), kind="speech", text="Hi", panel=0),
            TextRegion(bbox=(120, 760, 150, 60), kind="speech", text="Bye", panel=1),
            TextRegion(bbox=(10, 1370, 100, 20), kind="furniture", text="p. 3", panel=-1),
        ],
    )
    views = panel_views(reading)
    assert [(v.panel, v.indices) for v in views] == [(1, [1]), (2, [2]), (0, [0])]
    margin = round(0.02 * 1400)
    assert views[0].box == (50 - margin, 50 - margin, 900 + 2 * margin, 600 + 2 * margin), "the whole panel"
    loose = round(0.05 * 1400)
    assert views[2].box == (400 - loose, 0, 200 + 2 * loose, 20 + 20 + loose), "the caption alone, with room"


def test_one_answer_is_the_page_s_answer_as_it_came() -> None:
    answer = {"characters": [], "texts": [{"index": 0}], "scene": ["rain", "rain"], "page_kind": "story"}
    assert joined_answers([answer]) is answer
