"""Adversarial cases for declared dynamic dims: every case equals eager torch (values, dtypes,
shapes, gradients and their None-ness) on every call, the first and the cache hits at other
sizes, or is refused with a clear symscalar error at its first call. Never a wrong result,
never a deep internal error (AttributeError, TypeError, RecursionError from inside symscalar).

The sizes of each case put a size 1 first or right after the first call (the trace made at
one size is reused at the others), and each case runs at least four sizes per cache entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import symscalar
from symscalar import Dim, Dims, ShapeContractError, sizes
from symscalar.errors import DynamicValueError, SymscalarError
from symscalar.ops import shape as shape_ops

SIZES = [(2, 3), (1, 1), (3, 5), (4, 8), (1, 6)]
FIRST_ONE = [(1, 1), (2, 3), (1, 5), (4, 1)]
DIMS = {"x": ("B", Dim("T", max=8))}


def _x(b: int, t: int) -> tuple[torch.Tensor, ...]:
    return (torch.randn(b, t, 3, dtype=torch.float64),)


def _same(got: Any, want: Any, path: str = "out") -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
    elif want is None or got is None:
        assert got is None and want is None, (path, got, want)
    elif isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor), (path, type(got))
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (path, got.dtype, got.shape, want.dtype, want.shape)
        torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-5, atol=1e-6)
    else:
        assert type(got) is type(want) and got == want, (path, got, want)


def _leaves(args: tuple[Any, ...], grad: bool) -> tuple[Any, ...]:
    return tuple(
        a.detach().clone().requires_grad_(grad and a.is_floating_point()) if isinstance(a, torch.Tensor) else a
        for a in args
    )


def _diff_outputs(out: Any) -> list[torch.Tensor]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]


def check_against_eager(
    fn: Callable[..., Any],
    make: Callable[..., tuple[Any, ...]],
    sizes: list[tuple[int, ...]],
    dynamic_dims: Any = None,
    *,
    grad: bool = True,
    jitted: Any = None,
) -> Any:
    """Equal to eager at every size (forward and, with ``grad``, backward with the same
    cotangents), or refused with a symscalar error; returns the jitted function."""
    jitted = jitted if jitted is not None else symscalar.jit(fn, dynamic_dims=dynamic_dims)
    for size in sizes:
        torch.manual_seed(0)
        args = make(*size)
        mine, theirs = _leaves(args, grad), _leaves(args, grad)
        want = fn(*theirs)
        got = jitted(*mine)
        _same(got, want)
        if grad and _diff_outputs(want):
            cts = [torch.randn_like(o) for o in _diff_outputs(want)]
            wrt_want = [a for a in theirs if isinstance(a, torch.Tensor) and a.requires_grad]
            wrt_got = [a for a in mine if isinstance(a, torch.Tensor) and a.requires_grad]
            assert len(_diff_outputs(got)) == len(_diff_outputs(want))
            g_want = torch.autograd.grad(_diff_outputs(want), wrt_want, cts, allow_unused=True)
            g_got = torch.autograd.grad(_diff_outputs(got), wrt_got, cts, allow_unused=True)
            _same(g_got, g_want, "grad")
    return jitted


def equal_or_refused(
    fn: Callable[..., Any], make: Callable[..., Any], sizes: Any, dynamic_dims: Any, **kw: Any
) -> None:
    try:
        jitted = check_against_eager(fn, make, sizes, dynamic_dims, **kw)
    except SymscalarError as e:
        assert "dynamic" in str(e) or "static" in str(e) or "not supported" in str(e), e
        return
    assert jitted.cache_info().misses == 1


# (name, fn) over x: [B, T, 3] float64 with DIMS; equal to eager or refused clearly.
CASES: list[tuple[str, Callable[..., Any]]] = [
    ("var over T (1/(T-1) in the backward; T=1 is nan as eager)", lambda x: x.var(1)),
    ("std over T", lambda x: x.std(1)),
    ("var of all elements", lambda x: x.var()),
    ("var_mean over T", lambda x: torch.var_mean(x, 1)),
    ("std with correction 0", lambda x: x.std(1, correction=0)),
    ("mean over T", lambda x: x.mean(1)),
    ("softmax over T", lambda x: x.softmax(1)),
    ("log_softmax over T", lambda x: x.log_softmax(1)),
    ("layer_norm", lambda x: F.layer_norm(x, (3,))),
    ("layer_norm over a dynamic dim", lambda x: F.layer_norm(x.transpose(1, 2), (x.shape[1],))),
    ("logsumexp over T", lambda x: x.logsumexp(1)),
    ("cumsum over T", lambda x: x.cumsum(1)),
    ("flip T", lambda x: x.flip(1)),
    ("roll along T", lambda x: x.roll(1, 1)),
    ("amax over T", lambda x: x.amax(1)),
    ("max over T", lambda x: x.max(1).values),
    ("argmax over T", lambda x: x.argmax(1)),
    ("sort along T", lambda x: x.sort(1).values),
    ("x[:, -1]", lambda x: x[:, -1]),
    ("x[:, 0]", lambda x: x[:, 0]),
    ("x[:, -T:]", lambda x: x[:, -x.shape[1] :]),
    ("x[:, T:] (empty)", lambda x: x[:, x.shape[1] :]),
    ("x[:, ::2]", lambda x: x[:, ::2]),
    ("x[:, 1::2]", lambda x: x[:, 1::2]),
    ("x[:, ::3]", lambda x: x[:, ::3]),
    ("x[::2, ::2, ::2]", lambda x: x[::2, ::2, ::2]),
    ("x[:, ::2] of an empty static dim", lambda x: x[:, :, :0][:, ::2, ::2]),
    ("x[:, :-1]", lambda x: x[:, :-1]),
    ("x[:, 1:-1]", lambda x: x[:, 1:-1]),
    ("x[:, 2:]", lambda x: x[:, 2:]),
    ("x[:, :2]", lambda x: x[:, :2]),
    ("x[:, T - 2:]", lambda x: x[:, x.shape[1] - 2 :]),
    ("x[:, :T // 2]", lambda x: x[:, : x.shape[1] // 2]),
    ("x[:, T - 1]", lambda x: x[:, x.shape[1] - 1]),
    ("x[:, -T]", lambda x: x[:, -x.shape[1]]),
    ("x[:, :100] clamps", lambda x: x[:, :100]),
    ("x[:, -100:] clamps", lambda x: x[:, -100:]),
    ("x[:, :, T % 3]", lambda x: x[:, :, x.shape[1] % 3]),
    ("x[-1] on a dynamic B", lambda x: x[-1]),
    ("narrow(1, 0, T)", lambda x: x.narrow(1, 0, x.shape[1])),
    ("narrow(1, T - 1, 1)", lambda x: x.narrow(1, x.shape[1] - 1, 1)),
    ("select(1, T - 1)", lambda x: x.select(1, x.shape[1] - 1)),
    ("select(1, -1)", lambda x: x.select(1, -1)),
    ("unflatten (B, T)", lambda x: x.flatten(0, 1).unflatten(0, (x.shape[0], x.shape[1]))),
    ("unflatten (B, -1)", lambda x: x.flatten(0, 1).unflatten(0, (x.shape[0], -1))),
    ("reshape(-1, T, 3)", lambda x: x.reshape(-1, x.shape[1], 3)),
    ("reshape(T, B, 3) (same count, other order)", lambda x: x.reshape(x.shape[1], x.shape[0], 3)),
    ("reshape(B, 2T // 2, 3)", lambda x: x.reshape(x.shape[0], (2 * x.shape[1]) // 2, 3)),
    ("transpose then reshape(T, -1)", lambda x: x.transpose(0, 1).reshape(x.shape[1], -1)),
    ("expand a static 1 to T", lambda x: x[:, :1].expand(-1, x.shape[1], -1)),
    ("expand_as", lambda x: x[:, :1].expand_as(x)),
    ("broadcast_to x.shape", lambda x: torch.broadcast_to(x[:, :1], x.shape)),
    ("expand a new leading dim", lambda x: x.expand(2, -1, -1, -1)),
    ("repeat", lambda x: x.repeat(1, 2, 1)),
    ("repeat T times", lambda x: x[:, :1].repeat(1, x.shape[1], 1)),
    ("repeat_interleave along T", lambda x: x.repeat_interleave(2, dim=1)),
    ("new_zeros(x.shape)", lambda x: x.new_zeros(x.shape) + x),
    ("zeros(x.shape)", lambda x: torch.zeros(x.shape, dtype=x.dtype) + x),
    ("ones(*x.shape)", lambda x: torch.ones(*x.shape, dtype=x.dtype) * x),
    ("full((T,), T) is int64", lambda x: torch.full((x.shape[1],), x.shape[1])),
    ("new_full", lambda x: x.new_full((x.shape[0], x.shape[1]), 2.0)),
    ("new_ones(T, T)", lambda x: x.new_ones(x.shape[1], x.shape[1])),
    ("torch.tensor(T)", lambda x: torch.tensor(x.shape[1])),
    ("x * T", lambda x: x * x.shape[1]),
    ("x / T", lambda x: x / x.shape[1]),
    ("T / x", lambda x: x.shape[1] / (x + 10)),
    ("x % T", lambda x: x % x.shape[1]),
    ("T ** -0.5", lambda x: x * x.shape[1] ** -0.5),
    ("arange(T)", lambda x: torch.arange(x.shape[1])),
    ("arange(1, T + 1)", lambda x: torch.arange(1, x.shape[1] + 1)),
    ("arange(0, T, 2)", lambda x: torch.arange(0, x.shape[1], 2)),
    ("arange(T, dtype=float32)", lambda x: torch.arange(x.shape[1], dtype=torch.float32)),
    ("arange(T - 1, -1, -1)", lambda x: torch.arange(x.shape[1] - 1, -1, -1)),
    ("arange(T * 0.5)", lambda x: torch.arange(x.shape[1] * 0.5)),
    ("tril(ones(T, T))", lambda x: torch.tril(torch.ones(x.shape[1], x.shape[1]))),
    ("triu(ones(T, T, bool), 1)", lambda x: torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)),
    ("x^T @ tril", lambda x: x.transpose(1, 2) @ torch.tril(torch.ones(x.shape[1], x.shape[1], dtype=x.dtype))),
    ("triu(diagonal=T)", lambda x: torch.triu(torch.ones(5, 5), diagonal=x.shape[1])),
    ("F.pad by T", lambda x: F.pad(x, (0, x.shape[1]))),
    ("F.pad to a fixed length 8 - T", lambda x: F.pad(x, (0, 0, 0, 8 - x.shape[1]))),
    ("F.pad with a negative pad", lambda x: F.pad(x, (0, 0, 0, -1))),
    ("cat of T and T - 1", lambda x: torch.cat([x, x[:, :-1]], 1)),
    ("stack", lambda x: torch.stack([x, x], 1)),
    ("matmul [B, T, T]", lambda x: x @ x.transpose(1, 2)),
    ("bmm", lambda x: torch.bmm(x, x.transpose(1, 2))),
    ("einsum btc,bsc->bts", lambda x: torch.einsum("btc,bsc->bts", x, x)),
    ("einsum btc->bc", lambda x: torch.einsum("btc->bc", x)),
    ("1-d matmul over T", lambda x: x[0, :, 0] @ x[0, :, 1]),
    ("matrix-vector over T", lambda x: x[0].transpose(0, 1) @ x[0, :, 0]),
    ("outer", lambda x: torch.outer(x[0, :, 0], x[0, :, 1])),
    ("where with a mask from arange(T)", lambda x: torch.where(torch.arange(x.shape[1])[None, :, None] < 2, x, 0.0)),
    (
        "causal masked_fill softmax",
        lambda x: (
            (x @ x.transpose(1, 2))
            .masked_fill(torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1), float("-inf"))
            .softmax(-1)
        ),
    ),
    ("index_select arange(T - 1)", lambda x: x.index_select(1, torch.arange(x.shape[1] - 1))),
    ("gather with a [B, T, 3] index", lambda x: x.gather(1, torch.zeros(x.shape[0], x.shape[1], 3, dtype=torch.long))),
    ("advanced index arange(T)", lambda x: x[:, torch.arange(x.shape[1])]),
    ("flatten", lambda x: x.flatten()),
    ("unbind a static dim", lambda x: x.unbind(2)),
    ("chunk a static dim", lambda x: x.chunk(3, 2)),
    ("split a static dim", lambda x: x.split(1, 2)),
    ("chunk into T pieces", lambda x: x.chunk(x.shape[1], 2)),
    ("split along T", lambda x: x.split(2, 1)),
    ("unbind B", lambda x: x.unbind(0)),
    ("squeeze(0) of B", lambda x: x.squeeze(0)),
    ("squeeze()", lambda x: x.squeeze()),
    ("squeeze a static 1", lambda x: x[:, :, :1].squeeze(-1)),
    ("sdpa causal", lambda x: F.scaled_dot_product_attention(x[:, None], x[:, None], x[:, None], is_causal=True)),
    ("sdpa", lambda x: F.scaled_dot_product_attention(x[:, None], x[:, None], x[:, None])),
    ("x.mT", lambda x: x.mT),
    ("contiguous view(-1)", lambda x: x.transpose(0, 1).contiguous().view(-1)),
    ("sum(keepdim) / T", lambda x: x.sum(1, keepdim=True) / x.shape[1]),
    ("x.view(*x.size()[:2], 3, 1)", lambda x: x.view(*x.size()[:2], 3, 1)),
    ("sum over a size as a dim", lambda x: x.sum(x.shape[0])),
    ("numel as a factor", lambda x: x * x.numel()),
    ("(x - mean)^2 over T", lambda x: (x - x.mean(1, keepdim=True)) ** 2),
    ("sum((0, 1)) / (B * T)", lambda x: x.sum((0, 1)) / (x.shape[0] * x.shape[1])),
    ("min(T, 8) as a bound (decided by max=8)", lambda x: x[:, : min(x.shape[1], 8)]),
    ("max(T, 1)", lambda x: x * max(x.shape[1], 1)),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[n for n, _ in CASES])
def test_equal_to_eager_or_refused(name, fn):
    equal_or_refused(fn, _x, SIZES, DIMS)


# Python code on size symbols: decided by the ranges, or refused.
PYTHON: list[tuple[str, Callable[..., Any]]] = [
    ("T in a list", lambda x: x * (2 if x.shape[1] in [100, 200] else 1)),
    ("T in a dict (hash)", lambda x: x * (2 if x.shape[1] in {1: 0} else 1)),
    ("f-string of T", lambda x: x * len(f"{x.shape[1]}")),
    ("int(T)", lambda x: x * int(x.shape[1])),
    ("float(T)", lambda x: x * float(x.shape[1])),
    ("math.sqrt(T)", lambda x: x * math.sqrt(x.shape[1])),
    ("math.ceil(T / 2)", lambda x: x * math.ceil(x.shape[1] / 2)),
    ("range(T)", lambda x: sum(x[:, i] for i in range(x.shape[1]))),
    ("a list indexed by T", lambda x: x * [1, 2, 3, 4, 5, 6, 7, 8, 9][x.shape[1]]),
    ("T == 1", lambda x: x * (2 if x.shape[1] == 1 else 1)),
    ("T > 0 (decided)", lambda x: x * (2 if x.shape[1] > 0 else 1)),
    ("bool(T)", lambda x: x * (2 if x.shape[1] else 1)),
    ("T == T", lambda x: x * (2 if x.shape[1] == x.shape[1] else 1)),
    ("B * T == numel // 3", lambda x: x * (2 if x.shape[0] * x.shape[1] == x.numel() // 3 else 1)),
    ("x.shape[1:] == (T, 3)", lambda x: x * (2 if x.shape[1:] == (x.shape[1], 3) else 1)),
    ("isinstance(T, int) (eager: True)", lambda x: x * (2 if isinstance(x.shape[1], int) else 1)),
    ("isinstance(T, float)", lambda x: x * (2 if isinstance(x.shape[1], float) else 1)),
    ("(-T) // 2 floors", lambda x: x * ((-x.shape[1]) // 2)),
    ("(-T) % 3 is non-negative", lambda x: x * ((-x.shape[1]) % 3)),
    ("T // -2", lambda x: x * (x.shape[1] // -2)),
    ("T % -3", lambda x: x * (x.shape[1] % -3)),
    ("(T - 3) // 2", lambda x: x * ((x.shape[1] - 3) // 2)),
    ("(T - 3) % 2", lambda x: x * ((x.shape[1] - 3) % 2)),
    ("T // 2 * 2 as a bound", lambda x: x[:, : x.shape[1] // 2 * 2]),
    ("abs(T - 3)", lambda x: x * abs(x.shape[1] - 3)),
    ("round(T / 2)", lambda x: x * round(x.shape[1] / 2)),
    ("divmod(T, 2)", lambda x: x * divmod(x.shape[1], 2)[0]),
    ("T ** 2", lambda x: x * x.shape[1] ** 2),
    ("len(x.shape)", lambda x: x * len(x.shape)),
    ("len(x) of a dynamic first dim", lambda x: x * len(x)),
]


@pytest.mark.parametrize("name, fn", PYTHON, ids=[n for n, _ in PYTHON])
def test_python_on_size_symbols(name, fn):
    equal_or_refused(fn, _x, FIRST_ONE, DIMS)


def test_one_tensor_for_a_declared_and_an_undeclared_parameter():
    # The declared shape belongs to the parameter, not to the tensor: y stays static (part of
    # the key), so a later call with another x and the same y shape cannot reuse a trace that
    # took y's dims for x's symbols (it gave x[:, -1] + y[:, -1] a [1] result for a [2] one).
    def f(x, y):
        return x[:, -1] + y[:, -1]

    jitted = symscalar.jit(f, dynamic_dims={"x": ("B", "T")})
    a = torch.randn(2, 3)
    for x, y in [(a, a), (torch.randn(2, 5), torch.randn(2, 3)), (torch.randn(1, 3), torch.randn(2, 3))]:
        try:
            got = jitted(x, y)
        except SymscalarError as e:  # x's B meets y's static 2: refused at every size
            assert "dynamic" in str(e)
            continue
        _same(got, f(x, y))


def test_one_tensor_for_two_declared_parameters():
    def f(x, y):
        return x[:, -1] + y.sum(1)

    jitted = symscalar.jit(f, dynamic_dims={"x": ("B", "T"), "y": ("B",)})
    for t in (3, 1, 5):
        a = torch.randn(2, t)
        _same(jitted(a, a), f(a, a))
        b = torch.randn(2, t)
        _same(jitted(a, b), f(a, b))
    assert jitted.cache_info().misses == 3  # y's dim 1 is static: one trace per its size


# Outputs, dtypes and grad modes.
OUTPUTS: list[tuple[str, Callable[..., Any], bool]] = [
    ("a size returned next to a tensor", lambda x: (x * 2, x.shape[1]), True),
    ("numel returned", lambda x: x.numel(), False),
    ("a decided comparison returned", lambda x: x.shape[1] > 0, False),
    ("T / 2 returned", lambda x: x.shape[1] / 2, False),
    ("a list of sizes returned", lambda x: [x.shape[0], x.shape[1]], False),
    ("x.shape returned", lambda x: (x * 2, x.shape), True),
    ("x.size() returned", lambda x: x.size(), False),
    ("float() then softmax over T", lambda x: (x.float() * x.shape[1]).softmax(1), True),
    ("half() * T ** -0.5", lambda x: x.half() * x.shape[1] ** -0.5, False),
    ("amax over T (its backward converts dtypes)", lambda x: x.amax(1), True),
    ("mean of a bool mask over T", lambda x: (x > 0).sum(1) / x.shape[1], False),
    ("arange(T) * T is int64", lambda x: torch.arange(x.shape[1]) * x.shape[1], False),
    ("arange(T) / T is float", lambda x: torch.arange(x.shape[1]) / x.shape[1], False),
    ("T - arange(T)", lambda x: x.shape[1] - torch.arange(x.shape[1]), False),
    ("full((2,), T, dtype=float32)", lambda x: torch.full((2,), x.shape[1], dtype=torch.float32), False),
    ("full((2,), T / 2)", lambda x: torch.full((2,), x.shape[1] / 2), False),
    ("x.new_tensor([T])", lambda x: x.new_tensor([x.shape[1]]), False),
    ("clamp(max=T - 1.5)", lambda x: x.clamp(max=x.shape[1] - 1.5), True),
    ("x ** T", lambda x: x ** x.shape[1], True),
    ("T ** x", lambda x: x.shape[1] ** x, True),
    ("masked_fill with T", lambda x: x.masked_fill(x > 0, x.shape[1]), True),
    ("where(x > 0, x, T)", lambda x: torch.where(x > 0, x, x.shape[1]), True),
    ("no_grad inside", lambda x: x - _no_grad_mean(x), True),
    ("detach", lambda x: x.detach().sum(1) + x.mean(1), True),
]


def _no_grad_mean(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return x.mean(1, keepdim=True)


@pytest.mark.parametrize("name, fn, grad", OUTPUTS, ids=[n for n, _, _ in OUTPUTS])
def test_outputs_and_dtypes(name, fn, grad):
    equal_or_refused(fn, _x, SIZES, DIMS, grad=grad)


def test_integer_inputs_divided_by_sizes_floor_as_eager():
    make = lambda b, t: (torch.randint(-9, 9, (b, t, 3)),)  # noqa: E731
    for fn in (lambda x: x // x.shape[1], lambda x: x % x.shape[1], lambda x: x.sum(1) * x.shape[1]):
        assert check_against_eager(fn, make, SIZES, DIMS, grad=False).cache_info().misses == 1


def test_under_no_grad_outside():
    jitted = symscalar.jit(lambda x: x.mean(1) * x.shape[1], dynamic_dims=DIMS)
    with torch.no_grad():
        for b, t in SIZES:
            x = torch.randn(b, t, 3, requires_grad=True)
            got = jitted(x)
            _same(got, x.mean(1) * t)
            assert not got.requires_grad
    assert jitted.cache_info().misses == 1


# Empty dims: Dim("T", min=0). Eager's special cases of an empty dim (attention with no keys,
# the flash kernel, which crashed the process on 0 keys) are refused unless decided.
EMPTY_DIMS = {"x": ("B", Dim("T", min=0, max=8))}
EMPTY_SIZES = [(2, 3), (2, 0), (1, 1), (3, 0)]
EMPTY: list[tuple[str, Callable[..., Any]]] = [
    ("mean over T", lambda x: x.mean(1)),
    ("mean of all", lambda x: x.mean()),
    ("sum over T", lambda x: x.sum(1)),
    ("softmax over T", lambda x: x.softmax(1)),
    ("var over T", lambda x: x.var(1)),
    ("std of all", lambda x: x.std()),
    ("sum / T", lambda x: x.sum(1) / x.shape[1]),
    ("x[:, :-1]", lambda x: x[:, :-1]),
    ("x[:, 1:]", lambda x: x[:, 1:]),
    ("x[:, -1]", lambda x: x[:, -1]),
    ("F.pad along T", lambda x: F.pad(x, (0, 0, 1, 1))),
    ("cat along T", lambda x: torch.cat([x, x], 1)),
    ("reshape(B, -1)", lambda x: x.reshape(x.shape[0], -1)),
    ("reshape(-1, 3)", lambda x: x.reshape(-1, 3)),
    ("x^T @ x", lambda x: x.transpose(1, 2) @ x),
    ("sdpa (flash kernel on 0 keys)", lambda x: F.scaled_dot_product_attention(x[:, None], x[:, None], x[:, None])),
    ("arange(T)", lambda x: torch.arange(x.shape[1])),
    ("expand to T", lambda x: x.sum(1, keepdim=True).expand(-1, x.shape[1], -1)),
    ("logsumexp over T", lambda x: x.logsumexp(1)),
    ("cumsum over T", lambda x: x.cumsum(1)),
    ("sqrt of a sum over T", lambda x: (x * x).sum(1).sqrt()),
    ("x - mean(keepdim)", lambda x: x - x.mean(1, keepdim=True)),
]


@pytest.mark.parametrize("name, fn", EMPTY, ids=[n for n, _ in EMPTY])
def test_empty_dims(name, fn):
    equal_or_refused(fn, _x, EMPTY_SIZES, EMPTY_DIMS)


# The normal form and the decisions of sizes.py against Python's int arithmetic (floor
# division and modulus included) at every size the declared ranges allow.
_OPS = ["+", "-", "*", "//", "%"]


def _expressions(depth: int) -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.sampled_from(["B", "T"]), st.integers(-4, 6))
    if depth == 0:
        return leaf
    sub = _expressions(depth - 1)
    binary = st.tuples(sub, st.sampled_from(_OPS), st.one_of(sub, st.integers(1, 5)))
    return st.one_of(leaf, binary, st.tuples(st.just("neg"), sub))


def _evaluate(expr: Any, env: dict[str, Any]) -> Any:
    if isinstance(expr, str):
        return env[expr]
    if isinstance(expr, int):
        return expr
    if expr[0] == "neg":
        return -_evaluate(expr[1], env)
    a, op, b = _evaluate(expr[0], env), expr[1], _evaluate(expr[2], env)
    if op in ("//", "%") and not (type(b) is int and b > 0):
        raise ZeroDivisionError  # only by a positive static int in the normal form
    return {"+": a + b, "-": a - b, "*": a * b, "//": a // b if op == "//" else 0, "%": a % b if op == "%" else 0}[op]


def test_normal_form_and_decisions_agree_with_python_ints():
    @settings(max_examples=300, deadline=None, database=None)
    @given(_expressions(3), _expressions(2), st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]))
    def check(expr, other, op):
        b, t = sizes.Symbol("B", 1, 4, 2), sizes.Symbol("T", 0, 6, 3)
        env = {"B": sizes.Size.of(b), "T": sizes.Size.of(t)}
        try:
            form, other_form = _evaluate(expr, env), _evaluate(other, env)
            decided = sizes.decide(op, form, other_form)
        except (ZeroDivisionError, sizes.SizeDecisionError):
            return
        compare = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__, "eq": int.__eq__}
        for vb in range(1, 5):
            for vt in range(7):
                ints = {"B": vb, "T": vt}
                try:
                    want, want_other = _evaluate(expr, ints), _evaluate(other, ints)
                except ZeroDivisionError:
                    return
                values = {b: vb, t: vt}
                assert sizes.evaluate(form, values) == want
                # the generated program computes a size from its printed form
                assert eval(repr(form), {"s_B": vb, "s_T": vt}) == want  # noqa: S307
                assert sizes.evaluate(other_form, values) == want_other
                if decided is not None:
                    truth = want != want_other if op == "ne" else compare[op](want, want_other)
                    assert decided == truth, (expr, op, other, vb, vt)

    check()


def test_floor_division_is_bounded_by_its_dividend():
    """``c * (a // c)`` lies in ``[a - c + 1, a]``: the ranges decide ``T // 2 <= T`` and
    ``T // 2 + 1 <= T`` (the opaque quotient alone looked independent of ``T``), so a slice
    starting at ``T // 2`` or a ``narrow`` to the second half trace without a refusal."""
    t = sizes.Size.of(sizes.Symbol("T", 2, 64, 5))
    assert sizes.decide("gt", t // 2, t) is False
    assert sizes.decide("le", t // 2 + 1, t) is True
    assert sizes.decide("ge", (t + 1) // 2, t // 2) is True
    assert sizes.decide("lt", t - 2 * (t // 2), 2) is True
    assert sizes.decide("gt", t // 2, 16) is None  # T // 2 is 1 .. 32: not decided

    def halves(x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        return x[:, n // 2 :: 2].sum(1) + x[:, (n + 1) // 2 :].sum(1) + x.narrow(1, n // 2, n - n // 2).sum(1)

    jitted = symscalar.jit(halves, dynamic_dims={"x": (None, Dim("T", min=2, max=64))})
    for n in (2, 3, 5, 8, 17, 64):
        x = torch.randn(3, n, dtype=torch.float64)
        assert torch.equal(jitted(x), halves(x)), n
    assert jitted.cache_info().misses == 1


class _Attention(nn.Module):
    """A module reading T from its input: positions from a parameter, a causal mask from a
    buffer, an attention mask declared with the same B and T."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 4)
        self.pos = nn.Parameter(torch.randn(16, 4))
        self.ln = nn.LayerNorm(4)
        self.register_buffer("causal", torch.tril(torch.ones(16, 16)))

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        _, t, _ = x.shape
        h = self.lin(x) + self.pos[:t]
        att = (h @ h.transpose(1, 2)) / math.sqrt(h.size(-1))
        att = att.masked_fill(self.causal[:t, :t] == 0, float("-inf"))
        if attention_mask is not None:
            att = att.masked_fill(attention_mask[:, None, :] == 0, float("-inf"))
        return self.ln(att.softmax(-1) @ h).mean(1)


def test_module_forward_and_parameter_grads():
    torch.manual_seed(0)
    module = _Attention().double()
    jitted = symscalar.jit(module, dynamic_dims={"x": ("B", Dim("T", max=16)), "attention_mask": ("B", "T")})
    for b, t in [(2, 3), (1, 1), (3, 7), (1, 16)]:
        x = torch.randn(b, t, 3, dtype=torch.float64)
        mask = torch.ones(b, t, dtype=torch.long)
        mask[0, 1:] = 0
        got, want = jitted(x, mask), module(x, mask)
        _same(got, want)
        params = list(module.parameters())
        _same(torch.autograd.grad(got.sum(), params), torch.autograd.grad(want.sum(), params), "grad")
    assert jitted.cache_info().misses == 1
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    _same(jitted(x), module(x))  # None for the declared mask (its default): a program of its own
    assert jitted.cache_info().misses == 2


@pytest.mark.parametrize("api", ["grad", "value_and_grad"])
def test_grad_apis(api):
    def loss(w, x):
        return ((x @ w).softmax(1) * x.shape[1]).var() + x.cumsum(1)[:, -1].mean()

    fn = getattr(symscalar, api)(loss, argnums=(0, 1), dynamic_dims={"x": ("B", "T")})
    for b, t in [(2, 3), (1, 1), (3, 5), (1, 2)]:
        w, x = torch.randn(3, 4, dtype=torch.float64), torch.randn(b, t, 3, dtype=torch.float64)
        w2, x2 = w.clone().requires_grad_(), x.clone().requires_grad_()
        value = loss(w2, x2)
        want = torch.autograd.grad(value, [w2, x2])
        got = fn(w, x)
        _same(got, (value.detach(), want) if api == "value_and_grad" else want)
    assert fn.cache_info().misses == 1


def test_annotation_form():
    def f(x: Annotated[torch.Tensor, Dims("B", Dim("T", max=8), 3)]) -> torch.Tensor:
        return x[:, -1] * x.shape[1] + x.mean(1)

    check_against_eager(f, _x, SIZES, None, jitted=(jitted := symscalar.jit(f)))
    assert jitted.cache_info().misses == 1
    with pytest.raises(ShapeContractError, match="dim 2 is 4"):
        jitted(torch.randn(2, 3, 4))
    with pytest.raises(ShapeContractError, match="outside its declared range"):
        jitted(torch.randn(2, 9, 3))


def test_equal_names_across_parameters():
    f = lambda x, y: torch.cat([x, y], 1)[:, -y.shape[1] :] + y  # noqa: E731
    make = lambda b, t: (torch.randn(b, t, dtype=torch.float64), torch.randn(b, t + 1, dtype=torch.float64))  # noqa: E731
    assert check_against_eager(f, make, SIZES, {"x": ("B", "T"), "y": ("B", "S")}).cache_info().misses == 1
    same = symscalar.jit(lambda x, y: x + y, dynamic_dims={"x": ("B", "T"), "y": ("B", "T")})
    make = lambda b, t: (torch.randn(b, t), torch.randn(b, t))  # noqa: E731
    assert check_against_eager(lambda x, y: x + y, make, SIZES, jitted=same).cache_info().misses == 1
    with pytest.raises(ShapeContractError, match="dim T must be one size"):
        same(torch.randn(2, 3), torch.randn(2, 4))
    # two names that meet are equal under a size guard (never broadcast): a call where they
    # differ fails it and retraces into eager's error
    other = symscalar.jit(lambda x, y: x + y, dynamic_dims={"x": ("B", "T"), "y": ("B", "S")})
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(other(x, y), x + y)
    assert [g.condition() for g in other.explain().guards] == ["s_S == s_T"]
    with pytest.raises(RuntimeError):
        other(torch.randn(2, 3), torch.randn(2, 4))
    with pytest.raises(DynamicValueError, match="pins the declared dim S"):  # eager broadcasts y's 1
        other(torch.randn(2, 3), torch.randn(2, 1))


def _setitem(index: Any, value: Callable[[torch.Tensor], Any]) -> Callable[[torch.Tensor], torch.Tensor]:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[index(x) if callable(index) else index] = value(x)
        return y

    return fn


def _in_place(x: torch.Tensor) -> torch.Tensor:
    y = x * 1
    y.mul_(x.shape[1])
    y.masked_fill_(y > 1, 0.0)
    return y


# Losses, in-place writes, indexing, more shape ops.
MORE: list[tuple[str, Callable[..., Any]]] = [
    (
        "cross_entropy over B * T rows",
        lambda x: F.cross_entropy(x.reshape(-1, 3), torch.zeros(x.shape[0] * x.shape[1], dtype=torch.long)),
    ),
    (
        "cross_entropy with ignore_index (mean over the kept rows)",
        lambda x: F.cross_entropy(x.reshape(-1, 3), torch.arange(x.shape[0] * x.shape[1]) % 4 - 1, ignore_index=-1),
    ),
    (
        "cross_entropy [B, C, T]",
        lambda x: F.cross_entropy(x.transpose(1, 2), torch.zeros(x.shape[0], x.shape[1], dtype=torch.long)),
    ),
    (
        "cross_entropy with label smoothing",
        lambda x: F.cross_entropy(
            x.reshape(-1, 3), torch.zeros(x.shape[0] * x.shape[1], dtype=torch.long), label_smoothing=0.1
        ),
    ),
    (
        "nll_loss",
        lambda x: F.nll_loss(x.log_softmax(-1).reshape(-1, 3), torch.ones(x.shape[0] * x.shape[1], dtype=torch.long)),
    ),
    ("mse_loss", lambda x: F.mse_loss(x, torch.zeros_like(x))),
    ("kl_div batchmean (/ B)", lambda x: F.kl_div(x.log_softmax(-1), x.softmax(-1).detach(), reduction="batchmean")),
    ("y[:, :T - 1] = 0", _setitem(lambda x: (slice(None), slice(None, x.shape[1] - 1)), lambda x: 0.0)),
    ("y[:, -1] = x[:, 0]", _setitem((slice(None), -1), lambda x: x[:, 0])),
    ("y[:, 1:] = x[:, :-1]", _setitem((slice(None), slice(1, None)), lambda x: x[:, :-1])),
    ("y[0] = 0", _setitem(0, lambda x: 0.0)),
    ("y[y > 0] = 0 (bool mask)", _setitem(lambda x: x > 0, lambda x: 0.0)),
    ("mul_ by T, masked_fill_", _in_place),
    ("cat an empty static piece", lambda x: torch.cat([x, torch.zeros(x.shape[0], 0, 3, dtype=x.dtype)], 1)),
    ("unsqueeze and expand to [B, T, T, 3]", lambda x: x.unsqueeze(1).expand(x.shape[0], x.shape[1], x.shape[1], 3)),
    ("tril(diagonal=-1) of [B, T, T]", lambda x: torch.tril(x @ x.transpose(1, 2), diagonal=-1)),
    ("triu(1) of [B, T, T]", lambda x: torch.triu(x @ x.transpose(1, 2), 1)),
    ("tril of [B, T, 3]", lambda x: torch.tril(x)),
    ("triu(2) of [B, T, 3]", lambda x: torch.triu(x, 2)),
    ("F.pad with value 1.5", lambda x: F.pad(x, (0, 0, 1, 2), value=1.5)),
    ("F.pad of the last two dims of 4-d", lambda x: F.pad(x[:, None], (1, 1, 1, 1))),
    ("conv1d along T", lambda x: F.conv1d(x.transpose(1, 2), torch.ones(2, 3, 1, dtype=x.dtype))),
    ("max(1, keepdim=True)", lambda x: torch.max(x, 1, keepdim=True)[0]),
    (
        "embedding of [B, T] ids",
        lambda x: F.embedding(torch.zeros(x.shape[0], x.shape[1], dtype=torch.long), x[0, :1].expand(4, 3) * 1),
    ),
    ("rms_norm", lambda x: F.rms_norm(x, (3,))),
    ("mean((0, 1), keepdim=True)", lambda x: x.mean((0, 1), keepdim=True)),
    ("prod over T", lambda x: x.prod(1)),
    ("sum(1, dtype=float32)", lambda x: x.sum(1, dtype=torch.float32)),
    ("view_as", lambda x: x.reshape(-1).view_as(x)),
    ("reshape_as", lambda x: x.reshape(-1).reshape_as(x)),
    ("type_as", lambda x: x.float().type_as(x)),
    ("to(float32)", lambda x: x.to(torch.float32)),
    ("swapaxes", lambda x: x.swapaxes(0, 1)),
    ("unflatten(-1, (1, 3))", lambda x: x.unflatten(-1, (1, 3))),
    ("chunk along a flattened dynamic dim", lambda x: torch.chunk(x.reshape(x.shape[0], -1), 1, 1)[0]),
    ("split_with_sizes of a static dim", lambda x: x.split([1, 2], 2)),
    ("matmul broadcasting a static batch of 1", lambda x: x @ torch.ones(1, 3, 2, dtype=x.dtype)),
    ("baddbmm", lambda x: torch.baddbmm(torch.zeros(1, 1, 1, dtype=x.dtype), x, x.transpose(1, 2))),
    ("addmm", lambda x: torch.addmm(torch.zeros(x.shape[1], 4, dtype=x.dtype), x[0], torch.ones(3, 4, dtype=x.dtype))),
    ("x[x > 0] (data-dependent)", lambda x: x[x > 0]),
    ("x[None, ..., 0]", lambda x: x[None, ..., 0]),
    ("x[:, [0]]", lambda x: x[:, [0]]),
    ("x[arange(B), 0]", lambda x: x[torch.arange(x.shape[0]), 0]),
    ("take_along_dim", lambda x: torch.take_along_dim(x, torch.zeros(1, 1, 1, dtype=torch.long), 1)),
    (
        "scatter_add into a static dim",
        lambda x: torch.zeros(x.shape[0], 4, 3, dtype=x.dtype).scatter_add(
            1, torch.zeros(x.shape[0], x.shape[1], 3, dtype=torch.long), x
        ),
    ),
    (
        "index_add into a static dim",
        lambda x: torch.zeros(x.shape[0], 4, 3, dtype=x.dtype).index_add(
            1, torch.zeros(x.shape[1], dtype=torch.long), x
        ),
    ),
    ("zeros(B) + 1 (no gradient to x)", lambda x: torch.zeros(x.shape[0], dtype=x.dtype) + 1),
]


@pytest.mark.parametrize("name, fn", MORE, ids=[n for n, _ in MORE])
def test_more_ops(name, fn):
    equal_or_refused(fn, _x, SIZES, DIMS)


def test_a_gradient_through_sizes_only_is_none():
    # x is used only for its sizes: eager's gradient for it is None (unused), y's is T * B
    make = lambda b, t: (torch.randn(b, t, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64))  # noqa: E731
    for fn in (lambda x, y: y * x.shape[1], lambda x, y: y.expand(x.shape[0], x.shape[1], 3)):
        assert check_against_eager(fn, make, SIZES, DIMS).cache_info().misses == 1


# Sizes only an integer input carries: the backward reads them from a saved forward tensor.
INT_SOURCES: list[tuple[str, Callable[..., Any]]] = [
    ("mean of a factory of ids' sizes", lambda ids, w: (w.sum() * torch.ones(*ids.shape, dtype=w.dtype)).mean()),
    ("w expanded to ids' sizes, mean", lambda ids, w: w[0].expand(ids.shape[0], ids.shape[1], 3).mean()),
    ("embedding, mean over T", lambda ids, w: F.embedding(ids, w).mean(1)),
    ("embedding, var over T", lambda ids, w: F.embedding(ids, w).var(1)),
    ("w * T / B", lambda ids, w: w * ids.shape[1] / ids.shape[0]),
    (
        "expand to B * T, reshape, sum",
        lambda ids, w: w[None].expand(ids.shape[0] * ids.shape[1], 4, 3).reshape(ids.shape[0], -1).sum(0),
    ),
    ("softmax over an expanded T", lambda ids, w: w[:, :1].T.expand(ids.shape[1], 4).softmax(0)),
]


@pytest.mark.parametrize("name, fn", INT_SOURCES, ids=[n for n, _ in INT_SOURCES])
def test_sizes_from_an_integer_input(name, fn):
    make = lambda b, t: (torch.randint(0, 4, (b, t)), torch.randn(4, 3, dtype=torch.float64))  # noqa: E731
    assert check_against_eager(fn, make, SIZES, {"ids": ("B", "T")}).cache_info().misses == 1


def test_slice_bounds_clamp_as_python_at_every_size():
    t = sizes.Symbol("T", 1, 6, 3)
    size = sizes.Size.of(t)
    bound = st.one_of(st.none(), st.integers(-8, 8), st.tuples(st.integers(-1, 1), st.integers(-8, 8)))

    def as_form(b: Any) -> Any:
        return b if b is None or isinstance(b, int) else b[0] * size + b[1]

    def at(b: Any, n: int) -> Any:
        return b if b is None or isinstance(b, int) else b[0] * n + b[1]

    @settings(max_examples=300, deadline=None, database=None)
    @given(bound, bound, st.integers(1, 3))
    def check(start, stop, step):
        try:
            lo, hi, _ = shape_ops._symbolic_indices(slice(as_form(start), as_form(stop), step), size)
            hi = max(hi, lo)
        except sizes.SizeDecisionError:
            return  # refused at every size
        for n in range(1, 7):
            want = slice(at(start, n), at(stop, n), step).indices(n)
            assert sizes.evaluate((lo, hi), {t: n}) == (want[0], max(want[1], want[0]))

    check()


def test_interleaved_backwards_of_calls_at_different_sizes():
    # each call's backward reads its own sizes (saved with it), not the last call's
    fn = lambda x: (x - x.mean(1, keepdim=True)).var(1) * x.shape[1]  # noqa: E731
    jitted = symscalar.jit(fn, dynamic_dims=DIMS)
    xs = [torch.randn(b, t, 3, dtype=torch.float64, requires_grad=True) for b, t in SIZES]
    outs = [jitted(x) for x in xs]
    for x, out in reversed(list(zip(xs, outs))):
        x2 = x.detach().clone().requires_grad_()
        _same(torch.autograd.grad(out.sum(), x), torch.autograd.grad(fn(x2).sum(), x2), "grad")
    assert jitted.cache_info().misses == 1


def test_decisions_see_shared_factors():
    b, t = sizes.Symbol("B", 1, None, 2), sizes.Symbol("T", 1, 8, 3)
    B, T = sizes.Size.of(b), sizes.Size.of(t)
    assert sizes.decide("ge", B * T - B, 0) is True  # B * (T - 1): interval arithmetic alone said (-inf, inf)
    assert sizes.decide("le", B * T - B * 8, 0) is True
    assert sizes.decide("ge", (T - 3) * B, 0) is None  # its sign changes with T: undecided
    assert sizes.decide("gt", B * T - B, 0) is None  # 0 at T == 1


def test_shifted_language_model_loss():
    def loss(x):
        logits = x @ torch.ones(3, 5, dtype=x.dtype)
        targets = torch.zeros(x.shape[0], x.shape[1], dtype=torch.long)
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = targets[..., 1:].contiguous()
        return F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))

    # the labels' count B * T - B must be shown >= 0 (it was refused as undecided); T = 1 is nan
    assert check_against_eager(loss, _x, SIZES, DIMS).cache_info().misses == 1


def test_copy_into_a_traced_value():
    # in-place updates look torch.Tensor's methods up while tracing: they must stay torch's own
    def f(x, y):
        z = x.clone()
        z.copy_(y)
        return z * x.shape[1]

    make = lambda b, t: (torch.randn(b, t, 3, dtype=torch.float64), torch.randn(b, t, 3, dtype=torch.float64))  # noqa: E731
    # (forward only: x's gradient is None under jit, zeros in eager, with static shapes too)
    jitted = check_against_eager(f, make, SIZES, {"x": ("B", "T"), "y": ("B", "T")}, grad=False)
    assert jitted.cache_info().misses == 1
