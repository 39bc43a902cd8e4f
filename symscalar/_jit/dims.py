"""Declared dynamic dims of a jitted function: the shape contract and its symbols.

``jit(f, dynamic_dims={"x": ("B", "T", None)})`` (a tuple over leading dims, or a
``{dim: name}`` dict) or an annotation ``x: Annotated[torch.Tensor, Dims("B", "T", 64)]``
declares which dims of which tensor parameters are dynamic; every other dim stays static.
This module turns a declaration into a ``ShapeContract``:

- at dispatch, ``ShapeContract.key`` checks the call against the declaration (ranges, equal
  names, static sizes written in ``Dims``) and gives the part of the cache key the declared
  tensors' shapes contribute: rank and static dims only, so every size shares one entry. A
  violation raises ``ShapeContractError`` naming the parameter, the dim and the values;
- at a miss, ``ShapeContract.symbolic`` gives each declared tensor its traced shape, the
  declared dims as ``sizes.Size`` symbols (one per name, so equal names are one symbol).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import inspect
import typing
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from symscalar import sizes
from symscalar._jit import dim_paths, optional_dims
from symscalar.errors import ShapeContractError
from symscalar.sizes import Dim, Dims, Size, Symbol

__all__ = ["ShapeContract", "contract_of", "declared_shape", "tracing_shapes"]


@dataclasses.dataclass(frozen=True)
class _Param:
    name: str  # the parameter
    position: int  # its position among the contract's parameters (the key's arguments)
    rank: int  # the call's tensor must have at least this many dims
    dynamic: tuple[tuple[int, str], ...]  # (dim, declared name)
    fixed: tuple[tuple[int, int], ...]  # (dim, size) written as ints in Dims


class ShapeContract:
    """The declared dynamic dims of one jitted function (see the module docstring)."""

    def __init__(
        self,
        fn_name: str,
        params: list[_Param],
        dims: dict[str, Dim],
        nested: list[dim_paths.NestedParam] | None = None,
    ) -> None:
        self.fn_name = fn_name
        self.params = params
        self.names = [p.name for p in params]  # the key's arguments, in order
        self.dims = dims  # name -> Dim (range)
        self.nested = nested or []  # parameters with declared pytree paths inside them
        self.nested_names = [n.name for n in self.nested]
        self.key = self._generated_key()
        # nested_key for the cache-hit path, generated where the paths are optional tensors only
        self.flat_key = optional_dims.generated_flat_key(self)
        sizes.enable()

    def nested_key(self, tops: tuple[Any, ...], values: tuple[Any, ...]) -> tuple[Any, list[tuple[Any, list[Any]]]]:
        """The key part of the declared parameters (``tops``, as ``key`` takes them) and, for
        each parameter with declared paths (``values``), its key and program inputs; the call
        checked against the whole declaration, equal names across both."""
        top = self.key(*tops)
        entries: list[tuple[str, Any, Any]] = [(f"parameter '{p.name}'", p, t) for p, t in zip(self.params, tops)]
        out = []
        for n, value in zip(self.nested, values):
            key, tensors, found = dim_paths.nested_key(self.fn_name, n, n.name, value)
            entries += found
            out.append((key, tensors))
        dim_paths.check_sizes(self.fn_name, entries, self.dims)
        return top, out

    def _generated_key(self) -> Any:
        """``key`` as straight-line code for this contract (the per-call path): the checks
        inline, ``checked_key`` (which says what is wrong) on any failure."""
        lines: list[str] = []
        parts: list[str] = []
        first: dict[str, str] = {}
        args = ", ".join(f"t{i}" for i in range(len(self.params)))
        for i, p in enumerate(self.params):
            parts.append(optional_dims.tensor_checks(lines, i, f"t{i}", p, self.dims, first, f"checked_key({args})"))
        body = "\n".join(lines)
        source = f"def key({args}):\n{body}\n    return ({''.join(part + ', ' for part in parts)})\n"
        namespace: dict[str, Any] = {"checked_key": self.checked_key}
        exec(compile(source, f"<symscalar dynamic_dims key of {self.fn_name}>", "exec"), namespace)  # noqa: S102
        key: Any = namespace["key"]
        key.__source__ = source
        return key

    def checked_key(self, *tensors: Any) -> tuple[Any, ...]:
        """The declared tensors' shapes with the dynamic dims left out, after checking the
        call against the contract (raises ``ShapeContractError``)."""
        seen: dict[str, tuple[str, int, int]] = {}
        out = []
        for p, t in zip(self.params, tensors):
            shape = t.shape  # AttributeError for a non-tensor: the miss path says what is wrong
            if len(shape) < p.rank:
                raise ShapeContractError(
                    f"{self.fn_name}: parameter '{p.name}' has shape {tuple(shape)} ({len(shape)} dims), but "
                    f"dynamic_dims declares {p.rank} leading dims for it"
                )
            for d, size in p.fixed:
                if shape[d] != size:
                    raise ShapeContractError(
                        f"{self.fn_name}: parameter '{p.name}' dim {d} is {shape[d]}, but its Dims declare {size}"
                    )
            static = list(shape)
            for d, name in p.dynamic:
                size = shape[d]
                dim = self.dims[name]
                if size < dim.min or (dim.max is not None and size > dim.max):
                    bound = f"[{dim.min}, {dim.max}]" if dim.max is not None else f">= {dim.min}"
                    raise ShapeContractError(
                        f"{self.fn_name}: parameter '{p.name}' dim {d} ({name}) is {size}, outside its "
                        f"declared range {bound}"
                    )
                first = seen.get(name)
                if first is None:
                    seen[name] = (p.name, d, size)
                elif first[2] != size:
                    raise ShapeContractError(
                        f"{self.fn_name}: dim {name} must be one size, but parameter '{first[0]}' dim {first[1]} "
                        f"is {first[2]} and parameter '{p.name}' dim {d} is {size}"
                    )
                static[d] = None
            out.append(tuple(static))
        return tuple(out)

    def symbolic(self, tensors: Mapping[str, tuple[str, Any]]) -> dict[Any, tuple[int, tuple[Any, ...]]]:
        """The traced shape of each declared parameter of this call, by its description in
        messages (``tensors``: parameter name -> (description, tensor)), with the id of its
        tensor: one fresh symbol per declared name, its range, and this call's size as its
        hint. By parameter, not by tensor: one tensor passed for two parameters (``f(a, a)``)
        has each parameter's declared shape, and a static shape where it is not declared."""
        symbols: dict[str, Symbol] = {}
        shapes: dict[Any, tuple[int, tuple[Any, ...]]] = {}
        for p in self.params:
            where, t = tensors[p.name]
            shape: list[Any] = list(t.shape)
            for d, name in p.dynamic:
                symbol = symbols.get(name)
                if symbol is None:
                    dim = self.dims[name]
                    symbol = symbols[name] = Symbol(name, dim.min, dim.max, int(t.shape[d]), dim.specialize)
                shape[d] = Size.of(symbol)
            shapes[where] = (id(t), tuple(shape))

        def shape_of(t: torch.Tensor, decl: _Param) -> tuple[Any, ...]:
            shape: list[Any] = list(t.shape)
            for d, name in decl.dynamic:
                symbol = symbols.get(name)
                if symbol is None:
                    dim = self.dims[name]
                    symbol = symbols[name] = Symbol(name, dim.min, dim.max, int(t.shape[d]), dim.specialize)
                shape[d] = Size.of(symbol)
            return tuple(shape)

        for n in self.nested:
            where, value = tensors[n.name]
            shapes.update(dim_paths.nested_shapes(n, where, value, shape_of))  # by (where, leaf index)
        return shapes


