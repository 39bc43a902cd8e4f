"""Matrix products and composite layers.

``matmul`` is a primitive with its own vjp. ``linear``, ``layer_norm``, ``rms_norm`` and
``scaled_dot_product_attention`` are composed from other ops (their gradients come from the
parts); their scalar knobs (``eps``, attention ``scale``) may be dynamic, their shapes and
flags are static.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from symscalar import size_guards, sizes
from symscalar.ops.define import (
    FloatLike,
    Primitive,
    StaticBool,
    StaticFloat,
    StaticInt,
    StaticShape,
    Tensor,
    TensorVar,
    broadcast_shapes,
    defop,
    gradient_wanted,
    holomorphic,
    implements,
    is_broadcast,
    register_nvfuser,
    register_vjp,
    small_meta,
    unbroadcast,
    unreduce,
    upcast,
)
from symscalar.ops.factories import arange, full
from symscalar.ops.indexing import repeat_interleave
from symscalar.ops.random import dropout
from symscalar.types import is_static

__all__ = ["matmul", "linear", "layer_norm", "rms_norm", "group_norm", "scaled_dot_product_attention"]


# ---- matmul (the primitive takes operands with at least 2 dims, batch dims broadcast, or a
# matrix and a vector: eager's mv, whose gradients are eager's ger and mv)
def _matmul_shape(a: TensorVar, b: TensorVar) -> tuple[int, ...]:
    if a.ndim == 2 and b.ndim == 1 and size_guards.same_size(a.shape[1], b.shape[0], "matmul's inner dims"):
        return a.shape[:1]
    if a.ndim < 2 or b.ndim < 2 or not size_guards.same_size(a.shape[-1], b.shape[-2], "matmul's inner dims"):
        raise ValueError("not a batched matrix product")  # torch's meta path says why
    return broadcast_shapes([a.shape[:-2], b.shape[:-2]]) + (a.shape[-2], b.shape[-1])


matmul_p = Primitive("matmul", torch.matmul, small_meta(torch.matmul, _matmul_shape))


def _matmul_vjp(ct: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    if b.ndim == 1:  # mv: torch's grad.ger(vec) and self.t().mv(grad)
        return matmul_p.bind(ct.unsqueeze(-1), b.unsqueeze(0)), matmul_p.bind(a.mT, ct)
    if a.ndim == 2 and b.ndim == 2 and not b.dtype.is_complex:  # eager's mm
        return _mm_mat1_grad(ct, b, a), mm_mat2_backward_p.bind(ct, a, b)
    if a.ndim >= 3 and b.ndim >= 3 and a.dtype == b.dtype and not a.dtype.is_complex:  # eager's bmm
        grad_a, grad_b = bmm_self_backward_p.bind(ct, b), bmm_mat2_backward_p.bind(ct, a)
        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)
    return unbroadcast(ct @ b.mT, a.shape), unbroadcast(a.mT @ ct, b.shape)


register_vjp(matmul_p, holomorphic(_matmul_vjp))


# ---- the gradients of a batched ``a @ b`` as eager's bmm backward computes them. Eager's matmul
# runs ``bmm`` on ``x.expand(batch + x.shape[-2:]).reshape(-1, m, n)`` of each operand and saves
# those: where the reshape copies (a permuted view: attention's ``q.view(B, T, H, D).transpose(1,
# 2)``, or an expanded batch) the saved operand is contiguous and its gradient product reads its
# transpose. ``ct @ b.mT`` instead reshapes the transposed view, which copies into the other
# layout, and the BLAS kernel then rounds in another order (1 ulp in float32). The layouts are
# those of the tensors when the backward runs, so these read them then.
def _bmm_operand(x: torch.Tensor, batch: Sequence[int]) -> torch.Tensor:
    return x.expand(*batch, *x.shape[-2:]).reshape(-1, *x.shape[-2:])


def _bmm_self_backward_impl(ct: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The gradient of ``a`` (its full batch shape, unreduced): ``ct.bmm(b3.transpose(1, 2))``."""
    batch = ct.shape[:-2]
    grad = ct.reshape(-1, *ct.shape[-2:]).bmm(_bmm_operand(b, batch).transpose(1, 2))
    return grad.view(*batch, ct.shape[-2], b.shape[-2])


