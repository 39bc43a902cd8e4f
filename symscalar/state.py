"""What a traced function reads and writes outside its arguments, kept honest on every call.

A function traced by ``symscalar.jit`` may read tensors it was not passed (a module's
parameters and buffers, a closed-over or global tensor), may depend on modules (their
``training`` flag, their hooks), and may write state (``self.avg = 0.9 * self.avg + ...``).
A cache entry is valid only while what its trace assumed still holds, so this module

- finds, for every captured tensor, a *path* from the jitted callable (``self._modules['fc']
  ._parameters['weight']``, a closure cell, a global) and generates the entry's per-call
  *state guard*: it reads each captured tensor by path (a replaced parameter is seen), checks
  its shape, dtype, device and requires_grad against the trace, checks the identity and
  ``training`` flag of every module the trace depends on, and answers "miss" (retrace) when
  anything differs — never a stale value;
- watches tracing: it snapshots the state reachable from the callable, records the modules
  called, refuses hooks it cannot honour, turns an attribute assignment of a traced tensor
  into a *write-back* (an extra program output assigned after every call) and restores the
  snapshot, so tracing itself has no side effect and no ``TensorProxy`` is left anywhere;
- writes the state back after every call with eager's semantics.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import os
import sys
import types as pytypes
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.nn.modules import module as nn_module
from torch.utils.hooks import RemovableHandle

from symscalar.compiling import patch_while_tracing
from symscalar.errors import UnsupportedOperationError
from symscalar.tracing import TensorProxy, TraceBuilder, is_trace_constant, public_name
from symscalar.types import current_tracer

__all__ = ["Roots", "Walk", "TraceWatch", "make_entry", "HookWatch", "hook_epoch"]

_MISSING = object()
# A path step: (where, name); rendered by _STEP into source reading it from the previous value.
_STEP = {
    "module": "._modules[{!r}]",
    "param": "._parameters[{!r}]",
    "buffer": "._buffers[{!r}]",
    "attr": ".__dict__[{!r}]",
    "item": "[{!r}]",
    "getattr": ".{}",  # attribute lookup: a class attribute, a method's __self__
}


def hook_epoch() -> int:
    """A number that changes whenever any hook is registered anywhere in torch (every
    ``register_*hook`` returns a ``RemovableHandle``, which takes the next id): jit compares it
    on every call and re-checks the hooks of the modules it traced only when it moved."""
    return RemovableHandle.next_id


# ----------------------------------------------------------------------------------------
# Roots and paths


@dataclasses.dataclass(frozen=True)
class Root:
    """Where a path starts: an object the jitted callable holds."""

    source: str  # expression reading the root's current value in generated code
    binding: Any  # the object bound to the name used in ``source``
    label: str  # for messages: "the jitted module", "closure variable 'w'", "global 'model'"
    kind: str  # "const" (the binding itself), "cell" (its contents), "global" (binding[name])
    name: str = ""  # the global's name

    def read(self) -> Any:
        """The root's current value; KeyError/ValueError for a deleted global, empty cell."""
        if self.kind == "cell":
            return self.binding.cell_contents
        return self.binding[self.name] if self.kind == "global" else self.binding


@dataclasses.dataclass(frozen=True)
class Path:
    """How to reach a tensor or module from a root, one step at a time."""

    root: int
    steps: tuple[tuple[str, Any], ...]  # (where, name or key)

    def child(self, where: str, name: Any) -> Path:
        return Path(self.root, self.steps + ((where, name),))


