"""Normalization layers: ``layer_norm``, ``rms_norm``, ``group_norm`` and weight
normalization (``torch._weight_norm``).

``layer_norm`` and ``group_norm`` run eager's kernels each way where they apply
(``native_layer_norm``, ``native_group_norm`` and their backward kernels, with double backwards
from the kernels' formulas), so values and gradients are eager's to the bit; ``rms_norm`` is
composed as eager composes it. Their ``eps`` may be dynamic (then a composite); shapes and group
counts are static. (Batch norm is with the vision layers, ops/conv.py.)
"""

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from symscalar import size_guards
from symscalar.ops.define import (
    FloatLike,
    Primitive,
    StaticInt,
    StaticShape,
    Tensor,
    TensorVar,
    defop,
    implements,
    register_nvfuser,
    register_vjp,
    small_meta,
    unreduce,
    upcast,
)

__all__ = ["layer_norm", "rms_norm", "group_norm"]


# ---- normalization
def _norm_dims(x: Tensor, normalized_shape: Sequence[int], op: str) -> tuple[int, ...]:
    shape = tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape) :]) != shape or len(shape) > x.ndim:
        raise RuntimeError(
            f"{op}: normalized_shape {list(shape)} does not match the trailing dims of the "
            f"input of shape {list(x.shape)}"
        )
    return tuple(range(x.ndim - len(shape), x.ndim))


def _upcast(x: Tensor) -> Tensor:
    """Half-precision inputs are normalized in float32, as torch's kernels do."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


# ---- native_layer_norm: eager's one-kernel forward, returning the mean and 1/std it used,
# which the backward reads (residuals) instead of recomputing them, and eager's backward
# kernel, native_layer_norm_backward (bit-equal gradients: a composition cannot reproduce its
# float32 accumulation and order). Floating inputs with parameters of their dtype, or 16-bit
# inputs with float32 parameters (autocast's mixed case: float32 statistics, as torch's).
def _native_layer_norm_impl(x: Any, weight: Any, bias: Any, eps: Any, *, normalized_shape: tuple[int, ...]) -> Any:
    return torch.native_layer_norm(x, list(normalized_shape), weight, bias, float(eps))


def _native_layer_norm_meta(
    x: TensorVar, weight: Any, bias: Any, eps: Any, *, normalized_shape: tuple[int, ...]
) -> tuple[TensorVar, TensorVar, TensorVar]:
    k = len(normalized_shape)
    params = [t for t in (weight, bias) if t is not None]
    if (
        not isinstance(x, TensorVar)
        or x.dtype not in _NATIVE_NORM_DTYPES
        or not 0 < k <= x.ndim
        or x.shape[x.ndim - k :] != tuple(normalized_shape)
        or any(not isinstance(t, TensorVar) or t.shape != tuple(normalized_shape) for t in params)
        or _stats_dtype(x.dtype, [t.dtype for t in params]) is None
    ):
        raise ValueError(f"native_layer_norm: operands outside the primitive's form ({normalized_shape=})")
    stats = x.shape[: x.ndim - k] + (1,) * k
    stats_dtype = _stats_dtype(x.dtype, [t.dtype for t in params])
    assert stats_dtype is not None
    return (
        TensorVar(x.shape, x.dtype, x.device),
        TensorVar(stats, stats_dtype, x.device),
        TensorVar(stats, stats_dtype, x.device),
    )


_NATIVE_NORM_DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def _stats_dtype(x: torch.dtype, params: list[torch.dtype]) -> torch.dtype | None:
    """The dtype of torch's saved mean and 1/std (None: a combination torch's kernel refuses):
    the input's, or float32 for a 16-bit input with float32 parameters."""
    if all(p == x for p in params):
        return x
    if x in (torch.bfloat16, torch.float16) and params and all(p == torch.float32 for p in params):
        return torch.float32
    return None


native_layer_norm_p = Primitive(
    "native_layer_norm", _native_layer_norm_impl, _native_layer_norm_meta, multiple_results=True
)


