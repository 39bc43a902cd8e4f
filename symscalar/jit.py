"""``symscalar.jit``: trace once per static configuration, run many times.

A jitted function's parameters are tensors, static values or dynamic values, decided by their
annotations (``StaticInt``/``int`` static, ``DynamicInt``/``DynamicFloat``/``NumberLike``
dynamic, ``torch.Tensor`` tensors; unannotated numbers are static) or by
``jit(fn, static=[...], dynamic=[...])``. The cache key holds the static values (type and
value, through any pytree), the tensor metadata (shape, dtype, device, requires_grad) and the
Python type of each dynamic value (it decides torch's type promotion); dynamic values are
inputs of the compiled program, so a new dynamic value of the same type is a cache hit.
``specialize(d)`` adds a guard ``d == value`` to the entry being traced.

The per-call path is a generated Python function with the user's signature: it builds the key
inline, looks it up, and calls the compiled entry. Everything else (validation with clear
errors, tracing, compiling) happens on a miss, under a lock.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import inspect
import itertools
import keyword
import re
import sys
import threading
import time
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, NamedTuple, ParamSpec, Protocol, TypeVar

import torch
from torch.utils.hooks import RemovableHandle
import torch.utils._pytree as pytree

try:
    import numpy
except ImportError:  # torch runs without numpy; then there are no numpy scalars to key
    numpy = None  # type: ignore[assignment]

from symscalar import autocast
from symscalar import grad as grad_transform
from symscalar import explain, nvfuser_backend, torch_backend
from symscalar.explain import Explanation, WouldTrace
from symscalar import state as outside
from symscalar.errors import StaticValueRequiredError, UnsupportedOperationError
from symscalar.ops.random import draw_seed
from symscalar.trace import ScalarVar, TensorVar, Trace, check_trace, format_static
from symscalar.tracing import TensorProxy, TraceBuilder, stop_gradient_p, tracing
from symscalar.types import (
    BoolLike,
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    FloatLike,
    IntLike,
    NumberLike,
    NumberProxy,
    StaticBool,
    StaticDims,
    StaticFloat,
    StaticInt,
    StaticShape,
    current_tracer,
)

__all__ = ["jit", "JitFunction", "JitModule", "CacheInfo", "grad", "value_and_grad"]

P = ParamSpec("P")
R = TypeVar("R", covariant=True)

# Parameter kinds
TENSOR, STATIC, AUTO = "tensor", "static", "auto"
DYN_INT, DYN_FLOAT, DYN_BOOL, DYN_NUMBER = "DynamicInt", "DynamicFloat", "DynamicBool", "NumberLike"
_DYNAMIC_KINDS = (DYN_INT, DYN_FLOAT, DYN_BOOL, DYN_NUMBER)

_KIND_OF_HINT: dict[Any, str] = {
    DynamicInt: DYN_INT, IntLike: DYN_INT,
    DynamicFloat: DYN_FLOAT, FloatLike: DYN_FLOAT,
    DynamicBool: DYN_BOOL, BoolLike: DYN_BOOL,
    NumberLike: DYN_NUMBER,
    StaticInt: STATIC, StaticFloat: STATIC, StaticBool: STATIC, StaticDims: STATIC,
    StaticShape: STATIC, int: STATIC, float: STATIC, bool: STATIC,
}
_KIND_OF_NAME = {getattr(h, "__name__", str(h)): k for h, k in _KIND_OF_HINT.items()}
_KIND_OF_NAME.update({"Tensor": TENSOR, "torch.Tensor": TENSOR})

_BACKENDS = ("auto", "torch", "nvfuser")


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: calls that found an entry, calls that traced, entries."""

    hits: int
    misses: int
    entries: int
    evictions: int = 0  # entries dropped beyond max_entries (least recently used first)


class JitFunction(Protocol, Generic[P, R]):
    """What ``symscalar.jit`` returns: the function, plus inspection methods."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    def last_trace(self) -> Trace | None: ...
    def last_backward_trace(self) -> Trace | None: ...
    def cache_info(self) -> CacheInfo: ...
    def cache_clear(self) -> None: ...
    def last_fusion(self) -> list[Any]: ...
    def explain(self) -> Explanation: ...
    def would_trace(self, *args: P.args, **kwargs: P.kwargs) -> WouldTrace: ...


@dataclasses.dataclass
class Entry:
    """One compiled program: the trace and what runs it."""

    trace: Trace
    run: Callable[..., Any]  # called with the call's tensors and dynamic values
    guards: tuple[tuple[ScalarVar, Any], ...]
    backward_trace: Trace | None = None
    backend: Any = None  # what compiled it (the nvFuser backend remembers its fusions)
    guard: Any = None  # the specialize() guard function (see _guard_function), for messages


class _Chain:
    """Cache value for a key with several entries (``specialize`` guards, or state guards that
    differ: a frozen and an unfrozen parameter). Each entry answers ``_MISS`` when its guards
    fail; the newest entry is tried first."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.last: Entry | None = None

    def __call__(self, *args: Any) -> Any:
        for entry in self.entries:
            out = entry.run(*args)
            if out is not _MISS:
                self.last = entry
                return out
        return _MISS


_MISS = object()
_MAX_ENTRIES_PER_KEY = 8


def _declared_at(fn: Any) -> str:
    """``file:line`` of the function's definition, for messages ('' when unknown)."""
    target = inspect.unwrap(getattr(_annotated_function(fn), "__func__", _annotated_function(fn)))
    code = getattr(target, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


def _tensor_facts(label: str, t: torch.Tensor) -> dict[str, tuple[str, Any]]:
    return {
        f"{label} shape": (str(tuple(t.shape)), tuple(t.shape)),
        f"{label} dtype": (str(t.dtype), t.dtype),
        f"{label} device": (str(t.device), t.device),
        f"{label} requires_grad": (str(t.requires_grad), t.requires_grad),
    }


class _TensorMeta:
    """A tensor inside a static or unannotated value, shown by its metadata."""

    def __init__(self, t: torch.Tensor) -> None:
        self.text = f"tensor{list(t.shape)} {t.dtype}"

    def __repr__(self) -> str:
        return self.text


def _static_fact(value: Any) -> tuple[str, Any]:
    """A static or unannotated value for messages and comparison: compared like its cache
    key (200 is not 200.0, -0.0 is not 0.0, NaN is NaN; tensors inside by metadata), shown by
    its repr with tensors as their metadata."""
    try:
        comparable = _auto_key(value)[0]
    except TypeError:
        comparable = (type(value), id(value))
    shown_value = pytree.tree_map(lambda v: _TensorMeta(v) if isinstance(v, torch.Tensor) else v, value)
    text = repr(shown_value)
    return (text if len(text) <= 60 else text[:57] + "..."), comparable


def _grad_mode() -> tuple[str, Any]:
    if torch.is_inference_mode_enabled():
        return "inference_mode", 2
    return ("on" if torch.is_grad_enabled() else "off (no_grad)"), torch.is_grad_enabled()


@dataclasses.dataclass(frozen=True)
class Limits:
    """``jit``'s options on retracing (see ``explain.py``); None means the global default."""

    max_traces: int | None = None
    on_limit: str | None = None
    retrace: bool = True
    max_entries: int | None = None


def _module_label(root: torch.nn.Module, path: str) -> str:
    return type(root).__name__ + (f".{path}" if path else "")


def _is_plain_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, torch.Tensor)


def _dynamic_annotation(value: Any) -> str:
    if isinstance(value, bool):
        return "DynamicBool"
    return "DynamicInt" if isinstance(value, int) else "DynamicFloat"