class Roots:
    """The roots of a jitted callable: the module itself (``jit(module)``), a bound method's
    ``self``, a partial's arguments, the function's closure cells and the globals it names.
    The walk adds more: the closure cells and globals of every user function it reaches (a
    helper the function calls, a submodule's ``forward``), so those are read on every call."""

    def __init__(self, fn: Any) -> None:
        self.roots: list[Root] = []
        self._index: dict[tuple[str, int, str], int] = {}
        self.names: set[str] = set()  # names the walked code uses: what it may read of a Python module
        self._add(fn, "the jitted callable")

    def _add(self, fn: Any, label: str) -> None:
        if isinstance(fn, torch.nn.Module):
            self._const(fn, label)
            fn = getattr(type(fn), "forward", None)  # the globals forward reads
        if isinstance(fn, pytypes.MethodType):
            self._const(fn.__self__, f"{type(fn.__self__).__name__} (self of {fn.__func__.__qualname__})")
            fn = fn.__func__
        if isinstance(fn, functools.partial):
            for i, a in enumerate(fn.args):
                self._const(a, f"argument {i} of the partial")
            for k, a in fn.keywords.items():
                self._const(a, f"keyword {k!r} of the partial")
            self._add(fn.func, label)
            return
        if getattr(fn, "__code__", None) is not None:
            self.function_roots(fn, "")

    def function_roots(self, fn: Any, where: str) -> None:
        """Add the roots a function reads outside its arguments: closure cells, the globals it
        names (and note those names: what it may read of a Python module)."""
        code = fn.__code__
        names = frozenset(_global_names(code))
        self.names |= names
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            self.root("cell", cell, "", f"closure variable {name!r}{where}")
        globals_ = getattr(fn, "__globals__", {})
        for name in sorted(names):
            if name in globals_:
                self.root("global", globals_, name, f"global {name!r}{where}")

    def root(self, kind: str, binding: Any, name: str, label: str) -> int:
        key = (kind, id(binding), name)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.roots)
            suffix = {"cell": ".cell_contents", "global": f"[{name!r}]"}.get(kind, "")
            source = f"_ss_o{index}{suffix}"
            self.roots.append(Root(source, binding, label, kind, name))
        return index

    def copy(self) -> Roots:
        """A copy for one trace: the walk adds roots (helpers' globals) to it, not to these."""
        roots = copy.copy(self)
        roots.roots, roots._index, roots.names = list(self.roots), dict(self._index), set(self.names)
        return roots

    def _const(self, obj: Any, label: str) -> None:
        self.roots.append(Root(f"_ss_o{len(self.roots)}", obj, label, "const"))

    def values(self) -> Iterator[tuple[int, Any]]:
        for i, root in enumerate(self.roots):
            try:
                yield i, root.read()
            except (KeyError, ValueError):  # a deleted global, an empty cell
                continue

    def walk(self) -> Walk:
        """Every tensor and module reachable from the roots (see ``Walk``)."""
        walk = Walk(self)
        walk.run()
        return walk


# Libraries whose code and objects the walk does not enter: their functions read no user
# tensors through globals, and skipping them keeps the walk cheap (it runs once per trace).
_LIBRARIES = frozenset(sys.stdlib_module_names) | {
    "torch",
    "symscalar",
    "numpy",
    "typing_extensions",
    "_pytest",
    "pytest",
    "pluggy",
    "hypothesis",
    "thunder",
    "nvfuser",
    "nvfuser_direct",
    "triton",
}
_ATOMS = frozenset(
    {
        type(None),
        bool,
        int,
        float,
        complex,
        str,
        bytes,
        torch.dtype,
        torch.device,
        torch.Size,
        torch.memory_format,
        torch.layout,
        pytypes.BuiltinFunctionType,
        type(Ellipsis),
        range,
        slice,
    }
)
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))
_MAX_ITEMS = 10_000  # longer lists and dicts are not searched (a dataset, a vocabulary)
_MAX_PATHS = 8  # ways to reach one object that the guard checks


def _slots(cls: type) -> list[str]:
    names = []
    for base in cls.__mro__:
        slots = vars(base).get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [n for n in slots if n != "__dict__" and n.isidentifier()]
    return names


def _searchable(value: list[Any] | tuple[Any, ...]) -> bool:
    """A list or tuple (or a user subclass: a NamedTuple of weights) whose items are walked."""
    return type(value) in (list, tuple) or not _library(type(value).__module__)


@functools.cache
def _library(module_name: Any) -> bool:
    """Whether code and objects of the Python module ``module_name`` are not entered: torch,
    numpy, symscalar, the standard library and installed third-party packages (their functions
    hold no user tensors in globals; following them would walk all of transformers)."""
    if not isinstance(module_name, str):
        return True
    top = module_name.partition(".")[0]
    if top in _LIBRARIES:
        return True
    where = getattr(sys.modules.get(top), "__file__", None) or ""
    return any(part in where for part in _INSTALLED)


_INSTALLED = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


