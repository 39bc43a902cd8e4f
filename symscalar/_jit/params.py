"""What each parameter of a jitted function is: tensor, static, dynamic or unannotated.

Annotations decide (``StaticInt``/``int`` static, ``DynamicInt``/``DynamicFloat``/``NumberLike``
dynamic, ``torch.Tensor`` a tensor, ``DynamicFloat | None`` dynamic-or-None, a ``TypeVar`` by its
bound); ``jit(fn, static=[...], dynamic=[...])`` decides for parameters whose annotation does
not, and contradicting an annotation is an error (``check_option``, the rule the mypy plugin
applies too); unannotated values are pytrees whose tensors are traced and the rest static.
(``arguments.py`` checks a value against its kind.)
"""

from __future__ import annotations

import builtins
import enum
import functools
import inspect
import keyword
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import torch

from symscalar.errors import JitOptionError
from symscalar.types import (
    BoolLike,
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    FloatLike,
    IntLike,
    NumberLike,
    StaticBool,
    StaticDims,
    StaticFloat,
    StaticInt,
    StaticShape,
)

__all__ = [
    "Kind",
    "DYNAMIC_KINDS",
    "DYNAMIC_TYPES",
    "param_kinds",
    "qualname",
    "identifier",
    "declared_at",
    "annotated_function",
    "NUMPY_SCALARS",
]

try:
    import numpy
except ImportError:  # torch runs without numpy; then there are no numpy scalars to key
    numpy = None  # type: ignore[assignment]

NUMPY_SCALARS: tuple[type, ...] = (numpy.generic,) if numpy is not None else ()


class Kind(enum.Enum):
    """What a parameter is; the value is how messages name it."""

    TENSOR = "torch.Tensor"
    STATIC = "static"
    AUTO = "unannotated"  # a pytree: its tensors are traced, the rest is static
    DYN_INT = "DynamicInt"
    DYN_FLOAT = "DynamicFloat"
    DYN_BOOL = "DynamicBool"
    DYN_NUMBER = "NumberLike"

    def __str__(self) -> str:
        return self.value

    @property
    def dynamic(self) -> bool:
        return self in DYNAMIC_KINDS


DYNAMIC_KINDS = frozenset({Kind.DYN_INT, Kind.DYN_FLOAT, Kind.DYN_BOOL, Kind.DYN_NUMBER})

# The exact Python types a dynamic parameter takes; each is traced as itself, so that it
# promotes in torch exactly as in eager (an int for a DynamicFloat stays an int).
DYNAMIC_TYPES: dict[Kind, tuple[type, ...]] = {
    Kind.DYN_INT: (int,),
    Kind.DYN_FLOAT: (float, int),
    Kind.DYN_BOOL: (bool,),
    Kind.DYN_NUMBER: (bool, int, float),
}

_KIND_OF_HINT: dict[Any, Kind] = {
    DynamicInt: Kind.DYN_INT,
    IntLike: Kind.DYN_INT,
    DynamicFloat: Kind.DYN_FLOAT,
    FloatLike: Kind.DYN_FLOAT,
    DynamicBool: Kind.DYN_BOOL,
    BoolLike: Kind.DYN_BOOL,
    NumberLike: Kind.DYN_NUMBER,
    StaticInt: Kind.STATIC,
    StaticFloat: Kind.STATIC,
    StaticBool: Kind.STATIC,
    StaticDims: Kind.STATIC,
    StaticShape: Kind.STATIC,
    int: Kind.STATIC,
    float: Kind.STATIC,
    bool: Kind.STATIC,
}
_KIND_OF_NAME = {getattr(h, "__name__", str(h)): k for h, k in _KIND_OF_HINT.items()}
_KIND_OF_NAME.update({"Tensor": Kind.TENSOR, "torch.Tensor": Kind.TENSOR})


