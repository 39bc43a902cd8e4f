"""The plain Python values a cache entry assumed, checked on every call.

A trace runs the function's Python once, so a number, flag or ``None`` it read on a module
(``self.drop.p``, ``self.mask is None``, a KV cache ``self.k = None`` filled later), on an
object passed as an argument (``cfg.temperature``), in a global or a closure cell is baked into
the program. Eager reads them again on every call; a stale cache hit would silently compute
something else. So each entry checks, on every call, that the plain values (``None``, bools,
numbers, strings, dtypes, devices, functions and classes, tuples, lists, dicts and sets of
them) held by the objects its state guard already
reads are the values it was traced with: a changed value is a retrace, never a stale hit.

Which values: every such attribute in the ``__dict__`` of the modules the trace depends on and
of the plain objects the state walk reached from them and from the arguments (the walk cannot
tell which of them the trace read; checking all is a superset, one identity test each, see
``benchmarks/overhead.py``), and the globals and closure cells of the walked functions holding
such a value (those are exactly the names the code uses). What cannot be checked (values in
``__slots__``, objects with thousands of attributes) gets one warning per function.
"""

from __future__ import annotations

import dataclasses
import functools
import types as pytypes
import warnings
from operator import is_
from typing import Any

import torch

from symscalar import state as outside
from symscalar._jit import tree

__all__ = ["AttributeGuard", "attribute_guards", "same_value", "UnguardedStateWarning"]

_SCALARS = frozenset(
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
        torch.layout,
        torch.memory_format,
        type(Ellipsis),
    }
)
_MAX_TUPLE = 64
_MAX_ATTRIBUTES = 512  # an object with more plain attributes is not checked (warned once)
# nn.Module's own bookkeeping (``training`` is checked with the module; hooks by HookWatch)
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))
# objects of these packages are not checked: their attributes are machinery, not settings
_UNCHECKED_PACKAGES = frozenset({"torch", "symscalar", "logging", "threading", "typing", "enum"})


class UnguardedStateWarning(UserWarning):
    """A plain Python value the trace may read lives where symscalar cannot check it on every
    call (``__slots__``, an object with very many attributes): a change there is not seen."""


# functions held as settings (``self.act = F.gelu``, ``functools.partial(F.leaky_relu, ...)``):
# the trace ran the one it found, so another one is a retrace (compared by identity)
_CALLABLES = frozenset({pytypes.FunctionType, pytypes.BuiltinFunctionType, pytypes.MethodType, functools.partial})
_MUTABLE = (list, dict, set)  # exact types: filled or emptied in place between calls


def guardable(value: Any) -> bool:
    """A plain value whose change the entry checks: None, a bool, number (numpy's scalars
    too), string, dtype, device, layout, a function or class (by identity), or a (short)
    tuple, list, dict, set or frozenset of them (peft's ``merged_adapters`` list and
    ``scaling`` dict, a config's list of layer indices)."""
    kind = type(value)
    if kind in _SCALARS or kind in _CALLABLES or _numpy_scalar(kind):
        return True
    if isinstance(value, type):  # a class held as a setting (``self.act_layer = nn.GELU``)
        return True
    if kind in (tuple, torch.Size, list, set, frozenset) and len(value) <= _MAX_TUPLE:
        return all(guardable(item) for item in value)
    if kind is dict and len(value) <= _MAX_TUPLE:
        return all(guardable(k) and guardable(v) for k, v in value.items())
    return False


def _numpy_scalar(kind: type) -> bool:
    """A numpy scalar (``np.float64(0.5)``, ``np.int64(3)``: immutable, compared by type and
    value), recognised without importing numpy; not an ndarray."""
    return kind.__module__ == "numpy" and kind.__name__ != "ndarray" and hasattr(kind, "dtype")


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """The contents of a guarded value holding a mutable container, taken when traced: the
    object is the same on the next call (an identity test would pass) while its items may
    have changed, so it is compared item by item on every call."""

    key: Any
    # the value snapshotted and the containers it holds (``_containers``), compared by identity
    # first, the key only where one holds another object; neither is part of the snapshot's equality
    origin: Any = dataclasses.field(default=None, compare=False)
    containers: Any = dataclasses.field(default=None, compare=False)


