"""Size guards: where eager's result depends on a size the declared ranges do not decide, the
answer at the traced sizes is taken and recorded as a guard (listed in ``explain()`` with the
file:line and the op, counted in ``cache_info().guards``, checked on every call: a call that
fails one retraces). A guard that pins a declared dim to one value is refused unless the dim
opts in (``Dim(name, specialize=True)``).
"""

from __future__ import annotations

import operator

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import symscalar
from symscalar import Dim, DynamicValueError
from symscalar.sizes import symbols_of

HERE = __file__


def _branch(x):
    return x * 2 if x.shape[1] == 1 else x + 1


def test_undecided_comparison_is_a_guard_listed_with_its_line():
    jf = symscalar.jit(_branch, dynamic_dims={"x": ("B", "T")})
    for b, t in [(2, 5), (1, 7), (3, 2)]:
        x = torch.randn(b, t)
        torch.testing.assert_close(jf(x), _branch(x))
    info = jf.cache_info()
    assert (info.misses, info.guards) == (1, 1)
    (guard,) = jf.explain().guards
    assert guard.condition() == "s_T != 1"
    assert guard.where == f"{HERE}:{_branch.__code__.co_firstlineno + 1}"
    assert "guard s_T != 1: asked by the comparison `s_T == 1` at " + guard.where in str(jf.explain())


def test_a_guard_that_pins_a_dim_is_refused_with_the_fixes():
    jf = symscalar.jit(_branch, dynamic_dims={"x": ("B", "T")})
    jf(torch.randn(2, 5))
    with pytest.raises(DynamicValueError, match=r"(?s)`s_T == 1`.*pins the declared dim T.*specialize=True.*static"):
        jf(torch.randn(2, 1))
    assert jf.cache_info().entries == 1  # the refused call left no entry
    fresh = symscalar.jit(_branch, dynamic_dims={"x": ("B", "T")})
    with pytest.raises(DynamicValueError, match="pins the declared dim T"):
        fresh(torch.randn(2, 1))  # refused at the first call too


def test_opted_in_specialization_is_its_own_program():
    jf = symscalar.jit(_branch, dynamic_dims={"x": ("B", Dim("T", specialize=True))})
    for b, t in [(2, 5), (2, 1), (3, 1), (1, 9)]:
        x = torch.randn(b, t)
        torch.testing.assert_close(jf(x), _branch(x))
    info = jf.cache_info()
    assert (info.misses, info.entries, info.guards) == (2, 2, 2)
    conditions = sorted(g.condition() for g in jf.explain().guards)
    assert conditions == ["s_T != 1", "s_T == 1"]
    assert "failed: s_T = 1 now" in str(jf.explain())  # why the second trace happened


def test_a_failing_guard_retraces_and_never_runs_the_other_program():
    def f(x):
        return x * 2 if x.shape[0] > 4 else x - 1

    jf = symscalar.jit(f, dynamic_dims={"x": ("T",)})
    for t in (6, 3, 9, 1, 4, 5):
        x = torch.randn(t)
        torch.testing.assert_close(jf(x), f(x))
    info = jf.cache_info()
    assert (info.misses, info.guards) == (2, 2)  # s_T > 4 and s_T <= 4: neither pins T
    assert jf.would_trace(torch.randn(7)).trace is False


def test_range_decides_no_guard():
    jf = symscalar.jit(_branch, dynamic_dims={"x": ("B", Dim("T", min=2))})
    jf(torch.randn(2, 5))
    assert jf.cache_info().guards == 0


def test_implied_guard_is_not_recorded_twice():
    def f(x):
        t = x.shape[0]
        y = x * 2 if t != 1 else x
        return y + 1 if t > 1 else y  # t > 1 follows from t != 1 and min=1

    jf = symscalar.jit(f, dynamic_dims={"x": ("T",)})
    x = torch.randn(5)
    torch.testing.assert_close(jf(x), f(x))
    assert [g.condition() for g in jf.explain().guards] == ["s_T != 1"]


