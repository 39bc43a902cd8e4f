"""The simplification pass (symscalar/simplify.py): each no-op it removes leaves forward
values (bit for bit, signed zeros and NaN included), dtypes and every gradient equal to eager
torch; the cases it must keep are kept; outputs stay new tensors."""

from collections.abc import Callable

import pytest
import torch

import symscalar
from symscalar.ops.elementwise import pow_p
from symscalar.simplify import simplify
from symscalar.trace import eval_trace

SPECIAL = torch.tensor([[-0.0, 0.0, 1.5, -2.0], [float("inf"), -float("inf"), float("nan"), 3.0]], dtype=torch.float64)

# (function, how many equations the pass removes from its forward trace)
REMOVED: dict[str, tuple[Callable[..., torch.Tensor], int]] = {
    "x * 1": (lambda x: torch.sin(x * 1), 1),
    "1 * x": (lambda x: torch.sin(1 * x), 1),
    "x * 1.0 * True": (lambda x: torch.sin(x * 1.0 * True), 2),
    "x / 1": (lambda x: torch.sin(x / 1), 1),
    "x ** 1": (lambda x: torch.sin(x**1), 1),
    "x ** 1.0": (lambda x: torch.sin(x**1.0), 1),
    "x - 0": (lambda x: torch.sin(x - 0), 1),
    "x - 0.0 - -0.0": (lambda x: torch.sin(x - 0.0 - (-0.0)), 2),
    "x + -0.0": (lambda x: torch.sin(x + (-0.0)), 1),
    "-0.0 + x": (lambda x: torch.sin(-0.0 + x), 1),
    "1 / x (eager: x.reciprocal() * 1)": (lambda x: torch.sin(1 / x), 1),
    "chain": (lambda x: torch.cos(((x * 1) / 1) ** 1 - 0) * x, 4),
}

KEPT: dict[str, Callable[..., torch.Tensor]] = {
    "x + 0 (float: -0.0 + 0 is +0.0)": lambda x: torch.sin(x + 0) + (x + 0.0),
    "x / 1 rounded": lambda x: torch.sin(torch.div(x, 1, rounding_mode="floor")),
    "x ** 2": lambda x: torch.sin(x**2),
    "x * 2": lambda x: torch.sin(x * 2),
    "x * -1": lambda x: torch.sin(x * -1),
    "x - 1": lambda x: torch.sin(x - 1),
    "1 - x": lambda x: torch.sin(1 - x),
    "1 ** x": lambda x: torch.sin(1**x),
    "0 - x": lambda x: torch.sin(0 - x),
}


def _removed(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> int:
    f = symscalar.jit(fn)
    f(*args)
    trace = f.last_trace()
    simplified = simplify(trace)
    for a, b in zip(eval_trace(simplified, *args), eval_trace(trace, *args)):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
    return len(trace.eqns) - len(simplified.eqns)


def _check_against_eager(fn: Callable[..., torch.Tensor], x: torch.Tensor) -> None:
    f = symscalar.jit(fn)
    for scale in (1.0, -3.0):  # two calls, the second a cache hit
        xj = (x * scale).detach().requires_grad_(True)
        xe = (x * scale).detach().requires_grad_(True)
        out, ref = f(xj), fn(xe)
        assert out.dtype == ref.dtype
        torch.testing.assert_close(out, ref, rtol=0, atol=0, equal_nan=True)
        assert torch.equal(torch.signbit(out), torch.signbit(ref))
        weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
        (gj,) = torch.autograd.grad(out, xj, weights)
        (ge,) = torch.autograd.grad(ref, xe, weights)
        torch.testing.assert_close(gj, ge, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", list(REMOVED))
def test_no_op_is_removed_and_results_and_gradients_equal_eager(name: str):
    fn, count = REMOVED[name]
    assert _removed(fn, SPECIAL) == count
    _check_against_eager(fn, SPECIAL)


@pytest.mark.parametrize("name", list(KEPT))
def test_not_a_no_op_is_kept_and_equals_eager(name: str):
    fn = KEPT[name]
    assert _removed(fn, SPECIAL) == 0
    _check_against_eager(fn, SPECIAL)


def test_dtype_changing_identities_are_kept():
    ints = torch.tensor([[-3, 0, 5]])
    assert _removed(lambda x: (x * 1.0) + (x / 1) + (x**1.0), ints) == 0  # promote to float
    assert _removed(lambda x: (x + 0) * 2 + (x * 1) + (x**1), ints) == 3  # integer identities
    f = symscalar.jit(lambda x: (x * 1.0, x + 0, x / 1))
    for a, b in zip(f(ints), (ints * 1.0, ints + 0, ints / 1)):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    halves = torch.ones(2, dtype=torch.float16)
    assert _removed(lambda x: torch.sin(x * 1.0), halves) == 1  # a Python float keeps float16


def test_complex_arithmetic_is_kept():
    z = torch.tensor([complex(float("inf"), 1.0), complex(1.0, float("inf"))])
    f = symscalar.jit(lambda z: torch.exp(z * 1) + z - 0)
    torch.testing.assert_close(f(z), torch.exp(z * 1) + z - 0, equal_nan=True)
    assert _removed(lambda z: torch.exp(z * 1) + (z - 0), z) == 0


def test_dynamic_one_stays_a_program_input():
    f = symscalar.jit(lambda x, s: torch.sin(x * s), dynamic=["s"])
    x = torch.randn(3)
    for s in (1.0, 2.0):
        torch.testing.assert_close(f(x, s), torch.sin(x * s))
    assert simplify(f.last_trace()).eqns == f.last_trace().eqns
    assert f.cache_info().misses == 1


def test_output_is_a_new_tensor_not_the_input():
    f = symscalar.jit(lambda x: (x * 1, x**1))
    x = torch.randn(3)
    a, b = f(x)
    assert a is not x and b is not x
    assert a.data_ptr() != x.data_ptr()
    x.add_(1)  # eager's x * 1 is a copy: later writes to x do not reach it
    torch.testing.assert_close(a, x - 1)


def test_mse_backward_has_no_pow_by_one():
    w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    x, y = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
    loss_fn = lambda w, x, y: ((x @ w.t() - y) ** 2).mean()  # noqa: E731
    f = symscalar.jit(loss_fn)
    (g,) = torch.autograd.grad(f(w, x, y), w)
    (ref,) = torch.autograd.grad(loss_fn(w, x, y), w)
    torch.testing.assert_close(g, ref)
    backward = f.last_backward_trace()
    assert not any(e.prim is pow_p and e.args[1] == 1 for e in backward.eqns), backward
    assert torch.autograd.gradcheck(lambda w: f(w, x, y), (w,))
