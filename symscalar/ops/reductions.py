"""Reductions: sum, mean, amax, amin, prod, var, std, var_mean, std_mean, logsumexp, softmax,
log_softmax, argmax, argmin.

``dim``, ``keepdim`` and ``correction`` are static: nvFuser's reduction axes and the variance
correction are constants, and the output rank depends on ``dim`` and ``keepdim``. Every
reduction axis, shape and count a vjp rule below introduces is computed from the input's
static shape and these static parameters, never from a dynamic value, so a backward trace
always passes ``check_trace``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from symscalar import sizes
from symscalar.errors import UnsupportedOperationError
from symscalar.ops.define import (
    Primitive,
    StaticBool,
    StaticDims,
    StaticFloat,
    StaticInt,
    Tensor,
    TensorVar,
    canonical_dim,
    canonical_dims,
    defop,
    floating_reduction,
    has_axes,
    holomorphic,
    implements,
    numel,
    reduced_shape,
    register_nvfuser,
    register_vjp,
    same_shape,
    small_meta,
    unreduce,
    upcast,
)
from symscalar.ops.factories import full
from symscalar.size_ops import size_proxy
from symscalar.sizes import Size
from symscalar.types import current_tracer

__all__ = [
    "sum",
    "mean",
    "amax",
    "amin",
    "prod",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "logsumexp",
    "softmax",
    "log_softmax",
    "argmax",
    "argmin",
]

F = torch.nn.functional


# ---- helpers shared by the vjp rules (static shapes in, static shapes out)
def _kept_shape(shape: Sequence[int], dims: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with the reduced ``dims`` set to 1."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _unreduce(t: Any, shape: Sequence[int], dims: tuple[int, ...]) -> Any:
    """A reduction's result or cotangent with its reduced dims restored as size 1, so that it
    broadcasts against the input. A no-op when the reduction kept its dims."""
    kept = _kept_shape(shape, dims)
    return t if tuple(t.shape) == kept else t.reshape(kept)


def _count(shape: Sequence[int], dims: tuple[int, ...]) -> int:
    """How many elements each output element of a reduction over ``dims`` reduces."""
    return math.prod(shape[d] for d in dims)


# ---- sum
def _sum_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: torch.dtype | None = None) -> Any:
    return torch.sum(x, dims, keepdim, dtype=dtype)


sum_p = Primitive("sum", _sum_impl, small_meta(_sum_impl, reduced_shape))


def _sum_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: Any = None) -> Any:
    kept = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    return (ct.reshape(kept).expand(x.shape),)


register_vjp(sum_p, _sum_vjp)
# nvFuser reduces in the (cast) input's dtype, Half included; torch accumulates Half/BFloat16
# in float32, so they are summed in float32 (the backend casts the result back).
register_nvfuser(
    sum_p,
    lambda fd, x, *, dims, keepdim, dtype=None: fd.ops.sum(
        upcast(fd, x if dtype is None else fd.ops.cast(x, dtype)), dims, keepdim
    ),
    supports=has_axes,
)


@defop(torch=(torch.sum, torch.Tensor.sum))
def sum(  # noqa: A001 - torch's name
    input: Tensor, dim: StaticDims = None, keepdim: StaticBool = False, *, dtype: torch.dtype | None = None
) -> Tensor:
    """Sum over ``dim`` (an int, a tuple of ints, or None for all dims)."""
    dims = canonical_dims(dim, input.ndim)
    return sum_p.bind(input, dims=dims, keepdim=keepdim, dtype=dtype)


# ---- mean
def _mean_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: torch.dtype | None = None) -> Any:
    return torch.mean(x, dims, keepdim, dtype=dtype)


mean_p = Primitive("mean", _mean_impl, small_meta(_mean_impl, reduced_shape))


def _mean_grad(ct: Any, x: Any, dims: tuple[int, ...]) -> Any:
    # The count is a Python int from the static shape: the backward divides by a literal.
    # Expanded first, then divided, as eager's mean_backward: the result is a full tensor, not a
    # stride-0 view, which an elementwise kernel after it (silu_backward) would read through its
    # broadcasting loop, whose rounding is not that of its vectorized loop
    return _unreduce(ct, x.shape, dims).expand(x.shape) / _count(x.shape, dims)


def _mean_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: Any = None) -> Any:
    return (_mean_grad(ct, x, dims),)


register_vjp(mean_p, _mean_vjp)


def _mean_nvfuser(fd: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: Any = None) -> Any:
    x = upcast(fd, x if dtype is None else fd.ops.cast(x, dtype))
    return fd.ops.div(fd.ops.sum(x, dims, keepdim), numel(fd, x, dims))


register_nvfuser(mean_p, _mean_nvfuser, supports=floating_reduction)


@defop(torch=(torch.mean, torch.Tensor.mean))
def mean(
    input: Tensor, dim: StaticDims = None, keepdim: StaticBool = False, *, dtype: torch.dtype | None = None
) -> Tensor:
    """Mean over ``dim`` (an int, a tuple of ints, or None for all dims); ``input`` must be
    floating point or complex unless ``dtype`` says which floating type to compute in."""
    dims = canonical_dims(dim, input.ndim)
    return mean_p.bind(input, dims=dims, keepdim=keepdim, dtype=dtype)


# ---- amax, amin
# ``nan_hits``: the gradient rule of torch.max(x)/torch.min(x) (the full reductions), whose
# gradient goes to the NaNs when the result is NaN; amax/amin's own gradient is NaN there.
def _amax_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool, nan_hits: bool = False) -> Any:
    return torch.amax(x, dims, keepdim)


def _amin_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool, nan_hits: bool = False) -> Any:
    return torch.amin(x, dims, keepdim)


amax_p = Primitive("amax", _amax_impl, small_meta(_amax_impl, reduced_shape))
amin_p = Primitive("amin", _amin_impl, small_meta(_amin_impl, reduced_shape))


def _amax_amin_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, nan_hits: bool = False) -> Any:
    # As torch: the gradient is shared equally by every element equal to the extremum (and,
    # for torch.max(x)/torch.min(x), by the NaNs when the extremum is NaN).
    extremum = _unreduce(out, x.shape, dims)
    hits = x == extremum
    if nan_hits:
        hits = hits | (x.isnan() & extremum.isnan())
    if nan_hits:  # eager's evenly_distribute_backward on CPU: zeros, the share filled in (+0 elsewhere)
        share = _unreduce(ct, x.shape, dims) / hits.to(ct.dtype).sum(dims, keepdim=True)
        return (torch.where(hits, share, 0),)
    hits = hits.to(ct.dtype)
    share = _unreduce(ct, x.shape, dims) / hits.sum(dims, keepdim=True)
    return (share * hits,)


register_vjp(amax_p, _amax_amin_vjp)
register_vjp(amin_p, _amax_amin_vjp)
register_nvfuser(
    amax_p, lambda fd, x, *, dims, keepdim, nan_hits=False: fd.ops.max(x, dims, keepdim), supports=floating_reduction
)
register_nvfuser(
    amin_p, lambda fd, x, *, dims, keepdim, nan_hits=False: fd.ops.min(x, dims, keepdim), supports=floating_reduction
)


@defop
def amax(x: Tensor, dim: StaticDims = None, keepdim: StaticBool = False) -> Tensor:
    """Maximum over ``dim`` (None or ``()`` for all dims). Ties share the gradient equally."""
    return amax_p.bind(x, dims=canonical_dims(dim, x.ndim), keepdim=keepdim)


@defop
def amin(x: Tensor, dim: StaticDims = None, keepdim: StaticBool = False) -> Tensor:
    """Minimum over ``dim`` (None or ``()`` for all dims). Ties share the gradient equally."""
    return amin_p.bind(x, dims=canonical_dims(dim, x.ndim), keepdim=keepdim)


@implements(torch.amax, torch.Tensor.amax)
def _torch_amax(input: Tensor, dim: StaticDims = (), keepdim: StaticBool = False) -> Tensor:
    return amax(input, dim, keepdim)


@implements(torch.amin, torch.Tensor.amin)
def _torch_amin(input: Tensor, dim: StaticDims = (), keepdim: StaticBool = False) -> Tensor:
    return amin(input, dim, keepdim)


# ---- prod
def _prod_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: torch.dtype | None = None) -> Any:
    if len(dims) == x.ndim and (not keepdim or x.ndim == 0):
        return torch.prod(x, dtype=dtype)
    for d in reversed(dims):  # torch.prod takes one dim; from the last, so indices stay valid
        x = torch.prod(x, d, keepdim, dtype=dtype)
    return x


prod_p = Primitive("prod", _prod_impl, small_meta(_prod_impl, reduced_shape))


def _prod_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: Any = None) -> Any:
    static = all(type(s) is int and s > 0 for s in x.shape)  # (dynamic dims keep the formula below)
    if dtype is None and x.ndim > 0 and static and (len(dims) == 1 or len(dims) == x.ndim):
        return (_eager_prod_grad(ct, out, x, dims, keepdim),)
    # d out / d x_i is the product of the other elements. Without zeros that is out / x_i;
    # with exactly one zero it is the product of the non-zeros at the zero and 0 elsewhere;
    # with two or more zeros it is 0 everywhere. Computed without dividing by a zero.
    is_zero = x == 0
    zeros = is_zero.sum(dims, keepdim=True)
    nonzero = torch.where(is_zero, 1, x)
    prod_nonzero = prod(nonzero, dims, keepdim=True)
    at_zero = torch.where(zeros == 1, prod_nonzero, 0)
    elsewhere = torch.where(zeros == 0, prod_nonzero / nonzero, 0)
    return (torch.where(is_zero, at_zero, elsewhere) * _unreduce(ct, x.shape, dims),)


def _eager_prod_grad(ct: Any, out: Any, x: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    """eager's prod_backward (over one dim, or all of them on the flattened input): where the
    input holds no zero *anywhere*, ``ct * out / x``; otherwise, for every element, the product
    of the others as two exclusive cumulative products (before it, after it) multiplied, which
    rounds differently from a division and from a product. Both are computed and one selected
    at run time (eager branches on the values); the division's denominator has no zero, so a
    double backward through the branch not taken stays finite."""
    flat = len(dims) == x.ndim and x.ndim > 1
    xs = x.reshape(-1) if flat else x
    d = 0 if flat else dims[0]
    n = xs.shape[d]
    ones = torch.ones_like(torch.narrow(xs, d, 0, 1))
    before = torch.cat([ones, torch.narrow(xs, d, 0, n - 1)], d).cumprod(d)
    after = torch.cat([ones, torch.narrow(xs, d, 1, n - 1).flip(d)], d).cumprod(d).flip(d)
    others = (before * after).reshape(tuple(x.shape)) if flat else before * after
    is_zero = x == 0
    ct_u, out_u = _unreduce(ct, x.shape, dims), _unreduce(out, x.shape, dims)
    divided = ct_u * (out_u / torch.where(is_zero, 1, x))
    return torch.where(is_zero.any(), ct_u * others, divided)


register_vjp(prod_p, holomorphic(_prod_vjp))


def _prod_nvfuser(fd: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool, dtype: Any = None) -> Any:
    x = upcast(fd, x if dtype is None else fd.ops.cast(x, dtype))
    return fd.ops.prod(x, dims, keepdim)


register_nvfuser(prod_p, _prod_nvfuser, supports=floating_reduction)


@defop
def prod(x: Tensor, dim: StaticDims = None, keepdim: StaticBool = False, *, dtype: torch.dtype | None = None) -> Tensor:
    """Product over ``dim`` (an int, a tuple of ints, or None for all dims; torch.prod itself
    takes one int). Gradients are exact with zeros in ``x``, as torch's."""
    dims = canonical_dims(dim, x.ndim)
    return prod_p.bind(x, dims=dims, keepdim=keepdim, dtype=dtype)


