"""The voice bank: every voice of every configured TTS engine behind one id space, with level handling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from comic_narrator.backends.protocols import Delivery, OpenableEngine, Speech, VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.dsp.breath import whisperize
from comic_narrator.dsp.timbre import level_speech
from comic_narrator.errors import EngineError, InputError

if TYPE_CHECKING:
    from comic_narrator.backends.fish_speech import ReferenceAudio

CLIP_FORMAT_VERSION = "clip-v1"
"""Bumped when what the bank does to an engine's samples (levels, trims) changes: part of the cache key."""


EngineFactory = Callable[[VoiceConfig], OpenableEngine | None]
"""Builds an engine from the config (no I/O), or None when the engine is not installed/configured."""


def _server(config: VoiceConfig) -> OpenableEngine | None:
    if not config.tts_server:
        return None
    if config.tts_server_api == "openai":
        if config.tts_server_references:
            raise EngineError("reference recordings (--tts-reference) need a Fish Speech server (--tts-api fish)")
        from comic_narrator.backends.openai_speech import OpenAISpeechEngine

        return OpenAISpeechEngine(
            config.tts_server,
            config.tts_server_model,
            config.tts_server_voices,
            config.tts_in_flight,
            config.tts_request_timeout_s,
        )
    from comic_narrator.backends.fish_speech import FishSpeechEngine

    return FishSpeechEngine(
        config.tts_server,
        config.tts_server_voices,
        config.tts_in_flight,
        config.tts_request_timeout_s,
        inline_references=load_references(config.tts_server_references),
    )


def load_references(pairs: tuple[tuple[str, Path], ...]) -> dict[str, ReferenceAudio]:
    """Read each reference WAV and the transcript beside it (same name, .txt); errors name the file."""
    from comic_narrator.backends.fish_speech import ReferenceAudio

    references: dict[str, ReferenceAudio] = {}
    for spec, wav in pairs:
        transcript = wav.with_suffix(".txt")
        try:
            audio = wav.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the reference recording: {exc.strerror or exc}", path=wav) from exc
        if audio[:4] != b"RIFF" or audio[8:12] != b"WAVE":
            raise InputError("the reference recording is not a WAV file", path=wav)
        try:
            text = transcript.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(
                "a reference recording needs its transcript in a UTF-8 .txt file beside it", path=transcript
            ) from exc
        if not text:
            raise InputError("the reference transcript is empty", path=transcript)
        references[spec] = ReferenceAudio(audio, text)
    return references


def _piper(config: VoiceConfig) -> OpenableEngine | None:
    from comic_narrator.backends.piper_tts import PiperEngine

    return PiperEngine()


def _kokoro(config: VoiceConfig) -> OpenableEngine | None:
    from comic_narrator.backends.kokoro_tts import KokoroEngine, kokoro_installed

    return KokoroEngine() if kokoro_installed() else None


def _openjtalk(config: VoiceConfig) -> OpenableEngine | None:
    from comic_narrator.backends.openjtalk_tts import OpenJTalkEngine, openjtalk_installed

    return OpenJTalkEngine() if openjtalk_installed() else None


DEFAULT_FACTORIES: tuple[EngineFactory, ...] = (_server, _piper, _kokoro, _openjtalk)
"""A configured server comes first, so casting prefers its voices; the bundled voices stay available."""


class VoiceBank:
    """All voices of the configured engines. Use as a context manager; engines load lazily on first use."""

    def __init__(self, config: VoiceConfig, engines: list[OpenableEngine] | None = None) -> None:
        self._config = config
        self._engines = engines
        self._by_voice: dict[str, OpenableEngine] = {}

    def __enter__(self) -> VoiceBank:
        self._ensure_engines()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for engine in self._engines or []:
            engine.close()

    def _ensure_engines(self) -> list[OpenableEngine]:
        if self._engines is None:
            built = [factory(self._config) for factory in DEFAULT_FACTORIES]
            self._engines = [engine for engine in built if engine is not None]
        if not self._by_voice:
            for engine in self._engines:
                for voice in engine.voices():
                    self._by_voice.setdefault(voice.id, engine)
        return self._engines

    def voices(self) -> list[VoiceInfo]:
        infos: list[VoiceInfo] = []
        seen: set[str] = set()
        for engine in self._ensure_engines():
            for voice in engine.voices():
                if voice.id not in seen:
                    seen.add(voice.id)
                    infos.append(voice)
        return infos

    def voice(self, voice_id: str) -> VoiceInfo:
        for info in self.voices():
            if info.id == voice_id:
                return info
        raise EngineError(f"unknown voice {voice_id!r}; `comic-narrator voices` lists the voices")

    def _engine_for(self, voice_id: str) -> OpenableEngine:
        self._ensure_engines()
        engine = self._by_voice.get(voice_id)
        if engine is None:
            known = ", ".join(sorted(self._by_voice))
            raise EngineError(f"unknown voice {voice_id!r}; available voices: {known}")
        return engine

    def parallelism(self) -> int:
        """How many lines are worth synthesising at once: a server's request bound, else one per core."""
        bounds = [int(getattr(engine, "concurrency", 0)) for engine in self._ensure_engines()]
        return max([b for b in bounds if b > 0], default=0)

    def engine_version(self, voice_id: str, delivery: Delivery | None = None) -> str:
        """What the engine is and does for this voice (and this delivery, where the engine voices more of it
        than speed, pitch and sampling: Kokoro's emotion blends): part of every clip's cache key."""
        engine = self._engine_for(voice_id)
        token = getattr(engine, "voice_token", None)
        recipe = f":{token(voice_id)}" if callable(token) else ""
        shading = getattr(engine, "delivery_token", None)
        extra = shading(voice_id, delivery) if delivery is not None and callable(shading) else ""
        return f"{engine.name}:{engine.version}{recipe}:{CLIP_FORMAT_VERSION}" + (f":{extra}" if extra else "")

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        """One line in one voice, leveled to a common speech level plus the delivery's gain."""
        speech = self._engine_for(voice_id).synthesize(text, voice_id, delivery)
        samples = whisperize(speech.samples, speech.sample_rate_hz, delivery.breath)
        samples = level_speech(samples, speech.sample_rate_hz, delivery.gain_db)
        return Speech(samples=samples, sample_rate_hz=speech.sample_rate_hz)

    def default_narrator(self, lang: Literal["en", "ja"]) -> str:
        """The narrator voice casting would pick: the configured one, a server's, else the bundled default."""
        from comic_narrator.voice.casting import pick_narrator

        return pick_narrator(self.voices(), self._config, lang).id


def open_voice_bank(config: VoiceConfig) -> VoiceBank:
    """The bank for a run: the bundled offline engines plus any configured server engine (no I/O yet)."""
    return VoiceBank(config)
