"""The op-definition API: everything an op module needs, from one import.

``@defop`` registers a user-facing op of ``symscalar.ops`` (its annotations are its
static/dynamic contract, checked at trace time and exported for the mypy plugin);
``@implements`` registers the handler of torch spellings; ``maybe_in_place`` traces an
``inplace=`` flag. The rest of an op's block (its ``Primitive``, ``register_vjp``,
``register_nvfuser``, the shared metas of ``ops/common.py``, the scalar types of its
signature) is re-exported here, so an op file starts with one import line for the API.
"""

from __future__ import annotations

import functools
import inspect
import types as pytypes
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from symscalar import messages, size_ops

# The rest of the definition API, re-exported: one import line per op module.
from symscalar.errors import StaticValueRequiredError, UnsupportedOperationError
from symscalar.frontend import OPS, TORCH_FUNCTIONS, OpSignature, data_dependent_shape_error, public_name
from symscalar.grad_regions import stop_gradient_p
from symscalar.nvfuser_lowering import (
    floating,
    floating_reduction,
    has_axes,
    is_broadcast,
    numel,
    register_nvfuser,
    unreduce,
    upcast,
)
from symscalar.ops.common import (
    Tensor,
    autograd_backward,
    broadcast_shapes,
    canonical_dim,
    canonical_dims,
    elementwise_meta,
    elementwise_primitive,
    grad_for,
    holomorphic,
    output_device,
    reduced_shape,
    result_dtype,
    same_shape,
    small_meta,
    torch_meta,
    unbroadcast,
)
from symscalar.proxy import SIZES_ON, TensorProxy
from symscalar.trace import Atom, Primitive, ScalarVar, TensorVar, contains_dynamic, register_vjp
from symscalar.tracer import TraceBuilder, _find_proxies
from symscalar.types import (
    FloatLike,
    NumberLike,
    NumberProxy,
    StaticBool,
    StaticDims,
    StaticFloat,
    StaticInt,
    StaticShape,
    check,
    current_tracer,
    is_static,
)
from symscalar.vjp_wanted import gradient_wanted

__all__ = [
    "autograd_backward",
    "Atom",
    "FloatLike",
    "NumberLike",
    "NumberProxy",
    "Primitive",
    "ScalarVar",
    "StaticBool",
    "StaticDims",
    "StaticFloat",
    "StaticInt",
    "StaticShape",
    "StaticValueRequiredError",
    "Tensor",
    "TensorProxy",
    "TensorVar",
    "TraceBuilder",
    "UnsupportedOperationError",
    "broadcast_shapes",
    "canonical_dim",
    "canonical_dims",
    "check",
    "contains_dynamic",
    "current_tracer",
    "data_dependent_shape_error",
    "defop",
    "elementwise_meta",
    "elementwise_primitive",
    "floating",
    "grad_for",
    "floating_reduction",
    "has_axes",
    "holomorphic",
    "implements",
    "is_broadcast",
    "is_static",
    "is_static_annotation",
    "maybe_in_place",
    "numel",
    "output_device",
    "reduced_shape",
    "register_nvfuser",
    "register_vjp",
    "gradient_wanted",
    "result_dtype",
    "same_shape",
    "small_meta",
    "static_message",
    "stop_gradient_p",
    "torch_meta",
    "unbroadcast",
    "unreduce",
    "upcast",
]

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")


def maybe_in_place(name: str, input: Any, inplace: bool, compute: Callable[[Any], R]) -> R:
    """A handler's ``inplace=`` flag (``F.relu(x, inplace=True)``, ``nn.ReLU(inplace=True)``):
    ``compute(input)``, written into ``input`` when ``inplace`` is set, as eager's in-place
    kernel writes it (``TraceBuilder.update_in_place``: every reference sees the new value;
    refused where an alias would see the old one)."""
    if not inplace or not isinstance(input, TensorProxy):
        return compute(input)
    return typing.cast(R, input._tracer.update_in_place(name, input, compute))


_STATIC_ALIASES = (StaticInt, StaticFloat, StaticBool, StaticDims, StaticShape)


