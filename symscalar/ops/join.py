"""Joining and splitting tensors: ``cat`` (and ``stack``), ``split`` (``chunk``, ``unbind``)
and ``roll`` (two slices concatenated per rolled dim). Dims, split sizes, chunk counts and
shifts are static: the number and layout of the outputs depend on them. ``cat`` and ``split``
are each other's vjp; both are primitives of the shape family (see ``ops/shape.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch

from symscalar import size_guards, sizes
from symscalar.ops.define import (
    NumberProxy,
    Primitive,
    StaticDims,
    StaticInt,
    StaticShape,
    StaticValueRequiredError,
    Tensor,
    canonical_dim,
    defop,
    implements,
    register_nvfuser,
    register_vjp,
    small_meta,
    static_message,
    torch_meta,
)
from symscalar.ops.shape import clone, flatten, narrow, pinned, reshape, squeeze, unsqueeze
from symscalar.sizes import Size

__all__ = ["cat", "stack", "split", "chunk", "unbind", "roll"]


# ---- cat, stack
def _cat_impl(*xs: Any, dim: int) -> Any:
    return torch.cat(xs, dim)


def _cat_shape(*xs: Any, dim: int) -> tuple[int, ...]:
    first: tuple[int, ...] = xs[0].shape
    for x in xs:
        # torch's meta path says what is wrong (and allows empty 1-D inputs)
        if not 0 <= dim < len(first) or len(x.shape) != len(first):
            raise ValueError("ranks differ")
        others, first_others = x.shape[:dim] + x.shape[dim + 1 :], first[:dim] + first[dim + 1 :]
        if others != first_others and not size_guards.equal_shapes(others, first_others, "cat's other dims"):
            raise ValueError("sizes differ")
    return first[:dim] + (sum(x.shape[dim] for x in xs),) + first[dim + 1 :]


cat_p = Primitive("cat", _cat_impl, small_meta(_cat_impl, _cat_shape))


def _cat_vjp(ct: Any, out: Any, *xs: Any, dim: int) -> Any:
    grads, offset = [], 0
    for x in xs:
        grads.append(ct.narrow(dim, offset, x.shape[dim]))
        offset += x.shape[dim]
    return tuple(grads)


register_vjp(cat_p, _cat_vjp)
# torch promotes mixed dtypes and skips legacy 1-D empty tensors; those cases run in torch.
register_nvfuser(
    cat_p,
    lambda fd, *xs, dim: fd.ops.cat(list(xs), dim),
    supports=lambda *xs, dim: len({(x.dtype, x.ndim) for x in xs}) == 1,
)


@defop(torch=(torch.cat, torch.concat, torch.concatenate))
def cat(tensors: Sequence[Tensor], dim: StaticInt = 0) -> Tensor:
    """Concatenate ``tensors`` along ``dim`` (with torch's type promotion)."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    # torch's legacy rule: 1-D empty tensors (shape (0,)) are skipped, whatever the dim and
    # the other shapes (a KV cache starts as torch.tensor([])); they still promote the dtype
    kept = [t for t in tensors if tuple(t.shape) != (0,)]
    if kept and len(kept) < len(tensors) and any(t.ndim != 1 for t in kept):
        dtype = functools.reduce(torch.promote_types, (t.dtype for t in tensors))
        out = cat(kept, dim)
        return out if out.dtype == dtype else out.to(dtype)
    d = canonical_dim(dim, tensors[0].ndim)
    return cat_p.bind(*tensors, dim=d)


@defop(torch=(torch.stack,))
def stack(tensors: Sequence[Tensor], dim: StaticInt = 0) -> Tensor:
    """Stack equally shaped ``tensors`` along a new dim ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack(): expected a non-empty list of Tensors")
    first = tuple(tensors[0].shape)
    if any(
        tuple(t.shape) != first and not size_guards.equal_shapes(tuple(t.shape), first, "stack") for t in tensors[1:]
    ):
        raise RuntimeError(f"stack expects each tensor to be equal size, got shapes {[list(t.shape) for t in tensors]}")
    d = canonical_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


# ---- split, chunk, unbind
def _split_impl(x: Any, *, sizes: tuple[int, ...], dim: int) -> Any:
    return tuple(torch.split(x, list(sizes), dim))


split_p: Primitive[tuple[Tensor, ...]] = Primitive(
    "split", _split_impl, torch_meta(_split_impl), multiple_results=True, may_alias=True
)


def _split_vjp(cts: Any, outs: Any, x: Any, *, sizes: Any, dim: int) -> Any:
    pieces = [ct if ct is not None else torch.zeros_like(o) for ct, o in zip(cts, outs)]
    return (torch.cat(pieces, dim),)


register_vjp(split_p, _split_vjp)


def _split_nvfuser(fd: Any, x: Any, *, sizes: tuple[int, ...], dim: int) -> tuple[Any, ...]:
    # One slice per piece; the other dims end at their symbolic size, so the fusion fits any
    # size of them (the cache key holds only ``sizes`` and ``dim``).
    ends = [fd.ops.size(x, d) for d in range(x.ndim)]
    pieces, offset = [], 0
    for size in sizes:
        starts = [offset if d == dim else 0 for d in range(x.ndim)]
        stops = [offset + size if d == dim else ends[d] for d in range(x.ndim)]
        pieces.append(fd.ops.slice(x, starts, stops))
        offset += size
    return tuple(pieces)


register_nvfuser(split_p, _split_nvfuser)


def _static_size(x: Tensor, dim: int, op: str) -> tuple[Tensor, int]:
    """``x`` and ``x.shape[dim]``, which must be static: how many pieces ``op`` cuts depends on
    it. A dynamic dim is pinned by a size guard (refused unless the dim opts in)."""
    size = x.shape[dim]
    if isinstance(size, Size):
        at = int(sizes.hint(size))
        size_guards.guarded(
            "eq", size, at, f"{op} along dim {dim} ({size!r}; the number of pieces depends on its size)"
        )
        return pinned(x, dim, at), at
    return x, size


@defop(torch=(torch.split, torch.Tensor.split))
def split(tensor: Tensor, split_size_or_sections: StaticInt | StaticShape, dim: StaticInt = 0) -> tuple[Tensor, ...]:
    """Pieces of ``tensor`` along ``dim``: of size ``split_size_or_sections`` (the last may be
    smaller) or of the listed sizes."""
    d = canonical_dim(dim, tensor.ndim)
    sections = split_size_or_sections
    if not isinstance(sections, int):
        sections = list(sections)
    tensor, n = _static_size(tensor, d, "split")
    meta = torch.empty((n,), device="meta")
    pieces = [p.shape[0] for p in torch.split(meta, sections, 0)]
    return split_p.bind(tensor, sizes=tuple(pieces), dim=d)


@implements(torch.Tensor.split_with_sizes)
def _tensor_split_with_sizes(input: Tensor, split_sizes: StaticShape, dim: StaticInt = 0) -> tuple[Tensor, ...]:
    return split(input, list(split_sizes), dim)


@defop(torch=(torch.chunk, torch.Tensor.chunk))
def chunk(input: Tensor, chunks: StaticInt, dim: StaticInt = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` pieces along ``dim``, as ``torch.chunk`` cuts them."""
    d = canonical_dim(dim, input.ndim)
    input, n = _static_size(input, d, "chunk")
    meta = torch.empty((n,), device="meta")
    pieces = [p.shape[0] for p in torch.chunk(meta, chunks, 0)]
    return split_p.bind(input, sizes=tuple(pieces), dim=d)


@defop(torch=(torch.unbind, torch.Tensor.unbind))
def unbind(input: Tensor, dim: StaticInt = 0) -> tuple[Tensor, ...]:
    """The slices of ``input`` along ``dim``, with that dim removed."""
    d = canonical_dim(dim, input.ndim)
    input, n = _static_size(input, d, "unbind")
    pieces = split_p.bind(input, sizes=(1,) * n, dim=d)
    return tuple(squeeze(p, d) for p in pieces)


# ---- roll (Swin Transformer's shifted windows): two slices concatenated per rolled dim
@defop(torch=(torch.roll, torch.Tensor.roll))
def roll(input: Tensor, shifts: StaticDims, dims: StaticDims = ()) -> Tensor:
    """``input`` shifted cyclically by ``shifts`` (static) along ``dims``; without dims, the
    flattened tensor is rolled and the shape restored, as torch's."""
    shift_list = [shifts] if isinstance(shifts, (int, NumberProxy)) else list(shifts or ())
    dim_list = [] if dims is None else [dims] if isinstance(dims, (int, NumberProxy)) else list(dims)
    for name, values in (("shifts", shift_list), ("dims", dim_list)):
        for value in values:
            if isinstance(value, NumberProxy):
                raise StaticValueRequiredError(static_message("torch.roll", name, value))
    if not dim_list:
        if len(shift_list) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:0")
        return reshape(roll(flatten(input), shift_list, (0,)), tuple(input.shape))
    if len(shift_list) != len(dim_list):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:{len(dim_list)}")
    out = input
    for shift, dim in zip(shift_list, dim_list):
        d = canonical_dim(dim, input.ndim)
        size = input.shape[d]
        k = shift % size if size else 0
        if k:
            out = cat([narrow(out, d, size - k, k), narrow(out, d, 0, size - k)], d)
    return out if out is not input else clone(input)