def _bmm_mat2_backward_impl(ct: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """The gradient of ``b`` (its full batch shape, unreduced): ``a3.transpose(1, 2).bmm(ct)``."""
    batch = ct.shape[:-2]
    grad = _bmm_operand(a, batch).transpose(1, 2).bmm(ct.reshape(-1, *ct.shape[-2:]))
    return grad.view(*batch, a.shape[-1], ct.shape[-1])


def _bmm_self_backward_meta(ct: TensorVar, b: TensorVar) -> TensorVar:
    return TensorVar((*ct.shape[:-1], b.shape[-2]), ct.dtype, ct.device)


def _bmm_mat2_backward_meta(ct: TensorVar, a: TensorVar) -> TensorVar:
    return TensorVar((*ct.shape[:-2], a.shape[-1], ct.shape[-1]), ct.dtype, ct.device)


bmm_self_backward_p = Primitive("bmm_self_backward", _bmm_self_backward_impl, _bmm_self_backward_meta)
bmm_mat2_backward_p = Primitive("bmm_mat2_backward", _bmm_mat2_backward_impl, _bmm_mat2_backward_meta)
# both are linear in each operand: d(ct @ b^T)/dct = g @ b, /db = g^T @ ct; d(a^T @ ct)/dct = a @ g, /da = ct @ g^T
register_vjp(bmm_self_backward_p, lambda g, out, ct, b: (g @ b, unbroadcast(g.mT @ ct, b.shape)))
register_vjp(bmm_mat2_backward_p, lambda g, out, ct, a: (a @ g, unbroadcast(ct @ g.mT, a.shape)))


def _swap_last(fd: Any, x: Any) -> Any:
    dims = list(range(x.ndim))
    dims[-2], dims[-1] = dims[-1], dims[-2]
    return fd.ops.permute(x, dims)


def _bmm_nvfuser_ok(ct: Any, x: Any) -> bool:
    return bool(ct.dtype == x.dtype and x.dtype in (torch.float32, torch.float16, torch.bfloat16))


register_nvfuser(
    bmm_self_backward_p, lambda fd, ct, b: _matmul_nvfuser(fd, ct, _swap_last(fd, b)), supports=_bmm_nvfuser_ok
)
register_nvfuser(
    bmm_mat2_backward_p, lambda fd, ct, a: _matmul_nvfuser(fd, _swap_last(fd, a), ct), supports=_bmm_nvfuser_ok
)


# ---- the gradient of ``b`` in ``a @ b`` (2-d) as eager's mm_mat2_backward computes it: the order
# of the product follows b's strides *when it runs* (a trace does not know them): for a
# column-major b (``w.t()`` of a contiguous w: every nn.Linear) ``(ct^T @ a)^T``, else ``a^T @ ct``.
# The two round differently (1 ulp in half of float32 cases), so a transposed view of a weight
# (``x @ w.t()`` for a w stored (out, in) is column-major, ``F.linear(x, w.t())`` is not) needs it.
def _column_major(t: torch.Tensor) -> bool:
    return t.stride(0) == 1 and t.stride(1) == t.shape[0]


def _mm_mat1_grad(ct: Any, b: Any, a: Any, b_at: int = 1) -> Any:
    """The gradient of ``a`` in ``a @ b`` (2-d), as eager's mm_mat1_backward orders it by a's
    strides: read when the backward runs, where ``a`` is saved anyway (b, the argument at
    ``b_at``, gets a gradient too: a frozen weight's input is not kept alive for its strides)."""
    if gradient_wanted(b_at):
        return mm_mat1_backward_p.bind(ct, b, a)
    return ct @ b.mT


def _mm_mat1_backward_impl(ct: Any, b: Any, a: Any) -> Any:
    return b.mm(ct.t()).t() if _column_major(a) else ct.mm(b.t())


def _mm_mat1_backward_meta(ct: TensorVar, b: TensorVar, a: TensorVar) -> TensorVar:
    return TensorVar(a.shape, ct.dtype, ct.device)


mm_mat1_backward_p = Primitive("mm_mat1_backward", _mm_mat1_backward_impl, _mm_mat1_backward_meta)
# linear in ct and in b (a gives only its strides): d/dct = g @ b, d/db = g^T @ ct
register_vjp(mm_mat1_backward_p, lambda g, out, ct, b, a: (g @ b, g.mT @ ct, None))
register_nvfuser(
    mm_mat1_backward_p,
    lambda fd, ct, b, a: _matmul_nvfuser(fd, ct, fd.ops.permute(b, [1, 0])),
    supports=lambda ct, b, a: ct.dtype == b.dtype and b.dtype in (torch.float32, torch.float16, torch.bfloat16),
)


def _mm_mat2_backward_impl(ct: Any, a: Any, b: Any) -> Any:
    return ct.t().mm(a).t() if _column_major(b) else a.t().mm(ct)


def _mm_mat2_backward_meta(ct: TensorVar, a: TensorVar, b: TensorVar) -> TensorVar:
    return TensorVar(b.shape, ct.dtype, ct.device)


mm_mat2_backward_p = Primitive("mm_mat2_backward", _mm_mat2_backward_impl, _mm_mat2_backward_meta)
# linear in ct and in a (b gives only its strides): d/dct = a @ g, d/da = ct @ g^T
register_vjp(mm_mat2_backward_p, lambda g, out, ct, a, b: (a @ g, ct @ g.mT, None))
register_nvfuser(
    mm_mat2_backward_p,
    lambda fd, ct, a, b: _matmul_nvfuser(fd, fd.ops.permute(a, [1, 0]), ct),
    supports=lambda ct, a, b: ct.dtype == a.dtype and a.dtype in (torch.float32, torch.float16, torch.bfloat16),
)


def _matmul_nvfuser(fd: Any, a: Any, b: Any) -> Any:
    """nvFuser's matmul needs the contracted dim broadcast in both operands or in neither; an
    expanded operand (the cotangent in the backward of ``(x @ w).sum()``) has it broadcast in
    one only, so that case multiplies (..., M, K, 1) by (..., 1, K, N) and sums over K."""
    if is_broadcast(a, a.ndim - 1) == is_broadcast(b, b.ndim - 2):
        return fd.ops.matmul(a, b)
    rank = max(a.ndim, b.ndim)
    a = fd.ops.broadcast(a, [True] * (rank - a.ndim) + [False] * a.ndim + [True])
    b = fd.ops.broadcast(b, [True] * (rank - b.ndim) + [False] * (b.ndim - 2) + [True, False, False])
    return fd.ops.sum(upcast(fd, fd.ops.mul(a, b)), [rank - 1], False)


register_nvfuser(
    matmul_p,
    _matmul_nvfuser,
    supports=lambda a, b: (
        b.ndim >= 2 and a.dtype == b.dtype and a.dtype in (torch.float32, torch.float16, torch.bfloat16)
    ),
)


@defop(torch=(torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__))
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with ``torch.matmul``'s rules for 1-D operands and batch broadcasting."""
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D")
    if input.ndim == 1 and other.ndim == 1:  # a dot product: torch's kernel, its dtype and accumulation
        return matmul_p.bind(input.unsqueeze(0), other.unsqueeze(-1)).reshape(())
    if input.ndim == 1:
        return matmul_p.bind(input.unsqueeze(0), other).squeeze(-2)
    if input.ndim >= 3 and other.ndim <= 2:  # eager folds the batch into the rows: one mm/mv,
        # so the gradient of ``other`` is one product over every row, not a sum of per-batch ones
        rows = input.reshape(-1, input.shape[-1])
        if other.ndim == 1:
            return matmul_p.bind(rows, other).reshape(tuple(input.shape[:-1]))
        return matmul_p.bind(rows, other).reshape((*input.shape[:-1], other.shape[-1]))
    if other.ndim == 1:  # a matrix times a vector: eager's mv
        return matmul_p.bind(input, other)
    return matmul_p.bind(input, other)


@implements(torch.Tensor.__rmatmul__)
def _torch_rmatmul(input: Tensor, other: Tensor) -> Tensor:
    return matmul(other, input)


@implements(torch.mm, torch.Tensor.mm)
def _torch_mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    return matmul(input, mat2)


@implements(torch.bmm, torch.Tensor.bmm)
def _torch_bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    return matmul(input, mat2)


# ---- linear: a primitive, so the torch backend runs eager's kernel (addmm, the bias fused)
# and the weight gradient comes out as eager's contiguous ``ct^T @ x`` (a transposed view of
# ``x^T @ ct`` would be copied by AccumulateGrad on every step)
def _linear_shape(x: TensorVar, w: TensorVar, b: TensorVar | None = None, *, fold: bool = False) -> tuple[int, ...]:
    if (
        x.ndim < 2
        or w.ndim != 2
        or not size_guards.same_size(x.shape[-1], w.shape[1], "linear's inner dims")
        or (b is not None and b.shape != w.shape[:1])
    ):
        raise ValueError("not a linear of the primitive's form")  # torch's meta path says why
    return x.shape[:-1] + w.shape[:1]


def _linear_impl(x: Any, w: Any, b: Any = None, *, fold: bool = False) -> Any:
    """``F.linear`` as eager runs it where the weight requires grad (``fold``): eager's matmul then
    folds the batch dims into rows even where that copies the input (a permuted or transposed
    one), one mm; the torch backend runs without grad, where matmul would not fold such an input
    but run a batched product, which rounds otherwise. (A contiguous input with a bias, and 2-d
    ones, go to addmm either way.)"""
    if fold and x.ndim >= 3 and not (b is not None and x.is_contiguous()):
        out = x.reshape(-1, x.shape[-1]).mm(w.t()).view(*x.shape[:-1], w.shape[0])
        return out if b is None else out.add_(b)
    return F.linear(x, w, b)


linear_p = Primitive("linear", _linear_impl, small_meta(_linear_impl, _linear_shape))


def _linear_vjp(ct: Any, out: Any, x: Any, w: Any, b: Any = None, *, fold: bool = False) -> tuple[Any, Any, Any]:
    flat_ct = ct.reshape(-1, ct.shape[-1])
    flat_x = x.reshape(-1, x.shape[-1])
    # eager's addmm(bias, x, w.t()) backward: ct^T @ x for a contiguous w (the usual case)
    if w.dtype.is_complex:
        return ct @ w, flat_ct.mT @ flat_x, None if b is None else flat_ct.sum(0)
    grad_w = mm_mat2_backward_p.bind(flat_ct, flat_x, w.mT).mT
    # the input's gradient as eager's mm of the folded input: ordered by its strides where the
    # weight gets a gradient (the folded input is saved anyway), else ct @ w
    grad_x = _mm_mat1_grad(flat_ct, w.mT, flat_x).reshape(tuple(x.shape)) if gradient_wanted(1) else ct @ w
    return grad_x, grad_w, None if b is None else _linear_bias_grad(ct, x)


# ---- the bias gradient of F.linear as eager's: eager computes a 2-d input, and a contiguous one,
# with addmm (the bias gradient sums the gradient's rows, flattened), any other input with matmul
# and then adds the bias (the gradient summed to the bias's shape over every leading dim as it
# arrives: in ConvNeXt's channels-last MLP a permuted view, a different order of addition, 1 ulp
# apart in most float32 cases). The input's contiguity is known only when the backward runs.
def _linear_bias_grad(ct: Any, x: Any) -> Any:
    if x.ndim <= 2 or ct.dtype.is_complex:
        return ct.reshape(-1, ct.shape[-1]).sum(0)
    return linear_bias_grad_p.bind(ct, x)


def _linear_bias_grad_impl(ct: Any, x: Any) -> Any:
    if x.is_contiguous():
        return ct.reshape(-1, ct.shape[-1]).sum(0)
    return ct.sum(tuple(range(ct.ndim - 1)))


def _linear_bias_grad_meta(ct: TensorVar, x: TensorVar) -> TensorVar:
    return TensorVar(ct.shape[-1:], ct.dtype, ct.device)


linear_bias_grad_p = Primitive("linear_bias_grad", _linear_bias_grad_impl, _linear_bias_grad_meta)
# a sum of ct's rows (x gives only its strides): the cotangent broadcast back
register_vjp(linear_bias_grad_p, lambda g, out, ct, x: (g.expand(tuple(ct.shape)), None))
register_nvfuser(
    linear_bias_grad_p,
    lambda fd, ct, x: fd.ops.sum(upcast(fd, ct), list(range(ct.ndim - 1)), False),
    supports=lambda ct, x: ct.dtype in (torch.float32, torch.float16, torch.bfloat16),
)


register_vjp(linear_p, holomorphic(_linear_vjp))


def _linear_nvfuser(fd: Any, x: Any, w: Any, b: Any = None, *, fold: bool = False) -> Any:
    return fd.ops.linear(x, w) if b is None else fd.ops.linear(x, w, b)


register_nvfuser(
    linear_p,
    _linear_nvfuser,
    supports=lambda x, w, b=None, *, fold=False: all(
        t.dtype == x.dtype and t.dtype in (torch.float32, torch.float16, torch.bfloat16)
        for t in (x, w, b)
        if t is not None
    ),
)


def _needs_grad(t: Any) -> bool:
    """Whether eager's tensor would require grad here (grad mode on and ``t`` on a grad path)."""
    return torch.is_grad_enabled() and bool(getattr(t, "requires_grad", False))


@defop(torch=(F.linear,))
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, like ``torch.nn.functional.linear``: the ``linear``
    primitive for a batch of inputs, a matrix and a matching bias of one dtype; otherwise
    (1-D inputs, a broadcast bias, mixed dtypes) composed, with torch's checks and promotion."""
    tensors = [t for t in (input, weight, bias) if t is not None]
    if (
        input.ndim >= 2
        and weight.ndim == 2
        and input.shape[-1] == weight.shape[1]
        and (bias is None or tuple(bias.shape) == tuple(weight.shape[:1]))
        and all(t.dtype == input.dtype for t in tensors)
    ):
        fold = input.ndim >= 3 and _needs_grad(weight)
        if bias is None:
            return linear_p.bind(input, weight, fold=fold)
        return linear_p.bind(input, weight, bias, fold=fold)
    if (  # eager flattens a 1-D input into its addmm path (the bias added in the GEMM)
        input.ndim == 1
        and weight.ndim == 2
        and bias is not None
        and input.shape[0] == weight.shape[1]
        and tuple(bias.shape) == tuple(weight.shape[:1])
        and all(t.dtype == input.dtype for t in tensors)
    ):
        return linear_p.bind(input.reshape(1, -1), weight, bias).reshape(-1)
    if input.ndim == 2 and bias is not None and weight.ndim != 2:  # eager's addmm path
        raise RuntimeError(f"mat2 must be a matrix, got {weight.ndim}-D tensor")
    if bias is not None and bias.dtype != input.dtype and input.dtype == weight.dtype:
        # eager's addmm (every contiguous input) refuses the mix; adding after the product
        # would promote the result instead (float16 input, bfloat16 bias: float32)
        raise RuntimeError(
            f"linear: self and mat2 must have the same dtype, but got {bias.dtype} (the bias) and "
            f"{input.dtype} (the input and weight). Fix: cast the bias to {input.dtype}."
        )
    out = matmul(input, weight.t())
    return out + bias if bias is not None else out


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


# ---- attention on CPU: eager's flash kernel each way. Where eager's F.scaled_dot_product_attention
# takes torch's CPU flash kernel (4-d operands with the same batch, heads and head size, no
# dropout), the trace does too: one kernel forward, one backward, and the residuals are the output
# and the log-sum-exp rows (O(L)) instead of the L x S attention weights the composition saves.
# A 2-d or 4-d mask that needs no gradient goes to the kernel too, as in eager (a mask that does, or
# any other, keeps the composition: eager's math path). Like eager's, the kernel's backward is not
# differentiable: a double backward through it raises when it runs, with eager's message.
_FLASH_CPU_DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def _unit_stride(t: torch.Tensor) -> torch.Tensor:
    """The kernels read the head dim as contiguous (eager takes them only then: a transposed
    operand goes to its math path, which agrees to rounding); others are copied first."""
    return t if t.stride(-1) == 1 else t.contiguous()


def _sdpa_flash_cpu_impl(q: Any, k: Any, v: Any, mask: Any, scale: Any, *, is_causal: bool) -> Any:
    q, k, v = (_unit_stride(t) for t in (q, k, v))
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, is_causal, attn_mask=mask, scale=float(scale)
    )


