"""What `make test-fast` leaves out without importing it, decided here so that tests/conftest.py
stays a list of hooks and tests/test_fast_tier.py can check the rules.

- `module_marks` and `never_selected`: a test module whose top-level ``pytestmark`` makes every
  test it could hold fail the ``-m`` expression need not be imported at all (the real-model,
  OpInfo and mypy modules import transformers, litgpt, thunder or mypy: seconds per worker).
- `unsampled`: the cases of a parametrized test beyond a fixed sample of `SAMPLE` of them.
"""

from __future__ import annotations

import ast
import itertools
import zlib
from collections.abc import Iterable

from _pytest.mark.expression import Expression

SAMPLE = 4  # cases of each parametrized test that `make test-fast` runs


def module_marks(source: str) -> frozenset[str]:
    """The names of the marks a test module's top-level ``pytestmark`` gives all its tests,
    read from its source: ``pytestmark = pytest.mark.slow`` or a list or tuple of such marks
    (called or not). Any other spelling counts as no mark, so the module is imported and
    pytest decides."""
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


def never_selected(markexpr: str, marks: frozenset[str]) -> bool:
    """True when the ``-m`` expression is false for every test carrying ``marks``, whatever
    other marks a test adds: every assignment of the expression's other names is tried. A mark
    matched with keyword arguments (``-m "slow(reason='x')"``) is never decided here."""
    expression = Expression.compile(markexpr)
    free = sorted(expression.idents() - marks)
    with_keywords: list[str] = []
    for values in itertools.product((False, True), repeat=len(free)):
        known = dict(zip(free, values, strict=True))

        def matcher(name: str, /, **kwargs: object) -> bool:
            with_keywords.extend(kwargs)
            return name in marks or known[name]

        if expression.evaluate(matcher) or with_keywords:
            return False
    return True


def unsampled(case_ids: Iterable[str]) -> set[str]:
    """The ids of one parametrized test's cases outside its sample: the sample is the `SAMPLE`
    cases with the smallest CRC-32 of their id, a spread over every parameter of the grid that
    does not depend on the order of the cases, the run or the xdist worker."""
    ranked = sorted(case_ids, key=lambda case: (zlib.crc32(case.encode()), case))
    return set(ranked[SAMPLE:])
