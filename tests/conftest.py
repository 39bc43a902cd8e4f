"""Shared test set-up.

- The `cuda` marker skips with a reason where there is no CUDA device.
- Under `-m` (`make test-fast`), a module whose module-level `pytestmark` already deselects
  every test it could hold is not imported at all: collecting the real-model, OpInfo and mypy
  modules costs each xdist worker seconds of imports (transformers, litgpt, thunder, mypy) for
  tests that `-m` would then drop. Without `-m` (`make test`, CI) every module is collected.
- Every parametrized test with more than `SAMPLE` cases marks the cases outside a fixed
  sample of `SAMPLE` of them `unsampled`: `make test-fast` leaves those out, so each test still
  runs a few of its cases spread over its grid (chosen by a hash of the case id, the same on
  every run and in every xdist worker), while `make test` runs them all.
- `thunder_opinfos`: thunder's OpInfo samples, for the sweeps (marked slow) that use them.
- Each xdist worker gives torch its share of the cores, so `-n 2` on two cores does not run
  four busy intra-op threads.

torch is imported inside the hooks, not here: the xdist controller loads this file too and
never runs a test, so it should not pay for `import torch`.
"""

from __future__ import annotations

import ast
import itertools
import os
import pathlib
import zlib
from collections import defaultdict
from typing import Any

import pytest
from _pytest.mark.expression import Expression

SAMPLE = 4  # cases of each parametrized test that `make test-fast` runs


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        import torch  # noqa: PLC0415 - not at the top: the xdist controller needs no torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workerinput["workercount"])))


def pytest_ignore_collect(collection_path: pathlib.Path, config: pytest.Config) -> bool | None:
    markexpr = config.option.markexpr
    if not markexpr or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    marks = module_marks(collection_path)
    return True if marks and never_selected(Expression.compile(markexpr), marks) else None


def module_marks(path: pathlib.Path) -> frozenset[str]:
    """The names of the marks a test module's top-level ``pytestmark`` gives all its tests,
    read from the source without importing it: ``pytestmark = pytest.mark.slow`` or a list or
    tuple of such marks (called or not). Any other spelling counts as no mark, so the module is
    imported and pytest decides."""
    source = path.read_text()
    if "pytestmark" not in source:
        return frozenset()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["pytestmark"]:
            value = node.value
            marks = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            names = [_mark_name(mark) for mark in marks]
            return frozenset(n for n in names if n) if all(names) else frozenset()
    return frozenset()


def _mark_name(node: ast.expr) -> str | None:
    """``slow`` for ``pytest.mark.slow`` or ``pytest.mark.slow(...)``, else None."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "pytest.mark":
        return node.attr
    return None


def never_selected(expression: Expression, marks: frozenset[str]) -> bool:
    """True when ``expression`` is false for every test carrying ``marks``, whatever other
    marks a test adds: every assignment of the expression's other names is tried. A mark
    matched with keyword arguments (``-m "slow(reason='x')"``) is never decided here."""
    free = sorted(expression.idents() - marks)
    with_keywords = []

    for values in itertools.product((False, True), repeat=len(free)):
        known = dict(zip(free, values, strict=True))

        def matcher(name: str, /, **kwargs: object) -> bool:
            with_keywords.extend(kwargs)
            return name in marks or known[name]

        if expression.evaluate(matcher) or with_keywords:
            return False
    return True


@pytest.fixture(scope="session")
def thunder_opinfos() -> Any:
    """lightning-thunder's OpInfo database (``thunder.tests.opinfos``), imported by the first
    test that asks: importing thunder costs a test worker seconds, so only the slow sample
    sweeps use it and modules never import it at the top."""
    return pytest.importorskip("thunder.tests.opinfos", reason="lightning-thunder supplies the samples")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_unsampled(items)
    skip_cuda_without_a_device(items)


def mark_unsampled(items: list[pytest.Item]) -> None:
    """Marks `unsampled` the cases of each parametrized test outside its sample: the `SAMPLE`
    cases with the smallest CRC-32 of their id (a spread over every parameter of the grid that
    does not depend on the order of the parameters, the run or the worker)."""
    cases: defaultdict[tuple[str, str], list[pytest.Function]] = defaultdict(list)
    for item in items:
        if isinstance(item, pytest.Function) and hasattr(item, "callspec"):
            cases[item.parent.nodeid if item.parent else "", item.originalname].append(item)
    for group in cases.values():
        ranked = sorted(group, key=lambda item: (zlib.crc32(item.callspec.id.encode()), item.callspec.id))
        for item in ranked[SAMPLE:]:
            item.add_marker(pytest.mark.unsampled)


def skip_cuda_without_a_device(items: list[pytest.Item]) -> None:
    cuda_items = [item for item in items if "cuda" in item.keywords]
    if not cuda_items:
        return
    import torch  # noqa: PLC0415 - not at the top: the xdist controller needs no torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; this machine has none")
    for item in cuda_items:
        item.add_marker(skip)
