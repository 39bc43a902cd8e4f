# executable
"""Conditions on sizes of declared dims (``Dims`` annotations): a comparison of sizes and static
ints is a Python bool at run time, decided by the declared ranges or recorded as a size guard
(symscalar/size_guards.py), so ``if T > 2:`` is fine; a guard that would leave a declared dim
one possible value (``T == 1`` at T = 1, ``T > 1`` at T = 1 with ``min=1``) is refused unless
the dim says ``specialize=True``. The plugin gives the same verdict (it asks size_guards at the
sizes the range allows). Each function is called at sizes that cover its verdict: a flagged one
at the size its guard pins, a clean one at both ends of its range and in between."""

from typing import Annotated, reveal_type

import torch

import symscalar
from symscalar import Dim, Dims, DynamicInt

X = Annotated[torch.Tensor, Dims("B", "T", 4)]
Specialized = Annotated[torch.Tensor, Dims("B", Dim("T", specialize=True), 4)]
Ranged = Annotated[torch.Tensor, Dims("B", Dim("T", min=2, max=8), 4)]
WINDOW = Dim("T", max=64)
Windowed = Annotated[torch.Tensor, Dims("B", WINDOW, None)]


@symscalar.jit
def longer_than_two(x: X) -> torch.Tensor:
    reveal_type(x.shape[1] > 2)  # N: Revealed type is "bool"
    if x.shape[1] > 2:
        return x * 2
    return x


@symscalar.jit
def decided_by_the_range(x: X) -> torch.Tensor:
    T = x.shape[1]
    return x * 2 if T >= 1 else x


@symscalar.jit
def product_of_two_dims(x: X) -> torch.Tensor:
    B, T = x.shape[0], x.shape[1]
    return x * 2 if B * T > 64 else x


@symscalar.jit
def two_dims_equal(x: X) -> torch.Tensor:
    return x * 2 if x.shape[0] == x.shape[1] else x


@symscalar.jit
def even_length(x: X) -> torch.Tensor:
    assert x.size(1) % 2 == 0 or x.size(1) % 2 == 1
    return x


@symscalar.jit
def static_dim(x: X) -> torch.Tensor:
    return x * 2 if x.shape[2] == 4 else x


@symscalar.jit
def single_step(x: X) -> torch.Tensor:
    T = x.shape[1]
    if T == 1:  # E: the comparison `T == 1` needs the size guard `s_T == 1` when T = 1, which pins the declared dim T to that one value...  [symscalar-size-guard]
        return x[:, 0]
    return x.sum(1)


@symscalar.jit
def not_single(x: X) -> torch.Tensor:
    if x.shape[1] != 1:  # E: the comparison `x.shape[1] != 1` needs the size guard `s_T == 1` when T = 1...  [symscalar-size-guard]
        return x.sum(1)
    return x[:, 0]


@symscalar.jit
def longer_than_one(x: X) -> torch.Tensor:
    if 1 < x.shape[1]:  # E: the comparison `1 < x.shape[1]` needs the size guard `1 >= s_T` when T = 1...  [symscalar-size-guard]
        return x * 2
    return x


@symscalar.jit
def shifted_single(x: X) -> torch.Tensor:
    return x * 2 if x.shape[1] - 1 == 0 else x  # E: the comparison `x.shape[1] - 1 == 0` needs the size guard `s_T - 1 == 0` when T = 1...  [symscalar-size-guard]


@symscalar.jit
def flag_kept(x: X) -> torch.Tensor:
    single = x.shape[1] == 1  # E: the comparison `x.shape[1] == 1` needs the size guard `s_T == 1` when T = 1...  [symscalar-size-guard]
    return x if single else x * 2


@symscalar.jit
def equals_static_parameter(x: X, k: int) -> torch.Tensor:
    return x * 2 if x.shape[1] == k else x  # E: the comparison `x.shape[1] == k` needs the size guard when T is the static value it is compared with...  [symscalar-size-guard]


@symscalar.jit
def longer_than_static_parameter(x: X, k: int) -> torch.Tensor:
    return x * 2 if x.shape[1] > k else x


@symscalar.jit
def single_step_opted_in(x: Specialized) -> torch.Tensor:
    if x.shape[1] == 1:
        return x[:, 0]
    return x.sum(1)


@symscalar.jit
def above_the_minimum(x: Ranged) -> torch.Tensor:
    if x.shape[1] > 2:  # E: the comparison `x.shape[1] > 2` needs the size guard `s_T <= 2` when T = 2...  [symscalar-size-guard]
        return x * 2
    return x


@symscalar.jit
def at_the_maximum(x: Ranged) -> torch.Tensor:
    if x.shape[1] >= 8:  # E: the comparison `x.shape[1] >= 8` needs the size guard `s_T >= 8` when T = 8...  [symscalar-size-guard]
        return x * 2
    return x


@symscalar.jit
def inside_the_range(x: Ranged) -> torch.Tensor:
    return x * 2 if x.shape[1] > 4 else x


@symscalar.jit
def full_window(x: Windowed) -> torch.Tensor:
    if x.shape[1] >= 64:  # E: the comparison `x.shape[1] >= 64` needs the size guard `s_T >= 64` when T = 64...  [symscalar-size-guard]
        return x * 2
    return x


@symscalar.jit
def within_bounds(x: X) -> torch.Tensor:
    return x * 2 if 2 < x.shape[1] < 100 else x


@symscalar.jit
def chained_single(x: X) -> torch.Tensor:
    if 0 < x.shape[1] <= 1:  # E: the comparison `x.shape[1] <= 1` needs the size guard `s_T <= 1` when T = 1...  [symscalar-size-guard]
        return x[:, 0]
    return x.sum(1)


@symscalar.jit
def size_against_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    if x.shape[1] > n:  # E: Dynamic value used as a condition: "x.shape[1] > n" is a DynamicBool...  [symscalar-dynamic-condition]
        return x * 2
    return x


def batch(t: int, b: int = 2) -> torch.Tensor:
    return torch.ones(b, t, 4)


CALLS = [
    *((longer_than_two, (batch(t),)) for t in (1, 2, 3, 9)),
    *((decided_by_the_range, (batch(t),)) for t in (1, 5)),
    *((product_of_two_dims, (batch(t, b),)) for t, b in ((1, 1), (8, 8), (64, 3))),
    *((two_dims_equal, (batch(t, b),)) for t, b in ((1, 1), (2, 3), (3, 3))),
    *((even_length, (batch(t),)) for t in (1, 2, 7)),
    *((static_dim, (batch(t),)) for t in (1, 3)),
    (single_step, (batch(1),)),
    (not_single, (batch(1),)),
    (longer_than_one, (batch(1),)),
    (shifted_single, (batch(1),)),
    (flag_kept, (batch(1),)),
    (equals_static_parameter, (batch(5), 5)),
    *((longer_than_static_parameter, (batch(t), 100)) for t in (1, 99, 100, 101, 300)),
    *((single_step_opted_in, (batch(t),)) for t in (1, 2, 5)),
    (above_the_minimum, (batch(2),)),
    (at_the_maximum, (batch(8),)),
    *((inside_the_range, (batch(t),)) for t in (2, 4, 5, 8)),
    (full_window, (batch(64),)),
    *((within_bounds, (batch(t),)) for t in (1, 2, 3, 99, 100, 101)),
    (chained_single, (batch(1),)),
    (size_against_parameter, (batch(3), 2)),
]