@implements(torch.prod, torch.Tensor.prod)
def _torch_prod(
    input: Tensor, dim: StaticInt | None = None, keepdim: StaticBool = False, *, dtype: torch.dtype | None = None
) -> Tensor:
    if dim is None and keepdim:
        raise TypeError("prod(): keepdim=True needs a dim, as in torch (prod(input, dim, keepdim=True))")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(f"prod(): dim must be one int as in torch, got {dim!r}; symscalar.ops.prod takes a tuple")
    return prod(input, dim, keepdim, dtype=dtype)


# ---- var, std, var_mean, std_mean
Correction = StaticInt | StaticFloat


def _var_impl(x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return torch.var(x, dims, correction=correction, keepdim=keepdim)


def _std_impl(x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return torch.std(x, dims, correction=correction, keepdim=keepdim)


def _var_mean_impl(x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return torch.var_mean(x, dims, correction=correction, keepdim=keepdim)


def _std_mean_impl(x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return torch.std_mean(x, dims, correction=correction, keepdim=keepdim)


def _two_reduced_shapes(x: Any, **params: Any) -> list[tuple[int, ...]]:
    return [reduced_shape(x, **params)] * 2


def _quiet(impl: Any) -> Any:
    """The meta's small run of a var/std may have fewer elements than the correction: torch
    warns about the degrees of freedom of that stand-in, not of the user's tensor."""

    def run(*args: Any, **params: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return impl(*args, **params)

    return run


var_p = Primitive("var", _var_impl, small_meta(_quiet(_var_impl), reduced_shape))
std_p = Primitive("std", _std_impl, small_meta(_quiet(_std_impl), reduced_shape))
var_mean_p: Primitive[tuple[Tensor, Tensor]] = Primitive(
    "var_mean", _var_mean_impl, small_meta(_quiet(_var_mean_impl), _two_reduced_shapes), multiple_results=True
)
std_mean_p: Primitive[tuple[Tensor, Tensor]] = Primitive(
    "std_mean", _std_mean_impl, small_meta(_quiet(_std_mean_impl), _two_reduced_shapes), multiple_results=True
)


def _var_grad(ct: Any, x: Any, dims: tuple[int, ...], correction: float) -> Any:
    """``ct * d var / d x = ct * 2 (x - mean) / (n - correction)``, n and correction static.
    With ``n - correction <= 0`` the variance is inf or nan, and so is this gradient."""
    count = _count(x.shape, dims)
    if isinstance(count, Size):
        return _dynamic_var_grad(ct, x, dims, correction, count)
    dof = count - correction
    scale = 2.0 / dof if dof > 0 else math.inf
    return (x - x.mean(dims, keepdim=True)) * (_unreduce(ct, x.shape, dims) * scale)


def _dynamic_var_grad(ct: Any, x: Any, dims: tuple[int, ...], correction: float, count: Size) -> Any:
    """``_var_grad`` over dynamic dims: ``2 / (n - correction)`` is a runtime division, which
    gives eager's inf where ``n == correction``; a negative ``n - correction`` (eager: inf) must
    be ruled out by the declared ranges. The factor is a Python float computed when the program
    runs (a 0-d float64 tensor: inf, not ZeroDivisionError, at ``dof == 0``) multiplied into
    the cotangent, as eager's ``(2.0 / dof) * grad``; dividing the cotangent by the count
    instead rounds differently (1 ulp off eager)."""
    if type(correction) is not int or sizes.decide("ge", count, correction) is not True:
        raise UnsupportedOperationError(
            f"the gradient of var/std with correction={correction!r} over dynamic dims of {count!r} elements: "
            "eager's gradient is inf where the count is below the correction, which one program cannot give. "
            "Use an int correction the declared ranges never exceed (min=...), or declare the dims static."
        )
    dof = size_proxy(current_tracer.get(), count - correction)
    scale = full((), 2.0, dtype=torch.float64, device=ct.device) / dof  # (IEEE: inf where dof == 0)
    return (x - x.mean(dims, keepdim=True)) * (_unreduce(ct, x.shape, dims) * scale)


def _std_grad(ct: Any, out: Any, x: Any, dims: tuple[int, ...], correction: float) -> Any:
    """``d std = d var / (2 std)``; as torch, zero where the standard deviation is zero."""
    std_k = _unreduce(out, x.shape, dims)
    ct_var = torch.where(std_k == 0, 0, _unreduce(ct, x.shape, dims) / (std_k * 2))
    return _var_grad(ct_var, x, dims, correction)


def _var_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return (_var_grad(ct, x, dims, correction),)


def _std_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return (_std_grad(ct, out, x, dims, correction),)


def _var_mean_vjp(
    cts: tuple[Any, Any], outs: tuple[Any, Any], x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool
) -> Any:
    grads = []
    if cts[0] is not None:
        grads.append(_var_grad(cts[0], x, dims, correction))
    if cts[1] is not None:
        grads.append(_mean_grad(cts[1], x, dims))
    return (grads[0] + grads[1] if len(grads) == 2 else grads[0],)


def _std_mean_vjp(
    cts: tuple[Any, Any], outs: tuple[Any, Any], x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool
) -> Any:
    grads = []
    if cts[0] is not None:
        grads.append(_std_grad(cts[0], outs[0], x, dims, correction))
    if cts[1] is not None:
        grads.append(_mean_grad(cts[1], x, dims))
    return (grads[0] + grads[1] if len(grads) == 2 else grads[0],)


register_vjp(var_p, _var_vjp)
register_vjp(std_p, _std_vjp)
register_vjp(var_mean_p, _var_mean_vjp)
register_vjp(std_mean_p, _std_mean_vjp)


def _moments_supported(x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> bool:
    # nvFuser's correction is an int: a fractional one runs in torch.
    return floating_reduction(x, dims=dims) and float(correction).is_integer()


def _var_mean_nvfuser(fd: Any, x: Any, *, dims: tuple[int, ...], correction: float, keepdim: bool) -> Any:
    return fd.ops.var_mean(upcast(fd, x), dims, int(correction), keepdim)


register_nvfuser(
    var_p,
    lambda fd, x, *, dims, correction, keepdim: fd.ops.var(upcast(fd, x), dims, int(correction), keepdim),
    supports=_moments_supported,
)
register_nvfuser(
    std_p,
    lambda fd, x, *, dims, correction, keepdim: fd.ops.sqrt(fd.ops.var(upcast(fd, x), dims, int(correction), keepdim)),
    supports=_moments_supported,
)
register_nvfuser(var_mean_p, _var_mean_nvfuser, supports=_moments_supported)
register_nvfuser(
    std_mean_p,
    lambda fd, x, **params: _sqrt_first(fd, *_var_mean_nvfuser(fd, x, **params)),
    supports=_moments_supported,
)


def _sqrt_first(fd: Any, var: Any, mean: Any) -> tuple[Any, Any]:
    return fd.ops.sqrt(var), mean


@defop
def var(x: Tensor, dim: StaticDims = None, *, correction: Correction = 1, keepdim: StaticBool = False) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (1: sample variance, 0: population
    variance): ``sum((x - mean)**2) / (n - correction)``."""
    return var_p.bind(x, **_moment_params(x, dim, correction, keepdim))


@defop
def std(x: Tensor, dim: StaticDims = None, *, correction: Correction = 1, keepdim: StaticBool = False) -> Tensor:
    """Standard deviation over ``dim``: the square root of ``var``."""
    return std_p.bind(x, **_moment_params(x, dim, correction, keepdim))


@defop
def var_mean(
    x: Tensor, dim: StaticDims = None, *, correction: Correction = 1, keepdim: StaticBool = False
) -> tuple[Tensor, Tensor]:
    """``(var(x, dim), mean(x, dim))`` in one reduction."""
    return var_mean_p.bind(x, **_moment_params(x, dim, correction, keepdim))


@defop
def std_mean(
    x: Tensor, dim: StaticDims = None, *, correction: Correction = 1, keepdim: StaticBool = False
) -> tuple[Tensor, Tensor]:
    """``(std(x, dim), mean(x, dim))`` in one reduction."""
    return std_mean_p.bind(x, **_moment_params(x, dim, correction, keepdim))


def _moment_params(x: Tensor, dim: Any, correction: Any, keepdim: bool) -> dict[str, Any]:
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"correction must be an int or a float, got {correction!r}")
    return {"dims": canonical_dims(dim, x.ndim), "correction": correction, "keepdim": keepdim}


def _legacy_correction(name: str, dim: Any, unbiased: Any, correction: Any) -> tuple[Any, Any]:
    """torch's var/std spellings: ``var(x, unbiased)``, ``var(x, dim, unbiased, keepdim)`` and
    ``var(x, dim, *, correction, keepdim)``. Returns ``(dim, correction)``."""
    if isinstance(dim, bool):  # var(x, True): the bool is `unbiased`
        if unbiased is not None:
            raise TypeError(f"{name}(): got `unbiased` twice (as the second argument and by keyword)")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either `unbiased` (legacy) or `correction`, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _legacy_moment(name: str, op: Callable[..., Any]) -> Callable[..., Any]:
    """The handler of torch's spelling of ``op`` (var, std, var_mean, std_mean), which also
    takes the legacy ``unbiased`` (see ``_legacy_correction``)."""

    def handler(
        input: Tensor,
        dim: StaticDims | StaticBool = None,
        unbiased: StaticBool | None = None,
        keepdim: StaticBool = False,
        *,
        correction: Correction | None = None,
    ) -> Any:
        dim, correction = _legacy_correction(name, dim, unbiased, correction)
        return op(input, dim, correction=correction, keepdim=keepdim)

    return handler


implements(torch.var, torch.Tensor.var)(_legacy_moment("var", var))
implements(torch.std, torch.Tensor.std)(_legacy_moment("std", std))
implements(torch.var_mean)(_legacy_moment("var_mean", var_mean))
implements(torch.std_mean)(_legacy_moment("std_mean", std_mean))


# ---- logsumexp
def _logsumexp_impl(x: Any, *, dims: tuple[int, ...], keepdim: bool) -> Any:
    return torch.logsumexp(x, dims, keepdim)


logsumexp_p = Primitive("logsumexp", _logsumexp_impl, small_meta(_logsumexp_impl, reduced_shape))


def _logsumexp_vjp(ct: Any, out: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool) -> Any:
    return (_unreduce(ct, x.shape, dims) * torch.exp(x - _unreduce(out, x.shape, dims)),)


register_vjp(logsumexp_p, holomorphic(_logsumexp_vjp))


def _logsumexp_nvfuser(fd: Any, x: Any, *, dims: tuple[int, ...], keepdim: bool) -> Any:
    # As torch: subtract the max, except where it is infinite (then exp(x - max) is nan).
    x = upcast(fd, x)
    m = fd.ops.max(x, dims, True)
    m = fd.ops.where(fd.ops.isinf(m), 0.0, m)
    result = fd.ops.add(fd.ops.log(fd.ops.sum(fd.ops.exp(fd.ops.sub(x, m)), dims, True)), m)
    return result if keepdim else fd.ops.squeeze(result, dims)


register_nvfuser(logsumexp_p, _logsumexp_nvfuser, supports=floating_reduction)


@defop(torch=(torch.logsumexp, torch.Tensor.logsumexp, torch.special.logsumexp))
def logsumexp(input: Tensor, dim: StaticDims, keepdim: StaticBool = False) -> Tensor:
    """``log(sum(exp(input), dim))``, computed stably."""
    return logsumexp_p.bind(input, dims=canonical_dims(dim, input.ndim), keepdim=keepdim)


# ---- softmax, log_softmax
def _softmax_impl(x: Any, *, dim: int, dtype: torch.dtype | None = None) -> Any:
    return torch.softmax(x, dim, dtype=dtype)


def _log_softmax_impl(x: Any, *, dim: int, dtype: torch.dtype | None = None) -> Any:
    return torch.log_softmax(x, dim, dtype=dtype)


softmax_p = Primitive("softmax", _softmax_impl, small_meta(_softmax_impl, same_shape))
log_softmax_p = Primitive("log_softmax", _log_softmax_impl, small_meta(_log_softmax_impl, same_shape))


def _softmax_vjp(ct: Any, out: Any, x: Any, *, dim: int, dtype: Any = None) -> Any:
    return (out * (ct - (ct * out).sum(dim, keepdim=True)),)


def _log_softmax_vjp(ct: Any, out: Any, x: Any, *, dim: int, dtype: Any = None) -> Any:
    return (ct - torch.exp(out) * ct.sum(dim, keepdim=True),)


def _in_float32(vjp: Any) -> Any:
    """A softmax-family vjp computed in float32 for 16-bit floats and rounded once, as eager's
    ``_softmax_backward_data`` kernels accumulate (a bfloat16 backward written with bfloat16 ops
    rounds at every step: 3x eager's error against float64 under autocast)."""

    def rule(ct: Any, out: Any, x: Any, **params: Any) -> Any:
        if out.dtype not in (torch.float16, torch.bfloat16):
            return vjp(ct, out, x, **params)
        (grad,) = vjp(ct.to(torch.float32), out.to(torch.float32), x, **params)
        return (grad.to(out.dtype),)

    return rule


# Real dtypes: the backward is torch's kernel, _softmax_backward_data / _log_softmax_backward_data
# (bit-equal to eager's, whose reduction order a composition cannot reproduce); with dtype=,
# torch converts the input first, so the kernel runs in the output's dtype and the gradient is
# then cast back. Each backward kernel is a primitive with the derivatives of torch's formulas.
def _softmax_backward_impl(ct: Any, y: Any, *, dim: int) -> Any:
    return torch._softmax_backward_data(ct, y, dim, y.dtype)


def _log_softmax_backward_impl(ct: Any, y: Any, *, dim: int) -> Any:
    return torch._log_softmax_backward_data(ct, y, dim, y.dtype)


def _output_shape(ct: TensorVar, y: TensorVar, **params: Any) -> tuple[int, ...]:
    return y.shape  # (ct has it too: the cotangent of y)


softmax_backward_p = Primitive(
    "softmax_backward", _softmax_backward_impl, small_meta(_softmax_backward_impl, _output_shape)
)
log_softmax_backward_p = Primitive(
    "log_softmax_backward", _log_softmax_backward_impl, small_meta(_log_softmax_backward_impl, _output_shape)
)


def _softmax_backward_vjp(ct2: Any, out: Any, ct: Any, y: Any, *, dim: int) -> tuple[Any, Any]:
    # g = y * (ct - sum(ct * y)): d/dct is the same map on ct2; d/dy = ct2 * (ct - sum(ct * y)) - ct * sum(ct2 * y)
    grad_y = ct2 * (ct - (ct * y).sum(dim, keepdim=True)) - ct * (ct2 * y).sum(dim, keepdim=True)
    return softmax_backward_p.bind(ct2, y, dim=dim), grad_y


def _log_softmax_backward_vjp(ct2: Any, out: Any, ct: Any, y: Any, *, dim: int) -> tuple[Any, Any]:
    # g = ct - exp(y) * sum(ct): d/dct = ct2 - sum(ct2 * exp(y)); d/dy = -ct2 * exp(y) * sum(ct)
    e = torch.exp(y)
    return ct2 - (ct2 * e).sum(dim, keepdim=True), -ct2 * e * ct.sum(dim, keepdim=True)


register_vjp(softmax_backward_p, _softmax_backward_vjp)
register_vjp(log_softmax_backward_p, _log_softmax_backward_vjp)


def _kernel_or_composed(backward_p: Primitive, composed: Any) -> Any:
    def rule(ct: Any, out: Any, x: Any, *, dim: int, dtype: Any = None) -> Any:
        if out.dtype.is_complex or ct.dtype != out.dtype:
            return holomorphic(_in_float32(composed))(ct, out, x, dim=dim, dtype=dtype)
        grad = backward_p.bind(ct, out, dim=dim)
        return (grad if grad.dtype == x.dtype else grad.to(x.dtype),)

    return rule


register_vjp(softmax_p, _kernel_or_composed(softmax_backward_p, _softmax_vjp))
register_vjp(log_softmax_p, _kernel_or_composed(log_softmax_backward_p, _log_softmax_vjp))


def _shifted(fd: Any, x: Any, dim: int, dtype: Any) -> Any:
    """``x - max(x, dim)`` in the computation dtype (``dtype``, or float32 for 16-bit floats)."""
    x = upcast(fd, x if dtype is None else fd.ops.cast(x, dtype))
    return fd.ops.sub(x, unreduce(fd, fd.ops.max(x, [dim]), [dim], x.ndim))


def _softmax_nvfuser(fd: Any, x: Any, *, dim: int, dtype: Any = None) -> Any:
    e = fd.ops.exp(_shifted(fd, x, dim, dtype))
    return fd.ops.div(e, unreduce(fd, fd.ops.sum(e, [dim]), [dim], e.ndim))


def _log_softmax_nvfuser(fd: Any, x: Any, *, dim: int, dtype: Any = None) -> Any:
    shifted = _shifted(fd, x, dim, dtype)
    log_sum = fd.ops.log(fd.ops.sum(fd.ops.exp(shifted), [dim]))
    return fd.ops.sub(shifted, unreduce(fd, log_sum, [dim], shifted.ndim))


register_nvfuser(softmax_p, _softmax_nvfuser, supports=floating_reduction)
register_nvfuser(log_softmax_p, _log_softmax_nvfuser, supports=floating_reduction)


def _softmax_backward_nvfuser(fd: Any, ct: Any, y: Any, *, dim: int) -> Any:
    g, yf = upcast(fd, ct), upcast(fd, y)
    dot = unreduce(fd, fd.ops.sum(fd.ops.mul(g, yf), [dim]), [dim], yf.ndim)
    return fd.ops.mul(yf, fd.ops.sub(g, dot))


def _log_softmax_backward_nvfuser(fd: Any, ct: Any, y: Any, *, dim: int) -> Any:
    g, yf = upcast(fd, ct), upcast(fd, y)
    return fd.ops.sub(g, fd.ops.mul(fd.ops.exp(yf), unreduce(fd, fd.ops.sum(g, [dim]), [dim], yf.ndim)))


def _backward_supported(ct: Any, y: Any, **params: Any) -> bool:
    return floating_reduction(y, **params)


register_nvfuser(softmax_backward_p, _softmax_backward_nvfuser, supports=_backward_supported)
register_nvfuser(log_softmax_backward_p, _log_softmax_backward_nvfuser, supports=_backward_supported)


@defop(torch=(torch.special.softmax,))
def softmax(input: Tensor, dim: StaticInt, *, dtype: torch.dtype | None = None) -> Tensor:
    """``exp(input) / sum(exp(input), dim)``, computed stably; ``dtype`` casts ``input`` first."""
    return softmax_p.bind(input, dim=canonical_dim(dim, input.ndim), dtype=dtype)


@defop(torch=(torch.special.log_softmax,))
def log_softmax(input: Tensor, dim: StaticInt, *, dtype: torch.dtype | None = None) -> Tensor:
    """``input - logsumexp(input, dim, keepdim=True)``; ``dtype`` casts ``input`` first."""
    return log_softmax_p.bind(input, dim=canonical_dim(dim, input.ndim), dtype=dtype)


@implements(torch.softmax, torch.Tensor.softmax)
def _torch_softmax(input: Tensor, dim: StaticInt, dtype: torch.dtype | None = None) -> Tensor:
    return softmax(input, dim, dtype=dtype)


@implements(torch.log_softmax, torch.Tensor.log_softmax)
def _torch_log_softmax(input: Tensor, dim: StaticInt, dtype: torch.dtype | None = None) -> Tensor:
    return log_softmax(input, dim, dtype=dtype)


def _implicit_softmax_dim(name: str, ndim: int) -> int:
    """torch.nn.functional's deprecated choice of dim when none is given."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=4,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _functional_softmax(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The handler of ``F.softmax``/``F.log_softmax``, whose ``dim`` may be omitted."""

    def handler(
        input: Tensor, dim: StaticInt | None = None, _stacklevel: int = 3, dtype: torch.dtype | None = None
    ) -> Tensor:
        if dim is None:
            dim = _implicit_softmax_dim(name, input.ndim)
        return op(input, dim, dtype=dtype)

    return handler


implements(F.softmax)(_functional_softmax("softmax", softmax))
implements(F.log_softmax)(_functional_softmax("log_softmax", log_softmax))


# ---- argmax, argmin (integer results: no gradient)
def _argmax_impl(x: Any, *, dim: int | None, keepdim: bool) -> Any:
    return torch.argmax(x, dim, keepdim)


def _argmin_impl(x: Any, *, dim: int | None, keepdim: bool) -> Any:
    return torch.argmin(x, dim, keepdim)


def _arg_reduced_shape(x: Any, *, dim: int | None, keepdim: bool) -> tuple[int, ...]:
    dims = tuple(range(x.ndim)) if dim is None else (canonical_dim(dim, x.ndim),)
    shape = reduced_shape(x, dims=dims, keepdim=keepdim)
    return shape if dim is not None or keepdim else ()


argmax_p = Primitive("argmax", _argmax_impl, small_meta(_argmax_impl, _arg_reduced_shape))
argmin_p = Primitive("argmin", _argmin_impl, small_meta(_argmin_impl, _arg_reduced_shape))


@defop(torch=(torch.argmax, torch.Tensor.argmax))
def argmax(input: Tensor, dim: StaticInt | None = None, keepdim: StaticBool = False) -> Tensor:
    """Index of the (first) maximum along ``dim``, or in the flattened tensor for None."""
    d = None if dim is None else canonical_dim(dim, input.ndim)
    return argmax_p.bind(input, dim=d, keepdim=keepdim)


@defop(torch=(torch.argmin, torch.Tensor.argmin))
def argmin(input: Tensor, dim: StaticInt | None = None, keepdim: StaticBool = False) -> Tensor:
    """Index of the (first) minimum along ``dim``, or in the flattened tensor for None."""
    d = None if dim is None else canonical_dim(dim, input.ndim)
    return argmin_p.bind(input, dim=d, keepdim=keepdim)