def _optional_members(hint: Any) -> tuple[list[Any], bool] | None:
    """The members of a ``Union``/``X | None`` annotation other than None, and whether None
    is one of them; None when ``hint`` is not a union."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    members = typing.get_args(hint)
    return [m for m in members if m is not type(None)], type(None) in members


def _union_kind(hint: Any) -> tuple[str, bool] | None:
    """A union of dynamic number types (``DynamicFloat | None``, ``Optional[DynamicInt]``,
    ``Union[DynamicInt, DynamicFloat]``): the dynamic kind, and whether None is allowed (then
    None is a static part of the key and the value is no program input)."""
    found = _optional_members(hint)
    if found is None:
        return None
    members, optional = found
    kinds = {_hint_kind(m) for m in members}
    if not kinds or not kinds <= set(_DYNAMIC_KINDS):
        return None
    return (kinds.pop() if len(kinds) == 1 else DYN_NUMBER), optional


def _hint_kind(hint: Any) -> str:
    if hint is inspect.Parameter.empty or hint is None:
        return AUTO
    union = _union_kind(hint)
    if union is not None:
        return union[0]
    if isinstance(hint, str):
        return _KIND_OF_NAME.get(hint.rsplit(".", 1)[-1] if hint != "torch.Tensor" else hint, AUTO)
    for known, kind in _KIND_OF_HINT.items():
        if hint is known:
            return kind
    if isinstance(hint, type) and issubclass(hint, torch.Tensor):
        return TENSOR
    return AUTO


def _annotated_function(fn: Any) -> Any:
    """The function whose annotations describe ``fn``'s parameters: partials unwrapped."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def _resolve_hints(
    fn: Callable[..., Any], frame_locals: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The parameters' annotations, resolved against the function's globals and the frame
    that called ``jit`` (local aliases under ``from __future__ import annotations``); and the
    string annotations that could not be resolved, by parameter, with why."""
    target = _annotated_function(fn)
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
            hints[name] = eval(annotation, dict(globalns), localns)  # noqa: S307 - an annotation
        except Exception as e:  # noqa: BLE001 - reported in explain() and retrace messages
            hints[name] = annotation  # _hint_kind still knows symscalar's names by spelling
            unresolved[name] = f"{annotation!r} ({type(e).__name__}: {e})"
    return hints, unresolved


def _param_kinds(
    fn: Callable[..., Any],
    sig: inspect.Signature,
    static: Any,
    dynamic: Any,
    frame_locals: Mapping[str, Any] | None = None,
) -> tuple[dict[str, str], dict[str, str], frozenset[str]]:
    """Each parameter's kind; the annotations that could not be resolved (by parameter, with
    why) among those left unannotated-like (AUTO); the dynamic parameters that accept None
    (``DynamicFloat | None``)."""
    hints, unresolved = _resolve_hints(fn, frame_locals)
    names = list(sig.parameters)
    kinds = {name: _hint_kind(hints.get(name, inspect.Parameter.empty)) for name in names}
    optional = {name for name in names if (_union_kind(hints.get(name)) or ("", False))[1]}
    for name, p in sig.parameters.items():
        if kinds[name] == TENSOR and p.default is None:
            kinds[name] = AUTO  # `mask: torch.Tensor = None`, as real models write: None or a tensor

    def resolve(items: Any, what: str) -> list[str]:
        items = [items] if isinstance(items, (str, int)) else list(items or ())
        out = []
        for item in items:
            name = names[item] if isinstance(item, int) and -len(names) <= item < len(names) else item
            if name not in kinds:
                raise ValueError(
                    f"jit({_qualname(fn)}, {what}=...): {item!r} is not a parameter; "
                    f"the parameters are {names}"
                )
            out.append(name)
        return out

    static_names = resolve(static, "static")
    dynamic_names = resolve(dynamic, "dynamic")
    for name in set(static_names) & set(dynamic_names):
        raise ValueError(f"jit({_qualname(fn)}): parameter {name!r} is both static and dynamic")
    for name in static_names:
        kinds[name] = STATIC
    for name in dynamic_names:
        if kinds[name] not in _DYNAMIC_KINDS:
            kinds[name] = DYN_NUMBER
    for name in (*static_names, *dynamic_names):
        unresolved.pop(name, None)
    optional -= set(static_names)
    unresolved = {name: why for name, why in unresolved.items() if kinds.get(name) == AUTO}
    return kinds, unresolved, frozenset(optional)


# -- keys ---------------------------------------------------------------------------------
#
# One pytree, torch's (``torch.utils._pytree``: its registry, so NamedTuples, OrderedDicts,
# ``transformers``' ModelOutput and registered dataclasses are containers), decides the
# structure of inputs, outputs and keys. A key compares type and value all the way down:
# 200 is not 200.0, True is not 1, (-0.0,) is not (0.0,), {1: x} is not {1.0: x}, and a NaN
# equals itself, so that a call with it finds its entry.

_NODES = pytree.SUPPORTED_NODES
_node_type = pytree._get_node_type  # what tree_flatten dispatches on (namedtuple for all)
_ATOMS = frozenset({int, bool, str, bytes, type(None), type(Ellipsis)})
_NUMPY_SCALARS: tuple[type, ...] = (numpy.generic,) if numpy is not None else ()


class _StaticTensorError(TypeError):
    """A tensor where a static value is needed (raised on the per-call path; the miss path
    turns it into a message naming the parameter)."""

    def __init__(self, tensor: torch.Tensor, container: Any = None) -> None:
        super().__init__(tensor, container)
        self.tensor = tensor
        self.container = container


def _tensor_key(t: torch.Tensor) -> tuple[Any, ...]:
    return (t.shape, t.dtype, t.device, t.requires_grad)


def _tree_key(v: Any, tensors: list[Any] | None) -> Any:
    """The cache key of ``v``, walked in ``tree_flatten``'s order. Tensor leaves count by
    metadata and are appended to ``tensors`` (the program's inputs; torch's ``DynamicInt``
    too, as an int); ``tensors=None`` means a static value, where a tensor raises. Every
    other leaf counts by type and value."""
    t = type(v)
    if t in _ATOMS:
        return (t, v)
    if t is float:
        return (t, float.__repr__(v))
    if isinstance(v, torch.Tensor):
        if tensors is None:
            raise _StaticTensorError(v)
        tensors.append(v)
        return _tensor_key(v)
    if tensors is not None and isinstance(v, int) and _is_torch_dynamic_int(v):
        tensors.append(int(v))  # unannotated, marked dynamic the torch way: a program input
        return (int, "dynamic")
    node = _NODES.get(_node_type(v))
    if node is not None:
        children, context = node.flatten_fn(v)
        return (t, _tree_key(context, None), tuple(_tree_key(c, tensors) for c in children))
    return _leaf_key(v)


def _is_torch_dynamic_int(v: Any) -> bool:
    """torch's own marker of a dynamic int (``torch.fx.experimental.sym_node.DynamicInt``, an
    ``int`` subclass for torch.compile), recognised without importing that module (it imports
    sympy)."""
    t = type(v)
    return t.__name__ == "DynamicInt" and t.__module__ == "torch.fx.experimental.sym_node"


def _leaf_key(v: Any) -> Any:
    """A leaf that is not a pytree node: numbers by exact value, immutable containers and
    frozen dataclasses field by field, anything else by its own ``==``/``hash``."""
    t = type(v)
    if isinstance(v, float):  # float subclasses, numpy.float64 among them
        return (t, float.__repr__(v))
    if isinstance(v, complex):
        return (t, complex.__repr__(v))
    if isinstance(v, _NUMPY_SCALARS):
        return (t, typing.cast(Any, v).tobytes())  # the exact bits: signed zeros differ, a NaN equals itself
    if isinstance(v, (tuple, list)):  # subclasses the pytree does not know
        return (t, tuple(_contained_key(x, v) for x in v))
    if isinstance(v, frozenset):
        return (t, frozenset(_contained_key(x, v) for x in v))
    if dataclasses.is_dataclass(v) and not isinstance(v, type) and v.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return (t, tuple(_contained_key(getattr(v, f.name), v) for f in dataclasses.fields(v)))
    return (t, v)


def _contained_key(x: Any, container: Any) -> Any:
    try:
        return _tree_key(x, None)
    except _StaticTensorError as e:
        raise _StaticTensorError(e.tensor, e.container if e.container is not None else container) from None


def _static_key(v: Any) -> Any:
    return _tree_key(v, None)


def _auto_key(v: Any) -> tuple[Any, list[torch.Tensor]]:
    """Key and tensors of an unannotated argument: tensors are traced, the rest is static."""
    tensors: list[torch.Tensor] = []
    return _tree_key(v, tensors), tensors


def _element_key(kind: str) -> Callable[[Any, list[Any]], Any]:
    """Key of one element of ``*args``/``**kwargs`` of ``kind``; appends its program inputs."""
    if kind == AUTO:
        return _tree_key
    if kind == STATIC:
        return lambda v, inputs: _tree_key(v, None)

    def tensor_or_dynamic(v: Any, inputs: list[Any]) -> Any:
        inputs.append(v)
        return _tensor_key(v) if kind == TENSOR else type(v)

    return tensor_or_dynamic


def _var_positional_key(kind: str) -> Callable[[tuple[Any, ...]], tuple[Any, list[Any]]]:
    element = _element_key(kind)

    def key(values: tuple[Any, ...]) -> tuple[Any, list[Any]]:
        inputs: list[Any] = []
        return tuple(element(v, inputs) for v in values), inputs

    return key


def _var_keyword_key(kind: str) -> Callable[[dict[str, Any]], tuple[Any, list[Any]]]:
    element = _element_key(kind)

    def key(values: dict[str, Any]) -> tuple[Any, list[Any]]:
        inputs: list[Any] = []
        return tuple((name, element(v, inputs)) for name, v in values.items()), inputs

    return key


def _torch_function_modes() -> tuple[Any, ...]:
    """Active torch function modes (``with torch.device(...)``, ``set_default_device``...):
    they change what factory calls create while tracing."""
    return tuple(
        (type(m), getattr(m, "device", None))
        for m in torch.overrides._get_current_function_mode_stack()  # type: ignore[no-untyped-call]
    )


# Ambient torch state that changes what a program computes, in every key: grad mode (True;
# False; 2 under inference_mode), the default dtype, active torch function modes (a default
# device). Each is one C call on the hot path.
_AMBIENT_NAMESPACE: dict[str, Any] = {
    "_ss_grad_enabled": torch.is_grad_enabled,
    "_ss_inference": torch.is_inference_mode_enabled,
    "_ss_default_dtype": torch.get_default_dtype,
    "_ss_n_modes": torch._C._len_torch_function_stack,
    "_ss_modes": _torch_function_modes,
}
_AMBIENT_KEY = [
    "_ss_grad_enabled() or (_ss_inference() and 2)",
    "_ss_default_dtype()",
    "_ss_n_modes() and _ss_modes()",
]


def _generate_dispatch(
    fn: Callable[..., Any], sig: inspect.Signature, kinds: dict[str, str], state: _JitState
) -> Callable[..., Any]:
    """Generate the per-call function: the user's signature, the key inline, one lookup.

    The key of a tensor is its metadata, of a static value its type and value (``_tree_key``),
    of a dynamic value its exact Python type: an int passed for a ``DynamicFloat`` promotes
    like an int in torch (int8 tensor * 200 is int8), so it gets its own entry, traced with
    an int; a type the miss path rejects never gets an entry.
    """
    # Every global of the generated code starts with _ss_ so that no parameter name of the
    # user's function (even `type` or `float`) can shadow it.
    namespace: dict[str, Any] = {
        "_ss_cache": state.cache, "_ss_used": state.cache.move_to_end, "_ss_miss": state.miss, "_ss_MISS": _MISS, "_ss_state": state,
        "_ss_next_call": state.calls.__next__, "_ss_auto_key": _auto_key,
        "_ss_static_key": _static_key, "_ss_Tensor": torch.Tensor, "_ss_type": type,
        "_ss_int": int, "_ss_tracer": current_tracer.get, "_ss_inline": state.inline,
        "_ss_EMPTY": ((), ()),
        **_AMBIENT_NAMESPACE,
        "_ss_hooks": RemovableHandle, "_ss_hooks_seen": -1,
        "_ss_autocast": autocast.autocast_state, "_ss_autocast_any": torch._C._is_any_autocast_enabled,
    }
    state.namespace = namespace
    for name in sig.parameters:
        if name.startswith("_ss_"):
            raise ValueError(f"symscalar.jit: parameter names must not start with _ss_ ({name!r})")
    params, prep, key, call, all_args = [], [], [], [], []
    seen_kw_only = False
    for i, (name, p) in enumerate(sig.parameters.items()):
        if p.kind is p.KEYWORD_ONLY and not seen_kw_only:
            params.append("*")
            seen_kw_only = True
        text = ("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + name
        if p.kind is p.VAR_POSITIONAL:
            seen_kw_only = True
        if p.default is not p.empty:
            namespace[f"_ss_d{i}"] = p.default
            text += f"=_ss_d{i}"
        params.append(text)
        if p.kind is p.POSITIONAL_ONLY and (
            i + 1 == len(sig.parameters)
            or list(sig.parameters.values())[i + 1].kind is not p.POSITIONAL_ONLY
        ):
            params.append("/")
        all_args.append(name)
        kind = kinds[name]
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            make = _var_positional_key if p.kind is p.VAR_POSITIONAL else _var_keyword_key
            namespace[f"_ss_var{i}"] = make(kind)
            prep.append(f"_ss_k{i}, _ss_a{i} = _ss_var{i}({name}) if {name} else _ss_EMPTY")
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        elif kind == TENSOR:
            key += [f"{name}.shape", f"{name}.dtype", f"{name}.device", f"{name}.requires_grad"]
            call.append(name)
        elif kind == STATIC:
            key += [f"_ss_type({name})", f"{name} if _ss_type({name}) is _ss_int else _ss_static_key({name})"]
        elif kind == AUTO:
            prep += [
                f"if _ss_type({name}) is _ss_Tensor:",
                f"    _ss_k{i} = ({name}.shape, {name}.dtype, {name}.device, {name}.requires_grad)",
                f"    _ss_a{i} = ({name},)",
                "else:",
                f"    _ss_k{i}, _ss_a{i} = _ss_auto_key({name})",
            ]
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        elif name in state.optional:  # `DynamicFloat | None`: None is static, no program input
            prep += [
                f"if {name} is None:",
                f"    _ss_k{i}, _ss_a{i} = None, ()",
                "else:",
                f"    _ss_k{i}, _ss_a{i} = _ss_type({name}), ({name},)",
            ]
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        else:  # dynamic: the exact type is the key, the value is an input
            key.append(f"_ss_type({name})")
            call.append(name)
    key += _AMBIENT_KEY
    # the call-time autocast state: False (one C call) unless autocast is on
    key.append("(_ss_autocast_any() and _ss_autocast())")
    key_src = "(" + "".join(f"{k}, " for k in key) + ")"
    args_src = "(" + "".join(f"{a}, " for a in all_args) + ")"
    prep_src = "".join(f"\n        {line}" for line in prep)
    body = f"""
    _ss_next_call()
    try:{prep_src}
        _ss_key = {key_src}
        _ss_entry = _ss_cache[_ss_key]
    except (KeyError, AttributeError, TypeError):
        return _ss_miss({args_src})
    _ss_used(_ss_key)  # least recently used first: evicted beyond max_entries
    _ss_state.last = _ss_entry
    _ss_out = _ss_entry({", ".join(call)})
    if _ss_out is _ss_MISS:
        return _ss_miss({args_src})
    return _ss_out