def _native_layer_norm_vjp(
    cts: Any, outs: Any, x: Any, weight: Any, bias: Any, eps: Any, *, normalized_shape: tuple[int, ...]
) -> tuple[Any, Any, Any, None]:
    """The layer-norm gradients from the saved mean and 1/std: torch's backward kernel (a
    primitive whose vjp gives the double backward); cotangents of the mean and 1/std
    themselves come from a double backward, which reads them."""
    ct, ct_mean, ct_rstd = cts
    _, mean, rstd = outs
    n = math.prod(normalized_shape)
    grad_x = grad_w = grad_b = None
    if ct is not None:
        mask = (True, weight is not None, bias is not None)
        grads = iter(
            layer_norm_backward_p.bind(ct, x, mean, rstd, weight, bias, normalized_shape=normalized_shape, mask=mask)
        )
        grad_x = next(grads)
        grad_w = next(grads) if weight is not None else None
        grad_b = next(grads) if bias is not None else None
    extra = []
    if ct_mean is not None:  # d mean / dx = 1/n
        extra.append((ct_mean / n).expand(tuple(x.shape)))
    if ct_rstd is not None:  # d rstd / dx = -rstd^3 (x - mean) / n
        extra.append(ct_rstd * (rstd * rstd * rstd) * (mean - x) / n)
    for e in extra:
        grad_x = e if grad_x is None else grad_x + e
    return grad_x, grad_w, grad_b, None


register_vjp(native_layer_norm_p, _native_layer_norm_vjp)


def _layer_norm_backward_impl(
    ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, bias: Any, *, normalized_shape: Any, mask: Any
) -> Any:
    grads = torch.ops.aten.native_layer_norm_backward(
        ct, x, list(normalized_shape), mean, rstd, weight, bias, list(mask)
    )
    return tuple(g for g, wanted in zip(grads, mask) if wanted)


def _layer_norm_backward_meta(
    ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, bias: Any, *, normalized_shape: Any, mask: Any
) -> tuple[TensorVar, ...]:
    outs = [TensorVar(x.shape, x.dtype, x.device)]
    outs += [TensorVar(t.shape, t.dtype, t.device) for t, wanted in zip((weight, bias), mask[1:]) if wanted]
    return tuple(outs)


layer_norm_backward_p = Primitive(
    "layer_norm_backward", _layer_norm_backward_impl, _layer_norm_backward_meta, multiple_results=True
)


def _layer_norm_backward_vjp(
    cts: Any,
    outs: Any,
    ct: Any,
    x: Any,
    mean: Any,
    rstd: Any,
    weight: Any,
    bias: Any,
    *,
    normalized_shape: Any,
    mask: Any,
) -> tuple[Any, ...]:
    """The derivatives of the layer-norm gradients (double backward), from the formula the
    kernel computes: with xhat = (x - mean) * rstd, g = ct * weight and m() the mean over
    the normalized dims, grad_x = rstd * (g - m(g) - xhat * m(g * xhat)), grad_w = sum(ct *
    xhat) and grad_b = sum(ct) over the batch dims. mean and rstd are read as given (their own
    derivatives in x come from native_layer_norm's vjp)."""
    cts = iter(cts)
    a = next(cts)
    bw = next(cts) if mask[1] else None
    bb = next(cts) if mask[2] else None
    k = len(normalized_shape)
    dims, batch = tuple(range(x.ndim - k, x.ndim)), tuple(range(x.ndim - k))
    centered = x - mean
    xhat = centered * rstd
    g = ct * weight if weight is not None else ct
    ct_bar = x_hat_bar = rstd_bar = None
    grad_w = None
    if a is not None:
        m_g, m_gx = g.mean(dims, keepdim=True), (g * xhat).mean(dims, keepdim=True)
        u = a * rstd
        m_ux = (u * xhat).mean(dims, keepdim=True)
        g_bar = u - u.mean(dims, keepdim=True) - xhat * m_ux
        x_hat_bar = -u * m_gx - m_ux * g
        rstd_bar = (a * (g - m_g - xhat * m_gx)).sum(dims, keepdim=True)
        ct_bar = g_bar * weight if weight is not None else g_bar
        if weight is not None:
            grad_w = (g_bar * ct).sum(batch) if batch else g_bar * ct
    if bw is not None:
        ct_bar = bw * xhat if ct_bar is None else ct_bar + bw * xhat
        x_hat_bar = bw * ct if x_hat_bar is None else x_hat_bar + bw * ct
    if bb is not None:
        ct_bar = bb.expand(tuple(ct.shape)) if ct_bar is None else ct_bar + bb
    grad_x = grad_mean = None
    if x_hat_bar is not None:
        grad_x = x_hat_bar * rstd
        grad_mean = -grad_x.sum(dims, keepdim=True)
        from_centered = (x_hat_bar * centered).sum(dims, keepdim=True)
        rstd_bar = from_centered if rstd_bar is None else rstd_bar + from_centered
    return ct_bar, grad_x, grad_mean, rstd_bar, grad_w, None


