# executable
"""Dynamic values in the static parameters of symscalar.ops (the op spelling)."""

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, StaticInt, ops


@symscalar.jit
def sum_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.sum(x, n)  # E: symscalar.ops.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required] # plain-E: Argument 2 to "sum" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def sum_dims_tuple(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.sum(x, (0, n))  # E: symscalar.ops.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "sum" has incompatible type "tuple[int, DynamicInt]"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def sum_dims_keyword(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.sum(x, dim=n)  # E: symscalar.ops.sum: parameter "dim" must be static...  [symscalar-static-required]  # plain-E: Argument "dim" to "sum" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def sum_keepdim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.sum(x, 0, n > 0)  # E: symscalar.ops.sum: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "n > 0" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "sum" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def sum_keepdim_keyword(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return ops.sum(x, 1, keepdim=b)  # E: symscalar.ops.sum: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "keepdim" to "sum" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def reshape_shape(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.reshape(x, (n, 2))  # E: symscalar.ops.reshape: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "reshape" has incompatible type "tuple[DynamicInt, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def reshape_shape_list(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.reshape(x, [3, n])  # E: symscalar.ops.reshape: parameter "shape" must be static...  [symscalar-static-required]  # plain-E: List item 1 has incompatible type "DynamicInt"; expected "int"  [list-item]  # pyright-E: reportArgumentType


@symscalar.jit
def expand_shape(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.expand(x, (n, 2, 3))  # E: symscalar.ops.expand: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "expand" has incompatible type "tuple[DynamicInt, int, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def full_shape(x: torch.Tensor, n: DynamicInt, s: DynamicFloat) -> torch.Tensor:
    return x + ops.full((n,), s)  # E: symscalar.ops.full: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "full" has incompatible type "tuple[DynamicInt]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def shape_from_generic_call(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.reshape(x, tuple([n, 2]))  # E: symscalar.ops.reshape: parameter "shape" must be static (a compile-time constant) but got dynamic value "tuple(...)"...  [symscalar-static-required]  # plain-E: List item 0 has incompatible type "DynamicInt"; expected "int"  [list-item]  # pyright-E: reportArgumentType


@symscalar.jit
def computed_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    k = n - 1
    return ops.sum(x, k)  # E: symscalar.ops.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "k" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "sum" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def static_dims_pass(x: torch.Tensor, d: StaticInt, n: DynamicInt) -> torch.Tensor:
    y = ops.reshape(ops.sum(x * n, d, keepdim=True), (-1,))
    return ops.expand(ops.full((1,), 2.0) + ops.sum(y), (2, 3))


@symscalar.jit
def specialized_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return ops.sum(x, symscalar.specialize(n))


X = torch.ones(2, 3)
CALLS = [
    (sum_dim, (X, 1)),
    (sum_dims_tuple, (X, 1)),
    (sum_dims_keyword, (X, 1)),
    (sum_keepdim, (X, 1)),
    (sum_keepdim_keyword, (X, True)),
    (reshape_shape, (X, 3)),
    (reshape_shape_list, (X, 2)),
    (expand_shape, (torch.ones(1, 3), 2)),
    (full_shape, (X, 3, 0.5)),
    (shape_from_generic_call, (X, 3)),
    (computed_dim, (X, 2)),
    (static_dims_pass, (X, 1, 2)),
    (specialized_dim, (X, 1)),
]
