"""The public surface around jit: the backend registry and the inspection methods that
``grad``/``value_and_grad`` share with ``jit``."""

from __future__ import annotations

import collections

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import symscalar
from symscalar import DynamicFloat
from symscalar._jit.function import INSPECTION
from symscalar.backend import backend_named, backend_names, choose_backend, register_backend
from symscalar.torch_backend import TorchBackend


def loss(w: torch.Tensor, x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return ((x @ w) * s).pow(2).sum()


def test_backends_are_registered_once_by_name():
    assert backend_names() == ("auto", "nvfuser", "torch", "inductor")  # by priority
    with pytest.raises(ValueError, match="'torch' is already registered"):
        register_backend(TorchBackend())
    with pytest.raises(
        ValueError, match=r"backend must be one of \('auto', 'nvfuser', 'torch', 'inductor'\), got 'xla'"
    ):
        symscalar.jit(loss, backend="xla")


def test_auto_picks_torch_for_cpu_traces_and_nvfuser_refuses_them():
    f = symscalar.jit(loss)
    f(torch.randn(3, 2), torch.randn(4, 3), 0.5)
    trace = f.last_trace()
    assert choose_backend("auto", trace).name == "torch"
    with pytest.raises(symscalar.errors.BackendUnavailableError, match="CUDA tensors only"):
        choose_backend("nvfuser", trace)
    assert backend_named("nvfuser").for_entry() is not backend_named("nvfuser")  # fusions kept per entry


@pytest.mark.parametrize("make", [symscalar.grad, symscalar.value_and_grad])
def test_grad_and_value_and_grad_share_the_inspection_surface(make):
    g = make(loss)
    assert all(callable(getattr(g, name)) for name in INSPECTION)
    w, x = torch.randn(3, 2), torch.randn(4, 3)
    assert g.would_trace(w, x, 0.5)  # nothing traced yet
    g(w, x, 0.5)
    assert not g.would_trace(w, x, 2.0)  # same key: w requires grad in both
    assert g.would_trace(w, torch.randn(5, 3), 2.0)
    g(w, x, 2.0)
    assert g.cache_info() == symscalar.CacheInfo(hits=1, misses=1, entries=1)
    assert g.last_trace() is not None and g.last_backward_trace() is not None
    assert list(g.last_fusion()) == []  # the torch backend fuses nothing
    assert len(g.explain()) == 1
    g.cache_clear()
    assert g.cache_info() == symscalar.CacheInfo(hits=0, misses=0, entries=0)
    expected = torch.func.grad(lambda w: loss(w, x, 2.0))(w)
    got = g(w, x, 2.0)
    torch.testing.assert_close(got if make is symscalar.grad else got[1], expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=14), st.integers(1, 3))
def test_eviction_follows_least_recently_used_order(calls, max_entries):
    """The per-call path moves a key to the end only when it finds another value than the
    last call's; the evictions still follow an exact LRU model."""
    f = symscalar.jit(lambda x, n: x * n, static=["n"], max_entries=max_entries, max_traces=100)
    model: collections.OrderedDict[int, None] = collections.OrderedDict()
    misses = evictions = 0
    for n in calls:
        torch.testing.assert_close(f(torch.ones(2), n), torch.full((2,), float(n)))
        if n in model:
            model.move_to_end(n)
        else:
            misses += 1
            if len(model) >= max_entries:
                model.popitem(last=False)
                evictions += 1
            model[n] = None
    assert f.cache_info() == symscalar.CacheInfo(len(calls) - misses, misses, len(model), evictions)
    assert [key[2] for key in f._symscalar_state.cache.table] == list(model)
