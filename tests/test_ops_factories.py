"""Factories through symscalar.jit: static shapes, dynamic fill values, torch's dtype rules,
and the static contract of shapes and arange bounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import symscalar
from symscalar import (
    DynamicFloat,
    DynamicInt,
    StaticValueRequiredError,
)
from symscalar.ops import arange, full, full_like, ones, ones_like, zeros, zeros_like


def jit(fn: Callable[..., Any]) -> Any:
    """symscalar.jit of a lambda, given a proper name first (the program is named after it)."""
    fn.__name__ = fn.__qualname__ = "f"
    return symscalar.jit(fn)


def _same(got: Any, want: Any) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype and got.device == want.device
    torch.testing.assert_close(got, want)


# (id, traced spelling, eager torch equivalent); each is a function of a tensor x
CASES: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("zeros_varargs", lambda x: zeros(2, 3), lambda x: torch.zeros(2, 3)),
    ("zeros_tuple", lambda x: zeros((2, 3)), lambda x: torch.zeros((2, 3))),
    ("zeros_dtype", lambda x: zeros(4, dtype=torch.int32), lambda x: torch.zeros(4, dtype=torch.int32)),
    ("zeros_0d", lambda x: zeros(()), lambda x: torch.zeros(())),
    ("ones_varargs", lambda x: ones(3, 1), lambda x: torch.ones(3, 1)),
    ("ones_list_device", lambda x: ones([2, 2], device="cpu"), lambda x: torch.ones([2, 2], device="cpu")),
    ("ones_dtype", lambda x: ones(2, dtype=torch.float64), lambda x: torch.ones(2, dtype=torch.float64)),
    ("full_float", lambda x: full((2, 3), 1.5), lambda x: torch.full((2, 3), 1.5)),
    ("full_int", lambda x: full((2,), 7), lambda x: torch.full((2,), 7)),
    ("full_bool", lambda x: full((2,), True), lambda x: torch.full((2,), True)),
    (
        "torch_full_dtype",
        lambda x: x + torch.full((2, 3), 2, dtype=torch.float64),
        lambda x: x + torch.full((2, 3), 2, dtype=torch.float64),
    ),
    ("zeros_like", lambda x: torch.zeros_like(x), lambda x: torch.zeros_like(x)),
    (
        "zeros_like_dtype",
        lambda x: torch.zeros_like(x, dtype=torch.int64),
        lambda x: torch.zeros_like(x, dtype=torch.int64),
    ),
    ("ones_like", lambda x: torch.ones_like(x), lambda x: torch.ones_like(x)),
    ("ones_like_op", lambda x: ones_like(x, dtype=torch.float32), lambda x: torch.ones_like(x, dtype=torch.float32)),
    ("zeros_like_op", lambda x: zeros_like(x), lambda x: torch.zeros_like(x)),
    ("full_like", lambda x: torch.full_like(x, 3.0), lambda x: torch.full_like(x, 3.0)),
    (
        "full_like_int_fill",
        lambda x: torch.full_like(x, 3, dtype=torch.int32, device="cpu"),
        lambda x: torch.full_like(x, 3, dtype=torch.int32, device="cpu"),
    ),
    ("full_like_op", lambda x: full_like(x, -1), lambda x: torch.full_like(x, -1)),
    ("new_zeros", lambda x: x.new_zeros(2, 3), lambda x: x.new_zeros(2, 3)),
    ("new_ones", lambda x: x.new_ones((4,), dtype=torch.int8), lambda x: x.new_ones((4,), dtype=torch.int8)),
    ("new_full", lambda x: x.new_full((2, 1), 0.25), lambda x: x.new_full((2, 1), 0.25)),
    ("arange_end", lambda x: arange(5), lambda x: torch.arange(5)),
    ("arange_start_end_step", lambda x: arange(1, 8, 3), lambda x: torch.arange(1, 8, 3)),
    ("arange_negative_step", lambda x: arange(5, -3, -2), lambda x: torch.arange(5, -3, -2)),
    ("arange_float_step", lambda x: arange(0, 2, 0.25), lambda x: torch.arange(0, 2, 0.25)),
    ("arange_float_bounds", lambda x: arange(0.5, 3.0), lambda x: torch.arange(0.5, 3.0)),
    ("arange_dtype", lambda x: arange(4, dtype=torch.float64), lambda x: torch.arange(4, dtype=torch.float64)),
    ("arange_empty", lambda x: arange(3, 3), lambda x: torch.arange(3, 3)),
    ("torch_zeros_static", lambda x: x + torch.zeros(2, 3), lambda x: x + torch.zeros(2, 3)),
    ("torch_arange_static", lambda x: x + torch.arange(3), lambda x: x + torch.arange(3)),
]


@pytest.mark.parametrize("traced,eager", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_eager(traced: Callable[[Any], Any], eager: Callable[[Any], Any]) -> None:
    x = torch.randn(2, 3)
    _same(jit(traced)(x), eager(x))


@pytest.mark.parametrize("name", ["zeros", "ones", "full", "arange"])
def test_factories_are_traced_not_captured(name: str) -> None:
    make = {
        "zeros": lambda: zeros(2, 3),
        "ones": lambda: ones(2, 3),
        "full": lambda: full((2, 3), 1.0),
        "arange": lambda: arange(3),
    }[name]
    f = jit(lambda x: make())
    f(torch.randn(1))
    trace = f.last_trace()
    assert [e.prim.name for e in trace.eqns] == ["arange" if name == "arange" else "full"]


def test_dynamic_fill_traces_once() -> None:
    def f(x: torch.Tensor, s: DynamicFloat, k: DynamicInt) -> Any:
        return torch.full_like(x, s), torch.full((2, 3), s), full_like(x, k), x.new_full((4,), s) + k

    jf = symscalar.jit(f)
    x = torch.randn(2, 3)
    for s, k in [(0.5, 1), (-2.0, 7), (3.25, -4)]:
        got = jf(x, s, k)
        want = (torch.full_like(x, s), torch.full((2, 3), s), torch.full_like(x, k), x.new_full((4,), s) + k)
        for g, w in zip(got, want):
            _same(g, w)
    assert jf.cache_info().misses == 1
    assert jf.cache_info().hits == 2


@pytest.mark.parametrize("fill", [torch.tensor(2.5), torch.tensor(3), torch.tensor(True)], ids=str)
def test_tensor_fill_value_is_broadcast(fill: torch.Tensor) -> None:
    f = jit(lambda x, t: x.sum() * 0 + torch.full((2, 3), t))
    x = torch.randn(1)
    _same(f(x, fill), x.sum() * 0 + torch.full((2, 3), fill))
    assert all(e.prim.name != "full" for e in f.last_trace().eqns)


def test_grad_through_full_like() -> None:
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return (x * torch.full_like(x, s) + torch.zeros_like(x) + torch.ones_like(x)).exp()

    jf = symscalar.jit(f)
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    for s in (0.5, 2.0):
        (g,) = torch.autograd.grad(jf(x, s).sum(), x)
        (want,) = torch.autograd.grad(f(x, s).sum(), x)
        torch.testing.assert_close(g, want)
        assert torch.autograd.gradcheck(lambda x: jf(x, s), (x,))
    symscalar.check_trace(jf.last_backward_trace())
    assert jf.cache_info().misses == 1


def _n(fn: Callable[[torch.Tensor, Any], Any]) -> Any:
    def f(x: torch.Tensor, n: DynamicInt) -> Any:
        return fn(x, n)

    return symscalar.jit(f)


DYNAMIC_CASES: list[tuple[str, str, Callable[[torch.Tensor, Any], Any]]] = [
    ("torch.zeros", "size", lambda x, n: torch.zeros((n, 3))),
    ("torch.zeros", "size", lambda x, n: torch.zeros(3, n)),
    ("torch.ones", "size", lambda x, n: torch.ones(2, n)),
    ("torch.ones", "size", lambda x, n: torch.ones([n])),
    ("symscalar.ops.zeros", "size", lambda x, n: zeros(n, 3)),
    ("symscalar.ops.ones", "size", lambda x, n: ones((2, n))),
    ("torch.full", "size", lambda x, n: torch.full((n, 2), 1.0)),
    ("symscalar.ops.full", "shape", lambda x, n: full((n,), 1.0)),
    ("torch.Tensor.new_zeros", "size", lambda x, n: x.new_zeros(2, n)),
    ("torch.Tensor.new_ones", "size", lambda x, n: x.new_ones((n,))),
    ("torch.Tensor.new_full", "size", lambda x, n: x.new_full((n,), 1.0)),
    ("torch.arange", "start", lambda x, n: torch.arange(n)),
    ("torch.arange", "end", lambda x, n: torch.arange(0, n)),
    ("torch.arange", "step", lambda x, n: torch.arange(0, 5, n)),
    ("torch.arange", "end", lambda x, n: torch.arange(0, n + 1, dtype=torch.float32)),
    ("symscalar.ops.arange", "start", lambda x, n: arange(n)),
    ("symscalar.ops.arange", "step", lambda x, n: arange(0, 4, n)),
    ("torch.empty", "size", lambda x, n: torch.empty(n)),
]


@pytest.mark.parametrize(
    "spelling,param,fn", DYNAMIC_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(DYNAMIC_CASES)]
)
def test_dynamic_value_in_static_parameter_raises(spelling: str, param: str, fn: Any) -> None:
    with pytest.raises(StaticValueRequiredError) as info:
        _n(fn)(torch.randn(2, 3), 2)
    message = str(info.value)
    assert message.startswith(f'{spelling}: parameter "{param}" must be static'), message
    assert "parameter 'n'" in message


def test_dynamic_first_size_is_rejected_by_torch() -> None:
    # torch's argument parser rejects a non-int first vararg size before dispatching to
    # __torch_function__; the value is never baked in.
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        _n(lambda x, n: torch.zeros(n, 3))(torch.randn(2), 2)


def test_specialized_shape_is_allowed() -> None:
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return x.sum() + arange(symscalar.specialize(n))

    jf = symscalar.jit(f)
    x = torch.randn(3)
    for n in (3, 4, 3):
        _same(jf(x, n), x.sum() + torch.arange(n))
    assert jf.cache_info().misses == 2


@pytest.mark.parametrize(
    "fn",
    [lambda x: torch.empty_like(x), lambda x: x.new_empty(2, 3), lambda x: torch.empty_like(x, dtype=torch.int64)],
    ids=["empty_like", "new_empty", "empty_like_dtype"],
)
def test_uninitialized_factories_give_eager_shape_and_dtype(fn: Any) -> None:
    """Uninitialized memory may hold any values; the program's hold zeros."""
    x = torch.randn(2, 3)
    got, expected = jit(fn)(x), fn(x)
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    assert torch.equal(got, torch.zeros_like(expected))