def _content_key(value: Any) -> Any:
    kind = type(value)
    if kind is functools.partial:  # its keywords are a dict, changed in place too
        if not (guardable(value.args) and guardable(value.keywords)):
            return (kind, value)  # holding a tensor or a module: by identity
        return (kind, value.func, _content_key(value.args), _content_key(value.keywords))
    if kind in (tuple, list):
        return (kind, tuple(_content_key(item) for item in value))
    if kind in (set, frozenset):
        return (kind, frozenset(_content_key(item) for item in value))
    if kind is dict:
        return (kind, tuple((_content_key(k), _content_key(v)) for k, v in value.items()))
    return tree.static_key(value)


def _holds_mutable(value: Any) -> bool:
    kind = type(value)
    if kind in _MUTABLE:
        return True
    if kind is functools.partial:  # compared by its contents where they are plain values
        return guardable(value.args) and guardable(value.keywords)
    if kind in (tuple, frozenset):
        return any(_holds_mutable(item) for item in value)
    return False


def freeze(value: Any) -> Any:
    """What an entry keeps of a guardable value: the value, or a ``Snapshot`` of its contents
    where it holds a list, dict or set (kept by reference, it would always compare equal)."""
    return Snapshot(_content_key(value), value, _containers(value)) if _holds_mutable(value) else value


def same_value(now: Any, then: Any) -> bool:
    """``now`` is the value ``then`` (after an identity test failed): same type and equal the
    way static values are (``200`` is not ``200.0``, ``-0.0`` is not ``0.0``, NaN is NaN), item
    by item against a ``Snapshot``."""
    if type(then) is Snapshot:
        containers = then.containers
        return (containers is not None and _unchanged(now, then.origin, containers)) or _matches(now, then.key)
    return type(now) is type(then) and bool(tree.static_key(now) == tree.static_key(then))


def _containers(value: Any) -> tuple[tuple[Any, Any, Any], ...] | None:
    """The containers changed in place (lists, dicts, sets) that a snapshotted value holds, itself
    among them, each with the items it holds now (kept: an item that ``is`` one of them is that
    value, of that type), for ``_unchanged``; None where it holds a ``functools.partial`` (its
    keywords, a dict, are compared by the key alone)."""
    found: list[tuple[Any, Any, Any]] = []

    def add(v: Any) -> bool:
        kind = type(v)
        if kind is functools.partial:
            return False
        if kind in (set, frozenset) or kind is dict:
            if any(_holds_mutable(k) for k in v):  # a partial as an item or a key
                return False
        if kind in (set, frozenset):
            if kind is set:
                found.append((v, frozenset(map(id, v)), tuple(v)))
            return True
        items = tuple(v.values()) if kind is dict else tuple(v)
        if kind is not tuple:
            found.append((v, tuple(v) if kind is dict else items, items if kind is dict else None))
        return all(add(item) for item in items if _holds_mutable(item))

    return tuple(found) if add(value) else None


def _unchanged(now: Any, origin: Any, containers: tuple[tuple[Any, Any, Any], ...]) -> bool:
    """``now`` is the object snapshotted, and each container it holds (``_containers``: a tuple
    holds the same objects forever) holds, in order, the very objects it held then: so its
    contents key is the snapshot's. The common case of a call, tested by identity at C speed,
    without walking down the value; False says only that the key must be compared."""
    if now is not origin:
        return False
    for container, items, values in containers:
        if len(container) != len(items):
            return False
        kind = type(container)
        if kind is list:
            if not all(map(is_, container, items)):
                return False
        elif kind is dict:
            if not (all(map(is_, container, items)) and all(map(is_, container.values(), values))):
                return False
        elif not all(map(items.__contains__, map(id, container))):  # a set: its items' ids
            return False
    return True


