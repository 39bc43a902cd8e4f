"""The cases lightning-thunder 0.2.6 "symbolic values" gets wrong on cache hits (stale results,
wrong gradients, a symbolic value in a backward reduction's axes), called several times with
changing dynamic values: forward and gradients equal eager torch on every call, the retrace
count is exactly the number of distinct static configurations, and every backward trace is
checked and takes its dynamic scalars as inputs."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar.trace import ScalarVar, check_trace, is_var

# The cases' tensors are made when this module is imported: from a generator of their own, so
# that their values do not depend on what the importing process drew before (an xdist worker
# imports modules in any order; tests/test_nvfuser_numerics.py compares them in float32 too).
_VALUES = torch.Generator().manual_seed(0)


def T(*shape: int) -> torch.Tensor:  # noqa: N802 - reads like the math it tests
    """A fresh float64 tensor that requires grad (positive entries, safe for pow)."""
    return (torch.rand(*shape, dtype=torch.float64, generator=_VALUES) + 0.5).requires_grad_()


@dataclass
class Case:
    name: str
    fn: Callable[..., torch.Tensor]
    calls: list[tuple[Any, ...]]  # argument tuples; tensors are made fresh per call
    misses: int  # expected number of traces
    dynamic: list[str] = field(default_factory=list)
    static: list[str] = field(default_factory=list)
    backward_scalars: int = 0  # dynamic scalars the backward must read as inputs


CASES = [
    Case("a * s", lambda a, s: a * s, [(T(3, 4), s) for s in (0.5, 2.0, -1.5)], 1, ["s"], backward_scalars=1),
    Case(
        "a.abs() ** p", lambda a, p: a.abs() ** p, [(T(3, 4), p) for p in (2.0, 0.5, 3.0)], 1, ["p"], backward_scalars=1
    ),
    Case(
        "softmax(a, d) * s",
        lambda a, s, d: torch.softmax(a, d) * s,
        [(T(3, 4), 0.5, 1), (T(3, 4), 2.0, 1), (T(3, 4), 1.0, 0), (T(3, 4), 3.0, 0)],
        2,
        ["s"],
        ["d"],
        backward_scalars=1,
    ),
    Case("a.sum(d)", lambda a, d: a.sum(d), [(T(3, 4), d) for d in (0, 1, 0, -1)], 3, static=["d"]),
    Case(
        "a.sum((d0, d1))",
        lambda a, d0, d1: a.sum((d0, d1)),
        [(T(2, 3, 4), 0, 1), (T(2, 3, 4), 1, 2), (T(2, 3, 4), 0, 1)],
        2,
        static=["d0", "d1"],
    ),
    Case(
        "a.mean(d) * s",
        lambda a, s, d: a.mean(d) * s,
        [(T(3, 4), 0.5, 0), (T(3, 4), 1.5, 0), (T(3, 4), 2.5, 1), (T(3, 4), 3.5, 1)],
        2,
        ["s"],
        ["d"],
        backward_scalars=1,
    ),
    Case("a.unsqueeze(d) * 2", lambda a, d: a.unsqueeze(d) * 2, [(T(3, 4), d) for d in (0, 1, 2, 0)], 3, static=["d"]),
    Case(
        "a.transpose(d0, d1) * 2",
        lambda a, d0, d1: a.transpose(d0, d1) * 2,
        [(T(2, 3, 4), 0, 1), (T(2, 3, 4), 1, 2), (T(2, 3, 4), 0, 1)],
        2,
        static=["d0", "d1"],
    ),
    Case(
        "cat([a, b], d)",
        lambda a, b, d: torch.cat([a, b], d),
        [(T(2, 3), T(2, 3), 0), (T(2, 3), T(2, 3), 1), (T(2, 3), T(2, 3), 0)],
        2,
        static=["d"],
    ),
    Case(
        "a + b, b broadcast then not",
        lambda a, b: a + b,
        [(T(2, 3), T(2, 1)), (T(2, 3), T(2, 3)), (T(2, 3), T(2, 1))],
        2,
    ),
    Case("a * a.shape[1]", lambda a: a * a.shape[1], [(T(2, 3),), (T(2, 5),), (T(2, 3),)], 2),
    Case(
        "layer_norm, dynamic eps",
        lambda a, w, b, eps: F.layer_norm(a, (4,), w, b, eps=eps),
        # the backward reads rsqrt(var + eps) saved from the forward, so eps itself is not
        # a backward input; what matters is that no value of eps is baked in (checked below)
        [(T(3, 4), T(4), T(4), eps) for eps in (1e-5, 1e-2, 0.5)],
        1,
        ["eps"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hazard_case(case: Case) -> None:
    f = symscalar.jit(case.fn, dynamic=case.dynamic, static=case.static)
    for args in case.calls:
        mine = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in args]
        ref = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in args]
        out = f(*mine)
        expected = case.fn(*ref)
        torch.testing.assert_close(out, expected)
        cotangent = torch.randn_like(expected)
        tensors = [a for a in mine if isinstance(a, torch.Tensor)]
        ref_tensors = [a for a in ref if isinstance(a, torch.Tensor)]
        grads = torch.autograd.grad(out, tensors, cotangent)
        ref_grads = torch.autograd.grad(expected, ref_tensors, cotangent)
        for g, r in zip(grads, ref_grads):
            torch.testing.assert_close(g, r)
    assert f.cache_info().misses == case.misses
    backward = f.last_backward_trace()
    check_trace(backward)  # no dynamic value in any static parameter
    scalar_inputs = [v for v in backward.inputs if isinstance(v, ScalarVar)]
    assert len(scalar_inputs) == case.backward_scalars
    last_dynamic = [a for a, name in zip(case.calls[-1], _params(case.fn)) if name in case.dynamic]
    literals = [a for eqn in backward.eqns for a in eqn.args if not is_var(a)]
    for value in last_dynamic:
        assert value not in literals  # read as an input, never baked in as a literal


def _params(fn: Callable[..., Any]) -> list[str]:
    return list(fn.__code__.co_varnames[: fn.__code__.co_argcount])


def test_backward_reads_the_new_dynamic_value_on_a_cache_hit() -> None:
    f = symscalar.jit(lambda a, p: (a**p).sum(), dynamic=["p"])
    base = torch.rand(5, dtype=torch.float64) + 0.5
    for p in (2.0, 3.0, 0.5):
        a = base.clone().requires_grad_()
        (g,) = torch.autograd.grad(f(a, p), a)
        torch.testing.assert_close(g, p * base ** (p - 1))
    assert f.cache_info().misses == 1
