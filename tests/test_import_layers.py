"""Imports flow down the layers: the module-level imports among symscalar's own modules form no
cycle (DESIGN.md's layer order), so no module needs an import inside a function to load."""

from __future__ import annotations

import ast
import pathlib

import symscalar

PACKAGE = pathlib.Path(symscalar.__file__).parent


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            # the package itself (``symscalar/__init__.py``) re-exports lazily: not a layer
            graph[name].update(t for t in targets if t in modules and t != "symscalar" and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    assert find_cycle(import_graph()) is None, " -> ".join(find_cycle(import_graph()) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_split_layers() -> None:
    """The tracer's pieces import down: frontend <- proxy <- recorder <- tracer <- ops.define."""
    graph = import_graph()
    assert "symscalar.tracer" not in graph["symscalar.recorder"]
    assert "symscalar.recorder" in graph["symscalar.tracer"]
    assert {"symscalar.proxy", "symscalar.tracer"} <= graph["symscalar.ops.define"]
    assert not any(m.startswith("symscalar.ops") for m in graph["symscalar.tracer"])
    assert graph["symscalar.messages"] == set() and graph["symscalar.generated"] == set()
