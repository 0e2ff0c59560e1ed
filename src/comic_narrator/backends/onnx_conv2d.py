"""Run a vocoder's 1-D convolutions as 2-D ones, where onnxruntime's CPU kernels are faster.

onnxruntime's blocked-layout (NCHWc) convolution kernels only take 4-D tensors; a HiFi-GAN decoder is all 1-D
convolutions [N, C, T], which run through the slower im2col path. This rewrites a named region of the graph
(the decoder) to work on [N, C, 1, T]: convolution weights gain a unit axis, elementwise operations run on the
4-D tensors unchanged, and one Unsqueeze / Squeeze sits where the region meets the rest of the graph. The maths
is identical (outputs agree to float rounding); on joe's decoder it took 18% off the synthesis time on one core
(benchmarks/voices_rtf.py; the figures are in docs/voices.md).

The rewritten model is built once from the model file that ships in the voice package (nothing is downloaded)
and kept in the user's cache folder; if anything goes wrong the original model is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from comic_narrator.backends.model_cache import cached_rewrite

REWRITE_VERSION = "3"
ELEMENTWISE = frozenset({"LeakyRelu", "Relu", "Tanh", "Sigmoid", "Add", "Sub", "Mul", "Div"})
CONVOLUTIONS = frozenset({"Conv", "ConvTranspose"})
AXES = "comic_narrator_axes_2"


def conv1d_region_as_2d(model: Any, prefixes: tuple[str, ...]) -> int:
    """Rewrite the nodes named ``prefix``* that are 1-D convolutions or elementwise operations on 3-D tensors
    (with scalar constants) to 4-D.

    Returns how many nodes were rewritten. ``model`` is an ``onnx.ModelProto``, changed in place.
    """
    import numpy as np
    from onnx import helper, numpy_helper, shape_inference

    ranks: dict[str, int] = {}
    inferred = shape_inference.infer_shapes(model)
    for info in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]:
        if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
            ranks[info.name] = len(info.type.tensor_type.shape.dim)
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    constants = {node.output[0]: node for node in graph.node if node.op_type == "Constant"}

    def constant(name: str) -> Any:
        if name in initializers:
            return numpy_helper.to_array(initializers[name])
        node = constants.get(name)
        if node is not None and node.attribute and node.attribute[0].type == node.attribute[0].TENSOR:
            return numpy_helper.to_array(node.attribute[0].t)
        return None

    def in_region(node: Any) -> bool:
        if not node.name.startswith(prefixes):
            return False
        # Only where every tensor in and out is known to be [N, C, T]: a 2-D mask gets no unit axis at 2.
        tensors = [name for name in (*node.input, *node.output) if name and constant(name) is None]
        if any(ranks.get(name) != 3 for name in tensors):
            return False
        if node.op_type in CONVOLUTIONS:
            weight = constant(node.input[1])
            return weight is not None and weight.ndim == 3
        if node.op_type in ELEMENTWISE:
            values = [constant(name) for name in node.input]
            return all(v is None or v.size == 1 for v in values)
        return False

    nodes = list(graph.node)  # protobuf hands out a new wrapper per access: index the nodes, not their ids
    region = {index for index, node in enumerate(nodes) if in_region(node)}
    if not region:
        return 0
    produced = {out for index in region for out in nodes[index].output}
    used_outside = {out.name for out in graph.output}
    for index, node in enumerate(nodes):
        if index not in region:
            used_outside.update(node.input)

    rewritten: list[Any] = []
    lifted: dict[str, str] = {}
    for index, node in enumerate(nodes):
        if index not in region:
            rewritten.append(node)
            continue
        inputs: list[str] = []
        for position, name in enumerate(node.input):
            if name in produced:
                inputs.append(name + "__4d")
            elif name == "" or constant(name) is not None:
                if node.op_type in CONVOLUTIONS and position == 1:
                    weight_name = name + "__4d"
                    if weight_name not in initializers:
                        weight = constant(name)
                        shape = (*weight.shape[:2], 1, weight.shape[2])
                        tensor = numpy_helper.from_array(weight.reshape(shape), weight_name)
                        graph.initializer.append(tensor)
                        initializers[weight_name] = tensor
                    inputs.append(weight_name)
                else:
                    inputs.append(name)
            else:
                if name not in lifted:
                    lifted[name] = name + "__u4d"
                    rewritten.append(helper.make_node("Unsqueeze", [name, AXES], [lifted[name]]))
                inputs.append(lifted[name])
        attributes: dict[str, Any] = {}
        for attribute in node.attribute:
            value = helper.get_attribute_value(attribute)
            if node.op_type in CONVOLUTIONS:
                if attribute.name in ("kernel_shape", "strides", "dilations", "output_padding"):
                    value = [1, *value]
                elif attribute.name == "pads":
                    value = [0, value[0], 0, value[1]]
                elif attribute.name == "output_shape":
                    raise ValueError(f"{node.name}: ConvTranspose with output_shape is not rewritten")
            attributes[attribute.name] = value
        if node.op_type in CONVOLUTIONS and "kernel_shape" not in attributes:
            attributes["kernel_shape"] = [1, int(constant(node.input[1]).shape[2])]
        outputs = [name + "__4d" for name in node.output]
        rewritten.append(helper.make_node(node.op_type, inputs, outputs, name=node.name, **attributes))
        for name in node.output:
            if name in used_outside:
                rewritten.append(helper.make_node("Squeeze", [name + "__4d", AXES], [name]))
    del graph.node[:]
    graph.node.extend(rewritten)
    graph.initializer.append(numpy_helper.from_array(np.array([2], dtype=np.int64), AXES))
    still_used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in still_used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return len(region)


def fast_model(source: Path, prefixes: tuple[str, ...], label: str) -> Path:
    """The 2-D rewrite of ``source`` (built once into the cache folder), or ``source`` when it cannot be made."""
    return cached_rewrite(
        source, label, f"conv2d-v{REWRITE_VERSION}", lambda model: conv1d_region_as_2d(model, prefixes)
    )