def _sdpa_flash_cpu_meta(
    q: Any, k: Any, v: Any, mask: Any, scale: Any, *, is_causal: bool
) -> tuple[TensorVar, TensorVar]:
    if not all(isinstance(t, TensorVar) for t in (q, k, v)) or not _flash_cpu_form(q, k, v, grouped=True):
        raise ValueError("sdpa_flash_cpu: operands outside the kernel's form")
    lse_dtype = torch.float64 if q.dtype == torch.float64 else torch.float32
    return TensorVar(q.shape, q.dtype, q.device), TensorVar(q.shape[:-1], lse_dtype, q.device)


def _flash_cpu_form(q: Any, k: Any, v: Any, *, grouped: bool = False) -> bool:
    """Where eager's CPU attention takes the flash kernel (unknowable strides aside); with
    ``grouped`` (``enable_gqa``), key/value heads that divide the query heads go to it too: the
    kernel serves each group itself, and its backward sums the group's key/value gradients."""
    return (
        all(t.ndim == 4 and t.device.type == "cpu" for t in (q, k, v))
        and q.dtype in _FLASH_CPU_DTYPES
        and q.dtype == k.dtype == v.dtype
        and _equal(q.shape[0], k.shape[0])
        and _equal(k.shape[0], v.shape[0])
        and _equal(k.shape[1], v.shape[1])
        and (
            _equal(q.shape[1], k.shape[1])
            or (
                grouped
                and all(isinstance(s, int) and s > 0 for s in (q.shape[1], k.shape[1]))
                and q.shape[1] % k.shape[1] == 0
            )
        )
        and _equal(k.shape[2], v.shape[2])
        and _equal(q.shape[3], k.shape[3])
        and _equal(k.shape[3], v.shape[3])
        and not any(sizes.may_equal(s, 0) for s in (*q.shape, *k.shape))  # (a dynamic dim may be 0)
    )


