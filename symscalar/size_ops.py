"""Size symbols while tracing: a dynamic dim's size as a ``DynamicInt``.

``x.shape[1]`` of a declared dim gives user code a ``DynamicInt`` *size symbol*: a runtime
value (the ``sym_size`` equation reads it from the program's bound sizes) whose normal form
(``sizes.Size``) the tracer knows. Arithmetic among size symbols and static ints (``+ - *``,
``//`` and ``%`` by a positive constant) gives size symbols again, de-duplicated by normal
form; comparisons the normal form and the declared ranges decide are plain bools, the others
are answered at the traced sizes and recorded as size guards (``size_guards.py``). A size
symbol passed where an op takes a static size (a reshape/view/expand target, a factory's
shape, a slice bound) becomes its ``Size`` there.

symscalar's own code (op frontends, vjp rules) reads ``shape`` as ``Size`` objects instead of
proxies (``TensorProxy.shape`` asks ``called_from_symscalar``): shape arithmetic inside an op
stays symbolic without recording scalar equations.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import torch
import torch.utils._pytree as pytree

from symscalar import size_guards, sizes
from symscalar.compiling import answer_int_for, patch_while_tracing
from symscalar.errors import DynamicValueError
from symscalar.sizes import Size
from symscalar.trace import Primitive, ScalarVar, leaves
from symscalar.types import DynamicInt, NumberProxy, current_tracer

__all__ = ["sym_size_p", "size_proxy", "size_of", "to_static", "scalar_op", "user_shape", "len_error"]


def _sym_size_impl(*, size: int) -> int:
    return size


def _sym_size_meta(*, size: Any) -> ScalarVar:
    return ScalarVar(int)


# The value of a symbolic size (its ``size`` parameter is printed as ``s_T * 64``, an
# expression of the sizes the program binds from its inputs).
sym_size_p: Primitive[NumberProxy] = Primitive("sym_size", _sym_size_impl, _sym_size_meta)

# The normal form of each size symbol's variable (weak: a trace no longer used is forgotten).
_SIZE_OF: weakref.WeakKeyDictionary[ScalarVar, Size] = weakref.WeakKeyDictionary()
# Per tracer, the proxy of each normal form already materialized (de-duplication).
_PROXIES: weakref.WeakKeyDictionary[Any, dict[Size, NumberProxy]] = weakref.WeakKeyDictionary()


def size_proxy(tracer: Any, size: Any) -> Any:
    """The ``DynamicInt`` size symbol of ``size`` in ``tracer``'s trace (an int stays an int)."""
    if not isinstance(size, Size):
        return size
    known = _PROXIES.setdefault(tracer, {})
    proxy = known.get(size)
    if proxy is None:
        proxy = tracer.bind(sym_size_p, (), {"size": size})
        proxy._origin = f"the dynamic size {size!r}"
        tracer.roots[proxy._var] = frozenset([proxy._origin])
        _SIZE_OF[proxy._var] = size
        known[size] = proxy
    return proxy


def size_of(value: Any) -> Size | None:
    """The normal form of a size symbol (a proxy or its variable), else None."""
    var = value._var if isinstance(value, NumberProxy) else value
    return _SIZE_OF.get(var) if isinstance(var, ScalarVar) else None


def to_static(value: Any) -> tuple[bool, Any]:
    """``value`` (a static parameter's argument) with each size symbol replaced by its normal
    form; ``(False, value)`` if it holds another dynamic value."""
    if isinstance(value, NumberProxy):
        size = size_of(value)
        return (size is not None), (size if size is not None else value)
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            ok, converted = to_static(v)
            if not ok:
                return False, value
            out.append(converted)
        return True, type(value)(out) if isinstance(value, list) else tuple(out)
    return not any(isinstance(v, NumberProxy) for v in leaves(value)), value


_ARITHMETIC = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
}
_COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def scalar_op(tracer: Any, name: str, args: tuple[Any, ...]) -> Any:
    """A Python operator on size symbols and static ints: a size symbol or a decided bool;
    ``NotImplemented`` where the operands are not all sizes (the tracer records the op)."""
    forms: list[Any] = []
    for a in args:
        if isinstance(a, NumberProxy):
            size = size_of(a)
            if size is None:
                return NotImplemented
            forms.append(size)
        elif type(a) is int:
            forms.append(a)
        else:
            return NotImplemented
    if len(forms) == 1:
        return size_proxy(tracer, -forms[0]) if name == "neg" else NotImplemented
    a, b = forms
    if name in _ARITHMETIC:
        if name in ("floordiv", "mod") and not (isinstance(b, int) and b > 0):
            return NotImplemented  # a runtime division: recorded, no normal form
        return size_proxy(tracer, _ARITHMETIC[name](a, b))
    if name in _COMPARISONS:
        # undecided by the ranges: the answer at the traced sizes, recorded as a size guard
        # (refused where it would pin a declared dim to one value; see size_guards.py)
        return size_guards.decide_or_guard(tracer, name, a, b, f"the comparison `{a!r} {_COMPARISONS[name]} {b!r}`")
    return NotImplemented


class SymbolicShape(tuple):  # type: ignore[type-arg]
    """A traced tensor's shape with size symbols: a tuple with ``torch.Size``'s ``numel``."""

    __slots__ = ()

    def numel(self) -> Any:
        return math.prod(self)


# Returned from a jitted function (``return x.shape``), a symbolic shape is a pytree node of
# its sizes, rebuilt on every call as the ``torch.Size`` eager returns.
pytree.register_pytree_node(
    SymbolicShape,
    lambda shape: (list(shape), None),
    lambda values, context: torch.Size(values),
    serialized_type_name="symscalar.size_ops.SymbolicShape",
)


def user_shape(proxy: Any) -> tuple[Any, ...]:
    """``proxy.shape`` as user code sees it: static dims as ints, dynamic ones as size symbols."""
    return SymbolicShape(size_proxy(proxy._tracer, s) for s in proxy._var.shape)


def len_error(proxy: Any) -> DynamicValueError:
    return DynamicValueError(
        f"len() of {proxy._describe()}: its first dim is dynamic ({proxy._var.shape[0]!r}), and len() must "
        "return a Python int. Use x.shape[0] (a DynamicInt size symbol) instead, or declare the dim static."
    )


def _holds_size_symbol(values: Any) -> bool:
    for v in values:
        if is_size_symbol(v) or (isinstance(v, (tuple, list)) and any(is_size_symbol(x) for x in v)):
            return True
    return False


def _routing_sizes(original: Any) -> Any:
    """``torch.ones(T, T)``: torch's argument parser rejects a size symbol in an int list before
    any torch-function dispatch, so while tracing the factories send such calls to the tracer."""

    def factory(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer.get()
        if tracer is not None and (_holds_size_symbol(args) or _holds_size_symbol(kwargs.values())):
            return tracer.torch_function(original, args, kwargs)
        return original(*args, **kwargs)

    return factory


for _name in ("ones", "zeros", "empty", "full", "arange", "rand", "randn"):
    patch_while_tracing("torch", _name, _routing_sizes)


def is_on() -> bool:
    """Whether dynamic dims were ever declared (else no value is a size symbol)."""
    return sizes.enabled()[0]


def is_size_symbol(value: Any) -> bool:
    return isinstance(value, DynamicInt) and size_of(value) is not None


answer_int_for(DynamicInt, is_size_symbol)  # isinstance(x.shape[1], int) in user code: compiling.py
