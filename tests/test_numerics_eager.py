"""Numerics that once differed from eager torch, forward or gradient, each compared with eager
in float32, float64 and the low-precision dtype where it applies: RMSNorm's default eps,
attention over a fully masked row, 1-D matmul, complex gradients, relu at NaN, atan2 at the
origin, add/sub with ``alpha`` across dtypes."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar

Tensor = torch.Tensor


def _run(f: Callable[..., Any], args: list[Any], **jit_options: Any) -> tuple[Any, Any]:
    """``(eager result or exception, jitted result or exception)``."""
    results = []
    for fn in (f, symscalar.jit(f, backend="torch", **jit_options)):
        try:
            results.append(fn(*args))
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:
            results.append(e)
    return results[0], results[1]


def assert_same(f: Callable[..., Any], args: list[Any], **jit_options: Any) -> None:
    """jit(f) gives eager's value and dtype exactly, or raises where eager raises."""
    eager, got = _run(f, args, **jit_options)
    if isinstance(eager, Exception):
        assert isinstance(got, Exception), f"eager raised {eager!r}; jit returned {got!r}"
        return
    assert not isinstance(got, Exception), f"jit raised {got!r}; eager returned {eager!r}"
    assert got.dtype == eager.dtype
    torch.testing.assert_close(got, eager, equal_nan=True, rtol=0, atol=0)


def assert_same_grads(
    f: Callable[..., Any], args: list[Tensor], rtol: float | None = None, atol: float | None = None
) -> None:
    """Forward and the gradient of every floating/complex argument equal eager's."""
    eager_args = [a.detach().clone().requires_grad_(True) for a in args]
    jit_args = [a.detach().clone().requires_grad_(True) for a in args]
    expected = f(*eager_args)
    got = symscalar.jit(f, backend="torch")(*jit_args)
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, equal_nan=True, rtol=rtol, atol=atol)
    ct = torch.randn(expected.shape, dtype=expected.dtype, generator=torch.Generator().manual_seed(3))
    g_expected = torch.autograd.grad(expected, eager_args, ct, allow_unused=True)
    g_got = torch.autograd.grad(got, jit_args, ct, allow_unused=True)
    for i, (g, e) in enumerate(zip(g_got, g_expected)):
        assert (g is None) == (e is None), f"grad {i}: None-ness differs"
        if e is not None:
            torch.testing.assert_close(
                g, e, equal_nan=True, rtol=rtol, atol=atol, msg=lambda m: f"grad of argument {i}: {m}"
            )


# ---- RMSNorm: the default eps is that of the dtype it computes in (float32 for half types)


def _grads(f: Callable[..., Any], args: list[Tensor], ct: Tensor, dtype: torch.dtype | None = None) -> list[Tensor]:
    leaves = [a.detach().to(dtype or a.dtype).requires_grad_(True) for a in args]
    out = f(*leaves)
    return [out.detach(), *torch.autograd.grad(out, leaves, ct.to(out.dtype))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_rms_norm_default_eps_like_eager(dtype: torch.dtype, scale: float) -> None:
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(3, 8, generator=gen) * scale).to(dtype)
    w = torch.randn(8, generator=gen).to(dtype)
    assert_same_grads(lambda x, w: F.rms_norm(x, (8,), w), [x, w])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_rms_norm_default_eps_low_precision(dtype: torch.dtype, scale: float) -> None:
    # Values and gradients are as close to the float64 result of the same inputs as eager's
    # (rounding may differ by a few ulps; the float16 eps of 1e-3 was off by up to 59%).
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(3, 8, generator=gen) * scale).to(dtype)
    w = torch.randn(8, generator=gen).to(dtype)
    ct = torch.randn(3, 8, generator=gen).to(dtype)

    def f(x: Tensor, w: Tensor) -> Tensor:
        return F.rms_norm(x, (8,), w)

    truth = _grads(f, [x, w], ct, torch.float64)
    eager = _grads(f, [x, w], ct)
    got = _grads(symscalar.jit(f, backend="torch"), [x, w], ct)
    for t, e, g in zip(truth, eager, got):
        assert g.dtype == e.dtype == dtype
        eager_error = (e.double() - t).abs().max()
        assert (g.double() - t).abs().max() <= 2 * eager_error + 1e-2 * t.abs().max()
    module = torch.nn.RMSNorm(8, dtype=dtype)
    torch.testing.assert_close(symscalar.jit(module, backend="torch")(x), module(x), rtol=2e-2, atol=2e-2)


