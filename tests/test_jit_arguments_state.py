"""Objects passed as arguments (a module, a plain instance) are keyed by identity and read like
captured state: their tensors and submodules by path on every call, their attribute writes
replayed, so a jitted call computes what eager computes after the object changed."""

from __future__ import annotations

import copy
import dataclasses
import gc
import weakref

import torch
from torch import nn

import symscalar


class Holder:
    def __init__(self) -> None:
        self.t = torch.randn(3)
        self.calls = torch.zeros(())


def test_a_module_argument_is_read_on_every_call():
    torch.manual_seed(0)
    f = symscalar.jit(lambda x, m: torch.tanh(m(x)))
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
    ref = copy.deepcopy(m)
    for step in range(4):
        x = torch.randn(4, 3)
        out, out_ref = f(x, m), torch.tanh(ref(x))
        torch.testing.assert_close(out, out_ref)
        out.sum().backward()
        out_ref.sum().backward()
        for p, p_ref in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, p_ref.grad)
        if step == 1:  # a replaced parameter and a replaced submodule
            m[0].weight = nn.Parameter(torch.randn(3, 3))
            ref[0].weight = nn.Parameter(m[0].weight.detach().clone())
        if step == 2:
            m[2] = nn.Linear(3, 2)
            ref[2] = copy.deepcopy(m[2])
    other = copy.deepcopy(m)  # an equal module is another object: its own entry
    with torch.no_grad():
        other[0].weight.mul_(2)
    torch.testing.assert_close(f(x, other), torch.tanh(other(x)))


def test_a_plain_object_argument_is_read_and_written_like_eager():
    def step(x, h):
        h.calls = h.calls + 1  # replayed after every call, as eager does it
        return x * h.t

    f = symscalar.jit(step)
    h, ref = Holder(), Holder()
    ref.t = h.t.clone()
    for _ in range(3):
        x = torch.randn(3)
        torch.testing.assert_close(f(x, h), step(x, ref))
        torch.testing.assert_close(h.calls, ref.calls)
        h.t = torch.randn(3)
        ref.t = h.t.clone()
    assert f.cache_info().misses == 1


def test_objects_inside_containers_and_frozen_dataclasses_are_read_too():
    @dataclasses.dataclass(frozen=True)
    class Config:
        holder: Holder
        k: int

    f = symscalar.jit(lambda x, cfg, pair: x * cfg.holder.t * cfg.k + pair[1].t)
    h = Holder()
    for _ in range(3):
        x = torch.randn(3)
        torch.testing.assert_close(f(x, Config(h, 2), (1, h)), x * h.t * 2 + h.t)
        h.t = torch.randn(3)


def test_an_object_argument_lives_as_long_as_its_entries():
    f = symscalar.jit(lambda x, h: x * h.t, max_entries=1)
    h = Holder()
    f(torch.ones(3), h)
    alive = weakref.ref(h)
    del h
    gc.collect()
    assert alive() is not None  # its entry reads it by path
    f(torch.ones(3), Holder())  # evicts that entry
    gc.collect()
    assert alive() is None
