"""Multi-head attention: ``F.multi_head_attention_forward`` (``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``, torchvision's ViT).

torch writes it in Python from ops symscalar traces (linear, view, transpose, baddbmm/bmm,
softmax, dropout, scaled_dot_product_attention...), so the handler *is* torch's own function,
run on the traced values: every shape check, mask conversion and branch is eager's by
construction. Only its ``has_torch_function`` dispatch is disabled in the copy the handler runs
(on traced values it would send the call straight back to this handler). Its inner calls
dispatch as usual, so each op is recorded and ``dropout_p`` applies the program's RNG.

The modules' fast paths (``torch._native_multi_head_attention``,
``torch._transformer_encoder_layer_fwd``) are taken by eager only when no argument has a
``__torch_function__`` (torch checks ``has_torch_function``), so under tracing the modules take
their slow, composite path: the same function (eager's fast path computes it with fused
kernels, equal up to rounding), with every branch decided by the same flags
(``torch.is_grad_enabled()``, ``training``, ``need_weights``...) eager reads.
"""

from __future__ import annotations

import functools
import math
import types
import typing
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from symscalar.ops.composites import matmul
from symscalar.ops.define import (
    NumberLike,
    Primitive,
    StaticInt,
    StaticShape,
    Tensor,
    TensorProxy,
    UnsupportedOperationError,
    broadcast_shapes,
    canonical_dim,
    implements,
    is_static,
    register_vjp,
    small_meta,
    unbroadcast,
)
from symscalar.ops.shape import nonzero_next_to_minus_one

__all__: list[str] = []


