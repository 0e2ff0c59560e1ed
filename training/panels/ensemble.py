"""Join several trained panel segmenters into one ONNX model that returns the logit of their mean probability.

    python training/panels/ensemble.py OUT.onnx A.onnx B.onnx [...]

Every member takes the same page and returns logits of the same shape (train.py's export); the joined model has
the first member's input and output, so the reader runs it as it runs one model.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx
from onnx import TensorProto, compose, helper


def join(members: list[onnx.ModelProto]) -> onnx.ModelProto:
    first = members[0].graph
    page, logits = first.input[0].name, first.output[0].name
    nodes, inits, probabilities = [], [], []
    for i, member in enumerate(members):
        graph = compose.add_prefix(member, f"m{i}_").graph
        for node in graph.node:
            node.input[:] = [page if name == f"m{i}_{page}" else name for name in node.input]
            nodes.append(node)
        inits.extend(graph.initializer)
        probabilities.append(f"m{i}_p")
        nodes.append(helper.make_node("Sigmoid", [f"m{i}_{logits}"], [probabilities[-1]]))
    constants = {"count": float(len(members)), "lo": 1e-6, "hi": 1 - 1e-6, "one": 1.0}
    inits += [helper.make_tensor(name, TensorProto.FLOAT, [], [value]) for name, value in constants.items()]
    nodes += [
        helper.make_node("Sum", probabilities, ["total"]),
        helper.make_node("Div", ["total", "count"], ["mean"]),
        helper.make_node("Clip", ["mean", "lo", "hi"], ["p"]),
        helper.make_node("Sub", ["one", "p"], ["q"]),
        helper.make_node("Div", ["p", "q"], ["odds"]),
        helper.make_node("Log", ["odds"], [logits]),
    ]
    graph = helper.make_graph(nodes, "panels_ensemble", [first.input[0]], [first.output[0]], initializer=inits)
    model = helper.make_model(graph, opset_imports=members[0].opset_import, producer_name="comic-narrator")
    model.ir_version = members[0].ir_version
    onnx.checker.check_model(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("members", type=Path, nargs="+")
    args = parser.parse_args()
    onnx.save(join([onnx.load(str(path)) for path in args.members]), str(args.out))
    print(f"{args.out}: {len(args.members)} members, {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
