"""Elementwise ops. Scalar operands may be dynamic: they are runtime inputs of the program.

Each op is defined once: its primitive (torch lowering + meta), its user-facing function in
``symscalar.ops`` and the torch spellings it implements.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from symscalar.errors import UnsupportedOperationError
from symscalar.ops.common import Tensor, elementwise_meta, grad_for, holomorphic, result_dtype
from symscalar.ops.factories import full, to
from symscalar.ops.nvfuser_lowering import floating, upcast
from symscalar.trace import Primitive
from symscalar.tracing import data_dependent_shape_error, defop, implements
from symscalar.types import NumberLike, StaticBool, StaticInt, is_static

__all__ = [
    "add", "sub", "mul", "div", "neg", "exp", "abs", "exp2", "expm1", "log", "log1p", "log2",
    "conj", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "silu",
    "gelu", "erf", "floor", "ceil", "round", "sign", "isnan", "isfinite", "logical_not",
    "true_divide", "floor_divide", "remainder", "pow", "maximum", "minimum", "atan2", "eq",
    "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "where", "clamp", "clamp_min",
    "clamp_max", "lerp", "addcmul",
]

TensorOrNumber = Tensor | NumberLike


def _elementwise(name: str, impl: object) -> Primitive:
    return Primitive(name, impl, elementwise_meta(impl))  # type: ignore[arg-type]


# ---- add
add_p = _elementwise("add", torch.add)
add_p.vjp = lambda ct, out, a, b: (grad_for(ct, a), grad_for(ct, b))
add_p.nvfuser = lambda fd, a, b: fd.ops.add(a, b)


@defop
def add(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a + b`` with torch's broadcasting and type promotion."""
    return add_p.bind(a, b)  # type: ignore[no-any-return]


def _times_alpha(op: str, input: TensorOrNumber, other: TensorOrNumber, alpha: NumberLike) -> TensorOrNumber:
    """``alpha * other`` as torch's add/sub compute it: in the result dtype of ``input`` and
    ``other`` (alpha never promotes it), with torch's checks on alpha's type."""
    if is_static(alpha) and type(alpha) is int and alpha == 1:
        return other
    dtype = result_dtype(input, other)
    alpha_type = getattr(alpha, "_python_type", type(alpha))
    if alpha_type is bool and dtype != torch.bool:
        raise RuntimeError(f"torch.{op}: Boolean alpha only supported for Boolean results.")
    if alpha_type is float and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"torch.{op}: for integral input tensors, argument alpha must not be a floating point number."
        )
    if dtype == torch.bool:  # alpha acts as a truth value: other AND alpha
        return mul(other, alpha != 0)
    if _is_tensor(other) and other.dtype != dtype:  # type: ignore[union-attr]
        other = to(other, dtype)  # type: ignore[arg-type]
    return mul(other, alpha)


@implements(torch.add, torch.Tensor.add, torch.Tensor.__add__)
def _torch_add(input: TensorOrNumber, other: TensorOrNumber, *, alpha: NumberLike = 1) -> Tensor:
    return add(input, _times_alpha("add", input, other, alpha))


@implements(torch.Tensor.__radd__)
def _torch_radd(input: Tensor, other: NumberLike) -> Tensor:
    return add(other, input)


# ---- sub
sub_p = _elementwise("sub", torch.sub)
sub_p.vjp = lambda ct, out, a, b: (grad_for(ct, a), grad_for(-ct, b))
sub_p.nvfuser = lambda fd, a, b: fd.ops.sub(a, b)


@defop
def sub(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a - b``."""
    return sub_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.sub, torch.Tensor.sub, torch.Tensor.__sub__)
def _torch_sub(input: TensorOrNumber, other: TensorOrNumber, *, alpha: NumberLike = 1) -> Tensor:
    _no_bool_subtraction(input, other)
    return sub(input, _times_alpha("sub", input, other, alpha))


def _no_bool_subtraction(*operands: TensorOrNumber) -> None:
    """torch refuses ``-`` on a bool tensor or a bool number (a mask is inverted with ``~``)."""
    for v in operands:
        is_bool = v.dtype == torch.bool if _is_tensor(v) else getattr(v, "_python_type", type(v)) is bool  # type: ignore[union-attr]
        if is_bool:
            raise RuntimeError(
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )


@implements(torch.Tensor.__rsub__)
def _torch_rsub(input: Tensor, other: NumberLike) -> Tensor:
    _no_bool_subtraction(input, other)
    return sub(other, input)


# ---- mul
mul_p = _elementwise("mul", torch.mul)
mul_p.vjp = holomorphic(lambda ct, out, a, b: (grad_for(ct * b, a), grad_for(ct * a, b)))
mul_p.nvfuser = lambda fd, a, b: fd.ops.mul(a, b)


@defop
def mul(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a * b``."""
    return mul_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.mul, torch.Tensor.mul, torch.Tensor.__mul__)
