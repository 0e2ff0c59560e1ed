"""The LLM reader against a loopback OpenAI-compatible server: mapping, caching, bounded concurrency, failures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from comic_narrator.backends.openai_chat import OpenAIChatClient
from comic_narrator.cli import main
from comic_narrator.config import LlmConfig
from comic_narrator.errors import ServerError
from comic_narrator.reading.llm_merge import character_id
from comic_narrator.reading.llm_reader import encode_page
from tests.conftest import SAMPLE_PAGE, free_ports
from tests.llm.chat_server import chat_server


def test_character_ids_are_stable_slugs() -> None:
    assert character_id("Carrot the Cat") == "carrot-the-cat"
    assert character_id("  Pepper ") == "pepper"
    assert character_id("ウィキペたん") == "ウィキペたん"
    assert character_id("???") == "unknown"


def test_read_json_with_llm_names_speakers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with chat_server() as (url, state):
        code = main(
            ["read", str(SAMPLE_PAGE), "--json", "--vision", "llm", "--llm-url", url, "--work-dir", str(tmp_path / "w")]
        )
        assert code == 0, capsys.readouterr().err
        reading = json.loads(capsys.readouterr().out)
        page = reading["pages"][0]
        assert page["vision"] == "llm:test-vlm"
        assert {c["id"] for c in page["characters"]} == {"pepper", "carrot"}
        # The chat server names each balloon by the side of the page its prompt line puts it on (left: Pepper):
        # every answer must land on the region it was given for, not merely name somebody.
        spoken = [t for t in page["texts"] if t["kind"] in ("speech", "shout")]
        centres_pct = [f"{100 * (t['bbox'][0] + t['bbox'][2] / 2) / page['width']:.0f}" for t in spoken]  # as sent
        sides = ["pepper" if int(pct) < 50 else "carrot" for pct in centres_pct]
        assert [t["speaker"] for t in spoken] == sides and set(sides) == {"pepper", "carrot"}
        assert all(t["speaker"] is None for t in page["texts"] if t["kind"] in ("caption", "sound"))
        first_request = state.requests[0]
        assert first_request["model"] == "test-vlm"
        assert first_request["chat_template_kwargs"] == {"enable_thinking": False}
        # A second run is answered from the cache: no new request reaches the server.
        sent = len(state.requests)
        assert (
            main(
                [
                    "read",
                    str(SAMPLE_PAGE),
                    "--json",
                    "--vision",
                    "llm",
                    "--llm-url",
                    url,
                    "--work-dir",
                    str(tmp_path / "w"),
                ]
            )
            == 0
        )
        assert len(state.requests) == sent
        capsys.readouterr()


def test_a_changed_prompt_asks_again_and_another_address_of_the_model_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cached LLM reading is keyed by what was asked (instructions, schema, settings) and by the model, not by
    the server's address. Real: the CLI, the client, the cache and two loopback servers serving one model."""
    import comic_narrator.reading.llm_reader as llm_reader

    work = ["--work-dir", str(tmp_path / "w")]
    with chat_server() as (first_url, first), chat_server() as (second_url, second):
        assert main(["read", str(SAMPLE_PAGE), "--json", "--vision", "llm", "--llm-url", first_url, *work]) == 0
        asked = len(first.requests)
        assert asked > 0
        assert main(["read", str(SAMPLE_PAGE), "--json", "--vision", "llm", "--llm-url", second_url, *work]) == 0
        assert len(second.requests) == 0 and len(first.requests) == asked
        monkeypatch.setattr(llm_reader, "SYSTEM_PROMPT", llm_reader.SYSTEM_PROMPT + " Answer briefly.")
        assert main(["read", str(SAMPLE_PAGE), "--json", "--vision", "llm", "--llm-url", second_url, *work]) == 0
        assert [r["messages"][0]["content"] for r in second.requests] == [llm_reader.SYSTEM_PROMPT]
    capsys.readouterr()


def test_pages_are_sent_concurrently_within_the_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real: the reader's request pool and HTTP on loopback. Stand-in: the chat server (tests/llm/chat_server.py),
    which holds each request up to 3 s for a second one, so pages sent one after another show 1 in flight."""
    folder = tmp_path / "book"
    folder.mkdir()
    for n in range(4):
        (folder / f"p{n}.jpg").write_bytes(SAMPLE_PAGE.read_bytes())
    with chat_server(hold_s=3.0) as (url, state):
        assert (
            main(["read", str(folder), "--vision", "llm", "--llm-url", url, "-q", "--work-dir", str(tmp_path / "w")])
            == 0
        )
        assert len(state.requests) == 4
        assert 2 <= state.max_in_flight <= LlmConfig.concurrency


def test_the_api_key_variable_reaches_the_server_as_a_bearer_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real: the HTTP client and the CLI's configuration. Stand-in: the loopback chat server, which records each
    request's Authorization header. The token must never be written into the work folder."""
    token = "sk-test-8f3a1c"
    monkeypatch.setenv("COMIC_NARRATOR_LLM_API_KEY", token)  # the name the README promises
    work = tmp_path / "w"
    with chat_server() as (url, state):
        assert main(["read", str(SAMPLE_PAGE), "--vision", "llm", "--llm-url", url, "-q", "--work-dir", str(work)]) == 0
    assert state.authorizations and set(state.authorizations) == {f"Bearer {token}"}
    assert not [p for p in work.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    monkeypatch.delenv("COMIC_NARRATOR_LLM_API_KEY")
    with chat_server() as (url, state):
        client = OpenAIChatClient(LlmConfig(base_url=url))
        client.resolve_model()
    assert state.authorizations == [None]


def test_server_down_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_ports(1)[0]}/v1"
    code = main(["read", str(SAMPLE_PAGE), "--vision", "llm", "--llm-url", url, "-q", "--work-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert len(err.splitlines()) == 1
    assert "cannot reach the LLM server" in err and "gpu up" in err and url in err
    # the local reading finished before the server was needed and is kept for the next run
    assert list((tmp_path / "readings").glob("page-0001.*.json"))


@pytest.mark.parametrize(
    ("mode", "message"),
    [("500", "HTTP 500"), ("garbage", "not JSON"), ("empty", "empty content"), ("not-json", "content is not JSON")],
)
def test_bad_answers_are_clear_errors(mode: str, message: str) -> None:
    with chat_server(mode) as (url, _state):
        client = OpenAIChatClient(LlmConfig(base_url=url))
        messages = [
            {"role": "system", "content": "x"},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": encode_page(np.full((64, 48, 3), 200, np.uint8), 1536)}},
                    {"type": "text", "text": "none"},
                ],
            },
        ]
        with pytest.raises(ServerError, match=message):
            client.chat_json(messages, {"type": "object"}, "x")


