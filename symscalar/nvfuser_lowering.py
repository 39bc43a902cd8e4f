"""The nvFuser backend's lowering table and the helpers its lowerings share.

Why a table here rather than a field of ``Primitive``: a lowering belongs to its backend
(JAX's ``mlir.register_lowering``), and the core IR knows nothing of nvFuser. Each op
registers its lowering with ``register_nvfuser`` next to its primitive, in ``ops/``; this
module sits below ``ops/`` so they can, and ``nvfuser_backend.py`` reads ``NVFUSER_LOWERINGS``.
A few needs recur (only floating tensors, reduce low-precision floats in float32, re-insert
reduced dims): the helpers below. Nothing here imports nvfuser_direct: lowerings work on the
``FusionDefinition`` and ``TensorView``\\ s the backend passes in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from symscalar.trace import Primitive, Registry, TensorVar

__all__ = [
    "NvFuserLowering",
    "NVFUSER_LOWERINGS",
    "register_nvfuser",
    "floating",
    "has_axes",
    "floating_reduction",
    "upcast",
    "unreduce",
    "numel",
    "is_broadcast",
]


@dataclasses.dataclass(frozen=True)
class NvFuserLowering:
    """How nvFuser runs one primitive."""

    lower: Callable[..., Any]  # lower(fd, *args, **params) -> TensorView(s), args lowered
    # supports(*atoms, **params) -> bool: whether ``lower`` handles this equation (None:
    # always); where it says no, the equation runs in torch
    supports: Callable[..., bool] | None = None


NVFUSER_LOWERINGS: Registry[Primitive[Any], NvFuserLowering] = Registry("nvFuser lowering of primitive")


def register_nvfuser(
    prim: Primitive[Any], lower: Callable[..., Any], *, supports: Callable[..., bool] | None = None
) -> None:
    """Register ``prim``'s nvFuser lowering (once; a second registration raises)."""
    NVFUSER_LOWERINGS.register(prim, NvFuserLowering(lower, supports))


def floating(*atoms: Any, **params: Any) -> bool:
    """Predicate: every tensor operand is floating point (integer and bool inputs, whose
    results torch promotes or special-cases, run in torch)."""
    return all(a.dtype.is_floating_point for a in atoms if isinstance(a, TensorVar))


def has_axes(x: Any, *, dims: Sequence[int] = (), dim: int | None = None, **params: Any) -> bool:
    """Predicate for reductions: nvFuser needs at least one reduction axis, so a 0-d tensor
    "reduced" over no dims runs in torch."""
    return x.ndim > 0 and (dim is not None or bool(dims))


def floating_reduction(x: Any, **params: Any) -> bool:
    """Predicate: a reduction with axes of a floating tensor."""
    return has_axes(x, **params) and floating(x)


def upcast(fd: Any, x: Any) -> Any:
    """``x`` in float32 if it is float16/bfloat16 (as torch reduces and normalizes them), else
    ``x``. The backend casts the result back to the trace's dtype."""
    data_type = type(x.dtype())  # nvFuser's DataType enum, without importing nvfuser_direct
    if x.dtype() in (data_type.Half, data_type.BFloat16):
        return fd.ops.cast(x, data_type.Float)
    return x


def unreduce(fd: Any, t: Any, dims: Sequence[int], ndim: int) -> Any:
    """A reduction's result (keepdim=False) with its reduced dims back as broadcast dims."""
    return fd.ops.broadcast(t, [i in dims for i in range(ndim)])


def numel(fd: Any, x: Any, dims: Sequence[int]) -> Any:
    """How many elements a reduction over ``dims`` reduces, as an nvFuser scalar computed from
    the symbolic sizes (a constant would tie the fusion to one batch size)."""
    count = fd.ops.size(x, dims[0])
    for d in dims[1:]:
        count = fd.ops.mul(count, fd.ops.size(x, d))
    return count


def is_broadcast(x: Any, dim: int) -> bool:
    """Whether dim ``dim`` of TensorView ``x`` is a broadcast dim (a size-1 input dim, or one
    made by broadcast/expand): nvFuser prints its IterDomains as ``bS..`` (``iS..`` otherwise),
    and its Python API has no other way to ask."""
    return str(x.get_logical_domain()[dim]).startswith("b")
