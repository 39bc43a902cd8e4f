"""Tensor factories and dtype conversion. Shapes are static; fill values may be dynamic.

A factory call whose arguments are all static and which has no tensor argument
(``torch.zeros(2, 3)``) never reaches the tracer: torch runs it eagerly and the jit captures the
result as a constant. Such calls reach these handlers only when an argument is traced, and a
dynamic number in a shape or an ``arange`` bound is then reported as static-required.
"""

from __future__ import annotations

import fractions
from collections.abc import Callable
from typing import Any

import torch

from symscalar import size_guards
from symscalar.ops.define import (
    NumberLike,
    Primitive,
    StaticFloat,
    StaticInt,
    StaticShape,
    Tensor,
    TensorProxy,
    UnsupportedOperationError,
    defop,
    implements,
    register_nvfuser,
    register_vjp,
    torch_meta,
)
from symscalar.ops.shape import contiguous, expand, reshape, shape_arg
from symscalar.sizes import Size


def factory_options(
    name: str, layout: Any = None, requires_grad: Any = False, pin_memory: Any = False, memory_format: Any = None
) -> None:
    """Every keyword of a torch factory that symscalar does not model raises here instead of
    being dropped (a handler that accepted ``requires_grad=True`` and ignored it returned a
    tensor that does not require grad; ``layout=torch.sparse_coo`` a strided one)."""
    if layout is not None and layout is not torch.strided:
        raise UnsupportedOperationError(
            f"{name}(..., layout={layout}) inside a jitted function is not supported: traced "
            "programs create strided tensors only. Fix: create the tensor outside the jitted "
            "function and pass it in, or omit layout."
        )
    if requires_grad:
        raise UnsupportedOperationError(
            f"{name}(..., requires_grad=True) inside a jitted function is not supported: the new "
            "tensor would be a leaf of a graph that exists only inside the program. Fix: create it "
            "outside the jitted function (a parameter, or an argument), or return it and call "
            ".requires_grad_() on the result."
        )
    if pin_memory:
        raise UnsupportedOperationError(
            f"{name}(..., pin_memory=True) inside a jitted function is not supported. Fix: create "
            "the tensor outside the jitted function, or call .pin_memory() on the result."
        )
    if memory_format not in (None, torch.preserve_format, torch.contiguous_format):
        raise UnsupportedOperationError(
            f"{name}(..., memory_format={memory_format}) inside a jitted function is not "
            "supported: traced programs create contiguous tensors. Fix: omit memory_format, or "
            "call .contiguous(memory_format=...) on the result outside the jitted function."
        )


__all__ = [
    "full",
    "zeros",
    "ones",
    "full_like",
    "zeros_like",
    "ones_like",
    "arange",
    "to",
]


