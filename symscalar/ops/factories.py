"""Tensor factories and dtype conversion. Shapes are static; fill values may be dynamic."""

from __future__ import annotations

from typing import Any

import torch

from symscalar.ops.common import Tensor, torch_meta
from symscalar.trace import Primitive
from symscalar.tracing import defop, implements
from symscalar.types import NumberLike, StaticShape

__all__ = ["full", "zeros_like", "to"]


# ---- full
def _full_impl(fill: Any, *, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> Any:
    return torch.full(shape, fill, dtype=dtype, device=device)


full_p = Primitive("full", _full_impl, torch_meta(_full_impl))
full_p.nvfuser = lambda fd, fill, *, shape, dtype, device: fd.ops.full(shape, fill, dtype)


@defop
def full(
    shape: StaticShape,
    fill_value: NumberLike,
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (which may be dynamic)."""
    if dtype is None:
        dtype = _default_dtype(fill_value)
    device = torch.device(device) if device is not None else torch.device("cpu")
    return full_p.bind(fill_value, shape=tuple(shape), dtype=dtype, device=device)  # type: ignore[no-any-return]


def _default_dtype(fill: Any) -> torch.dtype:
    python_type = getattr(fill, "_python_type", type(fill))
    if python_type is bool:
        return torch.bool
    if python_type is int:
        return torch.int64
    return torch.get_default_dtype()


@implements(torch.full)
def _torch_full(
    size: StaticShape,
    fill_value: NumberLike,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return full(size, fill_value, dtype=dtype, device=device)


@defop
def zeros_like(x: Tensor, *, dtype: torch.dtype | None = None) -> Tensor:
    """Zeros with ``x``'s shape, device and (by default) dtype."""
    return full(x.shape, 0, dtype=dtype or x.dtype, device=x.device)


@implements(torch.zeros_like)
def _torch_zeros_like(input: Tensor, *, dtype: torch.dtype | None = None, **_: Any) -> Tensor:
    return zeros_like(input, dtype=dtype)


# ---- dtype conversion
def _convert_impl(x: Any, *, dtype: torch.dtype) -> Any:
    return x.to(dtype)


convert_element_type_p = Primitive("convert_element_type", _convert_impl, torch_meta(_convert_impl))
convert_element_type_p.vjp = lambda ct, out, x, *, dtype: (ct.to(x.dtype),)
convert_element_type_p.nvfuser = lambda fd, x, *, dtype: fd.ops.cast(x, dtype)


@defop
def to(x: Tensor, dtype: torch.dtype) -> Tensor:
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    if x.dtype == dtype:
        return x
    return convert_element_type_p.bind(x, dtype=dtype)  # type: ignore[no-any-return]


@implements(torch.Tensor.to)
def _tensor_to(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, (str, torch.device)):
            device = a
        else:
            raise TypeError(f"Tensor.to({a!r}): expected a dtype or a device")
    if device is not None and torch.device(device) != input.device:
        raise NotImplementedError(
            "Tensor.to(device) inside a jitted function is not supported: move the inputs "
            "before the call"
        )
    return to(input, dtype) if dtype is not None else input


@implements(torch.Tensor.float)
def _tensor_float(input: Tensor) -> Tensor:
    return to(input, torch.float32)


@implements(torch.Tensor.double)
def _tensor_double(input: Tensor) -> Tensor:
    return to(input, torch.float64)