def _torch_mul(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    return mul(input, other)


@implements(torch.Tensor.__rmul__)
def _torch_rmul(input: Tensor, other: NumberLike) -> Tensor:
    return mul(other, input)


# ---- div: true division, or rounded with rounding_mode 'trunc' / 'floor' (static)
div_p = _elementwise("div", torch.div)


def _div_vjp(ct: Any, out: Any, a: Any, b: Any, *, rounding_mode: str | None = None) -> tuple[Any, Any]:
    if rounding_mode is not None:  # piecewise constant: zero gradient, as in torch
        return None, None
    return grad_for(ct / b, a), grad_for(-ct * out / b, b)


div_p.vjp = holomorphic(_div_vjp)


def _div_nvfuser(fd: Any, a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
    quotient = fd.ops.truediv(a, b)
    if rounding_mode == "trunc":
        return fd.ops.trunc(quotient)
    if rounding_mode == "floor":
        return fd.ops.floor(quotient)
    return quotient


div_p.nvfuser = _div_nvfuser
# Rounded integer division goes through a float quotient in nvFuser (inexact for large
# integers; torch raises on division by zero): it runs in torch.
div_p.nvfuser_supports = lambda a, b, *, rounding_mode=None: rounding_mode is None or floating(a, b)


@defop
def div(a: TensorOrNumber, b: TensorOrNumber, *, rounding_mode: str | None = None) -> Tensor:
    """``a / b``: true division (integer inputs give a floating result), or rounded toward
    zero (``rounding_mode='trunc'``) or down (``'floor'``; integer inputs stay integers)."""
    if rounding_mode is None:
        return div_p.bind(a, b)  # type: ignore[no-any-return]
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )
    return div_p.bind(a, b, rounding_mode=rounding_mode)  # type: ignore[no-any-return]


@implements(torch.div, torch.divide, torch.Tensor.div, torch.Tensor.divide, torch.Tensor.__truediv__)
def _torch_div(input: TensorOrNumber, other: TensorOrNumber, *, rounding_mode: str | None = None) -> Tensor:
    return div(input, other, rounding_mode=rounding_mode)


@implements(torch.Tensor.__rtruediv__)
def _torch_rdiv(input: Tensor, other: NumberLike) -> Tensor:
    # torch computes ``other / input`` as ``input.reciprocal() * other``: same rounding here
    return mul(reciprocal(input), other)


# ---- neg
neg_p = _elementwise("neg", torch.neg)
neg_p.vjp = lambda ct, out, a: (-ct,)
neg_p.nvfuser = lambda fd, a: fd.ops.neg(a)


@defop
def neg(a: Tensor) -> Tensor:
    """``-a``."""
    return neg_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.neg, torch.Tensor.neg, torch.Tensor.__neg__)
def _torch_neg(input: Tensor) -> Tensor:
    return neg(input)


# ---- conj: the complex conjugate (real tensors are their own); used by complex vjps
conj_p = _elementwise("conj", torch.conj_physical)
conj_p.vjp = lambda ct, out, a: (torch.conj_physical(ct),)


@defop
def conj(a: Tensor) -> Tensor:
    """The complex conjugate, materialized (``torch.conj``'s lazy view has the same values)."""
    return conj_p.bind(a) if a.dtype.is_complex else a


@implements(torch.conj_physical, torch.conj, torch.Tensor.conj_physical, torch.Tensor.conj)
def _torch_conj(input: Tensor) -> Tensor:
    return conj(input)


# ---- exp
exp_p = _elementwise("exp", torch.exp)
exp_p.vjp = holomorphic(lambda ct, out, a: (ct * out,))
exp_p.nvfuser = lambda fd, a: fd.ops.exp(a)


@defop
def exp(a: Tensor) -> Tensor:
    """``e ** a``."""
    return exp_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.exp, torch.Tensor.exp)
def _torch_exp(input: Tensor) -> Tensor:
    return exp(input)


# ---- helpers shared by the rules below
def _is_tensor(x: object) -> bool:
    return hasattr(x, "shape")


def _no_inplace(op: str, inplace: bool) -> None:
    if inplace:
        raise NotImplementedError(
            f"{op}(..., inplace=True) is not supported inside a jitted function: in-place "
            "updates of traced tensors are not traced; use the out-of-place form and the result"
        )


def _zero_grad(ct: Any, out: Any, *args: Any, **params: Any) -> tuple[None, ...]:
    # Piecewise-constant ops (floor, sign, div with rounding...): torch's gradient is zero,
    # i.e. no contribution; the inputs' gradients are zeros unless another use adds to them.
    return tuple(None for _ in args)


# ================================================================ unary ops

# ---- abs
abs_p = _elementwise("abs", torch.abs)
# torch's abs_backward: ct * sgn(a), where sgn(z) = z / |z| for complex z, and 0 at 0
abs_p.vjp = lambda ct, out, a: (
    ct * torch.where(out == 0, 0, a / out) if a.dtype.is_complex else ct * torch.sign(a),
)
abs_p.nvfuser = lambda fd, a: fd.ops.abs(a)


@defop
def abs(a: Tensor) -> Tensor:  # noqa: A001 - torch's name
    """``|a|``; the gradient at 0 is 0, as in torch."""
    return abs_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.abs, torch.absolute, torch.Tensor.abs, torch.Tensor.absolute, torch.Tensor.__abs__)
def _torch_abs(input: Tensor) -> Tensor:
    return abs(input)


# ---- exp2
exp2_p = _elementwise("exp2", torch.exp2)
_LN2 = math.log(2.0)
exp2_p.vjp = holomorphic(lambda ct, out, a: (ct * out * _LN2,))
exp2_p.nvfuser = lambda fd, a: fd.ops.exp2(a)
exp2_p.nvfuser_supports = floating


@defop
def exp2(a: Tensor) -> Tensor:
    """``2 ** a``."""
    return exp2_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.exp2, torch.Tensor.exp2, torch.special.exp2)
def _torch_exp2(input: Tensor) -> Tensor:
    return exp2(input)


# ---- expm1
expm1_p = _elementwise("expm1", torch.expm1)
expm1_p.vjp = holomorphic(lambda ct, out, a: (ct * (out + 1),))
expm1_p.nvfuser = lambda fd, a: fd.ops.expm1(a)
expm1_p.nvfuser_supports = floating