def qualname(fn: Any) -> str:
    """A name for messages: functions by qualified name, other callables (modules, partials)
    by their class."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return name if isinstance(name, str) else type(fn).__name__


def identifier(name: str) -> str:
    """A valid, non-keyword Python identifier for generated code (``<lambda>`` -> ``_lambda_``)
    that shadows no builtin (a function named ``float`` must not replace ``float('inf')``)."""
    name = re.sub(r"\W", "_", name) or "f"
    if keyword.iskeyword(name) or name[0].isdigit() or name in vars(builtins):
        name = f"_{name}"
    return name


def annotated_function(fn: Any) -> Any:
    """The function whose annotations describe ``fn``'s parameters: partials unwrapped."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def declared_at(fn: Any) -> str:
    """``file:line`` of the function's definition, for messages ('' when unknown)."""
    target = inspect.unwrap(getattr(annotated_function(fn), "__func__", annotated_function(fn)))
    code = getattr(target, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


# -- annotations ----------------------------------------------------------------------------


def _optional_members(hint: Any) -> tuple[list[Any], bool] | None:
    """The members of a ``Union``/``X | None`` annotation other than None, and whether None
    is one of them; None when ``hint`` is not a union."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    members = typing.get_args(hint)
    return [m for m in members if m is not type(None)], type(None) in members


def _union_kind(hint: Any) -> tuple[Kind, bool] | None:
    """A union of dynamic number types (``DynamicFloat | None``, ``Optional[DynamicInt]``,
    ``Union[DynamicInt, DynamicFloat]``): the dynamic kind, and whether None is allowed (then
    None is a static part of the key and the value is no program input)."""
    found = _optional_members(hint)
    if found is None:
        return None
    members, optional = found
    kinds = {_hint_kind(m) for m in members}
    dynamic = kinds & DYNAMIC_KINDS
    # `int | DynamicInt` is IntLike spelled out: dynamic, as a type checker reads it
    if not dynamic or not kinds <= DYNAMIC_KINDS | {Kind.STATIC}:
        return None
    if len(dynamic) == 1:
        kind = next(iter(dynamic))
        static = {_bound(m) for m in members if _hint_kind(m) is Kind.STATIC}
        if all(getattr(m, "__value__", m) in DYNAMIC_TYPES[kind] for m in static):
            return kind, optional
    return Kind.DYN_NUMBER, optional


def _bound(hint: Any) -> Any:
    """A ``TypeVar`` stands for its bound (``T = TypeVar("T", bound=IntLike)`` is dynamic, as a
    type checker reads it); one without a bound says nothing (``object``)."""
    if isinstance(hint, typing.TypeVar):
        return hint.__bound__ if hint.__bound__ is not None else object
    return hint


def _hint_kind(hint: Any) -> Kind:
    hint = _bound(hint)
    if hint is inspect.Parameter.empty or hint is None:
        return Kind.AUTO
    union = _union_kind(hint)
    if union is not None:
        return union[0]
    if isinstance(hint, str):
        return _KIND_OF_NAME.get(hint.rsplit(".", 1)[-1] if hint != "torch.Tensor" else hint, Kind.AUTO)
    for known, kind in _KIND_OF_HINT.items():
        if hint is known:
            return kind
    if isinstance(hint, type) and issubclass(hint, torch.Tensor):
        return Kind.TENSOR
    return Kind.AUTO


def _resolve_hints(
    fn: Callable[..., Any], frame_locals: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The parameters' annotations, resolved against the function's globals and the frame
    that called ``jit`` (local aliases under ``from __future__ import annotations``); and the
    string annotations that could not be resolved, by parameter, with why."""
    target = annotated_function(fn)
    raw = dict(getattr(target, "__annotations__", None) or {})
    localns = dict(frame_locals or {})
    try:
        return typing.get_type_hints(target, localns=localns), {}
    except Exception:  # noqa: BLE001 - resolve what can be resolved, one annotation at a time
        pass
    globalns = getattr(inspect.unwrap(getattr(target, "__func__", target)), "__globals__", {})
    hints: dict[str, Any] = {}
    unresolved: dict[str, str] = {}
    for name, annotation in raw.items():
        if not isinstance(annotation, str):
            hints[name] = annotation
            continue
        try:
            hints[name] = eval(annotation, dict(globalns), localns)  # noqa: S307 - an annotation, as typing does
        except Exception as e:  # noqa: BLE001 - reported in explain() and retrace messages
            hints[name] = annotation  # _hint_kind still knows symscalar's names by spelling
            unresolved[name] = f"{annotation!r} ({type(e).__name__}: {e})"
    return hints, unresolved


def param_kinds(
    fn: Callable[..., Any],
    sig: inspect.Signature,
    static: Any,
    dynamic: Any,
    frame_locals: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Kind], dict[str, str], frozenset[str]]:
    """Each parameter's kind; the annotations that could not be resolved (by parameter, with
    why) among those left unannotated-like (AUTO); the dynamic parameters that accept None
    (``DynamicFloat | None``)."""
    hints, unresolved = _resolve_hints(fn, frame_locals)
    names = list(sig.parameters)
    kinds = {name: _hint_kind(hints.get(name, inspect.Parameter.empty)) for name in names}
    optional = {name for name in names if (_union_kind(hints.get(name)) or ("", False))[1]}
    for name, p in sig.parameters.items():
        if kinds[name] is Kind.TENSOR and p.default is None:
            kinds[name] = Kind.AUTO  # `mask: torch.Tensor = None`, as real models write: None or a tensor
    static_names = _named(fn, names, static, "static")
    dynamic_names = _named(fn, names, dynamic, "dynamic")
    for name in set(static_names) & set(dynamic_names):
        raise JitOptionError(f"jit({qualname(fn)}): parameter {name!r} is both static and dynamic")
    for name in static_names:
        check_option(fn, name, hints.get(name, inspect.Parameter.empty), kinds[name], "static")
        kinds[name] = Kind.STATIC
    for name in dynamic_names:
        check_option(fn, name, hints.get(name, inspect.Parameter.empty), kinds[name], "dynamic")
        if not kinds[name].dynamic:
            kinds[name] = Kind.DYN_NUMBER
    for name in (*static_names, *dynamic_names):
        unresolved.pop(name, None)
    optional -= set(static_names)
    unresolved = {name: why for name, why in unresolved.items() if kinds.get(name) is Kind.AUTO}
    return kinds, unresolved, frozenset(optional)


