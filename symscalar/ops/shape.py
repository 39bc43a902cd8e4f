"""Shape ops. Target shapes, dims, permutations and slice bounds are static: the output
layout depends on them, and a backend needs them as constants.

A few primitives carry every layout change: ``reshape`` (also squeeze, unsqueeze, flatten),
``expand``, ``permute`` (also transpose), ``slice`` (narrow, basic indexing), ``zero_pad``
(the transpose of ``slice``), ``cat``, ``split`` (chunk, unbind) and ``flip``. Their vjps are
each other, so a backward trace only ever holds these primitives with static parameters.
"""

from __future__ import annotations

import builtins
import math
import typing
from collections.abc import Sequence
from typing import Any

import torch

from symscalar import size_guards, size_ops, sizes
from symscalar.ops.define import (
    NumberProxy,
    Primitive,
    StaticBool,
    StaticDims,
    StaticInt,
    StaticShape,
    StaticValueRequiredError,
    Tensor,
    TensorProxy,
    TensorVar,
    TraceBuilder,
    UnsupportedOperationError,
    canonical_dim,
    contains_dynamic,
    current_tracer,
    defop,
    implements,
    register_nvfuser,
    register_vjp,
    same_shape,
    small_meta,
    static_message,
    stop_gradient_p,
    torch_meta,
    unbroadcast,
)
from symscalar.sizes import Size, Symbol

__all__ = [
    "reshape",
    "expand",
    "broadcast_in_dim",
    "flatten",
    "permute",
    "transpose",
    "squeeze",
    "unsqueeze",
    "narrow",
    "select",
    "flip",
    "getitem",
    "clone",
    "contiguous",
    "detach",
]

_slice = builtins.slice


def shape_arg(op: str, name: str, args: tuple[Any, ...], keywords: dict[str, Any]) -> tuple[Any, ...]:
    """A shape or dims list given as torch accepts it: ``x.reshape(2, 3)``,
    ``x.reshape((2, 3))`` or ``x.reshape(shape=(2, 3))``. The varargs are checked by the
    handler's annotation; the keyword form is checked here, with the same error."""
    if keywords:
        if set(keywords) != {name} or args:
            raise TypeError(f"{op}() got unexpected arguments {sorted(keywords)}; expected {name!r}")
        value = keywords[name]
        if contains_dynamic(value):
            raise StaticValueRequiredError(static_message(op, name, value))
        args = (value,)
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        return tuple(args[0])
    return tuple(args)


