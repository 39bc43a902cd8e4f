"""Dynamic dims of tensors nested in an argument, addressed by pytree path.

``jit(model, dynamic_dims={"past_key_values.layers.*.keys": (None, None, "S", None)})``: a
declared name that is not a plain parameter name is a **path**: the parameter, then one
segment per level of the argument's pytree (``torch.utils._pytree``'s key paths, so lists,
tuples, dicts, namedtuples, registered dataclasses and any node registered with
``flatten_with_keys_fn``, such as a KV cache, can be addressed):

- ``.name``: an attribute (``GetAttrKey``) or a string dict key (``MappingKey``);
- ``.0`` or ``[0]``: a sequence index (or an int dict key);
- ``['pixel_values']``: a dict key, written as ``torch.utils._pytree.keystr`` prints it;
- ``*`` (``.*`` or ``[*]``): every child at that level.

A path must end at tensors. On every call the argument is walked along the declared paths
only (the rest of it keys as any unannotated argument does): each tensor a path reaches keys
by its rank and static dims, and is checked like a declared parameter. A path that reaches
nothing raises ``ShapeContractError`` listing the argument's paths, unless it stopped at an
empty container under a ``*`` (an empty KV cache before the first step); two paths that reach
one tensor raise too (an ambiguity, never a silent choice).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import torch
import torch.utils._pytree as pytree

from symscalar._jit import tree
from symscalar._jit.mutable import is_state_class, note
from symscalar.errors import ShapeContractError, UnsupportedOperationError

__all__ = ["Path", "parse_path", "NestedParam", "nested_key", "nested_shapes", "check_sizes", "check_state_order"]

_HEAD = re.compile(r"[A-Za-z_]\w*")
_SEGMENT = re.compile(r"\.(\*|\d+|[A-Za-z_]\w*)|\[(\*|-?\d+|'[^']*'|\"[^\"]*\")\]")


@dataclasses.dataclass(frozen=True)
class Path:
    """One declared path: its text, its parameter, and per level the ``str()`` forms of the
    pytree keys it matches (None: ``*``, any key)."""

    text: str
    param: str
    segments: tuple[frozenset[str] | None, ...]

    def matches(self, keys: tuple[Any, ...]) -> bool:
        return len(keys) == len(self.segments) and all(
            s is None or str(k) in s for s, k in zip(self.segments, keys, strict=True)
        )


def parse_path(text: str, fn_name: str) -> Path | None:
    """The ``Path`` of a declared name, or None for a plain parameter name. Raises
    ``ValueError`` for a malformed path."""
    head = _HEAD.match(text)
    if head is not None and head.end() == len(text):
        return None
    if head is None:
        raise ValueError(_bad(text, fn_name, "it must start with a parameter name"))
    segments: list[frozenset[str] | None] = []
    at = head.end()
    while at < len(text):
        m = _SEGMENT.match(text, at)
        if m is None:
            raise ValueError(_bad(text, fn_name, f"cannot read {text[at:]!r}"))
        segments.append(_segment(m.group(1) if m.group(1) is not None else m.group(2)))
        at = m.end()
    return Path(text, head.group(), tuple(segments))


def _segment(token: str) -> frozenset[str] | None:
    if token == "*":
        return None
    if token[0] in "'\"":
        key = token[1:-1]
        return frozenset({f"[{key!r}]", f".{key}"})
    if token.lstrip("-").isdigit():
        return frozenset({f"[{int(token)}]"})
    return frozenset({f".{token}", f"[{token!r}]"})


def _bad(text: str, fn_name: str, why: str) -> str:
    return (
        f"jit({fn_name}, dynamic_dims=...): {text!r} is neither a parameter name nor a path ({why}). "
        "A path is the parameter followed by .attr, .key, .0, [0], ['key'] or * per level, e.g. "
        "'past_key_values.layers.*.keys' or \"batch['pixel_values']\""
    )


@dataclasses.dataclass(frozen=True)
class NestedParam:
    """A parameter with declared paths inside it: ``decls`` pairs each ``Path`` with its
    ``dims._Param`` (the path's text is that ``_Param``'s name)."""

    name: str
    decls: tuple[tuple[Path, Any], ...]


def _tensor_key(t: torch.Tensor, decl: Any) -> tuple[Any, ...]:
    shape: list[int | None] = list(t.shape)
    for d, _ in decl.dynamic:
        shape[d] = None
    key = (tuple(shape), t.dtype, t.device, t.requires_grad)
    return key if type(t) is torch.Tensor else (*key, type(t))


class _Walk:
    """One walk of an argument along its declared paths (``nested_key``)."""

    def __init__(self, fn_name: str, where: str) -> None:
        self.fn_name = fn_name
        self.where = where
        self.tensors: list[Any] = []  # the program inputs, in tree_key's order
        self.found: list[tuple[str, Any, torch.Tensor]] = []  # (path, _Param, tensor)
        self.reached: set[str] = set()  # the paths that reached a tensor or an empty `*`

    def key(self, v: Any, live: list[tuple[Path, Any, int]], at: str) -> Any:
        if not live:
            return tree.tree_key(v, self.tensors)
        complete = [(p, decl) for p, decl, depth in live if depth == len(p.segments)]
        if len(complete) > 1:
            raise ShapeContractError(
                f"{self.fn_name}: {self.where}{at} is matched by several dynamic_dims paths "
                f"({', '.join(repr(p.text) for p, _ in complete)}); declare each tensor once"
            )
        node = pytree.SUPPORTED_NODES.get(pytree._get_node_type(v)) if type(v) is not torch.Size else None
        if complete:
            path, decl = complete[0]
            if v is None:  # an optional tensor left out (a cache layer before its first update)
                self.reached.add(path.text)
                return tree.tree_key(v, self.tensors)
            if not isinstance(v, torch.Tensor):
                what = "a container" if node is not None else f"a {type(v).__name__}"
                raise ShapeContractError(
                    f"{self.fn_name}: dynamic_dims path {path.text!r} reaches {self.where}{at}, which is {what}, "
                    "not a tensor; a path must end at tensors (add levels, or * for every child)"
                )
            if v.ndim < decl.rank:
                check_sizes(self.fn_name, [(f"{self.where}{at}", decl, v)], {})  # raises: too few dims
            self.reached.add(path.text)
            self.found.append((f"{self.where}{at}", decl, v))
            self.tensors.append(v)
            return _tensor_key(v, decl)
        if node is None:
            return tree.tree_key(v, self.tensors)
        if node.flatten_with_keys_fn is None:
            raise ShapeContractError(
                f"{self.fn_name}: dynamic_dims path {live[0][0].text!r} goes through {self.where}{at}, a "
                f"{type(v).__name__}, whose pytree registration has no key paths; register it with "
                "flatten_with_keys_fn (torch.utils._pytree.register_pytree_node) to address its tensors"
            )
        children, context = node.flatten_with_keys_fn(v)
        if not children:
            self.reached.update(p.text for p, _, depth in live if p.segments[depth] is None)
        if is_state_class(type(v)):  # a None attribute is static (no child): a path may end at it
            absent = {f".{name}" for name, is_child, value in context if not is_child and value is None}
            self.reached.update(
                p.text
                for p, _, depth in live
                if depth + 1 == len(p.segments) and p.segments[depth] is not None and p.segments[depth] & absent  # type: ignore[operator]
            )
        keys = []
        for k, child in children:
            s = str(k)
            sub = [
                (p, decl, depth + 1)
                for p, decl, depth in live
                if depth < len(p.segments) and (p.segments[depth] is None or s in p.segments[depth])  # type: ignore[operator]
            ]
            keys.append(self.key(child, sub, at + s))
        if is_state_class(type(v)):
            note(v)  # as tree.tree_key notes it: its entry writes the call's changes back into it
        return (type(v), tree.tree_key(context, None), tuple(keys))


def nested_key(fn_name: str, param: NestedParam, where: str, value: Any) -> tuple[Any, list[Any], list[Any]]:
    """The key of ``value`` (an argument with declared paths) with the declared dims left
    out, its program inputs (``tree.auto_key``'s order), and ``(description, _Param, tensor)``
    for each tensor a path reached, for ``check_sizes``. A path that reaches nothing raises."""
    walk = _Walk(fn_name, where)
    if value is None:  # an optional argument left out: nothing to address
        return tree.tree_key(value, walk.tensors), walk.tensors, walk.found
    key = walk.key(value, [(p, decl, 0) for p, decl in param.decls], "")
    missing = [p.text for p, _ in param.decls if p.text not in walk.reached]
    if missing:
        leaves = pytree.tree_flatten_with_path(value, is_leaf=tree.is_leaf)[0]
        paths = [param.name + pytree.keystr(kp) for kp, _ in leaves]
        shown = ", ".join(paths[:20]) + (f", ... ({len(paths)} in all)" if len(paths) > 20 else "")
        raise ShapeContractError(
            f"{fn_name}: dynamic_dims path {missing[0]!r} matches no tensor of {where}; its paths are: "
            f"{shown or '(none: it holds no leaves)'}"
        )
    return key, walk.tensors, walk.found


def nested_shapes(param: NestedParam, where: str, value: Any, shape_of: Any) -> dict[Any, tuple[int, tuple[Any, ...]]]:
    """The traced shapes of the tensors the paths reach in ``value``, by ``(where, leaf
    index)`` (``tree.flatten``'s leaf order), with their tensor's id; ``shape_of(t, decl)``
    gives a tensor's symbolic shape."""
    shapes: dict[Any, tuple[int, tuple[Any, ...]]] = {}
    if value is None:
        return shapes
    for i, (kp, leaf) in enumerate(pytree.tree_flatten_with_path(value, is_leaf=tree.is_leaf)[0]):
        for path, decl in param.decls:
            if isinstance(leaf, torch.Tensor) and path.matches(tuple(kp)):
                shapes[(where, i)] = (id(leaf), shape_of(leaf, decl))
    return shapes


def check_sizes(fn_name: str, entries: list[tuple[str, Any, Any]], dims: dict[str, Any]) -> None:
    """Check declared tensors (``(description, _Param, tensor)``) against their declaration:
    rank, the ints of ``Dims``, ranges, and equal names one size (raises ``ShapeContractError``)."""
    seen: dict[str, tuple[str, int, int]] = {}
    for where, p, t in entries:
        shape = t.shape
        if len(shape) < p.rank:
            raise ShapeContractError(
                f"{fn_name}: {where} has shape {tuple(shape)} ({len(shape)} dims), but dynamic_dims "
                f"({p.name!r}) declares {p.rank} leading dims for it"
            )
        for d, size in p.fixed:
            if shape[d] != size:
                raise ShapeContractError(f"{fn_name}: {where} dim {d} is {shape[d]}, but its Dims declare {size}")
        for d, name in p.dynamic:
            size, dim = shape[d], dims[name]
            if size < dim.min or (dim.max is not None and size > dim.max):
                bound = f"[{dim.min}, {dim.max}]" if dim.max is not None else f">= {dim.min}"
                raise ShapeContractError(
                    f"{fn_name}: {where} dim {d} ({name}) is {size}, outside its declared range {bound}"
                )
            first = seen.setdefault(name, (where, d, size))
            if first[2] != size:
                raise ShapeContractError(
                    f"{fn_name}: dim {name} must be one size, but {first[0]} dim {first[1]} is {first[2]} and "
                    f"{where} dim {d} is {size}"
                )


def check_state_order(fn_name: str, nested_names: list[str], items: list[tuple[str, str, Any]]) -> None:
    """Refuse a call whose state objects (KV caches, ``mutable.py``) the key walk would note in
    another order than the trace converts them: the walk keys the parameters with paths first
    (``dispatch.py``), the trace converts in signature order, and a cache's changes would be
    written back into another. ``items``: ``(parameter, description, value)`` in signature order."""
    holders = [(name, where) for name, where, value in items if _holds_state(value)]
    keyed = [h for h in holders if h[0] in nested_names] + [h for h in holders if h[0] not in nested_names]
    if keyed != holders:
        first = next(h for h, k in zip(holders, keyed, strict=True) if h != k)
        raise UnsupportedOperationError(
            f"{fn_name}: {first[1]} holds a state object (a KV cache) and comes before a parameter with "
            "dynamic_dims paths that holds one too; symscalar.jit cannot key them in order. Declare paths into "
            f"{first[1]} as well, or pass the cache with paths first"
        )


def _holds_state(value: Any) -> bool:
    leaves = pytree.tree_leaves(value, is_leaf=lambda v: is_state_class(type(v)))
    return any(is_state_class(type(v)) for v in leaves)