def test_squeeze_of_a_dynamic_dim_is_guarded():
    fn = lambda x: x.squeeze() * 3  # noqa: E731
    jf = symscalar.jit(fn, dynamic_dims={"x": ("B", None, "T")})
    for b, t in [(2, 5), (3, 2)]:
        x = torch.randn(b, 1, t)
        torch.testing.assert_close(jf(x), fn(x))
    assert jf.cache_info().guards == 2  # s_B != 1, s_T != 1 (the static 1 is squeezed)
    assert all("squeeze of dim" in g.asked_by for g in jf.explain().guards)
    with pytest.raises(DynamicValueError, match=r"squeeze of dim 0 .*pins the declared dim B"):
        jf(torch.randn(1, 1, 4))
    opted = symscalar.jit(fn, dynamic_dims={"x": (Dim("B", specialize=True), None, "T")})
    for b, t in [(2, 5), (1, 4), (1, 3)]:
        x = torch.randn(b, 1, t)
        torch.testing.assert_close(opted(x), fn(x))
    assert opted.cache_info().misses == 2


def test_split_along_a_dynamic_dim_needs_the_opt_in():
    fn = lambda x: torch.stack([p.sum(1) for p in x.split(2, 1)], -1)  # noqa: E731
    with pytest.raises(DynamicValueError, match=r"split along dim 1 .*number of pieces.*pins the declared dim T"):
        symscalar.jit(fn, dynamic_dims={"x": ("B", "T")})(torch.randn(2, 5))
    opted = symscalar.jit(fn, dynamic_dims={"x": ("B", Dim("T", specialize=True))})
    for b, t in [(2, 5), (3, 5), (2, 4), (1, 4)]:
        x = torch.randn(b, t, dtype=torch.float64, requires_grad=True)
        torch.testing.assert_close(opted(x), fn(x))
        (g,) = torch.autograd.grad(opted(x).sum(), x)
        (e,) = torch.autograd.grad(fn(x).sum(), x)
        torch.testing.assert_close(g, e)
    info = opted.cache_info()
    assert info.misses == 2  # T = 5 and T = 4; B stays dynamic
    assert sorted(g.condition() for g in opted.explain().guards) == ["s_T == 4", "s_T == 5"]


_OPS = {name: getattr(operator, name) for name in ("lt", "le", "gt", "ge", "eq", "ne")}
MAX_T = 12


def _program(conditions):
    def f(x):
        t = x.shape[0]
        out = x
        for i, (op, c) in enumerate(conditions):
            out = out * (i + 2) if _OPS[op](t, c) else out + i
        return out

    return f


@settings(max_examples=40, deadline=None)
@given(
    conditions=st.lists(st.tuples(st.sampled_from(sorted(_OPS)), st.integers(0, MAX_T + 1)), min_size=1, max_size=3),
    calls=st.lists(st.integers(1, MAX_T), min_size=1, max_size=6),
    specialize=st.booleans(),
    bounded=st.booleans(),
)
def test_every_specialization_raises_or_is_a_guard(conditions, calls, specialize, bounded):
    """Over random size branches and calls: each call raises (a guard that would pin T without
    the opt-in) or equals eager, run by a program whose guards hold at the call's size and
    decide every branch it took: at every size its guards allow, each branch answers as at
    this call (so no branch is a silent specialization)."""
    f = _program(conditions)
    dim = Dim("T", max=MAX_T if bounded else None, specialize=specialize)
    jf = symscalar.jit(f, dynamic_dims={"x": (dim,)})
    state = jf._symscalar_state
    for t in calls:
        x = torch.ones(t, dtype=torch.float64)
        try:
            out = jf(x)
        except DynamicValueError as e:
            assert not specialize and "pins the declared dim T" in str(e)
            continue
        torch.testing.assert_close(out, f(x))
        entry = state.last_entry()
        guards = entry.size_guards
        symbols = symbols_of([(g.lhs, g.rhs) for g in guards])
        assert len(symbols) <= 1
        allowed = [v for v in range(1, MAX_T + 1) if all(g.holds(dict.fromkeys(symbols, v)) for g in guards)]
        assert t in allowed  # no program runs on sizes that fail its guards
        for op, c in conditions:
            assert {_OPS[op](v, c) for v in allowed} == {_OPS[op](t, c)}, (op, c, guards)
    info = jf.cache_info()
    assert info.guards == len(jf.explain().guards)