class Walk:
    """Everything reachable from a jitted callable's roots that a trace may read: tensors and
    modules with their shortest path (how the entry reads them on every call), every other path
    that reaches each object (an alias: tied weights, a shared submodule), and the plain objects
    at the roots (a bound method's ``self``) whose attributes the function may write.

    Followed: a module's parameters, buffers, submodules and attributes (``_``-prefixed ones
    too), class attributes of user classes, items of lists, tuples and dicts, attributes of
    plain objects, the attributes a walked function names of a user
    Python module (``import mylib; mylib.W``), and the closure cells, globals and defaults of
    every user function reached (a helper, a submodule's ``forward``, a method). Code and
    objects of torch, numpy, symscalar and the standard library are not entered."""

    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        self.tensors: dict[int, tuple[torch.Tensor, Path]] = {}
        self.modules: dict[int, tuple[torch.nn.Module, Path]] = {}
        self.objects: list[Any] = []
        # the other objects reached (a config on a module, an argument object), each with its
        # shortest path: their plain attributes are checked on every call (_jit/pystate.py)
        self.plain: dict[int, tuple[Any, Path]] = {}
        # every way found to each object: (id of the object it was read from, path); first = shortest
        self.paths: dict[int, list[tuple[int | None, Path]]] = {}
        self._queue: collections.deque[tuple[Any, Path, int | None]] = collections.deque()
        self._functions: set[int] = set()
        self._pymodules: list[tuple[pytypes.ModuleType, Path, set[str]]] = []
        self._class_items: dict[type, list[tuple[str, Any]]] = {}

    def run(self) -> None:
        started = 0
        while True:
            if started < len(self.roots.roots):  # walking a function adds its roots
                self._start(started)
                started += 1
            elif self._queue:
                self._visit(*self._queue.popleft())
            elif not self._read_pymodules():
                return

    def _start(self, index: int) -> None:
        root = self.roots.roots[index]
        try:
            value = root.read()
        except (KeyError, ValueError):  # a deleted global, an empty cell
            return
        if root.kind == "const" and _is_plain_object(value):
            self.objects.append(value)
        self._visit(value, Path(index, ()), None)

    def _visit(self, value: Any, path: Path, parent: int | None) -> None:
        if type(value) in _ATOMS:
            return
        key = id(value)
        found = self.paths.get(key)
        if found is not None:
            if len(found) < _MAX_PATHS:
                found.append((parent, path))
            return
        if isinstance(value, (pytypes.FunctionType, staticmethod, classmethod, property, functools.partial)) or (
            type(value).__name__ == "_lru_cache_wrapper"
        ):
            self._function(value)
            return
        self.paths[key] = [(parent, path)]
        push = self._queue.append
        if isinstance(value, torch.Tensor):
            self.tensors[key] = (value, path)
        elif isinstance(value, torch.nn.Module):
            self.modules[key] = (value, path)
            for where, table in (("param", value._parameters), ("buffer", value._buffers), ("module", value._modules)):
                for name, item in table.items():
                    if item is not None:
                        push((item, path.child(where, name), key))
            self._attributes(value, path, key, _MODULE_INTERNALS)
        elif isinstance(value, (list, tuple)) and _searchable(value):
            if len(value) <= _MAX_ITEMS:
                for i, item in enumerate(value):
                    if type(item) not in _ATOMS:
                        push((item, path.child("item", i), key))
        elif isinstance(value, dict):
            if len(value) <= _MAX_ITEMS:
                for k, item in value.items():
                    if type(item) not in _ATOMS and type(k) in (str, int):
                        push((item, path.child("item", k), key))
        elif isinstance(value, pytypes.MethodType):
            push((value.__self__, path.child("getattr", "__self__"), key))
            self._function(value.__func__)
        elif isinstance(value, pytypes.ModuleType):
            if not _library(value.__name__):
                self._pymodules.append((value, path, set()))
        elif isinstance(value, type):
            for name, item in self._class_attributes(value):
                push((item, path.child("getattr", name), key))
        elif not _library(type(value).__module__):
            self.plain[key] = (value, path)
            if _is_plain_object(value):
                self._attributes(value, path, key, frozenset())
            for name in _slots(type(value)):  # an object with __slots__
                item = getattr(value, name, None)
                if type(item) not in _ATOMS:
                    push((item, path.child("getattr", name), key))
        elif _is_plain_object(value):  # a library's object (a transformers config): not entered
            self.plain[key] = (value, path)

    def _attributes(self, obj: Any, path: Path, key: int, skip: frozenset[str]) -> None:
        """An object's own attributes, then its class attributes not shadowed by them."""
        own = vars(obj)
        for name, item in own.items():
            if type(item) not in _ATOMS and name not in skip and isinstance(name, str):
                self._queue.append((item, path.child("attr", name), key))
        for name, item in self._class_attributes(type(obj)):
            if name not in own:
                self._queue.append((item, path.child("getattr", name), key))

    def _class_attributes(self, cls: type) -> list[tuple[str, Any]]:
        """The non-atom class attributes of ``cls`` and its user base classes; their functions
        (methods, ``forward``) are walked, not returned."""
        items = self._class_items.get(cls)
        if items is not None:
            return items
        items, seen = [], set()
        for base in cls.__mro__:
            if _library(base.__module__):
                continue
            for name, item in vars(base).items():
                if name in seen or (name.startswith("__") and name.endswith("__")) or type(item) in _ATOMS:
                    continue
                seen.add(name)
                if isinstance(item, (pytypes.FunctionType, staticmethod, classmethod, property, functools.partial)):
                    self._function(item)
                elif name.isidentifier():
                    items.append((name, item))
        self._class_items[cls] = items
        return items

    def _function(self, fn: Any) -> None:
        if isinstance(fn, property):
            for part in (fn.fget, fn.fset):
                if part is not None:
                    self._function(part)
            return
        fn = getattr(fn, "__func__", fn)  # staticmethod, classmethod
        if isinstance(fn, functools.partial):
            self._function(fn.func)
            return
        if not isinstance(fn, pytypes.FunctionType):
            fn = getattr(fn, "__wrapped__", None)  # functools.lru_cache
            if not isinstance(fn, pytypes.FunctionType):
                return
        if id(fn) in self._functions or _library(fn.__module__):
            return
        self._functions.add(id(fn))
        self.roots.function_roots(fn, f" of {fn.__module__}.{fn.__qualname__}")
        wrapped = getattr(fn, "__wrapped__", None)  # functools.wraps: the decorated function
        if wrapped is not None:
            self._function(wrapped)
        if fn.__defaults__ and any(type(d) not in _ATOMS for d in fn.__defaults__):
            index = self.roots.root("const", fn, "", f"function {fn.__qualname__}")
            self._queue.append((fn.__defaults__, Path(index, (("getattr", "__defaults__"),)), None))
        if fn.__kwdefaults__ and any(type(d) not in _ATOMS for d in fn.__kwdefaults__.values()):
            index = self.roots.root("const", fn, "", f"function {fn.__qualname__}")
            self._queue.append((fn.__kwdefaults__, Path(index, (("getattr", "__kwdefaults__"),)), None))

    def _read_pymodules(self) -> bool:
        """Queue the attributes of user Python modules that walked code names; whether any."""
        added = False
        for module, path, done in self._pymodules:
            namespace = vars(module)
            for name in (self.roots.names & namespace.keys()) - done:
                done.add(name)
                if type(namespace[name]) not in _ATOMS:
                    self._queue.append((namespace[name], path.child("attr", name), id(module)))
                    added = True
        return added

    def aliases(self, ids: Any) -> list[tuple[Path, Path]]:
        """(another path, the shortest path) of every object through which an object of ``ids``
        was reached by more than one path: the entry checks both still reach the same object,
        so untying tied weights or unsharing a submodule is a retrace, not a stale program."""
        checks: list[tuple[Path, Path]] = []
        todo = [i for i in ids if i in self.paths]
        seen = set(todo)
        while todo:
            found = self.paths[todo.pop()]
            for j, (parent, path) in enumerate(found):
                if j:
                    checks.append((path, found[0][1]))
                if parent is not None and parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return checks