@defop
def expm1(a: Tensor) -> Tensor:
    """``exp(a) - 1``, accurate for small ``a``."""
    return expm1_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.expm1, torch.Tensor.expm1, torch.special.expm1)
def _torch_expm1(input: Tensor) -> Tensor:
    return expm1(input)


# ---- log
log_p = _elementwise("log", torch.log)
log_p.vjp = holomorphic(lambda ct, out, a: (ct / a,))
log_p.nvfuser = lambda fd, a: fd.ops.log(a)
log_p.nvfuser_supports = floating


@defop
def log(a: Tensor) -> Tensor:
    """Natural logarithm."""
    return log_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.log, torch.Tensor.log)
def _torch_log(input: Tensor) -> Tensor:
    return log(input)


# ---- log1p
log1p_p = _elementwise("log1p", torch.log1p)
log1p_p.vjp = holomorphic(lambda ct, out, a: (ct / (a + 1),))
log1p_p.nvfuser = lambda fd, a: fd.ops.log1p(a)
log1p_p.nvfuser_supports = floating


@defop
def log1p(a: Tensor) -> Tensor:
    """``log(1 + a)``, accurate for small ``a``."""
    return log1p_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.log1p, torch.Tensor.log1p, torch.special.log1p)
def _torch_log1p(input: Tensor) -> Tensor:
    return log1p(input)


# ---- log2
log2_p = _elementwise("log2", torch.log2)
log2_p.vjp = holomorphic(lambda ct, out, a: (ct / (a * _LN2),))
log2_p.nvfuser = lambda fd, a: fd.ops.log2(a)
log2_p.nvfuser_supports = floating


@defop
def log2(a: Tensor) -> Tensor:
    """Base-2 logarithm."""
    return log2_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.log2, torch.Tensor.log2)
def _torch_log2(input: Tensor) -> Tensor:
    return log2(input)


# ---- sqrt
sqrt_p = _elementwise("sqrt", torch.sqrt)
sqrt_p.vjp = holomorphic(lambda ct, out, a: (ct / (out * 2),))
sqrt_p.nvfuser = lambda fd, a: fd.ops.sqrt(a)
sqrt_p.nvfuser_supports = floating


@defop
def sqrt(a: Tensor) -> Tensor:
    """Square root."""
    return sqrt_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.sqrt, torch.Tensor.sqrt)
def _torch_sqrt(input: Tensor) -> Tensor:
    return sqrt(input)


# ---- rsqrt
rsqrt_p = _elementwise("rsqrt", torch.rsqrt)
rsqrt_p.vjp = holomorphic(lambda ct, out, a: (ct * (out * out * out) * -0.5,))
rsqrt_p.nvfuser = lambda fd, a: fd.ops.rsqrt(a)
rsqrt_p.nvfuser_supports = floating


@defop
def rsqrt(a: Tensor) -> Tensor:
    """``1 / sqrt(a)``."""
    return rsqrt_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.rsqrt, torch.Tensor.rsqrt)
def _torch_rsqrt(input: Tensor) -> Tensor:
    return rsqrt(input)


# ---- reciprocal
reciprocal_p = _elementwise("reciprocal", torch.reciprocal)
reciprocal_p.vjp = holomorphic(lambda ct, out, a: (-ct * (out * out),))
reciprocal_p.nvfuser = lambda fd, a: fd.ops.reciprocal(a)
reciprocal_p.nvfuser_supports = floating


@defop
def reciprocal(a: Tensor) -> Tensor:
    """``1 / a`` (integer inputs give a floating result)."""
    return reciprocal_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.reciprocal, torch.Tensor.reciprocal)
def _torch_reciprocal(input: Tensor) -> Tensor:
    return reciprocal(input)


# ---- sin
sin_p = _elementwise("sin", torch.sin)
sin_p.vjp = holomorphic(lambda ct, out, a: (ct * torch.cos(a),))
sin_p.nvfuser = lambda fd, a: fd.ops.sin(a)
sin_p.nvfuser_supports = floating


@defop
def sin(a: Tensor) -> Tensor:
    """Sine."""
    return sin_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.sin, torch.Tensor.sin)
def _torch_sin(input: Tensor) -> Tensor:
    return sin(input)


# ---- cos
cos_p = _elementwise("cos", torch.cos)
cos_p.vjp = holomorphic(lambda ct, out, a: (ct * -torch.sin(a),))
cos_p.nvfuser = lambda fd, a: fd.ops.cos(a)
cos_p.nvfuser_supports = floating


@defop
def cos(a: Tensor) -> Tensor:
    """Cosine."""
    return cos_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.cos, torch.Tensor.cos)
def _torch_cos(input: Tensor) -> Tensor:
    return cos(input)


# ---- tan
tan_p = _elementwise("tan", torch.tan)
tan_p.vjp = holomorphic(lambda ct, out, a: (ct * (out * out + 1),))
tan_p.nvfuser = lambda fd, a: fd.ops.tan(a)
tan_p.nvfuser_supports = floating


@defop
def tan(a: Tensor) -> Tensor:
    """Tangent."""
    return tan_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.tan, torch.Tensor.tan)
def _torch_tan(input: Tensor) -> Tensor:
    return tan(input)


# ---- tanh (torch.nn.functional.tanh calls Tensor.tanh)
tanh_p = _elementwise("tanh", torch.tanh)
tanh_p.vjp = holomorphic(lambda ct, out, a: (ct * (1 - out * out),))
tanh_p.nvfuser = lambda fd, a: fd.ops.tanh(a)
tanh_p.nvfuser_supports = floating


