"""Ambient torch state changed *inside* a traced function, and autograd modes through it:
``enable_grad()`` / ``set_grad_enabled(True)`` regions in a call made without grad build eager's
graph; torch's global RNG functions are refused (they would run once, at trace time);
``autograd.grad(is_grads_batched=True, create_graph=True)`` is refused rather than returning
gradients without a graph; an in-place update of a parameter follows eager's rule (legal under
``no_grad``, refused otherwise) and a later differentiable read of it is refused.

Every working case runs eager and jitted side by side over several calls with the parameters
changing in between, and compares values, dtypes, requires_grad and every gradient."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any

import pytest
import torch
from state_support import assert_same, assert_same_grad, inputs
from torch import nn

import symscalar
from symscalar import UnsupportedOperationError

DTYPES = [torch.float32, torch.float64]


class Region(nn.Module):
    """A grad region inside forward: ``a`` runs with the caller's grad mode, ``b`` with grad."""

    def __init__(self, region: Callable[[], Any]) -> None:
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 2)
        self.region = region

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = torch.tanh(self.a(x))  # without grad in a no_grad call: carries no gradient
        with self.region():
            y = self.b(h) * h.sum()  # a graph to b only, as in eager
            inner = self.b.weight.sum() * 2
        z = y + 1  # after the region: no grad again
        return y, z, h, inner


