"""Indexing ops: reading (index_select, gather, take_along_dim, embedding, advanced indexing)
and their transposes, writing out of place (index_add, scatter_add, scatter, index_put),
plus the ops that produce or follow indices (sort, argsort, topk, cumsum, one_hot).

The index *tensors* are data: they are program inputs and may change between calls. Every
dim, ``k``, ``padding_idx`` and class count is static: the output shape depends on them. The
read ops' vjps are the write ops (``index_select`` -> ``index_add``, ``gather`` ->
``scatter_add``) with shapes taken from static shapes, so backward traces stay checkable.

The write primitives are out of place: ``index_add(x, dim, index, src)`` returns a new tensor.
They are what a functionalized in-place op (``x.index_add_(...)``, ``x[idx] += v``) lowers to.

None of these has an nvFuser lowering except ``cumsum``: torch raises on an out-of-range index,
nvFuser's gather/scatter do not check, so a fusion could silently read or write garbage where
eager raises. They run in torch (see ``UNLOWERED`` in the nvFuser tests).
"""

from __future__ import annotations

import builtins
import typing
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from symscalar import size_guards
from symscalar.ops import common
from symscalar.ops.define import (
    NumberLike,
    NumberProxy,
    Primitive,
    StaticBool,
    StaticFloat,
    StaticInt,
    StaticValueRequiredError,
    Tensor,
    TensorProxy,
    TensorVar,
    UnsupportedOperationError,
    canonical_dim,
    canonical_dims,
    defop,
    floating,
    implements,
    is_static,
    maybe_in_place,
    register_nvfuser,
    register_vjp,
    static_message,
    torch_meta,
    unbroadcast,
)
from symscalar.ops.elementwise import maximum, minimum
from symscalar.ops.factories import full, to
from symscalar.ops.opaque import opaque_handler
from symscalar.ops.reductions import amax_p, amin_p, argmax, argmin
from symscalar.ops.shape import basic_getitem, expand, flatten, mark_aliased, reshape, squeeze, zero_pad_p
from symscalar.sizes import is_symbolic_shape

_slice = builtins.slice

__all__ = [
    "index_select",
    "index_add",
    "gather",
    "scatter_add",
    "scatter",
    "take_along_dim",
    "index",
    "index_put",
    "embedding",
    "cumsum",
    "sort",
    "argsort",
    "topk",
    "one_hot",
    "repeat_interleave",
]

TensorOrNumber = Tensor | NumberLike


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """``torch.broadcast_shapes`` as a tuple (static shapes in, a static shape out); with
    dynamic sizes, the plain-Python rule (a dynamic dim never broadcasts)."""
    if any(is_symbolic_shape(s) for s in shapes):
        return common.broadcast_shapes([tuple(s) for s in shapes])
    return tuple(torch.broadcast_shapes(*shapes))  # type: ignore[no-untyped-call]


def _zeros(shape: Sequence[int], like: Any) -> Any:
    return full(tuple(shape), 0, dtype=like.dtype, device=like.device)


def _pad_to(t: Any, shape: Sequence[int]) -> Any:
    """``t`` zero-padded at the end of each dim up to ``shape`` (the cotangent of a source
    tensor of which scatter/index_add read only the leading part)."""
    if tuple(t.shape) == tuple(shape):
        return t
    return zero_pad_p.bind(t, padding=tuple((0, s - n, 0) for n, s in zip(t.shape, shape)))


# ---- index_select and its transpose, index_add
def _index_select_impl(x: Any, index: Any, *, dim: int) -> Any:
    return torch.index_select(x, dim, index)


def _index_add_impl(x: Any, index: Any, source: Any, *, dim: int) -> Any:
    return torch.index_add(x, dim, index, source)


index_select_p = Primitive("index_select", _index_select_impl, torch_meta(_index_select_impl))
index_add_p = Primitive("index_add", _index_add_impl, torch_meta(_index_add_impl))
register_vjp(
    index_select_p,
    lambda ct, out, x, index, *, dim: (
        index_add_p.bind(_zeros(x.shape, ct), index, ct, dim=dim),
        None,
    ),
)
register_vjp(
    index_add_p,
    lambda ct, out, x, index, source, *, dim: (
        ct,
        None,
        index_select_p.bind(ct, index, dim=dim).reshape(source.shape),
    ),
)


@defop(torch=(torch.index_select, torch.Tensor.index_select))
def index_select(input: Tensor, dim: StaticInt, index: Tensor) -> Tensor:
    """The slices of ``input`` along ``dim`` at ``index`` (a 0-d or 1-d integer tensor)."""
    return index_select_p.bind(input, index, dim=canonical_dim(dim, input.ndim))


