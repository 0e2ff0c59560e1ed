"""The fast Japanese engine: Open JTalk's HTS voice "Mei" bundled in pyopenjtalk-plus, and variants of it.

Mei (mei_normal.htsvoice) is (c) Nagoya Institute of Technology, CC BY 3.0; it ships inside the pyopenjtalk-plus
wheel, not in this repository. HTS synthesis costs about 0.06 CPU-seconds per second of audio, against about 0.4
for Kokoro, so these voices are the way to stay under the Japanese real-time budget on one core.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from typing import Literal

import numpy as np

from comic_narrator.backends.bundled_engine import BundledEngine
from comic_narrator.backends.protocols import Delivery, Speech, VoiceInfo
from comic_narrator.dsp.timbre import shift_by_resampling, trim_silence
from comic_narrator.dsp.voice_shift import VoiceShift
from comic_narrator.errors import EngineError

INT16_FULL_SCALE = 32768.0


@dataclass(frozen=True)
class OpenJTalkVoiceSpec:
    """Mei moved by HTS's own pitch control (half tones) and by a vocal-tract resampling."""

    info: VoiceInfo
    half_tone: float = 0.0
    tract_ratio: float = 1.0
    base_speed: float = 1.0
    shift: VoiceShift | None = None


def _spec(
    voice_id: str,
    gender: Literal["male", "female", "unknown"],
    age: Literal["child", "young", "adult", "old", "unknown"],
    description: str,
    half_tone: float = 0.0,
    tract_ratio: float = 1.0,
    base_speed: float = 1.0,
    shift: VoiceShift | None = None,
    narrator: bool = False,
    nature: Literal["human", "creature", "machine"] = "human",
) -> OpenJTalkVoiceSpec:
    derived_from = None if voice_id == "ja-mei" else "ja-mei"  # Mei is the one recorded HTS speaker
    info = VoiceInfo(voice_id, "ja", gender, age, "openjtalk", description, narrator, nature, derived_from=derived_from)
    return OpenJTalkVoiceSpec(info, half_tone, tract_ratio, base_speed, shift)


OPENJTALK_VOICES: tuple[OpenJTalkVoiceSpec, ...] = (
    _spec("ja-mei", "female", "adult", "Open JTalk HTS voice Mei: clear, synthetic, fast"),
    _spec(
        "ja-mei-narrator",
        "female",
        "adult",
        "Mei 3 half tones lower, slightly longer tract, unhurried: a calm storyteller",
        -3.0,
        0.95,
        0.93,
        narrator=True,
    ),
    _spec("ja-mei-girl", "female", "child", "Mei 3 half tones up, shorter vocal tract: a girl", 3.0, 1.12),
    _spec("ja-mei-boy", "male", "young", "Mei 4 half tones down, much shorter vocal tract: a boy", -4.0, 1.12),
    _spec("ja-mei-man", "male", "adult", "Mei 8 half tones down, longer vocal tract: a man", -8.0, 0.86),
    _spec(
        "ja-mei-elder",
        "female",
        "old",
        "Mei lower, longer tract, slower, breathy and shaking: an old woman",
        -4.0,
        0.92,
        0.9,
        VoiceShift(breathiness=0.1, tremolo_depth=0.04),
    ),
    _spec(
        "ja-mei-oldman",
        "male",
        "old",
        "Mei 11 half tones down, long tract, slow, breathy and shaking: an old man",
        -11.0,
        0.84,
        0.88,
        VoiceShift(breathiness=0.1, tremolo_depth=0.04),
    ),
    _spec(
        "ja-mei-robot",
        "unknown",
        "adult",
        "Mei on a flat 150 Hz monotone (PSOLA): a machine",
        tract_ratio=0.95,
        shift=VoiceShift(flat_f0_hz=150.0),
        nature="machine",
    ),
    _spec(
        "ja-mei-ogre",
        "male",
        "adult",
        "Mei 15 half tones down, very long tract, breath noise: a monster",
        -15.0,
        0.76,
        0.92,
        VoiceShift(breathiness=0.15),
        nature="creature",
    ),
)


def openjtalk_installed() -> bool:
    return find_spec("pyopenjtalk") is not None


class OpenJTalkEngine(BundledEngine):
    """pyopenjtalk's text analysis + HTS engine (48 kHz); deterministic."""

    name = "openjtalk"

    def __init__(self, voices: tuple[OpenJTalkVoiceSpec, ...] = OPENJTALK_VOICES) -> None:
        super().__init__(voices)
        self._specs = {spec.info.id: spec for spec in voices}
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        return f"pyopenjtalk-plus={metadata.version('pyopenjtalk-plus')};mei_normal;v2"

    def open(self) -> None:
        if not openjtalk_installed():
            raise EngineError("the Open JTalk voices need pyopenjtalk-plus")

    def close(self) -> None:
        """Nothing to release: pyopenjtalk keeps one process-wide engine."""

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        self.recipe(voice_id)
        spec = self._specs[voice_id]
        self.open()
        import pyopenjtalk

        ratio = spec.tract_ratio
        speed = spec.base_speed * max(delivery.speed, 0.1) / ratio
        # Resampling by `ratio` also raises the pitch by 12*log2(ratio) half tones: HTS's half tones carry the rest.
        half_tone = spec.half_tone + delivery.pitch_semitones
        with self._lock:  # the HTS engine inside pyopenjtalk is one process-wide object
            raw, sample_rate_hz = pyopenjtalk.tts(text, speed=speed, half_tone=half_tone)
        samples = trim_silence((np.asarray(raw) / INT16_FULL_SCALE).astype(np.float32), int(sample_rate_hz))
        samples = self.finish(shift_by_resampling(samples, ratio), int(sample_rate_hz), spec)
        return Speech(samples=samples, sample_rate_hz=int(sample_rate_hz))
