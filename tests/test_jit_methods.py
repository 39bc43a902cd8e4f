"""``@jit`` on methods (issue 11, bounded memory): one cache per instance, held through the
instance only, so that an instance and its parameters are freed with it; ``self``'s state is
read on every call, as eager reads it. Static tensors are refused, never retained."""

from __future__ import annotations

import copy
import gc
import pickle
import weakref

import pytest
import torch
from torch import nn

import symscalar
from symscalar import DynamicFloat, StaticInt


class Scaler:
    def __init__(self, n: int = 3) -> None:
        self.w = torch.randn(n)

    @symscalar.jit
    def apply(self, x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return x * self.w * s

    def eager(self, x: torch.Tensor, s: float) -> torch.Tensor:
        return x * self.w * s


class Block(nn.Module):
    def __init__(self, n: int = 4) -> None:
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.big = nn.Parameter(torch.zeros(256, 1024))  # 1 MiB that must not outlive the block

    @symscalar.jit
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.lin(x)) + self.big[0, : x.shape[-1]]

    @symscalar.jit(static=[2])
    def scaled(self, x: torch.Tensor, k) -> torch.Tensor:
        return self.forward(x) * k  # a jitted method calling another: inlined


def _eager_block(m: Block, x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(m.lin(x)) + m.big[0, : x.shape[-1]]


def test_a_method_reads_self_on_every_call_like_eager():
    s = Scaler()
    x = torch.randn(3)
    for step in range(4):
        torch.testing.assert_close(s.apply(x, 0.5 + step), s.eager(x, 0.5 + step))
        s.w = torch.randn(3)  # replaced: eager sees the new tensor, so must jit
    assert s.apply.cache_info().misses == 1  # read by path: a replaced tensor is no retrace


def test_a_jitted_forward_follows_replaced_submodules_and_trains_like_eager():
    torch.manual_seed(0)
    m = Block()
    ref = copy.deepcopy(m)
    for step in range(3):
        x = torch.randn(2, 4)
        out, out_ref = m(x), _eager_block(ref, x)
        torch.testing.assert_close(out, out_ref)
        out.sum().backward()
        out_ref.sum().backward()
        for (name, p), p_ref in zip(m.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, p_ref.grad, msg=name)
        if step == 1:
            m.lin = nn.Linear(4, 4)
            ref.lin = copy.deepcopy(m.lin)
    torch.testing.assert_close(m.scaled(x, 3), _eager_block(m, x) * 3)


def test_each_instance_has_its_own_cache():
    a, b = Scaler(), Scaler()
    x = torch.ones(3)
    a.apply(x, 1.0), a.apply(x, 2.0), b.apply(x, 1.0)
    assert a.apply.cache_info() == symscalar.CacheInfo(hits=1, misses=1, entries=1)
    assert b.apply.cache_info() == symscalar.CacheInfo(hits=0, misses=1, entries=1)
    torch.testing.assert_close(Scaler.apply(b, x, 2.0), b.eager(x, 2.0))  # through the class
    assert b.apply.cache_info().hits == 1


def test_an_instance_and_its_parameters_are_freed_with_it():
    m = Block()
    x = torch.randn(2, 4, requires_grad=True)
    m(x).sum().backward()
    m.scaled(x, 2).sum().backward()
    with torch.no_grad():
        m(x)
    assert m.forward.cache_info().entries == 2  # grad and no_grad
    instance, parameter = weakref.ref(m), weakref.ref(m.big)
    del m
    gc.collect()
    assert instance() is None and parameter() is None


def test_copies_get_their_own_jitted_methods():
    m = Block()
    x = torch.randn(2, 4)
    m(x)
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m)), copy.copy(m)):
        with torch.no_grad():
            clone.lin.weight.mul_(2)  # copy.copy shares m's tensors: this changes both
        torch.testing.assert_close(clone(x), _eager_block(clone, x))
        torch.testing.assert_close(m(x), _eager_block(m, x))
        assert clone.forward is not m.forward


def test_static_and_dynamic_positions_count_self():
    class Positions:
        def __init__(self) -> None:
            self.w = torch.ones(2)

        @symscalar.jit(static=[2], dynamic=["s"])
        def f(self, x: torch.Tensor, n, s) -> torch.Tensor:
            return self.w * x.sum(n) * s

    p = Positions()
    x = torch.ones(2, 2)
    torch.testing.assert_close(p.f(x, 0, 2), torch.full((2,), 4.0))
    torch.testing.assert_close(p.f(x, 0, 3), torch.full((2,), 6.0))
    assert p.f.cache_info().misses == 1  # s dynamic
    p.f(x, 1, 3)
    assert p.f.cache_info().misses == 2  # n static


def test_static_and_class_methods_still_bind_as_declared():
    class Helpers:
        scale = 2.0

        @staticmethod
        @symscalar.jit
        def double(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @classmethod
        @symscalar.jit
        def scaled(cls, x: torch.Tensor) -> torch.Tensor:
            return x * cls.scale

    x = torch.ones(2)
    torch.testing.assert_close(Helpers.double(x), x * 2)
    torch.testing.assert_close(Helpers().double(x), x * 2)
    torch.testing.assert_close(Helpers.scaled(x), x * 2)


def test_a_static_tensor_is_refused_and_not_retained():
    f = symscalar.jit(lambda x, t: x * t, static=["t"])
    g = symscalar.jit(lambda x, d: x.sum(d), static=["d"])

    def call(fn, value):
        with pytest.raises(TypeError, match=r"is static .*cannot be a tensor.*Annotate it torch.Tensor"):
            fn(torch.ones(2), value)

    for fn, wrap in ((f, lambda t: t), (g, lambda t: t), (f, lambda t: (t,)), (f, lambda t: {"t": t})):
        t = torch.ones(2)
        alive = weakref.ref(t)
        call(fn, wrap(t))
        del t
        gc.collect()
        assert alive() is None
    assert f.cache_info() == symscalar.CacheInfo(hits=0, misses=0, entries=0)


def test_a_slots_class_gets_a_clear_error():
    class Slotted:
        __slots__ = ("w",)

        def __init__(self) -> None:
            self.w = torch.ones(2)

        def plain(self, x: torch.Tensor, n: StaticInt) -> torch.Tensor:
            return x * self.w * n

        f = symscalar.jit(plain)

    with pytest.raises(TypeError, match=r"has none \(__slots__\).*Add '__dict__' to its __slots__.*jit\(obj.plain\)"):
        Slotted().f(torch.ones(2), 2)
    s = Slotted()
    torch.testing.assert_close(symscalar.jit(s.plain)(torch.ones(2), 2), torch.full((2,), 2.0))


def test_the_class_attribute_inspects_every_living_instance():
    a, b = Scaler(), Scaler()
    x = torch.ones(3)
    Scaler.apply.cache_clear()
    a.apply(x, 1.0), a.apply(x, 2.0), b.apply(x, 1.0), b.apply(x.double(), 1.0)
    assert Scaler.apply.cache_info() == symscalar.CacheInfo(hits=1, misses=3, entries=3)
    assert len(Scaler.apply.explain()) == 3
    with pytest.raises(TypeError, match=r"jitted per instance: ask the instance, e.g. obj.apply.last_trace\(\)"):
        Scaler.apply.last_trace()
    assert a.apply.last_trace() is not None
    del b
    gc.collect()
    assert Scaler.apply.cache_info().misses == 1
    Scaler.apply.cache_clear()
    assert a.apply.cache_info() == symscalar.CacheInfo(hits=0, misses=0, entries=0)
