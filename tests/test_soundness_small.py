"""Smaller silent differences from eager (issue 22): add/sub's ``alpha`` with 0-d tensors,
a jitted function named like a builtin, and tensors computed in an ``inference_mode()``
region of the traced function."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn

import symscalar
from symscalar.errors import UnsupportedOperationError

_OPERANDS = [
    torch.tensor(1.5, dtype=torch.float16),
    torch.tensor(2.5, dtype=torch.bfloat16),
    torch.tensor(3, dtype=torch.int32),
    torch.tensor([1.0, 2.0]),
    torch.tensor([1, 2], dtype=torch.int64),
    torch.tensor([0.5, 1.5], dtype=torch.float16),
    2,
    2.5,
]


@pytest.mark.parametrize("op", [torch.add, torch.sub])
def test_add_and_sub_with_alpha_promote_like_eager(op) -> None:
    checked = 0
    for a, b, alpha in itertools.product(_OPERANDS[:6], _OPERANDS, [1, 2, 0.5]):
        try:
            want = op(a, b, alpha=alpha)
        except RuntimeError:  # an integral result with a float alpha: refused by torch
            with pytest.raises(RuntimeError):
                symscalar.jit(lambda a, b: op(a, b, alpha=alpha))(a, b)
            continue
        got = symscalar.jit(lambda a, b: op(a, b, alpha=alpha))(a, b)
        assert got.dtype == want.dtype, (a.dtype, b, alpha)
        torch.testing.assert_close(got, want)
        checked += 1
    assert checked > 100


def test_a_jitted_function_named_like_a_builtin() -> None:
    def float(x: torch.Tensor) -> torch.Tensor:  # noqa: A001 - the name is the point
        return x.clamp(max=math.inf, min=-math.inf) * 2

    x = torch.randn(3)
    torch.testing.assert_close(symscalar.jit(float)(x), float(x))


def test_tensors_computed_in_an_inference_mode_region_are_inference_tensors() -> None:
    lin = nn.Linear(2, 2)

    @torch.inference_mode()
    def decorated(x: torch.Tensor) -> torch.Tensor:
        return lin(x) * 2

    def region(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode():
            y = lin(x)
            return y, y.exp()

    for x in (torch.ones(2), torch.ones(2, requires_grad=True)):
        for fn in (decorated, region):
            jitted = symscalar.jit(fn)
            for _ in range(2):  # the trace, then a cache hit
                eager, mine = fn(x), jitted(x)
                for e, m in zip(*(o if isinstance(o, tuple) else (o,) for o in (eager, mine))):
                    assert m.is_inference() == e.is_inference() and m.requires_grad == e.requires_grad
                    torch.testing.assert_close(m, e)


def test_mixed_inference_and_normal_outputs_are_refused() -> None:
    lin = nn.Linear(2, 2)

    def mixed(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode():
            y = lin(x)
        return y, lin(x) * 2

    with pytest.raises(UnsupportedOperationError, match="inference_mode"):
        symscalar.jit(mixed)(torch.ones(2))


@pytest.mark.parametrize("op", [torch.softmax, torch.log_softmax])
@pytest.mark.parametrize("autocast", [True, False])
def test_softmax_backward_in_16_bit_rounds_like_eager(op, autocast: bool) -> None:
    """Eager's softmax backward kernels accumulate 16-bit inputs in float32 and round once."""
    torch.manual_seed(0)
    dtype = torch.float32 if autocast else torch.bfloat16
    x = torch.randn(64, 64, dtype=dtype)
    w1 = torch.randn(64, 64, dtype=dtype, requires_grad=True)
    w2 = torch.randn(64, 16, dtype=dtype, requires_grad=True)

    def f(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return (op(x @ w1 / 8, -1) @ w2).float().pow(2).sum()

    jitted = symscalar.jit(f)
    for step in range(2):
        eager = torch.autograd.grad(f(x, w1, w2), (w1, w2))
        mine = torch.autograd.grad(jitted(x, w1, w2), (w1, w2))
        for g_m, g_e in zip(mine, eager):
            assert g_m.dtype == g_e.dtype
            torch.testing.assert_close(g_m, g_e, atol=1e-5, rtol=1e-5, msg=f"step {step}")
        x = x * 2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_products_and_their_gradients_are_eagers_bit_for_bit(dtype: torch.dtype) -> None:
    """Regressions of the 16-bit backward audit (tests/test_soundness_16bit_backward.py runs it
    over the registry) the registry's first samples do not reach: a number times a tensor
    (``2.2 * x`` is ``x.mul(2.2)``, not ``torch.mul(2.2, x)``, which rounds 2.2 to 16 bits
    first), a batched activation times a matrix or a vector (eager folds the batch into one
    product: the matrix's gradient is one product over every row), ``addmm`` with a bias."""
    torch.manual_seed(0)
    x = (torch.randn(2, 16, 8) * 10).to(dtype).requires_grad_()
    w = torch.randn(8, 4, dtype=dtype, requires_grad=True)
    v = torch.randn(8, dtype=dtype, requires_grad=True)
    b = torch.randn(4, dtype=dtype, requires_grad=True)

    def f(x: torch.Tensor, w: torch.Tensor, v: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return 3.2993221282958984 * x, x @ w, x @ v, torch.addmm(b, x[0], w, beta=0.5)

    jitted = symscalar.jit(f)
    for step in range(2):
        expected, got = f(x, w, v, b), jitted(x, w, v, b)
        cts = [torch.randn_like(e) for e in expected]
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and torch.equal(g, e), f"step {step}"
        grads_e = torch.autograd.grad(expected, (x, w, v, b), cts)
        grads_g = torch.autograd.grad(got, (x, w, v, b), cts)
        for i, (g, e) in enumerate(zip(grads_g, grads_e)):
            assert g.dtype == e.dtype and torch.equal(g, e), f"step {step} gradient {i}"
        x = x * 1.5
