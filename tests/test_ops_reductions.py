"""Reductions through symscalar.jit against torch eager, torch.autograd and gradcheck; the
static contract of every reduction spelling; backward traces free of dynamic static params."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, StaticBool, StaticDims, ops
from symscalar.frontend import OPS
from symscalar.trace import ScalarVar, contains_dynamic

F = torch.nn.functional
DIMS: list[Any] = [None, 0, -1, (0, 2), (-1, 1)]


def _jit_unary(fn: Callable[..., Any]) -> Any:
    """``fn(x, dim, keepdim)`` jitted with ``dim`` and ``keepdim`` static parameters."""

    def f(x: torch.Tensor, dim: StaticDims, keepdim: StaticBool) -> Any:
        return fn(x, dim, keepdim)

    return symscalar.jit(f)


def _method(name: str) -> Callable[..., Any]:
    """``x.<name>(*args, **kwargs)``: the Tensor-method spelling (``torch.Tensor.sum(proxy)``
    is a C descriptor that only takes real tensors)."""
    return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


def _as_tuple(v: Any) -> tuple[Any, ...]:
    return v if isinstance(v, tuple) else (v,)


def _all(dim: Any, ndim: int) -> Any:
    return tuple(range(ndim)) if dim is None else dim


def _prod_ref(x: torch.Tensor, dim: Any, keepdim: bool) -> torch.Tensor:
    """torch.prod over several dims (torch.prod itself takes one)."""
    if dim is None and not keepdim:
        return torch.prod(x)
    dims = sorted(d % x.ndim for d in _as_tuple(_all(dim, x.ndim)))
    for d in reversed(dims):
        x = torch.prod(x, d, keepdim)
    return x


def _var_kwargs(fn: Callable[..., Any], **kw: Any) -> Callable[..., Any]:
    return lambda x, dim, keepdim: fn(x, dim, keepdim=keepdim, **kw)


def _all_dims(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with ``dim=None`` spelled as every dim (torch.amax/logsumexp have no None)."""
    return lambda x, d, k: fn(x, _all(d, x.ndim), k)


# (id, symscalar spelling, torch reference), each called as f(x, dim, keepdim)
MULTI_DIM: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("torch.sum", torch.sum, torch.sum),
    ("Tensor.sum", _method("sum"), torch.sum),
    ("ops.sum", ops.sum, torch.sum),
    ("torch.mean", torch.mean, torch.mean),
    ("Tensor.mean", _method("mean"), torch.mean),
    ("ops.mean", ops.mean, torch.mean),
    ("torch.amax", _all_dims(torch.amax), _all_dims(torch.amax)),
    ("Tensor.amax", _method("amax"), _all_dims(torch.amax)),
    ("ops.amax", ops.amax, _all_dims(torch.amax)),
    ("Tensor.amin", lambda x, d, k: x.amin(_all(d, x.ndim), keepdim=k), _all_dims(torch.amin)),
    ("ops.amin", ops.amin, _all_dims(torch.amin)),
    ("ops.prod", ops.prod, _prod_ref),
    ("torch.var", _var_kwargs(torch.var), _var_kwargs(torch.var)),
    ("Tensor.var-c0", _var_kwargs(_method("var"), correction=0), _var_kwargs(torch.var, correction=0)),
    ("ops.var-c2", _var_kwargs(ops.var, correction=2), _var_kwargs(torch.var, correction=2)),
    ("torch.std", _var_kwargs(torch.std), _var_kwargs(torch.std)),
    ("ops.std-c0", _var_kwargs(ops.std, correction=0), _var_kwargs(torch.std, correction=0)),
    ("torch.var_mean-c0", _var_kwargs(torch.var_mean, correction=0), _var_kwargs(torch.var_mean, correction=0)),
    ("ops.var_mean", _var_kwargs(ops.var_mean), _var_kwargs(torch.var_mean)),
    ("torch.std_mean", _var_kwargs(torch.std_mean), _var_kwargs(torch.std_mean)),
    ("ops.std_mean-c0", _var_kwargs(ops.std_mean, correction=0), _var_kwargs(torch.std_mean, correction=0)),
    ("torch.logsumexp", _all_dims(torch.logsumexp), _all_dims(torch.logsumexp)),
    ("Tensor.logsumexp", _method("logsumexp"), _all_dims(torch.logsumexp)),
    ("special.logsumexp", _all_dims(torch.special.logsumexp), _all_dims(torch.logsumexp)),
    ("ops.logsumexp", ops.logsumexp, _all_dims(torch.logsumexp)),
]