register_vjp(layer_norm_backward_p, _layer_norm_backward_vjp)


def _native_layer_norm_nvfuser(
    fd: Any, x: Any, weight: Any, bias: Any, eps: Any, *, normalized_shape: tuple[int, ...]
) -> Any:
    k = len(normalized_shape)
    x = upcast(fd, x)  # 16-bit: in float32, as torch's kernel; the backend casts the results back
    var, mean = fd.ops.var_mean(x, list(range(x.ndim - k, x.ndim)), correction=0, keepdim=True)
    rstd = fd.ops.rsqrt(fd.ops.add(var, eps))
    out = fd.ops.mul(fd.ops.sub(x, mean), rstd)
    lead = [True] * (x.ndim - k) + [False] * k
    if weight is not None:
        out = fd.ops.mul(out, fd.ops.broadcast(upcast(fd, weight), lead))
    if bias is not None:
        out = fd.ops.add(out, fd.ops.broadcast(upcast(fd, bias), lead))
    return out, mean, rstd


register_nvfuser(native_layer_norm_p, _native_layer_norm_nvfuser)


def _layer_norm_backward_nvfuser(
    fd: Any, ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, bias: Any, *, normalized_shape: Any, mask: Any
) -> Any:
    k = len(normalized_shape)
    dims, batch = list(range(x.ndim - k, x.ndim)), list(range(x.ndim - k))
    lead = [True] * (x.ndim - k) + [False] * k
    g0, xf, mean, rstd = upcast(fd, ct), upcast(fd, x), upcast(fd, mean), upcast(fd, rstd)
    xhat = fd.ops.mul(fd.ops.sub(xf, mean), rstd)
    g = fd.ops.mul(g0, fd.ops.broadcast(upcast(fd, weight), lead)) if weight is not None else g0
    n = float(math.prod(normalized_shape))

    def mean_over(t: Any) -> Any:
        return unreduce(fd, fd.ops.div(fd.ops.sum(t, dims), n), dims, x.ndim)

    inner = fd.ops.sub(fd.ops.sub(g, mean_over(g)), fd.ops.mul(xhat, mean_over(fd.ops.mul(g, xhat))))
    outs = [fd.ops.mul(rstd, inner)]
    if mask[1]:
        gw = fd.ops.mul(g0, xhat)
        outs.append(fd.ops.sum(gw, batch) if batch else gw)
    if mask[2]:
        outs.append(fd.ops.sum(g0, batch) if batch else g0)
    return tuple(outs)


register_nvfuser(layer_norm_backward_p, _layer_norm_backward_nvfuser)


@defop(torch=(F.layer_norm,))
def layer_norm(
    input: Tensor,
    normalized_shape: StaticShape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: FloatLike = 1e-5,
) -> Tensor:
    """Layer normalization over the trailing ``normalized_shape`` dims; ``eps`` may be dynamic.

    Like torch's kernels, half-precision inputs are normalized, scaled and shifted in float32
    and rounded once; the result has the input's dtype, also with float32 ``weight``/``bias``
    (the mixed-precision case autocast produces: bfloat16 activations, float32 parameters).
    """
    dims = _norm_dims(input, normalized_shape, "layer_norm")
    shape = tuple(normalized_shape)
    if (
        dims
        and input.dtype in _NATIVE_NORM_DTYPES
        and all(tuple(t.shape) == shape for t in (weight, bias) if t is not None)
        and _stats_dtype(input.dtype, [t.dtype for t in (weight, bias) if t is not None]) is not None
    ):
        return native_layer_norm_p.bind(input, weight, bias, eps, normalized_shape=shape)[0]
    # eager's kernel reads a contiguous copy: its result (and input gradient) are contiguous,
    # which the next op's kernel (a bfloat16 matmul) rounds by
    xf = _upcast(input.contiguous())
    centered = xf - xf.mean(dims, keepdim=True)
    var = (centered * centered).mean(dims, keepdim=True)
    out = centered * torch.rsqrt(var + eps)
    if weight is not None:
        out = out * _upcast(weight)
    if bias is not None:
        out = out + _upcast(bias)
    return out.to(input.dtype)