def _equal(a: Any, b: Any) -> bool:
    """Whether two sizes are equal as eager's kernel choice sees them, by value: dynamic dims equal at
    this call (``s_B``, ``s_B2``; a mask's ``s_T``) under a size guard, so the program takes eager's kernel."""
    return size_guards.same_size(a, b, "attention's kernel choice")


def _flash_cpu_mask(mask: Any, q: Any, k: Any) -> bool:
    """Where eager's CPU attention takes the flash kernel with this mask: 2-d or 4-d, its sizes
    broadcasting to the scores' (batch, heads, queries, keys), no gradient needed. A dynamic
    size (a declared dim: the mask and cache lengths of ``generate``) broadcasts as an
    elementwise op's does: a static 1, or equal to the scores' size (under a size guard where
    not provably so); a mask that does not keeps the composition, whose broadcast raises
    eager's error. (Static sizes only, the padded batches of a dynamic cache took the
    composition: their logits were 1 ulp from eager's.)"""
    scores = (*q.shape[:-1], k.shape[-2])
    return (
        mask.ndim in (2, 4)
        and mask.dtype in (torch.bool, torch.float32, q.dtype)
        and not (mask.requires_grad and torch.is_grad_enabled())
        and all(_broadcasts_to(m, s) for m, s in zip(mask.shape[::-1], scores[::-1]))
    )