"""
    # Hooks: every register_*hook takes a new RemovableHandle id, so one comparison per call
    # tells whether the hooks of the traced modules must be looked at again.
    source = f"""
def _ss_dispatch({", ".join(params)}):
    if _ss_tracer() is not None:
        return _ss_inline({args_src})
    if _ss_hooks.next_id != _ss_hooks_seen:
        return _ss_state.hooked_call({args_src})
{body}
def _ss_inner({", ".join(params)}):
{body}
def _ss_key_and_args({", ".join(all_args)}):{prep_src.replace(chr(10) + "    ", chr(10))}
    return {key_src}, ({"".join(f"{c}, " for c in call)})
"""
    exec(compile(source, f"<symscalar.jit dispatch of {_qualname(fn)}>", "exec"), namespace)  # noqa: S102
    state.key_and_args = namespace["_ss_key_and_args"]
    state.inner = namespace["_ss_inner"]
    dispatch: Callable[..., Any] = namespace["_ss_dispatch"]
    dispatch.__source__ = source  # type: ignore[attr-defined]
    return dispatch


class _JitState:
    """Everything a jitted function owns: its cache, counters and the miss path."""

    def __init__(
        self,
        fn: Callable[..., Any],
        static: Any,
        dynamic: Any,
        backend: str,
        limits: Limits | None = None,
        frame_locals: Mapping[str, Any] | None = None,
    ) -> None:
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
        limits = limits or Limits()
        explain.check_limits(limits.max_traces, limits.on_limit, limits.max_entries)
        self.retraces = explain.RetraceLog(_qualname(fn), limits.max_traces, limits.on_limit, limits.retrace)
        self.max_entries = limits.max_entries
        self.fn = fn
        self.backend = backend
        # A module is called as itself (hooks run) but its parameters are forward's.
        signature_of = fn.forward if isinstance(fn, torch.nn.Module) else fn
        try:
            self.sig = inspect.signature(signature_of)
        except ValueError:
            raise TypeError(
                f"symscalar.jit cannot read the signature of {fn!r}; wrap it in a function, "
                "e.g. jit(lambda a, b: torch.mm(a, b))"
            ) from None
        self.kinds, self.unresolved, self.optional = _param_kinds(
            signature_of, self.sig, static, dynamic, frame_locals
        )
        self.declared_at = _declared_at(signature_of)
        # What the traces read outside the arguments (see symscalar/state.py)
        self.top = fn if isinstance(fn, torch.nn.Module) else None
        self._traced = fn.forward if isinstance(fn, torch.nn.Module) else fn
        self.roots = outside.Roots(fn)
        self.hooks = outside.HookWatch(self.top)
        self.namespace: dict[str, Any] = {}  # the dispatch's globals (hook epoch seen)
        self.inner: Callable[..., Any]  # the dispatch without the hook check
        # key -> compiled entry, least recently used first (OrderedDict.move_to_end on a hit)
        self.cache: collections.OrderedDict[Any, Callable[..., Any]] = collections.OrderedDict()
        self.evictions = 0
        self.entries: dict[int, Entry] = {}  # id(cache value) -> Entry, for inspection
        self.calls = itertools.count()
        self.misses = 0
        self.rejected = 0
        self.calls_before_clear = 0
        self.lock = threading.RLock()
        self.last: Any = None
        self.key_and_args: Callable[..., tuple[Any, tuple[Any, ...]]]

    # -- hooks -------------------------------------------------------------------------------

    def hooked_call(self, args: tuple[Any, ...]) -> Any:
        """The slow path taken when a hook was registered somewhere since the last check:
        refuse hooks jit cannot honour; run the jitted module's forward (pre-)hooks eagerly
        around the program (on every call while it has any)."""
        epoch = outside.hook_epoch()
        positional, kwargs = self._call(args, lambda kind, where, v: v, lambda *a, **k: (a, k))
        if not self.hooks.check():
            self.namespace["_ss_hooks_seen"] = epoch
            return self.inner(*positional, **kwargs)
        assert self.top is not None
        return outside.call_with_hooks(self.top, self.inner, positional, kwargs)

    # -- the miss path ---------------------------------------------------------------------

    def miss(self, args: tuple[Any, ...]) -> Any:
        try:
            self._validate(args)
        except TypeError:
            with self.lock:
                self.rejected += 1  # neither a hit nor a miss
            raise
        key, call_args = self.key_and_args(*args)
        with self.lock:
            value = self.cache.get(key)
            if value is not None:
                out = value(*call_args)
                if out is not _MISS:
                    self.last = value
                    return out
            facts = self.call_facts(args)
            reasons = self.retraces.reasons(facts, _failed_guards(value, call_args, self.entries))
            fixes = self.fixes(args)
            self.retraces.before_trace(reasons, fixes)
            start = time.perf_counter()
            entry = self._compile(args, call_args)
            self.misses += 1
            value = self._insert(key, value, entry)
            self.retraces.record(
                facts, reasons, fixes, (time.perf_counter() - start) * 1e3, self.auto_numbers(args)
            )
        self.last = value
        out = value(*call_args)
        assert out is not _MISS, "a freshly traced entry must accept the call it was traced for"
        return out

    # -- why a call traces (recorded on misses only; see explain.py) ----------------------

    def call_facts(self, args: tuple[Any, ...]) -> dict[str, tuple[str, Any]]:
        """What a cache entry depends on, for this call: ``{label: (display, comparable)}``."""
        facts: dict[str, tuple[str, Any]] = {}
        suffix = f" of {_qualname(self.fn)}"
        for p, _, where, value in self._arguments(args):
            label = where.removesuffix(suffix)
            kind = self.kinds[p.name]
            if isinstance(value, torch.Tensor) and kind in (TENSOR, AUTO):
                facts.update(_tensor_facts(label.replace("parameter", "tensor", 1), value))
            elif kind in (STATIC, AUTO, TENSOR):
                facts[label] = _static_fact(value)
            else:
                facts[f"{label} type"] = (type(value).__name__, type(value))
        facts["grad mode"] = _grad_mode()
        facts["default dtype"] = (str(torch.get_default_dtype()), torch.get_default_dtype())
        for device in ("cpu", "cuda"):
            on = torch.is_autocast_enabled(device)
            dtype = torch.get_autocast_dtype(device) if on else None
            facts[f"autocast ({device})"] = (f"on ({dtype})" if on else "off", dtype)
        if isinstance(self.fn, torch.nn.Module):
            for path, module in self.fn.named_modules():
                facts[f"{_module_label(self.fn, path)}.training"] = (str(module.training), module.training)
            for path, t in (*self.fn.named_parameters(), *self.fn.named_buffers()):
                facts.update(_tensor_facts(f"{_module_label(self.fn, path)}", t))
        return facts

    def fixes(self, args: tuple[Any, ...]) -> dict[str, str]:
        """The fix to show next to a reason, by fact label."""
        fixes = {}
        where = f", declared at {self.declared_at}" if self.declared_at else ""
        for name, value in zip(self.sig.parameters, args):
            kind = self.kinds[name]
            label = f"parameter '{name}'"
            if name in self.unresolved:
                fixes[label] = (
                    f"its annotation {self.unresolved[name]} could not be resolved, so it is static; "
                    "import the name at module level, or pass jit(..., dynamic=[...])"
                )
            elif kind == STATIC:  # declared static on purpose: each value is its own program
                fixes[label] = f"static{where}"
            elif kind == AUTO and _is_plain_number(value) and not _is_torch_dynamic_int(value):
                fixes[label] = (
                    f"unannotated, so static{where}: annotate it "
                    f"{_dynamic_annotation(value)} to make it a runtime input"
                )
        return fixes

    def auto_numbers(self, args: tuple[Any, ...]) -> list[str]:
        """Labels of the unannotated number parameters of this call (for the one-time warning
        after repeated retraces)."""
        return [
            f"parameter '{name}'" for name, value in zip(self.sig.parameters, args)
            if self.kinds[name] == AUTO and _is_plain_number(value) and name not in self.unresolved
            and not _is_torch_dynamic_int(value)
        ]

    def would_trace(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> explain.WouldTrace:
        """Whether ``f(*args, **kwargs)`` would trace, and why; nothing is traced or run."""
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{_qualname(self.fn)}(): {e}") from None
        bound.apply_defaults()
        values = tuple(bound.arguments[name] for name in self.sig.parameters)
        self._validate(values)
        key, call_args = self.key_and_args(*values)
        value = self.cache.get(key)
        if value is not None and _accepts_state(value, call_args, self.entries):
            return explain.WouldTrace(False)  # some entry under the key accepts the call
        failed = _failed_guards(value, call_args, self.entries) if value is not None else []
        reasons = self.retraces.reasons(self.call_facts(values), failed)
        fixes = self.fixes(values)
        return explain.WouldTrace(True, tuple(explain._with_fix(r, fixes) for r in reasons))

    def _insert(self, key: Any, value: Any, entry: Entry) -> Any:
        limit = self.max_entries if self.max_entries is not None else explain.config.max_entries
        while key not in self.cache and len(self.cache) >= limit:
            _, evicted = self.cache.popitem(last=False)
            self.evictions += 1
            for run in [e.run for e in evicted.entries] if isinstance(evicted, _Chain) else [evicted]:
                self.entries.pop(id(run), None)
        self.entries[id(entry.run)] = entry
        if value is None:
            self.cache[key] = entry.run
            return entry.run
        chain = value if isinstance(value, _Chain) else _Chain()
        if value is not chain:
            chain.entries.append(self.entries[id(value)])
        chain.entries.insert(0, entry)
        # State that changes for good (a KV cache growing each call) must not make every call
        # try every old entry: keep the newest few.
        for old in chain.entries[_MAX_ENTRIES_PER_KEY:]:
            self.entries.pop(id(old.run), None)
        del chain.entries[_MAX_ENTRIES_PER_KEY:]
        self.cache[key] = chain
        return chain

    def _where(self, name: str) -> str:
        return f"parameter '{name}' of {_qualname(self.fn)}"

    def _arguments(self, args: tuple[Any, ...]) -> list[tuple[inspect.Parameter, str, str, Any]]:
        """Each value of the call as (parameter, keyword, description for messages, value);
        ``*args`` and ``**kwargs`` give one item per value."""
        items = []
        fn = _qualname(self.fn)
        for (name, p), value in zip(self.sig.parameters.items(), args):
            if p.kind is p.VAR_POSITIONAL:
                items += [(p, name, f"argument {j} of *{name} of {fn}", v) for j, v in enumerate(value)]
            elif p.kind is p.VAR_KEYWORD:
                items += [(p, k, f"keyword argument '{k}' of {fn}", v) for k, v in value.items()]
            else:
                items.append((p, name, self._where(name), value))
        return items

    def _call(
        self, args: tuple[Any, ...], convert: Callable[[str, str, Any], Any],
        target: Callable[..., Any] | None = None,
    ) -> Any:
        """Call the function (or ``target``) with the converted values of the call
        (``convert(kind, where, value)``), in the order the per-call path passes them to the
        program."""
        pos: list[Any] = []
        kw: dict[str, Any] = {}
        for p, keyword_, where, value in self._arguments(args):
            converted = convert(self.kinds[p.name], where, value)
            if p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY):
                kw[keyword_] = converted
            else:
                pos.append(converted)
        return (target or self.fn)(*pos, **kw)

    def _validate(self, args: tuple[Any, ...]) -> None:
        for p, _, where, value in self._arguments(args):
            if value is None and p.name in self.optional:
                continue
            _check_argument(self.kinds[p.name], value, where)

    def inline(self, args: tuple[Any, ...]) -> Any:
        """Called from inside another jitted function's trace: run the function on the
        traced values, so that it becomes part of that trace."""
        return self._call(args, _check_inlined_argument)

    def _compile(self, args: tuple[Any, ...], call_args: tuple[Any, ...]) -> Entry:
        fn = self.fn
        builder = TraceBuilder(_identifier(_qualname(fn).rsplit('.', 1)[-1]))
        watch = outside.TraceWatch(self.roots, builder, self.top, dict(zip(self.sig.parameters, args)))
        seed = torch.initial_seed()
        with watch, tracing(builder):
            # jit(module) traces forward: the module's own hooks run around the program
            result = self._call(args, functools.partial(_proxy, builder), self._traced)
        if torch.initial_seed() != seed:
            raise UnsupportedOperationError(
                f"{_qualname(fn)} calls torch.manual_seed while it is traced: that runs once, at "
                "trace time, while the program's random ops draw a fresh seed on every call. "
                "Seed outside the jitted function (torch.manual_seed before calling it)."
            )
        output = _Output(result, _qualname(fn))
        leaves = output.leaves
        pending, values = self._state_writes(builder, watch)
        render = _with_state_outputs(output.render, len(leaves)) if pending else output.render
        trace = builder.build([*leaves, *values])
        check_trace(trace)
        backend = self._backend_for(trace)
        runs = _AutocastOff(backend)
        rng_seed = (None,) if builder.rng_seed is not None else ()
        captured = watch.captured(builder, _qualname(fn))  # those the trace reads, in its input order
        requires_grad = [
            isinstance(value, torch.Tensor) and value.requires_grad
            for value in (*call_args, *(c.tensor for c in captured), *rng_seed)
        ]
        position = {id(c.tensor): j for j, c in enumerate(captured)}
        with_grad = _depends_on(trace, {v for v, r in zip(trace.inputs, requires_grad) if r})
        writes = [
            outside.StateWrite(how, position[target] if how == "copy" else target, name,
                               detach=out not in with_grad)
            for (how, target, name), out in zip(pending, trace.outputs[len(leaves):])
        ]
        backward: Trace | None = None
        # grad mode is part of the key, so an entry traced without grad never runs with it
        if (torch.is_grad_enabled() or builder.grad_inside) and any(
            r and grad_transform.is_differentiable(v) for r, v in zip(requires_grad, trace.inputs)
        ):
            run, backward = grad_transform.autograd_runner(trace, render, (), backend, requires_grad)
            if builder.grad_inside:  # an enable_grad() region in a call without grad
                run = grad_transform.with_grad_enabled(run)
        else:
            run = runs.compile_trace(trace, render)
        if rng_seed:
            run = _append_rng_seed(run)
        run = _finish_with_state(run, output) if pending else output.wrap(run)
        modules = {**{i: m for i, (m, _) in watch.modules.items()}, **watch.used_modules}
        self.hooks.add(watch.used_modules, watch.names)
        guards = tuple(builder.guards)
        guard = _guard_function(trace, guards, builder) if guards else None
        entry_run = outside.make_entry(
            run, watch.roots, captured,
            [(m, watch.modules[i][1] if i in watch.modules else None) for i, m in modules.items()],
            guard, writes, _MISS, _qualname(fn), aliases=watch.aliases(captured, modules),
        )
        return Entry(trace, entry_run, guards, backward, backend, guard)

    def _state_writes(
        self, builder: TraceBuilder, watch: outside.TraceWatch
    ) -> tuple[list[tuple[str, Any, str]], list[Any]]:
        """The state the traced function writes, as (how, target, name) and the traced values:
        in-place ops on captured tensors (``builder.write_backs``, copied in) first, then
        attribute assignments of traced tensors (assigned with ``setattr``)."""
        writes: list[tuple[str, Any, str]] = []
        values: list[Any] = []
        for target, value in builder.write_backs:  # a leaf requiring grad: checked by the tracer
            builder.unwrap(target)  # read on every call, by path when it has one
            writes.append(("copy", id(target), ""))
            values.append(value)
        for write in watch.writes:
            writes.append(("set", write.owner, write.name))
            values.append(write.value)
        return writes, values

    def _backend_for(self, trace: Trace) -> Any:
        if self.backend == "nvfuser":
            nvfuser_backend.check_available(trace)  # BackendUnavailableError saying why
            return nvfuser_backend.NvFuserBackend()
        if self.backend == "auto" and nvfuser_backend.usable_for(trace):
            return nvfuser_backend.NvFuserBackend()
        return torch_backend

    # -- inspection ------------------------------------------------------------------------

    def last_entry(self) -> Entry | None:
        last = self.last
        if isinstance(last, _Chain):
            return last.last
        return self.entries.get(id(last))

    def last_trace(self) -> Trace | None:
        entry = self.last_entry()
        return entry.trace if entry else None

    def last_backward_trace(self) -> Trace | None:
        entry = self.last_entry()
        return entry.backward_trace if entry else None

    def _count_calls(self) -> int:
        # itertools.count: next() is atomic under the GIL, so concurrent calls are all counted
        return int(repr(self.calls)[6:-1])

    def last_fusion(self) -> list[Any]:
        entry = self.last_entry()
        if entry is None or not isinstance(entry.backend, nvfuser_backend.NvFuserBackend):
            return nvfuser_backend.FusionList()
        return entry.backend.last_fusions()

    def cache_info(self) -> CacheInfo:
        calls = self._count_calls() - self.calls_before_clear
        entries = sum(len(v.entries) if isinstance(v, _Chain) else 1 for v in self.cache.values())
        return CacheInfo(calls - self.misses - self.rejected, self.misses, entries, self.evictions)

    def cache_clear(self) -> None:
        with self.lock:
            self.cache.clear()
            self.entries.clear()
            self.last = None
            self.misses = 0
            self.rejected = 0
            self.evictions = 0
            self.calls_before_clear = self._count_calls()


class _AutocastOff:
    """A backend whose compiled programs run with autocast disabled: the trace already holds
    the casts autocast made while tracing (see ``symscalar.autocast``), and torch must not
    cast a second time, in the forward or in the backward."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def compile_trace(self, trace: Trace, render: Any = None) -> Callable[..., Any]:
        compiled = self.backend.compile_trace(trace, render)

        def run(*args: Any) -> Any:
            state = autocast.autocast_state()
            if state is None:
                return compiled(*args)
            for device, _ in state:
                torch.set_autocast_enabled(device, False)
            try:
                return compiled(*args)
            finally:
                for device, _ in state:
                    torch.set_autocast_enabled(device, True)

        return run


