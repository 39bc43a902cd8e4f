"""The plugin's verdict on a comparison of declared sizes equals the run time's at every size.

``mypy_dims.first_pin`` (what ``[symscalar-size-guard]`` reports) tries a few sizes of a
dim's range; the run time meets the comparison at whatever size a call has and refuses it
where ``size_guards.decide_or_guard`` finds that the guard pins the dim. Here both are asked
about the same comparisons, the run time at every size of the range: the plugin reports one
exactly when some size makes the run time refuse it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symscalar import size_guards, sizes
from symscalar.errors import DynamicValueError
from symscalar.mypy_dims import DimDecl, first_pin

OPS = ["lt", "le", "gt", "ge", "eq", "ne"]
# Past the constants drawn below, an unbounded dim is tried up to here at run time.
UNBOUNDED_UP_TO = 64


class Trace:
    """A stand-in for the tracer: decide_or_guard keys the recorded guards on it."""


Side = Callable[[Any], Any]


@st.composite
def sides(draw: st.DrawFn) -> tuple[str, Side, Side]:
    """``f(T)`` and a static int, as code writes them: ``c1 * T + c0``, ``T * T``, ``T // m``,
    ``T % m``, ``T - c`` (a description, the left side, the right side)."""
    kind = draw(st.sampled_from(["linear", "square", "floordiv", "mod"]))
    k = draw(st.integers(-3, 24))
    if kind == "linear":
        c1 = draw(st.integers(-3, 3).filter(bool))
        c0 = draw(st.integers(-6, 6))
        return f"{c1} * T + {c0} ? {k}", lambda t: c1 * t + c0, lambda t: k
    m = draw(st.integers(2, 4))
    left: dict[str, Side] = {
        "square": lambda t: t * t,
        "floordiv": lambda t: operator.floordiv(t, m),
        "mod": lambda t: operator.mod(t, m),
    }
    return f"{kind} by {m} ? {k}", left[kind], lambda t: k


@st.composite
def decls(draw: st.DrawFn) -> DimDecl:
    lo = draw(st.integers(0, 4))
    hi = draw(st.one_of(st.none(), st.integers(lo, lo + 12)))
    return DimDecl("T", min=lo, max=hi, specialize=draw(st.booleans()))


def refused_at(op: str, left: Side, right: Side, decl: DimDecl) -> list[int]:
    """The sizes of the range at which the run time refuses the comparison."""
    top = decl.max if decl.max is not None else UNBOUNDED_UP_TO
    refused = []
    for size in range(decl.min, top + 1):
        symbol = sizes.Symbol("T", decl.min, decl.max, size, decl.specialize)
        t = sizes.Size.of(symbol)
        try:
            size_guards.decide_or_guard(Trace(), op, left(t), right(t), "the comparison")
        except DynamicValueError:
            refused.append(size)
    return refused


@settings(max_examples=150, deadline=None)
@given(op=st.sampled_from(OPS), comparison=sides(), decl=decls())
def test_plugin_reports_exactly_where_some_size_is_refused(
    op: str, comparison: tuple[str, Side, Side], decl: DimDecl
) -> None:
    text, left, right = comparison
    refused = refused_at(op, left, right, decl)
    pin = first_pin(op, lambda t: (left(t), right(t)), decl, "the comparison")
    assert (pin is not None) == bool(refused), f"{text} ({op}) over {decl}: plugin {pin}, refused at {refused}"
    if pin is not None:
        assert pin[0] in refused, (pin, refused)  # the size the message names is one the run time refuses


@pytest.mark.parametrize(
    ("op", "k", "decl", "pinned_at"),
    [
        ("eq", 1, DimDecl("T"), 1),  # T == 1: pins at T = 1
        ("ne", 1, DimDecl("T"), 1),
        ("gt", 1, DimDecl("T"), 1),  # T > 1 with min=1: at T = 1 the guard T <= 1 leaves only 1
        ("gt", 2, DimDecl("T"), None),  # T > 2: both sides leave two sizes or more
        ("ge", 1, DimDecl("T"), None),  # decided by the range
        ("ge", 8, DimDecl("T", min=2, max=8), 8),
        ("eq", 1, DimDecl("T", specialize=True), None),  # the dim opts in
        ("eq", 5000, DimDecl("T"), 5000),  # near the root, far from the ends
    ],
)
def test_verdicts_of_the_documented_comparisons(op: str, k: int, decl: DimDecl, pinned_at: int | None) -> None:
    pin = first_pin(op, lambda t: (t, k), decl, "the comparison")
    assert (pin[0] if pin is not None else None) == pinned_at