def _without_dispatch(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of a torch Python function whose ``has_torch_function`` check is off (the
    functions it calls keep theirs: their traced arguments still dispatch)."""
    namespace = dict(fn.__globals__)
    namespace["has_torch_function"] = lambda args: False
    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


# ---- spellings attention and position-embedding code uses, composed from existing ops
@implements(torch.Tensor.unflatten, torch.unflatten)
def _torch_unflatten(input: Tensor, dim: StaticInt, sizes: StaticShape) -> Tensor:
    d = canonical_dim(dim, input.ndim)
    sizes = tuple(sizes)
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    n = input.shape[d]
    if -1 in sizes:
        if not nonzero_next_to_minus_one(known, "unflatten") or n % known:
            raise RuntimeError(f"unflatten: cannot infer the size -1 of {list(sizes)} for a dim of size {n}")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} ({n}) "
            "in the input tensor"
        )
    return input.reshape((*input.shape[:d], *sizes, *input.shape[d + 1 :]))


@implements(torch.Tensor.repeat)
def _torch_repeat(input: Tensor, *repeats: StaticInt | StaticShape) -> Tensor:
    """``x.repeat(r0, r1, ...)``: tile, as an expand of interleaved unit dims and a reshape."""
    first = repeats[0] if len(repeats) == 1 else None
    reps: tuple[int, ...] = tuple(first) if isinstance(first, (tuple, list)) else typing.cast(tuple[int, ...], repeats)
    if len(reps) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape: tuple[int, ...] = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
    interleaved = input.reshape(tuple(d for s in shape for d in (1, s)))
    tiled = interleaved.expand(tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    return tiled.reshape(tuple(r * s for r, s in zip(reps, shape)))


@implements(torch.outer, torch.Tensor.outer, torch.ger, torch.Tensor.ger)
def _torch_outer(input: Tensor, vec2: Tensor) -> Tensor:
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D vectors, got {input.ndim}-D and {vec2.ndim}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


# ---- baddbmm: with static coefficients and one floating dtype a primitive, as addmm's: eager's
# kernel adds ``beta * input`` inside its accumulation (one rounding, where the composition's
# product, scaling and sum round three times: 1 ulp apart in half of float32 batches and more in
# 16-bit ones; nn.MultiheadAttention's masked scores and HF's GPT-2/Bloom attention run it)
def _baddbmm_shape(input: Any, batch1: Any, batch2: Any, *, beta: Any, alpha: Any) -> tuple[Any, ...]:
    return (batch1.shape[0], batch1.shape[1], batch2.shape[2])


baddbmm_p = Primitive("baddbmm", torch.baddbmm, small_meta(torch.baddbmm, _baddbmm_shape))


def _baddbmm_vjp(ct: Any, out: Any, input: Any, b1: Any, b2: Any, *, beta: Any, alpha: Any) -> tuple[Any, Any, Any]:
    # torch's formulas: maybe_multiply(grad, beta) (summed to input's shape by autograd);
    # maybe_multiply(grad.bmm(batch2^T), alpha); maybe_multiply(batch1^T.bmm(grad), alpha)
    def times(t: Any, c: Any) -> Any:
        return t if c == 1 else t * c

    return unbroadcast(times(ct, beta), input.shape), times(ct @ b2.mT, alpha), times(b1.mT @ ct, alpha)


register_vjp(baddbmm_p, _baddbmm_vjp)


@implements(torch.baddbmm, torch.Tensor.baddbmm)
def _torch_baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: NumberLike = 1, alpha: NumberLike = 1
) -> Tensor:
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"baddbmm: expected 3-D batches, got {batch1.ndim}-D and {batch2.ndim}-D")
    if batch1.dtype == batch2.dtype and input.dtype != batch1.dtype:  # eager's kernel refuses the mix
        raise RuntimeError(
            f"baddbmm: Input dtypes must be the same, got: input {input.dtype}, batch1: {batch1.dtype}, "
            f"batch2: {batch2.dtype}"
        )
    if (
        is_static(beta)
        and is_static(alpha)
        and input.dtype == batch1.dtype == batch2.dtype
        and input.dtype.is_floating_point
        and broadcast_shapes([tuple(input.shape), _baddbmm_shape(input, batch1, batch2, beta=beta, alpha=alpha)])
        == _baddbmm_shape(input, batch1, batch2, beta=beta, alpha=alpha)
    ):
        return baddbmm_p.bind(input, batch1, batch2, beta=beta, alpha=alpha)
    product = matmul(batch1, batch2)
    if not is_static(alpha) or alpha != 1:
        product = product * alpha
    shape = broadcast_shapes([tuple(input.shape), tuple(product.shape)])
    if is_static(beta) and beta == 0:  # torch ignores input (even NaN/inf in it) when beta is 0
        return product.expand(shape)
    if is_static(beta) and beta == 1:
        return input + product
    return input * beta + product


# ---- nn.Transformer*Layer's one isinstance check on traced masks
# ``F._none_or_dtype(mask)`` (the dtype of an optional mask, called by the layers' forward
# before the attention) raises for anything that is not a torch.Tensor, and a TensorProxy is
# not one (see proxy.py). The replacement answers a traced mask's dtype and is torch's own
# function for everything else, so eager behaviour is unchanged.
_torch_none_or_dtype = F._none_or_dtype


def _none_or_dtype(input: Any) -> Any:
    if isinstance(input, TensorProxy):
        return input.dtype
    return _torch_none_or_dtype(input)


F._none_or_dtype = _none_or_dtype


# After the patch above, so that the copy's namespace holds the replacement too.
def _no_autocast(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, refused under autocast: eager autocasts the ops it calls one by one (F.linear,
    bmm...), while the tracer records autocast's casts only for the call user code makes, so
    the result dtype would silently differ."""

    def refuse_under_autocast(*args: Any, **kwargs: Any) -> Any:
        if torch._C._is_any_autocast_enabled():
            raise UnsupportedOperationError(
                f"{name} under torch.autocast is not supported yet: eager casts each op it calls, "
                "which symscalar does not record for it. Call it outside torch.autocast (or with "
                "autocast disabled around it), or outside the jitted function."
            )
        return fn(*args, **kwargs)

    return functools.wraps(fn)(refuse_under_autocast)


implements(F.multi_head_attention_forward)(
    _no_autocast("torch.nn.functional.multi_head_attention_forward", _without_dispatch(F.multi_head_attention_forward))
)
