"""The one pytree of ``symscalar.jit``: inputs, outputs and keys all walk the same structure.

Torch's pytree (``torch.utils._pytree``: its registry, so NamedTuples, torch's structseqs,
OrderedDicts, ``transformers``' ModelOutput and registered dataclasses are containers) with one
rule added: a ``torch.Size`` is a leaf (rebuilt as a plain tuple it would stop being a Size).
``flatten``/``unflatten``/``leaves`` and ``tree_key`` use that registry and that rule, so the
tensors a key collects are, in order, the tensor leaves ``flatten`` finds.

A key compares type and value all the way down: 200 is not 200.0, True is not 1, (-0.0,) is
not (0.0,), {1: x} is not {1.0: x}, and a NaN equals itself, so that a call with it finds its
entry. Tensors count by metadata (shape, dtype, device, requires_grad) and become program
inputs; in a static value a tensor is refused (it would be baked into the program).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree

from symscalar._jit.mutable import STATE_CLASSES, note
from symscalar._jit.params import NUMPY_SCALARS, Kind

__all__ = [
    "is_leaf",
    "flatten",
    "unflatten",
    "leaves",
    "map_leaves",
    "leaf_path",
    "tree_key",
    "static_key",
    "auto_key",
    "tensor_key",
    "var_positional_key",
    "var_keyword_key",
    "StaticTensorError",
    "is_torch_dynamic_int",
    "holds_state",
    "state_objects",
    "Walked",
    "TensorMeta",
    "walk",
    "TreeSpec",
]

TreeSpec = pytree.TreeSpec
_NODES = pytree.SUPPORTED_NODES
_node_type = pytree._get_node_type  # what tree_flatten dispatches on (namedtuple for all)
_ATOMS = frozenset({int, bool, str, bytes, type(None), type(Ellipsis)})


def is_leaf(v: Any) -> bool:
    """The leaves the registry would take apart: a ``torch.Size`` stays a Size."""
    return type(v) is torch.Size


def flatten(value: Any) -> tuple[list[Any], TreeSpec]:
    return pytree.tree_flatten(value, is_leaf=is_leaf)


def unflatten(values: list[Any], spec: TreeSpec) -> Any:
    return pytree.tree_unflatten(values, spec)


def leaves(value: Any) -> list[Any]:
    return flatten(value)[0]


def map_leaves(fn: Callable[[Any], Any], value: Any) -> Any:
    values, spec = flatten(value)
    return unflatten([fn(v) for v in values], spec)


def leaf_path(value: Any, index: int) -> str:
    """Where leaf number ``index`` of ``value`` sits, as ``[0]['logits']`` ('' for the root)."""
    return pytree.keystr(pytree.tree_flatten_with_path(value, is_leaf=is_leaf)[0][index][0])


# -- keys -----------------------------------------------------------------------------------


class StaticTensorError(TypeError):
    """A tensor where a static value is needed (raised on the per-call path; the miss path
    turns it into a message naming the parameter)."""

    def __init__(self, tensor: torch.Tensor, container: Any = None) -> None:
        super().__init__(tensor, container)
        self.tensor = tensor
        self.container = container


def tensor_key(t: torch.Tensor) -> tuple[Any, ...]:
    """A tensor's part of the cache key: its metadata, and its class unless it is exactly
    ``torch.Tensor`` (a ``Parameter`` answers ``isinstance`` otherwise: its own entry)."""
    if type(t) is torch.Tensor:
        return (t.shape, t.dtype, t.device, t.requires_grad)
    return (t.shape, t.dtype, t.device, t.requires_grad, type(t))


def tree_key(v: Any, tensors: list[Any] | None) -> Any:
    """The cache key of ``v``, walked in ``flatten``'s order. Tensor leaves count by
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
            raise StaticTensorError(v)
        tensors.append(v)
        return tensor_key(v)
    if tensors is not None and isinstance(v, int) and is_torch_dynamic_int(v):
        tensors.append(int(v))  # unannotated, marked dynamic the torch way: a program input
        return (int, "dynamic")
    node = _NODES.get(_node_type(v)) if t is not torch.Size else None
    if node is not None:
        children, context = node.flatten_fn(v)
        key = (t, tree_key(context, None), tuple(tree_key(c, tensors) for c in children))
        if t in STATE_CLASSES and tensors is not None:
            note(v)  # a state object: its entry writes the call's changes back into it
        return key
    return _leaf_key(v)


