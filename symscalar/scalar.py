"""Arithmetic on dynamic scalars and runtime checks.

``DynamicInt.__add__`` and friends bind these primitives (``scalar_add`` ...) through the
tracer, which imports the tables below. They run on Python numbers in every backend: scalar
work happens on the host, and its results feed tensor ops as runtime scalar inputs. This
module sits between ``trace`` and ``tracing`` (not in ``ops/``) so that the tracer imports the
primitives themselves instead of looking them up by name.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from symscalar.errors import CheckFailedError
from symscalar.trace import Atom, Primitive, ScalarVar
from symscalar.types import NumberProxy

__all__ = ["SCALAR_BINARY", "SCALAR_UNARY", "check_p"]


def _python_type(a: Atom) -> type:
    if isinstance(a, ScalarVar):
        return a.dtype
    if isinstance(a, bool):
        return bool
    if isinstance(a, int):
        return int
    if isinstance(a, float):
        return float
    raise TypeError(f"scalar operand must be a number, got {type(a).__name__}")


def _arith_meta(a: Atom, b: Atom) -> ScalarVar:
    types = {_python_type(a), _python_type(b)}
    return ScalarVar(float if float in types else int)


def _float_meta(a: Atom, b: Atom) -> ScalarVar:
    _arith_meta(a, b)
    return ScalarVar(float)


def _bool_meta(a: Atom, b: Atom) -> ScalarVar:
    _arith_meta(a, b)
    return ScalarVar(bool)


def _bitwise_meta(a: Atom, b: Atom) -> ScalarVar:
    """``&``, ``|``, ``^`` as Python: bool with bool is a bool, with an int an int."""
    types = {_python_type(a), _python_type(b)}
    if float in types:
        raise TypeError("unsupported operand type(s) for a bitwise operator: float")
    return ScalarVar(bool if types == {bool} else int)


def _shift_meta(a: Atom, b: Atom) -> ScalarVar:
    _bitwise_meta(a, b)
    return ScalarVar(int)


def _round_ndigits_meta(a: Atom, ndigits: Atom) -> ScalarVar:
    """``round(x, ndigits)``: a float stays a float, an int (or bool) gives an int."""
    if not isinstance(ndigits, int):
        raise TypeError("round(): ndigits must be a static int")
    return ScalarVar(float if _python_type(a) is float else int)


def _pow(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int and b < 0:
        raise ValueError(
            f"DynamicInt ** DynamicInt with a negative exponent ({a} ** {b}): the result would "
            "not be an int; use a float base or exponent"
        )
    return a**b


_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., ScalarVar]]] = {
    "add": (operator.add, _arith_meta),
    "sub": (operator.sub, _arith_meta),
    "mul": (operator.mul, _arith_meta),
    "truediv": (operator.truediv, _float_meta),
    "floordiv": (operator.floordiv, _arith_meta),
    "mod": (operator.mod, _arith_meta),
    "pow": (_pow, _arith_meta),
    "lt": (operator.lt, _bool_meta),
    "le": (operator.le, _bool_meta),
    "gt": (operator.gt, _bool_meta),
    "ge": (operator.ge, _bool_meta),
    "eq": (operator.eq, _bool_meta),
    "ne": (operator.ne, _bool_meta),
    "and": (operator.and_, _bitwise_meta),
    "or": (operator.or_, _bitwise_meta),
    "xor": (operator.xor, _bitwise_meta),
    "lshift": (operator.lshift, _shift_meta),
    "rshift": (operator.rshift, _shift_meta),
    "round_ndigits": (round, _round_ndigits_meta),
}


def _same_type_meta(a: Atom) -> ScalarVar:
    return ScalarVar(_python_type(a))


def _not_meta(a: Atom) -> ScalarVar:
    if _python_type(a) is not bool:
        raise TypeError("~ takes a DynamicBool")
    return ScalarVar(bool)


def _int_meta(a: Atom) -> ScalarVar:
    """``round(x)``, ``math.floor/ceil/trunc(x)`` are ints for every Python number."""
    _python_type(a)
    return ScalarVar(int)


def _invert_meta(a: Atom) -> ScalarVar:
    """``~x`` is Python's bitwise not: an int, also for a bool (``~True == -2``)."""
    if _python_type(a) is float:
        raise TypeError("bad operand type for unary ~: 'DynamicFloat'")
    return ScalarVar(int)


_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., ScalarVar]]] = {
    "neg": (operator.neg, _same_type_meta),
    "abs": (abs, _same_type_meta),
    "not": (operator.not_, _not_meta),
    "invert": (operator.invert, _invert_meta),
    "round": (round, _int_meta),
    "floor": (math.floor, _int_meta),
    "ceil": (math.ceil, _int_meta),
    "trunc": (math.trunc, _int_meta),
}

# Python operator name ("add", "round_ndigits", ...) -> primitive: what ``NumberProxy``'s
# operators bind (through ``Tracer.scalar_op``).
SCALAR_BINARY: dict[str, Primitive[NumberProxy]] = {
    name: Primitive(f"scalar_{name}", impl, meta) for name, (impl, meta) in _BINARY.items()
}
SCALAR_UNARY: dict[str, Primitive[NumberProxy]] = {
    name: Primitive(f"scalar_{name}", impl, meta) for name, (impl, meta) in _UNARY.items()
}


def _check_impl(pred: Any, *, message: str, where: str | None = None) -> None:
    if not pred:
        raise CheckFailedError(f"{message} (symscalar.check at {where})" if where else message)


def _check_meta(pred: Atom, *, message: str, where: str | None = None) -> None:
    if _python_type(pred) is not bool:
        raise TypeError("symscalar.check takes a DynamicBool or bool")


# A runtime assertion recorded by symscalar.check(pred, message); it has no outputs. ``where``
# is the user's file:line of the call, taken while tracing, for the message of a failure.
check_p: Primitive[None] = Primitive("check", _check_impl, _check_meta)
