"""Evaluation-mode batch norm is eager's to the bit, values and gradients: symscalar runs
eager's kernel (``native_batch_norm(training=False)``, which folds the running statistics into
one scale and shift per channel) and its backward kernel, not the formula
``(x - mean) * rsqrt(var + eps) * w + b``.

Before, that formula was a float32 ulp off in 20 of 20 random float32 batches (float64 too), and
a model alternating training and evaluation steps drifted from eager's parameters in 6 of 8
steps."""

from __future__ import annotations

import copy
import itertools

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat
from symscalar.errors import UnsupportedOperationError

C = 5
CASES = list(
    itertools.product(
        (torch.float32, torch.float64, torch.bfloat16, torch.float16),
        ((4, C), (2, C, 7), (3, C, 4, 6)),
        (True, False),  # affine
    )
)


def _grads(out: torch.Tensor, inputs: list[torch.Tensor], seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed)).to(out.dtype)
    return torch.autograd.grad(out, inputs, g)


@pytest.mark.parametrize(("dtype", "shape", "affine"), CASES)
def test_output_and_gradients_are_eager_bits(dtype: torch.dtype, shape: tuple[int, ...], affine: bool) -> None:
    torch.manual_seed(0)
    mean, var = torch.randn(C).to(dtype), (torch.rand(C) + 0.5).to(dtype)

    def f(x: torch.Tensor, w: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor:
        return F.batch_norm(x, mean, var, w, b, training=False, eps=1e-3)

    run = symscalar.jit(f)
    for step in range(3):
        x = (torch.randn(shape) * 3 + 1).to(dtype).requires_grad_()
        w = torch.randn(C).to(dtype).requires_grad_() if affine else None
        b = torch.randn(C).to(dtype).requires_grad_() if affine else None
        inputs = [t for t in (x, w, b) if t is not None]
        expected, got = f(x, w, b), run(x, w, b)
        assert got.dtype == expected.dtype
        assert torch.equal(got, expected)
        for e, m in zip(_grads(expected, inputs, step), _grads(got, inputs, step), strict=True):
            assert torch.equal(e, m)
    assert run.cache_info().misses == 1


def test_bfloat16_input_with_float32_statistics() -> None:
    """A bfloat16 activation into a float32 batch norm (a convolution under autocast): eager's
    kernel takes the mixed dtypes; so does the program, to the bit."""
    torch.manual_seed(1)
    eager = nn.BatchNorm2d(6).eval()
    eager.running_mean.normal_()
    eager.running_var.uniform_(0.5, 2.0)
    mine = copy.deepcopy(eager)
    run = symscalar.jit(mine)
    for step in range(2):
        x = (torch.randn(2, 6, 5, 5) * 2).to(torch.bfloat16)
        xe, xm = x.clone().requires_grad_(), x.clone().requires_grad_()
        expected, got = eager(xe), run(xm)
        assert got.dtype == expected.dtype == torch.bfloat16
        assert torch.equal(got, expected)
        ge = _grads(expected, [xe, eager.weight, eager.bias], step)
        gm = _grads(got, [xm, mine.weight, mine.bias], step)
        for e, m in zip(ge, gm, strict=True):
            assert torch.equal(e, m)


def _cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 4, 3), nn.BatchNorm2d(4), nn.Flatten()
    )


