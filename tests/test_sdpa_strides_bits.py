"""Attention on CPU takes eager's kernel for the strides each call has, bit for bit.

Eager's ``scaled_dot_product_attention`` picks the flash kernel or its math path by the operands'
strides (a head dim that is not contiguous goes to math), which a trace cannot see and the cache
key does not hold: the program asks eager's chooser at run time, so one program serves both
layouts, in either order, each as eager computes it (forward and gradients).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symscalar

B, H, L, D = 2, 4, 16, 8


def _operand(transposed: bool, dtype: torch.dtype, heads: int = H) -> torch.Tensor:
    """A (B, heads, L, D) operand; ``transposed``: its head dim has stride L, not 1."""
    t = (
        torch.randn(B, heads, D, L, dtype=dtype).transpose(-1, -2)
        if transposed
        else torch.randn(B, heads, L, D, dtype=dtype)
    )
    return t.requires_grad_()


KINDS = {
    "plain": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v),
    "causal": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "mask": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
    "gqa": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
}
# contiguous first (the program is traced on it) and last (the cache entry is reused both ways)
LAYOUTS = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (0, 0, 0)]


@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("first", ("contiguous", "transposed"))
def test_layouts_share_a_program_and_match_eager(kind, dtype, first):
    torch.manual_seed(0)
    f = KINDS[kind]
    jf = symscalar.jit(f)
    layouts = LAYOUTS if first == "contiguous" else [tuple(1 - t for t in lay) for lay in LAYOUTS]
    kv_heads = 2 if kind == "gqa" else H
    for layout in layouts:
        q = _operand(bool(layout[0]), dtype)
        k, v = (_operand(bool(t), dtype, kv_heads) for t in layout[1:])
        mask = torch.randn(L, L, dtype=dtype)
        expected = f(q, k, v, mask)
        expected_grads = torch.autograd.grad(expected.sum(), (q, k, v))
        got = jf(q, k, v, mask)
        got_grads = torch.autograd.grad(got.sum(), (q, k, v))
        assert torch.equal(expected, got), f"output, layout {layout}"
        for name, e, g in zip("qkv", expected_grads, got_grads):
            assert torch.equal(e, g), f"gradient of {name}, layout {layout}"


def test_transposed_key_inside_the_program():
    # k.mT of a (B, H, D, L) tensor made inside the program: eager sees a head dim of stride L
    torch.manual_seed(0)

    def f(q, kt, v):
        return F.scaled_dot_product_attention(q, kt.mT, v)

    q, v = torch.randn(B, H, L, D, requires_grad=True), torch.randn(B, H, L, D, requires_grad=True)
    kt = torch.randn(B, H, D, L, requires_grad=True)
    expected = f(q, kt, v)
    got = symscalar.jit(f)(q, kt, v)
    assert torch.equal(expected, got)
    for e, g in zip(torch.autograd.grad(expected.sum(), (q, kt, v)), torch.autograd.grad(got.sum(), (q, kt, v))):
        assert torch.equal(e, g)
