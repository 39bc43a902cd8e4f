"""Eager and jitted side by side: the same module twice (one called eagerly, one through
``symscalar.jit``), the same calls and the same state changes in between, and after every call
a comparison of outputs, dtypes, every parameter's ``.grad`` (including None-ness), every
buffer and every argument's gradient."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any

import torch

import symscalar


def assert_same(mine: Any, expected: Any, what: str = "output") -> None:
    if isinstance(expected, torch.Tensor):
        assert isinstance(mine, torch.Tensor), f"{what}: {type(mine).__name__}, eager gives a tensor"
        assert mine.dtype == expected.dtype, f"{what}: dtype {mine.dtype}, eager {expected.dtype}"
        assert mine.requires_grad == expected.requires_grad, f"{what}: requires_grad differs"
        torch.testing.assert_close(mine, expected, msg=lambda m: f"{what}: {m}")
    elif isinstance(expected, (tuple, list)):
        assert type(mine) is type(expected) and len(mine) == len(expected), what
        for i, (a, b) in enumerate(zip(mine, expected)):
            assert_same(a, b, f"{what}[{i}]")
    else:
        assert mine == expected, what


def assert_same_grad(mine: torch.Tensor | None, expected: torch.Tensor | None, what: str) -> None:
    assert (mine is None) == (expected is None), f"{what}.grad: {mine} vs eager {expected}"
    if expected is not None:
        assert mine is not None
        torch.testing.assert_close(mine, expected, msg=lambda m: f"{what}.grad: {m}")


def assert_same_state(mine: torch.nn.Module, eager: torch.nn.Module) -> None:
    params, ref_params = dict(mine.named_parameters()), dict(eager.named_parameters())
    assert params.keys() == ref_params.keys()
    for name, p in params.items():
        r = ref_params[name]
        assert p.dtype == r.dtype and p.requires_grad == r.requires_grad, name
        torch.testing.assert_close(p, r, msg=lambda m: f"parameter {name}: {m}")
        assert_same_grad(p.grad, r.grad, name)
    buffers, ref_buffers = dict(mine.named_buffers()), dict(eager.named_buffers())
    assert buffers.keys() == ref_buffers.keys()
    for name, b in buffers.items():
        assert_same(b, ref_buffers[name], f"buffer {name}")


def _clone(a: Any) -> Any:
    if isinstance(a, torch.Tensor):
        return a.detach().clone().requires_grad_(a.requires_grad)
    return a


class Twin:
    """A module and its jitted copy, driven identically."""

    def __init__(self, make: Callable[[], torch.nn.Module], dtype: torch.dtype = torch.float32) -> None:
        torch.manual_seed(0)
        self.eager = make().to(dtype)
        self.module = copy.deepcopy(self.eager)
        self.jitted = symscalar.jit(self.module)
        self.dtype = dtype

    def both(self, change: Callable[[torch.nn.Module], Any]) -> None:
        """Apply the same state change to both modules."""
        change(self.eager)
        change(self.module)

    def call(self, *args: Any, mode: Callable[[], Any] = contextlib.nullcontext, backward: bool = True) -> Any:
        """Call both, compare outputs; backward the same cotangent; compare all state."""
        mine_args, ref_args = [_clone(a) for a in args], [_clone(a) for a in args]
        with mode():
            expected = self.eager(*ref_args)
            out = self.jitted(*mine_args)
        assert_same(out, expected)
        outs = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        mine_outs = list(out) if isinstance(out, (tuple, list)) else [out]
        pairs = [(m, e) for m, e in zip(mine_outs, outs) if isinstance(e, torch.Tensor) and e.requires_grad]
        if backward and pairs:
            cts = [torch.randn_like(e) for _, e in pairs]
            torch.autograd.backward([e for _, e in pairs], cts)
            torch.autograd.backward([m for m, _ in pairs], cts)
        for i, (a, r) in enumerate(zip(mine_args, ref_args)):
            if isinstance(r, torch.Tensor):
                assert_same_grad(a.grad, r.grad, f"argument {i}")
        assert_same_state(self.module, self.eager)
        return out

    def sync(self) -> None:
        """Copy the eager module's values into the jitted one (in place), so that rounding
        differences of earlier float32 steps do not count against a float64 comparison."""
        self.module.load_state_dict(self.eager.state_dict())

    def step(self, lr: float = 0.1) -> None:
        """One SGD step on both (in place, as torch.optim does), then clear the grads."""
        for m in (self.eager, self.module):
            with torch.no_grad():
                for p in m.parameters():
                    if p.grad is not None:
                        p -= lr * p.grad
                        p.grad = None


def inputs(*shape: int, dtype: torch.dtype = torch.float32, requires_grad: bool = False) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype).requires_grad_(requires_grad)


@contextlib.contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)
