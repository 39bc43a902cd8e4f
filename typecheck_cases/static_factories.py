# executable
"""Dynamic values in the static parameters of factories (sizes, `arange` bounds), in the
symscalar.ops, torch and Tensor-method spellings.

Each function passes a dynamic value to exactly one static parameter: mypy (with the plugin)
flags that line, and under symscalar.jit the call raises StaticValueRequiredError."""

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, ops



@symscalar.jit
def ops_arange_start(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.arange(n, 4)  # E: symscalar.ops.arange: parameter "start" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "arange" has incompatible type "DynamicInt"; expected "int | float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_arange_end(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.arange(0, n)  # E: symscalar.ops.arange: parameter "end" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "arange" has incompatible type "DynamicInt"; expected "int | float | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_arange_step(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.arange(0, 4, n)  # E: symscalar.ops.arange: parameter "step" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "arange" has incompatible type "DynamicInt"; expected "int | float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_ones_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.ones(2, n)  # E: symscalar.ops.ones: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "ones" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_zeros_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.zeros((n, 2))  # E: symscalar.ops.zeros: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "zeros" has incompatible type "tuple[DynamicInt, int]"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_arange_start(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.arange(n, 4)  # E: torch.arange: parameter "start" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "arange" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_arange_end(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.arange(0, n)  # E: torch.arange: parameter "end" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "arange" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_arange_step(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.arange(0, 4, n)  # E: torch.arange: parameter "step" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "arange" matches argument types "int", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


# Not torch.ones(n, 2): torch's argument parser rejects a varargs size whose first item
# is not an int with a TypeError before __torch_function__ can see it (mypy flags it).
@symscalar.jit
def torch_ones_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.ones(2, n)  # E: torch.ones: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "ones" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_zeros_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.zeros((n, 2))  # E: torch.zeros: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "zeros" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_empty_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.empty((n, 2))  # E: torch.empty: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "empty" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_new_empty_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.new_empty((n, 2))  # E: torch.Tensor.new_empty: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "new_empty" of "TensorBase" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_new_full_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.new_full((n, 2), 1.0)  # E: torch.Tensor.new_full: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "new_full" of "TensorBase" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_new_ones_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.new_ones((n, 2))  # E: torch.Tensor.new_ones: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "new_ones" of "TensorBase" has incompatible type "tuple[DynamicInt, int]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_new_zeros_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.new_zeros(n, 2)  # E: torch.Tensor.new_zeros: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "new_zeros" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


X = torch.ones(2, 3, 4)
CALLS = [
    (ops_arange_start, (X, 1, True, 0.5)),
    (ops_arange_end, (X, 1, True, 0.5)),
    (ops_arange_step, (X, 1, True, 0.5)),
    (ops_ones_size, (X, 1, True, 0.5)),
    (ops_zeros_size, (X, 1, True, 0.5)),
    (torch_arange_start, (X, 1, True, 0.5)),
    (torch_arange_end, (X, 1, True, 0.5)),
    (torch_arange_step, (X, 1, True, 0.5)),
    (torch_ones_size, (X, 1, True, 0.5)),
    (torch_zeros_size, (X, 1, True, 0.5)),
    (torch_empty_size, (X, 1, True, 0.5)),
    (method_new_empty_size, (X, 1, True, 0.5)),
    (method_new_full_size, (X, 1, True, 0.5)),
    (method_new_ones_size, (X, 1, True, 0.5)),
    (method_new_zeros_size, (X, 1, True, 0.5)),
]