# retraces on purpose (filtered here, the xdist controller need not import symscalar to show it)
@pytest.mark.filterwarnings("ignore::symscalar.explain.TraceLimitWarning")
@pytest.mark.parametrize("spelling, ref", [c[1:] for c in MULTI_DIM], ids=[c[0] for c in MULTI_DIM])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_forward_matches_torch(spelling: Any, ref: Any, dtype: torch.dtype) -> None:
    x = torch.randn(3, 4, 5, dtype=dtype)
    f = _jit_unary(spelling)
    for dim in DIMS:
        for keepdim in (False, True):
            got, want = _as_tuple(f(x, dim, keepdim)), _as_tuple(ref(x, dim, keepdim))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype, (dim, keepdim)
                torch.testing.assert_close(g, w, equal_nan=True)
    # one trace per static (dim, keepdim); tensors of the same metadata hit the cache
    assert f.cache_info().misses == 2 * len(DIMS)


@pytest.mark.parametrize(
    "spelling",
    [torch.sum, _method("sum"), ops.sum, ops.prod, torch.amax, ops.amax, _method("amin")],
    ids=["sum", "Tensor.sum", "ops.sum", "ops.prod", "amax", "ops.amax", "Tensor.amin"],
)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_forward_integer_inputs(spelling: Any, dtype: torch.dtype) -> None:
    x = torch.randint(-3, 4, (3, 4, 5), dtype=dtype)
    f = _jit_unary(spelling)
    ref = {ops.prod: _prod_ref}.get(spelling, spelling)
    for dim in (0, -1, (0, 2)):
        for keepdim in (False, True):
            got, want = f(x, dim, keepdim), ref(x, dim, keepdim)
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want)


def test_torch_prod_spellings_take_one_dim() -> None:
    x = torch.randn(3, 4, 5)

    @symscalar.jit
    def f(x: torch.Tensor) -> Any:
        return torch.prod(x), x.prod(-1), torch.prod(x, 1, True), x.prod(0, dtype=torch.float64)

    for got, want in zip(f(x), (torch.prod(x), x.prod(-1), torch.prod(x, 1, True), x.prod(0, dtype=torch.float64))):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)


def test_default_arguments_and_dtype() -> None:
    x = torch.randn(3, 4, 5)
    ints = torch.randint(-3, 4, (3, 4), dtype=torch.int32)

    def calls(x: Any, ints: Any) -> tuple[Any, ...]:
        return (
            torch.amax(x),
            x.amin(),
            torch.mean(x),
            x.sum(),
            torch.var(x),
            x.std(),
            torch.var_mean(x),
            torch.argmax(x),
            x.argmin(),
            torch.sum(x, dtype=torch.float64),
            x.mean(1, dtype=torch.float64),
            torch.logsumexp(ints, 1),
            ints.sum(0),
            torch.prod(ints, 1),
            ints.mean((0, 1), dtype=torch.float32),
        )

    @symscalar.jit
    def f(x: torch.Tensor, ints: torch.Tensor) -> Any:
        return calls(x, ints)

    got = [t for v in f(x, ints) for t in _as_tuple(v)]
    want = [t for v in calls(x, ints) for t in _as_tuple(v)]
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)


def test_legacy_unbiased_spellings() -> None:
    x = torch.randn(3, 4, 5, dtype=torch.float64)

    def calls(x: Any) -> tuple[Any, ...]:
        return (
            torch.var(x, False),
            x.var(True),
            torch.var(x, 1, False),
            torch.var(x, (0, 2), True, True),
            x.std(-1, unbiased=False),
            torch.std(x, 0, False, keepdim=True),
            torch.var_mean(x, 1, False),
            torch.std_mean(x, unbiased=False),
            torch.var(x, 1, correction=0.5),
            x.std(correction=3),
        )

    got = symscalar.jit(lambda_free(calls))(x)
    want = calls(x)
    flat = [t for v in got for t in _as_tuple(v)]
    flat_want = [t for v in want for t in _as_tuple(v)]
    for g, w in zip(flat, flat_want, strict=True):
        assert g.shape == w.shape
        torch.testing.assert_close(g, w)


