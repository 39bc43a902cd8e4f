# executable
# requires-ops: torch.clamp, torch.where, torch.nn.functional.layer_norm, torch.Tensor.softmax, torch.Tensor.permute, torch.cat
"""Ops that other branches add (run once they are registered and _static_params.py is
regenerated): dynamic scalars where they are allowed, dynamic values in static dims."""

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat, DynamicInt


@symscalar.jit
def dynamic_allowed(x: torch.Tensor, lo: DynamicFloat, hi: DynamicFloat, e: DynamicFloat) -> torch.Tensor:
    a = torch.clamp(x, lo, hi)  # plain-E: No overload variant of "clamp" matches argument types "Tensor", "DynamicFloat", "DynamicFloat"  [call-overload]
    b = torch.where(x > 0, x, lo)  # plain-E: No overload variant of "where" matches argument types "Tensor", "Tensor", "DynamicFloat"  [call-overload]
    c = F.layer_norm(x, (3,), eps=e)  # plain-E: Argument "eps" to "layer_norm" has incompatible type "DynamicFloat"; expected "float"  [arg-type]
    return a + b + c


@symscalar.jit
def softmax_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.softmax(n)  # E: torch.Tensor.softmax: parameter "dim" must be static...  [symscalar-static-required]  # plain-E: No overload variant of "softmax" of "TensorBase" matches argument type "DynamicInt"  [call-overload]


@symscalar.jit
def permute_dims(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x.permute(0, n)  # E: torch.Tensor.permute: parameter ... must be static...  [symscalar-static-required]  # plain-E: No overload variant of "permute" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]


@symscalar.jit
def cat_dim(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.cat([x, x], n)  # E: torch.cat: parameter "dim" must be static...  [symscalar-static-required]  # plain-E: No overload variant of "cat" matches argument types "list[Tensor]", "DynamicInt"  [call-overload]


X = torch.ones(2, 3)
CALLS = [
    (dynamic_allowed, (X, -0.5, 0.5, 1e-5)),
    (softmax_dim, (X, 1)),
    (permute_dims, (X, 1)),
    (cat_dim, (X, 0)),
]