@defop
def tanh(a: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return tanh_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.tanh, torch.Tensor.tanh)
def _torch_tanh(input: Tensor) -> Tensor:
    return tanh(input)


# ---- sigmoid (torch.nn.functional.sigmoid calls Tensor.sigmoid)
sigmoid_p = _elementwise("sigmoid", torch.sigmoid)
sigmoid_p.vjp = holomorphic(lambda ct, out, a: (ct * (out * (1 - out)),))
sigmoid_p.nvfuser = lambda fd, a: fd.ops.sigmoid(a)
sigmoid_p.nvfuser_supports = floating


@defop
def sigmoid(a: Tensor) -> Tensor:
    """``1 / (1 + exp(-a))``."""
    return sigmoid_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.sigmoid, torch.Tensor.sigmoid, torch.special.expit)
def _torch_sigmoid(input: Tensor) -> Tensor:
    return sigmoid(input)


# ---- relu
relu_p = _elementwise("relu", torch.relu)
# torch's threshold_backward: 0 where out <= 0, so 0 at 0 and the cotangent at NaN
relu_p.vjp = lambda ct, out, a: (torch.where(out <= 0, 0, ct),)
relu_p.nvfuser = lambda fd, a: fd.ops.relu(a)


@defop
def relu(a: Tensor) -> Tensor:
    """``max(a, 0)``; the gradient at 0 is 0, as in torch."""
    return relu_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.relu, torch.Tensor.relu)
def _torch_relu(input: Tensor) -> Tensor:
    return relu(input)


@implements(torch.nn.functional.relu)
def _torch_f_relu(input: Tensor, inplace: StaticBool = False) -> Tensor:
    _no_inplace("torch.nn.functional.relu", inplace)
    return relu(input)


# ---- silu
silu_p = _elementwise("silu", torch.nn.functional.silu)


def _silu_vjp(ct: Any, out: Any, a: Any) -> tuple[Any]:
    s = torch.sigmoid(a)
    return (ct * (s * (1 + a * (1 - s))),)


silu_p.vjp = _silu_vjp
silu_p.nvfuser = lambda fd, a: fd.ops.silu(a)
silu_p.nvfuser_supports = floating


@defop
def silu(a: Tensor) -> Tensor:
    """``a * sigmoid(a)`` (swish)."""
    return silu_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.nn.functional.silu)
def _torch_silu(input: Tensor, inplace: StaticBool = False) -> Tensor:
    _no_inplace("torch.nn.functional.silu", inplace)
    return silu(input)


# ---- gelu
gelu_p = _elementwise("gelu", torch.nn.functional.gelu)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_KAPPA = 0.044715


def _gelu_vjp(ct: Any, out: Any, a: Any, *, approximate: str = "none") -> tuple[Any]:
    if approximate == "tanh":
        inner_tanh = torch.tanh((a + a * a * a * _GELU_KAPPA) * _SQRT_2_OVER_PI)
        left = (inner_tanh + 1) * 0.5
        right = a * 0.5 * (1 - inner_tanh * inner_tanh) * _SQRT_2_OVER_PI * (a * a * (3 * _GELU_KAPPA) + 1)
        return (ct * (left + right),)
    cdf = (torch.erf(a * _INV_SQRT_2) + 1) * 0.5
    pdf = torch.exp(a * a * -0.5) * _INV_SQRT_2PI
    return (ct * (cdf + a * pdf),)


gelu_p.vjp = _gelu_vjp


def _gelu_nvfuser(fd: Any, a: Any, *, approximate: str = "none") -> Any:
    x = upcast(fd, a)
    if approximate == "tanh":
        inner = fd.ops.mul(fd.ops.add(x, fd.ops.mul(fd.ops.mul(fd.ops.mul(x, x), x), _GELU_KAPPA)), _SQRT_2_OVER_PI)
        return fd.ops.mul(fd.ops.mul(x, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))
    return fd.ops.mul(fd.ops.mul(x, 0.5), fd.ops.add(fd.ops.erf(fd.ops.mul(x, _INV_SQRT_2)), 1.0))


gelu_p.nvfuser = _gelu_nvfuser
gelu_p.nvfuser_supports = floating


@defop
def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate`` (static) is ``'none'`` or ``'tanh'``."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    if approximate == "none":
        return gelu_p.bind(a)  # type: ignore[no-any-return]
    return gelu_p.bind(a, approximate=approximate)  # type: ignore[no-any-return]


@implements(torch.nn.functional.gelu)
def _torch_gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return gelu(input, approximate)


# ---- erf
erf_p = _elementwise("erf", torch.erf)
erf_p.vjp = lambda ct, out, a: (ct * torch.exp(-(a * a)) * (2.0 / math.sqrt(math.pi)),)
erf_p.nvfuser = lambda fd, a: fd.ops.erf(a)
erf_p.nvfuser_supports = floating


@defop
def erf(a: Tensor) -> Tensor:
    """The error function."""
    return erf_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.erf, torch.Tensor.erf, torch.special.erf)
def _torch_erf(input: Tensor) -> Tensor:
    return erf(input)


# ---- floor, ceil, round, sign: piecewise constant, zero gradient as in torch
floor_p = _elementwise("floor", torch.floor)
floor_p.vjp = _zero_grad
floor_p.nvfuser = lambda fd, a: fd.ops.floor(a)
floor_p.nvfuser_supports = floating


@defop
def floor(a: Tensor) -> Tensor:
    """Round down to an integer value (same dtype); zero gradient."""
    return floor_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.floor, torch.Tensor.floor)
def _torch_floor(input: Tensor) -> Tensor:
    return floor(input)