def _qualname(fn: Any) -> str:
    """A name for messages: functions by qualified name, other callables (modules, partials)
    by their class."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return name if isinstance(name, str) else type(fn).__name__


def _identifier(name: str) -> str:
    """A valid, non-keyword Python identifier for generated code (``<lambda>`` -> ``_lambda_``)."""
    name = re.sub(r"\W", "_", name) or "f"
    if keyword.iskeyword(name) or name[0].isdigit():
        name = f"_{name}"
    return name


# -- arguments ----------------------------------------------------------------------------

# The exact Python types a dynamic parameter takes; each is traced as itself, so that it
# promotes in torch exactly as in eager (an int for a DynamicFloat stays an int).
_DYNAMIC_TYPES: dict[str, tuple[type, ...]] = {
    DYN_INT: (int,), DYN_FLOAT: (float, int), DYN_BOOL: (bool,), DYN_NUMBER: (bool, int, float),
}


def _check_argument(kind: str, value: Any, where: str) -> None:
    """Raise a TypeError saying what to pass when ``value`` cannot be a ``kind`` argument."""
    if kind == TENSOR:
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{where} is annotated torch.Tensor but got {type(value).__name__}")
    elif kind in _DYNAMIC_KINDS:
        _check_dynamic_value(kind, value, where)
    else:
        try:
            key = _tree_key(value, None if kind == STATIC else [])
        except _StaticTensorError as e:
            raise TypeError(_static_tensor_message(where, e)) from None
        try:
            hash(key)
        except TypeError:
            raise TypeError(
                f"{where} is static, so its value is part of the cache key and must be "
                f"hashable; got {type(value).__name__}. Pass a tuple instead of a list, make a "
                "dataclass frozen=True, or declare the parameter dynamic."
            ) from None


def _static_tensor_message(where: str, error: _StaticTensorError) -> str:
    if error.container is not None:
        name = type(error.container).__name__
        return (
            f"{where} holds a tensor inside a {name}, which torch's pytree does not know, so "
            f"the tensor would be baked into the program. Register {name} as a pytree node "
            f"(torch.utils._pytree.register_dataclass({name}) for a dataclass, "
            "register_pytree_node otherwise) so that its tensors are traced, or pass the tensor "
            "as an argument of its own."
        )
    return (
        f"{where} is static (its value is part of the cache key), so it cannot be a tensor "
        f"(got a {tuple(error.tensor.shape)} {error.tensor.dtype} tensor). Annotate it "
        "torch.Tensor (or leave it unannotated) to pass a tensor, or pass a Python number "
        "(t.item()) for a static value."
    )


def _check_dynamic_value(kind: str, value: Any, where: str) -> None:
    if type(value) in _DYNAMIC_TYPES[kind]:
        return
    raise TypeError(f"{where} is {kind} but got {type(value).__name__} {value!r}: {_dynamic_fix(kind, value)}")


def _dynamic_fix(kind: str, value: Any) -> str:
    """What to pass instead: nothing is converted silently, since the Python type of a
    number decides torch's type promotion."""
    if isinstance(value, torch.Tensor):
        return (
            "a tensor is not a number. Pass a Python number (t.item()) to keep it a runtime "
            "scalar, or annotate the parameter torch.Tensor to keep the tensor (its dtype, "
            "device and gradient)."
        )
    if isinstance(value, _NUMPY_SCALARS):
        return (
            "numpy scalars are not converted silently (torch promotes them unlike Python "
            "numbers: numpy.bool_ like a float). Pass int(v), float(v) or bool(v)."
        )
    if isinstance(value, bool):
        return (
            "in torch a bool promotes as a bool (a bool tensor + True stays bool), not as a "
            "number. Pass int(v) or float(v), or annotate the parameter DynamicBool or NumberLike."
        )
    for base in (int, float):
        if isinstance(value, base):
            if type(value) is not base:
                return f"{type(value).__name__} (a subclass of {base.__name__}) is not converted silently; pass {base.__name__}(v)."
            expected = " or ".join(t.__name__ for t in _DYNAMIC_TYPES[kind])
            return (
                f"it takes {expected}, which keeps the program's types; pass {expected}, or "
                "annotate the parameter NumberLike (any number, each type its own program)."
            )
    expected = " or ".join(t.__name__ for t in _DYNAMIC_TYPES[kind])
    return f"pass a Python {expected}, or declare the parameter static."


