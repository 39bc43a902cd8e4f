"""Paths to the state a jitted callable can reach: its roots and the walk that finds them.

Every tensor and module a trace reads from outside its arguments is found again on every call
by a *path* from a *root* (the jitted module, a closure cell, a global): ``Roots`` holds the
roots, ``Walk`` searches what they reach (parameters, buffers, attributes, containers, the
closures and globals of the functions it meets), and ``Path`` is one way there, rendered into
generated code by ``guards.make_entry``.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import os
import sys
import types as pytypes
from collections.abc import Iterator
from typing import Any

import torch

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
        # the lists and dicts reached, with their shortest path (TraceWatch sees them change)
        self.containers: list[tuple[list[Any] | dict[Any, Any], Path]] = []

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
            if isinstance(value, list):
                self.containers.append((value, path))
            if len(value) <= _MAX_ITEMS:
                for i, item in enumerate(value):
                    if type(item) not in _ATOMS:
                        push((item, path.child("item", i), key))
        elif isinstance(value, dict):
            self.containers.append((value, path))
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


@dataclasses.dataclass
class Captured:
    """One captured tensor: read by path when it has one, else held by reference."""

    tensor: torch.Tensor
    path: Path | None