ceil_p = _elementwise("ceil", torch.ceil)
ceil_p.vjp = _zero_grad
ceil_p.nvfuser = lambda fd, a: fd.ops.ceil(a)
ceil_p.nvfuser_supports = floating


@defop
def ceil(a: Tensor) -> Tensor:
    """Round up to an integer value (same dtype); zero gradient."""
    return ceil_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.ceil, torch.Tensor.ceil)
def _torch_ceil(input: Tensor) -> Tensor:
    return ceil(input)


round_p = _elementwise("round", torch.round)
round_p.vjp = _zero_grad
round_p.nvfuser = lambda fd, a: fd.ops.round(a)  # half to even, like torch
# decimals != 0 (torch scales by 10**decimals in its own way) and integer inputs run in torch
round_p.nvfuser_supports = lambda a, *, decimals=0: decimals == 0 and floating(a)


@defop
def round(a: Tensor, *, decimals: StaticInt = 0) -> Tensor:  # noqa: A001 - torch's name
    """Round half to even, to ``decimals`` (static) decimal places; zero gradient."""
    if decimals == 0:
        return round_p.bind(a)  # type: ignore[no-any-return]
    return round_p.bind(a, decimals=decimals)  # type: ignore[no-any-return]


@implements(torch.round, torch.Tensor.round)
def _torch_round(input: Tensor, *, decimals: StaticInt = 0) -> Tensor:
    return round(input, decimals=decimals)


@implements(torch.special.round)
def _torch_special_round(input: Tensor, *, decimals: StaticInt = 0) -> Tensor:
    if not input.dtype.is_floating_point:  # unlike torch.round, as in torch
        raise NotImplementedError(f"torch.special.round is not implemented for {input.dtype} in torch")
    return round(input, decimals=decimals)


sign_p = _elementwise("sign", torch.sign)
sign_p.vjp = _zero_grad
sign_p.nvfuser = lambda fd, a: fd.ops.sign(a)
sign_p.nvfuser_supports = lambda a: a.dtype != torch.bool