def _tensor_input(builder: TraceBuilder, t: torch.Tensor) -> TensorProxy:
    return builder.tensor_input(TensorVar(tuple(t.shape), t.dtype, t.device), t.requires_grad)


def _proxy(builder: TraceBuilder, kind: str, where: str, value: Any) -> Any:
    """The traced stand-in of an argument: tensors and dynamic numbers become proxies,
    static values stay themselves (in containers: their tensor leaves become proxies)."""
    if kind == TENSOR:
        return _tensor_input(builder, value)
    if kind in _DYNAMIC_KINDS:  # None only reaches here for `DynamicFloat | None`
        return None if value is None else builder.scalar_input(type(value), value, where)
    if kind == AUTO:
        leaves, spec = pytree.tree_flatten(value, is_leaf=_is_size)
        return pytree.tree_unflatten([_auto_leaf(builder, where, t) for t in leaves], spec)
    return value


def _auto_leaf(builder: TraceBuilder, where: str, leaf: Any) -> Any:
    """A leaf of an unannotated argument while tracing: tensors and torch's ``DynamicInt``
    are program inputs (in ``_tree_key``'s order), anything else is static."""
    if isinstance(leaf, torch.Tensor):
        return _tensor_input(builder, leaf)
    if isinstance(leaf, int) and _is_torch_dynamic_int(leaf):
        return builder.scalar_input(int, int(leaf), where)
    return leaf