@defop(torch=(F.rms_norm,))
def rms_norm(
    input: Tensor,
    normalized_shape: StaticShape,
    weight: Tensor | None = None,
    eps: FloatLike | None = None,
) -> Tensor:
    """RMS normalization; ``eps`` may be dynamic. Its default is the machine epsilon of the
    dtype the normalization is computed in (float32 for float16/bfloat16 inputs), as torch's."""
    dims = _norm_dims(input, normalized_shape, "rms_norm")
    xf = _upcast(input)
    if eps is None:
        eps = torch.finfo(xf.dtype).eps
    # torch's composite, op for op (its gradients are those of these ops, in these dtypes):
    # the weight multiplies in float32, before the result is rounded to the input's dtype
    out = xf * torch.rsqrt(xf.pow(2).mean(dims, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)


# ---- native_group_norm: eager's kernel each way, as native_layer_norm (diffusion UNets, ConvNeXt
# blocks): the composition's mean and variance sum in another order than the kernel's (float32:
# 1 ulp apart in every case measured; bfloat16 gradients: 1 bfloat16 ulp). The saved mean and
# 1/std, shaped (N, groups), are residuals of the backward kernel, native_group_norm_backward.
def _group_sizes(x: Any) -> tuple[int, int, int]:
    return x.shape[0], x.shape[1], math.prod(x.shape[2:])


def _suggested_format(x: torch.Tensor) -> torch.memory_format:
    """C++'s ``suggest_memory_format`` (not exposed to Python) for what eager's kernels see here:
    channels-last strides of a 4-d tensor that is not plainly contiguous, else contiguous."""
    if x.ndim == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
        return torch.channels_last
    return torch.contiguous_format


def _native_group_norm_impl(x: Any, weight: Any, bias: Any, eps: Any, *, num_groups: int) -> Any:
    x = x.contiguous(memory_format=_suggested_format(x))  # as eager's group_norm
    weight, bias = (None if t is None else t.contiguous() for t in (weight, bias))
    return torch.ops.aten.native_group_norm(x, weight, bias, *_group_sizes(x), num_groups, float(eps))


def _native_group_norm_meta(x: TensorVar, weight: Any, bias: Any, eps: Any, *, num_groups: int) -> Any:
    params = [t for t in (weight, bias) if t is not None]
    stats_dtype = _stats_dtype(x.dtype, [t.dtype for t in params])
    if (
        x.ndim < 2
        or x.dtype not in _NATIVE_NORM_DTYPES
        or any(t.shape != x.shape[1:2] for t in params)
        or stats_dtype is None
    ):
        raise ValueError(f"native_group_norm: operands outside the primitive's form ({num_groups=})")
    stats = TensorVar((x.shape[0], num_groups), stats_dtype, x.device)
    return TensorVar(x.shape, x.dtype, x.device), stats, stats


native_group_norm_p = Primitive(
    "native_group_norm", _native_group_norm_impl, _native_group_norm_meta, multiple_results=True
)


def _group_view(t: Any, x: Any, num_groups: int) -> Any:
    """``t`` (``x``'s shape) as (N, groups, values per group): each group's values in one row."""
    return t.reshape(x.shape[0], num_groups, x.shape[1] // num_groups * math.prod(x.shape[2:]))


def _per_channel(t: Any, x: Any, num_groups: int) -> Any:
    """A per-channel tensor (C,) broadcast over ``x`` and seen as groups (see ``_group_view``)."""
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _group_view(t.reshape(shape).expand(tuple(x.shape)), x, num_groups)


def _channel_sum(t: Any, x: Any) -> Any:
    """The sum of a (N, groups, K) tensor over the batch and spatial values of each channel."""
    return t.reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:])).sum((0, 2))


