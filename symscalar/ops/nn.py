"""Layers and losses language models use, composed from other ops (no new primitives, so
their gradients and lowerings come from the parts): ``masked_fill``, ``tril``/``triu``,
``addmm``, ``type_as``/``type``, ``einsum``, ``nll_loss`` and ``cross_entropy``.

Static: ``tril``'s ``diagonal``, the losses' ``ignore_index`` and ``reduction``, the einsum
equation (all decide shapes or which elements take part). Dynamic allowed: ``masked_fill``'s
value, ``addmm``'s ``beta``/``alpha``, ``label_smoothing``. Where torch skips a term for a
zero coefficient (``addmm`` with ``beta=0`` ignores NaN in ``input``; ``label_smoothing <= 0``
never reads the smoothing term), a dynamic coefficient selects with ``where`` at run time, so
every value gives eager's result.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from symscalar.ops.composites import matmul
from symscalar.ops.define import (
    FloatLike,
    NumberLike,
    Primitive,
    StaticBool,
    StaticInt,
    Tensor,
    TensorProxy,
    TensorVar,
    UnsupportedOperationError,
    autograd_backward,
    check,
    defop,
    implements,
    is_static,
    register_nvfuser,
    register_vjp,
    small_meta,
    unbroadcast,
)
from symscalar.ops.factories import arange, full, to
from symscalar.ops.indexing import broadcast_shapes
from symscalar.ops.reductions import log_softmax
from symscalar.ops.shape import permute, reshape
from symscalar.size_guards import broadcast_size, equal_shapes
from symscalar.sizes import Size, register_shape_rule

__all__ = [
    "masked_fill",
    "tril",
    "triu",
    "addmm",
    "type_as",
    "einsum",
    "nll_loss",
    "cross_entropy",
]

TensorOrNumber = Tensor | NumberLike


def _holds(pred: Any, like: Tensor) -> Any:
    """A 0-d bool tensor on ``like``'s device holding a (dynamic) predicate's runtime value,
    for ``torch.where`` to select with."""
    return full((), pred, dtype=torch.bool, device=like.device)


# ---- masked_fill
@defop(torch=(torch.masked_fill, torch.Tensor.masked_fill))
def masked_fill(input: Tensor, mask: Tensor, value: TensorOrNumber) -> Tensor:
    """``input`` with ``value`` (a number that may be dynamic, or a 0-d tensor) where the bool
    ``mask`` holds (``input`` and ``mask`` broadcast, as the out-of-place torch op does); the value
    is cast to ``input``'s dtype."""
    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with dtype {mask.dtype}")
    if isinstance(value, (TensorProxy, torch.Tensor)):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill only supports a 0-dimensional value tensor, "
                f"but got tensor with {value.ndim} dimension(s)."
            )
        fill = to(value, input.dtype)
    else:
        fill = full((), value, dtype=input.dtype, device=input.device)
    return torch.where(mask, fill, input)


# ---- tril, triu
def _triangle(x: Tensor, diagonal: int, lower: bool, op: str) -> Tensor:
    if x.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    rows, cols = x.shape[-2], x.shape[-1]
    # column minus row of each position, from one iota of the full (rows, cols) shape: no
    # size-1 operand to broadcast (nvFuser's concrete size-1 dims do not broadcast)
    flat = arange(rows * cols, device=x.device).reshape(rows, cols)
    offset = flat % cols - torch.div(flat, cols, rounding_mode="floor")
    keep = offset <= diagonal if lower else offset >= diagonal
    return torch.where(keep, x, full((), 0, dtype=x.dtype, device=x.device))


@defop(torch=(torch.tril, torch.Tensor.tril))
def tril(input: Tensor, diagonal: StaticInt = 0) -> Tensor:
    """The lower triangle of the last two dims (``j - i <= diagonal``), zeros above."""
    return _triangle(input, diagonal, True, "tril")


@defop(torch=(torch.triu, torch.Tensor.triu))
def triu(input: Tensor, diagonal: StaticInt = 0) -> Tensor:
    """The upper triangle of the last two dims (``j - i >= diagonal``), zeros below."""
    return _triangle(input, diagonal, False, "triu")


