"""Everything one jitted function owns: its parameters' kinds, its cache and counters, the
miss path (validate, trace, compile, insert; under a lock), the facts that explain a miss
(recorded on misses only, see ``symscalar/explain.py``) and the inspection methods."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import threading
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

import torch

from symscalar import explain, logs, nvfuser_backend, size_guards
from symscalar import state as outside
from symscalar._jit import arguments, dim_paths, dims, frames, tree
from symscalar._jit.cache import MISS, Cache, CacheInfo, Entry
from symscalar._jit.compile import compile_entry
from symscalar._jit.compositions import check_jittable, check_no_functorch, hide_from_dynamo
from symscalar._jit.dispatch import generate_dispatch
from symscalar._jit.params import Kind, declared_at, param_kinds, qualname
from symscalar._jit.record import CallRecord, record_call, tensor_facts
from symscalar.backend import Backend, check_backend
from symscalar.errors import ShapeContractError
from symscalar.trace import Trace

__all__ = ["Limits", "FunctionState", "jit_function", "INSPECTION"]

# The inspection methods every jitted callable has (jit, JitModule, grad, value_and_grad)
INSPECTION = (
    "last_trace",
    "last_backward_trace",
    "last_fusion",
    "cache_info",
    "cache_clear",
    "explain",
    "would_trace",
)


@dataclasses.dataclass(frozen=True)
class Limits:
    """``jit``'s options on retracing (see ``explain.py``); None means the global default."""

    max_traces: int | None = None
    on_limit: str | None = None
    retrace: bool = True
    max_entries: int | None = None