@defop(torch=(torch.index_add, torch.Tensor.index_add))
def index_add(input: Tensor, dim: StaticInt, index: Tensor, source: Tensor, *, alpha: NumberLike = 1) -> Tensor:
    """``input`` with ``alpha * source[i]`` added to slice ``index[i]`` along ``dim``, out of
    place (repeated indices accumulate); ``alpha`` may be dynamic."""
    if not (is_static(alpha) and alpha == 1):
        source = source * alpha
    return index_add_p.bind(input, index, source, dim=canonical_dim(dim, input.ndim))


# ---- gather and its transpose, scatter_add; scatter
def _gather_impl(x: Any, index: Any, *, dim: int) -> Any:
    return torch.gather(x, dim, index)


def _scatter_add_impl(x: Any, index: Any, src: Any, *, dim: int) -> Any:
    return torch.scatter_add(x, dim, index, src)


def _scatter_impl(x: Any, index: Any, src: Any, *, dim: int) -> Any:
    return torch.scatter(x, dim, index, src)


gather_p = Primitive("gather", _gather_impl, torch_meta(_gather_impl))
scatter_add_p = Primitive("scatter_add", _scatter_add_impl, torch_meta(_scatter_add_impl))
scatter_p = Primitive("scatter", _scatter_impl, torch_meta(_scatter_impl))
register_vjp(
    gather_p,
    lambda ct, out, x, index, *, dim: (
        scatter_add_p.bind(_zeros(x.shape, ct), index, ct, dim=dim),
        None,
    ),
)
register_vjp(
    scatter_add_p,
    lambda ct, out, x, index, src, *, dim: (
        ct,
        None,
        _pad_to(gather_p.bind(ct, index, dim=dim), src.shape),
    ),
)


def _scatter_vjp(ct: Any, out: Any, x: Any, index: Any, src: Any, *, dim: int) -> Any:
    # As torch: the overwritten positions get no gradient in x; src gets what it wrote.
    grad_x = scatter_p.bind(ct, index, 0.0, dim=dim)
    grad_src = _pad_to(gather_p.bind(ct, index, dim=dim), src.shape) if isinstance(src, TensorProxy) else None
    return grad_x, None, grad_src


register_vjp(scatter_p, _scatter_vjp)