def _infer_size(shape: Sequence[int], numel: int, op: str) -> tuple[int, ...]:
    """``shape`` with its one ``-1`` entry resolved, checked against ``numel`` elements."""
    shape = tuple(shape)
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, Size)):
            raise TypeError(f"{op}: sizes must be ints, got {s!r} of type {type(s).__name__}")
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred (-1), got shape {list(shape)}")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"{op}: invalid shape dimension in {list(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if isinstance(numel, Size) or isinstance(known, Size):
        return _infer_symbolic_size(shape, numel, known, unknown, op)
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if s == -1 else s for s in shape)
    if known != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def nonzero_next_to_minus_one(known: Any, op: str) -> bool:
    """Whether the product ``known`` of the sizes next to a ``-1`` is not 0 (eager refuses to
    infer the -1 where it is). The normal form cancels a dynamic product (``s_B * s_T * 3 //
    (s_T * 3)`` is ``s_B``), so a product that may be 0 (a dim declared with ``min=0``) is
    guarded: a program traced at T=3 must not answer at T=0, where eager raises."""
    return not size_guards.eager_raises("eq", known, 0, f"{op} with -1 (eager refuses a size 0 next to it)")


def _quotient(numel: Any, known: Any) -> Any:
    """``numel // known`` for a ``-1`` entry, exact in the normal form, or else once the dims
    the size guards pin are read at their value (``64 // (s_T * 16)`` is 4 under ``s_T == 1``)."""
    try:
        if numel % known == 0:
            return numel // known
    except sizes.SizeDecisionError:
        pass
    noted = size_guards.pinned_quotient(numel, known)  # the backward's metas, outside the trace
    if noted is not None:
        return noted
    values = _pinned()
    if values:
        at_pins, known_at_pins = sizes.evaluate(numel, values), sizes.evaluate(known, values)
        try:
            if at_pins % known_at_pins == 0:
                quotient = at_pins // known_at_pins
                size_guards.remember_pinned(numel, known, quotient)
                return quotient
        except sizes.SizeDecisionError:
            pass
    raise sizes.SizeDecisionError("not divisible")


def _pinned() -> _Partial | None:
    tracer = current_tracer.get()
    pinned = size_guards.pinned_values(tracer) if tracer is not None else {}
    return _Partial(pinned) if pinned else None


def _equal_where_pinned(a: Any, b: Any) -> bool:
    """Whether two element counts are equal once the dims the trace's size guards pin to one
    value are read at it (``s_T * 64`` is 64 under ``s_T == 1``): a decode step's one token
    reshaped into rows of heads (transformers' ``pack_gqa``)."""
    if size_guards.known_equal(a, b):  # noted by the trace (the backward's metas run outside it)
        return True
    values = _pinned()
    if values is None or sizes.evaluate(a, values) != sizes.evaluate(b, values):
        return False
    size_guards.remember_pinned(a, b)
    return True


class _Partial(dict[Symbol, Any]):
    """Values for ``sizes.evaluate``: the pinned dims' values, the other dims themselves."""

    def __missing__(self, symbol: Symbol) -> Any:
        return Size.of(symbol)


def _infer_symbolic_size(
    shape: tuple[Any, ...], numel: Any, known: Any, unknown: list[int], op: str
) -> tuple[Any, ...]:
    """``_infer_size`` with dynamic sizes: the element counts must agree in the normal form."""
    try:
        if unknown:
            if not nonzero_next_to_minus_one(known, op):
                raise RuntimeError(f"{op}: cannot infer the -1 of shape {list(shape)} next to a size 0")
            inferred = _quotient(numel, known)
            return tuple(inferred if s == -1 else s for s in shape)
        if known == numel or _equal_where_pinned(known, numel):
            return shape
    except sizes.SizeDecisionError:
        pass
    raise UnsupportedOperationError(
        f"{op}: shape {list(shape)} does not provably hold the {numel!r} elements of the input for every "
        "size of its dynamic dims (the element counts must agree as expressions of the declared dims). "
        "Write the target from the input's sizes (x.shape[i], their products, -1 for one entry), or declare "
        "the dims static."
    )


# ---- reshape
def _reshape_impl(x: Any, *, shape: tuple[int, ...]) -> Any:
    return torch.reshape(x, shape)


reshape_p = Primitive("reshape", _reshape_impl, torch_meta(_reshape_impl), size_params=("shape",), may_alias=True)
register_vjp(reshape_p, lambda ct, out, x, *, shape: (ct.reshape(x.shape),))
register_nvfuser(reshape_p, lambda fd, x, *, shape: fd.ops.reshape(x, shape))


@defop(torch=(torch.reshape,))
def reshape(input: Tensor, shape: StaticShape) -> Tensor:
    """``input`` with a new shape of the same number of elements (one entry may be -1)."""
    try:
        full = _infer_size(shape, math.prod(input.shape), "reshape")
    except UnsupportedOperationError:
        # a target equal to the input's shape under size guards (a cotangent of s_B meeting s_S)
        if not size_guards.equal_shapes(tuple(input.shape), tuple(shape), "reshape"):
            raise
        full = tuple(shape)
    if full == tuple(input.shape):
        return input
    return reshape_p.bind(input, shape=full)


@implements(torch.Tensor.reshape)
def _tensor_reshape(input: Tensor, *shape: StaticInt | StaticShape, **keywords: Any) -> Tensor:
    return reshape(input, shape_arg("torch.Tensor.reshape", "shape", shape, keywords))


@implements(torch.Tensor.view)
def _tensor_view(input: Tensor, *size: StaticInt | StaticShape, **keywords: Any) -> Tensor:
    if (len(size) == 1 and isinstance(size[0], torch.dtype)) or "dtype" in keywords:
        raise UnsupportedOperationError(
            "Tensor.view(dtype) (reinterpreting the bytes) is not supported on traced values; "
            "use Tensor.to(dtype) to convert the values"
        )
    return reshape(input, shape_arg("torch.Tensor.view", "size", size, keywords))


@implements(torch.Tensor.reshape_as, torch.Tensor.view_as)
def _tensor_reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, tuple(other.shape))


