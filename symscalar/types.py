"""Static and dynamic scalar types.

A *static* number is a plain Python ``int``/``float``/``bool``: a compile-time constant that is
baked into the program and is part of the cache key. A *dynamic* number
(``DynamicInt``/``DynamicFloat``/``DynamicBool``) is a runtime value: an input of the compiled
program, recorded symbolically while tracing, that can change between calls without a retrace.

Dynamic numbers are deliberately **not** ``int``/``float``/``bool``/``numbers.Number``: code
that needs a Python value (``if d > 0:``, ``range(d)``, ``int(d)``) fails loudly with
``DynamicValueError`` instead of silently baking in the value seen while tracing.

The operators of the dynamic classes are typed so that mypy and Pyright infer
``StaticInt + DynamicInt -> DynamicInt``, ``DynamicInt < int -> DynamicBool`` and
``DynamicInt / int -> DynamicFloat`` without any plugin. The implicit conversions
(``__bool__``, ``__int__``, ``__float__``, ``__index__``) exist at run time only, so that type
checkers also reject ``int(d)``, ``range(d)`` and (with ``truthy-bool``) ``if d:``.
"""

from __future__ import annotations

import contextvars
import numbers
from typing import TYPE_CHECKING, Any, Protocol, cast, overload

from typing_extensions import TypeAliasType, TypeIs

from symscalar import messages
from symscalar.callsite import user_location
from symscalar.errors import CheckFailedError, DynamicValueError

if TYPE_CHECKING:
    from torch import Tensor

__all__ = [
    "StaticInt",
    "StaticFloat",
    "StaticBool",
    "StaticDims",
    "StaticShape",
    "Traced",
    "NumberProxy",
    "DynamicInt",
    "DynamicFloat",
    "DynamicBool",
    "IntLike",
    "FloatLike",
    "BoolLike",
    "NumberLike",
    "NumberClasses",
    "is_static",
    "is_dynamic",
    "specialize",
    "check",
]

StaticInt = TypeAliasType("StaticInt", int)
StaticFloat = TypeAliasType("StaticFloat", float)
StaticBool = TypeAliasType("StaticBool", bool)
# A reduction's dims: one int, a sequence of ints, or None for "all dims". All static.
StaticDims = TypeAliasType("StaticDims", "int | tuple[int, ...] | list[int] | None")
# A target shape (reshape, expand, full): static ints.
StaticShape = TypeAliasType("StaticShape", "tuple[int, ...] | list[int]")


class Tracer(Protocol):
    """What a dynamic number needs from the tracer that created it (see ``recorder.py``)."""

    def bind(self, prim: Any, args: tuple[Any, ...], params: dict[str, Any]) -> Any: ...

    def name_of(self, var: Any) -> str: ...

    def scalar_op(self, name: str, args: tuple[Any, ...]) -> NumberProxy: ...

    def torch_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...

    def specialize(self, proxy: NumberProxy) -> int | float | bool: ...

    def check(self, pred: NumberProxy, message: str, where: str | None = None) -> None: ...


# The tracer of the trace being recorded in this thread/context, if any.
current_tracer: contextvars.ContextVar[Tracer | None] = contextvars.ContextVar("symscalar_tracer", default=None)


def _tracer_of(proxy: NumberProxy) -> Tracer:
    tracer = proxy._tracer
    if tracer is not current_tracer.get():
        raise DynamicValueError(
            f"dynamic value {proxy._name} ({proxy._origin}) was used outside the trace that "
            "created it; dynamic values only exist while symscalar.jit traces a function. "
            "Return it from the jitted function instead of storing it."
        )
    return tracer


class Traced:
    """What every traced value (a dynamic number, a traced tensor) has: the tracer that
    created it, its variable in the trace, and its name there."""

    __slots__ = ("_tracer", "_var", "__weakref__")
    _tracer: Tracer
    _var: Any  # the tracer's handle of this value (a ScalarVar, a TensorVar)

    @property
    def _name(self) -> str:
        """The name the value has in messages and in the printed trace, e.g. ``"s0"``."""
        return self._tracer.name_of(self._var)

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        """torch calls on traced values are recorded by the current tracer (a class without
        this method is rejected by torch's argument parser before any dispatch)."""
        tracer = current_tracer.get()
        if tracer is None:
            raise cls._outside_trace()
        return tracer.torch_function(func, args, kwargs or {})

    @classmethod
    def _outside_trace(cls) -> Exception:
        raise NotImplementedError