@defop
def sign(a: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of ``a``; zero gradient."""
    return sign_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.sign, torch.Tensor.sign)
def _torch_sign(input: Tensor) -> Tensor:
    return sign(input)


# ---- isnan, isfinite, logical_not: boolean results, not differentiable
isnan_p = _elementwise("isnan", torch.isnan)
isnan_p.nvfuser = lambda fd, a: fd.ops.isnan(a)
isnan_p.nvfuser_supports = floating


@defop
def isnan(a: Tensor) -> Tensor:
    """Where ``a`` is NaN (a bool tensor)."""
    return isnan_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.isnan, torch.Tensor.isnan)
def _torch_isnan(input: Tensor) -> Tensor:
    return isnan(input)


isfinite_p = _elementwise("isfinite", torch.isfinite)
isfinite_p.nvfuser = lambda fd, a: fd.ops.isfinite(a)
isfinite_p.nvfuser_supports = floating


@defop
def isfinite(a: Tensor) -> Tensor:
    """Where ``a`` is neither infinite nor NaN (a bool tensor)."""
    return isfinite_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.isfinite, torch.Tensor.isfinite)
def _torch_isfinite(input: Tensor) -> Tensor:
    return isfinite(input)


logical_not_p = _elementwise("logical_not", torch.logical_not)
logical_not_p.nvfuser = lambda fd, a: fd.ops.logical_not(a)  # nvFuser casts to bool first


@defop
def logical_not(a: Tensor) -> Tensor:
    """Elementwise ``not`` (a bool tensor; nonzero counts as true)."""
    return logical_not_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.logical_not, torch.Tensor.logical_not)
def _torch_logical_not(input: Tensor) -> Tensor:
    return logical_not(input)


# ================================================================ binary ops


@defop
def true_divide(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a / b``: the same op as ``div``."""
    return div(a, b)


@implements(torch.true_divide, torch.Tensor.true_divide)
def _torch_true_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    return div(input, other)


@defop
def floor_divide(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a // b``: ``div(a, b, rounding_mode='floor')`` (as torch.floor_divide is)."""
    return div(a, b, rounding_mode="floor")


@implements(torch.floor_divide, torch.Tensor.floor_divide, torch.Tensor.__floordiv__)
def _torch_floor_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    return floor_divide(input, other)


@implements(torch.Tensor.__rfloordiv__)
def _torch_rfloordiv(input: Tensor, other: NumberLike) -> Tensor:
    return floor_divide(other, input)


# ---- remainder (Python's %: the sign of the divisor)
remainder_p = _elementwise("remainder", torch.remainder)
remainder_p.vjp = lambda ct, out, a, b: (
    grad_for(ct, a),
    grad_for(-ct * torch.div(a, b, rounding_mode="floor"), b),
)
remainder_p.nvfuser = lambda fd, a, b: fd.ops.remainder(a, b)  # the sign of b, as torch
# Integer remainder by zero raises in torch; nvFuser would not: integer inputs run in torch.
remainder_p.nvfuser_supports = floating


@defop
def remainder(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a - floor(a / b) * b`` (the result has the sign of ``b``, like Python's ``%``)."""
    return remainder_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.remainder, torch.Tensor.remainder, torch.Tensor.__mod__)
def _torch_remainder(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    return remainder(input, other)


@implements(torch.Tensor.__rmod__)
def _torch_rmod(input: Tensor, other: NumberLike) -> Tensor:
    return remainder(other, input)


# ---- pow
pow_p = _elementwise("pow", torch.pow)


def _pow_vjp(ct: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    # torch's pow_backward_self / pow_backward_exponent, including their special cases:
    # d/da is 0 where b == 0, d/db is 0 where a == 0 and b >= 0. A static number is tested
    # here; a dynamic one in the program, as a 0-d tensor.
    grad_a = grad_b = None
    if _is_tensor(a):
        if isinstance(b, (int, float)):
            grad_a = None if b == 0 else grad_for(ct * b * a ** (b - 1), a)
        else:
            b_is_zero = b == 0 if _is_tensor(b) else full((), b, dtype=ct.dtype, device=ct.device) == 0
            grad_a = grad_for(torch.where(b_is_zero, 0, ct * b * a ** (b - 1)), a)
    if _is_tensor(b):
        base = a if _is_tensor(a) else full((), a, dtype=out.dtype, device=out.device)
        zero_case = torch.logical_and(base == 0, b >= 0)
        grad_b = grad_for(ct * torch.where(zero_case, 0, out * torch.log(base)), b)
    return grad_a, grad_b


pow_p.vjp = holomorphic(_pow_vjp)
pow_p.nvfuser = lambda fd, a, b: fd.ops.pow(a, b)
# Integer powers (negative exponents raise in torch) run in torch.
pow_p.nvfuser_supports = floating


@defop
def pow(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:  # noqa: A001 - torch's name
    """``a ** b``; either operand may be a (dynamic) number."""
    return pow_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.pow, torch.Tensor.pow, torch.Tensor.__pow__)
def _torch_pow(input: TensorOrNumber, exponent: TensorOrNumber) -> Tensor:
    return pow(input, exponent)


@implements(torch.Tensor.__rpow__)
def _torch_rpow(input: Tensor, other: NumberLike) -> Tensor:
    return pow(other, input)


# ---- maximum, minimum (tensors only, as in torch): ties split the gradient in half
maximum_p = _elementwise("maximum", torch.maximum)
minimum_p = _elementwise("minimum", torch.minimum)


def _select_vjp(ct: Any, a: Any, b: Any, a_loses: Any, b_loses: Any) -> tuple[Any, Any]:
    # torch: where(a == b, ct / 2, ct), masked to 0 where the operand lost (so with a NaN,
    # where neither comparison holds, both operands get the full gradient).
    shared = torch.where(a == b, ct / 2, ct)
    return grad_for(torch.where(a_loses, 0, shared), a), grad_for(torch.where(b_loses, 0, shared), b)


maximum_p.vjp = lambda ct, out, a, b: _select_vjp(ct, a, b, a < b, a > b)
minimum_p.vjp = lambda ct, out, a, b: _select_vjp(ct, a, b, a > b, a < b)
maximum_p.nvfuser = lambda fd, a, b: fd.ops.maximum(a, b)  # NaN propagates, as torch
minimum_p.nvfuser = lambda fd, a, b: fd.ops.minimum(a, b)


@defop
def maximum(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise maximum (NaN propagates); at ties each operand gets half the gradient."""
    return maximum_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.maximum, torch.Tensor.maximum)
def _torch_maximum(input: Tensor, other: Tensor) -> Tensor:
    return maximum(input, other)


@defop
def minimum(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise minimum (NaN propagates); at ties each operand gets half the gradient."""
    return minimum_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.minimum, torch.Tensor.minimum)
def _torch_minimum(input: Tensor, other: Tensor) -> Tensor:
    return minimum(input, other)


# ---- atan2 (tensors only, as in torch)
atan2_p = _elementwise("atan2", torch.atan2)


def _atan2_vjp(ct: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    # as torch's atan2_backward: an infinite 1 / (a^2 + b^2) (at the origin) counts as 0
    recip = torch.reciprocal(a * a + b * b)
    recip = torch.where(recip == math.inf, 0, recip)
    return grad_for(ct * b * recip, a), grad_for(ct * -a * recip, b)


atan2_p.vjp = _atan2_vjp
atan2_p.nvfuser = lambda fd, a, b: fd.ops.atan2(a, b)
atan2_p.nvfuser_supports = floating


@defop
def atan2(a: Tensor, b: Tensor) -> Tensor:
    """The angle of the point ``(b, a)``, in ``[-pi, pi]``."""
    return atan2_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.atan2, torch.arctan2, torch.Tensor.atan2, torch.Tensor.arctan2)
def _torch_atan2(input: Tensor, other: Tensor) -> Tensor:
    return atan2(input, other)


# ---- comparisons: bool results, not differentiable. Python swaps them for a number on the
# left (``2 < x`` is ``x > 2``), so the torch spellings take a tensor first.
eq_p = _elementwise("eq", torch.eq)
ne_p = _elementwise("ne", torch.ne)
lt_p = _elementwise("lt", torch.lt)
le_p = _elementwise("le", torch.le)
gt_p = _elementwise("gt", torch.gt)
ge_p = _elementwise("ge", torch.ge)
eq_p.nvfuser = lambda fd, a, b: fd.ops.eq(a, b)
ne_p.nvfuser = lambda fd, a, b: fd.ops.ne(a, b)
lt_p.nvfuser = lambda fd, a, b: fd.ops.lt(a, b)
le_p.nvfuser = lambda fd, a, b: fd.ops.le(a, b)
gt_p.nvfuser = lambda fd, a, b: fd.ops.gt(a, b)
ge_p.nvfuser = lambda fd, a, b: fd.ops.ge(a, b)


@defop
def eq(a: Tensor, b: TensorOrNumber) -> Tensor:
    """``a == b`` (a bool tensor)."""
    return eq_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.eq, torch.Tensor.eq, torch.Tensor.__eq__)
def _torch_eq(input: Tensor, other: TensorOrNumber) -> Tensor:
    return eq(input, other)


@defop
def ne(a: Tensor, b: TensorOrNumber) -> Tensor:
    """``a != b`` (a bool tensor)."""
    return ne_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.ne, torch.not_equal, torch.Tensor.ne, torch.Tensor.not_equal, torch.Tensor.__ne__)
def _torch_ne(input: Tensor, other: TensorOrNumber) -> Tensor:
    return ne(input, other)


@defop
def lt(a: Tensor, b: TensorOrNumber) -> Tensor:
    """``a < b`` (a bool tensor)."""
    return lt_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.lt, torch.less, torch.Tensor.lt, torch.Tensor.less, torch.Tensor.__lt__)
def _torch_lt(input: Tensor, other: TensorOrNumber) -> Tensor:
    return lt(input, other)


@defop
def le(a: Tensor, b: TensorOrNumber) -> Tensor:
    """``a <= b`` (a bool tensor)."""
    return le_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.le, torch.less_equal, torch.Tensor.le, torch.Tensor.less_equal, torch.Tensor.__le__)
def _torch_le(input: Tensor, other: TensorOrNumber) -> Tensor:
    return le(input, other)


@defop
def gt(a: Tensor, b: TensorOrNumber) -> Tensor:
    """``a > b`` (a bool tensor)."""
    return gt_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.gt, torch.greater, torch.Tensor.gt, torch.Tensor.greater, torch.Tensor.__gt__)