def _broadcasts_to(size: Any, to: Any) -> bool:
    """Whether a mask's size broadcasts to the scores' size ``to`` without growing it."""
    if isinstance(size, int) and isinstance(to, int):
        return size in (1, to)
    if size == 1:
        return True
    what = "the attention mask and scores"
    if sizes.hint(size) == sizes.hint(to):
        return size_guards.same_size(size, to, what)
    # a dim the guards pin to 1 (a decode step's one token, its rows the packed query heads)
    return sizes.hint(size) == 1 and size_guards.same_size(size, 1, what)


sdpa_flash_cpu_p = Primitive("sdpa_flash_cpu", _sdpa_flash_cpu_impl, _sdpa_flash_cpu_meta, multiple_results=True)


def _sdpa_flash_cpu_backward_impl(
    ct: Any, q: Any, k: Any, v: Any, mask: Any, out: Any, lse: Any, scale: Any, *, is_causal: bool
) -> Any:
    q, k, v, out = (_unit_stride(t) for t in (q, k, v, out))  # the cotangent may have any strides
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        ct, q, k, v, out, lse, 0.0, is_causal, attn_mask=mask, scale=float(scale)
    )


def _like_operands(*operands: Any) -> tuple[TensorVar, ...]:
    return tuple(TensorVar(t.shape, t.dtype, t.device) for t in operands)