class NumberProxy(Traced):
    """Base class of the dynamic numbers. Instances are created by the tracer only."""

    __slots__ = ("_origin",)
    _python_type: type = object
    _origin: str  # e.g. "parameter 'n' of f" or "computed from parameter 'n' of f"

    def __init__(self, tracer: Tracer, var: Any, origin: str) -> None:
        self._tracer = tracer
        self._var = var
        self._origin = origin

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name}, {self._origin})"

    # Hashing and formatting need the value: `n in {1, 2}`, `{1: a}.get(n)`, `str(n)` and
    # f-strings would otherwise use the proxy's identity or name and bake the result.
    def __hash__(self) -> int:
        raise _concretization_error(
            self, "hash()", "hash it (a set or dict lookup such as `n in {1, 2}` or `table[n]`)"
        )

    def __str__(self) -> str:
        raise _concretization_error(self, "str()", "turn it into text")

    def __format__(self, spec: str) -> str:
        raise _concretization_error(self, "format()", "format it (f-strings, str.format)")

    def __contains__(self, item: object) -> bool:
        raise TypeError(f"argument of type '{type(self).__name__}' is not iterable")

    # round(), math.floor/ceil/trunc: ints, as for every Python number.
    @overload
    def __round__(self, ndigits: None = None, /) -> DynamicInt: ...
    @overload
    def __round__(self, ndigits: int, /) -> Any: ...
    def __round__(self, ndigits: int | None = None, /) -> Any:
        if ndigits is None:
            return _unary("round", self)
        if not isinstance(ndigits, int):
            raise TypeError(f"round(): ndigits must be a static int, got {type(ndigits).__name__}")
        return _tracer_of(self).scalar_op("round_ndigits", (self, ndigits))

    def __floor__(self) -> DynamicInt:
        return _unary("floor", self)  # type: ignore[no-any-return]

    def __ceil__(self) -> DynamicInt:
        return _unary("ceil", self)  # type: ignore[no-any-return]

    def __trunc__(self) -> DynamicInt:
        return _unary("trunc", self)  # type: ignore[no-any-return]

    @classmethod
    def _outside_trace(cls) -> Exception:
        return DynamicValueError("a dynamic value was passed to a torch function outside a trace")

    if not TYPE_CHECKING:
        # Run-time only: type checkers must not see these, so that they reject
        # `int(d)`, `float(d)`, `range(d)`, `lst[d]` and (with truthy-bool) `if d:`.

        def __bool__(self):
            raise _concretization_error(self, "bool()", "branch on it (if/while/and/or/not)")

        def __int__(self):
            raise _concretization_error(self, "int()", "turn it into a Python int")

        def __float__(self):
            raise _concretization_error(self, "float()", "turn it into a Python float")

        def __complex__(self):
            raise _concretization_error(self, "complex()", "turn it into a Python complex")

        def __index__(self):
            raise _concretization_error(self, "__index__()", "use it as an index, a size or a range bound")


def _concretization_error(proxy: NumberProxy, what: str, purpose: str) -> DynamicValueError:
    return DynamicValueError(
        messages.concretization(
            f"{what}, to {purpose},", f"dynamic value {proxy._name} ({type(proxy).__name__}, {proxy._origin})"
        )
    )


def _binary(name: str, a: Any, b: Any) -> Any:
    if not isinstance(b, (int, float, NumberProxy)) or isinstance(b, complex):
        return NotImplemented
    proxy = a if isinstance(a, NumberProxy) else b
    return _tracer_of(cast(NumberProxy, proxy)).scalar_op(name, (a, b))


def _unary(name: str, a: NumberProxy) -> Any:
    return _tracer_of(a).scalar_op(name, (a,))


