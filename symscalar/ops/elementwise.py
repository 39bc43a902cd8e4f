"""Elementwise ops. Scalar operands may be dynamic: they are runtime inputs of the program.

Each op is defined once: its primitive (torch lowering + meta), its user-facing function in
``symscalar.ops`` and the torch spellings it implements.
"""

from __future__ import annotations

import torch

from symscalar.ops.common import Tensor, grad_for, torch_meta
from symscalar.trace import Primitive
from symscalar.tracing import defop, implements
from symscalar.types import NumberLike

__all__ = ["add", "sub", "mul", "div", "neg", "exp"]

TensorOrNumber = Tensor | NumberLike


def _elementwise(name: str, impl: object) -> Primitive:
    return Primitive(name, impl, torch_meta(impl))  # type: ignore[arg-type]


# ---- add
add_p = _elementwise("add", torch.add)
add_p.vjp = lambda ct, out, a, b: (grad_for(ct, a), grad_for(ct, b))
add_p.nvfuser = lambda fd, a, b: fd.ops.add(a, b)


@defop
def add(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a + b`` with torch's broadcasting and type promotion."""
    return add_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.add, torch.Tensor.add, torch.Tensor.__add__)
def _torch_add(input: TensorOrNumber, other: TensorOrNumber, *, alpha: NumberLike = 1) -> Tensor:
    if not (isinstance(alpha, int) and alpha == 1):
        other = mul(other, alpha)
    return add(input, other)


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
    if not (isinstance(alpha, int) and alpha == 1):
        other = mul(other, alpha)
    return sub(input, other)


@implements(torch.Tensor.__rsub__)
def _torch_rsub(input: Tensor, other: NumberLike) -> Tensor:
    return sub(other, input)


# ---- mul
mul_p = _elementwise("mul", torch.mul)
mul_p.vjp = lambda ct, out, a, b: (grad_for(ct * b, a), grad_for(ct * a, b))
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


# ---- div (true division)
div_p = _elementwise("div", torch.div)
div_p.vjp = lambda ct, out, a, b: (grad_for(ct / b, a), grad_for(-ct * out / b, b))
div_p.nvfuser = lambda fd, a, b: fd.ops.truediv(a, b)


@defop
def div(a: TensorOrNumber, b: TensorOrNumber) -> Tensor:
    """``a / b`` (true division: integer inputs give a floating result)."""
    return div_p.bind(a, b)  # type: ignore[no-any-return]


@implements(torch.div, torch.Tensor.div, torch.Tensor.__truediv__)
def _torch_div(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    return div(input, other)


@implements(torch.Tensor.__rtruediv__)
def _torch_rdiv(input: Tensor, other: NumberLike) -> Tensor:
    return div(other, input)


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


# ---- exp
exp_p = _elementwise("exp", torch.exp)
exp_p.vjp = lambda ct, out, a: (ct * out,)
exp_p.nvfuser = lambda fd, a: fd.ops.exp(a)


@defop
def exp(a: Tensor) -> Tensor:
    """``e ** a``."""
    return exp_p.bind(a)  # type: ignore[no-any-return]


@implements(torch.exp, torch.Tensor.exp)
def _torch_exp(input: Tensor) -> Tensor:
    return exp(input)