def _like_q_k_v(ct: Any, q: Any, k: Any, v: Any, *rest: Any, **params: Any) -> tuple[TensorVar, ...]:
    return _like_operands(q, k, v)


sdpa_flash_cpu_backward_p = Primitive(
    "sdpa_flash_cpu_backward", _sdpa_flash_cpu_backward_impl, _like_q_k_v, multiple_results=True
)


def _sdpa_flash_cpu_vjp(cts: Any, outs: Any, q: Any, k: Any, v: Any, mask: Any, scale: Any, *, is_causal: bool) -> Any:
    ct, ct_lse = cts
    out, lse = outs
    if ct_lse is not None:  # only a double backward reads the log-sum-exp rows
        return (*_no_double_backward_p.bind(q, k, v), None, None)
    if ct is None:
        return None, None, None, None, None
    # (the mask needs no gradient: _flash_cpu_mask)
    return (*sdpa_flash_cpu_backward_p.bind(ct, q, k, v, mask, out, lse, scale, is_causal=is_causal), None, None)


register_vjp(sdpa_flash_cpu_p, _sdpa_flash_cpu_vjp)


def _no_double_backward_impl(*operands: Any) -> Any:
    raise RuntimeError(
        "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented: "
        "a double backward (create_graph=True, then a gradient of the gradient) through "
        "scaled_dot_product_attention on CPU, which eager torch refuses the same way. Fix: compute the "
        "attention without F.scaled_dot_product_attention (softmax(q @ k.mT * scale) @ v) where a "
        "second derivative is needed."
    )