class FunctionState:
    """A jitted function's state; the generated per-call function calls ``miss``, ``inline``
    and ``hooked_call`` and reads ``cache.table``. It is long because a cache miss (tracing,
    the limits, the explain facts of the retrace) is one sequence over this state."""

    def __init__(
        self,
        fn: Callable[..., Any],
        static: Any,
        dynamic: Any,
        backend: str | Backend,
        limits: Limits | None = None,
        frame_locals: Mapping[str, Any] | None = None,
        dynamic_dims: Any = None,
    ) -> None:
        check_jittable(fn)
        check_backend(backend)  # ValueError naming the backends
        limits = limits or Limits()
        explain.check_limits(limits.max_traces, limits.on_limit, limits.max_entries)
        self.retraces = explain.RetraceLog(qualname(fn), limits.max_traces, limits.on_limit, limits.retrace)
        self.fn = fn
        self.backend = backend
        # A module is called as itself (hooks run) but its parameters are forward's.
        signature_of = fn.forward if isinstance(fn, torch.nn.Module) else fn
        try:
            self.sig, self.defaults_of = call_signature(signature_of)
            self.keyword_call = _wrapper_followed(signature_of, self.sig)
            self.renames = keyword_renames(signature_of) if self.keyword_call else {}
        except ValueError:
            raise TypeError(
                f"symscalar.jit cannot read the signature of {fn!r}; wrap it in a function, "
                "e.g. jit(lambda a, b: torch.mm(a, b))"
            ) from None
        self.kinds, self.unresolved, self.optional = param_kinds(signature_of, self.sig, static, dynamic, frame_locals)
        # declared dynamic dims (dynamic_dims=, Dims annotations): those parameters are tensors
        self.contract = dims.contract_of(qualname(fn), self.sig, signature_of, dynamic_dims)
        if self.contract is not None:
            # every backend runs one program for every size (nvFuser: dynamic dims are -1, sizes
            # scalar inputs; Inductor: symbolic sizes). A backend object of another kind is
            # refused. "auto" means torch: nvFuser with dynamic dims is opt-in (backend='nvfuser')
            if backend == "auto":
                self.backend = "torch"
            elif getattr(backend, "name", backend) not in ("torch", "nvfuser", "inductor"):
                raise ValueError(
                    f"jit({qualname(fn)}): dynamic_dims are supported by the torch, nvfuser and inductor "
                    f"backends only (got backend={backend!r}); use backend='torch' (or declare the dims static)"
                )
            for name in self.contract.names:
                self.kinds[name] = Kind.TENSOR
            for name in self.contract.nested_names:
                if self.kinds[name] is not Kind.AUTO:
                    raise ValueError(
                        f"jit({qualname(fn)}, dynamic_dims=...): parameter {name!r} has paths declared inside it, "
                        f"so it must be unannotated (a pytree of tensors), but it is {self.kinds[name]}"
                    )
        self.declared_at = declared_at(signature_of)
        # What the traces read outside the arguments (see symscalar/state/)
        self.top = fn if isinstance(fn, torch.nn.Module) else None
        self._traced = fn.forward if isinstance(fn, torch.nn.Module) else fn
        self.roots = outside.Roots(fn)
        self.hooks = outside.HookWatch(self.top)
        self.namespace: dict[str, Any] = {}  # the dispatch's globals (hook epoch seen)
        self.inner: Callable[..., Any]  # the dispatch without the hook check
        self.key_and_args: Callable[..., tuple[Any, tuple[Any, ...]]]
        self.cache = Cache(limits.max_entries)
        self.calls = itertools.count()
        self._reads = 0
        self._reads_lock = threading.Lock()
        self.misses = 0
        self.rejected = 0
        self.calls_before_clear = 0
        self.lock = threading.RLock()
        # the cache value the last call ran; invariant: its key is the table's last (the
        # per-call path moves a key to the end only when it finds another value)
        self.last: Any = None

    # -- hooks -------------------------------------------------------------------------------

    def hooked_call(self, args: tuple[Any, ...]) -> Any:
        """The slow path taken when a hook was registered somewhere since the last check:
        refuse hooks jit cannot honour; run the jitted module's forward (pre-)hooks eagerly
        around the program (on every call while it has any)."""
        try:
            return self._hooked_call(args)
        except Exception as e:
            frames.hide_internal_frames(e)
            raise

    def _hooked_call(self, args: tuple[Any, ...]) -> Any:
        epoch = outside.hook_epoch()
        positional, kwargs = self.call(args, lambda kind, where, v: v, lambda *a, **k: (a, k))
        if not self.hooks.check():
            self.namespace["_ss_hooks_seen"] = epoch
            return self.inner(*positional, **kwargs)
        assert self.top is not None
        return outside.call_with_hooks(self.top, self.inner, positional, kwargs)

    # -- the miss path ---------------------------------------------------------------------

    def miss(self, args: tuple[Any, ...]) -> Any:
        try:
            return self._miss(args)
        except Exception as e:
            frames.hide_internal_frames(e)
            raise

    def _miss(self, args: tuple[Any, ...]) -> Any:
        check_no_functorch(qualname(self.fn))
        try:
            record = self.record(args)
        except Exception:
            with self.lock:
                self.rejected += 1  # neither a hit nor a miss
            raise
        key, call_args = self.key_and_args(*args)
        with self.lock:
            value = self.cache.table.get(key)
            if value is not None:
                out = value(*call_args)
                if out is not MISS:
                    self.cache.table.move_to_end(key)
                    self.last = value  # the most recently used key's value (see dispatch.py)
                    return out
            facts = self.call_facts(record)
            reasons = self.retraces.reasons(facts, self._failed_guards(value, call_args))
            self.retraces.before_trace(reasons, record.fixes)
            start = time.perf_counter()
            try:
                shapes = self.contract.symbolic(self._named(args)) if self.contract is not None else None
                with (
                    dims.tracing_shapes(shapes),
                    logs.first_call(f"{self.retraces.function} trace #{len(self.retraces.misses) + 1}"),
                ):
                    entry = self._compile(args, call_args, record)
            except BaseException:
                self.rejected += 1  # a call whose trace raised is neither a hit nor a miss
                raise
            self.misses += 1
            value = self.cache.insert(key, value, entry)  # its key is now the last one
            trace_ms = (time.perf_counter() - start) * 1e3
            self.retraces.record(facts, reasons, record.fixes, trace_ms, record.auto_numbers)
        self.last = value
        out = value(*call_args)
        assert out is not MISS, "a freshly traced entry must accept the call it was traced for"
        return out

    def _named(self, args: tuple[Any, ...]) -> dict[str, tuple[str, Any]]:
        return {p.name: (where, value) for p, _, where, value in self._arguments(args)}

    def _compile(self, args: tuple[Any, ...], call_args: tuple[Any, ...], record: CallRecord) -> Entry:
        return compile_entry(
            self.fn,
            self._traced,
            lambda convert, target: self.call(args, convert, target),
            call_args,
            self.roots,
            self.top,
            self.hooks,
            self.backend,
            list(record.objects),
        )

    def inline(self, args: tuple[Any, ...]) -> Any:
        """Called from inside another jitted function's trace: run the function on the
        traced values, so that it becomes part of that trace."""
        return self.call(args, arguments.check_inlined_argument)

    def record(self, args: tuple[Any, ...]) -> CallRecord:
        """Check the call's values against their kinds (a ``TypeError`` saying what to pass)
        and walk them once into what the rest of the miss path reads (see ``record.py``)."""
        items = self._arguments(args)
        if self.contract is not None:
            for p, _, where, value in items:
                if p.name in self.contract.names and not isinstance(value, torch.Tensor):
                    raise ShapeContractError(
                        f"{where} has dims declared dynamic (dynamic_dims / Dims), so it must be a tensor, but got "
                        f"{type(value).__name__}. Only a parameter whose default is None may be None when its dims "
                        "are declared: give it the default None, leave it out of dynamic_dims, or jit one function per "
                        "form of the call."
                    )
            if self.contract.nested_names:
                named = [(p.name, where, value) for p, _, where, value in items]
                dim_paths.check_state_order(qualname(self.fn), self.contract.nested_names, named)
        return record_call(
            items,
            {p.name: value for p, _, _, value in items},
            self.kinds,
            self.optional,
            self.unresolved,
            self.declared_at,
            f" of {qualname(self.fn)}",
        )

    def _arguments(self, args: tuple[Any, ...]) -> list[tuple[inspect.Parameter, str, str, Any]]:
        """Each value of the call as (parameter, keyword, description for messages, value);
        ``*args`` and ``**kwargs`` give one item per value."""
        items = []
        fn = qualname(self.fn)
        for (name, p), value in zip(self.sig.parameters.items(), args):
            if p.kind is p.VAR_POSITIONAL:
                items += [(p, name, f"argument {j} of *{name} of {fn}", v) for j, v in enumerate(value)]
            elif p.kind is p.VAR_KEYWORD:
                items += [(p, k, f"keyword argument '{k}' of {fn}", v) for k, v in value.items()]
            else:
                items.append((p, name, f"parameter '{name}' of {fn}", value))
        return items

    def call(
        self, args: tuple[Any, ...], convert: Callable[[Kind, str, Any], Any], target: Callable[..., Any] | None = None
    ) -> Any:
        """Call the function (or ``target``) with the converted values of the call
        (``convert(kind, where, value)``), in the order the per-call path passes them to the
        program."""
        pos: list[Any] = []
        kw: dict[str, Any] = {}
        for p, keyword_, where, value in self._arguments(args):
            converted = convert(self.kinds[p.name], where, value)
            if self.keyword_call and p.kind is p.POSITIONAL_OR_KEYWORD and value is p.default:
                continue  # omitted, as eager's call to the wrapper omits it (see _wrapper_followed)
            if p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY) or (self.keyword_call and p.kind is p.POSITIONAL_OR_KEYWORD):
                kw[keyword_] = converted
            else:
                pos.append(converted)
        return (target or self.fn)(*pos, **kw)

    # -- why a call traces (recorded on misses only; see explain.py) ----------------------

    def call_facts(self, record: CallRecord) -> dict[str, tuple[str, Any]]:
        """What a cache entry depends on, for this call: ``{label: (display, comparable)}``:
        the arguments' facts (``record``) and the ambient torch state; a module's too."""
        facts = dict(record.facts)
        facts["grad mode"] = _grad_mode()
        facts["default dtype"] = (str(torch.get_default_dtype()), torch.get_default_dtype())
        for device in ("cpu", "cuda"):
            on = torch.is_autocast_enabled(device)
            dtype = torch.get_autocast_dtype(device) if on else None
            facts[f"autocast ({device})"] = (f"on ({dtype})" if on else "off", dtype)
        for p in self.contract.params if self.contract is not None else ():
            fact = facts.get(f"tensor '{p.name}' shape")
            if fact is not None:  # a declared dynamic dim is no part of the key: never a reason
                dynamic = {d for d, _ in p.dynamic}
                facts[f"tensor '{p.name}' shape"] = (
                    fact[0],
                    tuple(None if i in dynamic else n for i, n in enumerate(fact[1])),
                )
        if isinstance(self.fn, torch.nn.Module):
            for path, module in self.fn.named_modules():
                facts[f"{_module_label(self.fn, path)}.training"] = (str(module.training), module.training)
            for path, t in (*self.fn.named_parameters(), *self.fn.named_buffers()):
                facts.update(tensor_facts(f"{_module_label(self.fn, path)}", t))
        return facts

    def would_trace(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> explain.WouldTrace:
        """Whether ``f(*args, **kwargs)`` would trace, and why; nothing is traced or run."""
        sig = call_signature(self.fn.forward if isinstance(self.fn, torch.nn.Module) else self.fn)[0]
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{qualname(self.fn)}(): {e}") from None
        bound.apply_defaults()
        values = tuple(bound.arguments[name] for name in self.sig.parameters)
        record = self.record(values)
        key, call_args = self.key_and_args(*values)
        value = self.cache.table.get(key)
        if value is not None and any(e.run.accepts(*call_args) for e in self.cache.entries_of(value)):  # type: ignore[attr-defined]
            return explain.WouldTrace(False)  # some entry under the key accepts the call
        failed = self._failed_guards(value, call_args) if value is not None else []
        reasons = self.retraces.reasons(self.call_facts(record), failed)
        return explain.WouldTrace(True, tuple(explain._with_fix(r, record.fixes) for r in reasons))

    def _failed_guards(self, value: Any, call_args: tuple[Any, ...]) -> list[str]:
        """Why the guarded entries under a key reject the call: ``specialize`` guards whose
        value differs now. Empty when no entry under the key has guards (or none failed)."""
        reasons = []
        for entry in self.cache.entries_of(value):
            guard = entry.guard
            if guard is None:
                continue
            got = guard.values(*call_args)
            for origin, want, have in zip(guard.origins, guard.expected, got):
                if tree.static_key(want) != tree.static_key(have):
                    reasons.append(f"guard specialize({origin}) == {want!r} failed: it is {have!r} now")
        for entry in self.cache.entries_of(value):
            if entry.size_guards:
                failed = size_guards.failed(entry.size_guards, size_guards.input_dims(entry.trace.inputs), call_args)
                reasons += [r for r in failed if r not in reasons]
        return reasons

    # -- inspection ------------------------------------------------------------------------

    def last_entry(self) -> Entry | None:
        return self.cache.entry_that_ran(self.last)

    def last_trace(self) -> Trace | None:
        entry = self.last_entry()
        return entry.trace if entry else None

    def last_backward_trace(self) -> Trace | None:
        entry = self.last_entry()
        return entry.backward_trace if entry else None

    def _count_calls(self) -> int:
        # the generated per-call code counts with next() on an itertools.count (atomic under
        # the GIL, so concurrent calls are all counted); reading it takes one more next(), so
        # the reads are counted too and subtracted
        with self._reads_lock:
            calls = next(self.calls) - self._reads
            self._reads += 1
        return calls

    def last_fusion(self) -> list[Any]:
        entry = self.last_entry()
        fusions = entry.backend.last_fusions() if entry is not None and entry.backend is not None else []
        return nvfuser_backend.FusionList(fusions)

    def cache_info(self) -> CacheInfo:
        calls = self._count_calls() - self.calls_before_clear
        guards = sum(len(e.size_guards) for v in list(self.cache.table.values()) for e in self.cache.entries_of(v))
        return CacheInfo(
            calls - self.misses - self.rejected, self.misses, len(self.cache), self.cache.evictions, guards
        )

    def cache_clear(self) -> None:
        with self.lock:
            self.cache.clear()
            self.last = None
            self.misses = 0
            self.rejected = 0
            self.calls_before_clear = self._count_calls()

    def explain(self) -> explain.Explanation:
        compiles = [
            record
            for value in list(self.cache.table.values())
            for entry in self.cache.entries_of(value)
            if entry.backend is not None
            for record in entry.backend.compile_log()
        ]
        guards = [
            guard
            for value in list(self.cache.table.values())
            for entry in self.cache.entries_of(value)
            for guard in entry.size_guards
        ]
        return explain.Explanation(self.retraces.misses, compiles, total=self.retraces.traces, guards=guards)


def jit_function(
    fn: Callable[..., Any],
    static: Any,
    dynamic: Any,
    backend: str | Backend,
    limits: Limits | None = None,
    frame_locals: Mapping[str, Any] | None = None,
    dynamic_dims: Any = None,
) -> Any:
    """The generated per-call function of ``fn``, with the inspection methods attached."""
    state = FunctionState(fn, static, dynamic, backend, limits, frame_locals, dynamic_dims)
    dispatch = generate_dispatch(qualname(fn), state)
    dispatch.__signature__ = state.sig  # type: ignore[attr-defined]
    for name in INSPECTION:
        if name != "would_trace":
            setattr(dispatch, name, getattr(state, name))
    dispatch.would_trace = lambda *args, **kwargs: state.would_trace(args, kwargs)  # type: ignore[attr-defined]
    dispatch._symscalar_state = state  # type: ignore[attr-defined]
    hide_from_dynamo(dispatch, (dispatch.__code__, state.inner.__code__))
    return dispatch


def call_signature(fn: Any) -> tuple[inspect.Signature, Any]:
    """The signature calls of ``fn`` are bound with, and the function holding its defaults.

    A ``functools.wraps`` wrapper reports the wrapped function's signature
    (``inspect.signature`` follows ``__wrapped__``). That is the right one for a pass-through
    wrapper (``def wrapper(*args, **kwargs)``), but a wrapper with parameters of its own is
    called with those: binding the inner signature would refuse valid calls and key the
    wrong values. So the wrapper's own signature is used unless it is a pure pass-through."""
    followed = inspect.signature(fn)
    function = getattr(fn, "__func__", fn)
    inner = inspect.unwrap(function) if callable(function) else function
    if inner is function or getattr(fn, "__signature__", None) is not None:
        return followed, function if isinstance(function, types.FunctionType) else None
    own = inspect.signature(fn, follow_wrapped=False)
    if _passes_through(own):
        return followed, inner if isinstance(inner, types.FunctionType) else None
    return own, function if isinstance(function, types.FunctionType) else None


def _wrapper_followed(fn: Any, sig: inspect.Signature) -> bool:
    """Whether calls of ``fn`` are bound with the signature of the function a pass-through
    wrapper wraps (``call_signature``): then the wrapper is called as eager calls it, with
    keywords and without the values left at their defaults, since such a wrapper may rewrite
    its keywords (transformers' ``deprecate_kwarg`` renames ``past_key_values=`` to
    ``cache=``: passed positionally as well, the parameter would get two values). Calls of a
    wrapper with ``*args`` in the wrapped signature stay positional."""
    function = getattr(fn, "__func__", fn)
    if not callable(function) or inspect.unwrap(function) is function or getattr(fn, "__signature__", None) is not None:
        return False
    own = inspect.signature(fn, follow_wrapped=False)
    kinds = {p.kind for p in sig.parameters.values()}
    return _passes_through(own) and inspect.Parameter.VAR_POSITIONAL not in kinds


def keyword_renames(fn: Any) -> dict[str, str]:
    """The keywords the pass-through wrappers around ``fn`` rename before calling it, old ->
    new: transformers' ``deprecate_kwarg(old_name, new_name=...)`` (``past_key_values=`` is
    ``cache=`` in 5.2x), read from each wrapper's closure. The dispatch binds the old keyword
    to the parameter as the wrapper would, so that it keys (and reaches declared dims) as one."""
    renames: dict[str, str] = {}
    f = getattr(fn, "__func__", fn)
    for _ in range(32):  # a chain of wrappers, each naming the next
        wrapped = getattr(f, "__wrapped__", None)
        code, cells = getattr(f, "__code__", None), getattr(f, "__closure__", None)
        if wrapped is None:
            break
        if code is not None and cells is not None and {"old_name", "new_name"} <= set(code.co_freevars):
            values = dict(zip(code.co_freevars, cells))
            try:
                old, new = values["old_name"].cell_contents, values["new_name"].cell_contents
            except ValueError:  # an empty cell
                old = new = None
            if isinstance(old, str) and isinstance(new, str) and old not in renames.values():
                renames.setdefault(old, new)
        f = wrapped
    return renames


def _passes_through(sig: inspect.Signature) -> bool:
    kinds = [p.kind for p in sig.parameters.values()]
    return kinds == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]


# -- facts for messages -------------------------------------------------------------------


def _grad_mode() -> tuple[str, Any]:
    if torch.is_inference_mode_enabled():
        return "inference_mode", 2
    return ("on" if torch.is_grad_enabled() else "off (no_grad)"), torch.is_grad_enabled()


def _module_label(root: torch.nn.Module, path: str) -> str:
    return type(root).__name__ + (f".{path}" if path else "")
