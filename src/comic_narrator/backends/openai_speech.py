"""The OpenAI-compatible speech engine (GPU users): POST /v1/audio/speech on any server that speaks that API."""

from __future__ import annotations

import threading
from typing import Any

from comic_narrator.backends.protocols import Delivery, Speech, VoiceInfo
from comic_narrator.backends.tts_http import TtsHttpClient, server_voice
from comic_narrator.dsp.tempo import speed_and_pitch
from comic_narrator.errors import EngineError

ENGINE = "openai"
START_HINT = "an OpenAI-compatible speech server (one that serves POST /v1/audio/speech)"
DEFAULT_VOICES = ("alloy:en:unknown", "echo:en:male", "nova:en:female", "onyx:en:male", "shimmer:en:female")


class OpenAISpeechEngine:
    """Voices are the server's voice names from the config (OpenAI's standard names when none are given)."""

    name = ENGINE

    def __init__(
        self,
        base_url: str,
        model: str = "tts-1",
        voice_specs: tuple[str, ...] = (),
        concurrency: int = 4,
        timeout_s: float = 120.0,
    ) -> None:
        self._client = TtsHttpClient(base_url, START_HINT, concurrency, timeout_s)
        self._model = model
        self._voices: dict[str, tuple[str, VoiceInfo]] = {}
        for i, spec in enumerate(voice_specs or DEFAULT_VOICES):
            name, info = server_voice(ENGINE, spec, narrator=i == 0)
            self._voices[info.id] = (name, info)
        self._lock = threading.Lock()
        self._opened = False
        self.concurrency = self._client.slots
        """Lines worth voicing at once: ``concurrency`` per server."""

    @property
    def version(self) -> str:
        return f"openai-speech@{self._client.base_url};model={self._model};v1"

    def open(self) -> None:
        """Check that something answers HTTP at the base URL, or at one of several (the API has no standard health
        route)."""
        with self._lock:
            if not self._opened:
                self._client.request("GET", "/v1/models", in_order=True)
                self._opened = True

    def close(self) -> None:
        with self._lock:
            self._opened = False

    def voices(self) -> list[VoiceInfo]:
        return [info for _, info in self._voices.values()]

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        entry = self._voices.get(voice_id)
        if entry is None:
            raise EngineError(f"the OpenAI-compatible server has no configured voice {voice_id!r}")
        self.open()
        speed = min(max(delivery.speed, 0.25), 4.0)
        payload: dict[str, Any] = {
            "model": self._model,
            "input": text,
            "voice": entry[0],
            "response_format": "wav",
            "speed": speed,
        }
        speech = self._client.speech("/v1/audio/speech", payload)
        # The API's `speed` covers tempo; pitch has no field, so it is applied here with the tempo kept.
        return Speech(
            samples=speed_and_pitch(speech.samples, speech.sample_rate_hz, 1.0, delivery.pitch_semitones),
            sample_rate_hz=speech.sample_rate_hz,
        )