# ---- addmm: beta * input + alpha * (mat1 @ mat2)
def _scaled(t: Tensor, coefficient: NumberLike) -> Tensor:
    """``coefficient * t``, exactly 0 where the coefficient is 0 (as BLAS: the term is not
    read, so NaN and inf in it do not propagate), for a static or a dynamic coefficient."""
    if is_static(coefficient):
        if coefficient == 1:
            return t
        if coefficient == 0:  # 0 everywhere, but still on the graph: eager's gradient is zeros
            return torch.where(torch.zeros_like(t, dtype=torch.bool), t, 0)
        return t * coefficient
    return torch.where(_holds(coefficient == 0, t), 0, t * coefficient)


# With static coefficients and one dtype, a primitive: the torch backend runs eager's kernel,
# which adds beta * input inside the GEMM's accumulation (16-bit: rounded once, not twice as
# the composition would), and its vjp is torch's formulas in their order.
def _addmm_shape(input: Any, mat1: Any, mat2: Any, *, beta: Any, alpha: Any) -> tuple[int, ...]:
    return (mat1.shape[0], mat2.shape[1])


addmm_p = Primitive("addmm", torch.addmm, small_meta(torch.addmm, _addmm_shape))


def _addmm_vjp(ct: Any, out: Any, input: Any, mat1: Any, mat2: Any, *, beta: Any, alpha: Any) -> tuple[Any, Any, Any]:
    # torch: maybe_multiply(grad, beta) summed to input's shape; maybe_multiply(grad.mm(mat2.t()),
    # alpha); maybe_multiply(mat1.t().mm(grad), alpha) (maybe_multiply skips a factor of 1)
    def times(t: Any, c: Any) -> Any:
        return t if c == 1 else t * c

    return unbroadcast(times(ct, beta), input.shape), times(ct @ mat2.mT, alpha), times(mat1.mT @ ct, alpha)


def _addmm_nvfuser(fd: Any, input: Any, mat1: Any, mat2: Any, *, beta: Any, alpha: Any) -> Any:
    return fd.ops.linear(mat1, fd.ops.permute(mat2, [1, 0]), input)


register_vjp(addmm_p, _addmm_vjp)
register_nvfuser(  # the bias form of GPT-2's Conv1D; other coefficients and shapes run in torch
    addmm_p,
    _addmm_nvfuser,
    supports=lambda input, mat1, mat2, *, beta, alpha: (
        beta == 1
        and alpha == 1
        and input.ndim == 1
        and all(
            t.dtype == mat1.dtype and t.dtype in (torch.float32, torch.float16, torch.bfloat16) for t in (input, mat2)
        )
    ),
)


@defop(torch=(torch.addmm, torch.Tensor.addmm))
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: NumberLike = 1, alpha: NumberLike = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``/``mat2`` (``input`` broadcasts);
    ``beta`` and ``alpha`` may be dynamic. A zero coefficient drops its term, as torch's."""
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"addmm: mat1 and mat2 must be 2-D, got {mat1.ndim}-D and {mat2.ndim}-D")
    shape = (mat1.shape[0], mat2.shape[1])
    if broadcast_shapes(tuple(input.shape), shape) != shape:
        raise RuntimeError(f"addmm: input of shape {list(input.shape)} does not broadcast to {list(shape)}")
    if (
        is_static(beta)
        and is_static(alpha)
        and input.dtype == mat1.dtype == mat2.dtype
        and input.dtype.is_floating_point
        and not input.dtype.is_complex
    ):
        return addmm_p.bind(input, mat1, mat2, beta=beta, alpha=alpha)
    if mat1.dtype == mat2.dtype and input.dtype != mat1.dtype:  # eager's kernel refuses the mix
        raise RuntimeError(f"addmm: self and mat2 must have the same dtype, but got {input.dtype} and {mat2.dtype}")
    return (_scaled(input, beta) + _scaled(matmul(mat1, mat2), alpha)).expand(shape)


# ---- type_as, type
@defop(torch=(torch.Tensor.type_as,))
def type_as(input: Tensor, other: Tensor) -> Tensor:
    """``input`` converted to ``other``'s dtype."""
    return to(input, other.dtype)


