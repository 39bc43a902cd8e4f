"""The adversarial pass over real model code: regressions for the silent differences it found,
each a class of bug fixed where it lived, tested on the smallest program that showed it and on
the model it was found in.

- 16-bit attention with a mask (every Hugging Face model with a padding mask or a position bias
  under ``torch.autocast``): symscalar composed ``softmax(q @ k^T * scale + mask) @ v`` in the
  16-bit dtype, rounding the scores and weights at every step, where eager's CPU attention takes
  its flash kernel with the mask (a mask that needs no gradient) or its math path, which
  computes half/bfloat16 attention in float32 and rounds the output once. Both are now eager's,
  to the bit.

And a refusal that was a deep internal error: a custom ``torch.autograd.Function`` (transformers'
BLOOM in training mode, ``BloomGelu``) failed inside torch's C++ ``unwrap_if_dead`` with a
``TypeError`` about a ``TensorProxy``; it is refused by name, with the fix.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar.ops.composites import sdpa_flash_cpu_p

# mask shape, dtype ("query" for the query's), whether it requires grad; and whether eager's
# CPU attention takes its flash kernel with it (else: its math path, in float32)
MASKS = {
    "4-d float32 padding mask": ((2, 1, 1, 7), torch.float32, False, True),
    "4-d mask in the query dtype": ((1, 2, 5, 7), "query", False, True),
    "2-d bool mask": ((5, 7), torch.bool, False, True),
    "mask that requires grad (a position bias)": ((1, 2, 5, 7), "query", True, False),
    "3-d mask": ((1, 5, 7), "query", False, False),
}


def _attention_inputs(dtype: torch.dtype, mask_kind: str) -> tuple[torch.Tensor, ...]:
    shape, mask_dtype, mask_grad, _ = MASKS[mask_kind]
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, n, 4, generator=g).to(dtype).requires_grad_() for n in (5, 7, 7))
    if mask_dtype is torch.bool:
        mask = torch.rand(shape, generator=g) > 0.3
    else:
        mask = (3 * torch.randn(shape, generator=g)).to(dtype if mask_dtype == "query" else mask_dtype)
        mask.requires_grad_(mask_grad)
    return q, k, v, mask


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7)


@pytest.mark.parametrize("mask_kind", list(MASKS))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_16_bit_attention_with_a_mask_is_eagers_to_the_bit(dtype: torch.dtype, mask_kind: str) -> None:
    inputs = _attention_inputs(dtype, mask_kind)
    f = symscalar.jit(_attention)
    out, expected = f(*inputs), _attention(*inputs)
    assert out.dtype == expected.dtype == dtype
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    ct = torch.randn_like(expected)
    leaves = [t for t in inputs if t.requires_grad]
    for g, ge in zip(torch.autograd.grad(out, leaves, ct), torch.autograd.grad(expected, leaves, ct), strict=True):
        assert g.dtype == ge.dtype
        torch.testing.assert_close(g, ge, rtol=0, atol=0)
    takes_the_kernel = MASKS[mask_kind][3]
    assert (sdpa_flash_cpu_p in {e.prim for e in f.last_trace().eqns}) == takes_the_kernel


def test_attention_under_autocast_with_a_float32_mask_is_eagers_to_the_bit() -> None:
    # autocast casts the mask with q, k and v; eager's kernel then takes it
    q, k, v, mask = (t.detach().float() for t in _attention_inputs(torch.float32, "4-d float32 padding mask"))
    f = symscalar.jit(_attention)
    with torch.autocast("cpu", torch.bfloat16):
        out, expected = f(q, k, v, mask), _attention(q, k, v, mask)
    assert out.dtype == expected.dtype == torch.bfloat16
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.slow  # a real model, trained side by side
def test_t5_encoder_under_autocast_trains_like_eager() -> None:
    """T5's relative position bias is an attention mask that requires grad: eager's math path,
    in float32. With ``torch.autocast`` the encoder's output and every gradient agree with eager
    to float32 rounding of the bfloat16 values (they differed by a bfloat16 unit at the mask)."""
    transformers = pytest.importorskip("transformers")
    config = transformers.T5Config(
        vocab_size=50, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2, dropout_rate=0.0
    )
    torch.manual_seed(0)
    eager = transformers.T5EncoderModel(config).train()
    mine = copy.deepcopy(eager)
    jitted = symscalar.jit(mine)
    ids = torch.randint(3, 50, (2, 10), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 10, dtype=torch.long)
    mask[0, -3:] = 0
    for grad in (True, False):  # the mask needs a gradient only with grad enabled: math, then kernel
        with torch.set_grad_enabled(grad), torch.autocast("cpu", torch.bfloat16):
            out_e = eager(input_ids=ids, attention_mask=mask).last_hidden_state
            out_m = jitted(input_ids=ids, attention_mask=mask).last_hidden_state
        assert out_m.dtype == out_e.dtype
        torch.testing.assert_close(out_m, out_e, rtol=1e-6, atol=1e-6)
        if grad:
            out_e.pow(2).mean().backward()
            out_m.pow(2).mean().backward()
            for (name, pe), pm in zip(eager.named_parameters(), mine.parameters(), strict=True):
                assert (pe.grad is None) == (pm.grad is None), name
                torch.testing.assert_close(pm.grad, pe.grad, rtol=1e-5, atol=1e-6, msg=name)


class _Doubling(torch.autograd.Function):
    """A custom backward (straight-through: the forward's derivative would be 2)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad


def test_a_custom_autograd_function_is_refused_by_name() -> None:
    linear = torch.nn.Linear(4, 4)
    f = symscalar.jit(lambda x: _Doubling.apply(linear(x)).sum())
    x = torch.randn(3, 4)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"_Doubling\.apply \(a custom torch\.autograd"):
        f(x)
    # eager's apply, outside a trace, is untouched
    (g,) = torch.autograd.grad(_Doubling.apply(x.requires_grad_()).sum(), x)
    torch.testing.assert_close(g, torch.ones_like(x))


