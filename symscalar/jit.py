"""``symscalar.jit``: trace once per static configuration, run many times.

A jitted function's parameters are tensors, static values or dynamic values, decided by their
annotations (``StaticInt``/``int`` static, ``DynamicInt``/``DynamicFloat``/``NumberLike``
dynamic, ``torch.Tensor`` tensors; unannotated numbers are static) or by
``jit(fn, static=[...], dynamic=[...])``. The cache key holds the static values and the tensor
metadata (shape, dtype, device, requires_grad); dynamic values are inputs of the compiled
program, so a new dynamic value is a cache hit. ``specialize(d)`` adds a guard ``d == value``
to the entry being traced.

The per-call path is a generated Python function with the user's signature: it builds the key
inline, looks it up, and calls the compiled entry. Everything else (validation with clear
errors, tracing, compiling) happens on a miss, under a lock.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import keyword
import re
import threading
import typing
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, ParamSpec, Protocol, TypeVar

import torch

from symscalar import grad as grad_transform
from symscalar import nvfuser_backend, torch_backend
from symscalar import state as outside
from symscalar.errors import UnsupportedOperationError
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
)

__all__ = ["jit", "JitFunction", "CacheInfo", "grad", "value_and_grad"]

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


class JitFunction(Protocol, Generic[P, R]):
    """What ``symscalar.jit`` returns: the function, plus inspection methods."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    def last_trace(self) -> Trace | None: ...
    def last_backward_trace(self) -> Trace | None: ...
    def cache_info(self) -> CacheInfo: ...
    def cache_clear(self) -> None: ...
    def last_fusion(self) -> list[Any]: ...


@dataclasses.dataclass
class Entry:
    """One compiled program: the trace and what runs it."""

    trace: Trace
    run: Callable[..., Any]  # called with the call's tensors and dynamic values
    guards: tuple[tuple[ScalarVar, Any], ...]
    backward_trace: Trace | None = None
    backend: Any = None  # what compiled it (the nvFuser backend remembers its fusions)


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


def _hint_kind(hint: Any) -> str:
    if hint is inspect.Parameter.empty or hint is None:
        return AUTO
    if isinstance(hint, str):
        return _KIND_OF_NAME.get(hint.rsplit(".", 1)[-1] if hint != "torch.Tensor" else hint, AUTO)
    for known, kind in _KIND_OF_HINT.items():
        if hint is known:
            return kind
    if isinstance(hint, type) and issubclass(hint, torch.Tensor):
        return TENSOR
    return AUTO


def _param_kinds(
    fn: Callable[..., Any], sig: inspect.Signature, static: Any, dynamic: Any
) -> dict[str, str]:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable forward references: use the strings
        hints = dict(getattr(fn, "__annotations__", {}))
    names = list(sig.parameters)
    kinds = {name: _hint_kind(hints.get(name, inspect.Parameter.empty)) for name in names}

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
    return kinds


def _auto_key(v: Any) -> Any:
    """Key of an unannotated argument: tensors by metadata, numbers static by value."""
    if isinstance(v, torch.Tensor):
        return (v.shape, v.dtype, v.device, v.requires_grad)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_auto_key(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple((k, _auto_key(x)) for k, x in v.items()))
    if type(v) is float:
        return (float, repr(v))  # 0.0 vs -0.0, NaN: see the static key in _generate_dispatch
    return (type(v), v)


def _auto_leaves(v: Any) -> tuple[torch.Tensor, ...]:
    if isinstance(v, torch.Tensor):
        return (v,)
    if isinstance(v, (tuple, list)):
        return tuple(t for x in v for t in _auto_leaves(x))
    if isinstance(v, dict):
        return tuple(t for x in v.values() for t in _auto_leaves(x))
    return ()


_DYNAMIC_KEY = {
    DYN_INT: "_ss_as_int.get(_ss_type({0}))",
    DYN_FLOAT: "_ss_as_float.get(_ss_type({0}))",
    DYN_BOOL: "_ss_as_bool.get(_ss_type({0}))",
    DYN_NUMBER: "_ss_type({0})",
}