def _check_inlined_argument(kind: str, where: str, value: Any) -> Any:
    """An argument of a jitted function called while another one traces: traced values
    pass through (the call becomes part of that trace) when their kind fits."""
    if kind == TENSOR:
        if not isinstance(value, (torch.Tensor, TensorProxy)):
            raise TypeError(f"{where} is annotated torch.Tensor but got {type(value).__name__}")
    elif kind in _DYNAMIC_KINDS:
        if value is None:
            pass  # `DynamicFloat | None` (a None for a plain DynamicFloat fails in the op)
        elif not isinstance(value, NumberProxy):
            _check_dynamic_value(kind, value, where)
        elif value._python_type not in _DYNAMIC_TYPES[kind]:
            raise TypeError(
                f"{where} is {kind} but got {type(value).__name__} {value._name} "
                f"({value._origin}): {_dynamic_fix(kind, value._python_type())}"
            )
    elif kind == STATIC:
        traced = [v for v in pytree.tree_leaves(value) if isinstance(v, (NumberProxy, TensorProxy))]
        if traced:
            what = ", ".join(repr(v) for v in traced)
            raise StaticValueRequiredError(
                f"{where} is static (a compile-time constant), but got the traced value "
                f"{what}. Declare it static where it enters the outer jitted function, or pass "
                "symscalar.specialize(value)."
            )
    return value


def _depends_on(trace: Trace, sources: set[Any]) -> set[Any]:
    """The variables of ``trace`` computed from any of ``sources``."""
    reached = set(sources)
    for eqn in trace.eqns:
        if eqn.prim is stop_gradient_p:  # detach(), a no_grad region: no gradient flows on
            continue
        if any(a in reached for a in eqn.args if isinstance(a, (TensorVar, ScalarVar))):
            reached.update(eqn.outs)
    return reached


def _with_state_outputs(render: Callable[[list[str]], str], n: int) -> Callable[[list[str]], str]:
    """The program returns ``(user's result, (state values...))`` when it writes state."""
    return lambda names: f"({render(names[:n])}, ({''.join(x + ', ' for x in names[n:])}))"


def _append_rng_seed(run: Callable[..., Any]) -> Callable[..., Any]:
    """Supply a program with random ops its RNG seed, drawn fresh from torch's default
    generator on every call (the seed is the trace's last input, after the captured tensors)."""

    def run_with_rng_seed(*args: Any) -> Any:
        return run(*args, draw_seed())

    return run_with_rng_seed



def _finish_with_state(run: Callable[..., Any], output: _Output) -> Callable[..., Any]:
    """Rebuild the user's result of a program that also returns state values."""
    if output.inline:
        return run
    finish = output.wrap(lambda flat: flat)

    def run_with_state(*args: Any) -> Any:
        user, new = run(*args)
        return finish(user), new

    return run_with_state


# -- outputs ------------------------------------------------------------------------------

# Static values a jitted function may return besides traced ones (returned as they were at
# trace time, so only immutable ones); those whose repr is Python source are inlined.
_STATIC_OUTPUTS: tuple[type, ...] = (
    bool, int, float, complex, str, bytes, type(None), torch.dtype, torch.device, torch.layout,
    torch.memory_format, enum.Enum, torch.Size, *_NUMPY_SCALARS,
)
_LITERAL_OUTPUTS = frozenset({bool, int, float, str, type(None), torch.dtype, torch.device, torch.Size})
_LITERAL_NODES = frozenset({tuple, list, dict})
_LITERAL_KEYS = frozenset({bool, int, float, str, type(None)})