def contract_of(fn_name: str, sig: inspect.Signature, target: Any, dynamic_dims: Any) -> ShapeContract | None:
    """The contract of ``dynamic_dims`` and the ``Dims`` annotations of ``target``; None when
    nothing is declared. Raises ``ValueError``/``TypeError`` for a malformed declaration."""
    declared: dict[str, Any] = {}
    for name, extras in _annotated_dims(target).items():
        declared[name] = extras
    if dynamic_dims is not None:
        if not isinstance(dynamic_dims, Mapping):
            raise TypeError(
                f"jit({fn_name}, dynamic_dims=...): expected a dict from parameter name to dims, "
                f"got {type(dynamic_dims).__name__}"
            )
        for name, entries in dynamic_dims.items():
            if name in declared:
                raise ValueError(f"jit({fn_name}): parameter {name!r} has dims both in dynamic_dims and in Dims(...)")
            declared[name] = entries
    if not declared:
        return None
    dims = _ranges(fn_name, declared.values())
    params: list[_Param] = []
    nested: dict[str, list[tuple[dim_paths.Path, _Param]]] = {}
    for name, entries in declared.items():
        path = dim_paths.parse_path(name, fn_name)
        param = path.param if path is not None else name
        p = sig.parameters.get(param)
        if p is None:
            raise ValueError(
                f"jit({fn_name}, dynamic_dims=...): {param!r} is not a parameter; the parameters are "
                f"{list(sig.parameters)} (a nested tensor is addressed by a path from its parameter, "
                "e.g. 'past_key_values.layers.*.keys')"
            )
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"jit({fn_name}, dynamic_dims=...): {param!r} is *args/**kwargs; declare named parameters")
        if path is None and p.default is None:  # optional (None on some calls): keyed as a path to itself
            root = dim_paths.Path(name, name, ())
            nested.setdefault(name, []).append((root, _param(fn_name, name, 0, entries, dims)))
        elif path is None:
            params.append(_param(fn_name, name, len(params), entries, dims))
        else:
            nested.setdefault(param, []).append((path, _param(fn_name, name, 0, entries, dims)))
    both = sorted(set(nested) & {p.name for p in params})
    if both:
        raise ValueError(
            f"jit({fn_name}, dynamic_dims=...): {both[0]!r} is declared both as a tensor and by paths inside it"
        )
    if not any(p.dynamic for p in params) and not any(d.dynamic for decls in nested.values() for _, d in decls):
        raise ValueError(f"jit({fn_name}, dynamic_dims={dynamic_dims!r}): no dim is declared dynamic")
    return ShapeContract(
        fn_name,
        params,
        dims,
        [dim_paths.NestedParam(name, tuple(nested[name])) for name in sig.parameters if name in nested],
    )  # in signature order: the state objects they hold are noted in that order (dim_paths.check_state_order)


