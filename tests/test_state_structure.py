"""Regressions from an adversarial pass over the trace boundary: a module's *structure* (empty
slots, new entries) changes what forward computes although no tensor the trace read changed;
``would_trace`` over several guarded entries; ops whose autocast eager applies inside them."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import symscalar
from symscalar import DynamicFloat


def _same(module: nn.Module, jitted: object, x: torch.Tensor) -> None:
    expected, got = module(x), jitted(x)  # type: ignore[operator]
    torch.testing.assert_close(got, expected)


def test_bias_set_to_none_and_back_is_seen() -> None:
    m = nn.Linear(4, 4)
    jm = symscalar.jit(m)
    x = torch.randn(3, 4)
    _same(m, jm, x)
    m.bias = None
    _same(m, jm, x)
    m.bias = nn.Parameter(torch.ones(4))
    _same(m, jm, x)
    jm(x).sum().backward()
    assert m.bias.grad is not None  # the program uses the new bias


def test_a_bias_added_later_and_a_none_buffer_filled_are_seen() -> None:
    m = nn.Linear(4, 4, bias=False)
    jm = symscalar.jit(m)
    x = torch.randn(2, 4)
    _same(m, jm, x)
    m.bias = nn.Parameter(torch.ones(4))
    _same(m, jm, x)

    class WithOptionalBuffer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("b", None)
            self.lin = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x) if self.b is None else self.lin(x) + self.b

    m2 = WithOptionalBuffer()
    jm2 = symscalar.jit(m2)
    _same(m2, jm2, x)
    m2.b = torch.ones(4)
    _same(m2, jm2, x)


def test_appending_to_containers_is_seen() -> None:
    seq = nn.Sequential(nn.Linear(4, 4))
    js = symscalar.jit(seq)
    x = torch.randn(2, 4)
    _same(seq, js, x)
    seq.append(nn.ReLU())
    _same(seq, js, x)

    class Summed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ps = nn.ParameterList([nn.Parameter(torch.ones(4))])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + sum(p for p in self.ps)

    m = Summed()
    jm = symscalar.jit(m)
    _same(m, jm, x)
    m.ps.append(nn.Parameter(torch.full((4,), 2.0)))
    _same(m, jm, x)


def test_would_trace_asks_whether_any_guarded_entry_accepts() -> None:
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return x * symscalar.specialize(s)

    x = torch.ones(2)
    f(x, 1.0)
    f(x, 2.0)
    for s in (1.0, 2.0):
        assert not f.would_trace(x, s)
        before = f.cache_info().misses
        f(x, s)
        assert f.cache_info().misses == before
    answer = f.would_trace(x, 3.0)
    assert answer and "failed: it is 3.0 now" in str(answer)


def test_ops_autocast_applies_inside_are_refused_under_autocast() -> None:
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    f = symscalar.jit(lambda a, b: torch.einsum("ij,jk->ik", a, b))
    torch.testing.assert_close(f(a, b), torch.einsum("ij,jk->ik", a, b))  # fine without autocast
    with torch.autocast("cpu", torch.bfloat16), pytest.raises(symscalar.UnsupportedOperationError, match="autocast"):
        f(a, b)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    jm = symscalar.jit(lambda q: mha(q, q, q, need_weights=False)[0])
    q = torch.randn(2, 3, 4)
    with torch.autocast("cpu", torch.bfloat16), pytest.raises(symscalar.UnsupportedOperationError, match="autocast"):
        jm(q)
