"""One registration path: docs/ops.md's "Adding an op" block, run as written, gives an op that
agrees with torch eagerly, traced, in gradients and under nvFuser; and every table refuses a
second registration (primitive name, vjp, nvFuser lowering, op, torch spelling)."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
import torch

import symscalar
from symscalar import DynamicFloat
from symscalar import nvfuser_backend as nb
from symscalar.errors import RegistrationError
from symscalar.frontend import OPS, TORCH_FUNCTIONS
from symscalar.nvfuser_lowering import NVFUSER_LOWERINGS, register_nvfuser
from symscalar.ops.common import torch_meta
from symscalar.ops.define import defop, implements
from symscalar.ops.elementwise import exp_p
from symscalar.trace import PRIMITIVES, VJPS, Primitive, Registry, register_vjp

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ops.md"
TABLES: tuple[Registry[Any, Any], ...] = (PRIMITIVES, VJPS, NVFUSER_LOWERINGS, OPS, TORCH_FUNCTIONS)


def adding_an_op_block() -> str:
    """The first Python block of the section "Adding an op" of docs/ops.md."""
    section = DOC.read_text().split("\n## Adding an op\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "docs/ops.md: no Python block under 'Adding an op'"
    return match.group(1)


@pytest.fixture
def sinh_op() -> Iterator[dict[str, Any]]:
    """Run the documented block; afterwards remove what it registered (every table)."""
    before = [set(table) for table in TABLES]
    namespace: dict[str, Any] = {"__name__": "docs_ops_example"}
    try:
        exec(compile(adding_an_op_block(), str(DOC), "exec"), namespace)  # noqa: S102 - our own docs
        yield namespace
    finally:
        for table, keys in zip(TABLES, before):
            for key in set(table) - keys:
                table.unregister(key)


def test_the_documented_block_is_one_op_in_every_table(sinh_op: dict[str, Any]) -> None:
    prim = PRIMITIVES["sinh"]
    assert prim is sinh_op["sinh_p"]
    assert prim in VJPS and prim in NVFUSER_LOWERINGS
    assert {"symscalar.ops.sinh", "torch.sinh", "torch.Tensor.sinh"} <= set(OPS)
    assert torch.sinh in TORCH_FUNCTIONS and torch.Tensor.sinh in TORCH_FUNCTIONS


def test_documented_op_matches_torch_eager_and_traced(sinh_op: dict[str, Any]) -> None:
    sinh = sinh_op["sinh"]
    x = torch.randn(3, 4, dtype=torch.float64)
    torch.testing.assert_close(sinh(x), torch.sinh(x), rtol=0, atol=0)  # eager: the torch lowering

    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return torch.sinh(x * s) + (x - 1).sinh() + sinh(x)

    for s in (0.5, -2.0, 3.0):  # a new dynamic value is a cache hit, never a retrace
        x = torch.randn(3, 4, dtype=torch.float64)
        torch.testing.assert_close(f(x, s), torch.sinh(x * s) + (x - 1).sinh() + torch.sinh(x))
    assert f.cache_info().misses == 1
    assert str(f.last_trace()).count("prims.sinh(") == 3


def test_documented_op_gradients_match_autograd(sinh_op: dict[str, Any]) -> None:
    f = symscalar.jit(lambda x: torch.sinh(x).sum() + x.sinh().pow(2).sum())
    for dtype in (torch.float64, torch.complex128):
        x = torch.randn(5, dtype=dtype, requires_grad=True)
        (got,) = torch.autograd.grad(f(x).real, x)
        x_ref = x.detach().clone().requires_grad_()
        (want,) = torch.autograd.grad((torch.sinh(x_ref).sum() + x_ref.sinh().pow(2).sum()).real, x_ref)
        torch.testing.assert_close(got, want)
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(symscalar.jit(lambda x: torch.sinh(x)), (x,))


def test_documented_op_is_fusible_where_supports_says(sinh_op: dict[str, Any]) -> None:
    f = symscalar.jit(lambda x: torch.sinh(x))
    f(torch.randn(3))
    (floating_eqn,) = f.last_trace().eqns
    f(torch.arange(3))  # integer input: supports=floating sends it to torch
    (integer_eqn,) = [e for e in f.last_trace().eqns if e.prim.name == "sinh"]
    assert nb.is_fusible(floating_eqn) and not nb.is_fusible(integer_eqn)


@pytest.mark.skipif(not nb.nvfuser_available(), reason="nvfuser_direct does not import here")
def test_documented_op_lowers_to_nvfuser(sinh_op: dict[str, Any]) -> None:
    f = symscalar.jit(lambda x: torch.sinh(x) * 2)
    f(torch.randn(3))
    (fusion,) = nb.lower(f.last_trace(), [None]).fusions
    assert "fd.ops.sinh" in repr(fusion)


# ---- a second registration raises, for every kind of table


def test_a_primitive_name_registers_once() -> None:
    with pytest.raises(RegistrationError, match="primitive exp is already registered"):
        Primitive("exp", torch.exp, torch_meta(torch.exp))
    assert PRIMITIVES["exp"] is exp_p


def test_a_vjp_registers_once() -> None:
    rule = VJPS[exp_p]
    with pytest.raises(RegistrationError, match="vjp of primitive exp is already registered"):
        register_vjp(exp_p, lambda ct, out, a: (ct,))
    assert VJPS[exp_p] is rule


def test_an_nvfuser_lowering_registers_once() -> None:
    lowering = NVFUSER_LOWERINGS[exp_p]
    with pytest.raises(RegistrationError, match="nvFuser lowering of primitive exp is already registered"):
        register_nvfuser(exp_p, lambda fd, a: fd.ops.exp(a))
    assert NVFUSER_LOWERINGS[exp_p] is lowering


def test_a_torch_spelling_registers_once() -> None:
    handler = TORCH_FUNCTIONS[torch.exp]
    with pytest.raises(RegistrationError, match=r"handler of torch\.exp is already registered"):
        implements(torch.exp)(lambda input: input)
    with pytest.raises(RegistrationError, match=r"handler of torch\.Tensor\.exp is already registered"):

        @defop(torch=(torch.sinh, torch.Tensor.exp))
        def test_sinh_twice(input: torch.Tensor) -> torch.Tensor:
            return input

    assert TORCH_FUNCTIONS[torch.exp] is handler
    # nothing of the refused registrations stayed behind
    assert torch.sinh not in TORCH_FUNCTIONS and "symscalar.ops.test_sinh_twice" not in OPS


def test_an_op_name_registers_once() -> None:
    with pytest.raises(RegistrationError, match=r"op symscalar\.ops\.exp is already registered"):

        @defop
        def exp(input: torch.Tensor) -> torch.Tensor:
            return input


def test_a_rule_assigned_as_an_attribute_raises() -> None:
    """The mechanism this replaced: ``prim.vjp = ...`` would be silently ignored now."""
    with pytest.raises(AttributeError):
        exp_p.vjp = lambda ct, out, a: (ct,)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        exp_p.nvfuser = lambda fd, a: a  # type: ignore[attr-defined]