def _ranges(fn_name: str, declarations: Any) -> dict[str, Dim]:
    """The ``Dim`` of each name given with a range; one name with two ranges is an error."""
    dims: dict[str, Dim] = {}
    for entries in declarations:
        entries = entries.entries if isinstance(entries, Dims) else entries
        values = (
            entries.values() if isinstance(entries, Mapping) else entries if isinstance(entries, (tuple, list)) else ()
        )
        for entry in values:
            if isinstance(entry, Dim):
                known = dims.setdefault(entry.name, entry)
                if known != entry:
                    raise ValueError(
                        f"jit({fn_name}): dim {entry.name!r} is declared with two ranges: {known} and {entry}"
                    )
    return dims


def _param(fn_name: str, name: str, position: int, entries: Any, dims: dict[str, Dim]) -> _Param:
    where = f"jit({fn_name}, dynamic_dims=...): parameter {name!r}"
    if isinstance(entries, Dims):
        entries = entries.entries
    if isinstance(entries, Mapping):
        items = list(entries.items())
        for d, _ in items:
            if type(d) is not int or d < 0:
                raise ValueError(f"{where}: dim {d!r} must be a non-negative int (dims count from the left)")
        rank = max((d + 1 for d, _ in items), default=0)
    elif isinstance(entries, (tuple, list)):
        items = list(enumerate(entries))
        rank = len(entries)
    else:
        raise TypeError(f"{where}: expected a tuple over the leading dims or a {{dim: name}} dict, got {entries!r}")
    dynamic: list[tuple[int, str]] = []
    fixed: list[tuple[int, int]] = []
    for d, entry in items:
        if entry is None:
            continue
        if type(entry) is int:
            if entry < 0:
                raise ValueError(f"{where}: dim {d} has a negative size {entry}")
            fixed.append((d, entry))
            continue
        dim = dims.get(entry, Dim(entry)) if isinstance(entry, str) else entry
        if not isinstance(dim, Dim):
            raise TypeError(f"{where}: dim {d} must be a name, a symscalar.Dim, an int or None, got {entry!r}")
        dims.setdefault(dim.name, dim)
        if any(n == dim.name for _, n in dynamic):
            raise ValueError(f"{where}: dim name {dim.name!r} appears twice in one tensor; use two names")
        dynamic.append((d, dim.name))
    return _Param(name, position, rank, tuple(dynamic), tuple(fixed))


def _annotated_dims(target: Any) -> dict[str, Dims]:
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable annotations: params.py reports them
        return {}
    found = {}
    for name, hint in hints.items():
        if typing.get_origin(hint) is typing.Annotated:
            extras = [e for e in hint.__metadata__ if isinstance(e, Dims)]
            if extras:
                found[name] = extras[0]
    return found


# The traced shapes of the declared parameters of the call being traced (by description, with
# their tensor's id), set around tracing by the miss path and read where an argument becomes a
# traced input.
_TRACING: contextvars.ContextVar[dict[Any, tuple[int, tuple[Any, ...]]] | None] = contextvars.ContextVar(
    "symscalar_declared_shapes", default=None
)


@contextlib.contextmanager
def tracing_shapes(shapes: dict[Any, tuple[int, tuple[Any, ...]]] | None) -> Iterator[None]:
    token = _TRACING.set(shapes)
    try:
        yield
    finally:
        _TRACING.reset(token)


def declared_shape(t: torch.Tensor, where: str, leaf: int | None = None) -> tuple[Any, ...]:
    """The traced shape of argument tensor ``t`` passed as ``where`` (as its leaf number
    ``leaf`` where the argument is a container): symbolic where its dims are declared dynamic."""
    shapes = _TRACING.get()
    if shapes is not None:
        declared = shapes.get(where if leaf is None else (where, leaf))
        if declared is not None and declared[0] == id(t):
            return declared[1]
    return tuple(t.shape)
