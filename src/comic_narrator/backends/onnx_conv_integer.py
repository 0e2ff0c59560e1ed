"""Run a dynamically quantised model's 1-D ``ConvInteger`` nodes as im2col + ``MatMulInteger`` with signed weights.

Kokoro-82M's int8 export quantises its convolutions to ``ConvInteger`` with unsigned weights. onnxruntime runs
those through im2col and its unsigned x unsigned integer GEMM; the same product with signed weights goes through
its unsigned x signed kernels (AVX-512 VNNI / AVX2 VNNI where the CPU has them), which are much faster. So each
``ConvInteger`` [1, C, T] (stride 1, "same" padding, one group, one weight zero point) becomes: transpose the
activations to [1, T, C] (bytes, cheap), pad time with the activation's zero point, gather the K dilated time
shifts of each frame side by side ([1, T, K, C] -> [1, T, K*C], one copy; v1 sliced each shift and concatenated
them, two copies and about 4 % more of Kokoro's time), ``MatMulInteger`` with the weights shifted to int8
(w - 128, zero point - 128: the same integers), and transpose the int32 result back to [1, O, T]. The arithmetic
is exact integer arithmetic, so the output is bit-identical; Kokoro's synthesis took about 25 % less CPU
(docs/voices.md).
"""

from __future__ import annotations

from typing import Any

REWRITE_VERSION = "2"


def _attributes(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}


def conv_integer_as_matmul(model: Any) -> int:
    """Rewrite every eligible 1-D ``ConvInteger`` in ``model`` (an ``onnx.ModelProto``, changed in place).

    Returns how many were rewritten; the others are left as they are.
    """
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    added: list[Any] = []
    replaced: set[str] = set()
    nodes: list[Any] = []
    count = 0

    def constant(name: str, value: Any) -> str:
        added.append(numpy_helper.from_array(value, name))
        return name

    for node in graph.node:
        attrs = _attributes(node)
        kernel = list(attrs.get("kernel_shape", []))
        dilation = int((attrs.get("dilations") or [1])[0])
        pads = list(attrs.get("pads") or [0, 0])
        eligible = (
            node.op_type == "ConvInteger"
            and len(node.input) == 4
            and len(kernel) == 1
            and list(attrs.get("strides") or [1]) == [1]
            and int(attrs.get("group", 1)) == 1
            and attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
            and len(pads) == 2
            and pads[0] == pads[1]
            and 2 * pads[0] == dilation * (kernel[0] - 1)
            and node.input[1] in initializers
            and node.input[3] in initializers
        )
        if not eligible:
            nodes.append(node)
            continue
        x, w, x_zero, w_zero = node.input
        weights = numpy_helper.to_array(initializers[w])
        zero = numpy_helper.to_array(initializers[w_zero])
        if weights.dtype != np.uint8 or zero.ndim != 0 or weights.ndim != 3:
            nodes.append(node)
            continue
        out_channels, in_channels, taps = weights.shape
        pad = int(pads[0])
        base = f"{node.name or node.output[0]}_mm"
        signed = (weights.astype(np.int16) - 128).astype(np.int8)
        # Row k*C + c of the [K*C, O] matrix multiplies time shift k of input channel c.
        matrix = np.ascontiguousarray(signed.transpose(2, 1, 0).reshape(taps * in_channels, out_channels))
        matrix_name = constant(f"{base}_weights", matrix)
        zero_name = constant(f"{base}_weights_zero", np.array(int(zero) - 128, dtype=np.int8))
        nodes.append(helper.make_node("Transpose", [x], [f"{base}_tc"], perm=[0, 2, 1], name=f"{base}_in"))
        columns = f"{base}_tc"
        if taps > 1:
            pad_amounts = constant(f"{base}_pads", np.array([0, pad, 0, 0, pad, 0], dtype=np.int64))
            nodes.append(
                helper.make_node("Pad", [columns, pad_amounts, x_zero], [f"{base}_padded"], name=f"{base}_pad")
            )
            # Frame t reads padded frames t + k * dilation: a [T, K] index built from the input's length.
            frames = f"{base}_frames"
            nodes.append(helper.make_node("Shape", [x], [f"{frames}_1"], start=2, end=3, name=f"{base}_shape"))
            nodes.append(helper.make_node("Squeeze", [f"{frames}_1"], [frames], name=f"{base}_length"))
            first = constant(f"{base}_first", np.array(0, np.int64))
            step = constant(f"{base}_step", np.array(1, np.int64))
            nodes.append(helper.make_node("Range", [first, frames, step], [f"{base}_t"], name=f"{base}_range"))
            column = constant(f"{base}_column", np.array([1], dtype=np.int64))
            nodes.append(helper.make_node("Unsqueeze", [f"{base}_t", column], [f"{base}_t1"], name=f"{base}_col"))
            taps_at = constant(f"{base}_taps", (np.arange(taps, dtype=np.int64) * dilation).reshape(1, taps))
            nodes.append(helper.make_node("Add", [f"{base}_t1", taps_at], [f"{base}_index"], name=f"{base}_index"))
            nodes.append(
                helper.make_node(
                    "Gather", [f"{base}_padded", f"{base}_index"], [f"{base}_shifts"], axis=1, name=f"{base}_gather"
                )
            )
            flat = constant(f"{base}_flat", np.array([1, -1, taps * in_channels], dtype=np.int64))
            columns = f"{base}_columns"
            nodes.append(helper.make_node("Reshape", [f"{base}_shifts", flat], [columns], name=f"{base}_reshape"))
        nodes.append(
            helper.make_node(
                "MatMulInteger", [columns, matrix_name, x_zero, zero_name], [f"{base}_to"], name=f"{base}_matmul"
            )
        )
        nodes.append(
            helper.make_node("Transpose", [f"{base}_to"], [node.output[0]], perm=[0, 2, 1], name=f"{base}_out")
        )
        replaced.update((w, w_zero))
        count += 1
    if count:
        still_used = {name for node in nodes for name in node.input}
        kept = [init for init in graph.initializer if init.name not in replaced or init.name in still_used]
        del graph.node[:]
        graph.node.extend(nodes)
        del graph.initializer[:]
        graph.initializer.extend(kept + added)
    return count
