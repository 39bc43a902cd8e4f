# executable
"""Dynamic numbers where the ops allow them: no error, although torch's stubs only accept
Python numbers there (plain typing reports them: see the plain-E expectations)."""

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat, DynamicInt, ops


@symscalar.jit
def operators(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    a = x * s
    b = s * x
    c = x + n
    d = n + x
    e = x - s
    f = s - x
    g = x / s
    h = s / x
    return a + b + c + d + e + f + g + h


@symscalar.jit
def torch_functions(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    a = torch.mul(x, s)  # plain-E: Argument 2 to "mul" has incompatible type "DynamicFloat"; expected "Tensor | int | float | bool | complex"  [arg-type]  # pyright-E: reportArgumentType
    b = torch.add(x, s, alpha=n)  # plain-E: No overload variant of "add" matches argument types "Tensor", "DynamicFloat", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType
    c = torch.sub(x, n)  # plain-E: No overload variant of "sub" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType
    d = torch.div(x, s)  # plain-E: Argument 2 to "div" has incompatible type "DynamicFloat"; expected "Tensor | int | float | bool"  [arg-type]  # pyright-E: reportArgumentType
    return a + b + c + d


@symscalar.jit
def methods(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    a = x.mul(s)  # plain-E: Argument 1 to "mul" of "TensorBase" has incompatible type "DynamicFloat"; expected "Tensor | int | float | bool | complex | SymInt | SymFloat"  [arg-type]  # pyright-E: reportArgumentType
    b = x.add(n, alpha=s)  # plain-E: Argument 1 to "add" of "TensorBase" has incompatible type "DynamicInt"; expected "Tensor | int | float | bool | complex | SymInt | SymFloat"  [arg-type]  # plain-E: Argument "alpha" to "add" of "TensorBase" has incompatible type "DynamicFloat"; expected "int | float | bool | complex | None"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType
    c = x.div(n)  # plain-E: Argument 1 to "div" of "TensorBase" has incompatible type "DynamicInt"; expected "Tensor | int | float | bool"  [arg-type]  # pyright-E: reportArgumentType
    d = x.sub(s)  # plain-E: Argument 1 to "sub" of "TensorBase" has incompatible type "DynamicFloat"; expected "Tensor | int | float | bool | complex | SymInt | SymFloat"  [arg-type]  # pyright-E: reportArgumentType
    return a + b + c + d


@symscalar.jit
def symscalar_ops(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    a = ops.mul(x, s) + ops.add(n, x) + ops.sub(x, s * n) + ops.div(x, s + 1)
    return a + ops.full((2, 3), s) + torch.full((2, 3), n)  # plain-E: No overload variant of "full" matches argument types "tuple[int, int]", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def clamp_where_layer_norm(x: torch.Tensor, lo: DynamicFloat, hi: DynamicFloat, e: DynamicFloat) -> torch.Tensor:
    a = torch.clamp(x, lo, hi)  # plain-E: No overload variant of "clamp" matches argument types "Tensor", "DynamicFloat", "DynamicFloat"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue
    b = torch.where(x > 0, x, lo)  # plain-E: No overload variant of "where" matches argument types "Tensor", "Tensor", "DynamicFloat"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue
    c = F.layer_norm(x, (3,), eps=e)  # plain-E: Argument "eps" to "layer_norm" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType
    return a + b + c


X = torch.ones(2, 3)
CALLS = [
    (operators, (X, 0.5, 2)),
    (torch_functions, (X, 0.5, 2)),
    (methods, (X, 0.5, 2)),
    (symscalar_ops, (X, 0.5, 2)),
    (clamp_where_layer_norm, (X, -0.5, 0.5, 1e-5)),
]