class _Output:
    """The traced function's result as a pytree: its traced leaves are the program's outputs,
    the rest is rebuilt around them on every call. A structure of tuples, lists, dicts with
    literal keys and literal leaves is generated as one Python expression (no per-call
    cost); any other registered node (NamedTuple, ModelOutput...) goes through
    ``tree_unflatten``."""

    def __init__(self, result: Any, where: str) -> None:
        # a torch.Size is a leaf: the pytree would rebuild it as a plain tuple
        values, self.spec = pytree.tree_flatten(result, is_leaf=_is_size)
        self.leaves = [v for v in values if isinstance(v, (TensorProxy, NumberProxy))]
        self.positions = [j for j, v in enumerate(values) if isinstance(v, (TensorProxy, NumberProxy))]
        for j, v in enumerate(values):
            if not isinstance(v, (TensorProxy, NumberProxy, *_STATIC_OUTPUTS)):
                raise TypeError(_output_message(result, j, v, where))
        self.template = [None if isinstance(v, (TensorProxy, NumberProxy)) else v for v in values]
        self.inline = _is_literal(self.spec) and all(
            type(v) in _LITERAL_OUTPUTS for v in self.template
        )

    def render(self, names: list[str]) -> str:
        """The returned expression over the output names (see ``compile_trace``)."""
        if not self.inline:
            return "(" + "".join(f"{n}, " for n in names) + ")"
        outs = iter(names)
        traced = set(self.positions)
        texts = iter([next(outs) if j in traced else _literal(v) for j, v in enumerate(self.template)])
        return _render_spec(self.spec, texts)

    def wrap(self, run: Callable[..., Any]) -> Callable[..., Any]:
        if self.inline:
            return run
        template, positions, spec = self.template, self.positions, self.spec

        def run_and_unflatten(*args: Any) -> Any:
            outs = run(*args)
            if outs is _MISS:  # an entry whose guards fail
                return outs
            values = template.copy()
            for j, out in zip(positions, outs):
                values[j] = out
            return pytree.tree_unflatten(values, spec)

        return run_and_unflatten


def _is_size(v: Any) -> bool:
    return type(v) is torch.Size


def _literal(v: Any) -> str:
    return f"torch.Size({list(v)!r})" if type(v) is torch.Size else format_static(v)


def _is_literal(spec: pytree.TreeSpec) -> bool:
    if spec.is_leaf():
        return True
    if spec.type not in _LITERAL_NODES:
        return False
    if spec.type is dict and not all(type(k) in _LITERAL_KEYS for k in spec.context):
        return False
    return all(_is_literal(c) for c in spec.children())


def _render_spec(spec: pytree.TreeSpec, texts: Iterator[str]) -> str:
    if spec.is_leaf():
        return next(texts)
    parts = [_render_spec(c, texts) for c in spec.children()]
    if spec.type is tuple:
        return "(" + "".join(f"{p}, " for p in parts) + ")"
    if spec.type is list:
        return "[" + ", ".join(parts) + "]"
    return "{" + ", ".join(f"{format_static(k)}: {p}" for k, p in zip(spec.context, parts)) + "}"


def _output_message(result: Any, index: int, value: Any, where: str) -> str:
    path = pytree.keystr(pytree.tree_flatten_with_path(result, is_leaf=_is_size)[0][index][0])
    at = f" at result{path}" if path else ""
    if isinstance(value, torch.Tensor):
        return (
            f"{where} returned a tensor{at} that was not computed from its inputs (a captured "
            "or newly created eager tensor); return traced values only"
        )
    return (
        f"{where} returned a value of type {type(value).__name__}{at}, which torch's pytree does not know as "
        "a container. A jitted function returns tensors and numbers, static values (None, "
        "str, dtype, device, enum members) and containers of those: tuple, list, dict, "
        "NamedTuple, transformers' ModelOutput, or a dataclass registered with "
        "torch.utils._pytree.register_dataclass."
    )


def _guard_function(
    trace: Trace, guards: tuple[tuple[ScalarVar, Any], ...], builder: TraceBuilder
) -> Callable[..., bool]:
    """A function of the program's inputs that is true when every specialize() guard holds."""
    wanted = {var for var, _ in guards}
    needed: list[Any] = []
    for eqn in reversed(trace.eqns):
        if any(out in wanted for out in eqn.outs):
            needed.append(eqn)
            wanted.update(a for a in eqn.args if isinstance(a, ScalarVar))
    guard_trace = Trace(
        trace.inputs, tuple(reversed(needed)), tuple(var for var, _ in guards), "guard"
    )
    # compared like static keys: -0.0 is not 0.0, and a NaN guard holds for a NaN
    expected = _static_key(tuple(value for _, value in guards))
    compute = torch_backend.compile_trace(guard_trace)

    n_inputs = len(trace.inputs)

    def values(*args: Any) -> tuple[Any, ...]:
        # guards are computed from scalar inputs only: missing captured tensors are not read
        return tuple(compute(*args, *(None,) * (n_inputs - len(args))))

    def guard(*args: Any) -> bool:
        return bool(_static_key(compute(*args)) == expected)

    # for messages (explain, would_trace): the values and where each came from
    guard.values = values  # type: ignore[attr-defined]
    guard.expected = tuple(value for _, value in guards)  # type: ignore[attr-defined]
    guard.origins = tuple(  # type: ignore[attr-defined]
        ", ".join(sorted(builder.roots.get(var, ()))) or "a computed value" for var, _ in guards
    )
    return guard


def _entries_of(value: Any, entries: Mapping[int, Entry]) -> list[Entry]:
    if isinstance(value, _Chain):
        return list(value.entries)
    found = entries.get(id(value))
    return [found] if found is not None else []


def _failed_guards(value: Any, call_args: tuple[Any, ...], entries: Mapping[int, Entry]) -> list[str]:
    """Why the guarded entries under a key reject the call: ``specialize`` guards whose value
    differs now. Empty when no entry under the key has guards (or none failed)."""
    reasons = []
    for entry in _entries_of(value, entries):
        guard = entry.guard
        if guard is None:
            continue
        got = guard.values(*call_args)
        for origin, want, have in zip(guard.origins, guard.expected, got):
            if _static_key(want) != _static_key(have):
                reasons.append(f"guard specialize({origin}) == {want!r} failed: it is {have!r} now")
    return reasons


def _accepts_state(value: Any, call_args: tuple[Any, ...], entries: Mapping[int, Entry]) -> bool:
    """Whether some entry under a key accepts the call with the state read from outside
    (captured tensors, modules) as it is now and its guards: the entry's checks alone, no
    program runs."""
    return any(getattr(entry.run, "accepts")(*call_args) for entry in _entries_of(value, entries))


