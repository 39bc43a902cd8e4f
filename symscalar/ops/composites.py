"""Matrix products and composite layers.

``matmul`` is a primitive with its own vjp. ``linear``, ``layer_norm``, ``rms_norm`` and
``scaled_dot_product_attention`` are composed from other ops (their gradients come from the
parts); their scalar knobs (``eps``, attention ``scale``) may be dynamic, their shapes and
flags are static.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from symscalar.errors import UnsupportedOperationError
from symscalar.ops.common import Tensor, broadcast_shapes, holomorphic, small_meta, unbroadcast
from symscalar.ops.factories import arange
from symscalar.nvfuser_lowering import is_broadcast, register_nvfuser, upcast
from symscalar.trace import Primitive, TensorVar, register_vjp
from symscalar.ops.indexing import repeat_interleave
from symscalar.ops.random import dropout
from symscalar.tracing import defop, implements
from symscalar.types import FloatLike, StaticBool, StaticFloat, StaticInt, StaticShape

__all__ = ["matmul", "linear", "layer_norm", "rms_norm", "scaled_dot_product_attention"]


# ---- matmul (the primitive takes operands with at least 2 dims; batch dims broadcast)
def _matmul_shape(a: TensorVar, b: TensorVar) -> tuple[int, ...]:
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ValueError("not a batched matrix product")  # torch's meta path says why
    return broadcast_shapes([a.shape[:-2], b.shape[:-2]]) + (a.shape[-2], b.shape[-1])


matmul_p = Primitive("matmul", torch.matmul, small_meta(torch.matmul, _matmul_shape))
register_vjp(matmul_p, holomorphic(lambda ct, out, a, b: (
    unbroadcast(ct @ b.mT, a.shape),
    unbroadcast(a.mT @ ct, b.shape),
)))


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
    matmul_p, _matmul_nvfuser,
    supports=lambda a, b: a.dtype == b.dtype and a.dtype in (torch.float32, torch.float16, torch.bfloat16),
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
    if other.ndim == 1:
        return matmul_p.bind(input, other.unsqueeze(-1)).squeeze(-1)
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


# ---- linear
@defop(torch=(F.linear,))
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, like ``torch.nn.functional.linear``."""
    out = matmul(input, weight.t())
    return out + bias if bias is not None else out


# ---- normalization
def _norm_dims(x: Tensor, normalized_shape: Sequence[int], op: str) -> tuple[int, ...]:
    shape = tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape or len(shape) > x.ndim:
        raise RuntimeError(
            f"{op}: normalized_shape {list(shape)} does not match the trailing dims of the "
            f"input of shape {list(x.shape)}"
        )
    return tuple(range(x.ndim - len(shape), x.ndim))


def _upcast(x: Tensor) -> Tensor:
    """Half-precision inputs are normalized in float32, as torch's kernels do."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


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
    xf = _upcast(input)
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
    out = (xf * torch.rsqrt((xf * xf).mean(dims, keepdim=True) + eps)).to(input.dtype)
    return out * weight if weight is not None else out


# ---- weight normalization: nn.utils.parametrizations.weight_norm computes the weight from
# its parameters on every access, so the traced function recomputes it on every call
@implements(torch._weight_norm)
def _torch_weight_norm(v: Tensor, g: Tensor, dim: StaticInt = 0) -> Tensor:
    """``v * (g / ||v||)``, the norm over every dim but ``dim`` (over all dims for -1)."""
    keep = None if dim == -1 else dim % max(v.ndim, 1)
    dims = tuple(d for d in range(v.ndim) if d != keep)
    return v * (g / torch.sqrt((v * v).sum(dims, keepdim=True)))


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
    if enable_gqa and query.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        key, value = _grouped_heads(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: pass either attn_mask or is_causal, not both")
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query @ key.mT) * scale
    if is_causal:
        q_len, k_len = query.shape[-2], key.shape[-2]
        attn_mask = arange(q_len, device=query.device).unsqueeze(-1) >= arange(k_len, device=query.device)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = torch.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask
    # torch's "safe softmax": a query whose every score is -inf (a fully masked row) attends
    # to nothing and gets zeros, not the NaN of a plain softmax. Its scores are replaced
    # before the softmax so that no NaN reaches the gradient either.
    fully_masked = scores.amax(-1, keepdim=True) == float("-inf")
    weights = torch.softmax(torch.where(fully_masked, 0.0, scores), -1)
    weights = torch.where(fully_masked, 0.0, weights)
    if dropout_p != 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def _grouped_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Grouped-query attention (``enable_gqa``): each of the key/value heads serves
    ``query_heads // kv_heads`` consecutive query heads, as torch repeats them."""
    heads, kv_heads = query.shape[-3], key.shape[-3]
    if kv_heads == 0 or heads % kv_heads or value.shape[-3] != kv_heads:
        raise RuntimeError(
            f"scaled_dot_product_attention: enable_gqa needs the query heads ({heads}) to be a "
            f"multiple of the key/value heads ({kv_heads}, {value.shape[-3]})"
        )
    return repeat_interleave(key, heads // kv_heads, -3), repeat_interleave(value, heads // kv_heads, -3)