def test_llm_character_attributes_reach_casting(tmp_path: Path) -> None:
    from comic_narrator.artifacts import BookReading
    from comic_narrator.config import VoiceConfig
    from comic_narrator.voice.casting import cast_characters
    from comic_narrator.voice.voicebank import open_voice_bank

    with chat_server() as (url, _state):
        assert (
            main(
                [
                    "narrate",
                    str(SAMPLE_PAGE),
                    "-o",
                    str(tmp_path / "x.mp4"),
                    "--vision",
                    "llm",
                    "--llm-url",
                    url,
                    "--vision-only",
                    "-q",
                ]
            )
            == 0
        )
    reading = BookReading.model_validate_json((tmp_path / "x.mp4.work" / "reading.json").read_text())
    with open_voice_bank(VoiceConfig()) as bank:
        voices = {v.id: v for v in bank.voices()}
    cast = cast_characters(reading, list(voices.values()), VoiceConfig(), "en")
    by_character = {m.character: m for m in cast.members}
    assert voices[by_character["pepper"].voice].gender == "female"
    assert voices[by_character["carrot"].voice].gender == "male"
    # Those are also the genders casting picks for a lead and a second with nothing known (it alternates, starting
    # away from the male narrator): the same reading with the genders swapped tells the two apart.
    swap = {"female": "male", "male": "female"}
    pages = []
    for page in reading.pages:
        characters = [c.model_copy(update={"gender": swap[c.gender]}) for c in page.characters]
        pages.append(page.model_copy(update={"characters": characters}))
    swapped = cast_characters(reading.model_copy(update={"pages": pages}), list(voices.values()), VoiceConfig(), "en")
    by_character = {m.character: m for m in swapped.members}
    assert voices[by_character["pepper"].voice].gender == "male"
    assert voices[by_character["carrot"].voice].gender == "female"


def test_translations_are_kept_and_english_echoed_back_is_not() -> None:
    from comic_narrator.artifacts import PageReading, Panel, TextRegion
    from comic_narrator.reading.llm_merge import merge_answer

    local = PageReading(
        page=0,
        width=100,
        height=100,
        reading_direction="rtl",
        panels=[Panel(bbox=(0, 0, 100, 100))],
        texts=[
            TextRegion(bbox=(0, 0, 9, 9), kind="speech", text="オレもさ", panel=0, lang="ja"),
            TextRegion(bbox=(9, 9, 9, 9), kind="sound", text="ドン", panel=0, lang="ja"),
            TextRegion(bbox=(20, 20, 9, 9), kind="speech", text="OK", panel=0, lang="ja"),
        ],
    )
    said = {"kind": "speech", "speaker": "Akagi", "emotion": "neutral"}
    answer = {
        "characters": [],
        "texts": [
            {**said, "index": 0, "text": "オレもさ", "translation": "Me too."},
            {**said, "index": 1, "text": "ドン", "kind": "sound", "speaker": None, "translation": "BAM"},
            {**said, "index": 2, "text": "OK", "translation": "ok"},
        ],
    }
    merged = merge_answer(local, answer, "m")
    assert [t.translation for t in merged.texts] == ["Me too.", "BAM", None]


def test_raw_control_characters_in_a_string_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real vLLM's grammar let random weights put a raw control character inside a string (seen on the H100
    boot of 2026-12-05); the answer is a whole object, so the page is read, not the book failed, and the reading
    keeps no control character (a name and a text carried them here)."""
    with chat_server("raw-control") as (url, state):
        code = main(
            ["read", str(SAMPLE_PAGE), "--json", "--vision", "llm", "--llm-url", url, "--work-dir", str(tmp_path)]
        )
        assert code == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        page = json.loads(out)["pages"][0]
        assert page["vision"] == "llm:test-vlm" and state.requests
        assert {c["id"] for c in page["characters"]} == {"pepper", "carrot"}
        assert {c["name"] for c in page["characters"]} == {"Pepper", "Carrot"}
        assert not re.search(r"[\x00-\x09\x0b-\x1f]|\\u00(0[0-8bcef]|1[0-9a-f])|\\t", out), (
            "a control character was kept"
        )
        assert any(" " in t["text"] for t in page["texts"] if t["kind"] == "speech")