@pytest.mark.parametrize("dynamic", [False, True])
def test_training_alternating_with_evaluation_stays_on_eager(dynamic: bool) -> None:
    """SGD with momentum, train/eval toggled every third step, autocast bfloat16 on every other
    step and batches of 2 to 4: parameters, buffers, outputs and gradients stay eager's bits."""
    torch.manual_seed(2)
    eager = _cnn()
    mine = copy.deepcopy(eager)
    run = symscalar.jit(mine, dynamic_dims={"input": ("B",)}) if dynamic else symscalar.jit(mine)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05, momentum=0.9)
    opt_m = torch.optim.SGD(mine.parameters(), lr=0.05, momentum=0.9)
    for step in range(8):
        training = step % 3 != 2
        eager.train(training)
        mine.train(training)
        x = torch.randn(2 + step % 3, 3, 6, 6)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=step % 2 == 1):
            expected, got = eager(x), run(x)
        assert got.dtype == expected.dtype
        assert torch.equal(got, expected), f"output of step {step}"
        for opt, out in ((opt_e, expected), (opt_m, got)):
            opt.zero_grad()
            out.float().square().mean().backward()
            opt.step()
        for (name, e), m in zip(eager.state_dict().items(), mine.state_dict().values(), strict=True):
            assert torch.equal(e, m), f"{name} after step {step}"
    if dynamic:  # train and eval, with and without autocast: one program each over every batch
        assert run.cache_info().misses == 4


def test_dynamic_dims_run_one_program() -> None:
    """Every dim but the channel dim may be dynamic in evaluation mode (the kernel is
    elementwise): one program for every batch and length."""
    torch.manual_seed(3)
    eager = nn.BatchNorm1d(C).eval()
    eager.running_mean.normal_()
    eager.running_var.uniform_(0.5, 2.0)
    run = symscalar.jit(eager, dynamic_dims={"input": ("B", None, "T")})
    for batch, length in ((1, 1), (2, 7), (3, 64), (8, 2)):
        x = torch.randn(batch, C, length, requires_grad=True)
        expected, got = eager(x), run(x)
        assert torch.equal(got, expected)
        params = [x, eager.weight, eager.bias]
        for e, m in zip(_grads(expected, params, batch), _grads(got, params, batch), strict=True):
            assert torch.equal(e, m)
    assert run.cache_info().misses == 1


def test_second_derivative_matches_autograd() -> None:
    """The double backward (the vjp of eager's backward kernel, from its formula) is the
    derivative: gradgradcheck in float64, and equal to eager's within rounding."""
    torch.manual_seed(4)
    mean, var = torch.randn(C, dtype=torch.float64), torch.rand(C, dtype=torch.float64) + 0.5

    def f(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, mean, var, w, b, training=False)

    args = tuple(torch.randn(s, dtype=torch.float64, requires_grad=True) for s in ((3, C, 4), (C,), (C,)))
    run = symscalar.jit(f)
    assert torch.autograd.gradgradcheck(run, args)

    def penalty(fn: object) -> tuple[torch.Tensor, ...]:
        (gx,) = torch.autograd.grad(fn(*args).sin().sum(), args[0], create_graph=True)  # type: ignore[operator]
        return torch.autograd.grad(gx.square().sum(), args)

    for e, m in zip(penalty(f), penalty(run), strict=True):
        torch.testing.assert_close(m, e, rtol=1e-12, atol=1e-12)


def test_statistics_that_require_grad_are_refused_as_eager_refuses_them() -> None:
    mean, var = torch.zeros(C, requires_grad=True), torch.ones(C)

    def f(x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, mean, var, training=False)

    x = torch.randn(2, C)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'running_mean'"):
        f(x)
    with pytest.raises(UnsupportedOperationError, match="not differentiable with respect to running_mean"):
        symscalar.jit(f)(x)


def test_dynamic_eps_keeps_the_formula() -> None:
    """A dynamic eps cannot be a kernel's constant: the formula runs, within rounding of eager,
    with one program for every eps."""
    torch.manual_seed(5)
    mean, var = torch.randn(C), torch.rand(C) + 0.5

    def f(x: torch.Tensor, eps: DynamicFloat) -> torch.Tensor:
        return F.batch_norm(x, mean, var, training=False, eps=eps)

    run = symscalar.jit(f)
    x = torch.randn(4, C, 3)
    for eps in (1e-5, 1e-3, 0.1):
        torch.testing.assert_close(run(x, eps), f(x, eps))
    assert run.cache_info().misses == 1
