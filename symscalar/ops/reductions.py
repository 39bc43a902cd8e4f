"""Reductions. ``dim`` and ``keepdim`` are static: nvFuser's reduction axes are constants and
the output rank depends on them."""

from __future__ import annotations

from typing import Any

import torch

from symscalar.ops.common import Tensor, canonical_dims, torch_meta
from symscalar.trace import Primitive
from symscalar.tracing import defop, implements
from symscalar.types import StaticBool, StaticDims

__all__ = ["sum"]


# ---- sum
def _sum_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: torch.dtype | None = None) -> Any:
    return torch.sum(x, dims, keepdim, dtype=dtype)


sum_p = Primitive("sum", _sum_impl, torch_meta(_sum_impl))


def _sum_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: Any = None) -> Any:
    kept = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    return (ct.reshape(kept).expand(x.shape),)


sum_p.vjp = _sum_vjp
sum_p.nvfuser = lambda fd, x, *, dims, keepdim, dtype=None: fd.ops.sum(x, dims, keepdim, *([dtype] if dtype else []))


@defop
def sum(  # noqa: A001 - torch's name
    x: Tensor, dim: StaticDims = None, keepdim: StaticBool = False, *, dtype: torch.dtype | None = None
) -> Tensor:
    """Sum over ``dim`` (an int, a tuple of ints, or None for all dims)."""
    dims = canonical_dims(dim, x.ndim)
    return sum_p.bind(x, dims=dims, keepdim=keepdim, dtype=dtype)  # type: ignore[no-any-return]


@implements(torch.sum, torch.Tensor.sum)
def _torch_sum(
    input: Tensor, dim: StaticDims = None, keepdim: StaticBool = False, *, dtype: torch.dtype | None = None
) -> Tensor:
    return sum(input, dim, keepdim, dtype=dtype)
