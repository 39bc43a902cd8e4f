# executable
"""Dynamic values in the static parameters of the torch spellings (functions and methods)."""

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt


@symscalar.jit
def torch_sum_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.sum(x, n)  # E: torch.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required] # plain-E: No overload variant of "sum" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_sum_dims(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.sum(x, (0, n))  # E: torch.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "sum" has incompatible type "tuple[int, DynamicInt]"; expected "int | Size | list[int] | tuple[int, ...] | None"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_sum_keepdim(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return torch.sum(x, 1, keepdim=b)  # E: torch.sum: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required] # plain-E: No overload variant of "sum" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_sum_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.sum(n)  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required] # plain-E: No overload variant of "sum" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_sum_dim_keyword(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.sum(dim=n)  # E: torch.Tensor.sum: parameter "dim" must be static...  [symscalar-static-required] # plain-E: No overload variant of "sum" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_sum_keepdim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.sum(0, n == 1)  # E: torch.Tensor.sum: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "n == 1" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "sum" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_reshape(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.reshape(x, (n, 2))  # E: torch.reshape: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required] # plain-E: Argument 2 to "reshape" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_broadcast_to(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.broadcast_to(x, (n, 3))  # E: torch.broadcast_to: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required] # plain-E: Argument 2 to "broadcast_to" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_full(x: torch.Tensor, n: DynamicInt, s: DynamicFloat) -> torch.Tensor:
    return x + torch.full((n, 3), s)  # E: torch.full: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required] # plain-E: Argument 1 to "full" has incompatible type "tuple[DynamicInt, int]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def static_spellings_pass(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    y = torch.sum(x * s, 1, keepdim=True) + x.sum(dim=(0, 1))
    z = torch.broadcast_to(torch.reshape(y, (2, 1)), (2, 3)) + x.sum(0, True)
    return z + torch.full((2, 3), s)


@symscalar.jit
def softmax_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.softmax(n)  # E: torch.Tensor.softmax: parameter "dim" must be static...  [symscalar-static-required]  # plain-E: No overload variant of "softmax" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def permute_dims(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.permute(0, n)  # E: torch.Tensor.permute: parameter ... must be static...  [symscalar-static-required]  # plain-E: No overload variant of "permute" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def cat_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.cat([x, x], n)  # E: torch.cat: parameter "dim" must be static...  [symscalar-static-required]  # plain-E: No overload variant of "cat" matches argument types "list[Tensor]", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


def parameter_sum(p: torch.nn.Parameter, n: DynamicInt) -> torch.Tensor:
    return p.sum(n)  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "sum" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


X = torch.ones(2, 3)
CALLS = [
    (torch_sum_dim, (X, 1)),
    (torch_sum_dims, (X, 1)),
    (torch_sum_keepdim, (X, True)),
    (method_sum_dim, (X, 1)),
    (method_sum_dim_keyword, (X, 1)),
    (method_sum_keepdim, (X, 1)),
    (torch_reshape, (X, 3)),
    (torch_broadcast_to, (torch.ones(1, 3), 2)),
    (torch_full, (X, 2, 0.5)),
    (softmax_dim, (X, 1)),
    (permute_dims, (X, 1)),
    (cat_dim, (X, 0)),
    (static_spellings_pass, (X, 0.5)),
]