# ---- full
def _full_impl(fill: Any, *, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> Any:
    return torch.full(shape, fill, dtype=dtype, device=device)


full_p = Primitive("full", _full_impl, torch_meta(_full_impl), size_params=("shape",))
register_nvfuser(full_p, lambda fd, fill, *, shape, dtype, device: fd.ops.full(shape, fill, dtype))


@defop
def full(
    shape: StaticShape,
    fill_value: NumberLike | Tensor,
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (which may be dynamic, or a 0-d
    tensor as torch accepts: then the fill is broadcast, not read at trace time)."""
    if isinstance(fill_value, (torch.Tensor, TensorProxy)):
        return _full_from_tensor(tuple(shape), fill_value, dtype)
    if dtype is None:
        dtype = _default_dtype(fill_value)
    device = torch.device(device) if device is not None else torch.device("cpu")
    return full_p.bind(fill_value, shape=tuple(shape), dtype=dtype, device=device)


def _full_from_tensor(shape: tuple[int, ...], fill: Any, dtype: torch.dtype | None) -> Tensor:
    if fill.ndim != 0:
        raise RuntimeError(
            f"full(): fill_value must be a number or a 0-d tensor, got a tensor of shape {tuple(fill.shape)}"
        )
    if dtype is None:  # torch reads the value with .item(): its Python type decides
        if fill.dtype == torch.bool:
            dtype = torch.bool
        elif fill.dtype.is_floating_point or fill.dtype.is_complex:
            dtype = torch.get_default_dtype()
        else:
            dtype = torch.int64
    return expand(reshape(to(fill, dtype), (1,) * len(shape)), shape)


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
    fill_value: NumberLike | Tensor,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    factory_options("torch.full", layout, requires_grad, pin_memory)
    return full(size, fill_value, dtype=dtype, device=device)


@defop
def zeros(
    *size: StaticInt | StaticShape, dtype: torch.dtype | None = None, device: torch.device | str | None = None
) -> Tensor:
    """Zeros of shape ``size`` (``zeros(2, 3)`` or ``zeros((2, 3))``), default dtype float."""
    shape = shape_arg("symscalar.ops.zeros", "size", size, {})
    return full(shape, 0, dtype=dtype or torch.get_default_dtype(), device=device)


@defop
def ones(
    *size: StaticInt | StaticShape, dtype: torch.dtype | None = None, device: torch.device | str | None = None
) -> Tensor:
    """Ones of shape ``size`` (``ones(2, 3)`` or ``ones((2, 3))``), default dtype float."""
    shape = shape_arg("symscalar.ops.ones", "size", size, {})
    return full(shape, 1, dtype=dtype or torch.get_default_dtype(), device=device)


def _torch_filled(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The handler of ``torch.zeros``/``torch.ones`` (sizes as varargs or one sequence)."""

    def handler(
        *size: StaticInt | StaticShape,
        dtype: torch.dtype | None = None,
        device: Any = None,
        layout: Any = None,
        requires_grad: bool = False,
        pin_memory: bool = False,
        **keywords: Any,
    ) -> Tensor:
        factory_options(name, layout, requires_grad, pin_memory)
        return op(shape_arg(name, "size", size, keywords), dtype=dtype, device=device)

    return handler


implements(torch.zeros)(_torch_filled("torch.zeros", zeros))
implements(torch.ones)(_torch_filled("torch.ones", ones))


@defop
def full_like(
    x: Tensor,
    fill_value: NumberLike,
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """A tensor with ``x``'s shape, device and (by default) dtype, filled with
    ``fill_value`` (which may be dynamic)."""
    return full(tuple(x.shape), fill_value, dtype=dtype or x.dtype, device=device or x.device)


@defop
def zeros_like(x: Tensor, *, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Tensor:
    """Zeros with ``x``'s shape, device and (by default) dtype."""
    return full_like(x, 0, dtype=dtype, device=device)


@defop
def ones_like(x: Tensor, *, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Tensor:
    """Ones with ``x``'s shape, device and (by default) dtype."""
    return full_like(x, 1, dtype=dtype, device=device)


@implements(torch.full_like)
def _torch_full_like(
    input: Tensor,
    fill_value: NumberLike,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    factory_options("torch.full_like", layout, requires_grad, pin_memory, memory_format)
    return full_like(input, fill_value, dtype=dtype, device=device)


def _torch_filled_like(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The handler of ``torch.zeros_like``/``torch.ones_like``."""

    def handler(
        input: Tensor,
        *,
        dtype: torch.dtype | None = None,
        device: Any = None,
        layout: Any = None,
        requires_grad: bool = False,
        pin_memory: bool = False,
        memory_format: Any = None,
    ) -> Tensor:
        factory_options(name, layout, requires_grad, pin_memory, memory_format)
        return op(input, dtype=dtype, device=device)

    return handler


implements(torch.zeros_like)(_torch_filled_like("torch.zeros_like", zeros_like))
implements(torch.ones_like)(_torch_filled_like("torch.ones_like", ones_like))


@implements(torch.Tensor.new_full)
def _tensor_new_full(
    input: Tensor,
    size: StaticShape,
    fill_value: NumberLike,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    factory_options("torch.Tensor.new_full", layout, requires_grad, pin_memory)
    return full(size, fill_value, dtype=dtype or input.dtype, device=device or input.device)


def _tensor_new_filled(name: str, fill: int) -> Callable[..., Tensor]:
    """The handler of ``Tensor.new_zeros``/``Tensor.new_ones``: ``input``'s dtype and device
    unless given."""

    def handler(
        input: Tensor,
        *size: StaticInt | StaticShape,
        dtype: torch.dtype | None = None,
        device: Any = None,
        layout: Any = None,
        requires_grad: bool = False,
        pin_memory: bool = False,
        **keywords: Any,
    ) -> Tensor:
        factory_options(name, layout, requires_grad, pin_memory)
        shape = shape_arg(name, "size", size, keywords)
        return full(shape, fill, dtype=dtype or input.dtype, device=device or input.device)

    return handler


implements(torch.Tensor.new_zeros)(_tensor_new_filled("torch.Tensor.new_zeros", 0))
implements(torch.Tensor.new_ones)(_tensor_new_filled("torch.Tensor.new_ones", 1))


# ---- empty, empty_like, new_empty: uninitialized memory may hold any values, and the program's
# hold zeros (a valid instance, the same on every call): what code does with them next (timm's
# drop_path fills `x.new_empty(shape).bernoulli_(p)`, a buffer is written before it is read)
# then behaves as in eager
@implements(torch.empty)
def _torch_empty(
    *size: StaticInt | StaticShape,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
    **keywords: Any,
) -> Tensor:
    factory_options("torch.empty", layout, requires_grad, pin_memory, memory_format)
    return _fresh(full(shape_arg("torch.empty", "size", size, keywords), 0, dtype=dtype, device=device))


@implements(torch.empty_like)
def _torch_empty_like(
    input: Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    factory_options("torch.empty_like", layout, requires_grad, False, memory_format)
    return _fresh(full(tuple(input.shape), 0, dtype=dtype or input.dtype, device=device or input.device))


def _fresh(value: Tensor) -> Tensor:
    """A tensor of its own (``full`` broadcasts one number, a view): one that code may fill in
    place, as it fills eager's empty tensors."""
    return value.clone() if isinstance(value, TensorProxy) else value


_new_zeros = _tensor_new_filled("torch.Tensor.new_empty", 0)


@implements(torch.Tensor.new_empty)
def _tensor_new_empty(input: Tensor, *size: StaticInt | StaticShape, **kwargs: Any) -> Tensor:
    return _fresh(_new_zeros(input, *size, **kwargs))


# ---- arange
def _arange_impl(
    *, start: int | float, end: int | float, step: int | float, dtype: torch.dtype | None, device: torch.device
) -> Any:
    return torch.arange(start, end, step, dtype=dtype, device=device)


arange_p = Primitive("arange", _arange_impl, torch_meta(_arange_impl))


def _arange_nvfuser(fd: Any, *, start: int, end: int, step: int, dtype: Any, device: Any) -> Any:
    length = len(range(start, end, step))
    return fd.ops.iota(fd.define_scalar(length), fd.define_scalar(start), fd.define_scalar(step), dtype)


def _integer_range(*, start: Any, end: Any, step: Any, dtype: torch.dtype, device: Any) -> bool:
    """Integer ranges only: torch computes float ranges in its own precision, which iota
    need not match."""
    bounds_are_ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step))
    return bounds_are_ints and dtype in (torch.int64, torch.int32)


register_nvfuser(arange_p, _arange_nvfuser, supports=_integer_range)


@defop
def arange(
    start: StaticInt | StaticFloat,
    end: StaticInt | StaticFloat | None = None,
    step: StaticInt | StaticFloat = 1,
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """``start, start + step, ...`` up to ``end`` (excluded); ``arange(n)`` is ``0 .. n-1``.
    int64 when every bound is an int, else the default float dtype (as torch)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        # (a dynamic size is an int)
        is_int = all(isinstance(v, (int, Size)) and not isinstance(v, bool) for v in (start, end, step))
        dtype = torch.int64 if is_int else torch.get_default_dtype()
    device = torch.device(device) if device is not None else torch.device("cpu")
    if type(step) is float and any(isinstance(v, Size) for v in (start, end)):
        _check_float_step(start, end, step, dtype)
    return arange_p.bind(start=start, end=end, step=step, dtype=dtype, device=device)


# Eager's length of a float range is ceil(fl((end - start) / step)), computed in double.
_EXACT_BELOW = 2**53


def float_step_fraction(step: float) -> fractions.Fraction:
    """``step`` as the exact fraction ``a / b`` it is in binary."""
    return fractions.Fraction(step)


def _check_float_step(start: Any, end: Any, step: float, dtype: torch.dtype) -> None:
    """Whether one program gives eager's length for ``arange(start, end, step)`` at every size:
    with int or size bounds ``D = end - start`` is an integer and the step the binary fraction
    ``a / b``, so the exact quotient ``D * b / a`` is an integer or at least ``1 / a`` from one,
    while double's rounding moves it by at most ``D * b / a * 2**-53``: below ``2**53 / b`` the
    ceiling is exact, ``(D * b + a - 1) // a`` for every D. A step that is no short binary
    fraction (0.1 is ``3602879701896397 / 2**55``) has no such bound: refused. Where the ranges
    do not bound D, the program records the size guard ``D * b < 2**53``."""
    fraction = float_step_fraction(step)
    where = f"torch.arange({start!r}, {end!r}, {step!r})"
    if not dtype.is_floating_point or fraction <= 0:
        raise UnsupportedOperationError(
            f"{where} with dtype={dtype} next to a dynamic size: only a positive float step of a floating "
            "range is supported there (eager's length rule for this case is not one of sizes). Declare the dim "
            "static, or use an integer step."
        )
    if not all(isinstance(v, (int, Size)) and not isinstance(v, bool) for v in (start, end)):
        raise UnsupportedOperationError(
            f"{where}: a float step next to a dynamic size needs int or size bounds (a float bound makes the "
            "length a rounding of the size in double). Shift an integer range instead "
            "(torch.arange(0, T, 0.5) + 0.25), or declare the dim static."
        )
    span = (end - start) * fraction.denominator
    if not isinstance(span, Size) or fraction.denominator >= _EXACT_BELOW:
        raise UnsupportedOperationError(
            f"{where}: the step {step!r} is not a short binary fraction (it is {fraction.numerator} / "
            f"{fraction.denominator} in binary), so eager's length ceil((end - start) / step), rounded in double, "
            "is not a formula of the sizes. Use a step that is a binary fraction (0.5, 0.25, 1.5), an integer range "
            "scaled afterwards, or declare the dim static."
        )
    asked = f"{where} (its length is a formula of the sizes for (end - start) * {fraction.denominator} < 2**53)"
    if not size_guards.guarded("lt", span, _EXACT_BELOW, asked):
        raise UnsupportedOperationError(
            f"{where}: (end - start) * {fraction.denominator} >= 2**53; declare the dim static"
        )


@implements(torch.arange)
def _torch_arange(
    start: StaticInt | StaticFloat,
    end: StaticInt | StaticFloat | None = None,
    step: StaticInt | StaticFloat = 1,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    factory_options("torch.arange", layout, requires_grad, pin_memory)
    return arange(start, end, step, dtype=dtype, device=device)


# ---- dtype conversion
def _convert_impl(x: Any, *, dtype: torch.dtype) -> Any:
    return x.to(dtype)


convert_element_type_p = Primitive("convert_element_type", _convert_impl, torch_meta(_convert_impl))
register_vjp(convert_element_type_p, lambda ct, out, x, *, dtype: (ct.to(x.dtype),))
register_nvfuser(convert_element_type_p, lambda fd, x, *, dtype: fd.ops.cast(x, dtype))


@defop
def to(x: Tensor, dtype: torch.dtype) -> Tensor:
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    if x.dtype == dtype:
        return x
    return convert_element_type_p.bind(x, dtype=dtype)


@implements(torch.Tensor.to)
def _tensor_to(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(other)``, each with torch's positional
    ``non_blocking`` and ``copy`` flags after them; ``memory_format=`` lays the result out so
    (the same values, but kernels after it, group_norm's and convolution's, pick their loops by
    the layout: eager's layout gives eager's rounding)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    flags = [kwargs.pop("non_blocking", False), kwargs.pop("copy", False)]
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"Tensor.to() got unexpected keyword arguments {sorted(kwargs)}")
    positional_flags = []
    for a in args:
        if isinstance(a, bool):
            positional_flags.append(a)
        elif isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, (str, torch.device)):
            device = a
        elif isinstance(a, (torch.Tensor, TensorProxy)):  # x.to(other)
            dtype, device = a.dtype, a.device
        else:
            raise TypeError(f"Tensor.to({a!r}): expected a dtype, a device, a tensor or the bool flags")
    if len(positional_flags) > 2:
        raise TypeError("Tensor.to() takes at most two bool flags (non_blocking, copy)")
    flags[: len(positional_flags)] = positional_flags
    if device is not None and torch.device(device) != input.device:
        raise UnsupportedOperationError(
            "Tensor.to(device) inside a jitted function is not supported: move the inputs before the call"
        )
    result = to(input, dtype) if dtype is not None else input
    if memory_format not in (None, torch.preserve_format):
        result = contiguous(result, memory_format)  # (``result`` itself when laid out so already)
    if flags[1] and result is input:  # copy=True: a new tensor even when nothing converts
        return input.clone()
    return result


@implements(torch.Tensor.float)
def _tensor_float(input: Tensor, memory_format: Any = None) -> Tensor:
    return to(input, torch.float32)


@implements(torch.Tensor.double)
def _tensor_double(input: Tensor, memory_format: Any = None) -> Tensor:
    return to(input, torch.float64)


def _conversion(dtype: torch.dtype) -> Any:
    def convert(input: Tensor, memory_format: Any = None) -> Tensor:
        return to(input, dtype)

    return convert


# x.long(), x.half()...: the conversions model code writes (HF's attention_mask.long())
for _method, _dtype in (
    (torch.Tensor.half, torch.float16),
    (torch.Tensor.bfloat16, torch.bfloat16),
    (torch.Tensor.long, torch.int64),
    (torch.Tensor.int, torch.int32),
    (torch.Tensor.short, torch.int16),
    (torch.Tensor.char, torch.int8),
    (torch.Tensor.byte, torch.uint8),
    (torch.Tensor.bool, torch.bool),
):
    implements(_method)(_conversion(_dtype))
del _method, _dtype
