# executable
"""A jitted function's DynamicInt/DynamicFloat/DynamicBool parameters take Python numbers
from callers (inside, the value is dynamic); static and tensor parameters are unchanged."""

from typing import reveal_type

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, StaticInt


@symscalar.jit
def scaled_sum(x: torch.Tensor, scale: DynamicFloat, dim: StaticInt) -> torch.Tensor:
    reveal_type(scale)  # N: Revealed type is "symscalar.types.DynamicFloat"
    return torch.sum(x * scale, dim)


@symscalar.jit
def shifted(x: torch.Tensor, n: DynamicInt, flag: DynamicBool) -> torch.Tensor:
    return (x + n) * flag


@symscalar.jit(backend="torch")
def scaled_with_options(x: torch.Tensor, scale: DynamicFloat) -> torch.Tensor:
    return x * scale


X = torch.ones(2, 3)
reveal_type(scaled_sum)  # plugin-N: Revealed type is "symscalar.jit.JitFunction[[x: torch._tensor.Tensor, scale: float | symscalar.types.DynamicFloat, dim: int], torch._tensor.Tensor]"  # plain-N: Revealed type is "symscalar.jit.JitFunction[[x: torch._tensor.Tensor, scale: symscalar.types.DynamicFloat, dim: int], torch._tensor.Tensor]"  # pyright-N: JitFunction[(x: Tensor, scale: DynamicFloat, dim: int), Tensor]

def callers() -> None:
    """Callers pass Python numbers; type-checked, never run."""
    reveal_type(scaled_sum(X, 0.5, 1))  # N: Revealed type is "torch._tensor.Tensor"  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "float"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType
    scaled_with_options(X, 0.5)  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "float"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType
    scaled_with_options(X, "0.5")  # plugin-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "str"; expected "float | DynamicFloat"  [arg-type]  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "str"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType
    scaled_sum(X, 2, 0)  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "int"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType
    shifted(X, 3, True)  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "int"; expected "DynamicInt"  [arg-type]  # plain-E: Argument 3 to "__call__" of "JitFunction" has incompatible type "bool"; expected "DynamicBool"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType
    scaled_sum(X, "0.5", 1)  # plugin-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "str"; expected "float | DynamicFloat"  [arg-type]  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "str"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType
    shifted(X, 1.5, True)  # plugin-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "float"; expected "int | DynamicInt"  [arg-type]  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "float"; expected "DynamicInt"  [arg-type]  # plain-E: Argument 3 to "__call__" of "JitFunction" has incompatible type "bool"; expected "DynamicBool"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType
    scaled_sum(X, 0.5, 1.0)  # E: Argument 3 to "__call__" of "JitFunction" has incompatible type "float"; expected "int"  [arg-type]  # plain-E: Argument 2 to "__call__" of "JitFunction" has incompatible type "float"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType

CALLS = [
    (scaled_sum, (X, 0.5, 1)),
    (shifted, (X, 3, True)),
    (scaled_with_options, (X, 0.5)),
]
