"""Convolution, pooling and batch normalization: the vision layers.

``convolution``, ``max_pool2d``, ``avg_pool2d`` and ``adaptive_avg_pool2d`` are primitives
whose torch lowering is torch's own kernel and whose vjp is a second primitive running torch's
own backward kernel (``aten.convolution_backward``...), so values and gradients are eager's.
Their geometry (stride, padding, dilation, groups, kernel and output sizes, ceil_mode) is
static: it decides the output shape. nvFuser has no convolution or windowed pooling op, so
these run in torch (the lowering tests' allow-list says so). Their backward primitives have no
vjp: a second derivative through them raises symscalar's "no gradient rule" error.

``batch_norm`` with a static ``eps`` normalizes with torch's kernels too, in training mode
(``native_batch_norm`` and its backward: gradients eager's to the bit, which bfloat16 needs,
see ``_batch_norm_impl``) and in evaluation mode (``_batch_norm_eval_impl``: eager folds the
statistics into a scale and a shift); with a dynamic ``eps`` it is a composite of reductions
and elementwise ops (its gradient comes from the parts). ``momentum`` may be dynamic. In
training mode it updates the running statistics as eager does, through
``TraceBuilder.write_back``: the new values are outputs of the program, written into the
buffers after every call. On nvFuser the evaluation-mode kernels lower (they fuse); the
training-mode ones run in torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from symscalar import size_guards
from symscalar.ops.define import (
    FloatLike,
    Primitive,
    StaticBool,
    StaticInt,
    StaticShape,
    Tensor,
    TensorProxy,
    TensorVar,
    TraceBuilder,
    UnsupportedOperationError,
    current_tracer,
    defop,
    implements,
    is_static,
    register_nvfuser,
    register_vjp,
    torch_meta,
    upcast,
)
from symscalar.ops.opaque import opaque_handler
from symscalar.ops.shape import zero_pad_p
from symscalar.size_ops import size_proxy
from symscalar.sizes import Size

__all__ = [
    "convolution",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "batch_norm",
]

aten = torch.ops.aten


def _ntuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """An int or a sequence of ``n`` ints as a tuple of ``n`` ints (torch's ``_ntuple``)."""
    if isinstance(value, int):
        return (value,) * n
    items: tuple[int, ...] = tuple(value)
    if len(items) == 1:
        return items * n
    if len(items) != n:
        raise RuntimeError(f"expected {name} to be a single integer or a list of {n} integers, got {list(items)}")
    return items


# ---- convolution: torch's kernel, bias included (as eager adds it)
def _conv_impl(x: Any, w: Any, b: Any, *, stride: Any, padding: Any, dilation: Any, groups: int) -> Any:
    return aten.convolution(x, w, b, stride, padding, dilation, False, (0,) * len(stride), groups)


def _conv_backward_impl(
    ct: Any, x: Any, w: Any, *, stride: Any, padding: Any, dilation: Any, groups: int, bias: bool
) -> Any:
    grads = aten.convolution_backward(
        ct,
        x,
        w,
        [w.shape[0]] if bias else None,
        stride,
        padding,
        dilation,
        False,
        (0,) * len(stride),
        groups,
        [True, True, bias],
    )
    return tuple(grads[: 3 if bias else 2])


convolution_p = Primitive("convolution", _conv_impl, torch_meta(_conv_impl))
convolution_backward_p = Primitive(
    "convolution_backward", _conv_backward_impl, torch_meta(_conv_backward_impl), multiple_results=True
)
register_vjp(
    convolution_p,
    lambda ct, out, x, w, b, **geometry: convolution_backward_p.bind(ct, x, w, bias=b is not None, **geometry),
)


@defop
def convolution(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: StaticInt | StaticShape = 1,
    padding: StaticInt | StaticShape = 0,
    dilation: StaticInt | StaticShape = 1,
    groups: StaticInt = 1,
) -> Tensor:
    """N-d convolution (cross-correlation) as ``F.conv1d``/``F.conv2d``/``F.conv3d``, the
    dimensionality given by ``weight``; ``padding`` may also be ``"same"`` or ``"valid"``.
    An input without a batch dim is accepted, as torch does."""
    n = weight.ndim - 2
    if n < 1:
        raise RuntimeError(f"conv: weight must have at least 3 dims, got shape {list(weight.shape)}")
    unbatched = x.ndim == n + 1
    if unbatched:
        x = x.unsqueeze(0)
    stride_t, dilation_t = _ntuple(stride, n, "stride"), _ntuple(dilation, n, "dilation")
    x, padding_t = _conv_padding(x, weight, padding, stride_t, dilation_t)
    _check_output_length(x, weight, padding_t, stride_t, dilation_t)
    out = convolution_p.bind(x, weight, bias, stride=stride_t, padding=padding_t, dilation=dilation_t, groups=groups)
    return out.squeeze(0) if unbatched else out


def conv_output_size(size: Any, kernel: int, padding: int, stride: int, dilation: int) -> Any:
    """The output length of a convolution over a dim of ``size`` (an int or a dynamic size)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _check_output_length(
    x: Tensor, weight: Tensor, padding: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...]
) -> None:
    """Eager raises where the padded input is shorter than the dilated kernel; over a dynamic
    spatial dim where the ranges do not decide it, the program is for the sizes where it is not
    (a size guard)."""
    for i, (size, k) in enumerate(zip(x.shape[2:], weight.shape[2:])):
        if not isinstance(size, Size):
            continue
        span = size + 2 * padding[i]
        needed = dilation[i] * (k - 1) + 1
        if size_guards.eager_raises("lt", span, needed, f"a convolution over a dynamic dim {size!r} (kernel {k})"):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({span}). Kernel size: ({needed}). "
                "Kernel size can't be greater than actual input size"
            )


def _conv_padding(
    x: Tensor, weight: Tensor, padding: Any, stride: tuple[int, ...], dilation: tuple[int, ...]
) -> tuple[Tensor, tuple[int, ...]]:
    """Symmetric padding for the kernel; ``"same"`` with an odd total pads the input
    asymmetrically first (the extra zero on the right), as torch does."""
    n = len(stride)
    if not isinstance(padding, str):
        return x, _ntuple(padding, n, "padding")
    if padding == "valid":
        return x, (0,) * n
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: {padding!r}")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    left = tuple(t // 2 for t in totals)
    if all(t % 2 == 0 for t in totals):
        return x, left
    extra = ((0, 0, 0), (0, 0, 0)) + tuple((0, t % 2, 0) for t in totals)
    return zero_pad_p.bind(x, padding=extra), left


def _conv_handler(n: int, name: str) -> Any:
    def handler(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride: StaticInt | StaticShape = 1,
        padding: StaticInt | StaticShape = 0,
        dilation: StaticInt | StaticShape = 1,
        groups: StaticInt = 1,
    ) -> Tensor:
        if weight.ndim != n + 2:
            raise RuntimeError(f"{name}: expected a {n + 2}-D weight, got shape {list(weight.shape)}")
        return convolution(input, weight, bias, stride, padding, dilation, groups)

    return handler


implements(F.conv1d, torch.conv1d)(_conv_handler(1, "conv1d"))
implements(F.conv2d, torch.conv2d)(_conv_handler(2, "conv2d"))
implements(F.conv3d, torch.conv3d)(_conv_handler(3, "conv3d"))


# ---- F.pad, constant mode: zero padding (negative widths crop) and a fill that may be dynamic
@implements(F.pad)
def _torch_pad(input: Tensor, pad: StaticShape, mode: str = "constant", value: FloatLike | None = None) -> Tensor:
    if mode != "constant":  # reflect, replicate, circular: torch's own kernels and derivatives
        return opaque_handler(F.pad, (input, pad, mode), {} if value is None else {"value": value})  # type: ignore[no-any-return]
    widths = tuple(pad)
    if len(widths) % 2 or len(widths) // 2 > input.ndim:
        raise RuntimeError(
            f"Padding length must be divisible by 2 and at most twice the number of dims of the "
            f"input ({input.ndim}), got {len(widths)}"
        )
    pairs = [(0, 0)] * (input.ndim - len(widths) // 2) + [
        (widths[i], widths[i + 1]) for i in reversed(range(0, len(widths), 2))
    ]
    crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in pairs)
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        input = input[crop]
    padding = tuple((max(lo, 0), max(hi, 0), 0) for lo, hi in pairs)
    if all(p == (0, 0, 0) for p in padding):
        return torch.clone(input)  # eager's result is a new tensor, never a view of the input
    out = zero_pad_p.bind(input, padding=padding)
    if value is None or (is_static(value) and type(value) in (int, float) and value == 0):
        return out
    inside = zero_pad_p.bind(torch.ones_like(input, dtype=torch.bool), padding=padding)
    return torch.where(inside, out, value)


# ---- pooling: torch's kernels forward and backward
def _max_pool2d_impl(x: Any, *, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool) -> Any:
    return aten.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode)


def _max_pool2d_backward_impl(ct: Any, x: Any, indices: Any, **geometry: Any) -> Any:
    g = geometry
    return aten.max_pool2d_with_indices_backward(
        ct, x, g["kernel_size"], g["stride"], g["padding"], g["dilation"], g["ceil_mode"], indices
    )


max_pool2d_p = Primitive("max_pool2d", _max_pool2d_impl, torch_meta(_max_pool2d_impl), multiple_results=True)
max_pool2d_backward_p = Primitive(
    "max_pool2d_backward", _max_pool2d_backward_impl, torch_meta(_max_pool2d_backward_impl)
)
register_vjp(
    max_pool2d_p,
    lambda cts, outs, x, **geometry: (max_pool2d_backward_p.bind(cts[0], x, outs[1], **geometry),),
)


def _pool_geometry(
    kernel_size: Any, stride: Any, padding: Any
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    kernel = _ntuple(kernel_size, 2, "kernel_size")
    strides = (
        kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _ntuple(stride, 2, "stride")
    )
    return kernel, strides, _ntuple(padding, 2, "padding")


@defop(torch=(F.max_pool2d,))
def max_pool2d(
    input: Tensor,
    kernel_size: StaticInt | StaticShape,
    stride: StaticInt | StaticShape | None = None,
    padding: StaticInt | StaticShape = 0,
    dilation: StaticInt | StaticShape = 1,
    ceil_mode: StaticBool = False,
    return_indices: StaticBool = False,
) -> Any:
    """2-d max pooling, as ``F.max_pool2d`` (``return_indices`` gives ``(values, indices)``)."""
    kernel, strides, pads = _pool_geometry(kernel_size, stride, padding)
    values, indices = max_pool2d_p.bind(
        input,
        kernel_size=kernel,
        stride=strides,
        padding=pads,
        dilation=_ntuple(dilation, 2, "dilation"),
        ceil_mode=ceil_mode,
    )
    return (values, indices) if return_indices else values


@implements(torch.max_pool2d)
def _torch_max_pool2d_values(
    input: Tensor,
    kernel_size: StaticInt | StaticShape,
    stride: StaticInt | StaticShape | None = None,
    padding: StaticInt | StaticShape = 0,
    dilation: StaticInt | StaticShape = 1,
    ceil_mode: StaticBool = False,
) -> Any:
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


@implements(F.max_pool2d_with_indices)
def _torch_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: StaticInt | StaticShape,
    stride: StaticInt | StaticShape | None = None,
    padding: StaticInt | StaticShape = 0,
    dilation: StaticInt | StaticShape = 1,
    ceil_mode: StaticBool = False,
    return_indices: StaticBool = False,
) -> Any:
    # what F.max_pool2d(..., return_indices=True) calls: values and indices, whatever the flag
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool2d_impl(
    x: Any,
    *,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    return aten.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _avg_pool2d_backward_impl(
    ct: Any,
    x: Any,
    *,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    return aten.avg_pool2d_backward(ct, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


avg_pool2d_p = Primitive("avg_pool2d", _avg_pool2d_impl, torch_meta(_avg_pool2d_impl))
avg_pool2d_backward_p = Primitive(
    "avg_pool2d_backward", _avg_pool2d_backward_impl, torch_meta(_avg_pool2d_backward_impl)
)
register_vjp(avg_pool2d_p, lambda ct, out, x, **geometry: (avg_pool2d_backward_p.bind(ct, x, **geometry),))


@defop(torch=(F.avg_pool2d,))
def avg_pool2d(
    input: Tensor,
    kernel_size: StaticInt | StaticShape,
    stride: StaticInt | StaticShape | None = None,
    padding: StaticInt | StaticShape = 0,
    ceil_mode: StaticBool = False,
    count_include_pad: StaticBool = True,
    divisor_override: StaticInt | None = None,
) -> Tensor:
    """2-d average pooling, as ``F.avg_pool2d``."""
    kernel, strides, pads = _pool_geometry(kernel_size, stride, padding)
    return avg_pool2d_p.bind(
        input,
        kernel_size=kernel,
        stride=strides,
        padding=pads,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
        divisor_override=divisor_override,
    )


def _adaptive_avg_pool2d_impl(x: Any, *, output_size: tuple[int, int]) -> Any:
    return aten._adaptive_avg_pool2d(x, output_size)


def _adaptive_avg_pool2d_backward_impl(ct: Any, x: Any) -> Any:
    return aten._adaptive_avg_pool2d_backward(ct, x)


adaptive_avg_pool2d_p = Primitive(
    "adaptive_avg_pool2d", _adaptive_avg_pool2d_impl, torch_meta(_adaptive_avg_pool2d_impl)
)
adaptive_avg_pool2d_backward_p = Primitive(
    "adaptive_avg_pool2d_backward", _adaptive_avg_pool2d_backward_impl, torch_meta(_adaptive_avg_pool2d_backward_impl)
)
register_vjp(adaptive_avg_pool2d_p, lambda ct, out, x, **params: (adaptive_avg_pool2d_backward_p.bind(ct, x),))


@defop(torch=(F.adaptive_avg_pool2d,))
def adaptive_avg_pool2d(input: Tensor, output_size: StaticInt | Sequence[StaticInt | None]) -> Tensor:
    """Average pooling to a fixed output size, as ``F.adaptive_avg_pool2d`` (``None`` in
    ``output_size`` keeps that input size)."""
    if input.ndim not in (3, 4):
        raise ValueError(f"adaptive_avg_pool2d: expected a 3-D or 4-D input, got shape {list(input.shape)}")
    sizes = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 2:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be 2 numbers, got {output_size!r}")
    resolved = tuple(input.shape[input.ndim - 2 + i] if s is None else s for i, s in enumerate(sizes))
    if resolved == (1, 1):
        # eager's global pool (ResNet's head) is ``input.mean((-1, -2), keepdim=True)``, not the
        # pooling kernel, which sums in another order (1 ulp apart in most float32 inputs)
        return input.mean((-1, -2), keepdim=True)
    return adaptive_avg_pool2d_p.bind(input, output_size=resolved)


# ---- batch normalization (the running statistics are written back)
def _upcast(x: Tensor) -> Tensor:
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


# Training-mode normalization with a static eps runs torch's own kernels forward and backward,
# as the vision primitives above do: the composite's gradient is the same function but sums in
# another order, and where the input gradient is then rounded to bfloat16 (autocast: the
# convolution before it runs in bfloat16) one float32 ulp flips a bfloat16 ulp, which every
# layer below amplifies. The statistics it saves (mean, 1/std) are residuals of the backward.
def _batch_norm_impl(x: Any, weight: Any, bias: Any, *, eps: float) -> Any:
    return aten.native_batch_norm(x, weight, bias, None, None, True, 0.0, eps)


def _batch_norm_backward_impl(
    ct: Any, x: Any, weight: Any, mean: Any, invstd: Any, *, eps: float, mask: tuple[bool, bool, bool]
) -> Any:
    grads = aten.native_batch_norm_backward(ct, x, weight, None, None, mean, invstd, True, eps, list(mask))
    return tuple(g for g, wanted in zip(grads, mask) if wanted)


def _batch_norm_vjp(cts: Any, outs: Any, x: Any, weight: Any, bias: Any, *, eps: float) -> Any:
    if cts[0] is None:  # only the normalized output is differentiable (the statistics are not)
        return (None, None, None)
    mask = (True, weight is not None, bias is not None)
    grads = iter(batch_norm_backward_p.bind(cts[0], x, weight, outs[1], outs[2], eps=eps, mask=mask))
    return tuple(next(grads) if wanted else None for wanted in mask)


batch_norm_p = Primitive("batch_norm", _batch_norm_impl, torch_meta(_batch_norm_impl), multiple_results=True)
batch_norm_backward_p = Primitive(
    "batch_norm_backward", _batch_norm_backward_impl, torch_meta(_batch_norm_backward_impl), multiple_results=True
)
register_vjp(batch_norm_p, _batch_norm_vjp)


# The running statistics of a training step, updated by eager's own kernel
# (``aten::batch_norm_update_stats``, the update ``F.batch_norm`` runs on CPU) on copies: the
# kernel rounds the batch statistics to the buffers' dtype and adds in double, so a float
# formula was 1 bfloat16 ulp off in about a third of the channels. No gradient (eager's update
# is outside autograd too).
def _batch_norm_stats_impl(x: Any, running_mean: Any, running_var: Any, *, momentum: float) -> Any:
    mean, var = running_mean.clone(), running_var.clone()
    torch.batch_norm_update_stats(x, mean, var, momentum)
    return mean, var


def _batch_norm_stats_meta(x: TensorVar, running_mean: TensorVar, running_var: TensorVar, **params: Any) -> Any:
    return tuple(TensorVar(tuple(r.shape), r.dtype, r.device) for r in (running_mean, running_var))


batch_norm_stats_p = Primitive(
    "batch_norm_stats", _batch_norm_stats_impl, _batch_norm_stats_meta, multiple_results=True
)


# Evaluation mode with a static eps runs eager's kernel too: it folds the statistics into one
# scale and shift per channel (``x * (w / sqrt(var + eps)) + (b - mean * w / sqrt(var + eps))``),
# where the composite's ``(x - mean) * rsqrt(var + eps) * w + b`` was a float32 ulp off, enough
# to make a model that alternates training and evaluation steps drift from eager's parameters.
# Its gradients come from eager's backward kernel (``train=False``); the second derivative from
# the formula, which is linear in the incoming gradient (``_batch_norm_eval_backward_vjp``).
def _batch_norm_eval_impl(x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, *, eps: float) -> Any:
    return aten.native_batch_norm(x, weight, bias, running_mean, running_var, False, 0.0, eps)[0]


def _batch_norm_eval_backward_impl(
    ct: Any, x: Any, weight: Any, running_mean: Any, running_var: Any, *, eps: float, mask: tuple[bool, bool, bool]
) -> Any:
    grads = aten.native_batch_norm_backward(
        ct, x, weight, running_mean, running_var, None, None, False, eps, list(mask)
    )
    return tuple(g for g, wanted in zip(grads, mask) if wanted)


def _batch_norm_eval_vjp(
    ct: Any, out: Any, x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, *, eps: float
) -> Any:
    mask = (True, weight is not None, bias is not None)
    grads = iter(batch_norm_eval_backward_p.bind(ct, x, weight, running_mean, running_var, eps=eps, mask=mask))
    return (*(next(grads) if wanted else None for wanted in mask), None, None)


def _batch_norm_eval_backward_vjp(
    cts: Any,
    outs: Any,
    ct: Any,
    x: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    *,
    eps: float,
    mask: tuple[bool, bool, bool],
) -> Any:
    """The derivatives of the evaluation-mode gradients (double backward), from the formula
    the kernel computes: with s = rsqrt(var + eps) per channel, grad_x = ct * w * s, grad_w =
    sum(ct * (x - mean) * s) and grad_b = sum(ct) over every dim but the channel dim."""
    cts = iter(cts)
    a = next(cts)
    bw = next(cts) if mask[1] else None
    bb = next(cts) if mask[2] else None
    stat_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    dims = (0, *range(2, x.ndim))
    scale = torch.rsqrt(_upcast(running_var).reshape(stat_shape) + eps)
    ct_bar = grad_x = grad_w = None
    if a is not None:
        g = _upcast(a) * scale
        ct_bar = g * _upcast(weight).reshape(stat_shape) if weight is not None else g
        if weight is not None:
            grad_w = (g * _upcast(ct)).sum(dims)
    if bw is not None:
        b = _upcast(bw).reshape(stat_shape) * scale
        xhat = (_upcast(x) - _upcast(running_mean).reshape(stat_shape)) * b
        ct_bar = xhat if ct_bar is None else ct_bar + xhat
        grad_x = _upcast(ct) * b
    if bb is not None:
        b = _upcast(bb).reshape(stat_shape)
        ct_bar = b.expand(tuple(ct.shape)) if ct_bar is None else ct_bar + b
    return (
        None if ct_bar is None else ct_bar.to(ct.dtype),
        None if grad_x is None else grad_x.to(x.dtype),
        None if grad_w is None else grad_w.to(weight.dtype),
        None,
        None,
    )


batch_norm_eval_p = Primitive("batch_norm_eval", _batch_norm_eval_impl, torch_meta(_batch_norm_eval_impl))
batch_norm_eval_backward_p = Primitive(
    "batch_norm_eval_backward",
    _batch_norm_eval_backward_impl,
    torch_meta(_batch_norm_eval_backward_impl),
    multiple_results=True,
)
register_vjp(batch_norm_eval_p, _batch_norm_eval_vjp)
register_vjp(batch_norm_eval_backward_p, _batch_norm_eval_backward_vjp)


def _per_channel(fd: Any, t: Any, ndim: int) -> Any:
    """A (C,) tensor in float32 (16-bit: as the kernels compute), broadcast along dim 1."""
    return fd.ops.broadcast(upcast(fd, t), [i != 1 for i in range(ndim)])


# On nvFuser the evaluation-mode kernels are one fusion with their neighbours (inference of a
# CNN is mostly this): the arithmetic of torch's kernels, in float32 for 16-bit inputs.
def _batch_norm_eval_nvfuser(
    fd: Any, x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, *, eps: float
) -> Any:
    n = x.ndim
    scale = fd.ops.rsqrt(fd.ops.add(_per_channel(fd, running_var, n), eps))
    if weight is not None:
        scale = fd.ops.mul(scale, _per_channel(fd, weight, n))
    out = fd.ops.mul(fd.ops.sub(upcast(fd, x), _per_channel(fd, running_mean, n)), scale)
    return fd.ops.add(out, _per_channel(fd, bias, n)) if bias is not None else out


def _batch_norm_eval_backward_nvfuser(
    fd: Any,
    ct: Any,
    x: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    *,
    eps: float,
    mask: tuple[bool, bool, bool],
) -> Any:
    n = x.ndim
    dims = [0, *range(2, n)]
    s = fd.ops.rsqrt(fd.ops.add(_per_channel(fd, running_var, n), eps))
    g = upcast(fd, ct)
    outs = [fd.ops.mul(g, fd.ops.mul(s, _per_channel(fd, weight, n)) if weight is not None else s)]
    if mask[1]:
        xhat = fd.ops.mul(fd.ops.sub(upcast(fd, x), _per_channel(fd, running_mean, n)), s)
        outs.append(fd.ops.sum(fd.ops.mul(g, xhat), dims))
    if mask[2]:
        outs.append(fd.ops.sum(g, dims))
    return tuple(outs)


register_nvfuser(batch_norm_eval_p, _batch_norm_eval_nvfuser)
register_nvfuser(batch_norm_eval_backward_p, _batch_norm_eval_backward_nvfuser)


@defop(torch=(F.batch_norm,))
def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: StaticBool = False,
    momentum: FloatLike = 0.1,
    eps: FloatLike = 1e-5,
) -> Tensor:
    """Batch normalization over every dim but the channel dim (1), as ``F.batch_norm``.

    Training (or no running statistics): normalize with the batch's mean and biased
    variance; with running statistics, also update them as eager does
    (``running = (1 - momentum) * running + momentum * batch``, the unbiased variance) through
    ``write_back``. Eval: normalize with the running statistics. ``momentum`` and ``eps`` may
    be dynamic.
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input with at least 2 dims, got shape {list(input.shape)}")
    if (running_mean is None) != (running_var is None):
        raise RuntimeError("batch_norm: running_mean and running_var must both be given or both be None")
    channels = input.shape[1]
    dims = (0, *range(2, input.ndim))
    stat_shape = (1, channels) + (1,) * (input.ndim - 2)
    xf = _upcast(input)
    if training:
        count = input.numel() // channels if channels else 0
        if size_guards.eager_raises("le", count, 1, "batch_norm in training (eager refuses one value per channel)"):
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {list(input.shape)}"
            )
        native_eps = float(eps) if is_static(eps) and type(eps) in (int, float) else None
        native_momentum = float(momentum) if is_static(momentum) and type(momentum) in (int, float) else None
        stats_written = running_mean is None or running_var is None
        if running_mean is not None and running_var is not None and native_momentum is not None:
            new_mean, new_var = batch_norm_stats_p.bind(
                input.detach(), running_mean, running_var, momentum=native_momentum
            )
            _write_running_stats(running_mean, running_var, new_mean, new_var)
            stats_written = True
        if stats_written and native_eps is not None:
            return batch_norm_p.bind(input, weight, bias, eps=native_eps)[0]
        mean = xf.mean(dims, keepdim=True)
        centered = xf - mean
        var = (centered * centered).mean(dims, keepdim=True)
        if running_mean is not None and running_var is not None and not stats_written:  # a dynamic momentum
            _update_running_stats(
                running_mean,
                running_var,
                mean.reshape((channels,)),
                var.reshape((channels,)) * _bessel(count),
                momentum,
            )
        if native_eps is not None:  # the statistics above feed only the running ones
            return batch_norm_p.bind(input, weight, bias, eps=native_eps)[0]
    elif running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in evaluation mode")
    elif is_static(eps) and type(eps) in (int, float):
        _refuse_differentiable_stats(running_mean, running_var)
        return batch_norm_eval_p.bind(input, weight, bias, running_mean, running_var, eps=float(eps))
    else:
        centered = xf - _upcast(running_mean).reshape(stat_shape)
        var = _upcast(running_var).reshape(stat_shape)
    out = centered * torch.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(stat_shape)
    if bias is not None:
        out = out + bias.reshape(stat_shape)
    return out.to(input.dtype)