def is_static_annotation(hint: Any) -> bool:
    """``StaticInt``, ``StaticDims``, ... or a union of those with None."""
    if any(hint is alias for alias in _STATIC_ALIASES):
        return True
    if typing.get_origin(hint) in (typing.Union, pytypes.UnionType):
        members = [h for h in typing.get_args(hint) if h is not type(None)]
        return bool(members) and all(is_static_annotation(h) for h in members)
    return False


def _contract(fn: Callable[..., Any], name: str) -> tuple[inspect.Signature, OpSignature]:
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    params = tuple(sig.parameters)
    static = tuple(p for p in params if is_static_annotation(hints.get(p)))
    positional = sum(1 for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return sig, OpSignature(name, params, static, positional)


def _checked(fn: F, name: str) -> F:
    """Wrap ``fn`` so that a dynamic value in a static parameter raises at trace time."""
    sig, contract = _contract(fn, name)
    OPS.register(name, contract)
    static = contract.static

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if static:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{name}(): {e}") from None
            converted = False
            for param in static:
                value = bound.arguments.get(param)
                if contains_dynamic(value):
                    ok, sized = size_ops.to_static(value) if SIZES_ON[0] else (False, value)
                    if not ok:
                        raise StaticValueRequiredError(static_message(name, param, value))
                    bound.arguments[param] = sized  # size symbols become their normal forms
                    converted = True
            if converted:
                return fn(*bound.args, **bound.kwargs)
        return fn(*args, **kwargs)

    return typing.cast(F, wrapper)


def static_message(op: str, param: str, value: Any) -> str:
    """The error message for dynamic ``value`` passed to static parameter ``param`` of ``op``:
    it names the value, where it came from, and the two fixes."""
    proxies = _find_proxies(value)
    what = ", ".join(f"{p._name} ({type(p).__name__}, {p._origin})" for p in proxies)
    return messages.static_required(op, [param], what)


@typing.overload
def defop(fn: F, /) -> F: ...


@typing.overload
def defop(*, torch: Sequence[Any]) -> Callable[[F], F]: ...


def defop(fn: F | None = None, /, *, torch: Sequence[Any] = ()) -> F | Callable[[F], F]:
    """Register a user-facing op of ``symscalar.ops``; its annotations are its contract.

    ``@defop(torch=(torch.exp, torch.Tensor.exp))`` also makes it the handler of those torch
    spellings: for an op whose signature is exactly theirs (parameter names included), so
    that a pure passthrough is not written twice. Where a spelling behaves differently,
    register its own handler with ``@implements``.
    """

    def register(fn: F) -> F:
        name = f"symscalar.ops.{fn.__name__}"
        OPS.require_new(name)
        _require_new_spellings(torch)
        op = _checked(fn, name)
        _handle(fn, torch)
        return op

    return register if fn is None else register(fn)


def implements(*torch_functions: Any) -> Callable[[F], F]:
    """Register the handler of one or more torch callables (``torch.sum``,
    ``torch.Tensor.sum``, ``torch.nn.functional.softmax``...) for traced values."""

    def register(handler: F) -> F:
        return _handle(handler, torch_functions)

    return register


def _handle(handler: F, torch_functions: Sequence[Any]) -> F:
    """Make ``handler`` the handler of each torch callable: one checked wrapper per spelling,
    so that an error names the spelling the user wrote (``torch.Tensor.var``, not
    ``torch.var``). ``dict.fromkeys``: aliases such as Tensor.__neg__ / Tensor.neg are the
    same object. Returns the first wrapper (or ``handler`` if there are no spellings). Nothing
    is registered unless every spelling is new."""
    _require_new_spellings(torch_functions)
    by_name: dict[str, F] = {}
    for func in dict.fromkeys(torch_functions):
        name = public_name(func)
        if name not in by_name:
            by_name[name] = _checked(handler, name)
        TORCH_FUNCTIONS.register(func, by_name[name])
    return next(iter(by_name.values()), handler)


def _require_new_spellings(torch_functions: Sequence[Any]) -> None:
    for func in torch_functions:
        TORCH_FUNCTIONS.require_new(func)
        OPS.require_new(public_name(func))