def _is_plain_object(value: Any) -> bool:
    """An instance whose attributes a bound method reads (not a class, module or function)."""
    return hasattr(value, "__dict__") and not isinstance(
        value, (type, pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType)
    )


def _global_names(code: pytypes.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _global_names(const)
    return names


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


def describe_module(module: torch.nn.Module, names: dict[int, str]) -> str:
    name = names.get(id(module))
    return f"{type(module).__name__} {name!r}" if name else type(module).__name__


def hook_names(hooks: dict[int, Any]) -> str:
    return ", ".join(getattr(h, "__qualname__", repr(h)) for h in hooks.values())


_MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
_GLOBAL_HOOKS = {
    "register_module_forward_pre_hook": "_global_forward_pre_hooks",
    "register_module_forward_hook": "_global_forward_hooks",
    "register_module_full_backward_pre_hook": "_global_backward_pre_hooks",
    "register_module_full_backward_hook": "_global_backward_hooks",
}


def refused_hooks(module: torch.nn.Module, top: torch.nn.Module | None, names: dict[int, str]) -> str | None:
    """Why ``module``'s hooks cannot be honoured, or None. The jitted module's own forward
    (pre-)hooks run eagerly around the compiled program; every other hook would run once, at
    trace time, on traced values."""
    for attr in _MODULE_HOOKS:
        hooks = getattr(module, attr)
        if not hooks or (module is top and attr in ("_forward_pre_hooks", "_forward_hooks")):
            continue
        kind = attr.strip("_").replace("_hooks", " hook").replace("_", " ")
        where = "the jitted module" if module is top else f"submodule {describe_module(module, names)}"
        return (
            f"{where} has a {kind} ({hook_names(hooks)}); symscalar.jit runs the forward "
            "(pre-)hooks of the jitted module itself around the program on every call, but cannot "
            "honour hooks of submodules or backward hooks: they would run once, while tracing, on "
            "traced values. Fix: remove the hook (handle.remove()), or call the hooked module "
            "outside the jitted function."
        )
    for register, attr in _GLOBAL_HOOKS.items():
        hooks = {k: h for k, h in getattr(nn_module, attr).items() if not isinstance(h, _Recorder)}
        if hooks:
            return (
                f"a global module hook is registered with torch.nn.modules.module.{register} "
                f"({hook_names(hooks)}); it would run once, while tracing, on traced values. Fix: "
                "remove it while calling jitted functions that call modules."
            )
    return None


class _Recorder:
    """A global forward pre-hook installed while tracing: it records every module the traced
    function calls and refuses, at once, a module whose hooks cannot be honoured."""

    def __init__(self, watch: TraceWatch) -> None:
        self.watch = watch

    def __call__(self, module: torch.nn.Module, args: Any) -> None:
        if current_tracer.get() is not self.watch.builder:
            return  # another thread, or an eager call
        self.watch.called(module)


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
        self._tensor_meta = {i: _meta(t) + (t._version,) for i, (t, _) in self.tensors.items()}
        self._handle: RemovableHandle | None = None
        self._containers: list[tuple[Any, Any]] = []
        self._persistence: dict[int, set[str]] = {}

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
        if id(obj) in self._saved:
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
        self._save(module)
        self.used_modules[id(module)] = module
        reason = refused_hooks(module, self.top, self.names)
        if reason:
            raise UnsupportedOperationError(reason)

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
            if _meta(tensor) + (tensor._version,) != self._tensor_meta[i]:
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


def _module_names(modules: dict[int, tuple[torch.nn.Module, Path]]) -> dict[int, str]:
    return {i: ".".join(str(name) for _, name in path.steps) for i, (_, path) in modules.items()}


# ----------------------------------------------------------------------------------------
# The per-entry state guard and write-back, as generated code


@dataclasses.dataclass
class StateWrite:
    """One state write replayed after every call with the program's k-th state output."""

    how: str  # "copy": in place into captured tensor ``target``; "set": setattr; "buffer"/"buffer_np": set_buffer
    target: Any  # captured index ("copy") or the owner object ("set", "buffer")
    name: str  # attribute name ("set", "buffer")
    detach: bool  # the value depends on nothing that requires grad: store it detached, as eager


@dataclasses.dataclass
class Captured:
    """One captured tensor: read by path when it has one, else held by reference."""

    tensor: torch.Tensor
    path: Path | None


def make_entry(
    run: Callable[..., Any],
    roots: Roots,
    captured: list[Captured],
    modules: list[tuple[torch.nn.Module, Path | None]],
    guard: Callable[..., bool] | None,
    writes: list[StateWrite],
    miss: object,
    label: str,
    aliases: Sequence[tuple[Path, Path]] = (),
    attributes: Sequence[Any] = (),
    root_values: Sequence[tuple[int, Any]] = (),
    same: Callable[[Any, Any], bool] | None = None,
) -> Callable[..., Any]:
    """Generate the callable stored in the cache: check the state the trace assumed, run the
    program with the captured tensors read now, write state back; ``miss`` when a check fails.

    Args:
        run: the compiled program, called with the call's inputs then the captured tensors.
        captured: in the order of the trace's captured inputs.
        modules: modules whose identity and ``training`` flag the trace depends on.
        guard: ``specialize`` guards over the trace's inputs, or None.
        writes: replayed in order with the run's second result (the state outputs).
        aliases: (other path, shortest path) pairs that must still reach one object (tied
            weights, a shared submodule; see ``Walk.aliases``).
        attributes: objects (``obj``, ``path`` or None, ``values``: (name, value) pairs) whose
            ``__dict__`` must still hold those plain values; ``root_values``: (root index,
            value) of globals and cells; compared by identity, then by ``same`` (see
            ``symscalar/_jit/pystate.py``).
    """
    ns: dict[str, Any] = {
        "_ss_run": run,
        "_ss_MISS": miss,
        "_ss_guard": guard,
        "_ss_copy_into": copy_into,
        "_ss_setattr": setattr,
        "_ss_set_buffer": set_buffer,
    }
    for i, root in enumerate(roots.roots):
        ns[f"_ss_o{i}"] = root.binding
    lines: list[str] = []
    checks: list[str] = []
    bound: dict[tuple[int, tuple[tuple[str, Any], ...]], str] = {}

    def read(path: Path) -> str:
        """Source of a local holding the value at ``path``, binding prefixes once."""
        key = (path.root, path.steps)
        if key in bound:
            return bound[key]
        if not path.steps:
            source = roots.roots[path.root].source
        else:
            parent = read(Path(path.root, path.steps[:-1]))
            where, name = path.steps[-1]
            source = parent + _STEP[where].format(name)
        local = f"_v{len(bound)}"
        bound[key] = local
        lines.append(f"        {local} = {source}")
        return local

    for j, (module, path) in enumerate(modules):
        ns[f"_ss_M{j}"] = module
        ref = read(path) if path is not None else f"_ss_M{j}"
        if path is not None:
            checks.append(f"{ref} is _ss_M{j}")  # a replaced submodule is a different program
        checks.append(f"{ref}.training is {module.training}")
        # what the module holds: a parameter, buffer or submodule added (Sequential.append,
        # a bias given to Linear(bias=False)) or an empty slot filled (bias None -> Parameter)
        # changes what forward computes even though nothing the trace read changed
        for table in ("_parameters", "_buffers", "_modules"):
            held = getattr(module, table)
            checks.append(f"len({ref}.{table}) == {len(held)}")
            checks.extend(f"{ref}.{table}[{name!r}] is None" for name, v in held.items() if v is None)
    names = []
    for j, cap in enumerate(captured):
        t = cap.tensor
        ns[f"_ss_C{j}"] = t
        ns[f"_ss_S{j}"], ns[f"_ss_D{j}"], ns[f"_ss_V{j}"] = t.shape, t.dtype, t.device
        ref = read(cap.path) if cap.path is not None else f"_ss_C{j}"
        names.append(ref)
        checks.append(
            f"{ref}.dtype is _ss_D{j} and {ref}.requires_grad is {t.requires_grad} and "
            f"{ref}.shape == _ss_S{j} and {ref}.device == _ss_V{j}"
        )
    checks.extend(f"{read(other)} is {read(path)}" for other, path in aliases)
    ns["_ss_same"] = same
    n_values = 0

    def holds(source: str, value: Any) -> str:
        nonlocal n_values
        if value is None or type(value) is bool:
            return f"{source} is {value!r}"
        ns[f"_ss_A{n_values}"] = value
        n_values += 1
        return f"({source} is _ss_A{n_values - 1} or _ss_same({source}, _ss_A{n_values - 1}))"

    for k, held in enumerate(attributes):
        ns[f"_ss_G{k}"] = held.obj
        ref = read(held.path) if held.path is not None else f"_ss_G{k}"
        lines.append(f"        _d{k} = {ref}.__dict__")
        checks.extend(holds(f"_d{k}[{name!r}]", value) for name, value in held.values)
    checks.extend(holds(read(Path(index, ())), value) for index, value in root_values)
    if not (lines or checks or guard or writes or names):  # nothing to check: the program itself
        return _unchecked_entry(run)
    body = "\n".join(lines)
    test = " and\n            ".join(checks) or "True"
    extra = "".join(f", {n}" for n in names)
    guard_src = f"    if not _ss_guard(*_ss_a{extra}):\n        return _ss_MISS\n" if guard else ""
    write_src = ""
    if writes:
        write_src = "    _ss_out, _ss_new = _ss_out\n"
        for k, write in enumerate(writes):
            value = f"_ss_new[{k}].detach()" if write.detach else f"_ss_new[{k}]"
            if write.how == "copy":
                write_src += f"    _ss_copy_into({names[write.target]}, {value})\n"
            else:
                ns[f"_ss_W{k}"] = write.target
                if write.how == "set":
                    write_src += f"    _ss_setattr(_ss_W{k}, {write.name!r}, {value})\n"
                else:  # a registered buffer, persistent ("buffer") or not ("buffer_np")
                    persistent = write.how == "buffer"
                    write_src += f"    _ss_set_buffer(_ss_W{k}, {write.name!r}, {value}, {persistent})\n"
    source = f"""
def _ss_entry(*_ss_a):
    try:
{body or "        pass"}
        if not ({test}):
            return _ss_MISS
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return _ss_MISS
{guard_src}    _ss_out = _ss_run(*_ss_a{extra})
{write_src}    return _ss_out

def _ss_accepts(*_ss_a):
    try:
{body or "        pass"}
        if not ({test}):
            return False
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return False
{guard_src.replace("_ss_MISS", "False")}    return True
"""
    exec(compile(source, f"<symscalar.jit entry of {label}>", "exec"), ns)  # noqa: S102
    entry: Callable[..., Any] = ns["_ss_entry"]
    entry.__source__ = source  # type: ignore[attr-defined]
    # the checks alone, without running the program: for would_trace()
    entry.accepts = ns["_ss_accepts"]  # type: ignore[attr-defined]
    return entry


def _unchecked_entry(run: Callable[..., Any]) -> Callable[..., Any]:
    """An entry whose trace read nothing from outside: the program, with ``accepts`` (always
    true). A wrapper only when ``run`` cannot hold the attribute or is shared."""
    entry = run
    if not isinstance(run, pytypes.FunctionType) or hasattr(run, "accepts"):
        entry = functools.wraps(run)(lambda *args: run(*args))
    entry.accepts = _always  # type: ignore[attr-defined]
    return entry


def _always(*args: Any) -> bool:
    return True


def set_buffer(module: torch.nn.Module, name: str, value: torch.Tensor, persistent: bool) -> None:
    """Replay of ``register_buffer(name, traced value, persistent)`` done by the traced
    function: a buffer again (a plain ``setattr`` would make a new name a plain attribute,
    missing from ``state_dict``), with the persistence it was registered with."""
    module.register_buffer(name, value, persistent=persistent)


def copy_into(target: torch.Tensor, value: torch.Tensor) -> None:
    """An in-place write to state, replayed after a call: under no_grad unless a gradient can
    flow through it (then eager's semantics: the target joins the graph)."""
    if value.requires_grad and torch.is_grad_enabled():
        target.copy_(value)
        return
    with torch.no_grad():
        target.copy_(value)


# ----------------------------------------------------------------------------------------
# Hooks of the jitted module, run eagerly around the compiled program


def call_with_hooks(
    module: torch.nn.Module, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``module(*args, **kwargs)`` with ``forward`` replaced by ``call`` (the compiled program):
    the module's forward pre-hooks and forward hooks run eagerly, exactly as
    ``torch.nn.Module._call_impl`` runs them (a pre-hook may replace the arguments, a forward
    hook the output)."""
    for hook_id, hook in list(module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    out = call(*args, **kwargs)
    for hook_id, hook in list(module._forward_hooks.items()):
        if hook_id in module._forward_hooks_with_kwargs:
            result = hook(module, args, kwargs, out)
        else:
            result = hook(module, args, out)
        if result is not None:
            out = result
    return out


class HookWatch:
    """The modules a jitted function's traces called, re-checked for hooks whenever the hook
    epoch moves (see ``hook_epoch``)."""

    def __init__(self, top: torch.nn.Module | None) -> None:
        self.top = top
        self.modules: dict[int, torch.nn.Module] = {}
        self.names: dict[int, str] = {}

    def add(self, modules: dict[int, torch.nn.Module], names: dict[int, str]) -> None:
        self.modules.update(modules)
        self.names.update(names)

    def check(self) -> bool:
        """Raise if a traced module now has a hook jit cannot honour; return whether the
        jitted module has forward (pre-)hooks to run around the program."""
        for module in self.modules.values():
            reason = refused_hooks(module, self.top, self.names)
            if reason:
                raise UnsupportedOperationError(reason)
        top = self.top
        return top is not None and bool(top._forward_pre_hooks or top._forward_hooks)