# -- a dynamic dim meeting a different size: never broadcast, equal under a guard ------------
_MEETS = {
    "add": lambda x, y: x * 2 + y,  # broadcasting
    "cat": lambda x, y: torch.cat([x, y], 1),  # cat's other dims
    "matmul": lambda x, y: x.mT @ y,  # the inner dims: (3, a) @ (b, 3)
    "where": lambda x, y: torch.where(y > 0, x, y.exp()),
    "stack": lambda x, y: torch.stack([x, y], 1),
    "einsum": lambda x, y: torch.einsum("ai,aj->ij", x, y),
}


def _grads(out, inputs):
    return torch.autograd.grad(out.sum(), inputs)


@pytest.mark.parametrize("op", sorted(_MEETS))
def test_two_dims_that_meet_are_equal_under_a_guard(op):
    fn = _MEETS[op]
    jf = symscalar.jit(fn, dynamic_dims={"x": ("A", None), "y": ("S", None)})
    for a in (2, 5, 1, 3):
        x, y = (torch.randn(a, 3, dtype=torch.float64, requires_grad=True) for _ in range(2))
        out = jf(x, y)
        torch.testing.assert_close(out, fn(x, y))
        torch.testing.assert_close(_grads(out, (x, y)), _grads(fn(x, y), (x, y)))
    info = jf.cache_info()
    assert (info.misses, info.guards) == (1, 1)  # one program for every size, A = 1 included
    (guard,) = jf.explain().guards
    assert guard.condition() == "s_A == s_S"
    assert guard.where.startswith(f"{HERE}:") and "meets" in guard.asked_by
    with pytest.raises(RuntimeError) as raised:  # the guard fails: the retrace raises as eager
        jf(torch.randn(2, 3), torch.randn(4, 3))
    assert not isinstance(raised.value, symscalar.SymscalarError)
    assert jf.cache_info().entries == 1


def test_a_dynamic_dim_meeting_a_static_size_pins_it():
    fn = _MEETS["add"]
    declared = {"x": ("A", None)}
    with pytest.raises(DynamicValueError, match=r"(?s)`s_A == 4`.*pins the declared dim A.*specialize=True"):
        symscalar.jit(fn, dynamic_dims=declared)(torch.randn(4, 3), torch.randn(4, 3))
    one = symscalar.jit(fn, dynamic_dims=declared)  # a static 1 broadcasts to the dynamic dim
    for a in (3, 1, 6):
        x, y = torch.randn(a, 3), torch.randn(1, 3)
        torch.testing.assert_close(one(x, y), fn(x, y))
    assert (one.cache_info().misses, one.cache_info().guards) == (1, 0)
    opted = symscalar.jit(fn, dynamic_dims={"x": (Dim("A", specialize=True), None)})
    for a in (4, 2, 4):
        x, y = (torch.randn(a, 3, dtype=torch.float64, requires_grad=True) for _ in range(2))
        out = opted(x, y)
        torch.testing.assert_close(out, fn(x, y))
        torch.testing.assert_close(_grads(out, (x, y)), _grads(fn(x, y), (x, y)))
    assert sorted(g.condition() for g in opted.explain().guards) == ["s_A == 2", "s_A == 4"]


def test_a_dynamic_one_never_broadcasts():
    fn = _MEETS["add"]
    jf = symscalar.jit(fn, dynamic_dims={"x": ("A", None), "y": ("S", None)})
    with pytest.raises(DynamicValueError, match=r"`s_S == 1`.*pins the declared dim S"):
        jf(torch.randn(3, 3), torch.randn(1, 3))  # eager broadcasts y: the program would be S = 1's
    opted = symscalar.jit(fn, dynamic_dims={"x": ("A", None), "y": (Dim("S", specialize=True), None)})
    for a, s in [(3, 1), (5, 1), (4, 4)]:
        x, y = torch.randn(a, 3), torch.randn(s, 3)
        torch.testing.assert_close(opted(x, y), fn(x, y))
    assert opted.cache_info().misses == 2  # S == 1 broadcasts; S == A does not


