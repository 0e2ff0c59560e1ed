"""The TTS HTTP client's own rules, one by one, through the engines against real loopback servers: a JSON body
says so, the down message speaks of one server or several, what an error answer's body gives as its detail, and
which server voice specs are refused. Stand-ins: the loopback servers of tests/backends/tts_servers.py."""

from __future__ import annotations

import pytest

from comic_narrator.backends.fish_speech import FishSpeechEngine
from comic_narrator.backends.openai_speech import OpenAISpeechEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.errors import ServerError
from tests.backends.tts_servers import ServerState, closed_port_url, tts_server


def test_a_request_with_a_body_says_it_is_json() -> None:
    # Speech servers parse the body by its Content-Type (FastAPI refuses a JSON body sent as a form).
    state = ServerState()
    with tts_server(state) as url:
        OpenAISpeechEngine(url).synthesize("Hello.", "openai:alloy", Delivery())
    assert state.spoken == 1
    assert state.content_types == ["application/json"]


def test_the_down_message_speaks_of_one_server_or_several() -> None:
    one = closed_port_url()
    with pytest.raises(ServerError) as caught:
        FishSpeechEngine(one).voices()
    assert f"the TTS server at {one} is not answering (" in str(caught.value)
    first, second = closed_port_url(), closed_port_url()
    with pytest.raises(ServerError) as caught:
        FishSpeechEngine(f"{first},{second}").voices()
    assert f"the TTS servers at {first}, {second} are not answering (" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "body", "detail"),
    [
        # Fish Speech and FastAPI: {"detail": ...}.
        (404, b'{"detail": "Reference ghost not found"}', "Reference ghost not found"),
        # OpenAI's error object: its message alone.
        (400, b'{"error": {"message": "voice is not loaded", "type": "invalid_request_error"}}', "voice is not loaded"),
        # JSON of neither shape, and a bare JSON value: the body as it came.
        (503, b'{"message": "overloaded"}', '{"message": "overloaded"}'),
        (500, b"null", "null"),
        (502, b"", "no detail"),
        # This project's "cannot say this line" needs both its status and its type: either alone is a failure.
        (422, b'{"error": {"message": "voice is not loaded", "type": "invalid_request_error"}}', "voice is not loaded"),
        (500, b'{"error": {"message": "engine crashed", "type": "unsayable_text"}}', "engine crashed"),
    ],
)
def test_an_error_answer_gives_its_detail(status: int, body: bytes, detail: str) -> None:
    with tts_server(ServerState(answer=(status, "application/json", body))) as url:
        with pytest.raises(ServerError) as caught:
            OpenAISpeechEngine(url).synthesize("Hello.", "openai:alloy", Delivery())
        assert str(caught.value) == f"{url}/v1/audio/speech answered HTTP {status}: {detail}"
        assert type(caught.value) is ServerError


@pytest.mark.parametrize("spec", [":en", "hero:fr", "hero:en:robot", "hero:en:male:ancient"])
def test_a_bad_server_voice_spec_is_refused(spec: str) -> None:
    # Each part wrong on its own, the others good. Building an engine does no I/O: no server is needed.
    with pytest.raises(ServerError, match="bad server voice"):
        OpenAISpeechEngine(closed_port_url(), voice_specs=(spec,))


def test_a_full_server_voice_spec_is_taken_as_written() -> None:
    (info,) = OpenAISpeechEngine(closed_port_url(), voice_specs=("hana:ja:female:child",)).voices()
    assert (info.id, info.language, info.gender, info.age) == ("openai:hana", "ja", "female", "child")