@defop
def gather(x: Tensor, dim: StaticInt, index: Tensor) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` for ``dim=0`` (and so on): ``out`` has ``index``'s shape."""
    return gather_p.bind(x, index, dim=canonical_dim(dim, x.ndim))


@implements(torch.gather, torch.Tensor.gather)
def _torch_gather(input: Tensor, dim: StaticInt, index: Tensor, *, sparse_grad: StaticBool = False) -> Tensor:
    return gather(input, dim, index)


@defop(torch=(torch.scatter_add, torch.Tensor.scatter_add))
def scatter_add(input: Tensor, dim: StaticInt, index: Tensor, src: Tensor) -> Tensor:
    """``input`` with ``src`` added at ``index`` along ``dim``, out of place (the transpose of
    ``gather``; repeated indices accumulate)."""
    return scatter_add_p.bind(input, index, src, dim=canonical_dim(dim, input.ndim))


@defop
def scatter(x: Tensor, dim: StaticInt, index: Tensor, src: TensorOrNumber) -> Tensor:
    """``x`` with ``src`` (a tensor, or a number that may be dynamic) written at ``index``
    along ``dim``, out of place. With repeated indices torch does not say which write wins."""
    return scatter_p.bind(x, index, src, dim=canonical_dim(dim, x.ndim))


@implements(torch.scatter, torch.Tensor.scatter)
def _torch_scatter(
    input: Tensor,
    dim: StaticInt,
    index: Tensor,
    src: TensorOrNumber | None = None,
    *,
    value: NumberLike | None = None,
    reduce: str | None = None,
) -> Tensor:
    if reduce is not None:
        raise UnsupportedOperationError(
            f"torch.scatter(..., reduce={reduce!r}) is not supported on traced values (torch "
            "deprecates it); use torch.scatter_add for reduce='add'"
        )
    if (src is None) == (value is None):
        raise TypeError("scatter(): pass exactly one of `src` and `value`")
    return scatter(input, dim, index, src if src is not None else typing.cast(NumberLike, value))


@implements(torch.index_copy, torch.Tensor.index_copy)
def _torch_index_copy(input: Tensor, dim: StaticInt, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with ``source``'s slices copied to ``index`` along ``dim`` (what a KV cache's
    ``index_copy_`` is functionalized to): a ``scatter`` with the index expanded over
    ``source``. With repeated indices torch does not say which copy wins, nor does scatter."""
    d = canonical_dim(dim, input.ndim)
    if index.ndim > 1 or source.ndim != input.ndim:
        raise RuntimeError(
            f"index_copy_(): expected a 1-d index and a source of {input.ndim} dims, got index shape "
            f"{list(index.shape)} and source shape {list(source.shape)}"
        )
    want = tuple(index.shape[0] if i == d else size for i, size in enumerate(input.shape))
    if tuple(source.shape) != want:  # scatter would write a part of source where eager raises
        raise RuntimeError(
            f"index_copy_(): source shape {list(source.shape)} must be {list(want)} (the input's, with the "
            f"index's length at dim {d})"
        )
    shape = tuple(index.shape[0] if i == d else 1 for i in range(input.ndim))
    return scatter(input, d, expand(reshape(index, shape), tuple(source.shape)), source)


@defop(torch=(torch.take_along_dim, torch.Tensor.take_along_dim))
def take_along_dim(input: Tensor, indices: Tensor, dim: StaticInt | None = None) -> Tensor:
    """``gather`` with ``input`` and ``indices`` broadcast against each other except along
    ``dim``; with ``dim=None`` both are flattened first (as ``torch.take_along_dim``)."""
    if dim is None:
        return gather(flatten(input), 0, flatten(indices))
    if input.ndim != indices.ndim:
        raise RuntimeError(
            f"take_along_dim: input and indices should have the same number of dimensions, "
            f"but got {input.ndim} and {indices.ndim}"
        )
    d = canonical_dim(dim, input.ndim)
    batch = broadcast_shapes(
        tuple(1 if i == d else s for i, s in enumerate(input.shape)),
        tuple(1 if i == d else s for i, s in enumerate(indices.shape)),
    )
    x = expand(input, tuple(input.shape[i] if i == d else s for i, s in enumerate(batch)))
    indices = expand(indices, tuple(indices.shape[i] if i == d else s for i, s in enumerate(batch)))
    return gather(x, d, indices)


# ---- torch.max / torch.min: all three overloads of torch's spelling
_WHOLE = object()  # torch.max(x): no dim given (torch.max(x, None) is an error, as in torch)


def _extremum(name: str, reduce_all: Any, arg: Any, pairwise: Any, result: Any) -> Any:
    """The handler of ``torch.max``/``torch.min``: ``max(input)`` is ``amax`` over every dim (its
    gradient shared by ties, as eager's); ``max(input, dim, keepdim)`` is ``(values, indices)``
    with the values *read at the index* (eager's gradient goes to that one element, not to every
    tie); ``max(input, other)`` is ``maximum``."""

    def handler(input: Tensor, dim: Any = _WHOLE, keepdim: StaticBool = False, *, other: Any = None) -> Any:
        if other is not None or isinstance(dim, (TensorProxy, torch.Tensor)):
            return pairwise(input, dim if other is None else other)
        if dim is _WHOLE:
            return reduce_all.bind(input, dims=canonical_dims(None, input.ndim), keepdim=False, nan_hits=True)
        if dim is None:  # as torch's parser, which takes None for a dimension name
            raise RuntimeError("Please look up dimensions by name, got: name = None.")
        if isinstance(dim, NumberProxy):
            raise StaticValueRequiredError(static_message(f"torch.{name}", "dim", dim))
        if input.dtype == torch.bool:  # argmax has no bool kernel: torch's own max(dim) does
            return opaque_handler(getattr(torch, name), (input, dim, keepdim), {})
        d = canonical_dim(dim, input.ndim) if input.ndim else 0
        indices = arg(input, dim, keepdim=True)
        values = gather(input, d, indices) if input.ndim else input
        if not keepdim and input.ndim:
            values, indices = squeeze(values, d), squeeze(indices, d)
        return result((values, indices))

    return handler


implements(torch.max, torch.Tensor.max)(_extremum("max", amax_p, argmax, maximum, torch.return_types.max))
implements(torch.min, torch.Tensor.min)(_extremum("min", amin_p, argmin, minimum, torch.return_types.min))


# ---- advanced indexing by integer tensors on the leading dims, and its transpose index_put
def _index_impl(x: Any, *indices: Any) -> Any:
    return x[indices]


def _index_put_impl(x: Any, values: Any, *indices: Any, accumulate: bool) -> Any:
    return torch.index_put(x, indices, values, accumulate)


def _index_meta(x: TensorVar, *indices: TensorVar) -> TensorVar:
    # by hand: torch's meta kernel reads a 0-d index tensor's value (.item())
    shape = broadcast_shapes(*(i.shape for i in indices)) + x.shape[len(indices) :]
    return TensorVar(shape, x.dtype, x.device)


index_p = Primitive("index", _index_impl, _index_meta)
index_put_p = Primitive("index_put", _index_put_impl, torch_meta(_index_put_impl))
register_vjp(
    index_p,
    lambda ct, out, x, *indices: (
        index_put_p.bind(_zeros(x.shape, ct), ct, *indices, accumulate=True),
        *(None for _ in indices),
    ),
)


def _index_put_vjp(ct: Any, out: Any, x: Any, values: Any, *indices: Any, accumulate: bool) -> Any:
    # Without accumulate the written positions of x get no gradient (torch's rule; with
    # repeated indices torch does not say which write wins, here as there).
    grad_x = ct if accumulate else index_put_p.bind(ct, _zeros((), ct), *indices, accumulate=False)
    grad_values = unbroadcast(index_p.bind(ct, *indices), values.shape) if isinstance(values, TensorProxy) else None
    return (grad_x, grad_values, *(None for _ in indices))


register_vjp(index_put_p, _index_put_vjp)


def _check_indices(op: str, x: Tensor, indices: Sequence[Any]) -> None:
    if len(indices) > x.ndim:
        raise IndexError(f"{op}: too many indices ({len(indices)}) for a tensor of dimension {x.ndim}")
    for i in indices:
        if not isinstance(i, (TensorProxy, torch.Tensor)):
            raise UnsupportedOperationError(
                f"{op}: every index must be a tensor here, got {type(i).__name__}; "
                "use basic indexing (ints, slices) or torch.index_select for other forms"
            )
        if i.dtype in (torch.bool, torch.uint8):
            raise UnsupportedOperationError(
                f"{op} with a boolean mask is not supported on traced values: the result's "
                "shape would depend on how many elements are True (data-dependent). Use "
                "torch.where(mask, x, other) or masked_fill instead."
            )


@defop
def index(x: Tensor, indices: Sequence[Tensor]) -> Tensor:
    """``x[i0, i1, ...]`` for integer tensors ``indices`` on the leading dims (broadcast
    against each other), as torch's advanced indexing."""
    _check_indices("index", x, indices)
    return index_p.bind(x, *indices)


@defop
def index_put(x: Tensor, indices: Sequence[Tensor], values: TensorOrNumber, accumulate: StaticBool = False) -> Tensor:
    """``x`` with ``values`` written (or, with ``accumulate``, added) at ``x[indices]``, out
    of place; ``values`` may be a dynamic number. What ``x[idx] = v`` and ``x[idx] += v``
    lower to once functionalized."""
    _check_indices("index_put", x, indices)
    if not isinstance(values, (TensorProxy, torch.Tensor)):
        values = full((), values, dtype=x.dtype, device=x.device)
    elif values.dtype != x.dtype:
        values = to(values, x.dtype)
    return index_put_p.bind(x, values, *indices, accumulate=accumulate)


@implements(torch.index_put, torch.Tensor.index_put)
def _torch_index_put(
    input: Tensor, indices: Sequence[Tensor], values: Tensor, accumulate: StaticBool = False
) -> Tensor:
    if any(i is None for i in indices):
        raise UnsupportedOperationError("index_put: None in indices is not supported on traced values")
    return index_put(input, tuple(indices), values, accumulate)


# ---- embedding
def _embedding_impl(indices: Any, weight: Any, *, padding_idx: int | None, scale_grad_by_freq: bool) -> Any:
    return F.embedding(indices, weight, padding_idx)


embedding_p = Primitive("embedding", _embedding_impl, torch_meta(_embedding_impl))


def _embedding_vjp(ct: Any, out: Any, indices: Any, weight: Any, *, padding_idx: Any, scale_grad_by_freq: bool) -> Any:
    if isinstance(weight.shape[0], int):
        return None, embedding_backward_p.bind(
            ct, indices, num_weights=weight.shape[0], padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
        )
    flat = indices.reshape(-1)  # a dynamic number of rows: the same sums, composed
    rows = ct.reshape(-1, weight.shape[1])
    if padding_idx is not None:  # the padding row gets no gradient, as in torch
        rows = torch.where((flat != padding_idx).unsqueeze(-1), rows, 0)
    if scale_grad_by_freq:  # each row's gradient divided by how often its index occurs
        counts = index_add_p.bind(
            _zeros(weight.shape[:1], ct), flat, full(flat.shape, 1, dtype=ct.dtype, device=ct.device), dim=0
        )
        rows = rows / index_select_p.bind(counts, flat, dim=0).unsqueeze(-1)
    return None, index_add_p.bind(_zeros(weight.shape, ct), flat, rows, dim=0)


# eager's backward kernel (aten::embedding_dense_backward): in 16-bit dtypes it accumulates the
# rows of a repeated index in float32 and rounds once, where an index_add rounds at every add
def _embedding_backward_impl(
    ct: Any, indices: Any, *, num_weights: int, padding_idx: int | None, scale_grad_by_freq: bool
) -> Any:
    padding = -1 if padding_idx is None else padding_idx
    return torch.ops.aten.embedding_dense_backward(ct, indices, num_weights, padding, scale_grad_by_freq)


def _embedding_backward_meta(ct: TensorVar, indices: TensorVar, *, num_weights: int, **params: Any) -> TensorVar:
    return TensorVar((num_weights, ct.shape[-1]), ct.dtype, ct.device)


def _embedding_backward_vjp(
    ct2: Any, out: Any, ct: Any, indices: Any, *, num_weights: int, padding_idx: Any, scale_grad_by_freq: bool
) -> Any:
    """eager's embedding_dense_double_backward: the rows of ``ct2`` at the indices, zero at the
    padding index (and, as eager's, not scaled by frequency: the first backward did that)."""
    flat = indices.reshape(-1)
    rows = index_select_p.bind(ct2, flat, dim=0)
    if padding_idx is not None:
        rows = torch.where((flat != padding_idx).unsqueeze(-1), rows, 0)
    return rows.reshape(tuple(ct.shape)), None


embedding_backward_p = Primitive("embedding_backward", _embedding_backward_impl, _embedding_backward_meta)
register_vjp(embedding_backward_p, _embedding_backward_vjp)
register_vjp(embedding_p, _embedding_vjp)


@defop
def embedding(
    indices: Tensor, weight: Tensor, padding_idx: StaticInt | None = None, scale_grad_by_freq: StaticBool = False
) -> Tensor:
    """Rows of ``weight`` (2-D) at integer ``indices``: shape ``indices.shape + (dim,)``.
    The row ``padding_idx`` (static) gets no gradient; ``scale_grad_by_freq`` divides each
    row's gradient by its index's count in ``indices``."""
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D, got {weight.ndim}-D")
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"embedding: indices must be int64 or int32, got {indices.dtype}")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError(f"embedding: padding_idx {padding_idx} must be within num_embeddings ({n})")
        padding_idx %= n
    return embedding_p.bind(indices, weight, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)


@implements(F.embedding)
def _torch_embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: StaticInt | None = None,
    max_norm: StaticFloat | None = None,
    norm_type: StaticFloat = 2.0,
    scale_grad_by_freq: StaticBool = False,
    sparse: StaticBool = False,
) -> Tensor:
    if max_norm is not None:
        raise UnsupportedOperationError(
            "torch.nn.functional.embedding with max_norm is not supported in a traced function: "
            "it renormalizes rows of the weight in place on every call (a write to a parameter "
            "inside the forward). Renormalize the weight outside the jitted function (e.g. with "
            "torch.no_grad(): weight.renorm_(...)) and pass max_norm=None."
        )
    if sparse:
        raise UnsupportedOperationError(
            "torch.nn.functional.embedding with sparse=True is not supported: symscalar's "
            "gradients are dense tensors. Use sparse=False (nn.Embedding(..., sparse=False))."
        )
    return embedding(input, weight, padding_idx, scale_grad_by_freq)


# ---- cumsum
def _cumsum_impl(x: Any, *, dim: int, dtype: torch.dtype | None = None) -> Any:
    return torch.cumsum(x, dim, dtype=dtype)


cumsum_p = Primitive("cumsum", _cumsum_impl, torch_meta(_cumsum_impl))
# eager's cumsum_backward sums the cotangent in the input's dtype: a cumsum(x, dtype=...) casts it first
register_vjp(cumsum_p, lambda ct, out, x, *, dim, dtype=None: (ct.to(x.dtype).flip(dim).cumsum(dim).flip(dim),))
# Integer inputs promote to int64 in torch; nvFuser's scan is exercised on floats only.
register_nvfuser(
    cumsum_p,
    lambda fd, x, *, dim, dtype=None: fd.ops.cumsum(x if dtype is None else fd.ops.cast(x, dtype), dim),
    supports=lambda x, *, dim, dtype=None: floating(x) and x.ndim > 0 and (dtype is None or dtype.is_floating_point),
)


@defop(torch=(torch.cumsum, torch.Tensor.cumsum))
def cumsum(input: Tensor, dim: StaticInt, *, dtype: torch.dtype | None = None) -> Tensor:
    """Running sum along ``dim`` (integer and bool inputs sum in int64, as torch)."""
    return cumsum_p.bind(input, dim=canonical_dim(dim, input.ndim), dtype=dtype)


# ---- sort, argsort, topk: (values, indices); the values' gradient goes back through indices
def _sort_impl(x: Any, *, dim: int, descending: bool, stable: bool) -> Any:
    return tuple(torch.sort(x, dim=dim, descending=descending, stable=stable))


def _topk_impl(x: Any, *, k: int, dim: int, largest: bool, sorted: bool) -> Any:
    return tuple(torch.topk(x, k, dim, largest, sorted))


sort_p = Primitive("sort", _sort_impl, torch_meta(_sort_impl), multiple_results=True)
topk_p = Primitive("topk", _topk_impl, torch_meta(_topk_impl), multiple_results=True)


def _selected_vjp(cts: Any, outs: Any, x: Any, *, dim: int, **params: Any) -> Any:
    """The gradient of values picked from ``x`` along ``dim`` at ``outs[1]`` (distinct
    indices): scattered back to where they came from, zero elsewhere."""
    if cts[0] is None:
        return (None,)
    if x.ndim == 0:
        return (cts[0],)
    return (scatter_add_p.bind(_zeros(x.shape, cts[0]), outs[1], cts[0], dim=dim),)


register_vjp(sort_p, _selected_vjp)
register_vjp(topk_p, _selected_vjp)


@defop
def sort(
    x: Tensor, dim: StaticInt = -1, descending: StaticBool = False, stable: StaticBool = False
) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of ``x`` sorted along ``dim``; the order of ties is torch's."""
    d = canonical_dim(dim, x.ndim)
    values, indices = sort_p.bind(x, dim=d, descending=descending, stable=stable)
    return torch.return_types.sort((values, indices))


@implements(torch.sort, torch.Tensor.sort)
def _torch_sort(
    input: Tensor, dim: StaticInt = -1, descending: StaticBool = False, *, stable: StaticBool | None = False
) -> tuple[Tensor, Tensor]:
    return sort(input, dim, descending, bool(stable))


@defop
def argsort(x: Tensor, dim: StaticInt = -1, descending: StaticBool = False, stable: StaticBool = False) -> Tensor:
    """The indices that sort ``x`` along ``dim`` (``sort(x)[1]``)."""
    return sort(x, dim, descending, stable)[1]


@implements(torch.argsort, torch.Tensor.argsort)
def _torch_argsort(
    input: Tensor, dim: StaticInt = -1, descending: StaticBool = False, *, stable: StaticBool = False
) -> Tensor:
    return argsort(input, dim, descending, stable)


@defop(torch=(torch.topk, torch.Tensor.topk))
def topk(
    input: Tensor,
    k: StaticInt,
    dim: StaticInt = -1,
    largest: StaticBool = True,
    sorted: StaticBool = True,
) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``; ``k``
    is static or a size (``T // 2``): the output's shape."""
    d = canonical_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    asked = f"topk(k={k!r}) along dim {d} of size {size!r} (eager raises where k is not in [0, size])"
    if size_guards.eager_raises("lt", k, 0, asked) or size_guards.eager_raises("gt", k, size, asked):
        raise RuntimeError(f"topk: k ({k}) must be in [0, {size}] (the size of dim {dim})")
    values, indices = topk_p.bind(input, k=k, dim=d, largest=largest, sorted=sorted)
    return torch.return_types.topk((values, indices))


# ---- one_hot (an integer result: no gradient)
def _one_hot_impl(x: Any, *, num_classes: int) -> Any:
    return F.one_hot(x, num_classes)


one_hot_p = Primitive("one_hot", _one_hot_impl, torch_meta(_one_hot_impl))


@defop
def one_hot(x: Tensor, num_classes: StaticInt) -> Tensor:
    """int64 one-hot vectors of length ``num_classes`` (static: the output's shape) for the
    class ids ``x``; an id outside ``[0, num_classes)`` raises when the program runs, as in torch."""
    if num_classes < 0:
        raise UnsupportedOperationError(
            "one_hot: num_classes=-1 (inferred as x.max() + 1): the output's shape depends on "
            "tensor data, which a traced program cannot have. Pass num_classes explicitly "
            "(a static int, e.g. the vocabulary or label count)."
        )
    if x.dtype != torch.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensors (int64), got {x.dtype}")
    return one_hot_p.bind(x, num_classes=num_classes)


@implements(F.one_hot)
def _torch_one_hot(tensor: Tensor, num_classes: StaticInt = -1) -> Tensor:
    return one_hot(tensor, num_classes)


# ---- repeat_interleave (a static repeat count: the output's shape depends on it)
@defop
def repeat_interleave(x: Tensor, repeats: StaticInt, dim: StaticInt | None = None) -> Tensor:
    """Each element (slice along ``dim``; of the flattened ``x`` for None) repeated
    ``repeats`` times in place: ``[a, b] -> [a, a, b, b]``. Composed of shape ops."""
    if isinstance(repeats, (TensorProxy, torch.Tensor)):
        raise UnsupportedOperationError(
            "repeat_interleave with a tensor of repeats is not supported on traced values: the "
            "output's shape would depend on tensor data. Pass repeats as a static int."
        )
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 0:
        raise RuntimeError(f"repeat_interleave: repeats must be a non-negative int, got {repeats!r}")
    if dim is None:
        x, d = flatten(x), 0
    else:
        d = canonical_dim(dim, x.ndim)
    if x.ndim == 0:
        x = reshape(x, (1,))
    shape = tuple(x.shape)
    tiled = expand(reshape(x, shape[: d + 1] + (1,) + shape[d + 1 :]), shape[: d + 1] + (repeats,) + shape[d + 1 :])
    return reshape(tiled, shape[:d] + (shape[d] * repeats,) + shape[d + 1 :])


@implements(torch.repeat_interleave, torch.Tensor.repeat_interleave)
def _torch_repeat_interleave(
    input: Tensor,
    repeats: StaticInt | None = None,
    dim: StaticInt | None = None,
    *,
    output_size: StaticInt | None = None,
) -> Tensor:
    if repeats is None:
        raise UnsupportedOperationError(
            "torch.repeat_interleave(repeats_tensor) is not supported on traced values: the "
            "output's shape depends on tensor data"
        )
    out = repeat_interleave(input, repeats, dim)
    if output_size is not None and (
        (dim is None and out.numel() != output_size) or (dim is not None and out.shape[dim] != output_size)
    ):
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the result's size")
    return out


# ---- x[...]: basic indexing (shape.py) or advanced indexing by integer tensors
def _is_advanced(item: Any) -> bool:
    return isinstance(item, (TensorProxy, torch.Tensor, list, tuple))


@implements(torch.Tensor.__getitem__)
def _tensor_getitem(input: Tensor, indices: Any) -> Tensor:
    items = indices if isinstance(indices, tuple) else (indices,)
    if not any(_is_advanced(i) for i in items):
        return basic_getitem(input, indices, "torch.Tensor.__getitem__")
    out = _advanced_getitem(input, items)
    if any(isinstance(i, (TensorProxy, torch.Tensor)) and i.ndim == 0 for i in items):
        # eager reads a 0-d index tensor as an int: its result is a view of ``input`` (the
        # trace's is a gather), so an in-place update of either must not be traced
        mark_aliased(input, out)
    return out


def _advanced_getitem(x: Tensor, items: tuple[Any, ...]) -> Tensor:
    """torch's rule: ints, then 0-d index tensors, select (remove) their dims first; the
    other index tensors' dims are replaced by their broadcast shape, in place when those dims
    are adjacent, else in front (numpy's rule)."""
    op = "torch.Tensor.__getitem__"
    if any(i is None for i in items) or sum(1 for i in items if i is Ellipsis) > 1:
        raise UnsupportedOperationError(f"{op}: None or several ... together with tensor indices is not supported")
    consuming = sum(1 for i in items if i is not Ellipsis)
    if consuming > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    per_dim: list[Any] = []
    for i in items:
        per_dim.extend([_slice(None)] * (x.ndim - consuming) if i is Ellipsis else [i])
    per_dim.extend([_slice(None)] * (x.ndim - len(per_dim)))
    for i in per_dim:
        if isinstance(i, NumberProxy):
            raise StaticValueRequiredError(static_message(op, "indices", i))
    x = basic_getitem(x, tuple(_slice(None) if _is_advanced(i) else i for i in per_dim), op)
    tensors = [
        torch.tensor(i, device=x.device) if isinstance(i, (list, tuple)) else i
        for i in per_dim
        if not isinstance(i, (int, _slice))
    ]
    _check_indices(op, x, tensors)
    remaining = [i for i in per_dim if not isinstance(i, int)]  # one per dim of x now
    for d in reversed(range(len(remaining))):  # 0-d index tensors select, as ints do
        i = remaining[d]
        if _is_advanced(i) and not isinstance(i, (list, tuple)) and i.ndim == 0:
            x = index_p.bind(x.permute([d] + [k for k in range(x.ndim) if k != d]), i)
            del remaining[d]
    advanced = [d for d, i in enumerate(remaining) if _is_advanced(i)]
    if not advanced:
        return x
    indices = [
        torch.tensor(i, device=x.device) if isinstance(i, (list, tuple)) else i for i in remaining if _is_advanced(i)
    ]
    rest = [d for d in range(x.ndim) if d not in advanced]
    out = index_p.bind(x if advanced == list(range(len(advanced))) else x.permute(advanced + rest), *indices)
    if advanced != list(range(advanced[0], advanced[-1] + 1)) or advanced[0] == 0:
        return out
    n_b = out.ndim - len(rest)  # broadcast dims in front; move them to where the indexed dims were
    before = advanced[0]
    order = list(range(n_b, n_b + before)) + list(range(n_b)) + list(range(n_b + before, out.ndim))
    return out.permute(order)


# ---- x[indices] = value: the in-place write, functionalized. The new value is ``x`` with
# ``value`` written where ``x[indices]`` reads, traced out of place (index_put at the flat
# positions ``x[indices]`` reads, or a where for a bool mask) and assigned to ``x`` under the
# rules of every in-place update (``TraceBuilder.update_in_place``: refused on an argument of
# the jitted function, a view, or a value a view was taken of).
@implements(torch.Tensor.__setitem__)
def _tensor_setitem(input: Tensor, indices: Any, value: Any) -> None:
    maybe_in_place("torch.Tensor.__setitem__", input, True, lambda x: _written(x, indices, value))


def _written(x: Any, indices: Any, value: Any) -> Tensor:
    """``x`` with ``value`` (broadcast and cast as ``copy_`` does) written at ``x[indices]``."""
    if not isinstance(value, (TensorProxy, torch.Tensor)):
        value = full((), value, dtype=x.dtype, device=x.device)
    elif value.dtype != x.dtype:
        value = to(typing.cast(Tensor, value), x.dtype)
    items = indices if isinstance(indices, tuple) else (indices,)
    if len(items) == 1 and isinstance(items[0], TensorProxy) and items[0].dtype == torch.bool:
        return _written_where(x, items[0], value)
    if x.ndim == 0:
        return _written_where(x, full((), True, dtype=torch.bool, device=x.device), value)
    if is_symbolic_shape(x.shape):  # the positions below are a constant of x's shape
        raise UnsupportedOperationError(
            f"torch.Tensor.__setitem__ on a tensor with dynamic dims {list(x.shape)} is not supported yet "
            "(except with a bool mask). Build the new value out of place: torch.where with a mask from "
            "torch.arange(T), torch.cat of slices, or F.pad; or declare the dims static."
        )
    positions = torch.arange(x.numel(), device=x.device).reshape(x.shape)
    if any(isinstance(i, TensorProxy) for i in items):
        selected = _tensor_getitem(x._tracer.capture(positions), indices)  # traced indices: read per call
    else:
        selected = positions[indices]  # static: the positions are a constant
    target = tuple(selected.shape)
    while value.ndim > len(target) and value.shape[0] == 1:  # as copy_: leading ones dropped
        value = squeeze(value, 0)
    if broadcast_shapes(tuple(value.shape), target) != target:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to indexing "
            f"result of shape {list(target)}"
        )
    # the coordinates of each position along every dim of x: index_put's result is x's shape
    # and a new value (no view of x, so later in-place writes see no alias)
    coordinates: list[Any] = []
    stride = 1
    for size in reversed(x.shape):
        coordinates.insert(0, selected // stride % size if size > 1 else selected * 0)
        stride *= size
    return index_put(x, tuple(coordinates), expand(value, target))


def _written_where(x: Tensor, mask: Any, value: Any) -> Tensor:
    """``x[mask] = value`` for a traced bool ``mask`` over x's leading dims: a where, when
    ``value`` broadcasts to every selected row (a number, one row); else the number of rows
    it must have depends on the mask's values."""
    rest = tuple(x.shape[mask.ndim :])
    if tuple(mask.shape) != tuple(x.shape[: mask.ndim]) and not size_guards.equal_shapes(
        tuple(mask.shape), tuple(x.shape[: mask.ndim]), "a mask index"
    ):
        raise IndexError(
            f"The shape of the mask {list(mask.shape)} does not match the shape of the indexed tensor {list(x.shape)}"
        )
    while value.ndim > len(rest) and value.shape[0] == 1:
        value = squeeze(value, 0)
    if value.ndim > len(rest) or broadcast_shapes(tuple(value.shape), rest) != rest:
        raise UnsupportedOperationError(
            f"torch.Tensor.__setitem__: x[mask] = value with a traced bool mask of shape {list(mask.shape)} and a "
            f"value of shape {list(value.shape)}: the value must have one row per True in the mask, a number "
            "that depends on the mask's values. Write `x = torch.where(mask[..., None], values, x)` with `values` "
            "of x's shape, or assign a number or one row."
        )
    return torch.where(reshape(mask, tuple(mask.shape) + (1,) * len(rest)), value, x)