_TYPE_NAMES = {
    torch.float32: "FloatTensor",
    torch.float64: "DoubleTensor",
    torch.float16: "HalfTensor",
    torch.bfloat16: "BFloat16Tensor",
    torch.int64: "LongTensor",
    torch.int32: "IntTensor",
    torch.int16: "ShortTensor",
    torch.int8: "CharTensor",
    torch.uint8: "ByteTensor",
    torch.bool: "BoolTensor",
}


@implements(torch.Tensor.type)
def _tensor_type(input: Tensor, dtype: Any = None, non_blocking: StaticBool = False, **kwargs: Any) -> Any:
    """``x.type()`` is the type's name (static: dtype and device are); ``x.type(dtype)``,
    ``x.type('torch.DoubleTensor')`` and ``x.type(torch.DoubleTensor)`` convert."""
    if dtype is None:
        prefix = "torch.cuda." if input.device.type == "cuda" else "torch."
        return prefix + _TYPE_NAMES.get(input.dtype, str(input.dtype))
    if isinstance(dtype, str):
        on_cuda = dtype.startswith("torch.cuda.")
        target = getattr(torch, dtype.rsplit(".", 1)[-1], None)
        if target is None or not hasattr(target, "dtype"):
            raise RuntimeError(f"invalid type: {dtype!r}")
        if on_cuda != (input.device.type == "cuda"):
            raise UnsupportedOperationError(
                f"Tensor.type({dtype!r}) would move the tensor to another device inside a traced "
                "function; move the inputs before the call"
            )
        dtype = target.dtype
    elif not isinstance(dtype, torch.dtype):
        dtype = getattr(dtype, "dtype", dtype)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"Tensor.type(): expected a dtype or a type name, got {dtype!r}")
    return to(input, dtype)


# ---- einsum: operands contracted pairwise with matmul
def _einsum_terms(equation: str, operands: Sequence[Tensor]) -> tuple[list[str], str]:
    """The equation's input terms and output term with ``...`` spelled out as letters."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): the equation {equation!r} has {len(terms)} operands, got {len(operands)}")
    spare = [c for c in string.ascii_letters if c not in equation]
    n_ell = max([op.ndim - (len(t) - 3) for t, op in zip(terms, operands) if "..." in t] or [0])
    ell = "".join(spare[:n_ell])
    expanded = []
    for t, op in zip(terms, operands):
        if "..." in t:
            t = t.replace("...", ell[n_ell - (op.ndim - (len(t) - 3)) :])
        if len(t) != op.ndim or not t.isalpha():
            raise RuntimeError(f"einsum(): the term {t!r} does not fit an operand with {op.ndim} dims")
        if len(set(t)) != len(t):
            raise UnsupportedOperationError(
                f"einsum(): a letter repeated within one operand ({t!r}: a diagonal) is not supported"
            )
        expanded.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in ell))
    if len(set(out)) != len(out) or any(c not in "".join(expanded) for c in out):
        raise RuntimeError(f"einsum(): invalid output term in {equation!r}")
    return expanded, out


def _sum_out(t: Tensor, term: str, keep: set[str]) -> tuple[Tensor, str]:
    dims = tuple(i for i, c in enumerate(term) if c not in keep)
    if not dims:
        return t, term
    return t.sum(dims), "".join(c for c in term if c in keep)


def _arrange(t: Tensor, term: str, order: str, sizes: dict[str, int]) -> Tensor:
    """``t`` permuted to ``order`` and broadcast to the common sizes of its letters."""
    t = permute(t, tuple(term.index(c) for c in order))
    return t.expand(tuple(sizes[c] for c in order))


def _contract(a: Tensor, ta: str, b: Tensor, tb: str, keep: set[str], sizes: dict[str, int]) -> tuple[Tensor, str]:
    """``a`` and ``b`` multiplied, summing the letters they share that ``keep`` lacks, as one
    batched matmul ``(batch, left, inner) @ (batch, inner, right)``."""
    batch = "".join(c for c in ta if c in tb and c in keep)
    inner = "".join(c for c in ta if c in tb and c not in keep)
    left = "".join(c for c in ta if c not in tb)
    right = "".join(c for c in tb if c not in ta)
    n = {g: math.prod(sizes[c] for c in g) for g in (batch, inner, left, right)}
    a3 = reshape(_arrange(a, ta, batch + left + inner, sizes), (n[batch], n[left], n[inner]))
    b3 = reshape(_arrange(b, tb, batch + inner + right, sizes), (n[batch], n[inner], n[right]))
    out = reshape(matmul(a3, b3), tuple(sizes[c] for c in batch + left + right))
    return out, batch + left + right


@defop
def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Einstein summation, e.g. ``einsum("bhqd,bhkd->bhqk", q, k)``; the equation is static.
    Operands are contracted left to right, each pair as one batched matmul; ``...``
    and size-1 broadcasting as torch's. A letter repeated within one operand is refused."""
    terms, out = _einsum_terms(equation, operands)
    sizes: dict[str, int] = {}
    for t, op in zip(terms, operands):
        for c, s in zip(t, op.shape):
            if c in sizes and (isinstance(s, Size) or isinstance(sizes[c], Size)):  # dynamic: size_guards.py
                sizes[c] = broadcast_size(sizes[c], s, f"einsum's {c!r}")
                continue
            if sizes.get(c, 1) not in (1, s) and s != 1:
                raise RuntimeError(f"einsum(): operands do not broadcast for {c!r}: sizes {sizes[c]} and {s}")
            sizes[c] = s if sizes.get(c, 1) == 1 else sizes[c]
    pending = list(zip(operands, terms))

    def needed(rest: list[tuple[Tensor, str]]) -> set[str]:
        return set(out).union(*(set(t) for _, t in rest))

    acc, acc_term = _sum_out(pending[0][0], pending[0][1], needed(pending[1:]))
    for i in range(1, len(pending)):
        b, tb = _sum_out(pending[i][0], pending[i][1], needed(pending[:i] + pending[i + 1 :]) | set(acc_term))
        acc, acc_term = _contract(acc, acc_term, b, tb, needed(pending[i + 1 :]), sizes)
    acc, acc_term = _sum_out(acc, acc_term, set(out))
    return _arrange(acc, acc_term, out, sizes)