@settings(max_examples=40, deadline=None)
@given(
    op=st.sampled_from(sorted(_MEETS)),
    y_dim=st.sampled_from(["S", "A", None]),
    specialize=st.booleans(),
    calls=st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)), min_size=1, max_size=5),
)
def test_meeting_dims_equal_eager_or_raise(op, y_dim, specialize, calls):
    """Over random meetings of a dynamic dim A (x's dim 0) with y's dim 0 (another dynamic dim,
    the same name, or static) and random sizes: each call equals eager (outputs and gradients)
    run by a program whose guards hold at its sizes, or raises where eager raises, or is
    refused because a guard would pin a dim that does not opt in. Never another answer."""
    fn = _MEETS[op]
    dims = {"x": (Dim("A", specialize=specialize), None)}
    if y_dim is not None:
        dims["y"] = (Dim(y_dim, specialize=specialize), None)
    jf = symscalar.jit(fn, dynamic_dims=dims)
    for a, b in calls:
        x = torch.randn(a, 3, dtype=torch.float64, requires_grad=True)
        y = torch.randn(b, 3, dtype=torch.float64, requires_grad=True)
        if y_dim == "A" and a != b:  # declared equal: the contract refuses before anything runs
            with pytest.raises(symscalar.ShapeContractError):
                jf(x, y)
            continue
        try:
            expected = fn(x, y)
        except RuntimeError:
            with pytest.raises(RuntimeError) as raised:
                jf(x, y)
            assert not isinstance(raised.value, symscalar.SymscalarError)
            continue
        try:
            out = jf(x, y)
        except DynamicValueError as e:
            assert not specialize and "pins the declared dim" in str(e)
            continue
        torch.testing.assert_close(out, expected)
        torch.testing.assert_close(_grads(out, (x, y)), _grads(expected, (x, y)))
        values = {"A": a, "S": b}
        for guard in jf._symscalar_state.last_entry().size_guards:
            assert guard.holds({s: values[s.name] for s in symbols_of((guard.lhs, guard.rhs))})
    assert jf.cache_info().guards == len(jf.explain().guards)


_TARGETS = {
    "cross_entropy": lambda x, y: F.cross_entropy(x, y % 3),
    "nll_loss": lambda x, y: F.nll_loss(x.log_softmax(-1), y % 3),
    "a mask index": lambda x, y: _written(x, y % 2 == 0),
}


def _written(x, mask):
    z = x * 2
    z[mask] = 0.0
    return z.masked_fill(mask[:, None], 1.0) * x


@pytest.mark.parametrize("op", sorted(_TARGETS))
def test_labels_declared_by_another_name(op):
    """Labels (or a mask) with their own declared dim S meet the logits' B: equal under the
    guard s_B == s_S, gradients as eager's; a call where they differ raises as eager."""
    fn = _TARGETS[op]
    jf = symscalar.jit(fn, dynamic_dims={"x": ("B", None), "y": ("S",)})
    for b in (4, 1, 6):
        x = torch.randn(b, 3, dtype=torch.float64, requires_grad=True)
        y = torch.arange(b)
        out = jf(x, y)
        torch.testing.assert_close(out, fn(x, y))
        torch.testing.assert_close(_grads(out, (x,)), _grads(fn(x, y), (x,)))
    assert [g.condition() for g in jf.explain().guards] == ["s_B == s_S"]
    assert jf.cache_info().misses == 1
    with pytest.raises((ValueError, IndexError, RuntimeError)) as raised:
        jf(torch.randn(4, 3, dtype=torch.float64), torch.arange(5))
    with pytest.raises(type(raised.value)):
        fn(torch.randn(4, 3, dtype=torch.float64), torch.arange(5))
