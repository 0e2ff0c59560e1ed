"""ConvInteger -> im2col + MatMulInteger: bit-identical integers through onnxruntime, and unfit nodes left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from comic_narrator.backends.bundled_engine import cpu_session
from comic_narrator.backends.model_cache import cached_rewrite
from comic_narrator.backends.onnx_conv_integer import conv_integer_as_matmul

CHANNELS_IN, CHANNELS_OUT, FRAMES = 16, 24, 300


def _model(kernel: int, dilation: int, stride: int = 1) -> onnx.ModelProto:
    rng = np.random.default_rng(kernel * 10 + dilation)
    weights = rng.integers(0, 256, (CHANNELS_OUT, CHANNELS_IN, kernel), dtype=np.uint8)
    pad = dilation * (kernel - 1) // 2
    node = helper.make_node(
        "ConvInteger",
        ["x", "w", "x_zero", "w_zero"],
        ["y"],
        name="conv",
        kernel_shape=[kernel],
        dilations=[dilation],
        pads=[pad, pad],
        strides=[stride],
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.UINT8, [1, CHANNELS_IN, "frames"]),
            helper.make_tensor_value_info("x_zero", TensorProto.UINT8, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(131, np.uint8), "w_zero")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto, tmp_path: Path, name: str) -> np.ndarray:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(7).integers(0, 256, (1, CHANNELS_IN, FRAMES), dtype=np.uint8)
    return np.asarray(cpu_session(path, 1).run(None, {"x": x, "x_zero": np.array(117, np.uint8)})[0])


@pytest.mark.parametrize(("kernel", "dilation"), [(1, 1), (3, 1), (7, 3), (11, 5)])
def test_same_integers_as_conv_integer(tmp_path: Path, kernel: int, dilation: int) -> None:
    original = _model(kernel, dilation)
    expected = _run(original, tmp_path, "original")
    rewritten = _model(kernel, dilation)
    assert conv_integer_as_matmul(rewritten) == 1
    ops = {node.op_type for node in rewritten.graph.node}
    assert "ConvInteger" not in ops and "MatMulInteger" in ops
    assert {init.name for init in rewritten.graph.initializer}.isdisjoint({"w", "w_zero"})  # old weights dropped
    got = _run(rewritten, tmp_path, "rewritten")
    assert got.shape == expected.shape == (1, CHANNELS_OUT, FRAMES)
    assert np.array_equal(got, expected)


def test_strided_convolutions_are_left_alone() -> None:
    model = _model(3, 1, stride=2)
    assert conv_integer_as_matmul(model) == 0
    assert [node.op_type for node in model.graph.node] == ["ConvInteger"]


def test_cached_once_and_shipped_model_kept_when_nothing_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "conv.onnx"
    onnx.save(_model(3, 1), str(source))
    fast = cached_rewrite(source, "t", "matmul-test", conv_integer_as_matmul)
    assert fast != source and fast.is_file() and fast.parent == tmp_path / "cache" / "comic-narrator" / "models"
    stamp = fast.stat().st_mtime_ns
    assert cached_rewrite(source, "t", "matmul-test", conv_integer_as_matmul) == fast
    assert fast.stat().st_mtime_ns == stamp
    strided = tmp_path / "strided.onnx"
    onnx.save(_model(3, 1, stride=2), str(strided))
    assert cached_rewrite(strided, "t", "matmul-test", conv_integer_as_matmul) == strided


def test_a_new_variant_deletes_the_forms_it_replaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "conv.onnx"
    onnx.save(_model(3, 1), str(source))
    old = cached_rewrite(source, "t", "matmul-v1", conv_integer_as_matmul)
    other = tmp_path / "other.onnx"
    onnx.save(_model(7, 3), str(other))
    other_form = cached_rewrite(other, "t", "matmul-v1", conv_integer_as_matmul)
    kept = cached_rewrite(source, "t", "conv-v1", conv_integer_as_matmul)
    new = cached_rewrite(source, "t", "matmul-v2", conv_integer_as_matmul, replaces=("matmul-v1",))
    assert new.is_file() and new != old
    assert not old.exists()  # the form it replaces is gone
    assert kept.is_file() and other_form.is_file()  # other variants and other models' forms are not touched


def test_a_form_that_cannot_be_saved_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewritten form cannot take its place (a folder stands at its name): the shipped model is used and the
    half-written temp file is removed, not left in the cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "conv.onnx"
    onnx.save(_model(3, 1), str(source))
    fast = cached_rewrite(source, "t", "matmul-test", conv_integer_as_matmul)
    fast.unlink()
    fast.mkdir()
    assert cached_rewrite(source, "t", "matmul-test", conv_integer_as_matmul) == source
    assert [p.name for p in fast.parent.iterdir()] == [fast.name] and fast.is_dir()
