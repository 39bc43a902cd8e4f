# executable
"""The torch spellings whose static parameters torch's own source leaves unannotated
(``Tensor.split(split_size, dim=0)`` and ``Tensor.unflatten(dim, sizes)`` are Python methods of
``torch/_tensor.py``): ``Any`` to plain mypy and Pyright, so a dynamic value there was accepted
without the plugin. symscalar's torch stubs annotate them (``torch_stubs.ANNOTATED``), so all
three checkers refuse what the run time refuses and accept the static spellings."""

from typing import Any

import torch

import symscalar
from symscalar import DynamicInt


@symscalar.jit
def split_by_dynamic_size(x: torch.Tensor, a: DynamicInt) -> Any:
    first, *_ = x.split(a)  # E: torch.Tensor.split: parameter "split_size_or_sections" must be static (a compile-time constant) but got dynamic value "a" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "split" of "Tensor" has incompatible type "DynamicInt"; expected "int | SymInt | Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType
    return first


@symscalar.jit
def split_by_dynamic_sections(x: torch.Tensor, a: DynamicInt) -> Any:
    return x.split([a, 4 - 2], dim=1)  # E: torch.Tensor.split: parameter "split_size_or_sections" must be static (a compile-time constant) but got dynamic value "a" (DynamicInt)...  [symscalar-static-required]  # plain-E: List item 0 has incompatible type "DynamicInt"; expected "int | SymInt"  [list-item]  # pyright-E: reportArgumentType


@symscalar.jit
def split_size_by_keyword(x: torch.Tensor, a: DynamicInt) -> Any:
    return x.split(split_size=a)  # E: torch.Tensor.split: parameter "split_size_or_sections" must be static (a compile-time constant) but got dynamic value "a" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "split_size" to "split" of "Tensor" has incompatible type "DynamicInt"; expected "int | SymInt | Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def split_along_dynamic_dim(x: torch.Tensor, a: DynamicInt) -> Any:
    return x.split(1, dim=a)  # E: torch.Tensor.split: parameter "dim" must be static (a compile-time constant) but got dynamic value "a" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "dim" to "split" of "Tensor" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def split_static(x: torch.Tensor, a: DynamicInt) -> Any:
    head, tail = x.split([1, 3], dim=1)
    halves = x.split(2, 1)
    return head * a + tail.sum(1, keepdim=True) + halves[0].sum()


@symscalar.jit
def unflatten_dynamic_size(x: torch.Tensor, n: DynamicInt) -> Any:
    return x.unflatten(-1, (n, -1))  # E: torch.Tensor.unflatten: parameter "sizes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "unflatten" of "Tensor" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt] | Sequence[tuple[str, int]]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def unflatten_dynamic_dim(x: torch.Tensor, n: DynamicInt) -> Any:
    return x.unflatten(n, [2, 2])  # E: torch.Tensor.unflatten: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "unflatten" of "Tensor" has incompatible type "DynamicInt"; expected "int | str"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def unflatten_by_keyword(x: torch.Tensor, n: DynamicInt) -> Any:
    return x.unflatten(dim=1, sizes=(2, n))  # E: torch.Tensor.unflatten: parameter "sizes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "sizes" to "unflatten" of "Tensor" has incompatible type "tuple[int, DynamicInt]"; expected "Sequence[int | SymInt] | Sequence[tuple[str, int]]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def unflatten_static(x: torch.Tensor, n: DynamicInt) -> Any:
    return x.unflatten(-1, (2, -1)) * n


X = torch.ones(2, 4)

CALLS = [
    (split_by_dynamic_size, (X, 2)),
    (split_by_dynamic_sections, (X, 2)),
    (split_size_by_keyword, (X, 2)),
    (split_along_dynamic_dim, (X, 1)),
    (split_static, (X, 2)),
    (unflatten_dynamic_size, (X, 2)),
    (unflatten_dynamic_dim, (X, 1)),
    (unflatten_by_keyword, (X, 2)),
    (unflatten_static, (X, 2)),
]
