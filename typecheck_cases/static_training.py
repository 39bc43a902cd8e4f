"""Dynamic values in the static parameters of the training ops: `ctc_loss`'s `blank` and
`zero_infinity` (symscalar.ops and torch.nn.functional spellings) and `requires_grad_`'s flag.

Each function passes a dynamic value to exactly one static parameter: mypy (with the plugin)
flags that line."""

from typing import Any

import torch
import torch.nn.functional as F

from symscalar import DynamicBool, DynamicInt, ops


def F_ctc_loss_blank(x: torch.Tensor, t: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return F.ctc_loss(x, t, t, t, blank=n)  # E: torch.nn.functional.ctc_loss: parameter "blank" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "blank" to "ctc_loss" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


def F_ctc_loss_zero_infinity(x: torch.Tensor, t: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return F.ctc_loss(x, t, t, t, zero_infinity=b)  # E: torch.nn.functional.ctc_loss: parameter "zero_infinity" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "zero_infinity" to "ctc_loss" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


def ops_ctc_loss_blank(x: torch.Tensor, t: torch.Tensor, n: DynamicInt) -> Any:
    return ops.ctc_loss(x, t, t, t, blank=n)  # E: symscalar.ops.ctc_loss: parameter "blank" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "blank" to "ctc_loss" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


def ops_ctc_loss_zero_infinity(x: torch.Tensor, t: torch.Tensor, b: DynamicBool) -> Any:
    return ops.ctc_loss(x, t, t, t, zero_infinity=b)  # E: symscalar.ops.ctc_loss: parameter "zero_infinity" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "zero_infinity" to "ctc_loss" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


def method_requires_grad_(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return (x * 2).requires_grad_(b)  # E: torch.Tensor.requires_grad_: parameter "requires_grad" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 1 to "requires_grad_" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType
