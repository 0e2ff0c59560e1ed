"""The 2-D rewrite's rules on a small decoder as older exports spell it (scalars as Constant nodes, a kernel shape
left to the weights): the whole region moves to 4-D with one Unsqueeze in and one Squeeze out and gives the same
values; a ConvTranspose with an output_shape is refused and the shipped model used; a model without the region is
left exactly as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.onnx_conv2d import conv1d_region_as_2d, fast_model

from .test_onnx_conv2d import cache as cache  # XDG_CACHE_HOME in tmp_path

CHANNELS, FRAMES = 8, 64


def _decoder(output_shape: bool = False) -> onnx.ModelProto:
    """Conv -> x 0.5 (a Constant node) -> LeakyRelu -> ConvTranspose (x2 upsampling), under /dec/, plus an unused
    initializer, as exporters sometimes leave one."""
    rng = np.random.default_rng(5)
    up: dict[str, object] = {"strides": [2], "pads": [1, 1], "kernel_shape": [4]}
    if output_shape:
        up = {"strides": [2], "output_shape": [2 * FRAMES], "kernel_shape": [4]}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["h1"], name="/dec/conv_pre/Conv", pads=[1, 1]),  # no kernel_shape
        helper.make_node(
            "Constant", [], ["half"], name="/dec/Constant", value=numpy_helper.from_array(np.array(0.5, np.float32))
        ),
        helper.make_node("Mul", ["h1", "half"], ["h2"], name="/dec/Mul"),
        helper.make_node("LeakyRelu", ["h2"], ["h3"], name="/dec/LeakyRelu", alpha=0.1),
        helper.make_node("ConvTranspose", ["h3", "w2"], ["y"], name="/dec/ups.0/ConvTranspose", **up),
    ]
    graph = helper.make_graph(
        nodes,
        "decoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, "frames"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(rng.standard_normal((CHANNELS, CHANNELS, 3)).astype(np.float32), "w1"),
            numpy_helper.from_array(rng.standard_normal(CHANNELS).astype(np.float32), "b1"),
            numpy_helper.from_array(rng.standard_normal((CHANNELS, CHANNELS // 2, 4)).astype(np.float32), "w2"),
            numpy_helper.from_array(np.zeros(3, np.float32), "unused"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto, tmp_path: Path, name: str) -> np.ndarray:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(9).standard_normal((1, CHANNELS, FRAMES)).astype(np.float32)
    return np.asarray(cpu_session(path, 1).run(None, {"x": x})[0])


def test_the_whole_region_moves_to_4d_with_one_lift_in_and_one_squeeze_out(tmp_path: Path) -> None:
    expected = _run(_decoder(), tmp_path, "original")
    model = _decoder()
    assert conv1d_region_as_2d(model, ("/dec/",)) == 4  # the two convolutions, the Mul by the Constant, LeakyRelu
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("Unsqueeze") == 1 and ops.count("Squeeze") == 1
    convs = [node for node in model.graph.node if node.op_type in ("Conv", "ConvTranspose")]
    assert [helper.get_attribute_value(a) for n in convs for a in n.attribute if a.name == "kernel_shape"] == [
        [1, 3],  # taken from the weights
        [1, 4],
    ]
    got = _run(model, tmp_path, "rewritten")
    assert got.shape == expected.shape == (1, CHANNELS // 2, 2 * FRAMES)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_conv_transpose_with_an_output_shape_is_refused_and_the_shipped_model_used(
    cache: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="output_shape is not rewritten"):
        conv1d_region_as_2d(_decoder(output_shape=True), ("/dec/",))
    source = tmp_path / "decoder.onnx"
    onnx.save(_decoder(output_shape=True), str(source))
    assert fast_model(source, ("/dec/",), "decoder") == source
    assert not cache.exists() or not any(cache.iterdir())


def test_a_model_without_the_region_is_left_exactly_as_it_was() -> None:
    model = _decoder()
    before = model.SerializeToString()
    assert conv1d_region_as_2d(model, ("/no-such-prefix/",)) == 0
    assert model.SerializeToString() == before  # the unused initializer too