def is_torch_dynamic_int(v: Any) -> bool:
    """torch's own marker of a dynamic int (``torch.fx.experimental.sym_node.DynamicInt``, an
    ``int`` subclass for torch.compile), recognised without importing that module (it imports
    sympy)."""
    t = type(v)
    return t.__name__ == "DynamicInt" and t.__module__ == "torch.fx.experimental.sym_node"


def _leaf_key(v: Any) -> Any:
    """A leaf: numbers by exact value, a Size, immutable containers and frozen dataclasses
    item by item, anything else by its own ``==``/``hash``."""
    t = type(v)
    if isinstance(v, float):  # float subclasses, numpy.float64 among them
        return (t, float.__repr__(v))
    if isinstance(v, complex):
        return (t, complex.__repr__(v))
    if isinstance(v, NUMPY_SCALARS):
        return (t, typing.cast(Any, v).tobytes())  # the exact bits: signed zeros differ, a NaN equals itself
    if isinstance(v, (tuple, list)):  # a Size, subclasses the pytree does not know
        return (t, tuple(_contained_key(x, v) for x in v))
    if isinstance(v, frozenset):
        return (t, frozenset(_contained_key(x, v) for x in v))
    if dataclasses.is_dataclass(v) and not isinstance(v, type) and v.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return (t, tuple(_contained_key(getattr(v, f.name), v) for f in dataclasses.fields(v)))
    if holds_state(v):  # by identity: its entry reads this object's attributes (see compile.py)
        return (t, id(v))
    return (t, v)


def holds_state(v: Any) -> bool:
    """An object whose attributes a traced function may read or write (a module, a plain
    instance), as opposed to a value (numbers, enums, frozen dataclasses, functions, classes).
    Passed as an argument it is keyed by identity and becomes a root of its entries' state
    guard, so its tensors are read by path on every call, as eager reads them."""
    if isinstance(v, torch.nn.Module):
        return True
    return (
        hasattr(v, "__dict__")
        and not isinstance(v, _VALUE_OBJECTS)
        and not (dataclasses.is_dataclass(v) and getattr(v, "__dataclass_params__").frozen)  # noqa: B009 - typeshed lacks it
    )


def state_objects(value: Any) -> list[Any]:
    """The objects ``holds_state`` keys by identity inside ``value``, in the places the key
    walk looks: pytree leaves and, within them, the items of containers keyed item by item."""
    found: list[Any] = []
    for leaf in leaves(value):
        _leaf_objects(leaf, found)
    return found


def _leaf_objects(leaf: Any, found: list[Any]) -> None:
    """``state_objects`` of one pytree leaf, appended to ``found``."""
    if holds_state(leaf):
        found.append(leaf)
    elif isinstance(leaf, (tuple, list, frozenset)) and type(leaf) is not torch.Size:
        found += [obj for item in leaf for obj in state_objects(item)]
    elif dataclasses.is_dataclass(leaf) and not isinstance(leaf, type):
        found += [obj for f in dataclasses.fields(leaf) for obj in state_objects(getattr(leaf, f.name))]


# -- the miss path's one walk ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Walked:
    """One static or unannotated argument, walked once on a cache miss (``walk``).

    Attributes:
        key: its key as ``tree_key(value, [])`` computes it (explain compares calls by it; a
            static value has no tensors, so it is its key but for torch's ``DynamicInt``,
            shown as ``(int, "dynamic")`` here as before).
        shown: the value with each tensor leaf shown by its metadata (``TensorMeta``; the
            value itself when it holds no tensor).
        objects: ``state_objects(value)``, in the same order.
    """

    key: Any
    shown: Any
    objects: tuple[Any, ...]