def _is_rearrangement(equation: str, operands: Sequence[Any]) -> bool:
    """One operand and every letter of it in the output: a permutation (no product, no sum)."""
    if len(operands) != 1 or not isinstance(operands[0], (TensorProxy, torch.Tensor)):
        return False
    terms, out = _einsum_terms(equation, operands)
    return sorted(terms[0]) == sorted(out)


@implements(torch.einsum)
def _torch_einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise UnsupportedOperationError("torch.einsum's sublist form is not supported; pass an equation string")
    if torch._C._is_any_autocast_enabled() and not _is_rearrangement(equation, operands):
        # eager autocasts the bmm it runs inside: not recorded. A rearrangement of one operand
        # (DiT's unpatchify, "nhwpqc->nchpwq") runs no arithmetic, so nothing for autocast to cast
        raise UnsupportedOperationError(
            "torch.einsum under torch.autocast is not supported yet: eager casts the matrix "
            "products it runs inside, which symscalar does not record. Call it with autocast "
            "disabled, or write the products with torch.matmul (autocast-recorded)."
        )
    return einsum(equation, *operands)


# ---- nll_loss, cross_entropy
def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return torch.nn._reduction.legacy_get_string(size_average, reduce, emit_warning=False)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _class_dim(x: Tensor) -> int:
    return 1 if x.ndim >= 2 else 0


def _class_weights(weight: Tensor | None, x: Tensor, op: str) -> Tensor | None:
    """``weight`` shaped to broadcast along the class dim of ``x``."""
    if weight is None:
        return None
    classes = x.shape[_class_dim(x)]
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(
            f"{op}: weight must be 1-D with one entry per class ({classes}), got shape {list(weight.shape)}"
        )
    shape = [1] * x.ndim
    shape[_class_dim(x)] = classes
    return reshape(weight, tuple(shape))


