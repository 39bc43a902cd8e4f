"""Matrix products and attention (the normalization layers are in ops/norms.py).

``matmul`` and ``linear`` are primitives with their own vjps (eager's kernels, and the order
eager's backward computes their gradients in); ``scaled_dot_product_attention`` runs eager's
CPU flash kernel where eager does, else it is composed as eager's math path. The attention
``scale`` may be dynamic; shapes and flags are static.
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
    upcast,
)
from symscalar.ops.factories import arange, full
from symscalar.ops.indexing import repeat_interleave
from symscalar.ops.random import dropout
from symscalar.types import is_static

__all__ = ["matmul", "linear", "scaled_dot_product_attention"]


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
    # (the batch counted, not -1: a reshape of an empty tensor cannot infer it)
    return x.expand(*batch, *x.shape[-2:]).reshape(math.prod(batch), *x.shape[-2:])


def _bmm_self_backward_impl(ct: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The gradient of ``a`` (its full batch shape, unreduced): ``ct.bmm(b3.transpose(1, 2))``."""
    batch = ct.shape[:-2]
    grad = _bmm_operand(ct, batch).bmm(_bmm_operand(b, batch).transpose(1, 2))
    return grad.view(*batch, ct.shape[-2], b.shape[-2])


def _bmm_mat2_backward_impl(ct: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """The gradient of ``b`` (its full batch shape, unreduced): ``a3.transpose(1, 2).bmm(ct)``."""
    batch = ct.shape[:-2]
    grad = _bmm_operand(a, batch).transpose(1, 2).bmm(_bmm_operand(ct, batch))
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
    if input.ndim == 1 and not (other.ndim >= 3 and _needs_grad(input)):
        return matmul_p.bind(input.unsqueeze(0), other).squeeze(-2)
    if input.ndim >= 3 and other.ndim <= 2:  # eager folds the batch into the rows: one mm/mv,
        # so the gradient of ``other`` is one product over every row, not a sum of per-batch ones
        rows = input.reshape(-1, input.shape[-1])
        if other.ndim == 1:
            return matmul_p.bind(rows, other).reshape(tuple(input.shape[:-1]))
        return matmul_p.bind(rows, other).reshape((*input.shape[:-1], other.shape[-1]))
    if other.ndim == 1:  # a matrix times a vector: eager's mv
        return matmul_p.bind(input, other)
    if input.ndim <= 2 and other.ndim >= 3 and _needs_grad(input):
        # eager computes ``(other.mT @ input.mT).mT`` with other.mT folded into rows (one mm or
        # mv, the result made contiguous), so that input's gradient is one product over every
        # batch: a sum of batched products differs by an ulp
        flipped = other.mT
        folded = flipped.reshape(-1, flipped.shape[-1])
        if input.ndim == 1:
            return matmul_p.bind(folded, input).reshape(tuple(flipped.shape[:-1]))
        rows = matmul_p.bind(folded, input.mT)
        return rows.reshape((*flipped.shape[:-1], input.shape[0])).mT.contiguous()
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


# ---- attention on CPU: eager's flash kernel each way. Where eager's F.scaled_dot_product_attention
# takes torch's CPU flash kernel (4-d operands with the same batch, heads and head size, no
# dropout), the trace does too: one kernel forward, one backward, and the residuals are the output
# and the log-sum-exp rows (O(L)) instead of the L x S attention weights the composition saves.
# A 2-d or 4-d mask that needs no gradient goes to the kernel too, as in eager (a mask that does, or
# any other, keeps the composition: eager's math path). Like eager's, the kernel's backward is not
# differentiable: a double backward through it raises when it runs, with eager's message.
_FLASH_CPU_DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def _eager_takes_flash(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Any, scale: Any) -> bool:
    """Whether eager's CPU attention takes the flash kernel for these very tensors. The trace
    cannot see strides, and eager's choice reads them (a head dim that is not contiguous, e.g.
    ``k.mT.mT`` of a transposed tensor, goes to its math path, 1 ulp from the kernel): asked of
    eager's own chooser at run time, each call agrees with eager whatever layout it gets."""
    choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, False, scale=float(scale), enable_gqa=q.shape[1] != k.shape[1])
    return bool(choice == torch.nn.attention.SDPBackend.FLASH_ATTENTION.value)


def _eager_math_attention(q: Any, k: Any, v: Any, mask: Any, scale: Any, *, is_causal: bool) -> Any:
    """Eager's math path (``_scaled_dot_product_attention_math``), the output only."""
    return torch.ops.aten._scaled_dot_product_attention_math(
        q, k, v, mask, 0.0, is_causal, None, scale=float(scale), enable_gqa=q.shape[1] != k.shape[1]
    )[0]


def _sdpa_flash_cpu_impl(q: Any, k: Any, v: Any, mask: Any, scale: Any, *, is_causal: bool) -> Any:
    if not _eager_takes_flash(q, k, v, mask, scale):  # the log-sum-exp rows go unread (see the backward)
        out = _eager_math_attention(q, k, v, mask, scale, is_causal=is_causal)
        return out, q.new_zeros(q.shape[:-1], dtype=torch.float64 if q.dtype == torch.float64 else torch.float32)
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
    """Whether two of q, k, v's sizes are equal as eager's kernel choice sees them, by value: dynamic
    dims equal at this call (``s_B``, ``s_B2``) under a size guard, so the program takes eager's kernel
    (a mask's sizes: ``_broadcasts_to``)."""
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
    if not _eager_takes_flash(q, k, v, mask, scale):  # the forward took eager's math path: its autograd
        return _eager_math_attention_backward(ct, q, k, v, mask, scale, is_causal=is_causal)
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        ct, q, k, v, out, lse, 0.0, is_causal, attn_mask=mask, scale=float(scale)
    )


def _eager_math_attention_backward(ct: Any, q: Any, k: Any, v: Any, mask: Any, scale: Any, *, is_causal: bool) -> Any:
    """The gradients eager's autograd gives its math path: recomputed, on leaves with the
    operands' strides (``detach`` keeps them), so the same kernels run in the same order."""
    q, k, v = (t.detach().requires_grad_(True) for t in (q, k, v))
    with torch.enable_grad():
        out = _eager_math_attention(q, k, v, mask, scale, is_causal=is_causal)
        return torch.autograd.grad(out, (q, k, v), ct)


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