class DynamicInt(NumberProxy):
    """A dynamic integer: a runtime input of the compiled program (never an ``int``)."""

    __slots__ = ()
    _python_type = int

    @overload
    def __add__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __add__(self, other: float | DynamicFloat, /) -> DynamicFloat: ...
    @overload
    def __add__(self, other: Tensor, /) -> Tensor: ...
    def __add__(self, other: Any, /) -> Any:
        return _binary("add", self, other)

    @overload
    def __radd__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __radd__(self, other: float, /) -> DynamicFloat: ...
    @overload
    def __radd__(self, other: Tensor, /) -> Tensor: ...
    def __radd__(self, other: Any, /) -> Any:
        return _binary("add", other, self)

    @overload
    def __sub__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __sub__(self, other: float | DynamicFloat, /) -> DynamicFloat: ...
    @overload
    def __sub__(self, other: Tensor, /) -> Tensor: ...
    def __sub__(self, other: Any, /) -> Any:
        return _binary("sub", self, other)

    @overload
    def __rsub__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rsub__(self, other: float, /) -> DynamicFloat: ...
    @overload
    def __rsub__(self, other: Tensor, /) -> Tensor: ...
    def __rsub__(self, other: Any, /) -> Any:
        return _binary("sub", other, self)

    @overload
    def __mul__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __mul__(self, other: float | DynamicFloat, /) -> DynamicFloat: ...
    @overload
    def __mul__(self, other: Tensor, /) -> Tensor: ...
    def __mul__(self, other: Any, /) -> Any:
        return _binary("mul", self, other)

    @overload
    def __rmul__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rmul__(self, other: float, /) -> DynamicFloat: ...
    @overload
    def __rmul__(self, other: Tensor, /) -> Tensor: ...
    def __rmul__(self, other: Any, /) -> Any:
        return _binary("mul", other, self)

    @overload
    def __truediv__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __truediv__(self, other: Tensor, /) -> Tensor: ...
    def __truediv__(self, other: Any, /) -> Any:
        return _binary("truediv", self, other)

    @overload
    def __rtruediv__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rtruediv__(self, other: Tensor, /) -> Tensor: ...
    def __rtruediv__(self, other: Any, /) -> Any:
        return _binary("truediv", other, self)

    @overload
    def __floordiv__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __floordiv__(self, other: float | DynamicFloat, /) -> DynamicFloat: ...
    @overload
    def __floordiv__(self, other: Tensor, /) -> Tensor: ...
    def __floordiv__(self, other: Any, /) -> Any:
        return _binary("floordiv", self, other)

    @overload
    def __rfloordiv__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rfloordiv__(self, other: float, /) -> DynamicFloat: ...
    @overload
    def __rfloordiv__(self, other: Tensor, /) -> Tensor: ...
    def __rfloordiv__(self, other: Any, /) -> Any:
        return _binary("floordiv", other, self)

    @overload
    def __mod__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __mod__(self, other: float | DynamicFloat, /) -> DynamicFloat: ...
    @overload
    def __mod__(self, other: Tensor, /) -> Tensor: ...
    def __mod__(self, other: Any, /) -> Any:
        return _binary("mod", self, other)

    @overload
    def __rmod__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rmod__(self, other: float, /) -> DynamicFloat: ...
    @overload
    def __rmod__(self, other: Tensor, /) -> Tensor: ...
    def __rmod__(self, other: Any, /) -> Any:
        return _binary("mod", other, self)

    # int ** int is an int in Python when the exponent is not negative; a negative dynamic
    # exponent raises at run time (ValueError) instead of silently changing type.
    @overload
    def __pow__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __pow__(self, other: float | DynamicFloat, /) -> DynamicFloat: ...
    @overload
    def __pow__(self, other: Tensor, /) -> Tensor: ...
    def __pow__(self, other: Any, /) -> Any:
        if type(other) is int and other < 0:
            # Python: int ** negative int is float(base) ** exponent
            return _binary("pow", _binary("mul", self, 1.0), float(other))
        return _binary("pow", self, other)

    @overload
    def __rpow__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rpow__(self, other: float, /) -> DynamicFloat: ...
    @overload
    def __rpow__(self, other: Tensor, /) -> Tensor: ...
    def __rpow__(self, other: Any, /) -> Any:
        return _binary("pow", other, self)

    @overload
    def __divmod__(self, other: int | DynamicInt | DynamicBool, /) -> tuple[DynamicInt, DynamicInt]: ...
    @overload
    def __divmod__(self, other: float | DynamicFloat, /) -> tuple[DynamicFloat, DynamicFloat]: ...
    def __divmod__(self, other: Any, /) -> Any:
        return (self // other, self % other)

    @overload
    def __rdivmod__(self, other: int | DynamicBool, /) -> tuple[DynamicInt, DynamicInt]: ...
    @overload
    def __rdivmod__(self, other: float, /) -> tuple[DynamicFloat, DynamicFloat]: ...
    def __rdivmod__(self, other: Any, /) -> Any:
        return (other // self, other % self)

    def __neg__(self) -> DynamicInt:
        return _unary("neg", self)  # type: ignore[no-any-return]

    def __pos__(self) -> DynamicInt:
        return self

    def __abs__(self) -> DynamicInt:
        return _unary("abs", self)  # type: ignore[no-any-return]

    def __invert__(self) -> DynamicInt:
        return _unary("invert", self)  # type: ignore[no-any-return]

    @overload
    def __and__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __and__(self, other: Tensor, /) -> Tensor: ...
    def __and__(self, other: Any, /) -> Any:
        return _binary("and", self, other)

    @overload
    def __rand__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rand__(self, other: Tensor, /) -> Tensor: ...
    def __rand__(self, other: Any, /) -> Any:
        return _binary("and", other, self)

    @overload
    def __or__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __or__(self, other: Tensor, /) -> Tensor: ...
    def __or__(self, other: Any, /) -> Any:
        return _binary("or", self, other)

    @overload
    def __ror__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __ror__(self, other: Tensor, /) -> Tensor: ...
    def __ror__(self, other: Any, /) -> Any:
        return _binary("or", other, self)

    @overload
    def __xor__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __xor__(self, other: Tensor, /) -> Tensor: ...
    def __xor__(self, other: Any, /) -> Any:
        return _binary("xor", self, other)

    @overload
    def __rxor__(self, other: int | DynamicBool, /) -> DynamicInt: ...
    @overload
    def __rxor__(self, other: Tensor, /) -> Tensor: ...
    def __rxor__(self, other: Any, /) -> Any:
        return _binary("xor", other, self)

    def __lshift__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt:
        return _binary("lshift", self, other)  # type: ignore[no-any-return]

    def __rlshift__(self, other: int | DynamicBool, /) -> DynamicInt:
        return _binary("lshift", other, self)  # type: ignore[no-any-return]

    def __rshift__(self, other: int | DynamicInt | DynamicBool, /) -> DynamicInt:
        return _binary("rshift", self, other)  # type: ignore[no-any-return]

    def __rrshift__(self, other: int | DynamicBool, /) -> DynamicInt:
        return _binary("rshift", other, self)  # type: ignore[no-any-return]

    @overload
    def __lt__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __lt__(self, other: Tensor, /) -> Tensor: ...
    def __lt__(self, other: Any, /) -> Any:
        return _binary("lt", self, other)

    @overload
    def __le__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __le__(self, other: Tensor, /) -> Tensor: ...
    def __le__(self, other: Any, /) -> Any:
        return _binary("le", self, other)

    @overload
    def __gt__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __gt__(self, other: Tensor, /) -> Tensor: ...
    def __gt__(self, other: Any, /) -> Any:
        return _binary("gt", self, other)

    @overload
    def __ge__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __ge__(self, other: Tensor, /) -> Tensor: ...
    def __ge__(self, other: Any, /) -> Any:
        return _binary("ge", self, other)

    def __eq__(self, other: object, /) -> DynamicBool:  # type: ignore[override]
        return _binary("eq", self, other)  # type: ignore[no-any-return]

    def __ne__(self, other: object, /) -> DynamicBool:  # type: ignore[override]
        return _binary("ne", self, other)  # type: ignore[no-any-return]

    __hash__ = NumberProxy.__hash__


class DynamicFloat(NumberProxy):
    """A dynamic float: a runtime input of the compiled program (never a ``float``)."""

    __slots__ = ()
    _python_type = float

    @overload
    def __add__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __add__(self, other: Tensor, /) -> Tensor: ...
    def __add__(self, other: Any, /) -> Any:
        return _binary("add", self, other)

    @overload
    def __radd__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __radd__(self, other: Tensor, /) -> Tensor: ...
    def __radd__(self, other: Any, /) -> Any:
        return _binary("add", other, self)

    @overload
    def __sub__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __sub__(self, other: Tensor, /) -> Tensor: ...
    def __sub__(self, other: Any, /) -> Any:
        return _binary("sub", self, other)

    @overload
    def __rsub__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rsub__(self, other: Tensor, /) -> Tensor: ...
    def __rsub__(self, other: Any, /) -> Any:
        return _binary("sub", other, self)

    @overload
    def __mul__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __mul__(self, other: Tensor, /) -> Tensor: ...
    def __mul__(self, other: Any, /) -> Any:
        return _binary("mul", self, other)

    @overload
    def __rmul__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rmul__(self, other: Tensor, /) -> Tensor: ...
    def __rmul__(self, other: Any, /) -> Any:
        return _binary("mul", other, self)

    @overload
    def __truediv__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __truediv__(self, other: Tensor, /) -> Tensor: ...
    def __truediv__(self, other: Any, /) -> Any:
        return _binary("truediv", self, other)

    @overload
    def __rtruediv__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rtruediv__(self, other: Tensor, /) -> Tensor: ...
    def __rtruediv__(self, other: Any, /) -> Any:
        return _binary("truediv", other, self)

    @overload
    def __floordiv__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __floordiv__(self, other: Tensor, /) -> Tensor: ...
    def __floordiv__(self, other: Any, /) -> Any:
        return _binary("floordiv", self, other)

    @overload
    def __rfloordiv__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rfloordiv__(self, other: Tensor, /) -> Tensor: ...
    def __rfloordiv__(self, other: Any, /) -> Any:
        return _binary("floordiv", other, self)

    @overload
    def __mod__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __mod__(self, other: Tensor, /) -> Tensor: ...
    def __mod__(self, other: Any, /) -> Any:
        return _binary("mod", self, other)

    @overload
    def __rmod__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rmod__(self, other: Tensor, /) -> Tensor: ...
    def __rmod__(self, other: Any, /) -> Any:
        return _binary("mod", other, self)

    @overload
    def __pow__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __pow__(self, other: Tensor, /) -> Tensor: ...
    def __pow__(self, other: Any, /) -> Any:
        return _binary("pow", self, other)

    @overload
    def __rpow__(self, other: float | DynamicBool, /) -> DynamicFloat: ...
    @overload
    def __rpow__(self, other: Tensor, /) -> Tensor: ...
    def __rpow__(self, other: Any, /) -> Any:
        return _binary("pow", other, self)

    def __divmod__(
        self, other: float | DynamicInt | DynamicFloat | DynamicBool, /
    ) -> tuple[DynamicFloat, DynamicFloat]:
        return (self // other, self % other)

    def __rdivmod__(self, other: float | DynamicBool, /) -> tuple[DynamicFloat, DynamicFloat]:
        return (other // self, other % self)

    def __neg__(self) -> DynamicFloat:
        return _unary("neg", self)  # type: ignore[no-any-return]

    def __pos__(self) -> DynamicFloat:
        return self

    def __abs__(self) -> DynamicFloat:
        return _unary("abs", self)  # type: ignore[no-any-return]

    @overload
    def __lt__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __lt__(self, other: Tensor, /) -> Tensor: ...
    def __lt__(self, other: Any, /) -> Any:
        return _binary("lt", self, other)

    @overload
    def __le__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __le__(self, other: Tensor, /) -> Tensor: ...
    def __le__(self, other: Any, /) -> Any:
        return _binary("le", self, other)

    @overload
    def __gt__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __gt__(self, other: Tensor, /) -> Tensor: ...
    def __gt__(self, other: Any, /) -> Any:
        return _binary("gt", self, other)

    @overload
    def __ge__(self, other: float | DynamicInt | DynamicFloat | DynamicBool, /) -> DynamicBool: ...
    @overload
    def __ge__(self, other: Tensor, /) -> Tensor: ...
    def __ge__(self, other: Any, /) -> Any:
        return _binary("ge", self, other)

    def __eq__(self, other: object, /) -> DynamicBool:  # type: ignore[override]
        return _binary("eq", self, other)  # type: ignore[no-any-return]

    def __ne__(self, other: object, /) -> DynamicBool:  # type: ignore[override]
        return _binary("ne", self, other)  # type: ignore[no-any-return]

    __hash__ = NumberProxy.__hash__


class DynamicBool(NumberProxy):
    """A dynamic bool, e.g. the result of comparing dynamic numbers (never a ``bool``).

    It cannot drive Python control flow; use ``symscalar.check(b, msg)`` for a runtime
    check, or ``torch.where`` to select values.
    """

    __slots__ = ()
    _python_type = bool

    if TYPE_CHECKING:
        # With a tensor, as a bool tensor scalar: `x * b`, `x + b` (torch's own operator runs at
        # run time: these exist for type checkers only, which otherwise reject `x * b`).
        def __mul__(self, other: Tensor, /) -> Tensor: ...
        def __rmul__(self, other: Tensor, /) -> Tensor: ...
        def __add__(self, other: Tensor, /) -> Tensor: ...
        def __radd__(self, other: Tensor, /) -> Tensor: ...
        def __sub__(self, other: Tensor, /) -> Tensor: ...
        def __rsub__(self, other: Tensor, /) -> Tensor: ...
        def __truediv__(self, other: Tensor, /) -> Tensor: ...
        def __rtruediv__(self, other: Tensor, /) -> Tensor: ...

    # &, |, ^ as for Python bools: with a bool a bool, with an int an int.
    @overload
    def __and__(self, other: bool | DynamicBool, /) -> DynamicBool: ...  # type: ignore[overload-overlap]  # bool is an int, as in typeshed's bool
    @overload
    def __and__(self, other: int | DynamicInt, /) -> DynamicInt: ...
    @overload
    def __and__(self, other: Tensor, /) -> Tensor: ...
    def __and__(self, other: Any, /) -> Any:
        return _binary("and", self, other)

    @overload
    def __rand__(self, other: bool, /) -> DynamicBool: ...  # type: ignore[overload-overlap]  # bool is an int, as in typeshed's bool
    @overload
    def __rand__(self, other: int, /) -> DynamicInt: ...
    @overload
    def __rand__(self, other: Tensor, /) -> Tensor: ...
    def __rand__(self, other: Any, /) -> Any:
        return _binary("and", other, self)

    @overload
    def __or__(self, other: bool | DynamicBool, /) -> DynamicBool: ...  # type: ignore[overload-overlap]  # bool is an int, as in typeshed's bool
    @overload
    def __or__(self, other: int | DynamicInt, /) -> DynamicInt: ...
    @overload
    def __or__(self, other: Tensor, /) -> Tensor: ...
    def __or__(self, other: Any, /) -> Any:
        return _binary("or", self, other)

    @overload
    def __ror__(self, other: bool, /) -> DynamicBool: ...  # type: ignore[overload-overlap]  # bool is an int, as in typeshed's bool
    @overload
    def __ror__(self, other: int, /) -> DynamicInt: ...
    @overload
    def __ror__(self, other: Tensor, /) -> Tensor: ...
    def __ror__(self, other: Any, /) -> Any:
        return _binary("or", other, self)

    @overload
    def __xor__(self, other: bool | DynamicBool, /) -> DynamicBool: ...  # type: ignore[overload-overlap]  # bool is an int, as in typeshed's bool
    @overload
    def __xor__(self, other: int | DynamicInt, /) -> DynamicInt: ...
    @overload
    def __xor__(self, other: Tensor, /) -> Tensor: ...
    def __xor__(self, other: Any, /) -> Any:
        return _binary("xor", self, other)

    @overload
    def __rxor__(self, other: bool, /) -> DynamicBool: ...  # type: ignore[overload-overlap]  # bool is an int, as in typeshed's bool
    @overload
    def __rxor__(self, other: int, /) -> DynamicInt: ...
    @overload
    def __rxor__(self, other: Tensor, /) -> Tensor: ...
    def __rxor__(self, other: Any, /) -> Any:
        return _binary("xor", other, self)

    if not TYPE_CHECKING:
        # Run-time only, so that type checkers reject `~b` (an operator error) instead of
        # typing it NoReturn, which would silently make the rest of the function unreachable.

        def __invert__(self):
            """Refused. Python's ``~True`` is ``-2`` (the int's bitwise not, deprecated since
            Python 3.12), almost never what ``~b`` on a bool means; a logical not would
            silently differ from Python. Write ``b ^ True`` for the logical not."""
            raise TypeError(
                f"~ on DynamicBool {self._name} ({self._origin}): in Python ~True is -2 (bitwise "
                "not of the int, deprecated since Python 3.12), so symscalar does not give it a "
                "meaning. Write `b ^ True` for a logical not."
            )

    def __eq__(self, other: object, /) -> DynamicBool:  # type: ignore[override]
        return _binary("eq", self, other)  # type: ignore[no-any-return]

    def __ne__(self, other: object, /) -> DynamicBool:  # type: ignore[override]
        return _binary("ne", self, other)  # type: ignore[no-any-return]

    __hash__ = NumberProxy.__hash__


IntLike = TypeAliasType("IntLike", int | DynamicInt)
FloatLike = TypeAliasType("FloatLike", float | int | DynamicFloat | DynamicInt)
BoolLike = TypeAliasType("BoolLike", bool | DynamicBool)
NumberLike = TypeAliasType("NumberLike", bool | int | float | DynamicBool | DynamicInt | DynamicFloat)

# For isinstance checks that must accept static and dynamic numbers alike.
NumberClasses: tuple[type, ...] = (int, float, NumberProxy)


def is_dynamic(value: object) -> TypeIs[NumberProxy]:
    """True for a dynamic number (``DynamicInt``/``DynamicFloat``/``DynamicBool``); narrows
    the value's type for type checkers."""
    return isinstance(value, NumberProxy)


def is_static(value: object) -> TypeIs[int | float | complex | numbers.Number]:
    """True for a static number: a Python ``int``/``float``/``bool`` (also numpy scalars);
    narrows the value's type for type checkers (``NumberLike`` to ``int | float``)."""
    return isinstance(value, numbers.Number) and not isinstance(value, NumberProxy)


@overload
def specialize(value: DynamicBool | bool) -> bool: ...
@overload
def specialize(value: DynamicInt | int) -> int: ...
@overload
def specialize(value: DynamicFloat | float) -> float: ...
def specialize(value: NumberLike) -> int | float | bool:
    """Return the concrete value of ``value`` and guard the compiled program on it.

    For a dynamic value, the cache entry being traced becomes valid only for calls where the
    value equals what it is now; another value is a cache miss and compiles a new entry. The
    guard is visible in the trace. A static value is returned unchanged.

    Example:
        >>> @symscalar.jit
        ... def f(x: Tensor, n: DynamicInt) -> Tensor:
        ...     return x.sum(symscalar.specialize(n))  # n now selects a reduction axis
    """
    if isinstance(value, NumberProxy):
        return _tracer_of(value).specialize(value)
    return value


def check(pred: BoolLike, message: str = "symscalar.check failed") -> None:
    """Assert ``pred``: at run time for a dynamic bool, at trace time for a static one.

    A dynamic predicate is recorded in the program and evaluated on every call; when it is
    false the call raises ``symscalar.errors.CheckFailedError`` with ``message`` and the
    file and line of this call (recorded while tracing: the frame is gone by then).
    """
    if isinstance(pred, NumberProxy):
        _tracer_of(pred).check(pred, message, user_location())
    elif not pred:
        raise CheckFailedError(message)