@typing.overload
def jit(
    fn: torch.nn.Module, *, static: Any = ..., dynamic: Any = ..., backend: str = ...,
    max_traces: int | None = ..., on_limit: str | None = ..., retrace: bool = ...,
    max_entries: int | None = ...,
) -> JitModule: ...
@typing.overload
def jit(
    fn: Callable[P, R], *, static: Any = ..., dynamic: Any = ..., backend: str = ...,
    max_traces: int | None = ..., on_limit: str | None = ..., retrace: bool = ...,
    max_entries: int | None = ...,
) -> JitFunction[P, R]: ...
@typing.overload
def jit(
    fn: None = None, *, static: Any = ..., dynamic: Any = ..., backend: str = ...,
    max_traces: int | None = ..., on_limit: str | None = ..., retrace: bool = ...,
    max_entries: int | None = ...,
) -> Callable[[Callable[P, R]], JitFunction[P, R]]: ...
def jit(
    fn: Callable[..., Any] | None = None,
    *,
    static: Any = (),
    dynamic: Any = (),
    backend: str = "auto",
    max_traces: int | None = None,
    on_limit: str | None = None,
    retrace: bool = True,
    max_entries: int | None = None,
) -> Any:
    """Compile ``fn`` by tracing it; static values are baked in, dynamic values are inputs.

    Args:
        fn: the function, a method, a ``staticmethod``/``classmethod`` or a module.
            Parameters annotated ``torch.Tensor`` are tensors; ``DynamicInt``,
            ``DynamicFloat``, ``DynamicBool``, ``IntLike``, ``FloatLike`` or ``NumberLike``
            make a number dynamic (traced as the exact Python type passed: an int for a
            ``DynamicFloat`` is an int, in its own entry); ``StaticInt``, ``int``, ``float``
            make it static (its type and value are the key). Unannotated arguments, and each
            value of ``*args``/``**kwargs``, are pytrees: their tensors are traced and the rest
            is static.
        static: parameter names (or positions) to treat as static, overriding annotations.
        dynamic: parameter names (or positions) to treat as dynamic numbers.
        backend: ``"auto"``, ``"torch"`` or ``"nvfuser"``.
        max_traces: how many traces before ``on_limit`` applies (default
            ``symscalar.config.max_traces``, 8).
        on_limit: ``"warn"`` (once) or ``"error"`` (``RetraceError``) when the function traces
            more than ``max_traces`` times (default ``symscalar.config.on_limit``).
        retrace: ``False`` makes every miss (the first call too) raise ``RetraceError`` with
            the reason, like calling it inside ``symscalar.no_retrace()``.
        max_entries: how many compiled entries to keep; beyond that the least recently used
            is evicted and counted in ``cache_info().evictions`` (default
            ``symscalar.config.max_entries``, 256).

    Returns:
        A function with ``fn``'s signature and ``last_trace()``, ``last_backward_trace()``,
        ``cache_info()``, ``cache_clear()``, ``last_fusion()`` (the nvFuser
        FusionDefinitions of the last call; empty with the torch backend), ``explain()``
        (every trace and why it happened) and ``would_trace(*args, **kwargs)`` (whether a
        call would trace, and why, without tracing or running it); for a module, a
        ``JitModule`` with the same methods. Called while another jitted function traces,
        it is inlined into that trace.

    Example:
        >>> @symscalar.jit
        ... def f(x: torch.Tensor, scale: DynamicFloat, dim: StaticInt) -> torch.Tensor:
        ...     return torch.sum(x * scale, dim)
        >>> f(torch.ones(2, 3), 0.5, 1)   # traces
        >>> f(torch.ones(2, 3), 2.0, 1)   # cache hit: scale is a runtime input
    """
    limits = Limits(max_traces, on_limit, retrace, max_entries)
    options = {"static": static, "dynamic": dynamic, "backend": backend, **dataclasses.asdict(limits)}
    if fn is None:
        return functools.partial(jit, **options)
    if isinstance(fn, (staticmethod, classmethod)):
        # jit the function; the descriptor keeps binding it as the class body asked
        return type(fn)(jit(fn.__func__, **options))
    if isinstance(fn, torch.nn.Module):
        return JitModule(fn, **options)
    if not callable(fn):
        raise TypeError(f"jit() takes a function or a torch.nn.Module, got {type(fn).__name__}")
    # the frame that applied jit: local names an annotation may refer to (see _resolve_hints)
    dispatch = _jit_function(fn, static, dynamic, backend, limits, sys._getframe(1).f_locals)
    functools.update_wrapper(dispatch, fn)
    return dispatch


def _jit_function(
    fn: Callable[..., Any],
    static: Any,
    dynamic: Any,
    backend: str,
    limits: Limits | None = None,
    frame_locals: Mapping[str, Any] | None = None,
) -> Any:
    state = _JitState(fn, static, dynamic, backend, limits, frame_locals)
    dispatch = _generate_dispatch(fn, state.sig, state.kinds, state)
    dispatch.__signature__ = state.sig  # type: ignore[attr-defined]
    dispatch.last_trace = state.last_trace  # type: ignore[attr-defined]
    dispatch.last_backward_trace = state.last_backward_trace  # type: ignore[attr-defined]
    dispatch.cache_info = state.cache_info  # type: ignore[attr-defined]
    dispatch.cache_clear = state.cache_clear  # type: ignore[attr-defined]
    dispatch.last_fusion = state.last_fusion  # type: ignore[attr-defined]
    dispatch.explain = lambda: explain.Explanation(state.retraces.misses)  # type: ignore[attr-defined]
    dispatch.would_trace = lambda *args, **kwargs: state.would_trace(args, kwargs)  # type: ignore[attr-defined]
    dispatch._symscalar_state = state  # type: ignore[attr-defined]
    return dispatch


class JitModule(torch.nn.Module):
    """What ``jit(module)`` returns: a module that calls the jitted ``module(...)``.

    Being a module, it has the original's parameters (under ``_orig_mod``, as
    ``torch.compile``'s wrapper does), follows ``train()``/``eval()``/``to()``, and
    ``copy.deepcopy``/``pickle`` give a fresh jitted copy of a copy of the module (a jitted
    function's cache refers to the original module's tensors, so it is never shared).
    Attributes it does not have are read from the original module.
    """

    def __init__(
        self, module: torch.nn.Module, static: Any = (), dynamic: Any = (), backend: str = "auto",
        **limits: Any,
    ) -> None:
        super().__init__()
        self._orig_mod = module
        self._jit_options = {"static": static, "dynamic": dynamic, "backend": backend, **limits}
        self.__dict__["_jitted"] = _jit_function(module, static, dynamic, backend, Limits(**limits))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._jitted(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return self._jitted.__signature__  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name in ("_orig_mod", "_modules", "_jitted"):
                raise
            return getattr(self._orig_mod, name)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_jitted"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[no-untyped-call]
        options = dict(self._jit_options)
        limits = Limits(**{f.name: options.pop(f.name) for f in dataclasses.fields(Limits) if f.name in options})
        self.__dict__["_jitted"] = _jit_function(self._orig_mod, **options, limits=limits)

    def last_trace(self) -> Trace | None:
        return self._jitted.last_trace()  # type: ignore[no-any-return]

    def last_backward_trace(self) -> Trace | None:
        return self._jitted.last_backward_trace()  # type: ignore[no-any-return]

    def cache_info(self) -> CacheInfo:
        return self._jitted.cache_info()  # type: ignore[no-any-return]

    def cache_clear(self) -> None:
        self._jitted.cache_clear()

    def last_fusion(self) -> list[Any]:
        return self._jitted.last_fusion()  # type: ignore[no-any-return]

    def explain(self) -> Explanation:
        return self._jitted.explain()  # type: ignore[no-any-return]

    def would_trace(self, *args: Any, **kwargs: Any) -> WouldTrace:
        return self._jitted.would_trace(*args, **kwargs)  # type: ignore[no-any-return]


def value_and_grad(
    fn: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    **jit_options: Any,
) -> Callable[..., tuple[torch.Tensor, Any]]:
    """Like ``jax.value_and_grad``: a function returning ``(fn(*args), gradients)``.

    ``fn`` is jitted (``jit_options`` are passed to ``jit``) and must return a tensor with
    one element. The gradients are with respect to the tensor arguments at ``argnums`` (an
    int gives one gradient, a tuple a tuple); they are computed by the backward trace of the
    jitted function, so dynamic values change without a retrace.

    Example:
        >>> loss_and_grad = symscalar.value_and_grad(loss, argnums=(0, 1))
        >>> loss_value, (gw, gb) = loss_and_grad(w, b, x, lr)
    """
    jitted = jit(fn, **jit_options)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> tuple[torch.Tensor, Any]:
        args_list = list(args)
        inputs = []
        for i in nums:
            if not -len(args_list) <= i < len(args_list):
                raise TypeError(f"argnums={argnums} but {_qualname(fn)} got {len(args_list)} positional arguments")
            value = args_list[i]
            if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point:
                raise TypeError(
                    f"argument {i} of {_qualname(fn)} must be a floating-point tensor to take "
                    f"its gradient, got {type(value).__name__}"
                    + (f" of dtype {value.dtype}" if isinstance(value, torch.Tensor) else "")
                )
            args_list[i] = value.detach().requires_grad_(True)
            inputs.append(args_list[i])
        with torch.enable_grad():
            out = jitted(*args_list, **kwargs)
        if not isinstance(out, torch.Tensor) or out.numel() != 1:
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise TypeError(
                f"{_qualname(fn)} must return a tensor with one element to take a gradient; "
                f"got {shape}. Reduce it (e.g. .sum()) first."
            )
        grads = torch.autograd.grad(out, inputs, allow_unused=True)
        grads = tuple(torch.zeros_like(t) if g is None else g for g, t in zip(grads, inputs))
        return out.detach(), grads[0] if isinstance(argnums, int) else grads

    functools.update_wrapper(value_and_grad_fn, fn)
    for name in ("last_trace", "last_backward_trace", "cache_info", "cache_clear"):
        setattr(value_and_grad_fn, name, getattr(jitted, name))
    return value_and_grad_fn


def grad(
    fn: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    **jit_options: Any,
) -> Callable[..., Any]:
    """Like ``jax.grad``: a function returning the gradients of ``fn``'s one-element result
    with respect to the tensor arguments at ``argnums``. See ``value_and_grad``."""
    inner = value_and_grad(fn, argnums, **jit_options)

    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        return inner(*args, **kwargs)[1]

    functools.update_wrapper(grad_fn, fn)
    for name in ("last_trace", "last_backward_trace", "cache_info", "cache_clear"):
        setattr(grad_fn, name, getattr(inner, name))
    return grad_fn
