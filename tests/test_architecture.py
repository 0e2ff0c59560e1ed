"""The layering promises: no import cycles between modules or between rooms (subpackages and top-level modules),
and dsp/ depends on nothing of ours but itself. Read from the real source with ast."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "comic_narrator"


def _imports(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                # A package's __init__ counts like any module: `from comic_narrator.cli import main` runs
                # cli/__init__.py, which imports cli.app.
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def _rooms(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    def room(module: str) -> str:
        return ".".join(module.split(".")[:2])

    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        rooms.setdefault(room(module), set()).update(room(t) for t in targets if room(t) != room(module))
    return rooms


def test_no_import_cycles_between_modules() -> None:
    assert _cycles(_imports()) == []


def test_no_import_cycles_between_rooms() -> None:
    assert _cycles(_rooms(_imports())) == []


def test_dsp_depends_on_nothing_of_ours() -> None:
    outside = {t for m, ts in _imports().items() if m.startswith("comic_narrator.dsp") for t in ts}
    assert {t for t in outside if not t.startswith("comic_narrator.dsp")} == set()


def test_importing_a_package_counts_as_importing_its_init(tmp_path: Path) -> None:
    # The shape of cli/__init__.py, which re-exports main from cli.app: a module that writes
    # `from pkg.high import main` depends on pkg.high.app through the package's __init__.
    files = {
        "__init__.py": "",
        "low.py": "from pkg.high import main\n",
        "high/__init__.py": "from pkg.high.app import main\n",
        "high/app.py": "from pkg import low\n\ndef main() -> None: ...\n",
    }
    for name, text in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    graph = _imports(tmp_path / "pkg")
    assert graph["pkg.low"] == {"pkg.high"}
    assert _cycles(graph) == [{"pkg.low", "pkg.high", "pkg.high.app"}]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
