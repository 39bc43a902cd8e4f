"""Algebraic no-ops removed from traces: ``x ** 1``, ``x * 1``, ``x / 1``, ``x - 0``, a reshape,
expand or permute that keeps the shape, a conversion to the same dtype.

Why: gradient rules are written once for every case (``ct * b * a ** (b - 1)`` is ``pow(a, 1)``
when ``b == 2``), and user code reshapes to the shape it already has; each such equation is a
kernel and a temporary in the torch backend. Each rule here replaces an equation's result by one
of its operands only where eager torch would compute exactly that value, bit for bit:

- the result has the operand's shape, dtype and device (``int_tensor * 1.0`` promotes: kept);
- arithmetic only on real tensors (``z * 1`` is NaN where a complex ``z`` holds an infinity);
- ``x + 0`` only on integers and booleans (``-0.0 + 0`` is ``+0.0``); ``x + (-0.0)`` and
  ``x - 0`` are exact for floats too; ``x / 1`` only without a rounding mode;
- static literals only: a dynamic scalar that happens to be 1 stays a program input.

A trace output is never replaced (the caller gets a new tensor, as from eager ``x * 1``), so
the simplified trace has the same inputs, outputs and types: it needs no new check.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from symscalar.ops.elementwise import add_p, div_p, mul_p, pow_p, sub_p
from symscalar.ops.factories import convert_element_type_p
from symscalar.ops.shape import expand_p, permute_p, reshape_p
from symscalar.trace import Atom, Eqn, Primitive, TensorVar, Trace, is_var

__all__ = ["simplify", "IDENTITIES"]


def _literal(value: Any, *targets: float) -> bool:
    """A static number equal to one of ``targets`` (``-0.0`` told apart from ``0.0``)."""
    return type(value) in (int, float, bool) and any(
        value == t and math.copysign(1.0, value) == math.copysign(1.0, t) for t in targets
    )


def _real(x: Any) -> bool:
    return isinstance(x, TensorVar) and not x.dtype.is_complex


def _integral(x: Any) -> bool:
    return isinstance(x, TensorVar) and not x.dtype.is_floating_point and not x.dtype.is_complex


def _mul_identity(a: Atom, b: Atom) -> Atom:
    if _literal(b, 1.0) and _real(a):  # the literal first: most operands are variables
        return a
    if _literal(a, 1.0) and _real(b):
        return b
    return None


def _add_identity(a: Atom, b: Atom) -> Atom:
    for x, c in ((a, b), (b, a)):
        if (_literal(c, -0.0) or (_literal(c, 0.0) and _integral(x))) and _real(x):
            return x
    return None


# primitive -> rule(*args, **params): the operand equal to the result, or None
IDENTITIES: dict[Primitive, Callable[..., Atom]] = {
    mul_p: _mul_identity,
    add_p: _add_identity,
    sub_p: lambda a, b: a if _literal(b, 0.0, -0.0) and _real(a) else None,
    div_p: lambda a, b, rounding_mode=None: a if rounding_mode is None and _literal(b, 1.0) and _real(a) else None,
    pow_p: lambda a, b: a if _literal(b, 1.0) and _real(a) else None,
    reshape_p: lambda x, *, shape: x if isinstance(x, TensorVar) and tuple(shape) == x.shape else None,
    expand_p: lambda x, *, shape: x if isinstance(x, TensorVar) and tuple(shape) == x.shape else None,
    permute_p: lambda x, *, dims: x if tuple(dims) == tuple(range(len(dims))) else None,
    convert_element_type_p: lambda x, *, dtype: x if isinstance(x, TensorVar) and dtype == x.dtype else None,
}


def simplify(trace: Trace) -> Trace:
    """``trace`` without the equations ``IDENTITIES`` proves to be no-ops; their results are
    read from the operand instead. Returns ``trace`` itself when nothing changes."""
    outputs = {a for a in trace.outputs if is_var(a)}
    same_as: dict[Any, Atom] = {}
    kept: list[Eqn] = []
    for eqn in trace.eqns:
        if same_as and any(is_var(a) and a in same_as for a in eqn.args):
            eqn = Eqn(eqn.prim, tuple(same_as.get(a, a) if is_var(a) else a for a in eqn.args), eqn.params, eqn.outs)
        rule = IDENTITIES.get(eqn.prim)
        if rule is not None and len(eqn.outs) == 1 and eqn.outs[0] not in outputs:
            operand = rule(*eqn.args, **eqn.params)
            if operand is not None and _same_type(operand, eqn.outs[0]):
                same_as[eqn.outs[0]] = operand
                continue
        kept.append(eqn)
    if not same_as:
        return trace
    return dataclasses.replace(trace, eqns=tuple(kept))


def _same_type(a: Atom, b: Any) -> bool:
    return (
        isinstance(a, TensorVar)
        and isinstance(b, TensorVar)
        and (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)
    )