# ---- nll_loss as eager's kernel (aten::nll_loss_nd): a primitive, forward and backward
def _nll_loss_impl(x: Any, target: Any, weight: Any, *, ignore_index: int, reduction: str) -> Any:
    return F.nll_loss(x, target, weight, ignore_index=ignore_index, reduction=reduction)


def _nll_loss_meta(x: TensorVar, target: TensorVar, weight: Any, *, ignore_index: int, reduction: str) -> TensorVar:
    """eager's meta kernel: its checks (shapes, dtypes) raise while tracing, as eager would."""
    meta = [None if v is None else torch.empty(v.shape, dtype=v.dtype, device="meta") for v in (x, target, weight)]
    out = _nll_loss_impl(*meta, ignore_index=ignore_index, reduction=reduction)
    return TensorVar(tuple(out.shape), out.dtype, x.device)


nll_loss_p = Primitive("nll_loss", _nll_loss_impl, _nll_loss_meta)
# eager's nll_loss_backward kernel, run by torch.autograd on the forward
nll_loss_backward_p = Primitive("nll_loss_backward", *autograd_backward(_nll_loss_impl))
# nll_loss is linear in x (weight and target get no gradient, as in eager), so its backward is
# linear in the cotangent and does not read x's values: the backward's own vjp is nll_loss again
register_vjp(
    nll_loss_p,
    lambda ct, out, x, target, weight, **params: (
        nll_loss_backward_p.bind(ct, x, target, weight, **params),
        None,
        None,
    ),
)
register_shape_rule(
    nll_loss_p, lambda x, target, weight, *, reduction, **params: tuple(target.shape) if reduction == "none" else ()
)
register_shape_rule(nll_loss_backward_p, lambda ct, x, *rest, **params: tuple(x.shape))
register_vjp(
    nll_loss_backward_p,
    lambda ct, out, ct_in, x, target, weight, **params: (
        nll_loss_p.bind(ct, target, weight, **params),
        None,
        None,
        None,
    ),
)


@defop
def nll_loss(
    x: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: StaticInt = -100, reduction: str = "mean"
) -> Tensor:
    """Negative log-likelihood of the class ``target`` in log-probabilities ``x`` (classes
    on dim 1, or dim 0 for 1-D ``x``); targets equal to ``ignore_index`` count for nothing.
    ``'mean'`` divides by the total weight of the counted targets."""
    cd = _class_dim(x)
    if target.dtype != torch.int64:
        raise RuntimeError(f"nll_loss: expected target of dtype int64 (Long), got {target.dtype}")
    expected = tuple(s for i, s in enumerate(x.shape) if i != cd)
    if tuple(target.shape) != expected and not equal_shapes(tuple(target.shape), expected, "nll_loss's target"):
        raise ValueError(f"nll_loss: expected target of shape {list(expected)}, got {list(target.shape)}")
    if weight is not None:
        _class_weights(weight, x, "nll_loss")
        if isinstance(weight, TensorProxy) and weight.requires_grad:
            raise UnsupportedOperationError(
                "nll_loss with a weight that requires grad: eager's nll_loss has no derivative for weight (eager "
                "refuses it too). Pass weight.detach(), or compute the loss outside the jitted function."
            )
    # eager's own kernel, forward and backward: its accumulation order and its division by the
    # total weight are not those of a sum followed by a division (1 ulp apart in ~40% of batches)
    return nll_loss_p.bind(x, target, weight, ignore_index=ignore_index, reduction=reduction)


@implements(F.nll_loss)
def _torch_nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: StaticBool | None = None,
    ignore_index: StaticInt = -100,
    reduce: StaticBool | None = None,
    reduction: str = "mean",
) -> Tensor:
    return nll_loss(input, target, weight, ignore_index, _reduction(size_average, reduce, reduction))


def _counted_weight_impl(weight: Any, target: Any, *, ignore_index: int) -> Any:
    return weight.gather(0, target.masked_select(target != ignore_index).flatten()).sum()


def _counted_weight_meta(weight: TensorVar, target: TensorVar, *, ignore_index: int) -> TensorVar:
    return TensorVar((), weight.dtype, weight.device)