class TensorMeta:
    """A tensor inside a static or unannotated value, shown by its metadata."""

    def __init__(self, t: torch.Tensor) -> None:
        self.text = f"tensor{list(t.shape)} {t.dtype}"

    def __repr__(self) -> str:
        return self.text


def walk(value: Any, static: bool) -> Walked:
    """Walk ``value`` once (``tree_key``'s order, which is ``flatten``'s) for the miss path:
    its key, its display and its state-holding objects. A tensor in a ``static`` value (or
    inside a container the pytree does not know) raises ``StaticTensorError``, as
    ``tree_key(value, None)`` does."""
    objects: list[Any] = []
    key, shown = _walk(value, static, objects)
    return Walked(key, shown, tuple(objects))


def _walk(v: Any, static: bool, objects: list[Any]) -> tuple[Any, Any]:
    """``tree_key``'s recursion, which also rebuilds ``v`` for display and collects the state
    objects of its leaves (``_leaf_objects``)."""
    t = type(v)
    if t in _ATOMS:
        return (t, v), v
    if t is float:
        return (t, float.__repr__(v)), v
    if isinstance(v, torch.Tensor):
        if static:
            raise StaticTensorError(v)
        _leaf_objects(v, objects)
        return tensor_key(v), TensorMeta(v)
    if isinstance(v, int) and is_torch_dynamic_int(v):
        _leaf_objects(v, objects)
        return (int, "dynamic"), v
    node = _NODES.get(_node_type(v)) if t is not torch.Size else None
    if node is None:
        key = _leaf_key(v)
        _leaf_objects(v, objects)
        return key, v
    children, context = node.flatten_fn(v)
    walked = [_walk(c, static, objects) for c in children]
    shown = [s for _, s in walked]
    changed = any(s is not c for s, c in zip(shown, children))
    return (
        (t, tree_key(context, None), tuple(k for k, _ in walked)),
        node.unflatten_fn(shown, context) if changed else v,
    )


_VALUE_OBJECTS = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    functools.partial,
    enum.Enum,
    torch.dtype,
    torch.device,
)


def _contained_key(x: Any, container: Any) -> Any:
    try:
        return tree_key(x, None)
    except StaticTensorError as e:
        raise StaticTensorError(e.tensor, e.container if e.container is not None else container) from None


def static_key(v: Any) -> Any:
    return tree_key(v, None)


def auto_key(v: Any) -> tuple[Any, list[torch.Tensor]]:
    """Key and tensors of an unannotated argument: tensors are traced, the rest is static."""
    tensors: list[torch.Tensor] = []
    return tree_key(v, tensors), tensors


def _element_key(kind: Kind) -> Callable[[Any, list[Any]], Any]:
    """Key of one element of ``*args``/``**kwargs`` of ``kind``; appends its program inputs."""
    if kind is Kind.AUTO:
        return tree_key
    if kind is Kind.STATIC:
        return lambda v, inputs: tree_key(v, None)

    def tensor_or_dynamic(v: Any, inputs: list[Any]) -> Any:
        inputs.append(v)
        return tensor_key(v) if kind is Kind.TENSOR else type(v)

    return tensor_or_dynamic


def var_positional_key(kind: Kind) -> Callable[[tuple[Any, ...]], tuple[Any, list[Any]]]:
    element = _element_key(kind)

    def key(values: tuple[Any, ...]) -> tuple[Any, list[Any]]:
        inputs: list[Any] = []
        return tuple(element(v, inputs) for v in values), inputs

    return key


def var_keyword_key(kind: Kind) -> Callable[[dict[str, Any]], tuple[Any, list[Any]]]:
    element = _element_key(kind)

    def key(values: dict[str, Any]) -> tuple[Any, list[Any]]:
        inputs: list[Any] = []
        return tuple((name, element(v, inputs)) for name, v in values.items()), inputs

    return key
