"""The OpenAI-compatible speech engine's own rules against a real loopback server: the first configured voice
narrates, open() checks that a server answers, and a voice that is not configured is refused before any request.
Stand-in: the loopback server of tests/backends/tts_servers.py."""

from __future__ import annotations

import pytest

from comic_narrator.backends.openai_speech import OpenAISpeechEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import EngineError, ServerError
from comic_narrator.voice.voicebank import open_voice_bank
from tests.backends.tts_servers import ServerState, closed_port_url, tts_server


def test_the_first_configured_voice_is_the_narrator() -> None:
    specs = ("am_adam:en:male", "af_sky:en:female", "bm_lewis:en:male")
    engine = OpenAISpeechEngine(closed_port_url(), voice_specs=specs)
    assert [v.narrator for v in engine.voices()] == [True, False, False]
    # What it decides: the run's narrator when none is named (a server's narrator wins over the bundled ones).
    config = VoiceConfig(tts_server=closed_port_url(), tts_server_api="openai", tts_server_voices=specs)
    with open_voice_bank(config) as bank:
        assert bank.default_narrator("en") == "openai:am_adam"


def test_open_checks_that_a_server_answers() -> None:
    down = closed_port_url()
    with pytest.raises(ServerError, match=f"{down} is not answering .*start an OpenAI-compatible speech server"):
        OpenAISpeechEngine(down).open()
    state = ServerState()
    with tts_server(state) as url:
        OpenAISpeechEngine(url).open()
    assert state.spoken == 0


def test_a_voice_not_configured_is_refused_before_any_request() -> None:
    state = ServerState()
    with tts_server(state) as url:
        engine = OpenAISpeechEngine(url, voice_specs=("af_sky:en:female",))
        with pytest.raises(EngineError, match="no configured voice 'openai:alloy'"):
            engine.synthesize("Hello.", "openai:alloy", Delivery())
    assert state.requests == []