def _torch_gt(input: Tensor, other: TensorOrNumber) -> Tensor:
    return gt(input, other)


@defop
def ge(a: Tensor, b: TensorOrNumber) -> Tensor:
    """``a >= b`` (a bool tensor)."""
    return ge_p.bind(a, b)  # type: ignore[no-any-return]


@implements(
    torch.ge, torch.greater_equal, torch.Tensor.ge, torch.Tensor.greater_equal, torch.Tensor.__ge__
)
def _torch_ge(input: Tensor, other: TensorOrNumber) -> Tensor:
    return ge(input, other)


# ---- logical_and, logical_or (tensors only, as in torch; nonzero counts as true)
logical_and_p = _elementwise("logical_and", torch.logical_and)
logical_or_p = _elementwise("logical_or", torch.logical_or)
logical_and_p.nvfuser = lambda fd, a, b: fd.ops.logical_and(a, b)  # nvFuser casts to bool first
logical_or_p.nvfuser = lambda fd, a, b: fd.ops.logical_or(a, b)


@defop
def logical_and(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise ``a and b`` (a bool tensor)."""
    return logical_and_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.logical_and, torch.Tensor.logical_and)
def _torch_logical_and(input: Tensor, other: Tensor) -> Tensor:
    return logical_and(input, other)


@defop
def logical_or(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise ``a or b`` (a bool tensor)."""
    return logical_or_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.logical_or, torch.Tensor.logical_or)
def _torch_logical_or(input: Tensor, other: Tensor) -> Tensor:
    return logical_or(input, other)


# ================================================================ ternary ops

# ---- where
where_p = _elementwise("where", torch.where)
where_p.vjp = lambda ct, out, cond, a, b: (
    None,
    grad_for(torch.where(cond, ct, 0), a),
    grad_for(torch.where(cond, 0, ct), b),
)
where_p.nvfuser = lambda fd, cond, a, b: fd.ops.where(cond, a, b)