# Annotations that say nothing about static/dynamic: ``static=``/``dynamic=`` decide for them.
_UNDECIDED = (inspect.Parameter.empty, Any, object)


def check_option(fn: Any, name: str, hint: Any, kind: Kind, option: str) -> None:
    """The one rule for ``jit(static=..., dynamic=...)`` (the mypy plugin applies it too): the
    annotation decides, the options only decide for parameters whose annotation does not
    (none, ``Any``, ``object``, or an annotation that is neither static nor dynamic, such as
    ``tuple[int, int]`` for ``static=``). An option that contradicts the annotation is an
    error here, when ``jit`` is applied, instead of a verdict that the type checker, which
    reads the annotation, would not share."""
    if option == "static":
        contradicts = kind.dynamic or kind is Kind.TENSOR
    else:
        contradicts = not kind.dynamic and _bound(hint) not in _UNDECIDED
    if not contradicts:
        return
    shown = hint if isinstance(hint, str) else getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
    if option == "static":
        fix = "annotate it StaticInt/StaticFloat/StaticBool (int, float, bool) to make it static"
        meaning = "a tensor" if kind is Kind.TENSOR else "dynamic"
    else:
        fix = "annotate it DynamicInt/DynamicFloat/DynamicBool (or IntLike, FloatLike, NumberLike) to make it dynamic"
        meaning = "a tensor" if kind is Kind.TENSOR else "static"
    raise JitOptionError(
        f"jit({qualname(fn)}, {option}=[{name!r}]): parameter {name!r} is annotated {shown}, which makes it "
        f"{meaning}; the annotation decides (mypy reads it too), and {option}= only applies to parameters "
        f"whose annotation does not: {fix}, or remove {name!r} from {option}="
    )


def _named(fn: Any, names: list[str], items: Any, what: str) -> list[str]:
    """The parameter names that ``static=``/``dynamic=`` (names or positions) designate."""
    items = [items] if isinstance(items, (str, int)) else list(items or ())
    out = []
    for item in items:
        name = names[item] if isinstance(item, int) and -len(names) <= item < len(names) else item
        if name not in names:
            raise JitOptionError(
                f"jit({qualname(fn)}, {what}=...): {item!r} is not a parameter; the parameters are {names}"
            )
        out.append(name)
    return out
