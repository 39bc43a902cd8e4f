"""Adversarial checks of the merged numerics against eager: autocast's weight-cast cache across
autocast regions, and the dtype checks of the products whose bias is added after the GEMM."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import symscalar


def _bf16(**kwargs: bool) -> torch.autocast:
    return torch.autocast("cpu", torch.bfloat16, **kwargs)


def _two_regions(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with _bf16():
        y = torch.tanh(m(x))
    with _bf16():  # eager cleared its cache on the first region's exit: a second cast
        y = torch.tanh(m(y))
    return y.float()


def _nested(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with _bf16():
        y = torch.tanh(m(x))
        with _bf16():  # the cache lives until the outermost region exits
            y = torch.tanh(m(y))
        y = torch.tanh(m(y))
    return y.float()


def _uncached_inner(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with _bf16():
        y = torch.tanh(m(x))
        with _bf16(cache_enabled=False):  # neither looks the cache up nor fills it
            y = torch.tanh(m(y))
        y = torch.tanh(m(y))
    return y.float()


def _disabled_inner(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with _bf16():
        y = torch.tanh(m(x))
        with torch.autocast("cpu", enabled=False):
            y = torch.tanh(m(y.float()))
        y = torch.tanh(m(y))
    return y.float()


def _no_grad_first(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with _bf16():
        with torch.no_grad():  # eager caches this cast too, without history
            z = m(x)
        y = torch.tanh(m(x)) + z
        y = torch.tanh(m(y))
    return y.float()


@pytest.mark.parametrize("f", [_two_regions, _nested, _uncached_inner, _disabled_inner, _no_grad_first])
@pytest.mark.parametrize("frozen_weight", [False, True])
def test_parameter_casts_follow_eagers_autocast_regions_to_the_bit(
    f: Callable[[torch.nn.Module, torch.Tensor], torch.Tensor], frozen_weight: bool
) -> None:
    torch.manual_seed(0)
    eager = torch.nn.Linear(16, 16)
    eager.weight.requires_grad_(not frozen_weight)
    mine = copy.deepcopy(eager)
    jitted = symscalar.jit(f)
    for _ in range(2):  # the second call hits the cache entry: a fresh eager region again
        x = torch.randn(4, 16)
        out_e, out_m = f(eager, x), jitted(mine, x)
        assert out_m.dtype == out_e.dtype and out_m.requires_grad == out_e.requires_grad
        torch.testing.assert_close(out_m, out_e, rtol=0, atol=0)
        if not out_e.requires_grad:  # _no_grad_first: every cached cast is without history
            continue
        ct = torch.randn_like(out_e)
        out_e.backward(ct)
        out_m.backward(ct)
        for pe, pm in zip(eager.parameters(), mine.parameters(), strict=True):
            assert (pe.grad is None) == (pm.grad is None)
            if pe.grad is not None:
                torch.testing.assert_close(pm.grad, pe.grad, rtol=0, atol=0)


def test_a_float16_region_inside_a_bfloat16_one_gets_eagers_cached_bfloat16_weight() -> None:
    # eager keys its cache by tensor alone: the inner region's linear gets the bfloat16 weight
    # and bias, which its float16 input does not match
    def f(m: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        with _bf16():
            y = m(x)
            with torch.autocast("cpu", torch.float16):
                y = m(y)
        return y

    m, x = torch.nn.Linear(8, 8), torch.randn(2, 8)
    with pytest.raises(RuntimeError, match="same dtype"):
        f(m, x)
    with pytest.raises(RuntimeError, match="same dtype"):
        symscalar.jit(f)(m, x)


_MIXED = [
    ("linear", lambda x, w, b: F.linear(x, w, b)),
    ("linear_3d", lambda x, w, b: F.linear(x[None].repeat(2, 1, 1), w, b)),
    ("addmm", lambda x, w, b: torch.addmm(b, x, w.t())),
    ("baddbmm", lambda x, w, b: torch.baddbmm(b, x[None], w.t()[None])),
]


@pytest.mark.parametrize(("name", "f"), _MIXED, ids=[n for n, _ in _MIXED])
@pytest.mark.parametrize("bias_dtype", [torch.bfloat16, torch.float32])
def test_a_bias_of_another_dtype_is_refused_like_eager(
    name: str, f: Callable[..., torch.Tensor], bias_dtype: torch.dtype
) -> None:
    # composed as a product then an add, the bias would promote the result (float16 and
    # bfloat16: float32) where eager's GEMM refuses the mix
    x, w = torch.randn(3, 4, dtype=torch.float16), torch.randn(5, 4, dtype=torch.float16)
    b = torch.randn(5, dtype=bias_dtype)
    with pytest.raises(RuntimeError, match="dtype"):
        f(x, w, b)
    with pytest.raises(RuntimeError, match="dtype"):
        symscalar.jit(f)(x, w, b)


@pytest.mark.parametrize("mask_shape", [(2, 1, 5, 6), (2, 4, 5, 6)])
@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.float32])
def test_a_mask_that_would_grow_3d_attention_scores_raises_like_eager(
    mask_shape: tuple[int, ...], mask_dtype: torch.dtype
) -> None:
    # eager adds the mask to the (heads, queries, keys) scores in place; broadcast, the output
    # would have been (2, 4, 5, 8) where eager has none
    def f(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    q, k, v = torch.randn(4, 5, 8), torch.randn(4, 6, 8), torch.randn(4, 6, 8)
    m = (torch.randn(mask_shape) > 0) if mask_dtype == torch.bool else torch.randn(mask_shape)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        f(q, k, v, m)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        symscalar.jit(f)(q, k, v, m)


def _assert_attention_like_eager(f: Callable[..., torch.Tensor], *args: object) -> None:
    """Output and every input gradient of ``f`` and its jitted form, to the bit."""
    eager_args = [
        a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args
    ]
    mine_args = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
    out_e, out_m = f(*eager_args), symscalar.jit(f)(*mine_args)
    assert out_m.dtype == out_e.dtype
    torch.testing.assert_close(out_m, out_e, rtol=0, atol=0)
    ct = torch.randn_like(out_e)
    out_e.backward(ct)
    out_m.backward(ct)
    for a, b in zip(eager_args, mine_args, strict=True):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            assert isinstance(b, torch.Tensor) and a.grad is not None and b.grad is not None
            torch.testing.assert_close(b.grad, a.grad, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("mask_requires_grad", [False, True])
def test_grouped_query_attention_gradients_are_eagers_to_the_bit(dtype: torch.dtype, mask_requires_grad: bool) -> None:
    # eager's CPU flash kernel serves the key/value groups itself (its backward sums each group's
    # gradient); its math path (a mask that needs a gradient) groups after the float32 upcast
    def f(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)

    torch.manual_seed(0)
    q = torch.randn(2, 4, 5, 8, dtype=dtype, requires_grad=True)
    k, v = (torch.randn(2, 2, 6, 8, dtype=dtype, requires_grad=True) for _ in range(2))
    m = torch.randn(5, 6, dtype=dtype, requires_grad=mask_requires_grad)
    _assert_attention_like_eager(f, q, k, v, m)


@pytest.mark.parametrize("scale", [0.7, -0.3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_dynamic_attention_scale_scales_q_and_k_as_eagers_math_path(scale: float, dtype: torch.dtype) -> None:
    # 3-d operands take eager's math path, which scales q and k by sqrt(|scale|) each
    def f(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, s: symscalar.DynamicFloat) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, scale=s, is_causal=True)

    torch.manual_seed(0)
    q = torch.randn(4, 5, 8, dtype=dtype, requires_grad=True)
    k, v = (torch.randn(4, 6, 8, dtype=dtype, requires_grad=True) for _ in range(2))
    _assert_attention_like_eager(f, q, k, v, scale)