# its results stand for the gradients of its operands, which it never computes
_no_double_backward_p = Primitive(
    "sdpa_flash_cpu_double_backward", _no_double_backward_impl, _like_operands, multiple_results=True
)
register_vjp(
    sdpa_flash_cpu_backward_p,
    lambda cts, outs, ct, q, k, v, mask, out, lse, scale, *, is_causal: (
        *_no_double_backward_p.bind(ct, q, k, v),
        None,
        None,
        None,
        None,
        None,
    ),
)


# ---- attention
@defop(torch=(F.scaled_dot_product_attention,))
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: StaticFloat = 0.0,
    is_causal: StaticBool = False,
    scale: FloatLike | None = None,
    enable_gqa: StaticBool = False,
) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v``; ``scale`` may be dynamic. A nonzero
    ``dropout_p`` drops attention weights with the program's RNG (see ``ops/random.py``)."""
    if not query.dtype == key.dtype == value.dtype:  # eager's check (the kernels would fail at run time)
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    grouped = enable_gqa and query.ndim >= 3 and query.shape[-3] != key.shape[-3]
    if grouped:
        _check_groups(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: pass either attn_mask or is_causal, not both")
    if scale is None:  # eager's 1 / sqrt(0) for an empty head dim is inf (the output is empty)
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else math.inf
    if (
        dropout_p == 0.0
        and _flash_cpu_form(query, key, value, grouped=grouped)
        and (attn_mask is None or _flash_cpu_mask(attn_mask, query, key))
    ):
        if attn_mask is not None and attn_mask.dtype == torch.bool:  # eager's conversion
            attn_mask = torch.where(attn_mask, 0.0, float("-inf")).to(query.dtype)
        return sdpa_flash_cpu_p.bind(query, key, value, attn_mask, scale, is_causal=is_causal)[0]
    if query.dtype in (torch.float16, torch.bfloat16) and not _reduced_precision_math_allowed():
        # eager's math path keeps half/bfloat16 attention in float32 and rounds the output once
        # (unless torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)); composed in the
        # 16-bit dtype, the scores and weights were rounded at every step
        # (heads grouped after the upcast, as eager's: each key/value gradient sums in float32)
        q32, k32, v32 = query.float(), key.float(), value.float()
        if grouped:
            k32, v32 = _grouped_heads(q32, k32, v32)
        return _composed_attention(q32, k32, v32, attn_mask, dropout_p, is_causal, scale).to(query.dtype)
    if grouped:
        key, value = _grouped_heads(query, key, value)
    return _composed_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)


