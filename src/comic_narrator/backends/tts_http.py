"""A small HTTP client for TTS servers: JSON or audio answers, bounded concurrency, one clear error per failure."""

from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import numpy as np
import soundfile as sf

from comic_narrator.backends.protocols import Speech, VoiceInfo
from comic_narrator.errors import ServerError

AUDIO_TYPES = ("audio/", "application/octet-stream")


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    content_type: str
    body: bytes


class TtsHttpClient:
    """Talks to one server; at most ``concurrency`` requests are in flight at once (across threads)."""

    def __init__(self, base_url: str, what_to_start: str, concurrency: int = 4, timeout_s: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._what_to_start = what_to_start
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._timeout_s = timeout_s

    def request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> HttpAnswer:
        url = self.base_url + path
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        with self._slots:
            try:
                with urllib.request.urlopen(req, timeout=self._timeout_s) as resp:
                    return HttpAnswer(resp.status, resp.headers.get("Content-Type", ""), resp.read())
            except urllib.error.HTTPError as exc:
                body = exc.read()
                return HttpAnswer(exc.code, exc.headers.get("Content-Type", "") if exc.headers else "", body)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                raise ServerError(
                    f"the TTS server at {self.base_url} is not answering ({reason}); start {self._what_to_start}"
                ) from exc

    def fail(self, answer: HttpAnswer, path: str) -> ServerError:
        detail = answer.body[:300].decode("utf-8", "replace").strip()
        try:
            parsed = json.loads(answer.body)
            if isinstance(parsed, dict) and "detail" in parsed:
                detail = str(parsed["detail"])
            elif isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                detail = str(parsed["error"].get("message", detail))
        except ValueError:
            pass
        return ServerError(f"{self.base_url}{path} answered HTTP {answer.status}: {detail or 'no detail'}")

    def json(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        answer = self.request(method, path, payload)
        if answer.status >= 400:
            raise self.fail(answer, path)
        try:
            return json.loads(answer.body)
        except ValueError as exc:
            raise ServerError(f"{self.base_url}{path} answered something that is not JSON") from exc

    def speech(self, path: str, payload: dict[str, Any]) -> Speech:
        """POST ``payload`` and decode the WAV (or any soundfile format) that comes back."""
        answer = self.request("POST", path, payload)
        if answer.status >= 400:
            raise self.fail(answer, path)
        content_type = answer.content_type.split(";")[0].strip().lower()
        if not content_type.startswith(AUDIO_TYPES):
            raise ServerError(f"{self.base_url}{path} answered {content_type or 'no content type'} instead of audio")
        try:
            samples, rate = sf.read(io.BytesIO(answer.body), dtype="float32", always_2d=True)
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise ServerError(f"{self.base_url}{path} answered audio that does not decode ({exc})") from exc
        mono = np.asarray(samples.mean(axis=1), dtype=np.float32)
        if len(mono) == 0 or float(np.abs(mono).max()) < 1e-4:
            raise ServerError(f"{self.base_url}{path} answered silence for a line with words")
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
