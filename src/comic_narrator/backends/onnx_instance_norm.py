"""Fold an exported instance norm (ReduceMean, Sub, square, ReduceMean, +eps, Sqrt, Div, x gain, + bias) into one
``InstanceNormalization`` node.

Kokoro-82M's AdaIN layers (StyleTTS 2's ``AdaIN1d``: ``InstanceNorm1d`` over time, then a style-driven gain and
bias) were exported as those nine elementwise and reduction nodes, each a full pass over a [1, C, T] tensor held
in memory; there are 65 of them, 48 in the generator at 800 and 4,800 frames per second of audio, and 62 are
fused (the F0 predictor's first norm reduces over another axis, and two of the generator's share their normalised
values with the next resblocks, so no one chain owns them). onnxruntime's
``InstanceNormalization`` does the same arithmetic (mean, variance of the centred values, epsilon under the root,
scale and bias) one channel row at a time, about 3x faster on the generator's tensors. The gain and bias are the
style's, computed at run time, so they go in as tensors. Same formula, different summation order: the results
differ from the chain's in the last bits of float32 (docs/voices.md measures what that does to a voice).
"""

from __future__ import annotations

from typing import Any

REWRITE_VERSION = "1"


def instance_norms_fused(model: Any) -> int:
    """Rewrite every matching chain in ``model`` (an ``onnx.ModelProto``, changed in place); returns how many."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    initializers = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    original = list(graph.node)  # held, so that id() names each node for the whole pass
    producer = {output: node for node in original for output in node.output}
    consumers: dict[str, set[int]] = {}
    for node in original:
        for name in node.input:
            consumers.setdefault(name, set()).add(id(node))

    def made_by(name: str, op_type: str) -> Any:
        node = producer.get(name)
        return node if node is not None and node.op_type == op_type else None

    graph_outputs = {output.name for output in graph.output}

    def only_used_by(name: str, count: int) -> bool:
        """``name`` is read by exactly ``count`` nodes (a node reading it twice counts once) and is no graph output."""
        return len(consumers.get(name, ())) == count and name not in graph_outputs

    def over_time(node: Any) -> bool:
        """A ReduceMean over axis 2 of a [1, C, T] tensor, keeping the axis (axes as input: opset 18 and later)."""
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        axes = initializers.get(node.input[1]) if len(node.input) > 1 else None
        return axes is not None and list(np.ravel(axes)) == [2] and int(attrs.get("keepdims", 1)) == 1

    flatten = "instance_norm_flat"
    replaced: dict[int, Any] = {}  # index of the chain's final Add -> its replacement nodes
    removed: set[int] = set()
    index_of = {id(node): i for i, node in enumerate(original)}
    for add in original:
        if add.op_type != "Add":
            continue
        for scaled_name, bias in ((add.input[0], add.input[1]), (add.input[1], add.input[0])):
            mul = made_by(scaled_name, "Mul")
            if mul is None or not only_used_by(scaled_name, 1):
                continue
            found = None
            for normed_name, gain in ((mul.input[0], mul.input[1]), (mul.input[1], mul.input[0])):
                div = made_by(normed_name, "Div")
                if div is not None and only_used_by(normed_name, 1):
                    found = (div, gain)
                    break
            if found is None:
                continue
            div, gain = found
            sub = made_by(div.input[0], "Sub")
            sqrt = made_by(div.input[1], "Sqrt")
            if sub is None or sqrt is None:
                continue
            mean = made_by(sub.input[1], "ReduceMean")
            plus_eps = made_by(sqrt.input[0], "Add")
            if mean is None or plus_eps is None or mean.input[0] != sub.input[0] or not over_time(mean):
                continue
            eps_name = next((n for n in plus_eps.input if n in initializers), None)
            variance = made_by(next((n for n in plus_eps.input if n != eps_name), ""), "ReduceMean")
            if eps_name is None or initializers[eps_name].size != 1 or variance is None or not over_time(variance):
                continue
            square = producer.get(variance.input[0])
            centred = sub.output[0]
            is_square = square is not None and (
                (square.op_type == "Mul" and list(square.input) == [centred, centred])
                or (
                    square.op_type == "Pow"
                    and square.input[0] == centred
                    and float(np.ravel(initializers.get(square.input[1], np.array([0.0])))[0]) == 2.0
                )
            )
            chain = [mean, sub, square, variance, plus_eps, sqrt, div, mul]
            if (
                not is_square
                or not only_used_by(centred, 2)
                or not all(only_used_by(node.output[0], 1) for node in chain if node not in (mean, sub))
            ):
                continue
            if not only_used_by(mean.output[0], 1):
                continue
            epsilon = float(np.ravel(initializers[eps_name])[0])
            base = add.name or add.output[0]
            replaced[index_of[id(add)]] = [
                helper.make_node("Reshape", [gain, flatten], [f"{base}_in_gain"], name=f"{base}_in_gain"),
                helper.make_node("Reshape", [bias, flatten], [f"{base}_in_bias"], name=f"{base}_in_bias"),
                helper.make_node(
                    "InstanceNormalization",
                    [sub.input[0], f"{base}_in_gain", f"{base}_in_bias"],
                    [add.output[0]],
                    name=f"{base}_instance_norm",
                    epsilon=epsilon,
                ),
            ]
            removed.update(index_of[id(node)] for node in chain)
            break
    if not replaced:
        return 0
    nodes = []
    for i, node in enumerate(original):
        if i in replaced:
            nodes.extend(replaced[i])
        elif i not in removed:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), flatten))
    return len(replaced)