# ---- lightning-thunder's OpInfo samples


# thunder OpInfo name -> (symscalar spelling, torch spelling), both called as f(*args, **kwargs)
THUNDER_REFERENCES: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "full": (full, torch.full),
    "zeros": (zeros, torch.zeros),
    "ones": (ones, torch.ones),
    "arange": (arange, torch.arange),
    "full_like": (torch.full_like, torch.full_like),
    "zeros_like": (torch.zeros_like, torch.zeros_like),
}


@pytest.mark.slow  # lightning-thunder's samples: left out by `make test-fast`
@pytest.mark.parametrize("name", sorted(THUNDER_REFERENCES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_thunder_samples(name: str, dtype: torch.dtype, thunder_opinfos: Any) -> None:
    traced, eager = THUNDER_REFERENCES[name]
    checked = 0
    for sample in thunder_opinfos.get_opinfo(name).sample_inputs("cpu", dtype):
        args, kwargs = sample.args, sample.kwargs
        if args and isinstance(args[0], torch.Tensor):
            f = jit(lambda x: traced(x, *args[1:], **kwargs))
            _same(f(args[0]), eager(*args, **kwargs))
        else:
            f = jit(lambda x: traced(*args, **kwargs))
            _same(f(torch.zeros(1)), eager(*args, **kwargs))
        checked += 1
    assert checked > 0


def test_size_keyword_forms() -> None:
    x = torch.randn(2)
    _same(jit(lambda x: x.new_zeros(size=(2, 3)))(x), x.new_zeros(size=(2, 3)))
    _same(jit(lambda x: x.new_ones(size=[3]))(x), x.new_ones(size=[3]))
    with pytest.raises(StaticValueRequiredError, match=r'torch\.ones: parameter "size"'):
        _n(lambda x, n: torch.ones(size=(n, 2)))(x, 2)
    with pytest.raises(StaticValueRequiredError, match=r'torch\.Tensor\.new_zeros: parameter "size"'):
        _n(lambda x, n: x.new_zeros(size=(n,)))(x, 2)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_factories() -> None:
    def f(x: torch.Tensor, s: DynamicFloat) -> Any:
        return (
            torch.full_like(x, s),
            torch.zeros_like(x),
            x.new_ones(2, 3),
            x.new_full((2,), s),
            zeros(2, device="cuda"),
            arange(0, 1, 0.25, device="cuda"),
        )

    jf = symscalar.jit(f)
    x = torch.randn(2, 3, device="cuda")
    for s in (1.5, -2.0):
        want = (
            torch.full_like(x, s),
            torch.zeros_like(x),
            x.new_ones(2, 3),
            x.new_full((2,), s),
            torch.zeros(2, device="cuda"),
            torch.arange(0, 1, 0.25, device="cuda"),
        )
        for g, w in zip(jf(x, s), want, strict=True):
            _same(g, w)
    assert jf.cache_info().misses == 1
