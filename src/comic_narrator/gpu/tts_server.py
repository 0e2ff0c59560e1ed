"""The project's own voices as a GPU tenant: the voice bank behind the OpenAI-compatible speech API.

    python -m comic_narrator.gpu.tts_server [--host 127.0.0.1] [--port 8092] [--device cpu|cuda]

Routes: ``POST /v1/audio/speech`` ({"input", "voice", "speed", "response_format": "wav"} -> a 16-bit WAV),
``GET /v1/audio/voices`` (the bank's voices), ``GET /v1/models``, ``GET /health``, ``GET /v1/busy`` (lines in
flight, lines served and the seconds with at least one line in flight: a tenant's busy time), and the memory release
protocol (``comic_narrator.gpu.release``'s paths). Its ONNX sessions run on CUDA with ``--device cuda`` (the
``onnxruntime-gpu`` wheel; operators without a CUDA kernel fall back to the CPU, and the server logs how many
run where); releasing closes every session, which hands onnxruntime's arena back to the driver, and the next
line opens them again.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import threading
import time
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import soundfile as sf

from comic_narrator.backends.bundled_engine import DEVICE_ENV
from comic_narrator.backends.protocols import Delivery
from comic_narrator.backends.tts_http import SILENCE_PEAK, UNSAYABLE
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ComicNarratorError, UnsayableTextError
from comic_narrator.gpu import release
from comic_narrator.voice.voicebank import VoiceBank

log = logging.getLogger("comic_narrator")

MODEL_ID = "comic-narrator-voices"
MAX_INPUT_CHARS = 4096
_DESCRIPTION = "The project's own voices behind the OpenAI-compatible speech API, on the CPU or a GPU."


class VoiceService:
    """The bank, opened on first use and closed on release; one lock keeps a release from closing sessions that
    a line is using."""

    def __init__(self, device: str) -> None:
        self.device = device
        self._bank: VoiceBank | None = None
        self._lock = threading.RLock()
        self._busy = 0
        self._idle = threading.Condition(self._lock)
        self._served = 0
        self._busy_s = 0.0
        self._busy_since = 0.0

    def busy(self) -> dict[str, float | int]:
        """Lines in flight now, lines served, and the seconds during which at least one line was in flight."""
        with self._lock:
            busy_s = self._busy_s + (time.monotonic() - self._busy_since if self._busy else 0.0)
            return {"in_flight": self._busy, "served": self._served, "busy_s": round(busy_s, 3)}

    def _opened(self) -> VoiceBank:
        with self._lock:
            if self._bank is None:
                self._bank = VoiceBank(VoiceConfig())
                self._bank.__enter__()
            return self._bank

    def voices(self) -> list[dict[str, Any]]:
        return [
            {"id": v.id, "language": v.language, "gender": v.gender, "age": v.age, "tier": v.tier}
            for v in self._opened().voices()
        ]

    def speech_wav(self, text: str, voice: str, speed: float) -> bytes:
        with self._lock:
            bank = self._opened()
            if not self._busy:
                self._busy_since = time.monotonic()
            self._busy += 1
        try:
            try:
                speech = bank.synthesize(text, voice, Delivery(speed=speed))
            except ComicNarratorError:
                raise
            except Exception as exc:  # the engine's own failure (a GPU kernel's, say): once more, then it stands
                log.warning("tts-server: voicing %r with %s failed (%s); trying once more", text[:40], voice, exc)
                speech = bank.synthesize(text, voice, Delivery(speed=speed))
        finally:
            with self._lock:
                self._busy -= 1
                self._served += 1
                if not self._busy:
                    self._busy_s += time.monotonic() - self._busy_since
                self._idle.notify_all()
        if len(speech.samples) == 0 or float(np.abs(speech.samples).max()) < SILENCE_PEAK:
            # Text the voice has no sound for (OCR noise such as 'R≥==='): a run's client takes silence from a
            # server as a failed server, so it hears that this one line cannot be said.
            raise UnsayableTextError(f"{voice} made no audio for {text[:60]!r}")
        buffer = io.BytesIO()
        sf.write(buffer, np.clip(speech.samples, -1.0, 1.0), speech.sample_rate_hz, subtype="PCM_16", format="WAV")
        return buffer.getvalue()

    def memory(self) -> release.TenantMemory:
        """Its process's GPU memory as NVML counts it (0 without a GPU), allocated and reserved alike."""
        held = _gpu_bytes_of_this_process()
        return release.TenantMemory(os.getpid(), f"onnxruntime-{self.device}", held, held)

    def release(self) -> release.ReleaseReport:
        """Close every session once no line is being voiced: onnxruntime frees its arenas with them."""
        before = self.memory()
        with self._lock:
            while self._busy:
                self._idle.wait()
            if self._bank is not None:
                self._bank.close()
                self._bank = None
        after = self.memory()
        freed = max(before.reserved_bytes - after.reserved_bytes, 0)
        return release.ReleaseReport(os.getpid(), after.backend, before.reserved_bytes, after.reserved_bytes, freed)


