"""Arguments that a traced function mutates: state objects (a KV cache), functionalized.

Eager ``model(ids, past_key_values=cache)`` changes ``cache`` itself: a static cache's layer
tensors are updated in place (``index_copy_``, ``cumulative_length.add_``), a dynamic cache's
layer attributes are rebound to grown tensors (``self.keys = torch.cat(...)``), a layer's Python
attributes change on its first update (``is_initialized``, ``device``), and the call returns
the same object. A class registered here (``register_state_class``; the transformers
integration registers its caches) is a pytree node over its ``__dict__`` (key paths
``.layers[0].keys``), so a call is keyed by the object's structure and tensor metadata, never
by its identity: every new cache of the same shape finds the same programs.

While tracing, the function gets a stand-in object whose tensors are program inputs; their
in-place updates are traced out of place (``InPlaceWrites.mutable_inputs``). After the trace,
the stand-ins are compared with what they held before: every tensor updated in place, rebound
or newly set is an output of the program, and the ``WriteBack`` plan replays each change on the
caller's objects after every call (``copy_`` into a tensor eager updated in place, an attribute
assignment otherwise) and returns the caller's objects where the function returned the
stand-ins. What cannot be replayed (a new state object, a container changed in place) is refused.

The caller's objects reach the compiled entry through ``recorded``: the per-call key walk
(``tree.tree_key``) notes each state object it keys, in walk order, and the entry takes the
last ones it needs, checking their classes.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree

from symscalar._jit.params import Kind
from symscalar.errors import SymscalarError, UnsupportedOperationError
from symscalar.explain import RetraceWarning, _user_stacklevel
from symscalar.inplace import InPlaceWrites
from symscalar.proxy import TensorProxy

__all__ = [
    "STATE_CLASSES",
    "register_state_class",
    "refuse_state_objects",
    "check_objects",
    "is_state_class",
    "note",
    "MutableArguments",
    "WriteBack",
    "loud_on_raise",
    "raised_midway",
]

# class -> how messages name the class's fix when it holds something not modelled
STATE_CLASSES: dict[type, str] = {}
_STATIC = (type(None), bool, int, float, str, torch.dtype, torch.device, type, enum.Enum)
_MISSING = object()
_MAX_NOTED = 4096


class _Noted(threading.local):
    def __init__(self) -> None:
        self.objects: list[Any] = []  # the state objects of the calls keyed last (``note``)
        self.built: list[Any] | None = None  # stand-ins built while an argument is converted


_noted = _Noted()


def note(obj: Any) -> None:
    """Called by the key walk for each state object of a call, after its children (the order
    ``tree_unflatten`` builds the stand-ins in)."""
    objects = _noted.objects
    if len(objects) >= _MAX_NOTED:  # keys computed without a call of an entry (explain, errors)
        del objects[: _MAX_NOTED // 2]
    objects.append(obj)


def is_state_class(cls: type) -> bool:
    return cls in STATE_CLASSES


def register_state_class(cls: type, fix: str) -> None:
    """Make ``cls`` a pytree node over its ``__dict__``, functionalized when passed to a jitted
    function (see the module docstring). ``fix``: what to do when an instance holds a value that
    is neither a tensor, a container, a state object nor a static value (said in the error)."""
    if cls in STATE_CLASSES:
        return
    STATE_CLASSES[cls] = fix
    if cls in pytree.SUPPORTED_NODES:  # by its library (transformers' torch.export support): ours builds the stand-ins
        pytree._deregister_pytree_node(cls)
    pytree.register_pytree_node(
        cls,
        _flatten,
        lambda children, context: _unflatten(cls, children, context),
        serialized_type_name=f"{cls.__module__}.{cls.__qualname__}",
        flatten_with_keys_fn=_flatten_with_keys,
    )


# base classes whose instances are state a traced function mutates, and what to do instead,
# for the subclasses not registered with register_state_class
_REFUSED: list[tuple[tuple[type, ...], str]] = []


def refuse_state_objects(bases: tuple[type, ...], fix: str) -> None:
    """Refuse instances of ``bases`` (subclasses not registered as state classes) as arguments
    of a jitted function: keyed by identity, their changes would not be replayed."""
    if all(b != bases for b, _ in _REFUSED):
        _REFUSED.append((bases, fix))


def check_objects(objects: Any, label: str) -> None:
    """Refuse the state-holding arguments (``(where, object)``) of a refused kind."""
    for where, obj in objects:
        for bases, fix in _REFUSED:
            if isinstance(obj, bases) and type(obj) not in STATE_CLASSES:
                raise UnsupportedOperationError(
                    f"{label}: {where} holds a {type(obj).__name__}, a cache that symscalar.jit does not model: "
                    f"eager updates it in place on every call, and the program would not replay that. {fix}"
                )


class _Context:
    """A state object's attributes but its children: ``(name, is child, static value)`` in
    ``__dict__`` order. One hashable leaf of the key (walked item by item as a tuple it cost a
    call of the key walk per item on every call), equal only for the same types and values."""

    __slots__ = ("items", "_key", "_hash")

    def __init__(self, items: tuple[tuple[str, bool, Any], ...]) -> None:
        self.items = items
        self._key = tuple([(n, c, type(v), float.__repr__(v) if type(v) is float else v) for n, c, v in items])
        self._hash = hash(self._key)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Context and self._hash == other._hash and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __iter__(self) -> Any:
        return iter(self.items)

    def __repr__(self) -> str:
        return f"_Context({self.items!r})"


# the exact types of most attributes of a cache (its layers' flags, sizes, dtype, device; their
# tensors): one set lookup per attribute on the per-call key walk, before the isinstance tests
_EXACT_STATIC = frozenset({type(None), bool, int, float, str, torch.dtype, torch.device})
_EXACT_CHILDREN = frozenset({torch.Tensor, list, tuple, dict})


def _flatten(obj: Any) -> tuple[list[Any], Any]:
    children: list[Any] = []
    context: list[tuple[str, bool, Any]] = []
    for name, value in vars(obj).items():
        kind = type(value)
        if kind in _EXACT_STATIC:
            context.append((name, False, value))
        elif kind in _EXACT_CHILDREN:
            context.append((name, True, None))
            children.append(value)
        elif isinstance(value, _STATIC) and not isinstance(value, torch.Tensor):
            context.append((name, False, value))
        elif isinstance(value, (torch.Tensor, TensorProxy, list, tuple, dict)) or type(value) in STATE_CLASSES:
            context.append((name, True, None))
            children.append(value)
        else:
            cls = type(obj)
            raise UnsupportedOperationError(
                f"{cls.__name__}.{name} holds a {type(value).__name__}, which symscalar.jit does not model as state "
                f"of a {cls.__name__} passed to a jitted function (it models tensors, lists, tuples and dicts of them, "
                f"and static values: None, numbers, strings, dtypes, devices). {STATE_CLASSES[cls]}"
            )
    return children, _Context(tuple(context))


def _flatten_with_keys(obj: Any) -> tuple[list[tuple[Any, Any]], Any]:
    children, context = _flatten(obj)
    names = [name for name, is_child, _ in context if is_child]
    return [(pytree.GetAttrKey(n), c) for n, c in zip(names, children)], context


def _unflatten(cls: type, children: Any, context: Any) -> Any:
    obj: Any = object.__new__(cls)
    values = iter(children)
    obj.__dict__.update({name: next(values) if is_child else value for name, is_child, value in context})
    if _noted.built is not None:
        _noted.built.append(obj)
    return obj


# -- one trace -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Change:
    how: str  # "copy" (into the caller's tensor), "set", "static", "del"
    node: int  # the state object, by its number in the key walk
    name: str
    index: int | None  # an item of a list or tuple attribute
    value: Any  # the state output's number ("copy", "set") or the static value


class MutableArguments:
    """The state objects among one trace's arguments (``converting``) and, after the trace,
    what the program must return and write back (``finish``)."""

    def __init__(self, inplace: InPlaceWrites) -> None:
        self._mutable_inputs = inplace.mutable_inputs  # proxy ids, updated in place like computed values
        inplace.state_changed = self.changed  # a raising check after a change is refused (ops/checks.py)
        self.nodes: list[Any] = []  # stand-ins, in the key walk's order
        self._before: list[dict[str, Any]] = []
        self._items: list[dict[str, list[Any]]] = []  # the items of list attributes when the call began
        self._vars: dict[int, Any] = {}  # id(proxy) -> its var when the call began
        self.grown: list[str] = []  # tensors of state objects the call replaced by larger ones
        self.counted: list[str] = []  # Python ints of state objects the call changed
        self.updated: list[tuple[Any, Any]] = []  # (input var, new var) of each tensor updated in place
        self._containers: list[tuple[Any, str, list[Any]]] = []  # lists and dicts passed, their items at the start

    def converting(self, convert: Callable[[Any, str, Any], Any]) -> Callable[[Any, str, Any], Any]:
        """``convert`` (``arguments.proxy``), noting the stand-ins it makes of unannotated values."""

        def wrapped(kind: Any, where: str, value: Any) -> Any:
            if kind is not Kind.AUTO:  # only unannotated values are keyed with their tensors
                return convert(kind, where, value)
            built: list[Any] = []
            _noted.built = built
            try:
                converted = convert(kind, where, value)
            finally:
                _noted.built = None
            for node in built:  # the stand-ins, built children first: the key walk's order
                self._add(node, where)
            _note_containers(converted, where, self._containers)
            return converted

        return wrapped

    def _add(self, v: Any, where: str) -> None:
        self.nodes.append(v)
        before = dict(vars(v))
        self._before.append(before)
        self._items.append({name: list(x) for name, x in before.items() if isinstance(x, list)})
        for name, x in before.items():
            items = list(x.values()) if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else (x,)
            for t in items:
                if isinstance(t, TensorProxy) and not isinstance(x, dict):
                    self._vars[id(t)] = t._var
                    self._mutable_inputs.add(id(t))
                elif isinstance(t, (TensorProxy, list, tuple, dict)) and t is not x:
                    raise self._refusal(v, name, where, "a container holding containers or tensors in a dict")

    def changed(self) -> bool:
        """Whether the traced code has changed a state object so far (an attribute set or
        deleted, a tensor updated in place)."""
        for node, before, items in zip(self.nodes, self._before, self._items):
            after = vars(node)
            if after.keys() != before.keys():
                return True
            for name, value in after.items():
                if value is not before[name] or (name in items and any(a is not b for a, b in zip(value, items[name]))):
                    return True
                for t in value if isinstance(value, (list, tuple)) else (value,):
                    if isinstance(t, TensorProxy) and t._var is not self._vars.get(id(t), t._var):
                        return True
        return False

    def finish(self, result: Any, label: str, fn: Any = None) -> tuple[Any, WriteBack | None]:
        """The function's result for the program, ``(result, (state outputs...))`` with the
        stand-ins in ``result`` replaced by placeholders, and the write-back plan; ``result``
        itself and None when no state object was passed."""
        _check_containers(self._containers, label)
        if not self.nodes:
            return result, None
        changes: list[_Change] = []
        outputs: list[Any] = []
        for j, (node, before) in enumerate(zip(self.nodes, self._before)):
            after = vars(node)
            for name in before.keys() - after.keys():
                changes.append(_Change("del", j, name, None, None))
            for name, value in after.items():
                old = before.get(name, _MISSING)
                if isinstance(value, (list, tuple)) and value is old:  # items updated in place
                    if isinstance(value, list) and [id(x) for x in value] != [id(x) for x in self._items[j][name]]:
                        raise self._refusal(node, name, label, "a list whose items it added, removed or replaced")
                    for i, x in enumerate(value):
                        self._compare(changes, outputs, j, name, i, x, x, label)
                elif isinstance(value, (list, tuple, dict)) and type(value) is not torch.Size and value is not old:
                    raise self._refusal(node, name, label, "a container (it was another or none when the call began)")
                else:
                    self._compare(changes, outputs, j, name, None, old, value, label)
        # a state tensor updated in place and returned (a static layer's `return self.keys`) is the
        # caller's tensor after the write-back, as in eager: a later call's update is seen through it
        copied = {id(outputs[c.value]): k for k, c in enumerate(changes) if c.how == "copy"}
        ids = {id(n): f"argument_state_{j}" for j, n in enumerate(self.nodes)}
        ids.update((i, f"argument_tensor_{k}") for i, k in copied.items())
        slots = enum.Enum("StateObject", list(ids.values()))  # type: ignore[misc]

        def is_placed(v: Any) -> bool:
            return id(v) in ids

        placed = pytree.tree_map(lambda v: slots[ids[id(v)]] if is_placed(v) else v, result, is_leaf=is_placed)
        returned = any(is_placed(v) for v in pytree.tree_leaves(result, is_leaf=is_placed))
        classes = tuple(type(n) for n in self.nodes)
        if self.grown or self.counted:
            _warn_growing(fn, label, self.grown, self.counted, [type(n) for n in self.nodes])
        write_back = WriteBack(classes, tuple(changes), slots if returned else None, _placer(placed, slots))
        return (placed, tuple(outputs)), write_back

    def _compare(
        self,
        changes: list[_Change],
        outputs: list[Any],
        j: int,
        name: str,
        i: int | None,
        old: Any,
        new: Any,
        label: str,
    ) -> None:
        if new is old:
            if isinstance(new, TensorProxy) and new._var is not self._vars.get(id(new), new._var):
                changes.append(_Change("copy", j, name, i, len(outputs)))  # eager updated it in place
                outputs.append(new)
                self.updated.append((self._vars[id(new)], new._var))
            return
        if isinstance(new, (torch.Tensor, TensorProxy)):
            changes.append(_Change("set", j, name, i, len(outputs)))
            outputs.append(new)
            if isinstance(old, TensorProxy) and _key_sees_growth(tuple(old.shape), tuple(new.shape)):
                at = f"{type(self.nodes[j]).__name__}.{name}" + ("" if i is None else f"[{i}]")
                self.grown.append(f"{at} {list(old.shape)} -> {list(new.shape)}")
        elif isinstance(new, _STATIC) and not (type(old) is type(new) and old == new):
            changes.append(_Change("static", j, name, i, new))
            if type(old) is int and type(new) is int:  # a counter: part of the key, so a new program each call
                self.counted.append(f"{type(self.nodes[j]).__name__}.{name} {old} -> {new}")
        elif not isinstance(new, _STATIC):
            raise self._refusal(self.nodes[j], name, label, f"a new {type(new).__name__}")

    def _refusal(self, node: Any, name: str, label: str, what: str) -> UnsupportedOperationError:
        cls = type(node)
        return UnsupportedOperationError(
            f"{label} sets {cls.__name__}.{name} of a {cls.__name__} passed to it to {what}: symscalar.jit replays "
            "the changes a traced function makes to such an argument after every call only for tensors (updated in "
            f"place or assigned) and static attributes. {STATE_CLASSES[cls]}"
        )


def _items_of(container: Any) -> list[Any]:
    if isinstance(container, dict):
        return [(k, id(v)) for k, v in container.items()]
    return [id(v) for v in container]


def _note_containers(value: Any, where: str, out: list[tuple[Any, str, list[Any]]]) -> None:
    """The lists and dicts of a converted argument (the function's copies of the caller's, state
    objects' attributes aside), with their items, to compare once the trace is done."""
    if isinstance(value, (list, dict)):
        out.append((value, where, _items_of(value)))
    if isinstance(value, (list, tuple, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            _note_containers(item, where, out)


def _check_containers(containers: list[tuple[Any, str, list[Any]]], label: str) -> None:
    """Refuse a trace that added, removed or replaced items of a list or dict passed to it: the
    function changed a copy (the traced stand-in), and eager's change of the caller's container
    would be lost on every call."""
    for container, where, items in containers:
        if _items_of(container) != items:
            kind = type(container).__name__
            raise UnsupportedOperationError(
                f"{label} changes the {kind} passed as {where} in place (it added, removed or replaced items): "
                f"symscalar.jit traces the function on a copy of the {kind} and does not replay such a change on the "
                f"caller's {kind}, so it would be lost. Fix: return the new items (or a new {kind}) from the function "
                f"and update the {kind} outside it."
            )


def _key_sees_growth(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    """Whether a state tensor replaced by one of shape ``new`` keys the next call differently: its
    rank or a static dim changed. A dim declared dynamic (a symbol, in no key) may grow freely."""
    if len(old) != len(new):
        return True
    return any(type(a) is int and (type(b) is not int or a != b) for a, b in zip(old, new))


_warned_growing: weakref.WeakSet[Any] = weakref.WeakSet()


def _warn_growing(fn: Any, label: str, grown: list[str], counted: list[str], classes: list[type]) -> None:
    """Warn once per jitted function that its state arguments change on every call in a way
    the key sees (a dynamic KV cache grows; a sliding-window layer counts its tokens in a Python
    int): each call then traces a new program."""
    try:
        if fn in _warned_growing:
            return
        _warned_growing.add(fn)
    except TypeError:  # not weakly referable: warned on every such trace
        pass
    changes = grown or counted
    what = "replaces tensors of" if grown else "changes Python numbers of"
    fix = (
        "Fix: generate with a static cache (model.generate(..., cache_implementation='static'), or "
        "symscalar.integrations.transformers.jit_for_generate(model)): one prefill and one decode program for any "
        "number of new tokens; or declare the cache's length dynamic: jit_for_generate(model, cache='dynamic') "
        "(docs/generation.md)."
        if grown
        else "A number the traced code reads is static (part of the key); symscalar cannot make it dynamic here, "
        "so expect one program per call (a sliding-window cache layer counts tokens in a Python int)."
    )
    warnings.warn(
        f"{label} {what} the {classes[-1].__name__} passed to it ({'; '.join(changes[:2])}"
        f"{'; ...' if len(changes) > 2 else ''}): every call has a new cache key, so every call traces a new "
        f"program. {fix}",
        RetraceWarning,
        stacklevel=_user_stacklevel(),
    )


class WriteBack:
    """After every call: the changes of one trace replayed on the caller's state objects."""

    def __init__(self, classes: tuple[type, ...], changes: tuple[_Change, ...], slots: Any, place: Any = None) -> None:
        self.classes = classes
        self.changes = changes
        self.slots = slots
        self.place = place  # puts the caller's objects into the result without a tree walk (``_placer``)
        self.in_place = False  # every change runs in place in the program (state_updates.py): a raise leaves eager's

    def wrap(self, run: Callable[..., Any], miss: Any) -> Callable[..., Any]:
        n, classes, changes, slots, place = len(self.classes), self.classes, self.changes, self.slots, self.place
        in_place = self.in_place

        def placed(objects: list[Any], slot: Any) -> Any:
            number = int(slot.name.rsplit("_", 1)[1])
            if slot.name.startswith("argument_state_"):
                return objects[number]
            c = changes[number]  # a tensor updated in place ("copy"): the caller's, written back
            target = objects[c.node].__dict__[c.name]
            return target if c.index is None else target[c.index]

        def run_and_write_back(*args: Any) -> Any:
            noted = _noted.objects
            objects = noted[-n:]
            noted.clear()
            if len(objects) != n or any(type(o) is not c for o, c in zip(objects, classes)):
                raise RuntimeError(
                    "symscalar internal error: the state objects of this call were not noted by its key walk "
                    f"(expected {[c.__name__ for c in classes]}, got {[type(o).__name__ for o in objects]})"
                )
            if n > 1 and len({id(o) for o in objects}) != n:
                _refuse_repeated(objects)
            try:
                out = run(*args)
            except SymscalarError:  # a refusal or a failed check: checks run before any change (ops/checks.py)
                raise
            except Exception as e:
                if in_place or not changes:
                    raise
                raise raised_midway(
                    e, "the " + ", ".join(sorted({c.__name__ for c in classes})) + " passed to it"
                ) from e
            if out is miss:  # a guard failed (a parameter's dtype changed): the key's next entry,
                noted.extend(objects)  # or the one the miss path traces, writes back into the same objects
                return out
            # the tensors updated in place ("copy") were checked against each other and every other
            # tensor the program reads before it ran (state_updates.unshared: each is a program input)
            result, states = out
            for c in changes:
                attributes = objects[c.node].__dict__
                if c.how == "del":
                    del attributes[c.name]
                    continue
                value = states[c.value] if c.how in ("copy", "set") else c.value
                if c.how == "copy":
                    target = attributes[c.name] if c.index is None else attributes[c.name][c.index]
                    if value is not target:  # else the program updated it in place (state_updates.py)
                        target.copy_(value)
                else:
                    attributes[c.name] = value
            if slots is None:
                return result
            if place is not None:
                return place(result, objects)
            return pytree.tree_map(lambda v: placed(objects, v) if type(v) is slots else v, result)

        return run_and_write_back


def _placer(placed: Any, slots: Any) -> Callable[[Any, list[Any]], Any] | None:
    """For a result holding the state objects at the top (``model(...)``'s ``ModelOutput`` with
    its ``cache``, a tuple ``(logits, cache)``, the cache itself): a function putting the
    caller's objects where the trace's result holds their placeholders, into the fresh result
    of each call, without walking the whole result as ``tree_map`` does (its ``ModelOutput``
    is flattened and built anew). None for any other place: the tree walk."""
    at = [
        (path, int(v.name.rsplit("_", 1)[1]))
        for path, v in pytree.tree_flatten_with_path(placed)[0]
        if type(v) is slots
    ]
    if any(type(v) is slots and not v.name.startswith("argument_state_") for v in pytree.tree_leaves(placed)):
        return None  # a state tensor returned: ``placed`` finds the caller's tensor
    if len(at) == 1 and at[0][0] == ():
        j = at[0][1]
        return lambda result, objects: objects[j]
    if not at or any(len(path) != 1 for path, _ in at):
        return None
    if isinstance(placed, dict) and all(type(path[0]) is pytree.MappingKey for path, _ in at):
        keys = [(path[0].key, j) for path, j in at]  # type: ignore[attr-defined]

        def set_items(result: Any, objects: list[Any]) -> Any:
            for key, j in keys:
                result[key] = objects[j]
            return result

        return set_items
    if type(placed) is tuple and all(type(path[0]) is pytree.SequenceKey for path, _ in at):
        indices = [(path[0].idx, j) for path, j in at]  # type: ignore[attr-defined]

        def set_positions(result: Any, objects: list[Any]) -> Any:
            items = list(result)
            for i, j in indices:
                items[i] = objects[j]
            return tuple(items)

        return set_positions
    return None


def raised_midway(error: Exception, what: str) -> UnsupportedOperationError:
    """An op of the program raised (an index out of range): eager's failing call has applied the
    changes to ``what`` (the state the call changes) made before the failing op, the program's
    are written back only after it ran. Said loudly: code catching the error would go on with
    state unlike eager's."""
    return UnsupportedOperationError(
        f"the jitted call raised {type(error).__name__}: {error}. It changes {what}, and those changes are written "
        "back after the program ran, so they are left as before the call (but any tensor updated in place), where "
        "eager's failing call would have applied the changes made before the failing op: do not go on with them "
        "(use a fresh cache, or reset() it; reload the module's state), or make the call not fail."
    )


def loud_on_raise(run: Callable[..., Any], what: str) -> Callable[..., Any]:
    """``run``, raising ``raised_midway`` where an op of the program raises (a symscalar error, a
    refusal or a failed check made before any change, passes as it is)."""

    def run_loud_on_raise(*args: Any) -> Any:
        try:
            return run(*args)
        except SymscalarError:
            raise
        except Exception as e:
            raise raised_midway(e, what) from e

    run_loud_on_raise.__source__ = getattr(run, "__source__", None)  # type: ignore[attr-defined]
    return run_loud_on_raise


def _refuse_repeated(objects: list[Any]) -> None:
    """One state object reached twice (a cache and one of its layers, one cache passed twice):
    the trace updates a stand-in for each, and eager's update through one would be seen
    through the other."""
    repeated = next(o for o in objects if sum(x is o for x in objects) > 1)
    raise UnsupportedOperationError(
        f"this call reaches one {type(repeated).__name__} twice among its arguments (one cache passed twice, or a "
        "cache and one of its layers): symscalar.jit traces a separate copy of each, and eager's update through "
        "one would be seen through the other. Pass each state object once."
    )