def _reduced_precision_math_allowed() -> bool:
    allowed: Callable[[], bool] = torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed
    return allowed()


def _composed_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: FloatLike,
) -> Tensor:
    if is_static(scale) and isinstance(scale, (int, float)) and math.isfinite(scale) and scale != 0:
        # eager's math path scales q and k by sqrt(scale) each before the product (its order,
        # so its rounding); a dynamic scale (a program input) scales the product
        root = math.sqrt(abs(scale))
        scores = (query * (-root if scale < 0 else root)) @ (key.mT * root)
    elif not is_static(scale):
        # a dynamic scale (a program input) the same way: sqrt(|scale|) in double, as eager's
        # SymFloat, the query's factor negated for a negative scale (0-d, so the operands keep
        # their dtype and the factor is rounded to it once, as eager's scalar)
        scale64 = full((), scale, dtype=torch.float64, device=query.device)
        root64 = scale64.abs().sqrt()
        scores = (query * torch.where(scale64 < 0, -root64, root64)) @ (key.mT * root64)
    else:
        scores = (query @ key.mT) * scale
    if is_causal:
        q_len, k_len = query.shape[-2], key.shape[-2]
        attn_mask = arange(q_len, device=query.device).unsqueeze(-1) >= arange(k_len, device=query.device)
    if attn_mask is not None:
        grown = broadcast_shapes([tuple(scores.shape), tuple(attn_mask.shape)])
        if len(grown) != scores.ndim or not size_guards.equal_shapes(
            grown, tuple(scores.shape), "the attention mask and scores"
        ):
            # eager's math path adds the mask in place to the scores: a mask that would grow
            # them (a 4-d mask for 3-d operands) is an error there, not a broadcast output
            raise RuntimeError(
                f"scaled_dot_product_attention: output with shape {list(scores.shape)} doesn't match "
                f"the broadcast shape {list(grown)} (the attention mask's shape {list(attn_mask.shape)} "
                "must broadcast to the scores' (..., queries, keys))"
            )
        if attn_mask.dtype == torch.bool:
            scores = torch.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask
    # torch's "safe softmax": a query whose every score is -inf (a fully masked row) attends
    # to nothing and gets zeros, not the NaN of a plain softmax. Its scores are replaced
    # before the softmax so that no NaN reaches the gradient either.
    keys = key.shape[-2]
    if (
        keys != 0
        if isinstance(keys, int)
        else size_guards.guarded("ne", keys, 0, "attention over a dynamic key length")
    ):
        fully_masked = scores.amax(-1, keepdim=True) == float("-inf")
        weights = torch.where(fully_masked, 0.0, torch.softmax(torch.where(fully_masked, 0.0, scores), -1))
    else:  # no keys: empty weights and a zero output, as eager's (an amax over nothing raises)
        weights = torch.softmax(scores, -1)
    if dropout_p != 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def _check_groups(query: Tensor, key: Tensor, value: Tensor) -> None:
    heads, kv_heads = query.shape[-3], key.shape[-3]
    if kv_heads == 0 or heads % kv_heads or value.shape[-3] != kv_heads:
        raise RuntimeError(
            f"scaled_dot_product_attention: enable_gqa needs the query heads ({heads}) to be a "
            f"multiple of the key/value heads ({kv_heads}, {value.shape[-3]})"
        )


def _grouped_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Grouped-query attention (``enable_gqa``) outside the flash kernel: each of the key/value
    heads serves ``query_heads // kv_heads`` consecutive query heads, as torch repeats them."""
    heads, kv_heads = query.shape[-3], key.shape[-3]
    return repeat_interleave(key, heads // kv_heads, -3), repeat_interleave(value, heads // kv_heads, -3)
