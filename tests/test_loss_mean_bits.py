"""Losses with a mean (or sum) reduction give eager's bits, values and gradients.

A mean written as ``losses.sum() / count`` rounds differently from eager's kernels (nll_loss
accumulates in its own order and divides by its total weight; cross_entropy's probability
targets sum every element at once; its label-smoothing term sums the gathered weights): 1 ulp
apart in 20-40% of small float32 batches. So the comparison here is ``torch.equal`` (NaN where
eager has NaN: a batch whose targets are all ignored), over seeds, batch sizes 1..17, float32
and bfloat16, and with dynamic batch dims.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar

C = 5
Loss = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]

CASES: dict[str, Loss] = {
    "nll_loss": lambda x, t, w, p: F.nll_loss(torch.log_softmax(x, 1), t),
    "nll_loss_weight": lambda x, t, w, p: F.nll_loss(torch.log_softmax(x, 1), t, weight=w),
    "nll_loss_sum_ignore": lambda x, t, w, p: F.nll_loss(x, t.clamp(min=0), ignore_index=2, reduction="sum"),
    "nll_loss_none": lambda x, t, w, p: F.nll_loss(x, t, weight=w, reduction="none").sum(),
    "cross_entropy": lambda x, t, w, p: F.cross_entropy(x, t),
    "cross_entropy_weight": lambda x, t, w, p: F.cross_entropy(x, t, weight=w),
    "cross_entropy_smoothing": lambda x, t, w, p: F.cross_entropy(x, t, label_smoothing=0.1),
    "cross_entropy_weight_smoothing": lambda x, t, w, p: F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
    "cross_entropy_sum": lambda x, t, w, p: F.cross_entropy(x, t, weight=w, reduction="sum", label_smoothing=0.3),
    "cross_entropy_probs": lambda x, t, w, p: F.cross_entropy(x, p),
    "cross_entropy_probs_weight_smoothing": lambda x, t, w, p: F.cross_entropy(x, p, weight=w, label_smoothing=0.2),
    "cross_entropy_probs_sum": lambda x, t, w, p: F.cross_entropy(x, p, reduction="sum"),
    "mse_loss": lambda x, t, w, p: F.mse_loss(x, p),
    "l1_loss": lambda x, t, w, p: F.l1_loss(x, p),
    "smooth_l1_loss": lambda x, t, w, p: F.smooth_l1_loss(x, p, beta=0.5),
    "huber_loss": lambda x, t, w, p: F.huber_loss(x, p, delta=0.7),
    "binary_cross_entropy": lambda x, t, w, p: F.binary_cross_entropy(torch.sigmoid(x), p),
    "binary_cross_entropy_with_logits": lambda x, t, w, p: F.binary_cross_entropy_with_logits(x, p, weight=w),
    "kl_div_batchmean": lambda x, t, w, p: F.kl_div(torch.log_softmax(x, 1), p, reduction="batchmean"),
    "mean": lambda x, t, w, p: x.mean(),
    "var": lambda x, t, w, p: x.var(),
    "std_dim": lambda x, t, w, p: x.std(0).sum(),
    "norm": lambda x, t, w, p: x.norm(),
}
# eager's CPU kernels refuse these in bfloat16
FLOAT32_ONLY = {"binary_cross_entropy"}


def _batch(batch: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1000 * seed + batch)
    x = torch.randn(batch, C, generator=g).to(dtype)
    t = torch.randint(0, C, (batch,), generator=g)
    t[torch.rand(batch, generator=g) < 0.2] = -100  # ignored (the default ignore_index)
    w = torch.rand(C, generator=g).to(dtype)
    p = torch.softmax(torch.randn(batch, C, generator=g), 1).to(dtype)
    return x, t, w, p


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-equal values (a NaN matching a NaN)."""
    return a.dtype == b.dtype and a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


def _mismatches(fn: Loss, jitted: Any, dtype: torch.dtype, batches: range, seeds: int) -> list[Any]:
    bad = []
    for batch in batches:
        for seed in range(seeds):
            x, t, w, p = _batch(batch, dtype, seed)
            xe = x.clone().requires_grad_(True)
            expected = fn(xe, t, w, p)
            (grad_expected,) = torch.autograd.grad(expected, xe)
            xj = x.clone().requires_grad_(True)
            got = jitted(xj, t, w, p)
            (grad_got,) = torch.autograd.grad(got, xj)
            if not _same(expected, got) or not _same(grad_expected, grad_got):
                bad.append((batch, seed, expected.item(), got.item()))
    return bad


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_mean_reduction_matches_eager_bits(name: str, dtype: torch.dtype) -> None:
    if name in FLOAT32_ONLY and dtype != torch.float32:
        pytest.skip("eager's CPU kernel has no bfloat16")
    fn = CASES[name]
    assert _mismatches(fn, symscalar.jit(fn), dtype, range(1, 18, 4), 2) == []


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith(("nll", "cross"))))
def test_dynamic_batch_matches_eager_bits(name: str) -> None:
    fn = CASES[name]
    jitted = symscalar.jit(fn, dynamic_dims={"x": ("B", None), "t": ("B",), "p": ("B", None)})
    assert _mismatches(fn, jitted, torch.float32, range(1, 18), 3) == []


def test_cross_entropy_higher_dims_and_double_backward_match_eager() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, C, 4, 2, generator=g, dtype=torch.float64)
    t = torch.randint(0, C, (3, 4, 2), generator=g)
    t[0, 1] = -100

    def f(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(x, t, label_smoothing=0.2)

    results = []
    for loss_fn in (f, symscalar.jit(f)):
        xr = x.clone().requires_grad_(True)
        loss = loss_fn(xr, t)
        (gx,) = torch.autograd.grad(loss, xr, create_graph=True)
        results.append((loss, gx, torch.autograd.grad((gx * gx).sum(), xr)[0]))
    (loss_e, gx_e, ggx_e), (loss_j, gx_j, ggx_j) = results
    assert torch.equal(loss_e, loss_j) and torch.equal(gx_e, gx_j)
    # the second derivative goes through symscalar's log_softmax backward formula, not eager's
    # kernel: close, not bit-equal (docs/numerics.md)
    torch.testing.assert_close(ggx_j, ggx_e, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("op", [F.nll_loss, F.cross_entropy])
def test_weight_requiring_grad_is_refused_as_eager_has_no_derivative(op: Any) -> None:
    x = torch.randn(4, C).log_softmax(1)
    t = torch.tensor([0, 1, 2, 3])
    w = torch.rand(C, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        op(x.requires_grad_(True), t, weight=w)
    with pytest.raises(symscalar.UnsupportedOperationError, match="no derivative for weight"):
        symscalar.jit(lambda x, t, w: op(x, t, weight=w))(x, t, w)


def test_weight_of_another_dtype_raises_while_tracing_as_eager() -> None:
    x = torch.randn(4, C).log_softmax(1)
    t = torch.tensor([0, 1, 2, 3])
    w = torch.rand(C, dtype=torch.float64)
    with pytest.raises(RuntimeError) as eager:
        F.nll_loss(x, t, weight=w)
    with pytest.raises(RuntimeError) as traced:
        symscalar.jit(lambda x, t, w: F.nll_loss(x, t, weight=w))(x, t, w)
    assert str(traced.value) == str(eager.value)
