"""The Fish Speech HTTP engine (GPU users): /v1/tts by reference_id or reference audio, /v1/references/*."""

from __future__ import annotations

import base64
import hashlib
import threading
from dataclasses import dataclass
from typing import Any

from comic_narrator.backends.protocols import Delivery, Speech, VoiceInfo
from comic_narrator.backends.tts_http import TtsHttpClient, server_voice
from comic_narrator.dsp.tempo import speed_and_pitch
from comic_narrator.errors import EngineError, ServerError

ENGINE = "fish"
START_HINT = "Fish Speech's API server (python -m tools.api_server --listen HOST:PORT ...)"
SEED = 1234
"""Sent with every request so a re-run of the same line asks for the same sampling."""


@dataclass(frozen=True)
class ReferenceAudio:
    """A voice by example: a short recording and its transcript (sent inline with each request)."""

    wav_bytes: bytes
    text: str


class FishSpeechEngine:
    """Voices are Fish Speech reference ids (from the config, or whatever ``/v1/references/list`` says)."""

    name = ENGINE

    def __init__(
        self,
        base_url: str,
        voice_specs: tuple[str, ...] = (),
        concurrency: int = 4,
        timeout_s: float = 120.0,
        inline_references: dict[str, ReferenceAudio] | None = None,
    ) -> None:
        self._client = TtsHttpClient(base_url, START_HINT, concurrency, timeout_s)
        self._specs = voice_specs
        # Keys may be voice specs ("name:lang:gender:age"); requests look the audio up by the bare name.
        self._inline_specs = list(inline_references or {})
        self._inline = {spec.split(":")[0]: ref for spec, ref in (inline_references or {}).items()}
        self._voices: dict[str, tuple[str, VoiceInfo]] = {}
        self._lock = threading.Lock()
        self._opened = False
        self.concurrency = self._client.slots
        """Lines worth voicing at once: ``concurrency`` per server."""

    @property
    def version(self) -> str:
        # An inline voice is its audio: a changed reference recording re-voices the lines cast to it.
        refs = hashlib.sha256()
        for name in sorted(self._inline):
            refs.update(name.encode() + hashlib.sha256(self._inline[name].wav_bytes).digest())
            refs.update(self._inline[name].text.encode())
        inline = f";refs={refs.hexdigest()[:12]}" if self._inline else ""
        return f"fish-speech@{self._client.base_url};seed={SEED};v1{inline}"

    def open(self) -> None:
        """Check the server is up and learn its voices (the first server that answers names them: several servers
        of one engine serve the same voices)."""
        with self._lock:
            if self._opened:
                return
            health = self._client.json("GET", "/v1/health", in_order=True)
            if not isinstance(health, dict) or str(health.get("status", "ok")).lower() not in ("ok", "healthy"):
                raise ServerError(f"{self._client.base_url}/v1/health says the server is not ready: {health!r}")
            listed = list(self._specs) or self.list_references()
            named = {spec.split(":")[0] for spec in listed}
            specs = listed + [spec for spec in self._inline_specs if spec.split(":")[0] not in named]
            if not specs:
                specs = ["default"]
            for i, spec in enumerate(specs):
                name, info = server_voice(ENGINE, spec, narrator=i == 0)
                self._voices[info.id] = (name, info)
            self._opened = True

    def close(self) -> None:
        with self._lock:
            self._opened = False
            self._voices = {}

    def voices(self) -> list[VoiceInfo]:
        self.open()
        return [info for _, info in self._voices.values()]

    def list_references(self) -> list[str]:
        answer = self._client.json("GET", "/v1/references/list", in_order=True)
        ids = answer.get("reference_ids") if isinstance(answer, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ServerError(f"{self._client.base_url}/v1/references/list answered no reference_ids list")
        return list(ids)

    def add_reference(self, reference_id: str, reference: ReferenceAudio) -> None:
        """Register a voice on the server (on each of several) so later requests can name it by ``reference_id``."""
        payload = {
            "id": reference_id,
            "audio": base64.b64encode(reference.wav_bytes).decode("ascii"),
            "text": reference.text,
        }
        for answer in self._client.json_each("POST", "/v1/references/add", payload):
            if isinstance(answer, dict) and answer.get("success") is False:
                raise ServerError(f"Fish Speech refused reference {reference_id!r}: {answer.get('message', '')}")

    def delete_reference(self, reference_id: str) -> None:
        for answer in self._client.json_each("DELETE", "/v1/references/delete", {"reference_id": reference_id}):
            if isinstance(answer, dict) and answer.get("success") is False:
                raise ServerError(f"Fish Speech could not delete {reference_id!r}: {answer.get('message', '')}")

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        self.open()
        entry = self._voices.get(voice_id)
        if entry is None:
            raise EngineError(f"the Fish Speech server has no voice {voice_id!r}")
        name = entry[0]
        payload: dict[str, Any] = {
            "text": text,
            "format": "wav",
            "temperature": min(max(delivery.temperature, 0.1), 1.0),
            "top_p": min(max(delivery.top_p, 0.1), 1.0),
            "seed": SEED,
            "normalize": True,
            "streaming": False,
            "references": [],
            "reference_id": None,
        }
        if name in self._inline:
            ref = self._inline[name]
            payload["references"] = [{"audio": base64.b64encode(ref.wav_bytes).decode("ascii"), "text": ref.text}]
        elif name != "default":
            payload["reference_id"] = name
        speech = self._client.speech("/v1/tts", payload)
        # Fish Speech has no rate or pitch control: apply both here so delivery means the same on every engine.
        return Speech(
            samples=speed_and_pitch(speech.samples, speech.sample_rate_hz, delivery.speed, delivery.pitch_semitones),
            sample_rate_hz=speech.sample_rate_hz,
        )
