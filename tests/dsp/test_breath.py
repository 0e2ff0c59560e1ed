"""Whispered delivery on real speech: the pitch goes, the words' spectral shape and the length stay."""

from __future__ import annotations

import numpy as np
import pytest

from comic_narrator.artifacts import CastMember, ScriptLine
from comic_narrator.backends.piper_tts import PiperEngine
from comic_narrator.backends.protocols import Delivery, FloatAudio
from comic_narrator.config import VoiceConfig
from comic_narrator.dsp.breath import whisperize
from comic_narrator.dsp.voice_stats import f0_track, voice_stats
from comic_narrator.voice.delivery import delivery_for
from comic_narrator.voice.voicebank import VoiceBank

TEXT = "Keep quiet, they are right behind the door."
RATE = 22_050


@pytest.fixture(scope="module")
def joe() -> FloatAudio:
    with PiperEngine() as engine:
        return engine.synthesize(TEXT, "en-joe", Delivery()).samples


def _voiced_fraction(samples: FloatAudio) -> float:
    loud = np.abs(samples) > 0.02 * np.abs(samples).max()
    track = f0_track(samples, RATE, 0.01, threshold=0.3)
    frames = loud[:: int(0.01 * RATE)][: len(track)]
    return float(np.mean(track[: len(frames)][frames] > 0))


def test_whisper_removes_the_pitch_and_keeps_the_envelope(joe: FloatAudio) -> None:
    whispered = whisperize(joe, RATE, 1.0)
    assert len(whispered) == len(joe) and whispered.dtype == np.float32
    assert _voiced_fraction(joe) > 0.5
    assert _voiced_fraction(whispered) < 0.15
    rms = float(np.sqrt(np.mean(joe.astype(np.float64) ** 2)))
    assert float(np.sqrt(np.mean(whispered.astype(np.float64) ** 2))) == pytest.approx(rms, rel=0.05)
    # Same vocal tract: far closer in timbre than to silence-level noise; brighter (no low harmonics).
    source, quiet = voice_stats(joe, RATE), voice_stats(whispered, RATE)
    assert quiet.centroid_hz > source.centroid_hz


def test_breathy_is_between_and_deterministic(joe: FloatAudio) -> None:
    breathy = whisperize(joe, RATE, 0.3)
    assert np.array_equal(breathy, whisperize(joe, RATE, 0.3))
    assert _voiced_fraction(breathy) > _voiced_fraction(whisperize(joe, RATE, 1.0))
    assert whisperize(joe, RATE, 0.0) is joe


def test_whisper_emotion_reaches_the_bank() -> None:
    line = ScriptLine(id="l", page=0, panel=0, speaker="a", kind="speech", text=TEXT, emotion="whisper")
    delivery = delivery_for(line, CastMember(character="a", voice="en-joe"), VoiceConfig())
    assert delivery.breath == 1.0
    assert delivery.cache_token() != Delivery().cache_token()
    with VoiceBank(VoiceConfig()) as bank:
        spoken = bank.synthesize(TEXT, "en-joe", delivery)
    assert _voiced_fraction(spoken.samples) < 0.15
