"""What the bundled engines share, on the real Piper engine: a voice's cache token names the reshaper only for the
voices it reshapes, and a GPU asked of an onnxruntime without CUDA is refused by name."""

from __future__ import annotations

import onnxruntime
import pytest

from comic_narrator.backends.bundled_engine import DEVICE_ENV, session_providers
from comic_narrator.backends.piper_tts import PiperEngine
from comic_narrator.dsp import voice_shift
from comic_narrator.errors import EngineError


def test_a_new_reshaper_revoices_the_reshaped_voices_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = PiperEngine()
    ids = [info.id for info in engine.voices()]
    before = {voice_id: engine.voice_token(voice_id) for voice_id in ids}
    monkeypatch.setattr(voice_shift, "RESHAPER_VERSION", voice_shift.RESHAPER_VERSION + "-next")
    changed = {voice_id for voice_id in ids if engine.voice_token(voice_id) != before[voice_id]}
    reshaped = {voice_id for voice_id in ids if engine.recipe(voice_id).shift is not None}
    # joe and the voices made by resampling alone keep their clips; the PSOLA voices (woman, robot, ...) re-voice.
    assert "en-joe-woman" in reshaped and "en-joe" not in reshaped and "en-joe-young" not in reshaped
    assert changed == reshaped


@pytest.mark.skipif(
    "CUDAExecutionProvider" in onnxruntime.get_available_providers(), reason="this onnxruntime has CUDA"
)
def test_cuda_asked_of_an_onnxruntime_without_it_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    with pytest.raises(EngineError, match=r"no CUDA provider .*onnxruntime-gpu"):
        session_providers()
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert session_providers() == ["CPUExecutionProvider"]
