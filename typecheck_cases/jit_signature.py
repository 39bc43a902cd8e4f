# executable
"""A jitted function's DynamicInt/DynamicFloat/DynamicBool parameters take Python numbers
from callers (inside, the value is dynamic); static and tensor parameters are unchanged."""

from typing import reveal_type

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, FloatLike, IntLike, StaticInt


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


@symscalar.jit
def scaled_like(x: torch.Tensor, scale: FloatLike, k: IntLike) -> torch.Tensor:
    """``FloatLike``/``IntLike``: dynamic to the jit, and a Python number is an argument every
    checker accepts; inside, a use that needs a static value is still an error (each member of
    the union must be valid)."""
    return x * scale + k


@symscalar.jit
def reduced_like(x: torch.Tensor, k: IntLike) -> torch.Tensor:
    return x.sum(k)  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "k" (int | DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "sum" of "TensorBase" has incompatible type "int | DynamicInt"; expected "int | Size | list[int] | tuple[int, ...] | None"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def unannotated_first(x, scale: DynamicFloat):  # noqa: ANN001, ANN201 - left unannotated on purpose
    return x * scale


class Gate(torch.nn.Module):
    """``@jit(...)`` on ``Module.forward`` is a method to both checkers: no override error, and
    ``m.forward`` binds ``self``."""

    @symscalar.jit(backend="torch")
    def forward(self, x: torch.Tensor, scale: FloatLike) -> torch.Tensor:
        return x * scale


def like_callers() -> None:
    """FloatLike/IntLike parameters take Python numbers in every checker; type-checked, never run."""
    scaled_like(X, 0.5, 2)
    scaled_like(X, "0.5", 2)  # E: Argument 2 to "__call__" of "JitFunction" has incompatible type "str"; expected "float | int | DynamicFloat | DynamicInt"  [arg-type]  # pyright-E: reportArgumentType
    Gate().forward(X, 0.5)
    reveal_type(Gate().forward)  # N: Revealed type is "def (x: torch._tensor.Tensor, scale: float | int | symscalar.types.DynamicFloat | symscalar.types.DynamicInt) -> torch._tensor.Tensor"  # pyright-N: (x: Tensor, scale: float | int | DynamicFloat | DynamicInt) -> Tensor
    unannotated_first.cache_info()  # pyright-E: reportFunctionMemberAccess


CALLS = [
    (scaled_sum, (X, 0.5, 1)),
    (shifted, (X, 3, True)),
    (scaled_with_options, (X, 0.5)),
    (scaled_like, (X, 0.5, 2)),
    (reduced_like, (X, 1)),
    (unannotated_first, (X, 0.5)),
]