def _torch_function_modes() -> tuple[Any, ...]:
    """Active torch function modes (``with torch.device(...)``, ``set_default_device``...):
    they change what factory calls create while tracing."""
    return tuple(
        (type(m), getattr(m, "device", None)) for m in torch.overrides._get_current_function_mode_stack()
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
    """Generate the per-call function: the user's signature, the key inline, one lookup."""
    # Every global of the generated code starts with _ss_ so that no parameter name of the
    # user's function (even `type` or `float`) can shadow it.
    namespace: dict[str, Any] = {
        "_ss_cache": state.cache, "_ss_miss": state.miss, "_ss_MISS": _MISS, "_ss_state": state,
        "_ss_next_call": state.calls.__next__, "_ss_auto_key": _auto_key,
        "_ss_auto_leaves": _auto_leaves, "_ss_Tensor": torch.Tensor, "_ss_type": type,
        "_ss_int": int, "_ss_float": float, "_ss_bool": bool, "_ss_repr": repr,
        # The key of a dynamic value is its kind, not its value: an int passed for a
        # DynamicFloat is converted and shares the float entry; anything else misses and is
        # rejected with a clear error by the miss path.
        "_ss_as_int": {int: int, bool: int}, "_ss_as_float": {float: float, int: float, bool: float},
        "_ss_as_bool": {bool: bool},
        **_AMBIENT_NAMESPACE,
        "_ss_hooks": outside.RemovableHandle, "_ss_hooks_seen": -1,
    }
    state.namespace = namespace
    for name in sig.parameters:
        if name.startswith("_ss_"):
            raise ValueError(f"symscalar.jit: parameter names must not start with _ss_ ({name!r})")
    params, key, call, all_args = [], [], [], []
    seen_kw_only = False
    for i, (name, p) in enumerate(sig.parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(
                f"symscalar.jit does not support *args/**kwargs (parameter {name!r} of "
                f"{_qualname(fn)}); list the parameters explicitly"
            )
        if p.kind is p.KEYWORD_ONLY and not seen_kw_only:
            params.append("*")
            seen_kw_only = True
        text = name
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
        if kind == TENSOR:
            key += [f"{name}.shape", f"{name}.dtype", f"{name}.device", f"{name}.requires_grad"]
            call.append(name)
        elif kind == STATIC:
            # floats by repr: 0.0 and -0.0 (equal, same hash) are different programs, and a
            # NaN (never equal to itself) must still find its entry
            key += [f"_ss_type({name})", f"_ss_repr({name}) if _ss_type({name}) is _ss_float else {name}"]
        elif kind == AUTO:
            key.append(
                f"({name}.shape, {name}.dtype, {name}.device, {name}.requires_grad) "
                f"if _ss_type({name}) is _ss_Tensor else _ss_auto_key({name})"
            )
            call.append(f"*(({name},) if _ss_type({name}) is _ss_Tensor else _ss_auto_leaves({name}))")
        else:
            key.append(_DYNAMIC_KEY[kind].format(name))
            call.append({DYN_INT: f"_ss_int({name})", DYN_FLOAT: f"_ss_float({name})",
                         DYN_BOOL: f"_ss_bool({name})"}.get(kind, name))
    key += _AMBIENT_KEY
    key_src = "(" + "".join(f"{k}, " for k in key) + ")"
    args_src = "(" + "".join(f"{a}, " for a in all_args) + ")"
    body = f"""
    _ss_next_call()
    try:
        _ss_entry = _ss_cache[{key_src}]
    except (KeyError, AttributeError, TypeError):
        return _ss_miss({args_src})
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
    if _ss_hooks.next_id != _ss_hooks_seen:
        return _ss_state.hooked_call({args_src})
{body}
def _ss_inner({", ".join(params)}):
{body}
def _ss_key_of({", ".join(all_args)}):
    return {key_src}

def _ss_call_args_of({", ".join(all_args)}):
    return ({"".join(f"{c}, " for c in call)})
"""
    exec(compile(source, f"<symscalar.jit dispatch of {_qualname(fn)}>", "exec"), namespace)  # noqa: S102
    state.key_of = namespace["_ss_key_of"]
    state.call_args_of = namespace["_ss_call_args_of"]
    state.inner = namespace["_ss_inner"]
    dispatch: Callable[..., Any] = namespace["_ss_dispatch"]
    dispatch.__source__ = source  # type: ignore[attr-defined]
    return dispatch


class _JitState:
    """Everything a jitted function owns: its cache, counters and the miss path."""

    def __init__(
        self, fn: Callable[..., Any], static: Any, dynamic: Any, backend: str
    ) -> None:
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
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
        self.kinds = _param_kinds(signature_of, self.sig, static, dynamic)
        # What the traces read outside the arguments (see symscalar/state.py)
        self.top = fn if isinstance(fn, torch.nn.Module) else None
        self.roots = outside.Roots(fn)
        self.hooks = outside.HookWatch(self.top)
        self.namespace: dict[str, Any] = {}  # the dispatch's globals (hook epoch seen)
        self.inner: Callable[..., Any]  # the dispatch without the hook check
        self.cache: dict[Any, Callable[..., Any]] = {}
        self.entries: dict[int, Entry] = {}  # id(cache value) -> Entry, for inspection
        self.calls = itertools.count()
        self.misses = 0
        self.calls_before_clear = 0
        self.lock = threading.RLock()
        self.last: Any = None
        self.key_of: Callable[..., Any]
        self.call_args_of: Callable[..., Any]

    # -- hooks -------------------------------------------------------------------------------

    def hooked_call(self, args: tuple[Any, ...]) -> Any:
        """The slow path taken when a hook was registered somewhere since the last check:
        refuse hooks jit cannot honour; run the jitted module's forward (pre-)hooks eagerly
        around the program (on every call while it has any)."""
        epoch = outside.hook_epoch()
        n = sum(p.kind is not p.KEYWORD_ONLY for p in self.sig.parameters.values())
        kwargs = dict(zip(list(self.sig.parameters)[n:], args[n:]))
        if not self.hooks.check():
            self.namespace["_ss_hooks_seen"] = epoch
            return self.inner(*args[:n], **kwargs)
        assert self.top is not None
        return outside.call_with_hooks(self.top, self.inner, args[:n], kwargs)

    # -- the miss path ---------------------------------------------------------------------

    def miss(self, args: tuple[Any, ...]) -> Any:
        self._validate(args)
        key = self.key_of(*args)
        call_args = self.call_args_of(*args)
        with self.lock:
            value = self.cache.get(key)
            if value is not None:
                out = value(*call_args)
                if out is not _MISS:
                    self.last = value
                    return out
            self.misses += 1
            entry = self._compile(args)
            value = self._insert(key, value, entry)
        self.last = value
        out = value(*call_args)
        assert out is not _MISS, "a freshly traced entry must accept the call it was traced for"
        return out

    def _insert(self, key: Any, value: Any, entry: Entry) -> Any:
        self.entries[id(entry.run)] = entry
        if value is None:
            self.cache[key] = entry.run
            return entry.run
        chain = value if isinstance(value, _Chain) else _Chain()
        if value is not chain:
            chain.entries.append(self.entries[id(value)])
        chain.entries.insert(0, entry)
        self.cache[key] = chain
        return chain

    def _where(self, name: str) -> str:
        return f"parameter '{name}' of {_qualname(self.fn)}"

    def _validate(self, args: tuple[Any, ...]) -> None:
        for name, value in zip(self.sig.parameters, args):
            kind = self.kinds[name]
            if kind == TENSOR and not isinstance(value, torch.Tensor):
                raise TypeError(
                    f"{self._where(name)} is annotated torch.Tensor but got "
                    f"{type(value).__name__}"
                )
            if kind in _DYNAMIC_KINDS:
                _check_dynamic_value(kind, value, self._where(name))
            if kind in (STATIC, AUTO):
                try:
                    hash(value if kind == STATIC else _auto_key(value))
                except TypeError:
                    raise TypeError(
                        f"{self._where(name)} is static, so its value is part of the cache key "
                        f"and must be hashable; got {type(value).__name__}. Pass a tuple "
                        "instead of a list, or declare the parameter dynamic."
                    ) from None

    def _compile(self, args: tuple[Any, ...]) -> Entry:
        fn = self.fn
        builder = TraceBuilder(_identifier(_qualname(fn).rsplit('.', 1)[-1]))
        pos, kw = [], {}
        for (name, p), value in zip(self.sig.parameters.items(), args):
            traced = self._proxy(builder, name, self.kinds[name], value)
            if p.kind is p.KEYWORD_ONLY:
                kw[name] = traced
            else:
                pos.append(traced)
        # jit(module) traces forward: the module's own hooks run around the program (dispatch)
        traced_fn = fn.forward if isinstance(fn, torch.nn.Module) else fn
        watch = outside.TraceWatch(self.roots, builder, self.top)
        with watch, tracing(builder):
            result = traced_fn(*pos, **kw)
        leaves, render = _flatten_output(result, _qualname(fn))
        writes, values = self._state_writes(builder, watch)
        if writes:
            render = _with_state_outputs(render, len(leaves))
        trace = builder.build([*leaves, *values])
        check_trace(trace)
        backend = self._backend_for(trace)
        rng_seed = (None,) if builder.rng_seed is not None else ()
        captured = [
            outside.Captured(t, watch.tensors[id(t)][1] if id(t) in watch.tensors else None)
            for t in builder.captured_tensors()  # those the trace reads, in its input order
        ]
        requires_grad = [
            isinstance(value, torch.Tensor) and value.requires_grad
            for value in (*self.call_args_of(*args), *(c.tensor for c in captured), *rng_seed)
        ]
        position = {id(c.tensor): j for j, c in enumerate(captured)}
        with_grad = _depends_on(trace, {v for v, r in zip(trace.inputs, requires_grad) if r})
        state_outputs = trace.outputs[len(leaves):]
        writes = [
            outside.StateWrite(how, position[target] if how == "copy" else target, name,
                               detach=out not in with_grad)
            for (how, target, name), out in zip(writes, state_outputs)
        ]
        backward: Trace | None = None
        # grad mode is part of the key, so an entry traced without grad never runs with it
        if torch.is_grad_enabled() and any(
            r and grad_transform.is_differentiable(v) for r, v in zip(requires_grad, trace.inputs)
        ):
            run, backward = grad_transform.autograd_runner(trace, render, (), backend, requires_grad)
        else:
            run = backend.compile_trace(trace, render)
        if rng_seed:
            run = _append_rng_seed(run)
        modules = {**{i: m for i, (m, _) in watch.modules.items()}, **watch.used_modules}
        self.hooks.add(watch.used_modules, watch.names)
        guards = tuple(builder.guards)
        entry_run = outside.make_entry(
            run, self.roots, captured,
            [(m, watch.modules[i][1] if i in watch.modules else None) for i, m in modules.items()],
            _guard_function(trace, guards) if guards else None, writes, _MISS, _qualname(fn),
        )
        return Entry(trace, entry_run, guards, backward, backend)

    def _state_writes(
        self, builder: TraceBuilder, watch: outside.TraceWatch
    ) -> tuple[list[tuple[str, Any, str]], list[Any]]:
        """The state the traced function writes, as (how, target, name) and the traced values:
        in-place ops on captured tensors (``builder.write_backs``, copied in) first, then
        attribute assignments of traced tensors (assigned with ``setattr``)."""
        writes: list[tuple[str, Any, str]] = []
        values: list[Any] = []
        for target, value in builder.write_backs:
            if target.requires_grad and target.is_leaf and torch.is_grad_enabled():
                raise UnsupportedOperationError(
                    f"{_qualname(self.fn)} writes in place into a leaf tensor that requires grad "
                    f"(shape {tuple(target.shape)}, e.g. a parameter); eager torch refuses this "
                    "too. Fix: do it under torch.no_grad(), or on .data, outside the jitted function."
                )
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

    def _proxy(self, builder: TraceBuilder, name: str, kind: str, value: Any) -> Any:
        if kind == TENSOR:
            return builder.tensor_input(
                TensorVar(tuple(value.shape), value.dtype, value.device), value.requires_grad
            )
        if kind in _DYNAMIC_KINDS:
            py_type = _dynamic_python_type(kind, value)
            return builder.scalar_input(py_type, py_type(value), self._where(name))
        if kind == AUTO:
            return _map_tensors(value, lambda t: builder.tensor_input(
                TensorVar(tuple(t.shape), t.dtype, t.device), t.requires_grad))
        return value

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
        return CacheInfo(calls - self.misses, self.misses, entries)

    def cache_clear(self) -> None:
        with self.lock:
            self.cache.clear()
            self.entries.clear()
            self.last = None
            self.misses = 0
            self.calls_before_clear = self._count_calls()


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


def _dynamic_python_type(kind: str, value: Any) -> type:
    if kind == DYN_NUMBER:
        return bool if isinstance(value, bool) else int if isinstance(value, int) else float
    return {DYN_INT: int, DYN_FLOAT: float, DYN_BOOL: bool}[kind]


def _check_dynamic_value(kind: str, value: Any, where: str) -> None:
    ok = {
        DYN_INT: isinstance(value, int),
        DYN_FLOAT: isinstance(value, (int, float)),
        DYN_BOOL: isinstance(value, bool),
        DYN_NUMBER: isinstance(value, (int, float)),
    }[kind] and not isinstance(value, torch.Tensor)
    if not ok:
        hint = (
            " (a tensor is not a number: pass a Python number, or annotate the parameter "
            "torch.Tensor)" if isinstance(value, torch.Tensor) else ""
        )
        raise TypeError(f"{where} is {kind} but got {type(value).__name__} {value!r}{hint}")


def _map_tensors(v: Any, f: Callable[[torch.Tensor], Any]) -> Any:
    if isinstance(v, torch.Tensor):
        return f(v)
    if isinstance(v, (tuple, list)):
        return type(v)(_map_tensors(x, f) for x in v)
    if isinstance(v, dict):
        return {k: _map_tensors(x, f) for k, x in v.items()}
    return v


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


def _flatten_output(result: Any, where: str) -> tuple[list[Any], Callable[[list[str]], str]]:
    """Flatten the traced function's result into trace outputs, and a renderer that rebuilds
    the same structure as a Python expression over the output names."""
    leaves: list[Any] = []

    def walk(v: Any) -> Callable[[list[str]], str]:
        if isinstance(v, (TensorProxy, NumberProxy)):
            i = len(leaves)
            leaves.append(v)
            return lambda names: names[i]
        if v is None or isinstance(v, (bool, int, float, str)):
            text = format_static(v)
            return lambda names: text
        if isinstance(v, torch.Size):  # static sizes, e.g. `return x.shape`
            size_text = f"torch.Size({list(v)!r})"
            return lambda names: size_text
        if isinstance(v, (tuple, list)) and type(v) in (tuple, list):
            parts = [walk(x) for x in v]
            open_, close = ("(", ")") if isinstance(v, tuple) else ("[", "]")
            comma = "," if isinstance(v, tuple) and len(v) == 1 else ""
            return lambda names: open_ + ", ".join(p(names) for p in parts) + comma + close
        if type(v).__module__ == "torch.return_types":  # (values, indices) of sort, topk, ...
            fields = [walk(x) for x in v]
            kind = f"torch.return_types.{type(v).__name__}"
            return lambda names: f"{kind}((" + ", ".join(p(names) for p in fields) + ",))"
        if type(v) is dict:
            items = [(format_static(k), walk(x)) for k, x in v.items()]
            return lambda names: "{" + ", ".join(f"{k}: {p(names)}" for k, p in items) + "}"
        if isinstance(v, torch.Tensor):
            raise TypeError(
                f"{where} returned a tensor that was not computed from its inputs (a captured "
                "or newly created eager tensor); return traced values only"
            )
        raise TypeError(
            f"{where} returned a {type(v).__name__}; jitted functions return tensors, numbers, "
            "None, strings and tuples/lists/dicts of those"
        )

    render = walk(result)
    return leaves, render


def _guard_function(trace: Trace, guards: tuple[tuple[ScalarVar, Any], ...]) -> Callable[..., bool]:
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
    expected = tuple(value for _, value in guards)
    compute = torch_backend.compile_trace(guard_trace)

    def guard(*args: Any) -> bool:
        return bool(compute(*args) == expected)

    return guard


@typing.overload
def jit(
    fn: Callable[P, R], *, static: Any = ..., dynamic: Any = ..., backend: str = ...
) -> JitFunction[P, R]: ...
@typing.overload
def jit(
    fn: None = None, *, static: Any = ..., dynamic: Any = ..., backend: str = ...
) -> Callable[[Callable[P, R]], JitFunction[P, R]]: ...
def jit(
    fn: Callable[..., Any] | None = None,
    *,
    static: Any = (),
    dynamic: Any = (),
    backend: str = "auto",
) -> Any:
    """Compile ``fn`` by tracing it; static values are baked in, dynamic values are inputs.

    Args:
        fn: the function. Parameters annotated ``torch.Tensor`` are tensors; ``DynamicInt``,
            ``DynamicFloat``, ``DynamicBool``, ``IntLike``, ``FloatLike`` or ``NumberLike``
            make a number dynamic; ``StaticInt``, ``int``, ``float`` or no annotation make
            it static (part of the cache key).
        static: parameter names (or positions) to treat as static, overriding annotations.
        dynamic: parameter names (or positions) to treat as dynamic numbers.
        backend: ``"auto"``, ``"torch"`` or ``"nvfuser"``.

    Returns:
        A function with ``fn``'s signature and ``last_trace()``, ``last_backward_trace()``,
        ``cache_info()``, ``cache_clear()`` and ``last_fusion()`` (the nvFuser
        FusionDefinitions of the last call; empty with the torch backend).

    Example:
        >>> @symscalar.jit
        ... def f(x: torch.Tensor, scale: DynamicFloat, dim: StaticInt) -> torch.Tensor:
        ...     return torch.sum(x * scale, dim)
        >>> f(torch.ones(2, 3), 0.5, 1)   # traces
        >>> f(torch.ones(2, 3), 2.0, 1)   # cache hit: scale is a runtime input
    """
    if fn is None:
        return functools.partial(jit, static=static, dynamic=dynamic, backend=backend)
    if not callable(fn):
        raise TypeError(f"jit() takes a function, got {type(fn).__name__}")
    state = _JitState(fn, static, dynamic, backend)
    dispatch = _generate_dispatch(fn, state.sig, state.kinds, state)
    functools.update_wrapper(dispatch, fn)
    dispatch.__signature__ = state.sig  # type: ignore[attr-defined]
    dispatch.last_trace = state.last_trace  # type: ignore[attr-defined]
    dispatch.last_backward_trace = state.last_backward_trace  # type: ignore[attr-defined]
    dispatch.cache_info = state.cache_info  # type: ignore[attr-defined]
    dispatch.cache_clear = state.cache_clear  # type: ignore[attr-defined]
    dispatch.last_fusion = state.last_fusion  # type: ignore[attr-defined]
    dispatch._symscalar_state = state  # type: ignore[attr-defined]
    return dispatch


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
