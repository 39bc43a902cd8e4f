"""Training-mode batch norm's running statistics are eager's bits: symscalar runs eager's own
update kernel (``aten::batch_norm_update_stats``), not a formula that rounds in another place.

Before, a float formula left the running mean or variance 1 ulp from eager's in 80 of the 96
steps below (float64 and float32 included, bfloat16 in about a third of the channels)."""

from __future__ import annotations

import copy
import itertools

import pytest
import torch
import torch.nn as nn

import symscalar

CASES = list(
    itertools.product(
        (torch.bfloat16, torch.float16, torch.float32, torch.float64),
        ((4, 3), (2, 5, 7), (3, 4, 5, 6), (1, 3, 9)),
        (0.1, 0.37),
    )
)


def _module(shape: tuple[int, ...], momentum: float) -> nn.Module:
    return (
        nn.BatchNorm2d(shape[1], momentum=momentum) if len(shape) == 4 else nn.BatchNorm1d(shape[1], momentum=momentum)
    )


def _assert_same_state(eager: nn.Module, jitted: nn.Module) -> None:
    for name, value in eager.state_dict().items():
        assert torch.equal(value, jitted.state_dict()[name]), name


@pytest.mark.parametrize(("dtype", "shape", "momentum"), CASES)
def test_running_statistics_are_eager_bits(dtype: torch.dtype, shape: tuple[int, ...], momentum: float) -> None:
    torch.manual_seed(0)
    eager = _module(shape, momentum).to(dtype)
    mine = copy.deepcopy(eager)
    run = symscalar.jit(mine)
    for _ in range(3):
        x = torch.randn(shape, dtype=dtype) * 3 + 1
        assert torch.equal(eager(x), run(x))
        _assert_same_state(eager, mine)
    assert run.cache_info().misses == 1


def test_mixed_dtypes_and_gradients() -> None:
    """A bfloat16 input with float32 statistics (a convolution under autocast feeding a float32
    batch norm): the statistics, the output and the gradients are eager's."""
    torch.manual_seed(1)
    eager = nn.BatchNorm2d(6)
    mine = copy.deepcopy(eager)
    run = symscalar.jit(mine)
    for _ in range(3):
        x = (torch.randn(2, 6, 5, 5) * 2).to(torch.bfloat16)
        xe, xm = x.clone().requires_grad_(), x.clone().requires_grad_()
        out_e, out_m = eager(xe), run(xm)
        assert out_e.dtype == out_m.dtype and torch.equal(out_e, out_m)
        out_e.float().square().sum().backward()
        out_m.float().square().sum().backward()
        assert xe.grad is not None and xm.grad is not None and torch.equal(xe.grad, xm.grad)
        for pe, pm in zip(eager.parameters(), mine.parameters(), strict=True):
            assert pe.grad is not None and pm.grad is not None and torch.equal(pe.grad, pm.grad)
        _assert_same_state(eager, mine)


def test_dynamic_batch_dim() -> None:
    """One program for every batch size; the kernel counts the batch at run time (the unbiased
    variance's n / (n - 1))."""
    torch.manual_seed(2)
    eager = nn.BatchNorm1d(4, momentum=0.2).to(torch.bfloat16)
    mine = copy.deepcopy(eager)
    run = symscalar.jit(mine, dynamic_dims={"input": ("B", None, None)})
    for batch in (2, 3, 8, 5):
        x = torch.randn(batch, 4, 7, dtype=torch.bfloat16)
        assert torch.equal(eager(x), run(x))
        _assert_same_state(eager, mine)
    assert run.cache_info().misses == 1


def test_dynamic_momentum_still_updates() -> None:
    """A dynamic momentum keeps the formula (the kernel takes a constant): close to eager."""
    mean, var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ref_mean, ref_var = mean.clone(), var.clone()

    @symscalar.jit
    def step(x: torch.Tensor, momentum: symscalar.DynamicFloat) -> torch.Tensor:
        return torch.nn.functional.batch_norm(x, mean, var, training=True, momentum=momentum)

    for momentum in (0.1, 0.5):
        x = torch.randn(4, 3, dtype=torch.float64)
        expected = torch.nn.functional.batch_norm(x, ref_mean, ref_var, training=True, momentum=momentum)
        torch.testing.assert_close(step(x, momentum), expected)
        torch.testing.assert_close(mean, ref_mean)
        torch.testing.assert_close(var, ref_var)
    assert step.cache_info().misses == 1
