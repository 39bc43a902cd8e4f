"""The torch backend on a CUDA device: representative programs of every op family, forward
and backward, against eager torch on the same device, with dynamic scalars changing between
calls. Skipped (with a reason) where there is no CUDA device."""

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat, nvfuser_backend
from symscalar.errors import BackendUnavailableError

pytestmark = pytest.mark.cuda


def scale_bias_gelu(x: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return F.gelu(x * s + b)


def softmax_chain(x: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return torch.softmax(x * s, -1) * b


def norm_chain(x: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return F.layer_norm(x, (x.shape[-1],), b, b, eps=s * 1e-3)


def shape_chain(x: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    y = torch.cat([x, x * s], 0).transpose(0, 1).unsqueeze(0)
    return (y[:, 1:, ::2].sum((0, 2)) + b.sum()).clamp(-s, s)


def attention(x: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    q = x.reshape(1, 2, x.shape[0], x.shape[1] // 2)
    return F.scaled_dot_product_attention(q, q, q, scale=s, is_causal=True)


PROGRAMS = [scale_bias_gelu, softmax_chain, norm_chain, shape_chain, attention]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_backend_on_cuda(fn: Callable[..., Any], dtype: torch.dtype) -> None:
    f = symscalar.jit(fn, backend="torch")
    x = torch.randn(8, 6, device="cuda", dtype=dtype)
    b = torch.randn(6, device="cuda", dtype=dtype)
    for s in (0.5, 1.7, 3.0):
        mine = [t.clone().requires_grad_() for t in (x, b)]
        ref = [t.clone().requires_grad_() for t in (x, b)]
        out, expected = f(*mine, s), fn(*ref, s)
        assert out.device.type == "cuda"
        torch.testing.assert_close(out, expected)
        ct = torch.randn_like(expected)
        for g, r in zip(
            torch.autograd.grad(out, mine, ct, allow_unused=True),
            torch.autograd.grad(expected, ref, ct, allow_unused=True),
        ):
            if r is None:
                assert g is None or not g.any()
            else:
                torch.testing.assert_close(g, r)
    assert f.cache_info().misses == 1


def test_backend_choice_on_cuda() -> None:
    x = torch.randn(4, device="cuda")
    auto = symscalar.jit(lambda x: x * 2)
    torch.testing.assert_close(auto(x), x * 2)
    if not nvfuser_backend.nvfuser_available():
        with pytest.raises(BackendUnavailableError, match="nvfuser"):
            symscalar.jit(lambda x: x * 2, backend="nvfuser")(x)