def lambda_free(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A def-function wrapper: symscalar.jit needs a named function."""

    def f(x: torch.Tensor) -> Any:
        return fn(x)

    return f


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_spellings(dtype: torch.dtype) -> None:
    x = torch.randn(3, 4, 5, dtype=dtype)
    spellings = [
        torch.softmax,
        _method("softmax"),
        F.softmax,
        torch.special.softmax,
        ops.softmax,
        torch.log_softmax,
        _method("log_softmax"),
        F.log_softmax,
        torch.special.log_softmax,
        ops.log_softmax,
    ]
    refs = [torch.softmax] * 5 + [torch.log_softmax] * 5
    for spelling, ref in zip(spellings, refs):

        def f(x: torch.Tensor, dim: StaticDims, spelling: Any = spelling) -> Any:
            return spelling(x, dim), spelling(x, dim, dtype=torch.float64)

        jf = symscalar.jit(f)
        for dim in (0, 1, -1, -3):
            got, got64 = jf(x, dim)
            torch.testing.assert_close(got, ref(x, dim))
            torch.testing.assert_close(got64, ref(x, dim, dtype=torch.float64))
            assert got64.dtype == torch.float64


def test_functional_softmax_implicit_dim_warns_like_torch() -> None:
    @symscalar.jit
    def f(x: torch.Tensor) -> Any:
        return F.softmax(x), F.log_softmax(x)

    for shape in [(5,), (3, 4), (2, 3, 4), (2, 3, 4, 5)]:
        x = torch.randn(shape)
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            got = f(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = (F.softmax(x), F.log_softmax(x))
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)


@pytest.mark.parametrize("spelling", [torch.argmax, _method("argmax"), ops.argmax, torch.argmin, ops.argmin])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_argmax_argmin(spelling: Any, dtype: torch.dtype) -> None:
    x = torch.randint(-3, 4, (3, 4, 5)).to(dtype)  # with ties: the first index wins, as torch
    ref = {ops.argmax: torch.argmax, ops.argmin: torch.argmin}.get(spelling, spelling)

    def f(x: torch.Tensor, dim: StaticDims, keepdim: StaticBool) -> Any:
        return spelling(x, dim, keepdim)

    jf = symscalar.jit(f)
    for dim in (None, 0, -1):
        for keepdim in (False, True):
            got, want = jf(x, dim, keepdim), ref(x, dim, keepdim)
            assert got.shape == want.shape and got.dtype == want.dtype
            assert torch.equal(got, want)


def test_zero_dim_inputs() -> None:
    x = torch.tensor(1.5, dtype=torch.float64)

    def calls(x: Any) -> tuple[Any, ...]:
        return (
            x.sum(0),
            x.mean(-1, keepdim=True),
            x.amax(),
            torch.prod(x, 0),
            torch.logsumexp(x, 0),
            torch.softmax(x, 0),
            F.log_softmax(x, -1),
            torch.var(x, 0, correction=0),
            x.argmax(0),
        )

    for g, w in zip(symscalar.jit(lambda_free(calls))(x), calls(x), strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)


# ----------------------------------------------------------------------------------------
# Gradients

GRAD_CASES: dict[str, Callable[..., Any]] = {
    "sum": lambda x, d, k: x.sum(d, k),
    "mean": lambda x, d, k: torch.mean(x, d, k),
    "amax": lambda x, d, k: torch.amax(x, _all(d, x.ndim), k),
    "amin": lambda x, d, k: x.amin(_all(d, x.ndim), k),
    "prod": lambda x, d, k: ops.prod(x, d, k),
    "var": lambda x, d, k: torch.var(x, d, keepdim=k),
    "var_c0": lambda x, d, k: x.var(d, keepdim=k, correction=0),
    "std": lambda x, d, k: torch.std(x, d, keepdim=k),
    "var_mean": lambda x, d, k: torch.var_mean(x, d, keepdim=k, correction=2),
    "std_mean": lambda x, d, k: torch.std_mean(x, d, keepdim=k),
    "var_mean_var_only": lambda x, d, k: torch.var_mean(x, d, keepdim=k)[0],
    "std_mean_mean_only": lambda x, d, k: torch.std_mean(x, d, keepdim=k)[1],
    "logsumexp": lambda x, d, k: torch.logsumexp(x, _all(d, x.ndim), k),
    "softmax": lambda x, d, k: torch.softmax(x, _one(d)),
    "log_softmax": lambda x, d, k: F.log_softmax(x, _one(d)),
    "sum_f32_as_f64": lambda x, d, k: x.float().sum(d, k, dtype=torch.float64),
    "mean_f32_as_f64": lambda x, d, k: x.float().mean(d, k, dtype=torch.float64),
    "softmax_f32_in_f64": lambda x, d, k: torch.softmax(x.float(), _one(d), dtype=torch.float64),
}


def _one(d: Any) -> int:
    """softmax takes one dim: the first of a tuple, -1 for None."""
    if d is None:
        return -1
    return d[0] if isinstance(d, tuple) else d


# Spellings with no eager torch equivalent, and the torch computation they stand for.
GRAD_REFERENCES: dict[Any, Callable[..., Any]] = {GRAD_CASES["prod"]: _prod_ref}


def _grad_check_against_torch(fn: Callable[..., Any], x: torch.Tensor, dim: Any, keepdim: bool) -> Any:
    jf = _jit_unary(fn)
    ref = GRAD_REFERENCES.get(fn, fn)
    xs = x.detach().clone().requires_grad_(True)
    xr = x.detach().clone().requires_grad_(True)
    got, want = _as_tuple(jf(xs, dim, keepdim)), _as_tuple(ref(xr, dim, keepdim))
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w)
    cts = [torch.randn_like(w) for w in want]
    (gx,) = torch.autograd.grad(got, xs, cts)
    (gw,) = torch.autograd.grad(want, xr, cts)
    torch.testing.assert_close(gx, gw)
    backward = jf.last_backward_trace()
    symscalar.check_trace(backward)
    return jf


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_grad_matches_torch_autograd(name: str) -> None:
    fn = GRAD_CASES[name]
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    for dim in DIMS:
        for keepdim in (False, True):
            _grad_check_against_torch(fn, x, dim, keepdim)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in GRAD_CASES if "f32" not in n])  # finite differences need f64
def test_gradcheck(name: str) -> None:
    fn = GRAD_CASES[name]
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    if name == "prod":
        x = (x.detach().abs() + 0.5).requires_grad_(True)  # away from zero: finite differences
    for dim, keepdim in [(None, False), (1, True), ((0, -1), False)]:
        jf = _jit_unary(fn)
        assert torch.autograd.gradcheck(lambda x: jf(x, dim, keepdim), (x,))


def test_amax_amin_ties_share_the_gradient_like_torch() -> None:
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, -1.0, 4.0]], dtype=torch.float64)
    for fn in (GRAD_CASES["amax"], GRAD_CASES["amin"]):
        for dim in (None, 0, 1):
            for keepdim in (False, True):
                _grad_check_against_torch(fn, x, dim, keepdim)


def test_prod_grad_with_zeros_like_torch() -> None:
    x = torch.tensor(
        [[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]],
        dtype=torch.float64,
    )
    for dim in (None, 0, 1, -1):
        for keepdim in (False, True):
            _grad_check_against_torch(GRAD_CASES["prod"], x, dim, keepdim)
            _grad_check_against_torch(GRAD_CASES["prod"], x[1:3], dim, keepdim)  # one zero overall


def test_std_grad_is_zero_where_std_is_zero_like_torch() -> None:
    x = torch.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], dtype=torch.float64)
    _grad_check_against_torch(GRAD_CASES["std"], x, 1, False)
    _grad_check_against_torch(GRAD_CASES["std_mean"], x, 1, True)


def test_float32_grads_match_torch() -> None:
    x = torch.randn(4, 6, dtype=torch.float32)
    for name in ("mean", "var", "softmax", "log_softmax", "logsumexp", "amax", "std_mean"):
        _grad_check_against_torch(GRAD_CASES[name], x, -1, False)


# ----------------------------------------------------------------------------------------
# The static contract: every static parameter of every spelling rejects a dynamic value

# (op name as it appears in the error, parameter, a call that passes `d` to it)
_STATIC_CALLS: list[tuple[str, str, Callable[[Any, Any], Any]]] = []


def _static_case(op: str, param: str) -> Callable[[Callable[[Any, Any], Any]], Callable[[Any, Any], Any]]:
    def register(call: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        _STATIC_CALLS.append((op, param, call))
        return call

    return register


def _add_dims_cases(op: str, fn: Callable[..., Any], extra: dict[str, Any] | None = None) -> None:
    kw = extra or {}
    _static_case(op, "dim")(lambda x, d: fn(x, d, **kw))
    _static_case(op, "dim")(lambda x, d: fn(x, (0, d), **kw))  # a dynamic dim inside a tuple
    _static_case(op, "dim")(lambda x, d: fn(x, dim=d, **kw))


def _add_keepdim_case(op: str, fn: Callable[..., Any], dim: Any = 0, extra: dict[str, Any] | None = None) -> None:
    kw = extra or {}
    _static_case(op, "keepdim")(lambda x, b: fn(x, dim, keepdim=b, **kw))


for _name in ("sum", "mean", "amax", "amin", "logsumexp"):
    for _op, _fn in [
        (f"torch.{_name}", getattr(torch, _name)),
        (f"torch.Tensor.{_name}", _method(_name)),
        (f"symscalar.ops.{_name}", getattr(ops, _name)),
    ]:
        _add_dims_cases(_op, _fn)
        _add_keepdim_case(_op, _fn)
_add_dims_cases("torch.special.logsumexp", torch.special.logsumexp)
_add_keepdim_case("torch.special.logsumexp", torch.special.logsumexp)

for _op, _fn in [("torch.prod", torch.prod), ("torch.Tensor.prod", _method("prod"))]:
    _static_case(_op, "dim")(lambda x, d, _fn=_fn: _fn(x, d))
    _static_case(_op, "dim")(lambda x, d, _fn=_fn: _fn(x, dim=d, keepdim=True))
    _add_keepdim_case(_op, _fn)
_add_dims_cases("symscalar.ops.prod", ops.prod)
_add_keepdim_case("symscalar.ops.prod", ops.prod)

for _name in ("var", "std", "var_mean", "std_mean"):
    _spellings = [(f"torch.{_name}", getattr(torch, _name)), (f"symscalar.ops.{_name}", getattr(ops, _name))]
    if _name in ("var", "std"):
        _spellings.append((f"torch.Tensor.{_name}", _method(_name)))
    for _op, _fn in _spellings:
        _add_dims_cases(_op, _fn)
        _add_keepdim_case(_op, _fn)
        _static_case(_op, "correction")(lambda x, d, _fn=_fn: _fn(x, 0, correction=d))
        _static_case(_op, "correction")(lambda x, d, _fn=_fn: _fn(x, correction=d * 1.0))  # DynamicFloat
        if _op.startswith("torch."):
            _static_case(_op, "unbiased")(lambda x, b, _fn=_fn: _fn(x, 0, b))
            _static_case(_op, "unbiased")(lambda x, b, _fn=_fn: _fn(x, unbiased=b))
            _static_case(_op, "keepdim")(lambda x, b, _fn=_fn: _fn(x, 0, True, b))  # legacy positional

for _name in ("softmax", "log_softmax"):
    for _op, _fn in [
        (f"torch.{_name}", getattr(torch, _name)),
        (f"torch.Tensor.{_name}", _method(_name)),
        (f"torch.nn.functional.{_name}", getattr(F, _name)),
        (f"torch.special.{_name}", getattr(torch.special, _name)),
        (f"symscalar.ops.{_name}", getattr(ops, _name)),
    ]:
        _static_case(_op, "dim")(lambda x, d, _fn=_fn: _fn(x, d))
        _static_case(_op, "dim")(lambda x, d, _fn=_fn: _fn(x, dim=d))

for _name in ("argmax", "argmin"):
    for _op, _fn in [
        (f"torch.{_name}", getattr(torch, _name)),
        (f"torch.Tensor.{_name}", _method(_name)),
        (f"symscalar.ops.{_name}", getattr(ops, _name)),
    ]:
        _static_case(_op, "dim")(lambda x, d, _fn=_fn: _fn(x, d))
        _add_keepdim_case(_op, _fn)


@pytest.mark.parametrize(
    "op, param, call", _STATIC_CALLS, ids=[f"{op}-{param}-{i}" for i, (op, param, _) in enumerate(_STATIC_CALLS)]
)
def test_dynamic_value_in_static_parameter_raises(op: str, param: str, call: Any) -> None:
    if param in ("keepdim", "unbiased"):

        def f(x: torch.Tensor, v: DynamicBool) -> Any:
            return call(x, v)

        value: Any = True
    else:

        def f(x: torch.Tensor, v: DynamicInt) -> Any:  # type: ignore[misc]
            return call(x, v)

        value = 1
    jf = symscalar.jit(f)
    with pytest.raises(symscalar.StaticValueRequiredError) as info:
        jf(torch.randn(3, 4, dtype=torch.float64), value)
    message = str(info.value)
    assert message.startswith(f'{op}: parameter "{param}" must be static'), message
    assert "'v' of f" in message or "parameter 'v'" in message, message  # names where it came from


# Every static parameter the reductions declare, by spelling: what the mypy plugin reads.
EXPECTED_STATIC = {
    "dim keepdim": [
        f"{p}.{n}"
        for n in ("sum", "mean", "amax", "amin", "logsumexp", "argmax", "argmin", "prod")
        for p in ("torch", "torch.Tensor", "symscalar.ops")
    ]
    + ["torch.special.logsumexp"],
    "dim correction keepdim": [f"symscalar.ops.{n}" for n in ("var", "std", "var_mean", "std_mean")],
    "dim unbiased keepdim correction": [
        "torch.var",
        "torch.Tensor.var",
        "torch.std",
        "torch.Tensor.std",
        "torch.var_mean",
        "torch.std_mean",
    ],
    "dim": [
        f"{p}.{n}"
        for n in ("softmax", "log_softmax")
        for p in ("torch", "torch.Tensor", "torch.nn.functional", "torch.special", "symscalar.ops")
    ],
}


def test_static_parameters_are_declared() -> None:
    for static, names in EXPECTED_STATIC.items():
        for name in names:
            assert OPS[name].static == tuple(static.split()), name
    every_case = {(op, param) for op, param, _ in _STATIC_CALLS}
    for static, names in EXPECTED_STATIC.items():
        for name in names:
            for param in static.split():
                assert (name, param) in every_case, f"no dynamic-value test for {name}({param}=...)"


# ----------------------------------------------------------------------------------------
# Dynamic values next to static dims: one trace, right results and grads on every call


def _no_dynamic_in_params(trace: symscalar.Trace) -> None:
    symscalar.check_trace(trace)
    for eqn in trace.eqns:
        assert not any(contains_dynamic(v) for v in eqn.params.values()), eqn


SCALED: dict[str, Callable[..., Any]] = {
    "sum": lambda a, d: a.sum(d),
    "mean": lambda a, d: a.mean(d),
    "softmax": lambda a, d: torch.softmax(a, d),
    "log_softmax": lambda a, d: a.log_softmax(d),
    "logsumexp": lambda a, d: torch.logsumexp(a, d),
    "amax": lambda a, d: a.amax(d, keepdim=True),
    "var": lambda a, d: a.var(d, correction=0),
    "std_mean": lambda a, d: torch.std_mean(a, d, keepdim=True),
    "prod": lambda a, d: a.prod(d),
}


@pytest.mark.parametrize("name", list(SCALED))
def test_dynamic_scale_with_static_dim(name: str) -> None:
    op = SCALED[name]

    @symscalar.jit
    def f(a: torch.Tensor, s: DynamicFloat, d: symscalar.StaticInt) -> Any:
        return op(a * s, d)

    a = torch.rand(3, 4, dtype=torch.float64) + 0.5
    for d, scale in [(1, 0.5), (1, 2.0), (1, -1.25), (0, 3.0), (0, 0.5), (-1, 1.5)]:
        x = a.clone().requires_grad_(True)
        xr = a.clone().requires_grad_(True)
        got, want = _as_tuple(f(x, scale, d)), _as_tuple(op(xr * scale, d))
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w)
        cts = [torch.randn_like(w) for w in want]
        torch.testing.assert_close(torch.autograd.grad(got, x, cts), torch.autograd.grad(want, xr, cts))
    assert f.cache_info().misses == 3  # one trace per static d; a new scale is a cache hit
    backward = f.last_backward_trace()
    _no_dynamic_in_params(f.last_trace())
    _no_dynamic_in_params(backward)
    # the scale reaches the backward as an input (a residual), never as a constant: this
    # backward was traced with scale 1.5
    assert any(isinstance(v, ScalarVar) for v in backward.inputs)
    for eqn in backward.eqns:
        assert not any(type(a) is float and a == 1.5 for a in eqn.args), eqn


# ----------------------------------------------------------------------------------------
# Bad input gets a clear error


def test_bad_inputs_raise_clear_errors() -> None:
    x = torch.randn(3, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        symscalar.jit(lambda_free(lambda x: x.sum(2)))(x)
    with pytest.raises(ValueError, match="appears multiple times"):
        symscalar.jit(lambda_free(lambda x: x.mean((1, -1))))(x)
    with pytest.raises(RuntimeError, match="mean"):
        symscalar.jit(lambda_free(lambda x: x.mean()))(torch.arange(4))
    with pytest.raises(TypeError, match="keepdim=True needs a dim"):
        symscalar.jit(lambda_free(lambda x: x.prod(keepdim=True)))(x)
    with pytest.raises(TypeError, match="prod"):  # torch's own argument parser rejects it first
        symscalar.jit(lambda_free(lambda x: torch.prod(x, keepdim=True)))(x)
    with pytest.raises(TypeError, match="dim must be one int"):
        symscalar.jit(lambda_free(lambda x: x.prod((0, 1))))(x)
    with pytest.raises(TypeError, match="either `unbiased`"):
        symscalar.jit(lambda_free(lambda x: x.var(0, True, correction=0)))(x)
    with pytest.raises(TypeError, match="correction must be an int or a float"):
        symscalar.jit(lambda_free(lambda x: ops.var(x, correction="1")))(x)


# ----------------------------------------------------------------------------------------
# Random shapes and dims (size-1 dims, 1-d and 3-d inputs, every dims subset)

_CORRECTION = {"var_c0": 0, "std_mean": 1, "var_mean": 2}  # of the GRAD_CASES below
_PROPERTY_OPS = ["sum", "mean", "amax", "prod", "var_c0", "std_mean", "var_mean", "logsumexp", "log_softmax"]


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
    name=st.sampled_from(_PROPERTY_OPS),
    keepdim=st.booleans(),
)
def test_random_shapes_and_dims(shape: list[int], data: Any, name: str, keepdim: bool) -> None:
    ndim = len(shape)
    picked = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim))
    dim = picked[0] if len(picked) == 1 else tuple(picked)
    count = math.prod(shape[d] for d in picked)
    assume(count > _CORRECTION.get(name, -1))  # else the variance is nan or inf
    _grad_check_against_torch(GRAD_CASES[name], torch.rand(shape, dtype=torch.float64) + 0.5, dim, keepdim)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_forward_and_grad_with_torch_backend() -> None:
    def f(x: torch.Tensor, s: DynamicFloat) -> Any:
        y = x * s
        return y.mean(1), torch.softmax(y, -1), y.var(0), torch.logsumexp(y, (0, 1)), y.amax(-1), y.prod(1)

    jf = symscalar.jit(f, backend="torch")
    x = torch.rand(3, 4, dtype=torch.float64, device="cuda") + 0.5
    for scale in (0.5, 2.0):
        xs, xr = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        got, want = jf(xs, scale), f(xr, scale)
        for g, w in zip(got, want, strict=True):
            assert g.device == w.device
            torch.testing.assert_close(g, w)
        cts = [torch.randn_like(w) for w in want]
        torch.testing.assert_close(torch.autograd.grad(got, xs, cts), torch.autograd.grad(want, xr, cts))
    assert jf.cache_info().misses == 1
