"""Elementwise ops. Scalar operands may be dynamic: they are runtime inputs of the program.

Each op is defined once: its primitive (torch lowering + meta), its user-facing function in
``symscalar.ops`` and the torch spellings it implements.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from symscalar.ops.define import (
    NumberLike,
    Primitive,
    StaticBool,
    StaticFloat,
    StaticInt,
    Tensor,
    data_dependent_shape_error,
    defop,
    elementwise_primitive,
    floating,
    grad_for,
    holomorphic,
    implements,
    is_static,
    maybe_in_place,
    register_nvfuser,
    register_vjp,
    result_dtype,
    upcast,
)
from symscalar.ops.factories import full, to
from symscalar.ops.opaque import opaque_handler

__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "exp",
    "abs",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "conj",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "silu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "gelu",
    "erf",
    "floor",
    "ceil",
    "round",
    "sign",
    "isnan",
    "isfinite",
    "logical_not",
    "true_divide",
    "floor_divide",
    "remainder",
    "pow",
    "maximum",
    "minimum",
    "atan2",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "where",
    "clamp",
    "clamp_min",
    "clamp_max",
    "lerp",
    "addcmul",
]

TensorOrNumber = Tensor | NumberLike


# ---- add
add_p = elementwise_primitive("add", torch.add)
register_vjp(add_p, lambda ct, out, a, b: (grad_for(ct, a), grad_for(ct, b)))
register_nvfuser(add_p, lambda fd, a, b: fd.ops.add(a, b))


@defop
def add(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a + b`` with torch's broadcasting and type promotion."""
    return add_p.bind(a, b)


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
    if not _is_tensor(other):
        # a number times alpha stays a number (static, or a dynamic scalar): as a 0-d tensor
        # of the default dtype it would promote a 0-d float16 input to float32
        return other * alpha  # type: ignore[operator]
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
sub_p = elementwise_primitive("sub", torch.sub)
# A scalar operand gets no cotangent, so sub, mul and div do not compute one: it would only be
# recorded and dropped (``x - 1``, ``x * 0.5``, ``x / s`` are common; recording is most of a first call).
register_vjp(sub_p, lambda ct, out, a, b: (grad_for(ct, a), grad_for(-ct, b) if _is_tensor(b) else None))
register_nvfuser(sub_p, lambda fd, a, b: fd.ops.sub(a, b))


