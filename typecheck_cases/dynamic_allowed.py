# executable
"""Dynamic numbers where the ops allow them: no error, although torch's own stubs only accept
Python numbers there (the plugin widens them; plain mypy and Pyright read symscalar's
torch-stubs, `python -m symscalar stubs`, which accept them too)."""

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
    a = torch.mul(x, s)
    b = torch.add(x, s, alpha=n)
    c = torch.sub(x, n)
    d = torch.div(x, s)
    return a + b + c + d


@symscalar.jit
def methods(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    a = x.mul(s)
    b = x.add(n, alpha=s)
    c = x.div(n)
    d = x.sub(s)
    return a + b + c + d


@symscalar.jit
def symscalar_ops(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    a = ops.mul(x, s) + ops.add(n, x) + ops.sub(x, s * n) + ops.div(x, s + 1)
    return a + ops.full((2, 3), s) + torch.full((2, 3), n)


@symscalar.jit
def clamp_where_layer_norm(x: torch.Tensor, lo: DynamicFloat, hi: DynamicFloat, e: DynamicFloat) -> torch.Tensor:
    a = torch.clamp(x, lo, hi)
    b = torch.where(x > 0, x, lo)
    c = F.layer_norm(x, (3,), eps=e)
    return a + b + c


X = torch.ones(2, 3)
CALLS = [
    (operators, (X, 0.5, 2)),
    (torch_functions, (X, 0.5, 2)),
    (methods, (X, 0.5, 2)),
    (symscalar_ops, (X, 0.5, 2)),
    (clamp_where_layer_norm, (X, -0.5, 0.5, 1e-5)),
]
