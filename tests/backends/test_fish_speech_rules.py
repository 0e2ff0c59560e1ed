"""The Fish Speech engine's own rules against the loopback server: it asks the server once, refuses one that is not
ready, speaks in the server's default voice when it has no references, and takes no refusal for an answer."""

from __future__ import annotations

from typing import Any

import pytest

from comic_narrator.backends.fish_speech import FishSpeechEngine, ReferenceAudio
from comic_narrator.backends.protocols import Delivery
from comic_narrator.errors import ServerError
from tests.backends.tts_servers import ServerState, tone_wav, tts_server


def test_the_server_is_asked_for_its_voices_once_until_closed() -> None:
    state = ServerState()
    with tts_server(state) as url:
        engine = FishSpeechEngine(url)
        assert [v.id for v in engine.voices()] == ["fish:hero"]
        engine.synthesize("One.", "fish:hero", Delivery())
        engine.synthesize("Two.", "fish:hero", Delivery())
        assert state.gets == ["/v1/health", "/v1/references/list"]
        engine.close()
        engine.voices()
    assert state.gets == ["/v1/health", "/v1/references/list"] * 2


@pytest.mark.parametrize("health", [{"status": "loading"}, {"status": "error", "detail": "no GPU"}, ["ok"], "ok"])
def test_a_server_that_is_not_ready_is_refused(health: Any) -> None:
    state = ServerState(replies={"GET /v1/health": health})
    with tts_server(state) as url, pytest.raises(ServerError, match="says the server is not ready"):
        FishSpeechEngine(url).voices()


@pytest.mark.parametrize("health", [{"status": "ok"}, {"status": "Healthy"}, {}])
def test_a_ready_server_is_taken(health: Any) -> None:
    with tts_server(ServerState(replies={"GET /v1/health": health})) as url:
        assert [v.id for v in FishSpeechEngine(url).voices()] == ["fish:hero"]


def test_a_server_without_references_speaks_in_its_default_voice() -> None:
    state = ServerState(references={})
    with tts_server(state) as url:
        engine = FishSpeechEngine(url)
        [voice] = engine.voices()
        assert voice.id == "fish:default" and voice.narrator
        speech = engine.synthesize("Hello.", "fish:default", Delivery())
    assert speech.duration_s > 0.2
    assert state.requests[-1]["reference_id"] is None and state.requests[-1]["references"] == []


@pytest.mark.parametrize("answer", [{"reference_ids": [1, 2]}, {"reference_ids": "hero"}, {"success": True}, []])
def test_a_reference_list_that_is_not_names_is_refused(answer: Any) -> None:
    state = ServerState(replies={"GET /v1/references/list": answer})
    with tts_server(state) as url, pytest.raises(ServerError, match="answered no reference_ids list"):
        FishSpeechEngine(url).list_references()


def test_a_reference_the_server_refuses_is_an_error() -> None:
    reference = ReferenceAudio(tone_wav("a sample", 200.0), "a sample")
    refused = {"success": False, "message": "audio too short"}
    state = ServerState(replies={"POST /v1/references/add": refused, "DELETE /v1/references/delete": refused})
    with tts_server(state) as url:
        engine = FishSpeechEngine(url)
        with pytest.raises(ServerError, match="refused reference 'villain': audio too short"):
            engine.add_reference("villain", reference)
        with pytest.raises(ServerError, match="could not delete 'hero': audio too short"):
            engine.delete_reference("hero")
    assert state.references == {"hero": "transcript"}