def test_reentrant_checkpoint_still_traces() -> None:
    # torch.utils.checkpoint's reentrant form is a torch.autograd.Function too, traced through
    linear = torch.nn.Linear(4, 4)
    fn = lambda x: torch.utils.checkpoint.checkpoint(linear, x, use_reentrant=True).pow(2).sum()  # noqa: E731
    x = torch.randn(3, 4, requires_grad=True)
    x_e = x.detach().clone().requires_grad_()
    out, expected = symscalar.jit(fn)(x), fn(x_e)
    torch.testing.assert_close(out, expected)
    out.backward()
    expected.backward()  # (eager's reentrant form refuses torch.autograd.grad)
    torch.testing.assert_close(x.grad, x_e.grad)


class _SharedLinear(torch.nn.Module):
    """One linear applied three times (ALBERT shares a layer's weights across its depth)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.tanh(self.linear(x))
        return x


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_a_parameter_used_thrice_under_autocast_has_eagers_gradient_to_the_bit(cache_enabled: bool) -> None:
    # eager casts a parameter once per autocast region (its weight cache) and every use's gradient
    # sums in bfloat16; without the cache, once per use, summed in float32. The trace casts as eager
    torch.manual_seed(0)
    eager = _SharedLinear()
    mine = copy.deepcopy(eager)
    x = torch.randn(4, 10, 16)
    with torch.autocast("cpu", torch.bfloat16, cache_enabled=cache_enabled):
        out_e, out_m = eager(x), symscalar.jit(mine)(x)
    torch.testing.assert_close(out_m, out_e, rtol=0, atol=0)
    ct = torch.randn_like(out_e)
    out_e.backward(ct)
    out_m.backward(ct)
    for pe, pm in zip(eager.parameters(), mine.parameters(), strict=True):
        torch.testing.assert_close(pm.grad, pe.grad, rtol=0, atol=0)
