"""State writes in forward: assigning a traced tensor to a module attribute (an EMA, running
statistics, a growing KV cache) and in-place writes recorded with ``TraceBuilder.write_back``
are replayed after every call with eager's semantics (the state equals eager's after each
call, with its requires_grad and graph where a gradient flows); Python state writes, traced
tensors stored in containers and nonlocal rebinding are refused, and nothing traced is left
behind."""

from __future__ import annotations

import pytest
import torch
from state_support import Twin, assert_same, inputs
from torch import nn

import symscalar
from symscalar.errors import UnsupportedOperationError
from symscalar.proxy import TensorProxy
from symscalar.types import current_tracer

DTYPES = [torch.float32, torch.float64]


class EMA(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("avg", torch.zeros(3))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        self.avg = 0.9 * self.avg + 0.1 * y.detach().mean(0)
        self.count = self.count + 1
        return y - self.avg if self.training else y


class RunningStats(nn.Module):
    """Batch statistics in training, running statistics in eval, updated by assignment."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("var", torch.ones(3))
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            with torch.no_grad():
                self.mean = 0.9 * self.mean + 0.1 * x.mean(0)
                self.var = 0.9 * self.var + 0.1 * x.var(0)
            m, v = x.mean(0), x.var(0)
        else:
            m, v = self.mean, self.var
        return (x - m) / (v + 1e-5).sqrt() * self.w


class KVCache(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(0, 3))
        self.q = nn.Parameter(torch.randn(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.cache = torch.cat([self.cache, x.detach()], 0)
        return torch.softmax(self.cache @ self.q, 0) @ self.cache


class Attribute(nn.Module):
    """A plain (non-buffer) tensor attribute, written with a gradient flowing through it."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.last = torch.zeros(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.last = x.sum(0) * self.w
        return self.last.sum() + x.sum()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", [EMA, RunningStats, KVCache], ids=["ema", "running-stats", "kv-cache"])
def test_state_written_by_assignment(make, dtype):
    twin = Twin(make, dtype)
    for i in range(4):
        if i == 3:
            twin.both(lambda m: m.eval())
        # (the KV cache's input only enters through detach(): its gradient is None-ness of
        # stop_gradient, a question for tests/test_autograd_semantics.py, not for state)
        twin.call(inputs(4, 3, dtype=dtype, requires_grad=make is not KVCache))
        twin.step()
        twin.call(inputs(4, 3, dtype=dtype), mode=torch.no_grad)
    for m in (twin.module, *twin.module.modules()):
        assert not any(isinstance(v, TensorProxy) for v in vars(m).values())
        assert not any(isinstance(v, TensorProxy) for v in m._buffers.values())


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_written_attribute_keeps_eager_autograd(dtype):
    twin = Twin(Attribute, dtype)
    for _ in range(3):
        twin.call(inputs(4, 3, dtype=dtype, requires_grad=True), backward=False)
        assert twin.module.last.requires_grad and twin.eager.last.requires_grad
        g = torch.autograd.grad(twin.module.last.sum(), twin.module.w)
        r = torch.autograd.grad(twin.eager.last.sum(), twin.eager.w)
        torch.testing.assert_close(g, r)
        twin.step()


def write_in_place(target: torch.Tensor, value: torch.Tensor) -> None:
    """``target.copy_(value)`` eagerly; recorded as a write-back while tracing (what an
    in-place op on captured state records)."""
    tracer = current_tracer.get()
    if tracer is None:
        with torch.no_grad():
            target.copy_(value)
    else:
        tracer.write_back(target, value)


class InPlace(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        new = self.total + x.detach().sum(0)
        write_in_place(self.total, new)
        return x * self.w + new


@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_write_backs_are_copied_after_every_call(dtype):
    twin = Twin(InPlace, dtype)
    buffer = twin.module.total
    for _ in range(3):
        twin.call(inputs(4, 3, dtype=dtype, requires_grad=True))
        twin.step()
    assert twin.module.total is buffer  # written in place, like eager
    # a replaced buffer (load_state_dict(assign=True)) is the one written
    twin.both(lambda m: m.load_state_dict({k: v.clone() for k, v in m.state_dict().items()}, assign=True))
    twin.call(inputs(4, 3, dtype=dtype))
    assert twin.module.total is not buffer


def test_python_state_writes_are_refused_and_undone():
    class Counter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.calls += 1
            return x * 2

    m = Counter()
    with pytest.raises(UnsupportedOperationError, match=r"Counter.calls = 1 \(was 0\)"):
        symscalar.jit(m)(inputs(3))
    assert m.calls == 0


def test_traced_tensors_in_containers_are_refused_and_removed():
    class ListCache(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cache: list[torch.Tensor] = []

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.cache.append(x * 2)
            return x

    m = ListCache()
    with pytest.raises(UnsupportedOperationError, match=r"ListCache.cache \(a list\)"):
        symscalar.jit(m)(inputs(3))
    assert m.cache == []


def test_nonlocal_rebinding_is_refused():
    state = torch.zeros(3)

    def f(x: torch.Tensor) -> torch.Tensor:
        nonlocal state
        state = x * 2
        return x

    with pytest.raises(UnsupportedOperationError, match="closure variable 'state'"):
        symscalar.jit(f)(inputs(3))
    assert isinstance(state, torch.Tensor) and not isinstance(state, TensorProxy)


def test_a_failed_trace_leaves_the_module_as_it_was():
    class Fails(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("avg", torch.zeros(3))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.avg = self.avg + x
            return x.item()

    m = Fails()
    with pytest.raises(symscalar.DynamicValueError):
        symscalar.jit(m)(inputs(3))
    assert not isinstance(m.avg, TensorProxy)
    assert_same(m.avg, torch.zeros(3))


class LateBuffers(nn.Module):
    """Registers buffers from traced values inside forward, as lazily initialised caches do."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        self.register_buffer("last", y.detach().mean(0))
        self.register_buffer("scratch", y.detach().sum(0), persistent=False)
        self.plain = y.detach().amax()  # a plain attribute stays a plain attribute
        return y * 2


def test_register_buffer_in_forward_is_replayed_as_a_buffer():
    eager = LateBuffers()
    twin = LateBuffers()
    twin.load_state_dict(eager.state_dict())
    jitted = symscalar.jit(twin)
    for step in range(3):
        x = torch.randn(4, 3)
        torch.testing.assert_close(jitted(x), eager(x))
        assert dict(twin.named_buffers()).keys() == dict(eager.named_buffers()).keys() == {"last", "scratch"}
        assert twin.state_dict().keys() == eager.state_dict().keys()  # "scratch" is not persistent
        for name in ("last", "scratch"):
            torch.testing.assert_close(getattr(twin, name), getattr(eager, name))
        assert "plain" not in twin._buffers and type(twin.plain) is torch.Tensor
        torch.testing.assert_close(twin.plain, eager.plain)
        with torch.no_grad():
            for p, q in zip(eager.parameters(), twin.parameters()):
                p.add_(0.1 * step)
                q.add_(0.1 * step)


class FlippingPersistence(nn.Module):
    """Re-registers an existing buffer with a persistence that depends on the mode, and
    registers new buffers in an order that is not sorted."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("b", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.register_buffer("b", self.b + x, persistent=not self.training)
        self.register_buffer("z", x * 2)
        self.register_buffer("a", x * 3)
        self.register_buffer("m", x * 4)
        return x + 1


def test_register_buffer_persistence_and_order_follow_eager_on_every_call():
    eager, twin = FlippingPersistence(), FlippingPersistence()
    jitted = symscalar.jit(twin)
    for training in (True, False, True, False, True):
        eager.train(training)
        jitted.train(training)
        x = torch.randn(3)
        torch.testing.assert_close(jitted(x), eager(x))
        assert list(twin.state_dict()) == list(eager.state_dict())  # keys, their order, persistence
        assert [n for n, _ in twin.named_buffers()] == [n for n, _ in eager.named_buffers()]
        for (_, e), (_, j) in zip(eager.named_buffers(), twin.named_buffers()):
            torch.testing.assert_close(j, e)
    # one trace per mode, and one more: the first call registered z, a, m, so the module holds
    # more buffers than when it was traced (a structure change retraces)
    assert jitted.cache_info().misses == 3


# ----------------------------------------------------------------------------------------
# A tensor the function builds from Python values is built once, while tracing; an in-place
# update of it with a traced value would carry over from call to call (it was written back
# into that constant, so `buf = torch.zeros(3); buf += x` returned x, 2x, 3x...). Refused.

BUILT_HERE_UPDATES = {
    "iadd": lambda buf, x: buf.__iadd__(x),
    "add_": lambda buf, x: buf.add_(x),
    "copy_": lambda buf, x: buf.copy_(x),
    "masked_fill_": lambda buf, x: buf.masked_fill_(x > 0, 1.0),
    "setitem": lambda buf, x: buf.__setitem__(slice(0, 2), x[:2]),
    "mul_": lambda buf, x: buf.mul_(x),
}


@pytest.mark.parametrize("name", list(BUILT_HERE_UPDATES))
def test_updating_a_tensor_built_from_python_values_with_a_traced_value_is_refused(name):
    update = BUILT_HERE_UPDATES[name]

    def f(x):
        buf = torch.zeros(3)
        update(buf, x)
        return buf * 1

    x = torch.ones(3)
    assert [f(x).tolist() for _ in range(2)] == [f(x).tolist()] * 2  # eager: a fresh buffer per call
    with pytest.raises(UnsupportedOperationError, match=r"built from Python values alone.*out-of-place"):
        symscalar.jit(f)(x)


def test_updating_a_tensor_built_from_a_traced_one_matches_eager_on_every_call():
    def f(x):
        buf = x.new_zeros(3)
        buf += x
        buf[1:] = x[:2] * 2
        return buf

    jf = symscalar.jit(f)
    for _ in range(3):
        x = torch.randn(3)
        torch.testing.assert_close(jf(x), f(x), rtol=0, atol=0)
    assert jf.cache_info().misses == 1


def test_updating_a_constant_after_a_traced_op_read_it_is_refused():
    """Once a traced op has read it, the constant is an input of the program, read on every
    call: an update even with constants only would be written into it (the second call read
    2.0 where eager reads 0.0)."""

    def f(x):
        buf = torch.zeros(3)
        y = x + buf
        buf.fill_(2.0)
        return y + buf

    jf = symscalar.jit(f)
    with pytest.raises(UnsupportedOperationError, match="built from Python values alone"):
        for _ in range(2):
            torch.testing.assert_close(jf(torch.ones(3)), f(torch.ones(3)))
