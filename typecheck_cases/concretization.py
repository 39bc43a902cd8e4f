# executable
"""Implicit concretization of a dynamic value: int()/float()/range()/indexing and truthiness.

The dynamic classes hide __bool__/__int__/__float__/__index__ from type checkers, so plain
mypy rejects int(d), range(d), lst[d]; truthy-bool flags `if d:`; the plugin says why instead
(`[symscalar-concretization]`) and flags dynamic comparisons and logical operations used as
conditions (`if d > 0:`)."""

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt


@symscalar.jit
def int_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * int(n)  # E: int() needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]  # plain-E: No overload variant of "int" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportArgumentType


@symscalar.jit
def float_of(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return x * float(s)  # E: float() needs the Python value of dynamic value "s" (DynamicFloat), which is only known when the compiled program runs...  [symscalar-concretization]  # plain-E: Argument 1 to "float" has incompatible type "DynamicFloat"; expected "str | Buffer | SupportsFloat | SupportsIndex"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def range_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    for _ in range(n):  # E: range() needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]  # plain-E: No overload variant of "range" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType
        x = x * 2
    return x


@symscalar.jit
def index_with(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    scales = [1.0, 2.0, 3.0]
    return x * scales[n]  # E: No overload variant of "__getitem__" of "list" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def if_compare(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if n > 0:  # E: Dynamic value used as a condition: "n > 0" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
        return x
    return -x


@symscalar.jit
def if_reversed_compare(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    if 0.5 < s:  # E: Dynamic value used as a condition: "0.5 < s" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
        return x
    return -x


@symscalar.jit
def if_equal(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if n == 2:  # E: Dynamic value used as a condition: "n == 2" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
        return x
    return -x


@symscalar.jit
def if_name(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if n:  # E: "n" has type "DynamicInt" which does not implement __bool__ or __len__ so it could always be true in boolean context  [truthy-bool]
        return x
    return -x


@symscalar.jit
def while_compare(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    while n > 0:  # E: Dynamic value used as a condition: "n > 0" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
        n = n - 1
        x = x * 2
    return x


@symscalar.jit
def not_name(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return x if not b else -x  # E: "b" has type "DynamicBool" which does not implement __bool__ or __len__ so it could always be true in boolean context  [truthy-bool]


@symscalar.jit
def and_compare(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    ok = n > 0 and n < 4  # E: Dynamic value used as a condition: "n > 0" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
    return x * ok


@symscalar.jit
def or_name(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return x * (b or False)  # E: "b" has type "DynamicBool" which does not implement __bool__ or __len__ so it could always be true in boolean context  [truthy-bool]


@symscalar.jit
def ternary(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return x * (2.0 if s >= 1.0 else 3.0)  # E: Dynamic value used as a condition: "s >= 1.0" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]


@symscalar.jit
def assert_compare(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    assert n != 0  # E: Dynamic value used as a condition: "n != 0" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
    return x * n


@symscalar.jit
def not_compare(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if not n <= 2:  # E: Dynamic value used as a condition: "n <= 2" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]  # E: Expression has type "DynamicBool" which does not implement __bool__ or __len__ so it could always be true in boolean context  [truthy-bool]
        return x
    return -x


@symscalar.jit
def comprehension_filter(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    scales = [s for s in (1, 2, 3) if s < n]  # E: Dynamic value used as a condition: "s < n" is a DynamicBool, whose value is only known when the compiled program runs...  [symscalar-dynamic-condition]
    return x * len(scales)


@symscalar.jit
def kept_dynamic(x: torch.Tensor, n: DynamicInt, s: DynamicFloat) -> torch.Tensor:
    positive = n > 0
    both = positive & (s < 2.0)
    symscalar.check(n >= 0, "n must not be negative")
    return x * s * n + x * (both ^ True)


@symscalar.jit
def specialized(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if symscalar.specialize(n) > 0:
        return x * int(symscalar.specialize(n))
    return -x


X = torch.ones(2, 3)
CALLS = [
    (int_of, (X, 2)),
    (float_of, (X, 0.5)),
    (range_of, (X, 2)),
    (index_with, (X, 1)),
    (if_compare, (X, 1)),
    (if_reversed_compare, (X, 1.0)),
    (if_equal, (X, 2)),
    (if_name, (X, 1)),
    (while_compare, (X, 2)),
    (not_name, (X, True)),
    (and_compare, (X, 1)),
    (or_name, (X, True)),
    (ternary, (X, 1.5)),
    (assert_compare, (X, 1)),
    (not_compare, (X, 1)),
    (comprehension_filter, (X, 2)),
    (kept_dynamic, (X, 2, 0.5)),
    (specialized, (X, 2)),
]