# The total weight of the counted targets, summed as aten's label-smoothing term sums it: over
# the gathered (compacted) weights. A sum with zeros at the ignored positions adds the same
# numbers in another order (vectorized partial sums), 1 ulp apart in ~10% of float32 batches of
# 16-17. No derivative: eager's nll_loss has none for weight either (refused in cross_entropy).
counted_weight_p = Primitive("counted_weight", _counted_weight_impl, _counted_weight_meta)
register_shape_rule(counted_weight_p, lambda weight, target, **params: ())


def _reduce(losses: Tensor, reduction: str, count: Any) -> Tensor:
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / count


def _smoothing(
    ls: FloatLike, logp: Tensor, target: Tensor, w: Tensor | None, ignore_index: int, reduction: str
) -> Tensor:
    """torch's label-smoothing term for class-index targets: ``-sum(logp * weight)`` over
    classes, zero at ignored targets, reduced like the nll term it is mixed with."""
    cd = _class_dim(logp)
    counted = target != ignore_index
    smooth = torch.where(counted, -(logp * w if w is not None else logp).sum(cd), 0)
    if reduction != "mean":
        return _reduce(smooth, reduction, 1)
    if w is not None:  # aten: smooth.sum() / weight.gather(0, counted targets).sum()
        return smooth.sum() / counted_weight_p.bind(w.reshape(-1), target, ignore_index=ignore_index)
    return smooth.sum() / to(counted, logp.dtype).sum()


@defop
def cross_entropy(
    x: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: StaticInt = -100,
    reduction: str = "mean",
    label_smoothing: FloatLike = 0.0,
) -> Tensor:
    """``nll_loss(log_softmax(x, class_dim), target)`` for class-index targets, or
    ``-sum(target * log_softmax(x))`` for class-probability targets (floating, ``x``'s
    shape); ``label_smoothing`` (may be dynamic) mixes in the uniform distribution, as torch."""
    cd = _class_dim(x)
    classes = x.shape[cd]
    logp = log_softmax(x, cd)
    w = _class_weights(weight, x, "cross_entropy")
    if isinstance(weight, TensorProxy) and weight.requires_grad and not target.dtype.is_floating_point:
        raise UnsupportedOperationError(
            "cross_entropy with class-index targets and a weight that requires grad: eager's nll_loss has no "
            "derivative for weight (eager refuses it too). Pass weight.detach(), or compute the loss outside the "
            "jitted function."
        )
    # torch checks only the upper bound; a label_smoothing <= 0 means no smoothing at all
    if is_static(label_smoothing) and label_smoothing > 1.0:
        raise RuntimeError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if not is_static(label_smoothing):
        check(label_smoothing <= 1.0, "cross_entropy: label_smoothing must be between 0.0 and 1.0")
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(x.shape) and not equal_shapes(
            tuple(target.shape), tuple(x.shape), "cross_entropy's target"
        ):
            raise RuntimeError(
                f"cross_entropy: probability targets must have the input's shape {list(x.shape)}, "
                f"got {list(target.shape)}"
            )
        if not is_static(label_smoothing):
            smoothed = target * (1 - label_smoothing) + label_smoothing / classes
            target = torch.where(_holds(label_smoothing > 0, x), smoothed, target)
        elif label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        products = logp * target if w is None else logp * target * w
        if reduction == "none":
            return -products.sum(cd)
        # aten sums every element at once (not per row, then the rows): the same bits need the same order
        total = -products.sum()
        return total if reduction == "sum" else total / (x.numel() // classes)
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    if is_static(label_smoothing) and label_smoothing <= 0:
        return nll
    smooth = _smoothing(label_smoothing, logp, target, w, ignore_index, reduction)
    mixed = nll * (1 - label_smoothing) + smooth * (label_smoothing / classes)
    return mixed if is_static(label_smoothing) else torch.where(_holds(label_smoothing > 0, x), mixed, nll)


@implements(F.cross_entropy)
def _torch_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: StaticBool | None = None,
    ignore_index: StaticInt = -100,
    reduce: StaticBool | None = None,
    reduction: str = "mean",
    label_smoothing: FloatLike = 0.0,
) -> Tensor:
    return cross_entropy(
        input, target, weight, ignore_index, _reduction(size_average, reduce, reduction), label_smoothing
    )
