# executable
"""Correct code that must type-check without a single error (no false positives)."""

import numbers

import torch

import symscalar
from symscalar import DynamicFloat, DynamicInt, NumberLike, StaticBool, StaticInt, ops


@symscalar.jit
def normalize(x: torch.Tensor, eps: DynamicFloat, dim: StaticInt, keep: StaticBool) -> torch.Tensor:
    total = x.sum(dim, keepdim=keep) + eps
    return x / total


@symscalar.jit
def reduce_many(x: torch.Tensor, scale: DynamicFloat) -> torch.Tensor:
    dims: list[int] = [0, 1]
    fixed: tuple[int, ...] = (0,)
    a = torch.sum(x * scale, dims)
    b = ops.sum(x, fixed).sum()
    return a + b + x.sum(dim=-1).sum(0, False)


@symscalar.jit
def shapes_from_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    rows = x.shape[0]
    flat = x.reshape(rows * x.shape[1])
    grid = ops.reshape(flat, (rows, -1))
    return ops.expand(ops.sum(grid, 0, True), (rows * 2, x.shape[1])) * n


@symscalar.jit
def shapes_from_generic_calls(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # tuple(...)/list(...) take their type from the context; the plugin's widened parameter
    # must not make these static ints look dynamic.
    sizes = (1, 1)
    first, _ = ops.split(ops.reshape(y, tuple(x.shape)), list(sizes))
    return first + torch.zeros(tuple(x.shape)) + first.new_zeros(tuple(first.shape))


@symscalar.jit
def comprehensions_are_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    # transformers rt_detr / smolvlm: comprehensions of static ints in widened static
    # parameters; their type must not come from the widened parameter's context
    groups = 1
    sizes = [1, 1]
    first, _ = torch.split(x, [k * groups for k in sizes])
    ones = torch.ones(size=[x.shape[i] for i in (0, 1)])
    flat = x.reshape(tuple(d for d in x.shape))
    return first.sum(0) + ones[0] * n + flat[1]


@symscalar.jit
def dynamic_arithmetic(x: torch.Tensor, n: DynamicInt, s: DynamicFloat) -> torch.Tensor:
    k = (n + 1) * 2 - n // 3
    t = s / k + 0.5
    symscalar.check(k > 0, "k must be positive")
    return x * t - k


@symscalar.jit
def specialize_explicitly(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    dim = symscalar.specialize(n)
    if dim > 0:
        return x.sum(dim)
    return ops.sum(x, (dim,))


def describe(v: NumberLike) -> str:
    if symscalar.is_dynamic(v):
        return "dynamic"
    if isinstance(v, symscalar.NumberClasses):
        return "static"
    return "?"


def legacy_static(v: float | int) -> bool:
    return isinstance(v, (int, float, numbers.Number))


X = torch.ones(2, 3)
CALLS = [
    (normalize, (X, 1e-3, 1, True)),
    (reduce_many, (X, 0.5)),
    (shapes_from_static, (X, 2)),
    (shapes_from_generic_calls, (X, X)),
    (comprehensions_are_static, (X, 2)),
    (dynamic_arithmetic, (X, 4, 0.5)),
    (specialize_explicitly, (X, 1)),
]
