"""Watching a trace: what the traced function reads and writes outside its arguments.

``TraceWatch`` snapshots the state reachable from the jitted callable, records the modules
called, turns an attribute assignment of a traced tensor into an ``AttributeWrite`` (a
write-back after every call), and restores the snapshot, so tracing itself has no side effect
and no ``TensorProxy`` is left anywhere. torch's global RNG functions are refused while tracing.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch.nn.modules import module as nn_module
from torch.utils.hooks import RemovableHandle

from symscalar.compiling import patch_while_tracing
from symscalar.errors import UnsupportedOperationError
from symscalar.explain import _user_stacklevel
from symscalar.frontend import public_name
from symscalar.proxy import TensorProxy
from symscalar.state.hooks import _Recorder, refused_hooks
from symscalar.state.paths import _MISSING, Captured, Path, Roots
from symscalar.tracer import TraceBuilder, is_trace_constant
from symscalar.types import current_tracer

# ----------------------------------------------------------------------------------------
# Watching a trace: snapshot, hooks, writes, restore


@dataclasses.dataclass
class AttributeWrite:
    """``owner.name = value`` done by the traced function with a traced tensor: replayed after
    every call with ``setattr`` (eager's semantics: a buffer stays a buffer)."""

    owner: Any
    name: str
    value: TensorProxy
    # registered by the function (register_buffer of a new name, or with another persistence):
    # replayed as a buffer with the persistence it had when traced; None for a plain assignment
    persistent: bool | None = None


# Functions of torch's global RNG: inside a traced function they would run once, at trace time
# (the program's random ops draw from a seed input of their own), so jit refuses them while
# it traces (``compiling.patch_while_tracing``); eager calls elsewhere, other threads included, are untouched.
_RNG_FUNCTIONS = (
    "manual_seed",
    "seed",
    "get_rng_state",
    "set_rng_state",
    "fork_rng",
    "manual_seed_all",
    "seed_all",
    "get_rng_state_all",
    "set_rng_state_all",
)
_RNG_MODULES = ("torch", "torch.random", "torch.cuda", "torch.cuda.random")


def _refuse_while_tracing(where: str, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def refuse(*args: Any, **kwargs: Any) -> Any:
        if current_tracer.get() is None:
            return original(*args, **kwargs)
        raise UnsupportedOperationError(
            f"{where}.{name}() inside a traced function is not supported: symscalar.jit runs the "
            "function's Python once, at trace time, so it would change or read torch's global "
            "RNG state once, not on every call, and the program's random ops draw from a seed of "
            "their own. Fix: call it outside the jitted function (seed or restore the RNG state "
            "before calling it, or draw the random tensors outside and pass them in)."
        )

    refuse.__symscalar_original__ = original  # type: ignore[attr-defined]
    return refuse


for _where in _RNG_MODULES:
    for _name in _RNG_FUNCTIONS:
        patch_while_tracing(_where, _name, functools.partial(_refuse_while_tracing, _where, _name))

# numpy's and Python's global generators: a draw while tracing would run once and be baked into
# the program as a constant (transformers' wav2vec2 SpecAugment masks draw with numpy.random); a
# seed or a state set would happen once, not on every call.
_HOST_RNG_FUNCTIONS = {
    "numpy.random": "rand randn random random_sample ranf sample randint random_integers choice uniform normal "
    "standard_normal permutation shuffle binomial poisson beta exponential bytes seed get_state set_state",
    "random": "random uniform randint randrange choice choices sample shuffle gauss normalvariate getrandbits "
    "seed getstate setstate",
}


def _refuse_host_rng(where: str, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def refuse(*args: Any, **kwargs: Any) -> Any:
        if current_tracer.get() is None:
            return original(*args, **kwargs)
        raise UnsupportedOperationError(
            f"{where}.{name}() inside a traced function is not supported: symscalar.jit runs the function's "
            "Python once, at trace time, so the numbers it draws would be baked into the compiled program and "
            "repeat on every call (a seed or state it sets would be set once). Fix: draw with torch's random "
            "ops (torch.rand, torch.bernoulli...), which read the program's RNG seed on every call, or draw "
            "outside the jitted function and pass the result in."
        )

    return refuse


for _where, _names in _HOST_RNG_FUNCTIONS.items():
    for _name in _names.split():
        patch_while_tracing(_where, _name, functools.partial(_refuse_host_rng, _where, _name))


class TraceWatch:
    """Context manager around tracing: snapshot reachable state, record called modules, turn
    writes of traced tensors into ``AttributeWrite``s, restore the snapshot, refuse what cannot
    be honoured."""

    def __init__(self, roots: Roots, builder: TraceBuilder, top: torch.nn.Module | None) -> None:
        roots = roots.copy()
        self.roots = roots  # the entry's: read by make_entry
        self.builder = builder
        self.top = top
        self.walk = roots.walk()
        self.tensors, self.modules, self.objects = self.walk.tensors, self.walk.modules, self.walk.objects
        self.names = _module_names(self.modules)
        self.used_modules: dict[int, torch.nn.Module] = {}
        self.writes: list[AttributeWrite] = []
        self._saved: dict[int, tuple[Any, list[tuple[dict[str, Any], dict[str, Any]]]]] = {}
        self._cells = [(r.binding, r.source) for r in roots.roots if r.source.endswith(".cell_contents")]
        self._cell_values = [c.cell_contents if _cell_full(c) else _MISSING for c, _ in self._cells]
        self._tensor_meta = {i: _versioned(t) for i, (t, _) in self.tensors.items()}
        self._handle: RemovableHandle | None = None
        self._containers: list[tuple[Any, Any]] = []
        self._persistence: dict[int, set[str]] = {}
        # lists and dicts of Python state: a change by the traced function happens once, here
        self._watched = [(c, c.copy(), self.path_name(path)) for c, path in self.walk.containers]

    def aliases(self, captured: list[Captured], modules: dict[int, torch.nn.Module]) -> list[tuple[Path, Path]]:
        """The alias checks of an entry reading ``captured`` and depending on ``modules``."""
        return self.walk.aliases([id(c.tensor) for c in captured if c.path is not None] + list(modules))

    def captured(self, builder: TraceBuilder, label: str) -> list[Captured]:
        """The trace's captured tensors, in its input order, each with its path. A tensor
        without one could not be read again on later calls, so a rebinding would go unseen:
        refused, unless the trace (or an earlier one) built it from Python values alone."""
        result = []
        for t in builder.captured_tensors():
            found = self.tensors.get(id(t))
            if found is None and id(t) not in builder.constants and not is_trace_constant(t):
                raise UnsupportedOperationError(_pathless_message(t, builder.read_by.get(id(t)), label))
            result.append(Captured(t, found[1] if found else None))
        return result

    # snapshot -------------------------------------------------------------------------------

    def _save(self, obj: Any) -> None:
        if id(obj) in self._saved or isinstance(obj, torch.jit.ScriptModule):  # refused if called
            return
        tables = [vars(obj)]
        if isinstance(obj, torch.nn.Module):
            tables += [obj._parameters, obj._buffers, obj._modules]
        self._saved[id(obj)] = (obj, [(t, dict(t)) for t in tables])
        if isinstance(obj, torch.nn.Module):  # register_buffer(..., persistent=) changes it
            self._persistence[id(obj)] = set(obj._non_persistent_buffers_set)
        own = {id(t) for t in tables}
        for value in vars(obj).values():  # containers the function may fill (a list cache)
            if isinstance(value, (list, dict)) and id(value) not in own:
                self._containers.append((value, value.copy()))

    def called(self, module: torch.nn.Module) -> None:
        reason = refused_hooks(module, self.top, self.names)
        if reason:  # before the snapshot: a ScriptModule's tables are not dicts
            raise UnsupportedOperationError(reason)
        self._save(module)
        self.used_modules[id(module)] = module

    def __enter__(self) -> TraceWatch:
        for module, _ in self.modules.values():
            self._save(module)
        for obj in self.objects:
            self._save(obj)
        if self.top is not None:
            self.called(self.top)
        self._handle = nn_module.register_module_forward_pre_hook(_Recorder(self))
        self._grad_mode = torch.is_grad_enabled()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        assert self._handle is not None
        self._handle.remove()
        problems = self._restore()
        if torch.is_grad_enabled() != self._grad_mode:
            torch.set_grad_enabled(self._grad_mode)
            problems.append(
                f"the traced function left grad mode {'enabled' if not self._grad_mode else 'disabled'} "
                "(torch.set_grad_enabled(...) called as a function, not as a context manager); "
                "symscalar.jit runs the function's Python once, so later calls would not change "
                "it. Fix: use `with torch.set_grad_enabled(...):` inside the function, or call it "
                "outside the jitted function."
            )
        if exc_type is None and problems:
            raise UnsupportedOperationError(problems[0])

    # restore ---------------------------------------------------------------------------------

    def _restore(self) -> list[str]:
        """Put back every attribute the traced function changed; collect the writes of traced
        tensors and the problems (writes that cannot be replayed)."""
        problems: list[str] = []
        writes: dict[tuple[int, str], AttributeWrite] = {}
        for obj, tables in self._saved.values():
            owner = self._owner_name(obj)
            own_tables = {id(t) for t, _ in tables}
            for table, saved in tables:
                # in the table's order, then the deleted names: replayed buffers keep eager's order
                for name in [*table, *(n for n in saved if n not in table)]:
                    new, old = table.get(name, _MISSING), saved.get(name, _MISSING)
                    if new is old:
                        if id(new) not in own_tables:
                            problems += _proxies_inside(new, f"{owner}.{name}")
                        continue
                    if new is _MISSING:
                        table[name] = old
                        problems.append(
                            f"the traced function deleted {owner}.{name}; symscalar.jit runs the "
                            "function's Python once, so the deletion would not happen on later "
                            "calls. Fix: delete it outside the jitted function."
                        )
                        continue
                    if isinstance(new, TensorProxy) and new._tracer is self.builder:
                        writes[(id(obj), name)] = AttributeWrite(
                            obj, name, new, self._registered(obj, table, name, old)
                        )
                    elif isinstance(new, (torch.Tensor, torch.nn.Module)) and not isinstance(new, TensorProxy):
                        continue  # built from static values only: the same on every call, kept
                    else:
                        problems.append(_python_write_message(owner, name, old, new))
                    if old is _MISSING:
                        del table[name]
                    else:
                        table[name] = old
        for container, saved_items in self._containers:
            items = container.values() if isinstance(container, dict) else container
            if any(isinstance(v, TensorProxy) for v in items):
                container.clear()
                if isinstance(container, list):
                    container.extend(saved_items)
                else:
                    container.update(saved_items)
        for container, saved_items, where in self._watched:
            if _changed(container, saved_items) and not _holds_proxies(container):
                warnings.warn(
                    _side_effect_message(where, container), PythonSideEffectWarning, stacklevel=_user_stacklevel()
                )
        for (cell, source), old in zip(self._cells, self._cell_values):
            new = cell.cell_contents if _cell_full(cell) else _MISSING
            if new is not old:
                cell.cell_contents = old
                label = next(r.label for r in self.roots.roots if r.source == source)
                problems.append(
                    f"the traced function rebinds {label} (nonlocal); symscalar.jit runs the "
                    "function's Python once, so later calls would not rebind it. Fix: return "
                    "the value and assign it outside the jitted function."
                )
        for i, (tensor, path) in self.tensors.items():
            if _versioned(tensor) != self._tensor_meta[i]:
                problems.append(
                    f"the traced function changed the tensor {self.path_name(path)} eagerly while "
                    "tracing (an in-place op, .data or requires_grad_ on a tensor read from "
                    "outside): it would happen once, not on every call. Fix: do it outside the "
                    "jitted function, or assign the new value (self.x = ...) so jit replays it."
                )
        self.writes = list(writes.values())
        return problems

    def _registered(self, obj: Any, table: dict[str, Any], name: str, old: Any) -> bool | None:
        """The persistence a buffer write of the traced function registered (see
        ``AttributeWrite.persistent``), putting the module's persistence back as it was."""
        if not isinstance(obj, torch.nn.Module) or table is not obj._buffers:
            return None
        was = name in self._persistence[id(obj)]
        now = name in obj._non_persistent_buffers_set
        if was:
            obj._non_persistent_buffers_set.add(name)
        else:
            obj._non_persistent_buffers_set.discard(name)
        return not now if old is _MISSING or was != now else None

    def _owner_name(self, obj: Any) -> str:
        if isinstance(obj, torch.nn.Module):
            return f"{type(obj).__name__}" + (f" {self.names[id(obj)]!r}" if self.names.get(id(obj)) else "")
        return type(obj).__name__

    def path_name(self, path: Path) -> str:
        text = self.roots.roots[path.root].label
        for where, name in path.steps:
            text += f"[{name!r}]" if where == "item" else f".{name}"
        return text


def _pathless_message(tensor: torch.Tensor, op: Any, label: str) -> str:
    reader = f" by {public_name(op)}" if op is not None else ""
    return (
        f"{label} reads a tensor from outside its arguments (shape {tuple(tensor.shape)}, "
        f"{tensor.dtype}, read{reader}) that symscalar.jit cannot find from the jitted callable: "
        "not through a module's parameters, buffers or attributes, a closure, a global of the "
        "function or of a function it calls, nor the lists, dicts, objects and classes they "
        "hold (it may come from a cache filled outside the function, a C extension object, or "
        "an argument compared by value). Held by reference, a rebinding of it would go unseen "
        "on later calls. Fix: pass it as an argument, or hold it on a module as a "
        "parameter/buffer/attribute (or in a global or closure the function reads)."
    )


def _proxies_inside(value: Any, where: str) -> list[str]:
    """A container on a module (a list used as a KV cache) that the traced function filled
    with traced tensors: refused, the proxies would outlive the trace."""
    if isinstance(value, (list, dict, tuple)):
        items = value.values() if isinstance(value, dict) else value
        if any(isinstance(v, TensorProxy) for v in items):
            return [
                f"the traced function stored a traced tensor inside {where} (a "
                f"{type(value).__name__}); only direct attribute assignment (self.x = tensor) is "
                "replayed after each call. Fix: assign a tensor attribute or buffer (e.g. "
                "self.cache = torch.cat([self.cache, new])), or return the value."
            ]
    return []


class PythonSideEffectWarning(UserWarning):
    """The traced function changed a list or dict of Python state (``calls.append(1)``, a
    counter in a dict): jit runs the function's Python once, so eager would change it on every
    call and the compiled program never does."""


def _changed(container: Any, saved: Any) -> bool:
    if isinstance(container, dict):
        return container.keys() != saved.keys() or any(container[k] is not v for k, v in saved.items())
    return len(container) != len(saved) or any(a is not b for a, b in zip(container, saved))


def _holds_proxies(container: Any) -> bool:
    items = container.values() if isinstance(container, dict) else container
    return any(isinstance(v, TensorProxy) for v in items)  # refused or restored above


def _side_effect_message(where: str, container: Any) -> str:
    return (
        f"the traced function changed {where} (a {type(container).__name__}) while tracing; "
        "symscalar.jit runs the function's Python once, at trace time, so later calls do not "
        "change it (eager would on every call), and a value computed from it is the traced "
        "one. Fix: change it outside the jitted function, or return the value."
    )


def _python_write_message(owner: str, name: str, old: Any, new: Any) -> str:
    return (
        f"the traced function set {owner}.{name} = {new!r} (was "
        f"{'unset' if old is _MISSING else repr(old)}); symscalar.jit runs the function's Python "
        "once, at trace time, so later calls would not repeat this write. Fix: update Python "
        "state outside the jitted function, or keep the value in a tensor buffer."
    )


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - reading an empty cell raises ValueError
    except ValueError:
        return False
    return True


def _meta(t: torch.Tensor) -> tuple[Any, ...]:
    return (t.shape, t.dtype, t.device, t.requires_grad)


def _versioned(t: torch.Tensor) -> tuple[Any, ...]:
    """``_meta`` and the version counter, which an inference tensor (made under
    ``torch.inference_mode()``) does not have: reading it raises."""
    return (*_meta(t), None if t.is_inference() else t._version)


def _module_names(modules: dict[int, tuple[torch.nn.Module, Path]]) -> dict[int, str]:
    return {i: ".".join(str(name) for _, name in path.steps) for i, (_, path) in modules.items()}