# ---- attention: a query whose every key is masked gets zeros, as torch's safe softmax gives


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_sdpa_fully_masked_row_is_zero(dtype: torch.dtype, mask_kind: str) -> None:
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 2, 4, 5, generator=gen, dtype=dtype) for _ in range(3))
    keep = torch.rand(4, 4, generator=gen) > 0.3
    keep[1] = False  # the second query sees no key
    keep[2, 0] = True
    mask = keep if mask_kind == "bool" else torch.zeros(4, 4, dtype=dtype).masked_fill(~keep, float("-inf"))
    assert_same_grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask), [q, k, v])
    out = symscalar.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask))(q, k, v)
    assert torch.equal(out[:, :, 1], torch.zeros_like(out[:, :, 1]))


def test_sdpa_nan_input_still_propagates() -> None:
    q = torch.randn(1, 1, 3, 4)
    k = torch.randn(1, 1, 3, 4)
    k[0, 0, 1, 0] = float("nan")
    v = torch.randn(1, 1, 3, 4)
    assert_same(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [q, k, v])


# ---- 1-D matmul: torch's dot kernel, its result dtype and accumulation


@pytest.mark.parametrize(
    "dtype", [torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
)
def test_vector_dot_dtype_like_eager(dtype: torch.dtype) -> None:
    a = torch.arange(1, 5).to(dtype)
    b = torch.arange(2, 6).to(dtype)
    assert_same(lambda a, b: a @ b, [a, b])
    assert_same(lambda a, b: torch.matmul(a, b), [a, b])


def test_vector_dot_float16_products_beyond_range() -> None:
    # each product (90000) overflows float16; eager accumulates in float32 and gets 0, a
    # multiply-then-sum gets inf - inf = NaN
    a = torch.tensor([300.0, -300.0], dtype=torch.float16)
    b = torch.tensor([300.0, 300.0], dtype=torch.float16)
    assert_same(lambda a, b: a @ b, [a, b])


def test_vector_dot_grads() -> None:
    gen = torch.Generator().manual_seed(2)
    a, b = torch.randn(5, generator=gen, dtype=torch.float64), torch.randn(5, generator=gen, dtype=torch.float64)
    assert_same_grads(lambda a, b: a @ b, [a, b])
    assert torch.autograd.gradcheck(symscalar.jit(lambda a, b: a @ b), (a.requires_grad_(), b.requires_grad_()))


# ---- complex gradients follow torch's convention: grad = ct * conj(f'(z))

COMPLEX_UNARY = [
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "neg",
    "exp2",
    "expm1",
    "log1p",
    "log2",
    "abs",
    "conj",
]
COMPLEX_BINARY = ["add", "sub", "mul", "div", "matmul"]
COMPLEX_REDUCTIONS = ["sum", "mean", "prod", "logsumexp"]


def _complex(*shape: int, seed: int) -> Tensor:
    return torch.randn(*shape, dtype=torch.complex128, generator=torch.Generator().manual_seed(seed))


def _real_loss(out: Tensor) -> Tensor:
    return (out.abs() if out.is_complex() else out).sum()


def _assert_complex_grads(f: Callable[..., Any], args: list[Tensor]) -> None:
    eager_args = [a.detach().clone().requires_grad_(True) for a in args]
    jit_args = [a.detach().clone().requires_grad_(True) for a in args]
    expected = torch.autograd.grad(_real_loss(f(*eager_args)), eager_args)
    got = torch.autograd.grad(_real_loss(symscalar.jit(f, backend="torch")(*jit_args)), jit_args)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        torch.testing.assert_close(g, e)


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary_grads(name: str) -> None:
    op = getattr(torch, name)
    _assert_complex_grads(lambda a: op(a), [_complex(4, seed=0)])


@pytest.mark.parametrize("name", COMPLEX_BINARY)
def test_complex_binary_grads(name: str) -> None:
    op = getattr(torch, name)
    _assert_complex_grads(lambda a, b: op(a, b), [_complex(3, 3, seed=1), _complex(3, 3, seed=2)])


@pytest.mark.parametrize("name", COMPLEX_REDUCTIONS)
def test_complex_reduction_grads(name: str) -> None:
    f = getattr(torch, name)
    _assert_complex_grads((lambda x: f(x, -1)) if name == "logsumexp" else (lambda x: f(x)), [_complex(3, 4, seed=3)])


def test_complex_mixed_with_real_operands() -> None:
    real = torch.randn(3, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    _assert_complex_grads(lambda a, b: a * b, [real, _complex(3, seed=5)])
    _assert_complex_grads(lambda a: a * 2j + a * 0.5, [_complex(3, seed=6)])
    _assert_complex_grads(lambda a, b: torch.exp(a) @ (b * a), [_complex(2, 2, seed=7), _complex(2, 2, seed=8)])


def test_complex_gradcheck() -> None:
    args = (_complex(3, seed=9).requires_grad_(), _complex(3, seed=10).requires_grad_())
    assert torch.autograd.gradcheck(symscalar.jit(lambda a, b: torch.exp(a * b) / (b + 3)), args)


# ---- special points of gradients, as torch's backward formulas


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_relu_grad_at_nan_zero_and_sign(dtype: torch.dtype) -> None:
    x = torch.tensor([float("nan"), 0.0, -0.0, 1.5, -1.5, float("inf")], dtype=dtype)
    assert_same_grads(lambda x: torch.relu(x), [x])
    assert_same_grads(lambda x: F.relu(x), [x])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_atan2_grad_at_origin(dtype: torch.dtype) -> None:
    y = torch.tensor([0.0, -0.0, 0.0, 1.0, 1e-30], dtype=dtype)
    x = torch.tensor([0.0, 0.0, -0.0, 0.0, 1e-30], dtype=dtype)
    assert_same_grads(lambda y, x: torch.atan2(y, x), [y, x])


# ---- add/sub with alpha: alpha never promotes; bool results; torch's checks on alpha

DTYPES = [torch.bool, torch.int8, torch.int32, torch.float16, torch.float32, torch.float64]
ALPHAS = [1, 3, 0, -2, 0.5, True]


def _operand(kind: Any, base: int) -> Any:
    if isinstance(kind, torch.dtype):
        return ((torch.arange(4) + base) % 3).to(kind)
    return kind(base + 1)


@pytest.mark.parametrize("op", [torch.add, torch.sub])
@pytest.mark.parametrize("dynamic_alpha", [False, True])
@pytest.mark.slow
def test_add_sub_alpha_like_eager(op: Any, dynamic_alpha: bool) -> None:
    def f(a: Any, b: Any, alpha: Any) -> Any:
        return op(a, b, alpha=alpha)

    options = {"dynamic": ["alpha"]} if dynamic_alpha else {}
    for da, db, alpha in itertools.product(DTYPES, [*DTYPES, int, float, bool], ALPHAS):
        assert_same(f, [_operand(da, 0), _operand(db, 1), alpha], **options)


def test_sub_of_bool_raises_like_eager() -> None:
    b = torch.tensor([True, False])
    for f in (lambda b: b - b, lambda b: torch.ones(2) - b, lambda b: True - b.float(), lambda b: b.float() - True):
        eager, got = _run(f, [b])
        assert isinstance(eager, RuntimeError) and isinstance(got, RuntimeError)
        assert "bool" in str(got)