@defop
def where(condition: Tensor, a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a`` where ``condition`` holds, else ``b``; ``a``/``b`` may be (dynamic) numbers."""
    return where_p.bind(condition, a, b)  # type: ignore[no-any-return]


@implements(torch.where)
def _torch_where(condition: Tensor, input: TensorOrNumber | None = None, other: TensorOrNumber | None = None) -> Tensor:
    if input is None or other is None:  # torch.where(condition) is nonzero(condition, as_tuple=True)
        raise data_dependent_shape_error("torch.where(condition) (one argument)", "how many elements are True")
    return where(condition, input, other)


@implements(torch.Tensor.where)
def _tensor_where(input: Tensor, condition: Tensor, other: TensorOrNumber) -> Tensor:
    return where(condition, input, other)


# ---- clamp: bounds are tensors, (dynamic) numbers or None
clamp_p = _elementwise("clamp", torch.clamp)


def _clamp_vjp(ct: Any, out: Any, x: Any, lo: Any, hi: Any) -> tuple[Any, Any, Any]:
    # torch's clamp_backward / clamp_backward_min_max: x gets the gradient inside the closed
    # interval; a bound gets it where it was hit (the lower one only when lo < hi).
    if lo is not None and hi is not None:
        inside = torch.logical_and(x >= lo, x <= hi)
    else:
        inside = x >= lo if lo is not None else x <= hi
    grad_x = torch.where(inside, ct, 0)
    grad_lo = grad_hi = None
    if _is_tensor(lo):
        hit = torch.logical_and(x < lo, lo < hi) if hi is not None else x < lo
        grad_lo = grad_for(torch.where(hit, ct, 0), lo)
    if _is_tensor(hi):
        hit = torch.logical_or(x > hi, hi < lo) if lo is not None else x > hi
        grad_hi = grad_for(torch.where(hit, ct, 0), hi)
    return grad_for(grad_x, x), grad_lo, grad_hi


clamp_p.vjp = _clamp_vjp


def _clamp_nvfuser(fd: Any, x: Any, lo: Any, hi: Any) -> Any:
    # max then min, as torch: where lo > hi the result is hi; NaN in x or a bound propagates.
    if lo is not None:
        x = fd.ops.maximum(x, lo)
    if hi is not None:
        x = fd.ops.minimum(x, hi)
    return x


clamp_p.nvfuser = _clamp_nvfuser


@defop
def clamp(  # noqa: A002 - torch's parameter names
    x: Tensor, min: TensorOrNumber | None = None, max: TensorOrNumber | None = None
) -> Tensor:
    """``x`` limited to ``[min, max]``; either bound may be a tensor, a (dynamic) number or
    None (not both). Where ``min > max`` the result is ``max``, as in torch."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    return clamp_p.bind(x, min, max)  # type: ignore[no-any-return]


@implements(torch.clamp, torch.clip, torch.Tensor.clamp, torch.Tensor.clip)
def _torch_clamp(
    input: Tensor, min: TensorOrNumber | None = None, max: TensorOrNumber | None = None  # noqa: A002
) -> Tensor:
    return clamp(input, min, max)


@defop
def clamp_min(x: Tensor, min: TensorOrNumber) -> Tensor:  # noqa: A002
    """``clamp(x, min, None)``."""
    return clamp(x, min, None)


@implements(torch.clamp_min, torch.Tensor.clamp_min)
def _torch_clamp_min(input: Tensor, min: TensorOrNumber) -> Tensor:  # noqa: A002
    return clamp(input, min, None)


@defop
def clamp_max(x: Tensor, max: TensorOrNumber) -> Tensor:  # noqa: A002
    """``clamp(x, None, max)``."""
    return clamp(x, None, max)


@implements(torch.clamp_max, torch.Tensor.clamp_max)
def _torch_clamp_max(input: Tensor, max: TensorOrNumber) -> Tensor:  # noqa: A002
    return clamp(input, None, max)


# ---- lerp
lerp_p = _elementwise("lerp", torch.lerp)
lerp_p.vjp = lambda ct, out, a, b, w: (
    grad_for(ct * (1 - w), a),
    grad_for(ct * w, b),
    grad_for(ct * (b - a), w),
)
lerp_p.nvfuser = lambda fd, a, b, w: fd.ops.lerp(a, b, w)
lerp_p.nvfuser_supports = floating


@defop
def lerp(a: Tensor, b: Tensor, weight: TensorOrNumber) -> Tensor:
    """``a + weight * (b - a)``; ``weight`` may be a tensor or a (dynamic) number."""
    return lerp_p.bind(a, b, weight)  # type: ignore[no-any-return]


@implements(torch.lerp, torch.Tensor.lerp)
def _torch_lerp(input: Tensor, end: Tensor, weight: TensorOrNumber) -> Tensor:
    return lerp(input, end, weight)


# ---- addcmul
def _addcmul_impl(x: Any, t1: Any, t2: Any, value: Any) -> Any:
    return torch.addcmul(x, t1, t2, value=value)


addcmul_p = _elementwise("addcmul", _addcmul_impl)
addcmul_p.vjp = lambda ct, out, x, t1, t2, value: (
    grad_for(ct, x),
    grad_for(ct * (t2 * value), t1),
    grad_for(ct * (t1 * value), t2),
    None,
)
addcmul_p.nvfuser = lambda fd, x, t1, t2, value: fd.ops.add(x, fd.ops.mul(fd.ops.mul(value, t1), t2))


@defop
def addcmul(x: Tensor, t1: Tensor, t2: Tensor, *, value: NumberLike = 1) -> Tensor:
    """``x + value * t1 * t2``; ``value`` may be dynamic."""
    return addcmul_p.bind(x, t1, t2, value)  # type: ignore[no-any-return]


@implements(torch.addcmul, torch.Tensor.addcmul)
def _torch_addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: NumberLike = 1) -> Tensor:
    return addcmul(input, tensor1, tensor2, value=value)


# ---- &, |, ^, ~ on masks: on bool tensors torch's bitwise ops are the logical ones
# (transformers combines attention masks with `&`). On integer tensors they are bitwise,
# which has no primitive here: refused by name, never computed as the logical op.
def _masks_only(op: str, *operands: Any) -> None:
    for v in operands:
        if not (_is_tensor(v) and v.dtype == torch.bool):
            what = v._describe() if hasattr(v, "_describe") else f"{type(v).__name__} {v!r}"
            raise UnsupportedOperationError(
                f"torch.{op} on {what}: symscalar implements it on bool tensors only (masks, where "
                "it is logical_and/or/xor/not). Convert the operands with `.bool()` when they "
                "are masks, or compute the integer bitwise op outside the jitted function."
            )


@implements(torch.bitwise_and, torch.Tensor.bitwise_and, torch.Tensor.__and__, torch.Tensor.__rand__)
def _torch_bitwise_and(input: Tensor, other: Tensor) -> Tensor:
    _masks_only("bitwise_and", input, other)
    return logical_and(input, other)


@implements(torch.bitwise_or, torch.Tensor.bitwise_or, torch.Tensor.__or__, torch.Tensor.__ror__)
def _torch_bitwise_or(input: Tensor, other: Tensor) -> Tensor:
    _masks_only("bitwise_or", input, other)
    return logical_or(input, other)


@implements(torch.bitwise_xor, torch.Tensor.bitwise_xor, torch.Tensor.__xor__, torch.Tensor.__rxor__)
def _torch_bitwise_xor(input: Tensor, other: Tensor) -> Tensor:
    _masks_only("bitwise_xor", input, other)
    return ne(input, other)


@implements(torch.bitwise_not, torch.Tensor.bitwise_not, torch.Tensor.__invert__)
def _torch_bitwise_not(input: Tensor) -> Tensor:
    _masks_only("bitwise_not", input)
    return logical_not(input)
