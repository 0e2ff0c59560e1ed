"""The 2-D convolution rewrite of joe's decoder: same audio as the shipped model, built once, safe to fail."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.espeak_g2p import phonemize_sentences
from comic_narrator.backends.onnx_conv2d import conv1d_region_as_2d, fast_model
from comic_narrator.backends.piper_tts import CONV_PREFIXES, _model_paths


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "comic-narrator" / "models"


def _audio(model: Path) -> np.ndarray:
    from piper import PiperVoice
    from piper.config import PiperConfig, SynthesisConfig

    _, config_path = _model_paths()
    config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
    voice = PiperVoice(config=config, session=cpu_session(model, 1))
    phonemes = next(iter(phonemize_sentences("Wait! Don't open that door.", "en-us")))
    settings = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, normalize_audio=False)
    return np.asarray(voice.phoneme_ids_to_audio(voice.phonemes_to_ids(phonemes), settings)).reshape(-1)


def test_rewritten_decoder_sounds_the_same(cache: Path) -> None:
    source, _ = _model_paths()
    fast = fast_model(source, CONV_PREFIXES, "joe")
    assert fast != source and fast.parent == cache
    graph = onnx.load(str(fast)).graph
    convs = [n for n in graph.node if n.op_type in ("Conv", "ConvTranspose") and n.name.startswith("/dec/")]
    assert convs and all(len(dict((a.name, a) for a in n.attribute)["kernel_shape"].ints) == 2 for n in convs)
    original, rewritten = _audio(source), _audio(fast)
    assert len(original) == len(rewritten) > 10_000
    assert float(np.max(np.abs(original - rewritten))) < 1e-4


def test_built_once_then_reused(cache: Path) -> None:
    source, _ = _model_paths()
    first = fast_model(source, CONV_PREFIXES, "joe")
    stamp = first.stat().st_mtime_ns
    assert fast_model(source, CONV_PREFIXES, "joe") == first
    assert first.stat().st_mtime_ns == stamp
    assert [p.name for p in cache.iterdir()] == [first.name]  # no temp files left behind


def test_unusable_model_falls_back_to_the_original(cache: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    assert fast_model(broken, CONV_PREFIXES, "broken") == broken
    assert not cache.exists() or not any(cache.iterdir())


def test_region_without_1d_convolutions_is_left_alone() -> None:
    source, _ = _model_paths()
    model = onnx.load(str(source))
    before = len(model.graph.node)
    assert conv1d_region_as_2d(model, ("/no-such-prefix/",)) == 0
    assert len(model.graph.node) == before