# ---- flatten, squeeze, unsqueeze (all reshapes)
@defop(torch=(torch.flatten, torch.Tensor.flatten))
def flatten(input: Tensor, start_dim: StaticInt = 0, end_dim: StaticInt = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` (inclusive) into one; a 0-d tensor becomes 1-d."""
    if input.ndim == 0:
        return reshape(input, (1,))
    start, end = canonical_dim(start_dim, input.ndim), canonical_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(input.shape)
    return reshape(input, shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])


@defop(torch=(torch.squeeze,))
def squeeze(input: Tensor, dim: StaticDims = None) -> Tensor:
    """Remove size-1 dims: all of them (``dim=None``) or those among ``dim`` (int or tuple)."""
    if dim is None:
        dims = set(range(input.ndim))
    else:
        listed = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = {canonical_dim(d, input.ndim) for d in listed}
    removed = [i for i, s in enumerate(input.shape) if i in dims and _is_one(s, i)]
    shape = tuple(s for i, s in enumerate(input.shape) if i not in removed)
    for i in removed:  # a dynamic dim its guard pins to 1 (Dim(specialize=True)): a static 1 now
        if isinstance(input.shape[i], Size):
            input = pinned(input, i, 1)
    return reshape(input, shape)


def pinned(x: Tensor, dim: int, size: int) -> Tensor:
    """``x`` with its dynamic dim ``dim`` read as the static ``size`` that a size guard of the
    trace pins it to (``Dim(specialize=True)``): a slice to ``size``, the whole dim at run time."""
    stops = tuple(size if d == dim else s for d, s in enumerate(x.shape))
    return slice_p.bind(x, starts=(0,) * x.ndim, stops=stops, steps=(1,) * x.ndim)


def _is_one(size: Any, dim: int) -> bool:
    """Whether squeeze removes a dim of ``size``; for a dynamic size where its declared range
    decides it, else a size guard (eager removes the dim exactly when the size is 1 at that
    call): ``s != 1`` keeps the dim; ``s == 1`` pins the dim, refused unless it opts in."""
    if not isinstance(size, Size):
        return bool(size == 1)
    return size_guards.guarded(
        "eq", size, 1, f"squeeze of dim {dim} ({size!r}; eager removes it only when its size is 1)"
    )


@implements(torch.Tensor.squeeze)
def _tensor_squeeze(input: Tensor, *dim: StaticInt | StaticShape, **keywords: Any) -> Tensor:
    dims = shape_arg("torch.Tensor.squeeze", "dim", dim, keywords)
    if dims in ((), (None,)):
        return squeeze(input)
    return squeeze(input, dims)


@defop(torch=(torch.unsqueeze, torch.Tensor.unsqueeze))
def unsqueeze(input: Tensor, dim: StaticInt) -> Tensor:
    """Insert a size-1 dim at ``dim`` (in ``[-input.ndim - 1, input.ndim]``)."""
    d = canonical_dim(dim, input.ndim + 1)
    shape = tuple(input.shape)
    return reshape(input, shape[:d] + (1,) + shape[d:])


# ---- expand (broadcast to a larger shape, size-1 dims repeated)
def _expand_impl(x: Any, *, shape: tuple[int, ...]) -> Any:
    return torch.broadcast_to(x, shape)


expand_p = Primitive("expand", _expand_impl, torch_meta(_expand_impl), size_params=("shape",), may_alias=True)
register_vjp(expand_p, lambda ct, out, x, *, shape: (unbroadcast(ct, x.shape),))
register_nvfuser(
    expand_p,
    lambda fd, x, *, shape: fd.ops.broadcast_in_dim(x, shape, list(range(len(shape) - x.ndim, len(shape)))),
)


@defop
def expand(x: Tensor, shape: StaticShape) -> Tensor:
    """Broadcast ``x`` to ``shape`` (-1 keeps a size), like ``torch.broadcast_to``."""
    lead = len(shape) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({x.ndim})"
        )
    if any(s == -1 for s in shape[:lead]):
        raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
    full = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    if full == tuple(x.shape):
        return x
    return expand_p.bind(x, shape=full)


@defop
def broadcast_in_dim(x: Tensor, shape: StaticShape, broadcast_dims: StaticShape) -> Tensor:
    """Broadcast ``x`` to ``shape``, dim ``i`` of ``x`` going to dim ``broadcast_dims[i]``
    (increasing), the other dims new (like ``jax.lax.broadcast_in_dim``)."""
    shape, bdims = tuple(shape), tuple(broadcast_dims)
    if len(bdims) != x.ndim:
        raise ValueError(f"broadcast_in_dim: broadcast_dims {bdims} must have one entry per dim of x ({x.ndim})")
    if any(not 0 <= d < len(shape) for d in bdims) or list(bdims) != sorted(set(bdims)):
        raise ValueError(f"broadcast_in_dim: broadcast_dims {bdims} must be strictly increasing dims of {shape}")
    kept = [1] * len(shape)
    for i, d in enumerate(bdims):
        if x.shape[i] not in (1, shape[d]):
            raise ValueError(
                f"broadcast_in_dim: dim {i} of x (size {x.shape[i]}) cannot broadcast to size {shape[d]} of dim {d}"
            )
        kept[d] = x.shape[i]
    return expand(reshape(x, tuple(kept)), shape)


@implements(torch.broadcast_to)
def _torch_broadcast_to(input: Tensor, size: StaticShape) -> Tensor:
    return expand(input, size)


@implements(torch.Tensor.expand)
def _tensor_expand(input: Tensor, *size: StaticInt | StaticShape, **keywords: Any) -> Tensor:
    return expand(input, shape_arg("torch.Tensor.expand", "size", size, keywords))


@implements(torch.Tensor.expand_as)
def _tensor_expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, tuple(other.shape))


# ---- permute (transpose, .T, .mT)
def _permute_impl(x: Any, *, dims: tuple[int, ...]) -> Any:
    return torch.permute(x, dims)


permute_p = Primitive("permute", _permute_impl, torch_meta(_permute_impl), may_alias=True)


def _permute_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...]) -> Any:
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return (ct.permute(tuple(inverse)),)


register_vjp(permute_p, _permute_vjp)
register_nvfuser(permute_p, lambda fd, x, *, dims: fd.ops.permute(x, list(dims)))


@defop(torch=(torch.permute,))
def permute(input: Tensor, dims: StaticShape) -> Tensor:
    """Reorder the dims of ``input``: dim ``i`` of the result is dim ``dims[i]`` of ``input``."""
    if len(dims) != input.ndim:
        raise RuntimeError(
            f"permute: the number of dims ({len(dims)}) must equal the tensor's number of dimensions ({input.ndim})"
        )
    perm = tuple(canonical_dim(d, input.ndim) for d in dims)
    if len(set(perm)) != len(perm):
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got {tuple(dims)}")
    if perm == tuple(range(input.ndim)):
        return input
    return permute_p.bind(input, dims=perm)


@implements(torch.Tensor.permute)
def _tensor_permute(input: Tensor, *dims: StaticInt | StaticShape, **keywords: Any) -> Tensor:
    return permute(input, shape_arg("torch.Tensor.permute", "dims", dims, keywords))


@defop(torch=(torch.transpose, torch.Tensor.transpose, torch.swapdims, torch.Tensor.swapdims))
def transpose(input: Tensor, dim0: StaticInt, dim1: StaticInt) -> Tensor:
    """Swap dims ``dim0`` and ``dim1``."""
    a, b = canonical_dim(dim0, input.ndim), canonical_dim(dim1, input.ndim)
    if input.ndim == 0:
        return input
    perm = list(range(input.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return permute(input, tuple(perm))


@implements(torch.swapaxes, torch.Tensor.swapaxes)
def _torch_swapaxes(input: Tensor, axis0: StaticInt, axis1: StaticInt) -> Tensor:
    return transpose(input, axis0, axis1)


@implements(torch.t, torch.Tensor.t)
def _torch_t(input: Tensor) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, -1) if input.ndim == 2 else input


# ---- slice and its transpose, zero_pad
def _slice_impl(x: Any, *, starts: tuple[int, ...], stops: tuple[int, ...], steps: tuple[int, ...]) -> Any:
    return x[tuple(_slice(a, b, c) for a, b, c in zip(starts, stops, steps))]


slice_p = Primitive("slice", _slice_impl, torch_meta(_slice_impl), may_alias=True)


def _zero_pad_impl(x: Any, *, padding: tuple[tuple[int, int, int], ...]) -> Any:
    """Zeros around (lo, hi) and between (interior) the elements of each dim."""
    shape = tuple(lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior) in zip(x.shape, padding))
    out = x.new_zeros(shape)
    if x.numel() == 0:
        return out
    index = tuple(
        _slice(lo, lo + (n - 1) * (interior + 1) + 1, interior + 1) for n, (lo, hi, interior) in zip(x.shape, padding)
    )
    out[index] = x
    return out


zero_pad_p = Primitive("zero_pad", _zero_pad_impl, torch_meta(_zero_pad_impl))


def _slice_vjp(ct: Any, out: Any, x: Any, *, starts: Any, stops: Any, steps: Any) -> Any:
    padding = []
    for size, n, start, step in zip(x.shape, out.shape, starts, steps):
        # (the general case also holds for n == 0 when step == 1: a dynamic n may be 0)
        empty = n == 0 if not isinstance(n, Size) else step != 1 and not n >= 1
        if empty:
            padding.append((size, 0, 0))
        else:
            last = start + (n - 1) * step
            padding.append((start, size - last - 1, step - 1))
    return (zero_pad_p.bind(ct, padding=tuple(padding)),)


def _zero_pad_vjp(ct: Any, out: Any, x: Any, *, padding: Any) -> Any:
    starts, stops, steps = [], [], []
    for n, (lo, _hi, interior) in zip(x.shape, padding):
        starts.append(lo)
        stops.append(lo + max(n - 1, 0) * (interior + 1) + (1 if n >= 1 else 0))
        steps.append(interior + 1)
    return (slice_p.bind(ct, starts=tuple(starts), stops=tuple(stops), steps=tuple(steps)),)


register_vjp(slice_p, _slice_vjp)
register_vjp(zero_pad_p, _zero_pad_vjp)


def _pad_nvfuser(fd: Any, x: Any, *, padding: tuple[tuple[int, int, int], ...]) -> Any:
    # nvFuser's pad widths are (lo, hi) pairs from the last dim to the first, like F.pad's.
    widths = [w for lo, hi, _ in reversed(padding) for w in (lo, hi)]
    return fd.ops.pad(x, widths)


# Static bounds (starts, stops) are part of the cache key, so they may be constants. nvFuser
# slices with step 1 only, and pads without interior (between-element) padding: the other
# cases run in torch.
register_nvfuser(
    slice_p,
    lambda fd, x, *, starts, stops, steps: fd.ops.slice(x, list(starts), list(stops)),
    supports=lambda x, *, starts, stops, steps: all(step == 1 for step in steps),
)
register_nvfuser(
    zero_pad_p,
    _pad_nvfuser,
    supports=lambda x, *, padding: all(lo >= 0 and hi >= 0 and interior == 0 for lo, hi, interior in padding),
)


def _slice_dims(x: Tensor, bounds: dict[int, builtins.slice]) -> Tensor:
    """``x`` sliced along some dims by Python slices with static int/None bounds."""
    starts, stops, steps = [], [], []
    for d, size in enumerate(x.shape):
        s = bounds.get(d, _slice(None))
        if s.step is not None and s.step <= 0:
            raise ValueError("step must be greater than zero")
        if isinstance(size, Size) or isinstance(s.start, Size) or isinstance(s.stop, Size):
            start, stop, step = _symbolic_indices(s, size)
        else:
            start, stop, step = s.indices(size)
        stop = max(stop, start)
        starts.append(start)
        stops.append(stop)
        steps.append(step)
    if all(a == 0 and b == n and c == 1 for a, b, c, n in zip(starts, stops, steps, x.shape)):
        return x
    return slice_p.bind(x, starts=tuple(starts), stops=tuple(stops), steps=tuple(steps))


def _symbolic_indices(s: builtins.slice, size: Any) -> tuple[Any, Any, int]:
    """``slice.indices(size)`` (positive step) where the size or a bound is a dynamic size:
    each comparison is decided by the declared ranges or raises ``SizeDecisionError``."""

    def clamp(v: Any) -> Any:
        if v < 0:
            v = v + size
            return 0 if v < 0 else v
        return size if v > size else v

    start = 0 if s.start is None else clamp(s.start)
    stop = size if s.stop is None else clamp(s.stop)
    return start, stop, 1 if s.step is None else s.step


@defop
def narrow(x: Tensor, dim: StaticInt, start: StaticInt, length: StaticInt) -> Tensor:
    """Elements ``start .. start + length`` of dim ``dim`` (``start`` may be negative)."""
    d = canonical_dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    begin = start % size if start < 0 else start
    if length < 0 or begin + length > size:
        raise RuntimeError(f"start ({begin}) + length ({length}) exceeds dimension size ({size}).")
    return _slice_dims(x, {d: _slice(begin, begin + length)})


@implements(torch.narrow, torch.Tensor.narrow)
def _torch_narrow(input: Tensor, dim: StaticInt, start: StaticInt, length: StaticInt) -> Tensor:
    # (`start` is static when a number; torch also takes a 0-d integer tensor there)
    at: Any = start
    if isinstance(at, TensorProxy):
        return _narrow_at(input, dim, at, length)
    if not isinstance(start, (int, Size)):
        raise UnsupportedOperationError(f"narrow(): `start` must be a static int, got {type(start).__name__}")
    return narrow(input, dim, start, length)


def _narrow_at(input: Tensor, dim: StaticInt, start: Any, length: StaticInt) -> Tensor:
    """``narrow`` at a 0-d integer tensor ``start`` (eager reads its value): the elements at
    ``start + arange(length)``, gathered when the program runs (a start out of range raises
    there, as ``index_select`` does). Eager's result is a view, this one a copy, so neither
    it nor ``input`` may be updated in place afterwards (refused: an alias would not see it)."""
    if start.ndim != 0 or start.dtype.is_floating_point or start.dtype in (torch.bool, torch.complex64):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    if not isinstance(length, int) or length < 0:
        raise RuntimeError(f"narrow(): length must be a non-negative static int, got {length!r}")
    d = canonical_dim(dim, input.ndim)
    begin = torch.where(start < 0, start + input.shape[d], start)
    index = torch.arange(length, device=input.device) + begin.to(device=input.device)
    return mark_aliased(input, torch.index_select(input, d, index))


_Out = typing.TypeVar("_Out")


def mark_aliased(input: Any, out: _Out) -> _Out:
    """``out``, traced as a copy of part of ``input`` where eager returns a view of it: neither
    may be updated in place (the update would not reach the other, as it does in eager).
    Returns ``out``."""
    tracer = current_tracer.get()
    if isinstance(tracer, TraceBuilder) and isinstance(input, TensorProxy) and isinstance(out, TensorProxy):
        tracer.inplace.aliased.update((input._var, out._var))
    return out


@defop(torch=(torch.select, torch.Tensor.select))
def select(input: Tensor, dim: StaticInt, index: StaticInt) -> Tensor:
    """Element ``index`` (may be negative) of dim ``dim``, that dim removed."""
    d = canonical_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {size} at dimension {d}")
    i = index + size if index < 0 else index  # (index % size, where the size may be dynamic)
    return squeeze(_slice_dims(input, {d: _slice(i, i + 1)}), d)


# ---- basic indexing: x[1, :, None, ..., ::2]
def _sizes_in_index(item: Any) -> Any:
    """An index with its size symbols (``x[:, :T]``) as their normal forms (``sizes.Size``)."""
    if isinstance(item, _slice):
        start, stop, step = (size_ops.to_static(b)[1] for b in (item.start, item.stop, item.step))
        return _slice(start, stop, step)
    return size_ops.to_static(item)[1]


def _check_index_item(item: Any, op: str) -> None:
    if isinstance(item, Size):
        return
    if isinstance(item, NumberProxy):
        raise StaticValueRequiredError(static_message(op, "indices", item))
    if isinstance(item, _slice):
        for bound in (item.start, item.stop, item.step):
            if isinstance(bound, NumberProxy):
                raise StaticValueRequiredError(static_message(op, "indices", bound))
            if isinstance(bound, Size):
                continue
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
                raise UnsupportedOperationError(
                    f"Tensor.__getitem__: slice bounds must be static ints or None, got {bound!r}"
                )
        return
    if item is None or item is Ellipsis or (isinstance(item, int) and not isinstance(item, bool)):
        return
    raise UnsupportedOperationError(
        f"Tensor.__getitem__ with a {type(item).__name__} index is not supported on traced "
        "values: only basic indexing (static ints, slices, None, ...) is; tensor, list and bool "
        "indices (advanced indexing) are not"
    )


@defop
def getitem(x: Tensor, indices: Any) -> Tensor:
    """Basic indexing ``x[indices]`` with static ints, slices, None and Ellipsis."""
    return basic_getitem(x, indices, "symscalar.ops.getitem")


def basic_getitem(x: Tensor, indices: Any, op: str) -> Tensor:
    """Basic indexing, with errors naming the spelling ``op`` the user wrote (shared by
    ``getitem`` and ``Tensor.__getitem__``, which sends advanced indices elsewhere)."""
    items = indices if isinstance(indices, tuple) else (indices,)
    if size_ops.is_on():
        items = tuple(_sizes_in_index(i) for i in items)
    for item in items:
        _check_index_item(item, op)
    consuming = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consuming > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    bounds: dict[int, builtins.slice] = {}
    out_shape: list[int] = []  # the sliced dim each result dim comes from; -1: a new dim
    dim = 0
    expanded = False  # as torch: the first ellipsis takes the unindexed dims, later ones none
    for item in items:
        if item is Ellipsis:
            for _ in range(0 if expanded else x.ndim - consuming):
                out_shape.append(dim)
                dim += 1
            expanded = True
        elif item is None:
            out_shape.append(-1)
        elif isinstance(item, (int, Size)):
            size = x.shape[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size {size}")
            i = item + size if item < 0 else item
            bounds[dim] = _slice(i, i + 1)
            dim += 1
        else:
            bounds[dim] = item
            out_shape.append(dim)
            dim += 1
    out_shape.extend(range(dim, x.ndim))
    sliced = _slice_dims(x, bounds)
    return reshape(sliced, tuple(1 if d == -1 else sliced.shape[d] for d in out_shape))


# torch.Tensor.__getitem__ is registered in indexing.py: basic indexing goes to basic_getitem,
# integer-tensor (advanced) indexing to indexing.index.


# ---- flip
def _flip_impl(x: Any, *, dims: tuple[int, ...]) -> Any:
    return torch.flip(x, dims)


flip_p = Primitive("flip", _flip_impl, small_meta(_flip_impl, same_shape))
register_vjp(flip_p, lambda ct, out, x, *, dims: (ct.flip(dims),))


def _flip_nvfuser(fd: Any, x: Any, *, dims: tuple[int, ...]) -> Any:
    # nvFuser has no flip: gather along each dim with the indices n-1, n-2, ..., 0 (iota of the
    # symbolic size, so the fusion fits any size).
    for d in dims:
        n = fd.ops.size(x, d)
        x = fd.ops.index_select(x, fd.ops.iota(n, fd.ops.sub(n, 1), -1), d)
    return x


register_nvfuser(flip_p, _flip_nvfuser)


@defop(torch=(torch.flip,))
def flip(input: Tensor, dims: StaticShape) -> Tensor:
    """Reverse the order of the elements along each of ``dims``."""
    canon = tuple(sorted(canonical_dim(d, input.ndim) for d in dims))
    if len(set(canon)) != len(canon):
        raise RuntimeError(f"flip(): dims {tuple(dims)} has a repeated dim")
    if not canon or input.ndim == 0:
        return input
    return flip_p.bind(input, dims=canon)


@implements(torch.Tensor.flip)
def _tensor_flip(input: Tensor, *dims: StaticInt | StaticShape, **keywords: Any) -> Tensor:
    return flip(input, shape_arg("torch.Tensor.flip", "dims", dims, keywords))


# ---- clone, contiguous, detach: new values as eager makes them. The torch lowering calls the
# same method, so aliasing and layout equal eager's: clone is a new tensor, contiguous is
# the input itself when it is already contiguous (and a contiguous copy of a transposed
# input otherwise), detach shares the storage without a gradient.
def _clone_impl(x: Any, *, memory_format: torch.memory_format) -> Any:
    return torch.clone(x, memory_format=memory_format)


def _contiguous_impl(x: Any, *, memory_format: torch.memory_format) -> Any:
    return x.contiguous(memory_format=memory_format)


def _same_meta(x: TensorVar, **params: Any) -> TensorVar:
    return TensorVar(x.shape, x.dtype, x.device)


clone_p = Primitive("clone", _clone_impl, _same_meta)
register_vjp(clone_p, lambda ct, out, x, *, memory_format: (ct,))
register_nvfuser(clone_p, lambda fd, x, *, memory_format: fd.ops.set(x))
contiguous_p = Primitive("contiguous", _contiguous_impl, _same_meta, may_alias=True)  # the input when contiguous
register_vjp(contiguous_p, lambda ct, out, x, *, memory_format: (ct,))
register_nvfuser(contiguous_p, lambda fd, x, *, memory_format: fd.ops.set(x))


@defop
def clone(x: Tensor, memory_format: torch.memory_format = torch.preserve_format) -> Tensor:
    """A new tensor with ``x``'s values (never ``x`` itself)."""
    return clone_p.bind(x, memory_format=memory_format)


@defop(torch=(torch.Tensor.contiguous,))
def contiguous(input: Tensor, memory_format: torch.memory_format = torch.contiguous_format) -> Tensor:
    """``input`` in contiguous memory: ``input`` itself when it already is, as in eager."""
    return contiguous_p.bind(input, memory_format=memory_format)


@defop(torch=(torch.detach, torch.Tensor.detach))
def detach(input: Tensor) -> Tensor:
    """``input``'s values without a gradient (``stop_gradient``)."""
    return stop_gradient_p.bind(input)


@implements(torch.Tensor.requires_grad_)
def _requires_grad_(input: Tensor, requires_grad: StaticBool = True) -> Tensor:
    """A computed value becomes a leaf that requires grad, as in eager (see
    ``GradRegions.set_requires_grad``); the same proxy is returned."""
    if isinstance(input, TensorProxy):
        input._set_requires_grad_flag(requires_grad, attribute=False)
    return input


@implements(torch.clone, torch.Tensor.clone)
def _torch_clone(input: Tensor, *, memory_format: torch.memory_format = torch.preserve_format) -> Tensor:
    return clone(input, memory_format)