REGIONS = {
    "enable_grad": torch.enable_grad,
    "set_grad_enabled(True)": lambda: torch.set_grad_enabled(True),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("region", REGIONS)
def test_an_enable_grad_region_in_a_call_without_grad_builds_eagers_graph(region: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    eager = Region(REGIONS[region]).to(dtype)
    module = copy.deepcopy(eager)
    jitted = symscalar.jit(module)
    for _ in range(3):
        x = inputs(4, 3, dtype=dtype)
        with torch.no_grad():
            expected, out = eager(x), jitted(x)
        assert_same(out, expected)  # values, dtypes and requires_grad of every output
        ct = torch.randn_like(expected[0])
        ((expected[0] * ct).sum() + expected[3]).backward()
        ((out[0] * ct).sum() + out[3]).backward()
        for (name, p), mine in zip(eager.named_parameters(), module.parameters()):
            assert_same_grad(mine.grad, p.grad, name)
        with torch.no_grad():  # an optimizer step on both, then a fresh call
            for m in (eager, module):
                for p in m.parameters():
                    if p.grad is not None:
                        p -= 0.1 * p.grad
                        p.grad = None
        x = inputs(4, 3, dtype=dtype, requires_grad=True)
        assert_same(jitted(x), eager(x))  # and with grad enabled: a different entry


def test_set_grad_enabled_called_as_a_function_is_refused() -> None:
    def leaks(x: torch.Tensor) -> torch.Tensor:
        torch.set_grad_enabled(True)
        return x * 2

    with torch.no_grad():
        with pytest.raises(UnsupportedOperationError, match="left grad mode enabled"):
            symscalar.jit(leaks)(torch.ones(2))
        assert not torch.is_grad_enabled()  # the failed trace did not leak it either


def test_a_grad_region_inside_inference_mode_is_refused() -> None:
    w = torch.ones(2, requires_grad=True)

    def region(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode(False):
            return x * w

    with torch.inference_mode():
        with pytest.raises(UnsupportedOperationError, match=r"inference_mode\(False\)"):
            symscalar.jit(region)(torch.ones(2))


def test_enable_grad_inside_inference_mode_builds_no_graph_as_eager() -> None:
    w = torch.ones(2, requires_grad=True)

    def region(x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            return x * w

    jitted = symscalar.jit(region)
    with torch.inference_mode():
        for scale in (1.0, 2.0):
            x = torch.full((2,), scale)
            assert_same(jitted(x), region(x))


# ----------------------------------------------------------------------------------------
# torch's global RNG state

RNG_CALLS: dict[str, Callable[[], Any]] = {
    "torch.get_rng_state": lambda: torch.get_rng_state(),
    "torch.set_rng_state": lambda: torch.set_rng_state(torch.get_rng_state()),
    "torch.random.fork_rng": lambda: torch.random.fork_rng().__enter__(),
    "torch.manual_seed": lambda: torch.manual_seed(0),
    "torch.seed": lambda: torch.seed(),
    "torch.cuda.get_rng_state_all": lambda: torch.cuda.get_rng_state_all(),
    "torch.cuda.manual_seed_all": lambda: torch.cuda.manual_seed_all(0),
}


@pytest.mark.parametrize("call", RNG_CALLS)
def test_global_rng_functions_inside_a_traced_function_are_refused(call: str) -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        RNG_CALLS[call]()
        return torch.nn.functional.dropout(x, 0.5, training=True)

    state = torch.get_rng_state()
    first = call.split(".")[0] if call.count(".") == 1 else call.rsplit(".", 1)[0]
    with pytest.raises(UnsupportedOperationError, match=rf"{first}\.\w+\(\) inside a traced function"):
        symscalar.jit(f)(torch.ones(4))
    assert torch.equal(torch.get_rng_state(), state)  # refused before it changed anything
    assert torch.get_rng_state is not None and not hasattr(torch.get_rng_state, "__symscalar_original__")
    RNG_CALLS["torch.get_rng_state"]()  # eager calls work again after the trace


def test_rng_functions_called_outside_the_jitted_function_reproduce_as_before() -> None:
    jitted = symscalar.jit(lambda x: torch.nn.functional.dropout(x, 0.5, training=True))
    x = torch.ones(64)
    torch.manual_seed(3)
    first = jitted(x)
    state = torch.get_rng_state()
    second = jitted(x)
    torch.set_rng_state(state)
    assert torch.equal(jitted(x), second)
    assert not torch.equal(first, second)


# ----------------------------------------------------------------------------------------
# Batched gradients through a jitted function


def _f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.sin(x * w) * w


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_gradients_match_eager_and_with_create_graph_are_refused(dtype: torch.dtype) -> None:
    jitted = symscalar.jit(_f)
    w = inputs(3, dtype=dtype, requires_grad=True)
    for _ in range(2):
        x = inputs(3, dtype=dtype, requires_grad=True)
        cts = torch.eye(3, dtype=dtype)
        (want,) = torch.autograd.grad(_f(x, w), x, cts, is_grads_batched=True)
        (got,) = torch.autograd.grad(jitted(x, w), x, cts, is_grads_batched=True)
        assert_same(got, want)
        # create_graph without batching: a graph, and the second-order gradient of eager
        (gx,) = torch.autograd.grad(_f(x, w).sum(), x, create_graph=True)
        (gx_mine,) = torch.autograd.grad(jitted(x, w).sum(), x, create_graph=True)
        assert_same(gx_mine, gx)
        assert_same(torch.autograd.grad(gx_mine.sum(), w), torch.autograd.grad(gx.sum(), w))
        with pytest.raises(UnsupportedOperationError, match="is_grads_batched=True, create_graph=True"):
            torch.autograd.grad(jitted(x, w), x, cts, is_grads_batched=True, create_graph=True)
        with pytest.raises(UnsupportedOperationError, match="vectorize=True"):
            torch.autograd.functional.jacobian(lambda x: jitted(x, w), x, vectorize=True, create_graph=True)
        with torch.no_grad():
            w.mul_(1.5)


# ----------------------------------------------------------------------------------------
# In-place updates of parameters inside the traced function


def _sgd(model: nn.Module) -> Callable[..., torch.Tensor]:
    def step(x: torch.Tensor, grads: list[torch.Tensor], lr: float) -> torch.Tensor:
        with torch.no_grad():
            for p, g in zip(model.parameters(), grads):
                p.sub_(lr * g)
            return model(x)

    return step


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_manual_sgd_step_under_no_grad_inside_the_function_matches_eager(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    eager = nn.Linear(3, 2).to(dtype)
    module = copy.deepcopy(eager)
    eager_step, jitted_step = _sgd(eager), symscalar.jit(_sgd(module))
    for k in range(4):
        x = inputs(4, 3, dtype=dtype)
        for m in (eager, module):
            m.zero_grad(set_to_none=True)
            (m(x) ** 2).sum().backward()
        mode = torch.no_grad if k == 3 else contextlib.nullcontext  # a call under no_grad too
        with mode():
            expected = eager_step(x, [p.grad for p in eager.parameters()], 0.1)
            out = jitted_step(x, [p.grad for p in module.parameters()], 0.1)
        assert_same(out, expected)
        for p, mine in zip(eager.parameters(), module.parameters()):
            torch.testing.assert_close(mine, p)
            assert mine.requires_grad and mine.is_leaf


def test_in_place_updates_of_a_parameter_follow_eagers_rule_or_are_refused() -> None:
    lin = nn.Linear(3, 2)

    def with_grad(x: torch.Tensor) -> torch.Tensor:
        lin.weight.add_(1.0)
        return x

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        with_grad(torch.ones(3))  # eager refuses it
    with pytest.raises(RuntimeError, match=r"a leaf Variable that requires grad .*torch.no_grad\(\)"):
        symscalar.jit(with_grad)(torch.ones(3))

    def read_after(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            lin.weight.add_(1.0)
        return lin(x)

    before = lin.weight.detach().clone()
    with pytest.raises(UnsupportedOperationError, match=r"after updating it in place under torch\.no_grad"):
        symscalar.jit(read_after)(torch.ones(3))
    torch.testing.assert_close(lin.weight, before)  # the failed trace changed nothing