def _gpu_bytes_of_this_process() -> int:
    """This process's GPU memory from NVML (what vLLM's start-up check sees), 0 where there is no NVML."""
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return 0
    try:
        pynvml.nvmlInit()
        total = 0
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if proc.pid == os.getpid() and proc.usedGpuMemory:
                    total += int(proc.usedGpuMemory)
        return total
    except pynvml.NVMLError:
        return 0


def _handler(service: VoiceService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "comic-narrator-tts/1"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("tts-server: " + format, *args)

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, kind: str | None = None) -> None:
            error = {"message": message} | ({"type": kind} if kind else {})
            self._send(status, json.dumps({"error": error}).encode())

        def do_GET(self) -> None:
            route = self.path.split("?", 1)[0]
            if route == "/health":
                self._send(200, b'{"status": "ok"}')
            elif route == "/v1/models":
                self._send(200, json.dumps({"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]}).encode())
            elif route == "/v1/audio/voices":
                self._send(200, json.dumps({"voices": service.voices()}).encode())
            elif route == "/v1/busy":
                self._send(200, json.dumps(service.busy()).encode())
            elif route == release.MEMORY_PATH:
                self._send(200, json.dumps(asdict(service.memory())).encode())
            else:
                self._error(404, f"no route {route}")

        def do_POST(self) -> None:
            route = self.path.split("?", 1)[0]
            if route == release.RELEASE_PATH:
                self._send(200, json.dumps(asdict(service.release())).encode())
                return
            if route != "/v1/audio/speech":
                self._error(404, f"no route {route}")
                return
            try:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length)) if 0 < length <= 1 << 20 else None
            except (ValueError, json.JSONDecodeError):
                request = None
            problem = _invalid(request)
            if problem:
                self._error(400, problem)
                return
            assert isinstance(request, dict)
            try:
                wav = service.speech_wav(str(request["input"]), str(request["voice"]), float(request.get("speed", 1.0)))
            except UnsayableTextError as exc:  # the client leaves that one line silent (tts_http.UNSAYABLE)
                self._error(422, str(exc), UNSAYABLE)
                return
            except ComicNarratorError as exc:
                self._error(400, str(exc))
                return
            except Exception as exc:  # failed twice: the client hears why instead of a dropped connection
                log.exception("tts-server: voicing failed")
                self._error(500, f"voicing failed: {type(exc).__name__}: {str(exc)[:300]}")
                return
            self._send(200, wav, "audio/wav")

    return Handler


def _invalid(request: object) -> str | None:
    """What is wrong with a speech request, or None."""
    if not isinstance(request, dict):
        return "the body must be a JSON object of at most 1 MiB"
    text, voice, speed = request.get("input"), request.get("voice"), request.get("speed", 1.0)
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_INPUT_CHARS:
        return f"'input' must be text of 1-{MAX_INPUT_CHARS} characters"
    if not isinstance(voice, str) or not voice:
        return "'voice' must name one of GET /v1/audio/voices"
    if not isinstance(speed, int | float) or not 0.25 <= float(speed) <= 4.0:
        return "'speed' must be a number from 0.25 to 4.0"
    if request.get("response_format", "wav") != "wav":
        return "only response_format 'wav' is served"
    return None


def make_server(host: str, port: int, device: str) -> ThreadingHTTPServer:
    """The server, bound (port 0 picks a free one) but not serving yet."""
    os.environ[DEVICE_ENV] = device
    server = ThreadingHTTPServer((host, port), _handler(VoiceService(device)))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m comic_narrator.gpu.tts_server", description=_DESCRIPTION)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8092)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port, args.device)
    print(f"serving the voices on http://{args.host}:{server.server_address[1]} ({args.device})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