def _native_group_norm_vjp(cts: Any, outs: Any, x: Any, weight: Any, bias: Any, eps: Any, *, num_groups: int) -> Any:
    """The gradients from torch's backward kernel; cotangents of the saved mean and 1/std (only
    a double backward has them) through their own derivatives, as native_layer_norm's."""
    ct, ct_mean, ct_rstd = cts
    _, mean, rstd = outs
    grad_x = grad_w = grad_b = None
    if ct is not None:
        mask = (True, weight is not None, bias is not None)
        grads = iter(group_norm_backward_p.bind(ct, x, mean, rstd, weight, num_groups=num_groups, mask=mask))
        grad_x = next(grads)
        grad_w = next(grads) if weight is not None else None
        grad_b = next(grads) if bias is not None else None
    extra = []
    if ct_mean is not None:  # d mean / dx = 1/n
        shape = (x.shape[0], num_groups, x.shape[1] // num_groups * math.prod(x.shape[2:]))
        extra.append((ct_mean.unsqueeze(-1) / shape[-1]).expand(shape))
    if ct_rstd is not None:  # d rstd / dx = -rstd^3 (x - mean) / n
        xg, r = _group_view(x, x, num_groups), rstd.unsqueeze(-1)
        extra.append(ct_rstd.unsqueeze(-1) * (r * r * r) * (mean.unsqueeze(-1) - xg) / xg.shape[-1])
    for e in extra:
        e = e.reshape(tuple(x.shape)).to(x.dtype)
        grad_x = e if grad_x is None else grad_x + e
    return grad_x, grad_w, grad_b, None


register_vjp(native_group_norm_p, _native_group_norm_vjp)


def _group_norm_backward_impl(ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, *, num_groups: int, mask: Any) -> Any:
    fmt = _suggested_format(x)  # eager's derivative makes both contiguous so
    ct, x = ct.contiguous(memory_format=fmt), x.contiguous(memory_format=fmt)
    grads = torch.ops.aten.native_group_norm_backward(
        ct, x, mean, rstd, weight, *_group_sizes(x), num_groups, list(mask)
    )
    return tuple(g for g, wanted in zip(grads, mask) if wanted)


def _group_norm_backward_meta(ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, *, num_groups: int, mask: Any) -> Any:
    outs = [TensorVar(x.shape, x.dtype, x.device)]
    outs += [TensorVar(weight.shape, weight.dtype, weight.device) for _ in mask[1:] if _]
    return tuple(outs)


group_norm_backward_p = Primitive(
    "group_norm_backward", _group_norm_backward_impl, _group_norm_backward_meta, multiple_results=True
)


def _group_norm_backward_vjp(
    cts: Any, outs: Any, ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, *, num_groups: int, mask: Any
) -> tuple[Any, ...]:
    """The double backward, from the formula the kernel computes (layer_norm_backward's over
    each group's values, the weight per channel): with xhat = (x - mean) * rstd, g = ct * weight
    and m() the mean over a group, grad_x = rstd * (g - m(g) - xhat * m(g * xhat)),
    grad_weight = sum(ct * xhat) and grad_bias = sum(ct) per channel."""
    cts = iter(cts)
    a = next(cts)
    bw = next(cts) if mask[1] else None
    bb = next(cts) if mask[2] else None
    last = (-1,)
    ctg, xg = _group_view(ct, x, num_groups), _group_view(x, x, num_groups)
    mean3, rstd3 = mean.unsqueeze(-1), rstd.unsqueeze(-1)
    centered = xg - mean3
    xhat = centered * rstd3
    w = _per_channel(weight, x, num_groups) if weight is not None else None
    g = ctg * w if w is not None else ctg
    ct_bar = x_hat_bar = rstd_bar = grad_w = None
    if a is not None:
        ag = _group_view(a, x, num_groups)
        m_g, m_gx = g.mean(last, keepdim=True), (g * xhat).mean(last, keepdim=True)
        u = ag * rstd3
        m_ux = (u * xhat).mean(last, keepdim=True)
        g_bar = u - u.mean(last, keepdim=True) - xhat * m_ux
        x_hat_bar = -u * m_gx - m_ux * g
        rstd_bar = (ag * (g - m_g - xhat * m_gx)).sum(last, keepdim=True)
        ct_bar = g_bar * w if w is not None else g_bar
        if w is not None:
            grad_w = _channel_sum(g_bar * ctg, x)
    if bw is not None:
        bwg = _per_channel(bw, x, num_groups)
        ct_bar = bwg * xhat if ct_bar is None else ct_bar + bwg * xhat
        x_hat_bar = bwg * ctg if x_hat_bar is None else x_hat_bar + bwg * ctg
    if bb is not None:
        bbg = _per_channel(bb, x, num_groups)
        ct_bar = bbg if ct_bar is None else ct_bar + bbg
    grad_x = grad_mean = None
    if x_hat_bar is not None:
        gx3 = x_hat_bar * rstd3
        grad_mean = -gx3.sum(last)
        from_centered = (x_hat_bar * centered).sum(last, keepdim=True)
        rstd_bar = from_centered if rstd_bar is None else rstd_bar + from_centered
        grad_x = gx3.reshape(tuple(x.shape)).to(x.dtype)
    rstd_out = None if rstd_bar is None else rstd_bar.squeeze(-1).to(rstd.dtype)
    mean_out = None if grad_mean is None else grad_mean.to(mean.dtype)
    ct_out = None if ct_bar is None else ct_bar.reshape(tuple(ct.shape)).to(ct.dtype)
    w_out = None if grad_w is None else grad_w.to(weight.dtype)
    return ct_out, grad_x, mean_out, rstd_out, w_out


register_vjp(group_norm_backward_p, _group_norm_backward_vjp)


# ---- group normalization: eager's kernels where they apply, else a composite like layer_norm
@defop(torch=(F.group_norm,))
def group_norm(
    input: Tensor,
    num_groups: StaticInt,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: FloatLike = 1e-5,
) -> Tensor:
    """The channels (dim 1) in ``num_groups`` groups, each normalized over its channels and
    every other dim but the batch; then the per-channel ``weight``/``bias``. ``eps`` may be
    dynamic. Half-precision inputs compute in float32 and are rounded once, as torch's."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    batch, channels = input.shape[0], input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    count = math.prod(input.shape[2:]) * (batch * channels // num_groups)
    if size_guards.eager_raises("eq", count, 1, "group_norm (eager refuses one value per group)"):
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    params = [t for t in (weight, bias) if t is not None]
    if (
        input.dtype in _NATIVE_NORM_DTYPES
        and all(tuple(t.shape) == (channels,) for t in params)
        and _stats_dtype(input.dtype, [t.dtype for t in params]) is not None
    ):
        return native_group_norm_p.bind(input, weight, bias, eps, num_groups=num_groups)[0]
    xf = _upcast(input)
    grouped = xf.reshape(batch, num_groups, channels // num_groups * math.prod(input.shape[2:]))
    centered = grouped - grouped.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)
    out = (centered * torch.rsqrt(var + eps)).reshape(tuple(input.shape))
    affine = (1, channels) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * _upcast(weight).reshape(affine)
    if bias is not None:
        out = out + _upcast(bias).reshape(affine)
    return out.to(input.dtype)


# ---- weight normalization: nn.utils.parametrizations.weight_norm computes the weight from
# its parameters on every access, so the traced function recomputes it on every call. As eager's
# torch._weight_norm: its fused kernel (_weight_norm_interface, forward and backward) for a norm
# over every dim but the first or the last (float16 too, as measured on torch 2.10), otherwise
# ``v * (g / norm_except_dim(v))`` with eager's norms. The composition of sums and sqrt used
# before was up to 8 ulp off in 16 bits and 1 ulp in float32. The double backward is the
# kernel's formula differentiated: the true second derivative (eager's, through the fused
# kernel, fails gradgradcheck on torch 2.10; tests/test_op_bits.py).
def _weight_norm_impl(v: Any, g: Any, *, dim: int) -> Any:
    return torch.ops.aten._weight_norm_interface(v.contiguous(), g.contiguous(), dim)


weight_norm_p = Primitive(
    "weight_norm",
    _weight_norm_impl,
    small_meta(_weight_norm_impl, lambda v, g, *, dim: [tuple(v.shape), tuple(g.shape)]),
    multiple_results=True,
)


def _weight_norm_backward_impl(ct: Any, v: Any, g: Any, norms: Any, *, dim: int) -> Any:
    backward = torch.ops.aten._weight_norm_interface_backward
    return backward(ct.contiguous(), v.contiguous(), g.contiguous(), norms.contiguous(), dim)


def _weight_norm_backward_meta(ct: Any, v: TensorVar, g: TensorVar, norms: Any, *, dim: int) -> Any:
    return TensorVar(v.shape, v.dtype, v.device), TensorVar(g.shape, g.dtype, g.device)


weight_norm_backward_p = Primitive(
    "weight_norm_backward", _weight_norm_backward_impl, _weight_norm_backward_meta, multiple_results=True
)


def _weight_norm_vjp(cts: Any, outs: Any, v: Any, g: Any, *, dim: int) -> tuple[Any, Any]:
    """The kernel's backward; a cotangent of the norms (a double backward) through d||v|| / dv = v / ||v||."""
    ct, ct_norms = cts
    norms = outs[1]
    grad_v = grad_g = None
    if ct is not None:
        grad_v, grad_g = weight_norm_backward_p.bind(ct, v, g, norms, dim=dim)
    if ct_norms is not None:
        extra = (ct_norms.reshape(_norm_shape(v, dim)) * v / norms.reshape(_norm_shape(v, dim))).to(v.dtype)
        grad_v = extra if grad_v is None else grad_v + extra
    return grad_v, grad_g


def _norm_shape(v: Any, dim: int) -> tuple[int, ...]:
    return tuple(s if i == dim else 1 for i, s in enumerate(v.shape))


def _weight_norm_backward_vjp(cts: Any, outs: Any, ct: Any, v: Any, g: Any, norms: Any, *, dim: int) -> Any:
    """The double backward, from the kernel's formula with n = ||v|| (over every dim but ``dim``)
    and s = sum(ct * v): grad_v = (g / n) ct - (g s / n^3) v, grad_g = s / n; the norms are read as
    given (their own derivative in v comes from weight_norm's vjp)."""
    a, b = cts
    dims = tuple(i for i in range(v.ndim) if i != dim)
    shape = _norm_shape(v, dim)
    n, gg = norms.reshape(shape), g.reshape(shape)

    def total(t: Any) -> Any:
        return t.sum(dims, keepdim=True)

    s = total(ct * v)
    d_ct = d_v = d_g = d_n = None
    if a is not None:
        av, ac = total(a * v), total(a * ct)
        d_ct = (gg / n) * a - (gg * av / (n * n * n)) * v
        d_v = -gg * (av * ct + s * a) / (n * n * n)
        d_g = ac / n - s * av / (n * n * n)
        d_n = -gg * ac / (n * n) + 3 * gg * s * av / (n * n * n * n)
    if b is not None:
        bb = b.reshape(shape)
        d_ct = bb * v / n if d_ct is None else d_ct + bb * v / n
        d_v = bb * ct / n if d_v is None else d_v + bb * ct / n
        d_n = -bb * s / (n * n) if d_n is None else d_n - bb * s / (n * n)

    def cast(t: Any, like: Any) -> Any:
        return None if t is None else t.reshape(tuple(like.shape)).to(like.dtype)

    return cast(d_ct, ct), cast(d_v, v), cast(d_g, g), cast(d_n, norms)


register_vjp(weight_norm_p, _weight_norm_vjp)
register_vjp(weight_norm_backward_p, _weight_norm_backward_vjp)


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """eager's ``norm_except_dim(v, 2, dim)``: the 2-norm of each slice along ``dim`` (of all of
    ``v`` for -1), shaped to broadcast against ``v``, computed as eager computes it."""
    if dim == -1:
        norm: Tensor = torch.linalg.vector_norm(v)
        return norm
    norms: Tensor
    if dim == 0:
        norms = v.contiguous().reshape(v.shape[0], -1).norm(2, 1)
        return norms.reshape((v.shape[0],) + (1,) * (v.ndim - 1))
    if dim == v.ndim - 1:
        norms = v.contiguous().reshape(-1, v.shape[-1]).norm(2, 0)
        return norms.reshape((1,) * (v.ndim - 1) + (v.shape[-1],))
    norms = _norm_except_dim(v.transpose(0, dim), 0)
    return norms.transpose(0, dim)


@implements(torch._weight_norm)
def _torch_weight_norm(v: Tensor, g: Tensor, dim: StaticInt = 0) -> Tensor:
    """``v * (g / ||v||)``, the norm over every dim but ``dim`` (over all dims for -1)."""
    if (
        v.ndim > 0
        and (dim == 0 or dim == v.ndim - 1)
        and v.dtype in _NATIVE_NORM_DTYPES
        and g.dtype == v.dtype
        and g.numel() == v.shape[dim]
    ):
        return weight_norm_p.bind(v, g, dim=dim)[0]
    return v * (g / _norm_except_dim(v, dim))
