"""An opaque torch call that receives one tensor at several positions gives eager's gradient bits.

Eager's autograd adds every use of the tensor inside the call (``F.cosine_similarity(x, x)``) to
one buffer, interleaved, after what later ops gave; symscalar ran torch's derivative with one leaf
per position and added the two totals, which rounds otherwise (1 ulp in float32, float64 and
bfloat16 once a later op uses the tensor too). The call's derivative now runs on one shared leaf.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import symscalar

CASES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "cosine_similarity_then_later_use": lambda x: F.cosine_similarity(x, x).sum() * x.sin(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", CASES)
def test_repeated_operand_of_an_opaque_call_gives_eagers_gradient(name: str, dtype: torch.dtype) -> None:
    fn = CASES[name]
    for seed in range(3):
        base = torch.randn(6, 33, generator=torch.Generator().manual_seed(seed)).to(dtype)
        x_eager, x_jit = base.clone().requires_grad_(), base.clone().requires_grad_()
        expected, got = fn(x_eager), symscalar.jit(fn, backend="torch")(x_jit)
        assert torch.equal(got.detach(), expected.detach())
        ct = torch.randn(expected.shape, generator=torch.Generator().manual_seed(7)).to(dtype)
        (g_expected,) = torch.autograd.grad(expected, x_eager, ct)
        (g_got,) = torch.autograd.grad(got, x_jit, ct)
        assert torch.equal(g_got, g_expected), f"seed {seed}: {(g_got - g_expected).abs().max()}"
