"""Mutation sweep: break one module in small ways, one at a time, and print which breaks its tests miss.

Each mutant is one edit of the module's syntax tree: a comparison flipped (``<`` to ``>=``, ``==`` to ``!=``,
``in`` to ``not in``), ``and`` swapped with ``or``, a numeric constant changed (an integer plus one, a float
times 1.5, a zero made 1), or an ``if`` made never to hold (its body dropped, its ``else`` always taken). The
mutant is written into a copy of HEAD's ``src/`` outside the checkout and the named tests run against it with
``PYTHONPATH`` pointing at the copy; nothing in the checkout is touched. A mutant the tests still pass is
printed as SURVIVED with its line and edit.

    .venv/bin/python benchmarks/mutation_sweep.py src/comic_narrator/reading/frames.py \
        tests/reading/test_panels.py [more test paths or node ids] [--kinds compare,constant] [--lines 40-90]

It prints one line per mutant and a summary line ``module: N mutants, K killed, S survived``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_OP_TEXT = {
    ast.Lt: "<",
    ast.GtE: ">=",
    ast.Gt: ">",
    ast.LtE: "<=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}
KINDS = ("compare", "boolop", "constant", "branch")


@dataclass(frozen=True)
class Mutant:
    index: int
    kind: str
    line: int
    edit: str


def _changed_number(value: int | float) -> int | float:
    if isinstance(value, int):
        return value + 1
    return 1.0 if value == 0 else value * 1.5


class _Mutator(ast.NodeTransformer):
    """Walks the tree in a fixed order, numbering every mutation point; applies the one numbered ``target``
    (or none, with ``target=-1``, to list them)."""

    def __init__(self, kinds: set[str], target: int) -> None:
        self.kinds = kinds
        self.target = target
        self.found: list[Mutant] = []

    def _point(self, kind: str, node: ast.AST, edit: str) -> bool:
        if kind not in self.kinds:
            return False
        index = len(self.found)
        self.found.append(Mutant(index, kind, getattr(node, "lineno", 0), edit))
        return index == self.target

    # Annotations are never run (the modules use ``from __future__ import annotations``): not mutated.
    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.args = self.visit(node.args)
        node.body = [self.visit(stmt) for stmt in node.body]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for i, op in enumerate(node.ops):
            flipped = _FLIP.get(type(op))
            if flipped is None:
                continue
            if self._point("compare", node, f"{_OP_TEXT[type(op)]} -> {_OP_TEXT[flipped]}"):
                node.ops[i] = flipped()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        other: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        names = {ast.And: "and", ast.Or: "or"}
        if self._point("boolop", node, f"{names[type(node.op)]} -> {names[type(other)]}"):
            node.op = other
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            return node
        changed = _changed_number(value)
        if self._point("constant", node, f"{value!r} -> {changed!r}"):
            return ast.copy_location(ast.Constant(changed), node)
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if self._point("branch", node, f"if {ast.unparse(node.test)[:60]} -> if False"):
            node.test = ast.copy_location(ast.Constant(False), node.test)
        return node


def mutants_of(source: str, kinds: set[str]) -> list[Mutant]:
    mutator = _Mutator(kinds, -1)
    mutator.visit(ast.parse(source))
    return mutator.found


def mutated_source(source: str, kinds: set[str], index: int) -> str:
    tree = ast.parse(source)
    mutator = _Mutator(kinds, index)
    tree = ast.fix_missing_locations(mutator.visit(copy.deepcopy(tree)))
    return ast.unparse(tree)


def _run_tests(src_copy: Path, tests: list[str], timeout_s: float) -> tuple[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src_copy), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    started = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", time.monotonic() - started
    verdict = "passed" if proc.returncode == 0 else "failed"
    return verdict, time.monotonic() - started


def _lines(spec: str | None) -> set[int] | None:
    """``40-90``, ``95`` or several of either joined by commas (``95,110,136-138``: a first sweep's survivors)."""
    if not spec:
        return None
    lines: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.partition("-")
        lines.update(range(int(first), int(last or first) + 1))
    return lines


def sweep(module: Path, tests: list[str], kinds: set[str], lines: set[int] | None) -> Iterator[tuple[Mutant, str]]:
    source = module.read_text(encoding="utf-8")
    package_root = REPO / "src"
    relative = module.resolve().relative_to(package_root)
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        # HEAD's src/ (others' unfinished edits in the checkout would make the baseline a moving target), with
        # the module under test as it is in the checkout.
        archive = subprocess.run(["git", "archive", "HEAD", "src"], cwd=REPO, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        src_copy = Path(tmp) / "src"
        target = src_copy / relative
        # The baseline is the module as ast.unparse writes it, so formatting is never what a mutant changes.
        target.write_text(mutated_source(source, kinds, -1), encoding="utf-8")
        verdict, baseline_s = _run_tests(src_copy, tests, timeout_s=1800)
        if verdict != "passed":
            raise SystemExit(f"the tests fail on the unmutated module ({verdict}); fix that first")
        print(f"baseline: tests pass in {baseline_s:.1f} s", flush=True)
        for mutant in mutants_of(source, kinds):
            if lines is not None and mutant.line not in lines:
                continue
            target.write_text(mutated_source(source, kinds, mutant.index), encoding="utf-8")
            verdict, _ = _run_tests(src_copy, tests, timeout_s=max(20.0, 3 * baseline_s))
            yield mutant, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("module", type=Path)
    parser.add_argument("tests", nargs="+")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--lines", help="only mutants on these lines, e.g. 40-90 or 95,110,136-138")
    parser.add_argument("--list", action="store_true", help="list the mutants and run nothing")
    args = parser.parse_args()
    kinds = set(args.kinds.split(","))
    unknown = kinds - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    if args.list:
        for mutant in mutants_of(args.module.read_text(encoding="utf-8"), kinds):
            print(f"#{mutant.index:3d} line {mutant.line:4d} {mutant.kind:8s} {mutant.edit}")
        return
    counts = {"failed": 0, "timeout": 0, "passed": 0}
    for mutant, verdict in sweep(args.module, args.tests, kinds, _lines(args.lines)):
        counts[verdict] += 1
        label = {"failed": "killed", "timeout": "killed (timeout)", "passed": "SURVIVED"}[verdict]
        print(f"#{mutant.index:3d} line {mutant.line:4d} {mutant.kind:8s} {mutant.edit:50s} {label}", flush=True)
    total = sum(counts.values())
    killed = counts["failed"] + counts["timeout"]
    print(f"{args.module}: {total} mutants, {killed} killed, {counts['passed']} survived")


if __name__ == "__main__":
    main()
