"""The small Protocols every engine implements: OCR and TTS. Engines are built at the edge and passed in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from comic_narrator.artifacts import Emotion
from comic_narrator.dsp.samples import FloatAudio as FloatAudio  # re-exported: engines speak in it


@dataclass(frozen=True)
class OcrLine:
    """One recognised line: its quadrilateral (4 x (x, y) page pixels), text and recognition score."""

    quad: tuple[tuple[float, float], ...]
    text: str
    score: float

    @property
    def bbox(self) -> tuple[int, int, int, int]:
        xs = [p[0] for p in self.quad]
        ys = [p[1] for p in self.quad]
        x0, y0 = int(min(xs)), int(min(ys))
        return (x0, y0, int(max(xs)) - x0, int(max(ys)) - y0)


class OcrEngine(Protocol):
    """Reads text lines off an RGB image."""

    name: str

    def recognize(self, image_rgb: npt.NDArray[np.uint8], lang: Literal["en", "ja"]) -> list[OcrLine]: ...


@dataclass(frozen=True)
class VoiceInfo:
    """One voice a TTS engine offers."""

    id: str
    language: Literal["en", "ja"]
    gender: Literal["male", "female", "unknown"]
    age: Literal["child", "young", "adult", "old", "unknown"]
    engine: str
    description: str = ""
    narrator: bool = False
    nature: Literal["human", "creature", "machine"] = "human"
    """What the voice suits besides people: a creature (growl) or a machine (monotone); casting matches it."""
    tier: Literal["fast", "natural"] = "fast"
    """"fast": within the real-time budget on one CPU core (0.1 CPU s per audio s English, 0.4 Japanese);
    "natural": a neural voice that sounds better and costs more (Kokoro: about 0.5-0.6). Casting uses the natural
    ones only with ``--voice-quality natural``."""
    derived_from: str | None = None
    """None for a model's own recorded speaker; else the id of the voice this one is made from (re-pitched,
    re-timbred, or one speaker driven in another language)."""
    grade: str | None = None
    """The model maker's own quality grade for the speaker, where one is published (Kokoro: A best .. F)."""


@dataclass(frozen=True)
class Delivery:
    """How a line is spoken: mapped from tone/emotion and the cast's pins."""

    speed: float = 1.0
    pitch_semitones: float = 0.0
    gain_db: float = 0.0
    temperature: float = 0.7
    top_p: float = 0.8
    breath: float = 0.0
    """0 = voiced as usual, 1 = whispered (no pitch, noise through the voice's own formants), between = breathy.
    Applied by the voice bank after any engine, so server voices whisper too."""
    emotion: Emotion = "neutral"
    """The line's emotion, for engines that voice it themselves (Kokoro blends a partner speaker's style in). Not
    in ``cache_token``: the fields above carry what every engine does with it, and an engine that does more
    names it in its own ``delivery_token(voice_id, delivery)``, so lines of the other engines keep their keys."""

    def cache_token(self) -> str:
        token = f"s{self.speed:.3f}p{self.pitch_semitones:.2f}g{self.gain_db:.1f}"
        token += f"t{self.temperature:.2f}q{self.top_p:.2f}"
        return token + (f"b{self.breath:.2f}" if self.breath else "")


@dataclass(frozen=True)
class Speech:
    samples: FloatAudio
    sample_rate_hz: int

    @property
    def duration_s(self) -> float:
        return len(self.samples) / float(self.sample_rate_hz)


class TtsEngine(Protocol):
    """Synthesises one line with one voice. ``version`` is part of every clip's cache key."""

    name: str
    version: str

    def voices(self) -> list[VoiceInfo]: ...

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech: ...


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


@runtime_checkable
class CropRecognizer(Protocol):
    """An OCR engine that can also run its recogniser alone (no detection) on crops that each hold one line
    (RapidOcrEngine does); the reader skips letterless balloons with an engine that cannot."""

    def recognize_crops(self, crops_rgb: list[npt.NDArray[np.uint8]]) -> list[tuple[str, float]]: ...