def _refuse_differentiable_stats(running_mean: Tensor, running_var: Tensor) -> None:
    for name, stats in (("running_mean", running_mean), ("running_var", running_var)):
        if isinstance(stats, TensorProxy) and stats.requires_grad:
            raise UnsupportedOperationError(
                f"batch_norm in evaluation mode with a {name} that requires grad: eager's native_batch_norm is "
                f"not differentiable with respect to {name} (eager refuses it too). Pass {name}.detach(), or "
                "keep the statistics in buffers (nn.BatchNorm's running_mean and running_var)."
            )


def _bessel(count: Any) -> Any:
    """``n / (n - 1)``, the unbiased variance's factor; a runtime scalar of the program where
    ``n`` is a dynamic size (a dynamic batch dim)."""
    n = size_proxy(current_tracer.get(), count)
    return n / (n - 1)


def _update_running_stats(running_mean: Any, running_var: Any, mean: Any, unbiased_var: Any, momentum: Any) -> None:
    """``running = momentum * batch + (1 - momentum) * running`` (eager's order), written back
    into the buffers after each call (eagerly outside a trace), without a gradient."""
    # eager's kernel updates the statistics outside autograd: no gradient flows into them
    mean, unbiased_var = mean.detach(), unbiased_var.detach()
    new_mean = (mean * momentum + running_mean * (1 - momentum)).to(running_mean.dtype)
    new_var = (unbiased_var * momentum + running_var * (1 - momentum)).to(running_var.dtype)
    _write_running_stats(running_mean, running_var, new_mean, new_var)


def _write_running_stats(running_mean: Any, running_var: Any, new_mean: Any, new_var: Any) -> None:
    """Write the new statistics into the buffers: eagerly outside a trace, else as state the
    program writes back after each call."""
    tracer = current_tracer.get()
    if not isinstance(tracer, TraceBuilder):
        with torch.no_grad():
            running_mean.copy_(new_mean)
            running_var.copy_(new_var)
        return
    for name, value, new in (("running_mean", running_mean, new_mean), ("running_var", running_var, new_var)):
        target = tracer.state_tensor(value)
        if target is None:
            raise UnsupportedOperationError(
                f"batch_norm(training=True) updates {name} in place, but it is "
                f"{value._describe()}, not a tensor read from outside the jitted function; "
                "symscalar writes state back only into those (module buffers, closed-over "
                "tensors). Keep the statistics on the module, or pass running_mean=None, "
                "running_var=None."
            )
        tracer.assign_state(target, new)
