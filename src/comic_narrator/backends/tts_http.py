"""A small HTTP client for TTS servers: JSON or audio answers, bounded concurrency, one clear error per failure."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import numpy as np
import soundfile as sf

from comic_narrator.backends.balancer import AllUnreachable, Balancer, Unreachable
from comic_narrator.backends.protocols import Speech, VoiceInfo
from comic_narrator.errors import EngineError, ServerError, UnsayableTextError

AUDIO_TYPES = ("audio/", "application/octet-stream")
SILENCE_PEAK = 1e-4
"""Audio whose peak is below this is silence: a server answering it for a line with words has failed."""
UNSAYABLE = "unsayable_text"
"""The error type a voice server of this project answers (HTTP 422) for text its engine has no reading for."""


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    content_type: str
    body: bytes
    base_url: str
    """The server that answered (one of several when requests are balanced)."""


class TtsHttpClient:
    """Talks to one server, or to several serving the same voices (``base_url`` may be a comma-separated list):
    each request goes to the one with the fewest in flight, at most ``concurrency`` at once per server (across
    threads), and a server that cannot be reached is passed over while the others take its requests."""

    def __init__(self, base_url: str, what_to_start: str, concurrency: int = 4, timeout_s: float = 120.0) -> None:
        self._balancer = Balancer(base_url, concurrency)
        self.base_urls = self._balancer.urls
        self.base_url = self.base_urls[0]
        """The first server: it names the engine's voices (all servers serve the same ones)."""
        self._what_to_start = what_to_start
        self._timeout_s = timeout_s

    @property
    def slots(self) -> int:
        """Requests in flight at once across all the servers at most."""
        return self._balancer.capacity

    def request(
        self, method: str, path: str, payload: dict[str, Any] | None = None, in_order: bool = False
    ) -> HttpAnswer:
        """One request to the least busy server (the first that answers when ``in_order``)."""
        try:
            return self._balancer.call(
                lambda base_url: self._request_at(base_url, method, path, payload), in_order=in_order
            )
        except AllUnreachable as exc:
            raise self._unreachable(exc) from exc

    def request_each(self, method: str, path: str, payload: dict[str, Any] | None = None) -> list[HttpAnswer]:
        """The same request to every server in turn (what all of them must hold, e.g. a registered voice)."""
        try:
            return [
                answer for _, answer in self._balancer.each(lambda url: self._request_at(url, method, path, payload))
            ]
        except AllUnreachable as exc:
            raise self._unreachable(exc) from exc

    def _request_at(self, base_url: str, method: str, path: str, payload: dict[str, Any] | None) -> HttpAnswer:
        url = base_url + path
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self._timeout_s) as resp:
                return HttpAnswer(resp.status, resp.headers.get("Content-Type", ""), resp.read(), base_url)
        except urllib.error.HTTPError as exc:
            body = exc.read()
            return HttpAnswer(exc.code, exc.headers.get("Content-Type", "") if exc.headers else "", body, base_url)
        except (urllib.error.URLError, ConnectionError) as exc:
            # Not reached (refused, reset, no route): another server takes the request.
            raise Unreachable(getattr(exc, "reason", exc)) from exc
        except TimeoutError as exc:
            raise ServerError(
                f"the TTS server at {base_url} is not answering (no answer within {self._timeout_s:.0f} s); "
                f"start {self._what_to_start}"
            ) from exc

    def _unreachable(self, exc: AllUnreachable) -> ServerError:
        servers = "server" if len(exc.failures) == 1 else "servers"
        return ServerError(
            f"the TTS {servers} at {exc.urls} {'is' if len(exc.failures) == 1 else 'are'} not answering "
            f"({exc.reasons}); start {self._what_to_start}"
        )

    def fail(self, answer: HttpAnswer, path: str) -> EngineError:
        detail = answer.body[:300].decode("utf-8", "replace").strip()
        try:
            parsed = json.loads(answer.body)
            if isinstance(parsed, dict) and "detail" in parsed:
                detail = str(parsed["detail"])
            elif isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                detail = str(parsed["error"].get("message", detail))
                if answer.status == 422 and parsed["error"].get("type") == UNSAYABLE:
                    return UnsayableTextError(f"{answer.base_url}{path}: {detail}")
        except ValueError:
            pass
        return ServerError(f"{answer.base_url}{path} answered HTTP {answer.status}: {detail or 'no detail'}")

    def json(self, method: str, path: str, payload: dict[str, Any] | None = None, in_order: bool = False) -> Any:
        """The parsed JSON answer of one server (see :meth:`request`)."""
        return self.parse_json(self.request(method, path, payload, in_order), path)

    def json_each(self, method: str, path: str, payload: dict[str, Any] | None = None) -> list[Any]:
        """The parsed JSON answer of every server, in the configured order."""
        return [self.parse_json(answer, path) for answer in self.request_each(method, path, payload)]

    def parse_json(self, answer: HttpAnswer, path: str) -> Any:
        if answer.status >= 400:
            raise self.fail(answer, path)
        try:
            return json.loads(answer.body)
        except ValueError as exc:
            raise ServerError(f"{answer.base_url}{path} answered something that is not JSON") from exc

    def speech(self, path: str, payload: dict[str, Any]) -> Speech:
        """POST ``payload`` and decode the WAV (or any soundfile format) that comes back."""
        answer = self.request("POST", path, payload)
        if answer.status >= 400:
            raise self.fail(answer, path)
        content_type = answer.content_type.split(";")[0].strip().lower()
        if not content_type.startswith(AUDIO_TYPES):
            raise ServerError(f"{answer.base_url}{path} answered {content_type or 'no content type'} instead of audio")
        try:
            samples, rate = sf.read(io.BytesIO(answer.body), dtype="float32", always_2d=True)
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise ServerError(f"{answer.base_url}{path} answered audio that does not decode ({exc})") from exc
        mono = np.asarray(samples.mean(axis=1), dtype=np.float32)
        if len(mono) == 0 or float(np.abs(mono).max()) < SILENCE_PEAK:
            raise ServerError(f"{answer.base_url}{path} answered silence for a line with words")
        return Speech(samples=mono, sample_rate_hz=int(rate))


def server_voice(engine: str, spec: str, narrator: bool = False) -> tuple[str, VoiceInfo]:
    """``name[:lang[:gender[:age]]]`` from the config -> (the server's own voice name, our VoiceInfo).

    The voice id is ``<engine>:<name>``; language defaults to English, gender and age to unknown.
    """
    name, *rest = spec.split(":")
    lang, gender, age = (rest + ["en", "unknown", "unknown"][len(rest) :])[:3]
    if not name or lang not in ("en", "ja") or gender not in GENDERS or age not in AGES:
        raise ServerError(
            f"bad server voice {spec!r}: write name[:en|ja[:male|female|unknown[:child|young|adult|old]]]"
        )
    info = VoiceInfo(
        id=f"{engine}:{name}",
        language=lang,  # type: ignore[arg-type]
        gender=gender,  # type: ignore[arg-type]
        age=age,  # type: ignore[arg-type]
        engine=engine,
        description=f"{engine} server voice {name}",
        narrator=narrator,
    )
    return name, info


GENDERS = ("male", "female", "unknown")
AGES = ("child", "young", "adult", "old", "unknown")
