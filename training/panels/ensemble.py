"""Join several trained panel segmenters into one ONNX model whose logits are the members' average.

    python training/panels/ensemble.py OUT.onnx A.onnx B.onnx [...] [--mean prob|logit]

Every member takes the same [1, 1, 512, 384] page and returns [1, 1, 512, 384] logits (train.py's export); the
joined model has the same input and output names, so the reader runs it as it runs one model. `--mean prob`
(default) averages the members' probabilities and returns their logit; `--mean logit` averages the logits.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx
from onnx import TensorProto, compose, helper


def join(members: list[onnx.ModelProto], mean: str = "prob") -> onnx.ModelProto:
    graphs = [compose.add_prefix(member, f"m{i}_").graph for i, member in enumerate(members)]
    nodes, inits = [], []
    for i, graph in enumerate(graphs):
        rename = {f"m{i}_page": "page"}
        for node in graph.node:
            node.input[:] = [rename.get(name, name) for name in node.input]
            nodes.append(node)
        inits.extend(graph.initializer)
    outputs = [f"m{i}_logits" for i in range(len(graphs))]
    count = helper.make_tensor("count", TensorProto.FLOAT, [], [float(len(graphs))])
    inits.append(count)
    if mean == "logit":
        nodes.append(helper.make_node("Sum", outputs, ["total"]))
        nodes.append(helper.make_node("Div", ["total", "count"], ["logits"]))
    else:
        sigmoids = [f"{name}_p" for name in outputs]
        nodes += [helper.make_node("Sigmoid", [o], [s]) for o, s in zip(outputs, sigmoids, strict=True)]
        nodes.append(helper.make_node("Sum", sigmoids, ["total"]))
        nodes.append(helper.make_node("Div", ["total", "count"], ["p"]))
        inits.append(helper.make_tensor("lo", TensorProto.FLOAT, [], [1e-6]))
        inits.append(helper.make_tensor("hi", TensorProto.FLOAT, [], [1 - 1e-6]))
        inits.append(helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]))
        nodes.append(helper.make_node("Clip", ["p", "lo", "hi"], ["pc"]))
        nodes.append(helper.make_node("Sub", ["one", "pc"], ["q"]))
        nodes.append(helper.make_node("Div", ["pc", "q"], ["odds"]))
        nodes.append(helper.make_node("Log", ["odds"], ["logits"]))
    page = helper.make_tensor_value_info("page", TensorProto.FLOAT, [1, 1, 512, 384])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1, 512, 384])
    graph = helper.make_graph(nodes, "panels_ensemble", [page], [logits], initializer=inits)
    model = helper.make_model(graph, opset_imports=members[0].opset_import, producer_name="comic-narrator")
    model.ir_version = members[0].ir_version
    onnx.checker.check_model(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("members", type=Path, nargs="+")
    parser.add_argument("--mean", choices=["prob", "logit"], default="prob")
    args = parser.parse_args()
    model = join([onnx.load(str(path)) for path in args.members], args.mean)
    onnx.save(model, str(args.out))
    print(f"{args.out}: {len(args.members)} members, {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