@defop
def sub(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a - b``."""
    return sub_p.bind(a, b)


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
mul_p = elementwise_primitive("mul", torch.mul)


def _mul_vjp(ct: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    return grad_for(ct * b, a) if _is_tensor(a) else None, grad_for(ct * a, b) if _is_tensor(b) else None


register_vjp(mul_p, holomorphic(_mul_vjp))
register_nvfuser(mul_p, lambda fd, a, b: fd.ops.mul(a, b))


@defop(torch=(torch.mul, torch.Tensor.mul, torch.Tensor.__mul__))
def mul(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """``input * other``."""
    return mul_p.bind(input, other)


@implements(torch.Tensor.__rmul__)
def _torch_rmul(input: Tensor, other: NumberLike) -> Tensor:
    # torch's __rmul__ is mul(self, other): a number first would be rounded to a 16-bit
    # tensor's dtype before the product (torch.mul(2.2, x) != 2.2 * x in float16)
    return mul(input, other)


# ---- div: true division, or rounded with rounding_mode 'trunc' / 'floor' (static)
div_p = elementwise_primitive("div", torch.div)


def _div_vjp(ct: Any, out: Any, a: Any, b: Any, *, rounding_mode: str | None = None) -> tuple[Any, Any]:
    if rounding_mode is not None:  # piecewise constant: zero gradient, as in torch
        return None, None
    # torch's div_tensor_self/other_backward, in their order: grad / other, -grad * ((self / other) / other)
    return grad_for(ct / b, a) if _is_tensor(a) else None, grad_for(-ct * (out / b), b) if _is_tensor(b) else None


register_vjp(div_p, holomorphic(_div_vjp))


def _div_nvfuser(fd: Any, a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
    quotient = fd.ops.truediv(a, b)
    if rounding_mode == "trunc":
        return fd.ops.trunc(quotient)
    if rounding_mode == "floor":
        return fd.ops.floor(quotient)
    return quotient


# Rounded integer division goes through a float quotient in nvFuser (inexact for large
# integers; torch raises on division by zero): it runs in torch.
register_nvfuser(
    div_p,
    _div_nvfuser,
    supports=lambda a, b, *, rounding_mode=None: rounding_mode is None or floating(a, b),
)


@defop(torch=(torch.div, torch.divide, torch.Tensor.div, torch.Tensor.divide, torch.Tensor.__truediv__))
def div(input: TensorOrNumber, other: TensorOrNumber, *, rounding_mode: str | None = None) -> Tensor:
    """``input / other``: true division (integer inputs give a floating result), or rounded toward
    zero (``rounding_mode='trunc'``) or down (``'floor'``; integer inputs stay integers)."""
    if rounding_mode is None:
        return div_p.bind(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    return div_p.bind(input, other, rounding_mode=rounding_mode)


@implements(torch.Tensor.__rtruediv__)
def _torch_rdiv(input: Tensor, other: NumberLike) -> Tensor:
    # torch computes ``other / input`` as ``input.reciprocal() * other``: same rounding here
    return mul(reciprocal(input), other)


# ---- neg
neg_p = elementwise_primitive("neg", torch.neg)
register_vjp(neg_p, lambda ct, out, a: (-ct,))
register_nvfuser(neg_p, lambda fd, a: fd.ops.neg(a))


@defop(torch=(torch.neg, torch.Tensor.neg, torch.Tensor.__neg__))
def neg(input: Tensor) -> Tensor:
    """``-input``."""
    return neg_p.bind(input)


# ---- conj: the complex conjugate (real tensors are their own); used by complex vjps
conj_p = elementwise_primitive("conj", torch.conj_physical)
register_vjp(conj_p, lambda ct, out, a: (torch.conj_physical(ct),))


@defop(torch=(torch.conj_physical, torch.conj, torch.Tensor.conj_physical, torch.Tensor.conj))
def conj(input: Tensor) -> Tensor:
    """The complex conjugate, materialized (``torch.conj``'s lazy view has the same values)."""
    return conj_p.bind(input) if input.dtype.is_complex else input


# ---- exp
exp_p = elementwise_primitive("exp", torch.exp)
register_vjp(exp_p, holomorphic(lambda ct, out, a: (ct * out,)))
register_nvfuser(exp_p, lambda fd, a: fd.ops.exp(a))


@defop(torch=(torch.exp, torch.Tensor.exp))
def exp(input: Tensor) -> Tensor:
    """``e ** input``."""
    return exp_p.bind(input)


# ---- helpers shared by the rules below
def _is_tensor(x: object) -> bool:
    return hasattr(x, "shape")


def _zero_grad(ct: Any, out: Any, *args: Any, **params: Any) -> tuple[None, ...]:
    # Piecewise-constant ops (floor, sign, div with rounding...): torch's gradient is zero,
    # i.e. no contribution; the inputs' gradients are zeros unless another use adds to them.
    return tuple(None for _ in args)


# ================================================================ unary ops

# ---- abs
abs_p = elementwise_primitive("abs", torch.abs)
# torch's abs_backward: ct * sgn(a), where sgn(z) = z / |z| for complex z, and 0 at 0
register_vjp(
    abs_p, lambda ct, out, a: (ct * torch.where(out == 0, 0, a / out) if a.dtype.is_complex else ct * torch.sign(a),)
)
register_nvfuser(abs_p, lambda fd, a: fd.ops.abs(a))


@defop(torch=(torch.abs, torch.absolute, torch.Tensor.abs, torch.Tensor.absolute, torch.Tensor.__abs__))
def abs(input: Tensor) -> Tensor:  # noqa: A001 - torch's name
    """``|input|``; the gradient at 0 is 0, as in torch."""
    return abs_p.bind(input)


# ---- exp2
exp2_p = elementwise_primitive("exp2", torch.exp2)
_LN2 = math.log(2.0)
register_vjp(exp2_p, holomorphic(lambda ct, out, a: (ct * out * _LN2,)))
register_nvfuser(exp2_p, lambda fd, a: fd.ops.exp2(a), supports=floating)


@defop(torch=(torch.exp2, torch.Tensor.exp2, torch.special.exp2))
def exp2(input: Tensor) -> Tensor:
    """``2 ** input``."""
    return exp2_p.bind(input)


# ---- expm1
expm1_p = elementwise_primitive("expm1", torch.expm1)
register_vjp(expm1_p, holomorphic(lambda ct, out, a: (ct * (out + 1),)))
register_nvfuser(expm1_p, lambda fd, a: fd.ops.expm1(a), supports=floating)


@defop(torch=(torch.expm1, torch.Tensor.expm1, torch.special.expm1))
def expm1(input: Tensor) -> Tensor:
    """``exp(input) - 1``, accurate for small ``input``."""
    return expm1_p.bind(input)


# ---- log
log_p = elementwise_primitive("log", torch.log)
register_vjp(log_p, holomorphic(lambda ct, out, a: (ct / a,)))
register_nvfuser(log_p, lambda fd, a: fd.ops.log(a), supports=floating)


@defop(torch=(torch.log, torch.Tensor.log))
def log(input: Tensor) -> Tensor:
    """Natural logarithm."""
    return log_p.bind(input)


# ---- log1p
log1p_p = elementwise_primitive("log1p", torch.log1p)
register_vjp(log1p_p, holomorphic(lambda ct, out, a: (ct / (a + 1),)))
register_nvfuser(log1p_p, lambda fd, a: fd.ops.log1p(a), supports=floating)


@defop(torch=(torch.log1p, torch.Tensor.log1p, torch.special.log1p))
def log1p(input: Tensor) -> Tensor:
    """``log(1 + input)``, accurate for small ``input``."""
    return log1p_p.bind(input)


# ---- log2
log2_p = elementwise_primitive("log2", torch.log2)
register_vjp(log2_p, holomorphic(lambda ct, out, a: (ct / (a * _LN2),)))
register_nvfuser(log2_p, lambda fd, a: fd.ops.log2(a), supports=floating)


@defop(torch=(torch.log2, torch.Tensor.log2))
def log2(input: Tensor) -> Tensor:
    """Base-2 logarithm."""
    return log2_p.bind(input)


# ---- sqrt
sqrt_p = elementwise_primitive("sqrt", torch.sqrt)
register_vjp(sqrt_p, holomorphic(lambda ct, out, a: (ct / (out * 2),)))
register_nvfuser(sqrt_p, lambda fd, a: fd.ops.sqrt(a), supports=floating)


@defop(torch=(torch.sqrt, torch.Tensor.sqrt))
def sqrt(input: Tensor) -> Tensor:
    """Square root."""
    return sqrt_p.bind(input)


# ---- rsqrt
rsqrt_p = elementwise_primitive("rsqrt", torch.rsqrt)
# torch's formula, in its order: -0.5 * grad * result.pow(3)
register_vjp(rsqrt_p, holomorphic(lambda ct, out, a: (ct * -0.5 * out**3,)))
register_nvfuser(rsqrt_p, lambda fd, a: fd.ops.rsqrt(a), supports=floating)


@defop(torch=(torch.rsqrt, torch.Tensor.rsqrt))
def rsqrt(input: Tensor) -> Tensor:
    """``1 / sqrt(input)``."""
    return rsqrt_p.bind(input)


# ---- reciprocal
reciprocal_p = elementwise_primitive("reciprocal", torch.reciprocal)
register_vjp(reciprocal_p, holomorphic(lambda ct, out, a: (-ct * (out * out),)))
register_nvfuser(reciprocal_p, lambda fd, a: fd.ops.reciprocal(a), supports=floating)


@defop(torch=(torch.reciprocal, torch.Tensor.reciprocal))
def reciprocal(input: Tensor) -> Tensor:
    """``1 / input`` (integer inputs give a floating result)."""
    return reciprocal_p.bind(input)


# ---- sin
sin_p = elementwise_primitive("sin", torch.sin)
register_vjp(sin_p, holomorphic(lambda ct, out, a: (ct * torch.cos(a),)))
register_nvfuser(sin_p, lambda fd, a: fd.ops.sin(a), supports=floating)


@defop(torch=(torch.sin, torch.Tensor.sin))
def sin(input: Tensor) -> Tensor:
    """Sine."""
    return sin_p.bind(input)


# ---- cos
cos_p = elementwise_primitive("cos", torch.cos)
register_vjp(cos_p, holomorphic(lambda ct, out, a: (ct * -torch.sin(a),)))
register_nvfuser(cos_p, lambda fd, a: fd.ops.cos(a), supports=floating)


@defop(torch=(torch.cos, torch.Tensor.cos))
def cos(input: Tensor) -> Tensor:
    """Cosine."""
    return cos_p.bind(input)


# ---- tan
tan_p = elementwise_primitive("tan", torch.tan)
register_vjp(tan_p, holomorphic(lambda ct, out, a: (ct * (out * out + 1),)))
register_nvfuser(tan_p, lambda fd, a: fd.ops.tan(a), supports=floating)


@defop(torch=(torch.tan, torch.Tensor.tan))
def tan(input: Tensor) -> Tensor:
    """Tangent."""
    return tan_p.bind(input)


# ---- tanh (torch.nn.functional.tanh calls Tensor.tanh)
# The backward is torch's kernel, tanh_backward(grad, out) (16-bit: in float32, rounded once;
# vectorized as eager's; complex: grad * conj(1 - out^2)).
tanh_p = elementwise_primitive("tanh", torch.tanh)
tanh_backward_p = elementwise_primitive("tanh_backward", torch.ops.aten.tanh_backward)
register_vjp(tanh_p, lambda ct, out, a: (tanh_backward_p.bind(ct, out),))
register_vjp(  # torch's double backward: tanh_backward(ct2, y), -2 * y * ct * ct2
    tanh_backward_p, lambda ct2, out, ct, y: (tanh_backward_p.bind(ct2, y), -2 * y * ct * ct2)
)
register_nvfuser(
    tanh_backward_p,
    lambda fd, ct, y: fd.ops.mul(upcast(fd, ct), fd.ops.sub(1.0, fd.ops.mul(upcast(fd, y), upcast(fd, y)))),
    supports=floating,
)
register_nvfuser(tanh_p, lambda fd, a: fd.ops.tanh(a), supports=floating)


@defop(torch=(torch.tanh, torch.Tensor.tanh))
def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return tanh_p.bind(input)


# ---- sigmoid (torch.nn.functional.sigmoid calls Tensor.sigmoid)
# The backward is torch's kernel, sigmoid_backward(grad, out): a 16-bit one computes
# grad * (1 - out) * out in float32 and rounds once (complex: grad * conj((1 - out) * out)).
sigmoid_p = elementwise_primitive("sigmoid", torch.sigmoid)
sigmoid_backward_p = elementwise_primitive("sigmoid_backward", torch.ops.aten.sigmoid_backward)
register_vjp(sigmoid_p, lambda ct, out, a: (sigmoid_backward_p.bind(ct, out),))
register_vjp(  # torch's double backward: sigmoid_backward(ct2, y), ct2 * ct * (1 - 2y)
    sigmoid_backward_p,
    lambda ct2, out, ct, y: (sigmoid_backward_p.bind(ct2, y), ct2 * ct * (1 - 2 * y)),
)
register_nvfuser(sigmoid_p, lambda fd, a: fd.ops.sigmoid(a), supports=floating)
register_nvfuser(
    sigmoid_backward_p,
    lambda fd, ct, y: fd.ops.mul(fd.ops.mul(upcast(fd, ct), fd.ops.sub(1.0, upcast(fd, y))), upcast(fd, y)),
    supports=floating,
)


@defop(torch=(torch.sigmoid, torch.Tensor.sigmoid, torch.special.expit))
def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return sigmoid_p.bind(input)


# ---- relu
relu_p = elementwise_primitive("relu", torch.relu)
# torch's threshold_backward: 0 where out <= 0, so 0 at 0 and the cotangent at NaN
register_vjp(relu_p, lambda ct, out, a: (torch.where(out <= 0, 0, ct),))
register_nvfuser(relu_p, lambda fd, a: fd.ops.relu(a))


@defop(torch=(torch.relu, torch.Tensor.relu))
def relu(input: Tensor) -> Tensor:
    """``max(input, 0)``; the gradient at 0 is 0, as in torch."""
    return relu_p.bind(input)


@implements(torch.nn.functional.relu)
def _torch_f_relu(input: Tensor, inplace: StaticBool = False) -> Tensor:
    return maybe_in_place("torch.nn.functional.relu(..., inplace=True)", input, inplace, relu)


# ---- silu
# The backward is torch's kernel, silu_backward(grad, a) (16-bit: in float32, rounded once),
# as eager's .backward() runs it; its own derivative is written out.
silu_p = elementwise_primitive("silu", torch.nn.functional.silu)
silu_backward_p = elementwise_primitive("silu_backward", torch.ops.aten.silu_backward)


def _silu_backward_vjp(ct2: Any, out: Any, ct: Any, a: Any) -> tuple[Any, Any]:
    s = torch.sigmoid(a)
    return silu_backward_p.bind(ct2, a), ct2 * ct * s * (1 - s) * (2 + a * (1 - 2 * s))


def _silu_backward_nvfuser(fd: Any, ct: Any, a: Any) -> Any:
    x, g = upcast(fd, a), upcast(fd, ct)
    s = fd.ops.sigmoid(x)
    return fd.ops.mul(g, fd.ops.mul(s, fd.ops.add(1.0, fd.ops.mul(x, fd.ops.sub(1.0, s)))))


register_vjp(silu_p, lambda ct, out, a: (silu_backward_p.bind(ct, a),))
register_vjp(silu_backward_p, _silu_backward_vjp)
register_nvfuser(silu_p, lambda fd, a: fd.ops.silu(a), supports=floating)
register_nvfuser(silu_backward_p, _silu_backward_nvfuser, supports=floating)


@defop
def silu(a: Tensor) -> Tensor:
    """``a * sigmoid(a)`` (swish)."""
    return silu_p.bind(a)


@implements(torch.nn.functional.silu)
def _torch_silu(input: Tensor, inplace: StaticBool = False) -> Tensor:
    return maybe_in_place("torch.nn.functional.silu(..., inplace=True)", input, inplace, silu)


# ---- hardsigmoid, hardswish, hardtanh (relu6), leaky_relu: the piecewise-linear activations
# of CNNs (MobileNet, YOLO, GANs). Forward and backward are torch's own kernels (bit-equal
# values and gradients, e.g. torch's float32 constant 1/6 in float64); each backward is a
# primitive whose vjp gives the double backward.
def _piecewise_activation(name: str, forward: Any, backward: Any, second: Any) -> tuple[Primitive, Primitive]:
    """The primitive of activation ``name`` and of its backward ``backward(ct, a, **params)``;
    ``second(ct2, ct, a, **params)`` is the derivative of the backward in ``a`` (None: zero)."""
    prim = elementwise_primitive(name, forward)
    backward_p = elementwise_primitive(f"{name}_backward", backward)
    register_vjp(prim, lambda ct, out, a, **params: (backward_p.bind(ct, a, **params),))
    register_vjp(
        backward_p, lambda ct2, out, ct, a, **params: (backward_p.bind(ct2, a, **params), second(ct2, ct, a, **params))
    )
    return prim, backward_p


def _inside(a: Any, lo: float, hi: float) -> Any:
    return torch.logical_and(a > lo, a < hi)


hardsigmoid_p, hardsigmoid_backward_p = _piecewise_activation(
    "hardsigmoid", F.hardsigmoid, torch.ops.aten.hardsigmoid_backward, lambda ct2, ct, a: None
)
hardswish_p, hardswish_backward_p = _piecewise_activation(
    "hardswish",
    F.hardswish,
    torch.ops.aten.hardswish_backward,
    # torch's double backward: ct2 * ct / 3 inside (-3, 3)
    lambda ct2, ct, a: torch.where(_inside(a, -3.0, 3.0), ct2 * ct / 3.0, 0),
)
hardtanh_p, hardtanh_backward_p = _piecewise_activation(
    "hardtanh",
    lambda a, *, min_val, max_val: F.hardtanh(a, min_val, max_val),
    lambda ct, a, *, min_val, max_val: torch.ops.aten.hardtanh_backward(ct, a, min_val, max_val),
    lambda ct2, ct, a, **params: None,
)
leaky_relu_p, leaky_relu_backward_p = _piecewise_activation(
    "leaky_relu",
    lambda a, *, negative_slope: F.leaky_relu(a, negative_slope),
    lambda ct, a, *, negative_slope: torch.ops.aten.leaky_relu_backward(ct, a, negative_slope, False),
    lambda ct2, ct, a, **params: None,
)


def _hardsigmoid_nvfuser(fd: Any, a: Any) -> Any:
    x = upcast(fd, a)  # in float32 for half precision, as torch's kernels compute
    return fd.ops.div(fd.ops.minimum(fd.ops.maximum(fd.ops.add(x, 3.0), 0.0), 6.0), 6.0)


def _hardsigmoid_backward_nvfuser(fd: Any, ct: Any, a: Any) -> Any:
    x, g = upcast(fd, a), upcast(fd, ct)
    return fd.ops.where(fd.ops.logical_and(fd.ops.gt(x, -3.0), fd.ops.lt(x, 3.0)), fd.ops.div(g, 6.0), 0.0)


def _hardswish_backward_nvfuser(fd: Any, ct: Any, a: Any) -> Any:
    x, g = upcast(fd, a), upcast(fd, ct)
    inner = fd.ops.mul(g, fd.ops.add(fd.ops.div(x, 3.0), 0.5))
    # torch's kernel: 0 up to -3 included, the slope strictly inside, the cotangent from 3 on
    return fd.ops.where(fd.ops.le(x, -3.0), 0.0, fd.ops.where(fd.ops.lt(x, 3.0), inner, g))


def _hardtanh_nvfuser(fd: Any, a: Any, *, min_val: float, max_val: float) -> Any:
    return fd.ops.minimum(fd.ops.maximum(upcast(fd, a), min_val), max_val)


def _hardtanh_backward_nvfuser(fd: Any, ct: Any, a: Any, *, min_val: float, max_val: float) -> Any:
    x, g = upcast(fd, a), upcast(fd, ct)
    return fd.ops.where(fd.ops.logical_and(fd.ops.gt(x, min_val), fd.ops.lt(x, max_val)), g, 0.0)


def _leaky_relu_nvfuser(fd: Any, a: Any, *, negative_slope: float) -> Any:
    x = upcast(fd, a)
    return fd.ops.where(fd.ops.gt(x, 0.0), x, fd.ops.mul(x, negative_slope))


def _leaky_relu_backward_nvfuser(fd: Any, ct: Any, a: Any, *, negative_slope: float) -> Any:
    x, g = upcast(fd, a), upcast(fd, ct)
    return fd.ops.where(fd.ops.gt(x, 0.0), g, fd.ops.mul(g, negative_slope))


register_nvfuser(hardsigmoid_p, _hardsigmoid_nvfuser, supports=floating)
register_nvfuser(hardsigmoid_backward_p, _hardsigmoid_backward_nvfuser, supports=floating)
register_nvfuser(hardswish_p, lambda fd, a: fd.ops.mul(upcast(fd, a), _hardsigmoid_nvfuser(fd, a)), supports=floating)
register_nvfuser(hardswish_backward_p, _hardswish_backward_nvfuser, supports=floating)
register_nvfuser(hardtanh_p, _hardtanh_nvfuser, supports=floating)
register_nvfuser(hardtanh_backward_p, _hardtanh_backward_nvfuser, supports=floating)
register_nvfuser(leaky_relu_p, _leaky_relu_nvfuser, supports=floating)
register_nvfuser(leaky_relu_backward_p, _leaky_relu_backward_nvfuser, supports=floating)


@defop
def hardsigmoid(input: Tensor) -> Tensor:
    """``relu6(input + 3) / 6``; gradient ``1/6`` strictly inside (-3, 3), as torch's."""
    return hardsigmoid_p.bind(input)


@defop
def hardswish(input: Tensor) -> Tensor:
    """``input * relu6(input + 3) / 6`` (MobileNetV3's swish)."""
    return hardswish_p.bind(input)


@defop
def hardtanh(input: Tensor, min_val: StaticFloat = -1.0, max_val: StaticFloat = 1.0) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (static); gradient strictly inside, as torch's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return hardtanh_p.bind(input, min_val=float(min_val), max_val=float(max_val))


@defop
def leaky_relu(input: Tensor, negative_slope: StaticFloat = 0.01) -> Tensor:
    """``input`` where positive, else ``negative_slope * input`` (static)."""
    return leaky_relu_p.bind(input, negative_slope=float(negative_slope))


@implements(F.hardsigmoid)
def _torch_hardsigmoid(input: Tensor, inplace: StaticBool = False) -> Tensor:
    return maybe_in_place("torch.nn.functional.hardsigmoid(..., inplace=True)", input, inplace, hardsigmoid)


@implements(F.hardswish)
def _torch_hardswish(input: Tensor, inplace: StaticBool = False) -> Tensor:
    return maybe_in_place("torch.nn.functional.hardswish(..., inplace=True)", input, inplace, hardswish)


@implements(F.hardtanh)
def _torch_hardtanh(
    input: Tensor, min_val: StaticFloat = -1.0, max_val: StaticFloat = 1.0, inplace: StaticBool = False
) -> Tensor:
    return maybe_in_place(
        "torch.nn.functional.hardtanh(..., inplace=True)", input, inplace, lambda x: hardtanh(x, min_val, max_val)
    )


@implements(F.relu6)
def _torch_relu6(input: Tensor, inplace: StaticBool = False) -> Tensor:
    return maybe_in_place(
        "torch.nn.functional.relu6(..., inplace=True)", input, inplace, lambda x: hardtanh(x, 0.0, 6.0)
    )


@implements(F.leaky_relu)
def _torch_leaky_relu(input: Tensor, negative_slope: StaticFloat = 0.01, inplace: StaticBool = False) -> Tensor:
    return maybe_in_place(
        "torch.nn.functional.leaky_relu(..., inplace=True)", input, inplace, lambda x: leaky_relu(x, negative_slope)
    )


# ---- gelu
gelu_p = elementwise_primitive("gelu", torch.nn.functional.gelu)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_KAPPA = 0.044715


# gelu's vjp is torch's fused gelu_backward kernel: registered below, with that primitive


def _gelu_nvfuser(fd: Any, a: Any, *, approximate: str = "none") -> Any:
    x = upcast(fd, a)
    if approximate == "tanh":
        inner = fd.ops.mul(fd.ops.add(x, fd.ops.mul(fd.ops.mul(fd.ops.mul(x, x), x), _GELU_KAPPA)), _SQRT_2_OVER_PI)
        return fd.ops.mul(fd.ops.mul(x, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))
    return fd.ops.mul(fd.ops.mul(x, 0.5), fd.ops.add(fd.ops.erf(fd.ops.mul(x, _INV_SQRT_2)), 1.0))


register_nvfuser(gelu_p, _gelu_nvfuser, supports=floating)


@defop(torch=(torch.nn.functional.gelu,))
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate`` (static) is ``'none'`` or ``'tanh'``."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    if approximate == "none":
        return gelu_p.bind(input)
    return gelu_p.bind(input, approximate=approximate)


# ---- gelu_backward: ``ct * gelu'(a)`` in torch's one fused kernel (gelu's vjp), instead of
# the erf, exp and seven multiplications of the derivative written out
def _gelu_backward_impl(ct: Any, a: Any, *, approximate: str = "none") -> Any:
    return torch.ops.aten.gelu_backward(ct, a, approximate=approximate)


gelu_backward_p = elementwise_primitive("gelu_backward", _gelu_backward_impl)


def _gelu_second_derivative(a: Any, approximate: str) -> Any:
    """gelu''(a): ``phi(a) (2 - a^2)``; for the tanh form, with ``t = tanh(u)``,
    ``u = k0 (a + k1 a^3)``: ``(1 - t^2) (u' + a (u'' - 2 t u'^2) / 2)``."""
    if approximate == "tanh":
        t = torch.tanh((a + a * a * a * _GELU_KAPPA) * _SQRT_2_OVER_PI)
        du = (a * a * (3 * _GELU_KAPPA) + 1) * _SQRT_2_OVER_PI
        ddu = a * (6 * _GELU_KAPPA * _SQRT_2_OVER_PI)
        return (1 - t * t) * (du + a * (ddu - 2 * t * du * du) * 0.5)
    return torch.exp(a * a * -0.5) * _INV_SQRT_2PI * (2 - a * a)


register_vjp(
    gelu_backward_p,
    lambda ct2, out, ct, a, **params: (
        gelu_backward_p.bind(ct2, a, **params),
        ct2 * ct * _gelu_second_derivative(a, params.get("approximate", "none")),
    ),
)


def _gelu_backward_nvfuser(fd: Any, ct: Any, a: Any, *, approximate: str = "none") -> Any:
    x, g = upcast(fd, a), upcast(fd, ct)
    if approximate == "tanh":
        x2 = fd.ops.mul(x, x)
        t = fd.ops.tanh(fd.ops.mul(fd.ops.add(x, fd.ops.mul(fd.ops.mul(x2, x), _GELU_KAPPA)), _SQRT_2_OVER_PI))
        du = fd.ops.mul(fd.ops.add(fd.ops.mul(x2, 3 * _GELU_KAPPA), 1.0), _SQRT_2_OVER_PI)
        left = fd.ops.mul(fd.ops.add(t, 1.0), 0.5)
        right = fd.ops.mul(fd.ops.mul(fd.ops.mul(x, 0.5), fd.ops.sub(1.0, fd.ops.mul(t, t))), du)
        return fd.ops.mul(g, fd.ops.add(left, right))
    cdf = fd.ops.mul(fd.ops.add(fd.ops.erf(fd.ops.mul(x, _INV_SQRT_2)), 1.0), 0.5)
    pdf = fd.ops.mul(fd.ops.exp(fd.ops.mul(fd.ops.mul(x, x), -0.5)), _INV_SQRT_2PI)
    return fd.ops.mul(g, fd.ops.add(cdf, fd.ops.mul(x, pdf)))


register_nvfuser(gelu_backward_p, _gelu_backward_nvfuser, supports=floating)
register_vjp(gelu_p, lambda ct, out, a, **params: (gelu_backward_p.bind(ct, a, **params),))


# ---- erf
erf_p = elementwise_primitive("erf", torch.erf)
# torch's formula, in its order: 2 / sqrt(pi) * exp(-(a.pow(2))) * grad
register_vjp(erf_p, lambda ct, out, a: (torch.exp(-(a**2)) * (2.0 / math.sqrt(math.pi)) * ct,))
register_nvfuser(erf_p, lambda fd, a: fd.ops.erf(a), supports=floating)


@defop(torch=(torch.erf, torch.Tensor.erf, torch.special.erf))
def erf(input: Tensor) -> Tensor:
    """The error function."""
    return erf_p.bind(input)


# ---- floor, ceil, round, sign: piecewise constant, zero gradient as in torch
floor_p = elementwise_primitive("floor", torch.floor)
register_vjp(floor_p, _zero_grad)
register_nvfuser(floor_p, lambda fd, a: fd.ops.floor(a), supports=floating)


@defop(torch=(torch.floor, torch.Tensor.floor))
def floor(input: Tensor) -> Tensor:
    """Round down to an integer value (same dtype); zero gradient."""
    return floor_p.bind(input)


ceil_p = elementwise_primitive("ceil", torch.ceil)
register_vjp(ceil_p, _zero_grad)
register_nvfuser(ceil_p, lambda fd, a: fd.ops.ceil(a), supports=floating)


@defop(torch=(torch.ceil, torch.Tensor.ceil))
def ceil(input: Tensor) -> Tensor:
    """Round up to an integer value (same dtype); zero gradient."""
    return ceil_p.bind(input)


round_p = elementwise_primitive("round", torch.round)
register_vjp(round_p, _zero_grad)
# half to even, like torch; decimals != 0 (torch scales by 10**decimals in its own way) and
# integer inputs run in torch
register_nvfuser(
    round_p,
    lambda fd, a: fd.ops.round(a),
    supports=lambda a, *, decimals=0: decimals == 0 and floating(a),
)


@defop(torch=(torch.round, torch.Tensor.round))
def round(input: Tensor, *, decimals: StaticInt = 0) -> Tensor:  # noqa: A001 - torch's name
    """Round half to even, to ``decimals`` (static) decimal places; zero gradient."""
    if decimals == 0:
        return round_p.bind(input)
    return round_p.bind(input, decimals=decimals)


@implements(torch.special.round)
def _torch_special_round(input: Tensor, *, decimals: StaticInt = 0) -> Tensor:
    if not input.dtype.is_floating_point:  # unlike torch.round, as in torch
        raise NotImplementedError(f"torch.special.round is not implemented for {input.dtype} in torch")
    return round(input, decimals=decimals)


sign_p = elementwise_primitive("sign", torch.sign)
register_vjp(sign_p, _zero_grad)
register_nvfuser(sign_p, lambda fd, a: fd.ops.sign(a), supports=lambda a: a.dtype != torch.bool)


@defop(torch=(torch.sign, torch.Tensor.sign))
def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of ``input``; zero gradient."""
    return sign_p.bind(input)


# ---- isnan, isfinite, logical_not: boolean results, not differentiable
isnan_p = elementwise_primitive("isnan", torch.isnan)
register_nvfuser(isnan_p, lambda fd, a: fd.ops.isnan(a), supports=floating)


@defop(torch=(torch.isnan, torch.Tensor.isnan))
def isnan(input: Tensor) -> Tensor:
    """Where ``input`` is NaN (a bool tensor)."""
    return isnan_p.bind(input)


isfinite_p = elementwise_primitive("isfinite", torch.isfinite)
register_nvfuser(isfinite_p, lambda fd, a: fd.ops.isfinite(a), supports=floating)


@defop(torch=(torch.isfinite, torch.Tensor.isfinite))
def isfinite(input: Tensor) -> Tensor:
    """Where ``input`` is neither infinite nor NaN (a bool tensor)."""
    return isfinite_p.bind(input)


logical_not_p = elementwise_primitive("logical_not", torch.logical_not)
register_nvfuser(logical_not_p, lambda fd, a: fd.ops.logical_not(a))  # nvFuser casts to bool first


@defop(torch=(torch.logical_not, torch.Tensor.logical_not))
def logical_not(input: Tensor) -> Tensor:
    """Elementwise ``not`` (a bool tensor; nonzero counts as true)."""
    return logical_not_p.bind(input)


# ================================================================ binary ops


@defop
def true_divide(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a / b``: the same op as ``div``."""
    return div(a, b)


@implements(torch.true_divide, torch.Tensor.true_divide)
def _torch_true_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    return div(input, other)


@defop(torch=(torch.floor_divide, torch.Tensor.floor_divide, torch.Tensor.__floordiv__))
def floor_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """``input // other``: ``div(input, other, rounding_mode='floor')`` (as torch.floor_divide is)."""
    return div(input, other, rounding_mode="floor")


@implements(torch.Tensor.__rfloordiv__)
def _torch_rfloordiv(input: Tensor, other: NumberLike) -> Tensor:
    return floor_divide(other, input)


# ---- remainder (Python's %: the sign of the divisor)
remainder_p = elementwise_primitive("remainder", torch.remainder)
register_vjp(
    remainder_p,
    lambda ct, out, a, b: (
        grad_for(ct, a),
        grad_for(-ct * torch.div(a, b, rounding_mode="floor"), b),
    ),
)
# The result has the sign of b, as torch's. Integer remainder by zero raises in torch;
# nvFuser would not: integer inputs run in torch.
register_nvfuser(remainder_p, lambda fd, a, b: fd.ops.remainder(a, b), supports=floating)


@defop(torch=(torch.remainder, torch.Tensor.remainder, torch.Tensor.__mod__))
def remainder(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """``input - floor(input / other) * other`` (the result has the sign of ``other``, like Python's ``%``)."""
    return remainder_p.bind(input, other)


@implements(torch.Tensor.__rmod__)
def _torch_rmod(input: Tensor, other: NumberLike) -> Tensor:
    return remainder(other, input)


# ---- pow
pow_p = elementwise_primitive("pow", torch.pow)


def _pow_vjp(ct: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    # torch's pow_backward_self / pow_backward_exponent, including their special cases:
    # d/da is 0 where b == 0, d/db is 0 where a == 0 and b >= 0. A static number is tested
    # here; a dynamic one in the program, as a 0-d tensor.
    grad_a = grad_b = None
    if _is_tensor(a):
        if isinstance(b, (int, float)):
            # torch's order, grad * (exp * self.pow(exp - 1)), the exponent a double
            grad_a = None if b == 0 else grad_for(ct * (float(b) * a ** (float(b) - 1)), a)
        else:
            b_is_zero = b == 0 if _is_tensor(b) else full((), b, dtype=ct.dtype, device=ct.device) == 0
            grad_a = grad_for(torch.where(b_is_zero, 0, ct * (b * a ** (b - 1))), a)
    if _is_tensor(b):
        if _is_tensor(a):
            zero_case = torch.logical_and(a == 0, b >= 0)
            grad_b = grad_for(ct * torch.where(zero_case, 0, out * torch.log(a)), b)
        elif isinstance(a, (int, float)):  # torch: the log of a number base in double
            log_a = math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)
            grad_b = grad_for(ct * (torch.where(b >= 0, 0, out * log_a) if a == 0 else out * log_a), b)
        else:
            base = full((), a, dtype=out.dtype, device=out.device)
            zero_case = torch.logical_and(base == 0, b >= 0)
            grad_b = grad_for(ct * torch.where(zero_case, 0, out * torch.log(base)), b)
    return grad_a, grad_b


register_vjp(pow_p, holomorphic(_pow_vjp))
# Integer powers (negative exponents raise in torch) run in torch.
register_nvfuser(pow_p, lambda fd, a, b: fd.ops.pow(a, b), supports=floating)


@defop(torch=(torch.pow, torch.Tensor.pow, torch.Tensor.__pow__))
def pow(input: TensorOrNumber, exponent: TensorOrNumber) -> Tensor:  # noqa: A001 - torch's name
    """``input ** exponent``; either operand may be a (dynamic) number."""
    return pow_p.bind(input, exponent)


@implements(torch.Tensor.__rpow__)
def _torch_rpow(input: Tensor, other: NumberLike) -> Tensor:
    return pow(other, input)


# ---- maximum, minimum (tensors only, as in torch): ties split the gradient in half
maximum_p = elementwise_primitive("maximum", torch.maximum)
minimum_p = elementwise_primitive("minimum", torch.minimum)


def _select_vjp(ct: Any, a: Any, b: Any, a_loses: Any, b_loses: Any) -> tuple[Any, Any]:
    # torch: where(a == b, ct / 2, ct), masked to 0 where the operand lost (so with a NaN,
    # where neither comparison holds, both operands get the full gradient).
    shared = torch.where(a == b, ct / 2, ct)
    return grad_for(torch.where(a_loses, 0, shared), a), grad_for(torch.where(b_loses, 0, shared), b)


register_vjp(maximum_p, lambda ct, out, a, b: _select_vjp(ct, a, b, a < b, a > b))
register_vjp(minimum_p, lambda ct, out, a, b: _select_vjp(ct, a, b, a > b, a < b))
register_nvfuser(maximum_p, lambda fd, a, b: fd.ops.maximum(a, b))  # NaN propagates, as torch
register_nvfuser(minimum_p, lambda fd, a, b: fd.ops.minimum(a, b))


@defop(torch=(torch.maximum, torch.Tensor.maximum))
def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum (NaN propagates); at ties each operand gets half the gradient."""
    return maximum_p.bind(input, other)


@defop(torch=(torch.minimum, torch.Tensor.minimum))
def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum (NaN propagates); at ties each operand gets half the gradient."""
    return minimum_p.bind(input, other)


# ---- atan2 (tensors only, as in torch)
atan2_p = elementwise_primitive("atan2", torch.atan2)


def _atan2_vjp(ct: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    # as torch's atan2_backward: an infinite 1 / (a^2 + b^2) (at the origin) counts as 0
    recip = torch.reciprocal(a * a + b * b)
    recip = torch.where(recip == math.inf, 0, recip)
    return grad_for(ct * b * recip, a), grad_for(ct * -a * recip, b)


register_vjp(atan2_p, _atan2_vjp)
register_nvfuser(atan2_p, lambda fd, a, b: fd.ops.atan2(a, b), supports=floating)


@defop(torch=(torch.atan2, torch.arctan2, torch.Tensor.atan2, torch.Tensor.arctan2))
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point ``(other, input)``, in ``[-pi, pi]``."""
    return atan2_p.bind(input, other)


# ---- comparisons: bool results, not differentiable. Python swaps them for a number on the
# left (``2 < x`` is ``x > 2``), so the torch spellings take a tensor first.
eq_p = elementwise_primitive("eq", torch.eq)
ne_p = elementwise_primitive("ne", torch.ne)
lt_p = elementwise_primitive("lt", torch.lt)
le_p = elementwise_primitive("le", torch.le)
gt_p = elementwise_primitive("gt", torch.gt)
ge_p = elementwise_primitive("ge", torch.ge)
register_nvfuser(eq_p, lambda fd, a, b: fd.ops.eq(a, b))
register_nvfuser(ne_p, lambda fd, a, b: fd.ops.ne(a, b))
register_nvfuser(lt_p, lambda fd, a, b: fd.ops.lt(a, b))
register_nvfuser(le_p, lambda fd, a, b: fd.ops.le(a, b))
register_nvfuser(gt_p, lambda fd, a, b: fd.ops.gt(a, b))
register_nvfuser(ge_p, lambda fd, a, b: fd.ops.ge(a, b))


@defop(torch=(torch.eq, torch.Tensor.eq, torch.Tensor.__eq__))
def eq(input: Tensor, other: TensorOrNumber) -> Tensor:
    """``input == other`` (a bool tensor)."""
    return eq_p.bind(input, other)


@defop(torch=(torch.ne, torch.not_equal, torch.Tensor.ne, torch.Tensor.not_equal, torch.Tensor.__ne__))
def ne(input: Tensor, other: TensorOrNumber) -> Tensor:
    """``input != other`` (a bool tensor)."""
    return ne_p.bind(input, other)


@defop(torch=(torch.lt, torch.less, torch.Tensor.lt, torch.Tensor.less, torch.Tensor.__lt__))
def lt(input: Tensor, other: TensorOrNumber) -> Tensor:
    """``input < other`` (a bool tensor)."""
    return lt_p.bind(input, other)


@defop(torch=(torch.le, torch.less_equal, torch.Tensor.le, torch.Tensor.less_equal, torch.Tensor.__le__))
def le(input: Tensor, other: TensorOrNumber) -> Tensor:
    """``input <= other`` (a bool tensor)."""
    return le_p.bind(input, other)


@defop(torch=(torch.gt, torch.greater, torch.Tensor.gt, torch.Tensor.greater, torch.Tensor.__gt__))
def gt(input: Tensor, other: TensorOrNumber) -> Tensor:
    """``input > other`` (a bool tensor)."""
    return gt_p.bind(input, other)


@defop(torch=(torch.ge, torch.greater_equal, torch.Tensor.ge, torch.Tensor.greater_equal, torch.Tensor.__ge__))
def ge(input: Tensor, other: TensorOrNumber) -> Tensor:
    """``input >= other`` (a bool tensor)."""
    return ge_p.bind(input, other)


# ---- logical_and, logical_or (tensors only, as in torch; nonzero counts as true)
logical_and_p = elementwise_primitive("logical_and", torch.logical_and)
logical_or_p = elementwise_primitive("logical_or", torch.logical_or)
register_nvfuser(logical_and_p, lambda fd, a, b: fd.ops.logical_and(a, b))  # nvFuser casts to bool first
register_nvfuser(logical_or_p, lambda fd, a, b: fd.ops.logical_or(a, b))


@defop(torch=(torch.logical_and, torch.Tensor.logical_and))
def logical_and(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise ``input and other`` (a bool tensor)."""
    return logical_and_p.bind(input, other)


@defop(torch=(torch.logical_or, torch.Tensor.logical_or))
def logical_or(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise ``input or other`` (a bool tensor)."""
    return logical_or_p.bind(input, other)


# ================================================================ ternary ops

# ---- where
where_p = elementwise_primitive("where", torch.where)
register_vjp(
    where_p,
    lambda ct, out, cond, a, b: (
        None,
        grad_for(torch.where(cond, ct, 0), a),
        grad_for(torch.where(cond, 0, ct), b),
    ),
)
register_nvfuser(where_p, lambda fd, cond, a, b: fd.ops.where(cond, a, b))


@defop
def where(condition: Tensor, input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """``input`` where ``condition`` holds, else ``other``; ``input``/``other`` may be (dynamic) numbers."""
    return where_p.bind(condition, input, other)


@implements(torch.where)
def _torch_where(condition: Tensor, input: TensorOrNumber | None = None, other: TensorOrNumber | None = None) -> Tensor:
    if input is None or other is None:  # torch.where(condition) is nonzero(condition, as_tuple=True)
        raise data_dependent_shape_error("torch.where(condition) (one argument)", "how many elements are True")
    return where(condition, input, other)


@implements(torch.Tensor.where)
def _tensor_where(input: Tensor, condition: Tensor, other: TensorOrNumber) -> Tensor:
    return where(condition, input, other)


# ---- clamp: bounds are tensors, (dynamic) numbers or None
clamp_p = elementwise_primitive("clamp", torch.clamp)


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


register_vjp(clamp_p, _clamp_vjp)


def _clamp_nvfuser(fd: Any, x: Any, lo: Any, hi: Any) -> Any:
    # max then min, as torch: where lo > hi the result is hi; NaN in x or a bound propagates.
    if lo is not None:
        x = fd.ops.maximum(x, lo)
    if hi is not None:
        x = fd.ops.minimum(x, hi)
    return x


register_nvfuser(clamp_p, _clamp_nvfuser)


@defop(torch=(torch.clamp, torch.clip, torch.Tensor.clamp, torch.Tensor.clip))
def clamp(input: Tensor, min: TensorOrNumber | None = None, max: TensorOrNumber | None = None) -> Tensor:
    """``input`` limited to ``[min, max]``; either bound may be a tensor, a (dynamic) number or
    None (not both). Where ``min > max`` the result is ``max``, as in torch."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    return clamp_p.bind(input, min, max)


@defop
def clamp_min(x: Tensor, min: TensorOrNumber) -> Tensor:
    """``clamp(x, min, None)``."""
    return clamp(x, min, None)


@implements(torch.clamp_min, torch.Tensor.clamp_min)
def _torch_clamp_min(input: Tensor, min: TensorOrNumber) -> Tensor:
    return clamp(input, min, None)


@defop
def clamp_max(x: Tensor, max: TensorOrNumber) -> Tensor:
    """``clamp(x, None, max)``."""
    return clamp(x, None, max)


@implements(torch.clamp_max, torch.Tensor.clamp_max)
def _torch_clamp_max(input: Tensor, max: TensorOrNumber) -> Tensor:
    return clamp(input, None, max)


# ---- lerp
lerp_p = elementwise_primitive("lerp", torch.lerp)
register_vjp(
    lerp_p,
    lambda ct, out, a, b, w: (
        grad_for(ct * (1 - w), a),
        grad_for(ct * w, b),
        grad_for(ct * (b - a), w),
    ),
)
register_nvfuser(lerp_p, lambda fd, a, b, w: fd.ops.lerp(a, b, w), supports=floating)


@defop(torch=(torch.lerp, torch.Tensor.lerp))
def lerp(input: Tensor, end: Tensor, weight: TensorOrNumber) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` may be a tensor or a (dynamic) number."""
    return lerp_p.bind(input, end, weight)


# ---- addcmul
def _addcmul_impl(x: Any, t1: Any, t2: Any, value: Any) -> Any:
    return torch.addcmul(x, t1, t2, value=value)


addcmul_p = elementwise_primitive("addcmul", _addcmul_impl)
register_vjp(
    addcmul_p,
    lambda ct, out, x, t1, t2, value: (
        grad_for(ct, x),
        grad_for(ct * (t2 * value), t1),
        grad_for(ct * (t1 * value), t2),
        None,
    ),
)
register_nvfuser(addcmul_p, lambda fd, x, t1, t2, value: fd.ops.add(x, fd.ops.mul(fd.ops.mul(value, t1), t2)))


@defop(torch=(torch.addcmul, torch.Tensor.addcmul))
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: NumberLike = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``; ``value`` may be dynamic."""
    return addcmul_p.bind(input, tensor1, tensor2, value)


# ---- &, |, ^, ~: on bool tensors torch's bitwise ops are the logical ones (transformers
# combines attention masks with `&`), fused; on integers (or with a number operand) they are
# bitwise, run by torch itself as an opaque call (ops/opaque.py).
def _masks(*operands: Any) -> bool:
    return all(_is_tensor(v) and v.dtype == torch.bool for v in operands)


@implements(torch.bitwise_and, torch.Tensor.bitwise_and, torch.Tensor.__and__, torch.Tensor.__rand__)
def _torch_bitwise_and(input: Tensor, other: Tensor) -> Tensor:
    if not _masks(input, other):
        return opaque_handler(torch.bitwise_and, (input, other), {})  # type: ignore[no-any-return]
    return logical_and(input, other)


@implements(torch.bitwise_or, torch.Tensor.bitwise_or, torch.Tensor.__or__, torch.Tensor.__ror__)
def _torch_bitwise_or(input: Tensor, other: Tensor) -> Tensor:
    if not _masks(input, other):
        return opaque_handler(torch.bitwise_or, (input, other), {})  # type: ignore[no-any-return]
    return logical_or(input, other)


@implements(torch.bitwise_xor, torch.Tensor.bitwise_xor, torch.Tensor.__xor__, torch.Tensor.__rxor__)
def _torch_bitwise_xor(input: Tensor, other: Tensor) -> Tensor:
    if not _masks(input, other):
        return opaque_handler(torch.bitwise_xor, (input, other), {})  # type: ignore[no-any-return]
    return ne(input, other)


@implements(torch.bitwise_not, torch.Tensor.bitwise_not, torch.Tensor.__invert__)
def _torch_bitwise_not(input: Tensor) -> Tensor:
    if not _masks(input):
        return opaque_handler(torch.bitwise_not, (input,), {})  # type: ignore[no-any-return]
    return logical_not(input)
