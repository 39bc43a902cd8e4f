"""Autocast, recorded in the trace.

Under ``torch.autocast`` eager torch casts the operands of some ops before running them:
matrix products and convolutions to the autocast dtype, numerically sensitive ops to float32,
``cat``/``stack`` to their widest operand. A traced program must compute what eager would,
so the tracer applies the same casts, as explicit ``convert_element_type`` equations, to the
outermost torch call the user's code makes (handlers run at depth > 0, as ops that autocast's
dispatcher key already passed do). The compiled program then runs with autocast disabled, so
torch does not cast a second time, and jit keys each entry on the call-time autocast state.

The tables follow torch's ``aten/src/ATen/autocast_mode.cpp`` (torch 2.10) and the documented
op lists (https://pytorch.org/docs/stable/amp.html#autocast-op-reference). Only what
symscalar can trace matters: an op without a handler is refused before any cast.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn.functional as F

__all__ = [
    "LOWER_PRECISION",
    "FP32",
    "PROMOTE",
    "policy",
    "autocast_state",
    "cached_cast",
    "CastCache",
    "cast_arguments",
]

LOWER_PRECISION, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

_T = torch.Tensor


def _existing(*candidates: Any) -> list[Any]:
    return [c for c in candidates if c is not None]


def _both(*names: str) -> list[Any]:
    """``torch.<name>`` and ``torch.Tensor.<name>`` where they exist."""
    return _existing(*(getattr(torch, n, None) for n in names), *(getattr(_T, n, None) for n in names))


_LOWER_COMMON = [
    *_both(
        "matmul",
        "mm",
        "bmm",
        "addmm",
        "baddbmm",
        "addbmm",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "prelu",
    ),
    _T.__matmul__,
    _T.__rmatmul__,
    F.linear,
    F.conv1d,
    F.conv2d,
    F.conv3d,
    F.conv_transpose1d,
    F.conv_transpose2d,
    F.conv_transpose3d,
    F.prelu,
    F.scaled_dot_product_attention,
    torch.linalg.vecdot,
]

_FP32_LOSSES = [
    F.mse_loss,
    F.cosine_embedding_loss,
    F.nll_loss,
    F.hinge_embedding_loss,
    F.poisson_nll_loss,
    F.smooth_l1_loss,
    F.cross_entropy,
    F.l1_loss,
    F.huber_loss,
    F.margin_ranking_loss,
    F.soft_margin_loss,
    F.triplet_margin_loss,
    F.multi_margin_loss,
    F.ctc_loss,
    F.kl_div,
    F.multilabel_margin_loss,
    F.binary_cross_entropy_with_logits,
]

_POLICIES: dict[str, dict[Any, str]] = {
    "cpu": {
        **dict.fromkeys(_LOWER_COMMON, LOWER_PRECISION),
        **dict.fromkeys(
            [
                *_FP32_LOSSES,
                F.binary_cross_entropy,
                F.avg_pool3d,
                F.max_pool3d,
                F.adaptive_avg_pool3d,
                F.grid_sample,
                *_both(
                    "prod",
                    "quantile",
                    "nanquantile",
                    "cdist",
                    "trace",
                    "polar",
                    "stft",
                    "view_as_complex",
                    "cholesky",
                    "cholesky_inverse",
                    "cholesky_solve",
                    "inverse",
                    "pinverse",
                    "orgqr",
                    "ormqr",
                    "geqrf",
                    "qr",
                    "svd",
                ),
            ],
            FP32,
        ),
        **dict.fromkeys(_both("cat", "concat", "concatenate", "stack", "index_copy"), PROMOTE),
    },
    "cuda": {
        **dict.fromkeys(
            [*_LOWER_COMMON, *_both("addmv", "addr", "einsum", "mv", "chain_matmul"), torch.linalg.multi_dot],
            LOWER_PRECISION,
        ),
        **dict.fromkeys(
            [
                *_both(
                    "acos",
                    "asin",
                    "cosh",
                    "erfinv",
                    "exp",
                    "expm1",
                    "log",
                    "log10",
                    "log2",
                    "log1p",
                    "reciprocal",
                    "rsqrt",
                    "sinh",
                    "tan",
                    "pow",
                    "layer_norm",
                    "group_norm",
                    "dist",
                    "cdist",
                    "renorm",
                    "logsumexp",
                    # fp32_set_opt_dtype: float32 unless a dtype is given (see cast_arguments)
                    "prod",
                    "softmax",
                    "log_softmax",
                    "cumprod",
                    "cumsum",
                    "sum",
                ),
                _T.__pow__,
                _T.__rpow__,
                torch.special.expm1,
                torch.special.log1p,
                torch.special.log_softmax,
                torch.special.softmax,
                F.softplus,
                F.layer_norm,
                F.group_norm,
                F.cosine_similarity,
                F.pdist,
                F.softmax,
                F.log_softmax,
                F.binary_cross_entropy,
                torch.linalg.vector_norm,
                torch.linalg.matrix_norm,
                *_FP32_LOSSES,
            ],
            FP32,
        ),
        **dict.fromkeys(
            _both(
                "addcdiv",
                "addcmul",
                "atan2",
                "cross",
                "dot",
                "vdot",
                "index_put",
                "tensordot",
                "scatter_add",
                "cat",
                "concat",
                "concatenate",
                "stack",
            ),
            PROMOTE,
        ),
    },
}

# Ops whose CUDA policy is "float32 unless the caller chose a dtype" (fp32_set_opt_dtype).
_SET_OPT_DTYPE = frozenset(
    _both("prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum")
    + [
        F.softmax,
        F.log_softmax,
        torch.special.log_softmax,
        torch.special.softmax,
        torch.linalg.vector_norm,
        torch.linalg.matrix_norm,
    ]
)


def policy(func: Any, device_type: str) -> str | None:
    """How autocast treats ``func`` on ``device_type`` (None: not at all)."""
    return _POLICIES.get(device_type, {}).get(func)


_any_enabled = torch._C._is_any_autocast_enabled
_enabled = torch.is_autocast_enabled
_dtype_of = torch.get_autocast_dtype


def autocast_state() -> tuple[tuple[str, torch.dtype], ...] | None:
    """The autocast state that changes what eager computes: ``None`` when autocast is off
    (one C call: this is part of every jitted call's cache key), else the enabled device
    types with their dtypes."""
    if not _any_enabled():
        return None
    state = []
    if _enabled("cpu"):
        state.append(("cpu", _dtype_of("cpu")))
    if _enabled("cuda"):
        state.append(("cuda", _dtype_of("cuda")))
    return tuple(state)


def _eligible(value: Any, device_type: str) -> bool:
    """Autocast casts floating tensors on its device, never float64 ones."""
    dtype = getattr(value, "dtype", None)
    device = getattr(value, "device", None)
    return (
        isinstance(dtype, torch.dtype)
        and dtype.is_floating_point
        and dtype != torch.float64
        and isinstance(device, torch.device)
        and device.type == device_type
        and hasattr(value, "_var")  # a traced tensor (casts of real tensors are not recorded)
    )


def _leaves(values: Iterable[Any]) -> Iterable[Any]:
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _leaves(v)
        else:
            yield v


def _map(value: Any, f: Callable[[Any], Any]) -> Any:
    if type(value) in (list, tuple):
        return type(value)(_map(v, f) for v in value)
    return f(value)


def cached_cast(value: Any, dtype: torch.dtype) -> bool:
    """Whether eager autocast looks its cast of ``value`` to ``dtype`` up in (and stores it in)
    its cache for the autocast region (``can_try_cache`` in ``aten/src/ATen/autocast_mode.h``): a
    float32 leaf that requires grad and is not a view, read from outside the traced function (a
    parameter), cast to the current lower-precision dtype, with the cache enabled. Grad mode
    plays no part: a cast made under ``torch.no_grad()`` is cached too, without its history."""
    if getattr(value, "_kind", None) != "captured" or value.dtype != torch.float32:
        return False
    tensor = value._captured()
    return (
        dtype == torch.get_autocast_dtype(tensor.device.type)
        and tensor.requires_grad
        and tensor.is_leaf
        and tensor._base is None
        and torch.is_autocast_cache_enabled()
    )


# Eager clears its cast cache when the outermost autocast region exits (``autocast.__exit__``
# calls ``torch.clear_autocast_cache()`` once the nesting drops to 0), and no torch call need
# happen in between: ``with autocast(): a = lin(x)`` then ``with autocast(): b = lin(a)`` casts
# the weight twice. The tracer sees no torch function for the exit, so it counts the clears.
_region_exits = threading.local()
_torch_clear_autocast_cache = torch.clear_autocast_cache


def _clear_autocast_cache() -> None:
    _region_exits.count = getattr(_region_exits, "count", 0) + 1
    _torch_clear_autocast_cache()


def _exits() -> int:
    if torch.clear_autocast_cache is not _clear_autocast_cache:
        torch.clear_autocast_cache = _clear_autocast_cache  # autocast.__exit__ looks it up
    count: int = getattr(_region_exits, "count", 0)
    return count


class CastCache:
    """Eager autocast's cache of parameter casts, replayed while tracing: a cast that eager
    takes from its cache (``cached_cast``) is the traced program's earlier cast of the same
    captured tensor in the same outermost autocast region, whatever dtype that one had (eager
    keys its cache by tensor alone: a float16 region nested in a bfloat16 one gets the bfloat16
    copy), and whatever grad mode made it (one made under ``torch.no_grad()`` carries no
    gradient to the later uses). Every other cast is made afresh."""

    def __init__(self, cast: Callable[[Any, torch.dtype], Any]) -> None:
        self._cast = cast
        self._casts: dict[Any, Any] = {}
        self._exits = _exits()

    def __call__(self, value: Any, dtype: torch.dtype) -> Any:
        if not cached_cast(value, dtype):
            return self._cast(value, dtype)
        exits = _exits()
        if exits != self._exits:  # an outermost autocast region exited: eager's cache is empty
            self._casts.clear()
            self._exits = exits
        cast = self._casts.get(value._var)
        if cast is None:
            cast = self._casts[value._var] = self._cast(value, dtype)
        return cast


def cast_arguments(
    func: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    cast: Callable[[Any, torch.dtype], Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of ``func`` as eager autocast would pass them to the kernel, the casts
    made by ``cast(traced_tensor, dtype)`` (recorded in the trace)."""
    first = next((v for v in _leaves((*args, *kwargs.values())) if hasattr(v, "_var")), None)
    if first is None:
        return args, kwargs
    device_type = first.device.type
    if not torch.is_autocast_enabled(device_type):
        return args, kwargs
    how = policy(func, device_type)
    if how is None or (func in _SET_OPT_DTYPE and kwargs.get("dtype") is not None):
        return args, kwargs
    if how == LOWER_PRECISION:
        target = torch.get_autocast_dtype(device_type)
    elif how == FP32:
        target = torch.float32
    else:
        target = torch.get_autocast_dtype(device_type)
        for v in _leaves((*args, *kwargs.values())):
            if _eligible(v, device_type):
                target = torch.promote_types(target, v.dtype)

    def convert(v: Any) -> Any:
        return cast(v, target) if _eligible(v, device_type) and v.dtype != target else v

    return (
        tuple(_map(a, convert) for a in args),
        {k: _map(v, convert) for k, v in kwargs.items()},
    )