def _matches(now: Any, key: Any) -> bool:
    """``guardable(now) and _content_key(now) == key``, walking ``now`` once and building no key
    for its lists, tuples and dicts (the containers an entry compares on every call: a config's
    dicts of plans, a model's sets of module names), stopping at the first difference."""
    kind = type(now)
    if kind is tuple or kind is list:
        if type(key) is not tuple or len(key) != 2 or key[0] is not kind or len(now) > _MAX_TUPLE:
            return False
        items = key[1]
        return len(now) == len(items) and all(_matches(x, k) for x, k in zip(now, items))
    if kind is dict:
        if type(key) is not tuple or len(key) != 2 or key[0] is not dict or len(now) > _MAX_TUPLE:
            return False
        pairs = key[1]
        return len(now) == len(pairs) and all(
            _matches(k, kk) and _matches(v, vk) for (k, v), (kk, vk) in zip(now.items(), pairs)
        )
    return guardable(now) and bool(_content_key(now) == key)  # a leaf, set or partial: small


@dataclasses.dataclass(frozen=True)
class AttributeGuard:
    """The plain values of one object's ``__dict__`` (``path`` from the roots, or None: held by
    reference), or of one root (a global, a closure cell: ``names`` empty, ``root`` set)."""

    obj: Any
    path: outside.Path | None
    values: tuple[tuple[str, Any], ...]  # (attribute, value when traced)


def attribute_guards(
    watch: outside.TraceWatch, modules: dict[int, torch.nn.Module], label: str
) -> tuple[list[AttributeGuard], list[tuple[int, Any]]]:
    """The attribute guards of an entry depending on ``modules`` (with the objects the walk
    found), and the roots (globals, closure cells) holding a plain value: (index, value)."""
    guards: list[AttributeGuard] = []
    unchecked: list[str] = []
    for i, module in modules.items():
        found = watch.modules.get(i)
        values = _plain_attributes(module, _MODULE_INTERNALS)
        if values is None:
            unchecked.append(f"{type(module).__name__} (too many attributes)")
        elif values:
            guards.append(AttributeGuard(module, found[1] if found else None, values))
    for obj, path in watch.walk.plain.values():
        if _unchecked_package(type(obj)):
            continue
        if not hasattr(obj, "__dict__"):
            if any(guardable(getattr(obj, name, None)) for name in _slot_names(type(obj))):
                unchecked.append(f"{type(obj).__name__} (__slots__)")
            continue
        values = _plain_attributes(obj, frozenset())
        if values is None:
            unchecked.append(f"{type(obj).__name__} (too many attributes)")
        elif values:
            guards.append(AttributeGuard(obj, path, values))
    roots = []
    for index, value in watch.roots.values():
        root = watch.roots.roots[index]
        if root.kind in ("global", "cell") and guardable(value):
            roots.append((index, freeze(value)))
    if unchecked:
        _warn_once(label, unchecked)
    return guards, roots


def _plain_attributes(obj: Any, skip: frozenset[str]) -> tuple[tuple[str, Any], ...] | None:
    """The guardable attributes of ``obj``'s ``__dict__``; None when there are too many."""
    try:
        own = vars(obj)
    except TypeError:
        return ()
    if type(own) is not dict:  # a mappingproxy (a class), a custom mapping: not checked
        return ()
    values = tuple(
        (name, freeze(v)) for name, v in own.items() if type(name) is str and name not in skip and guardable(v)
    )
    return values if len(values) <= _MAX_ATTRIBUTES else None


def _slot_names(kind: type) -> list[str]:
    names: list[str] = []
    for base in kind.__mro__:
        slots = vars(base).get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return names


def _unchecked_package(kind: type) -> bool:
    module = getattr(kind, "__module__", "") or ""
    return module.partition(".")[0] in _UNCHECKED_PACKAGES


_warned: set[tuple[str, str]] = set()


def _warn_once(label: str, unchecked: list[str]) -> None:
    key = (label, ", ".join(sorted(set(unchecked))))
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(
        f"{label} reads objects whose plain Python values symscalar.jit cannot check on every "
        f"call: {key[1]}. A change there after the first call is not seen (the program keeps the "
        "value it was traced with). Fix: keep such settings in a regular attribute (not "
        "__slots__), pass them as arguments, or call f.cache_clear() after changing them.",
        UnguardedStateWarning,
        stacklevel=3,
    )
