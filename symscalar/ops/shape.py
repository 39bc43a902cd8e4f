"""Shape ops. Target shapes and dims are static: the output layout depends on them."""

from __future__ import annotations

from typing import Any

import torch

from symscalar.ops.common import Tensor, torch_meta, unbroadcast
from symscalar.trace import Primitive
from symscalar.tracing import defop, implements
from symscalar.types import StaticShape

__all__ = ["reshape", "expand"]


def _shape_arg(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """torch accepts ``x.reshape(2, 3)`` and ``x.reshape((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        return tuple(shape[0])
    return tuple(shape)


# ---- reshape
def _reshape_impl(x: Any, *, shape: tuple[int, ...]) -> Any:
    return torch.reshape(x, shape)


reshape_p = Primitive("reshape", _reshape_impl, torch_meta(_reshape_impl))
reshape_p.vjp = lambda ct, out, x, *, shape: (ct.reshape(x.shape),)
reshape_p.nvfuser = lambda fd, x, *, shape: fd.ops.reshape(x, shape)


@defop
def reshape(x: Tensor, shape: StaticShape) -> Tensor:
    """``x`` with a new shape of the same number of elements (one entry may be -1)."""
    return reshape_p.bind(x, shape=tuple(shape))  # type: ignore[no-any-return]


@implements(torch.reshape)
def _torch_reshape(input: Tensor, shape: StaticShape) -> Tensor:
    return reshape(input, shape)


@implements(torch.Tensor.reshape, torch.Tensor.view)
def _tensor_reshape(input: Tensor, *shape: Any) -> Tensor:
    return reshape(input, _shape_arg(shape))


# ---- expand (broadcast to a larger shape, size-1 dims repeated)
def _expand_impl(x: Any, *, shape: tuple[int, ...]) -> Any:
    return torch.broadcast_to(x, shape)


expand_p = Primitive("expand", _expand_impl, torch_meta(_expand_impl))
expand_p.vjp = lambda ct, out, x, *, shape: (unbroadcast(ct, x.shape),)
expand_p.nvfuser = lambda fd, x, *, shape: fd.ops.broadcast_in_dim(x, shape, list(range(len(shape) - x.ndim, len(shape))))


@defop
def expand(x: Tensor, shape: StaticShape) -> Tensor:
    """Broadcast ``x`` to ``shape`` (-1 keeps a size), like ``torch.broadcast_to``."""
    full = tuple(x.shape[i - (len(shape) - x.ndim)] if s == -1 else s for i, s in enumerate(shape))
    return expand_p.bind(x, shape=full)  # type: ignore[no-any-return]


@implements(torch.broadcast_to)
def _torch_broadcast_to(input: Tensor, size: StaticShape) -> Tensor:
    return expand(input, size)


@implements(torch.Tensor.expand)
def _tensor_expand(input: Tensor, *sizes: Any) -> Tensor:
    return expand(input, _shape_arg(sizes))
