# executable
"""Code written the way users write it, where the static check once disagreed with the run
time: formatting, hashing and containment of dynamic values; dynamic-ness lost through types
(a TypeVar bound to IntLike, divmod, a display through a variable, an untyped lambda, Optional
and IntLike conditions, ~ on a DynamicBool); jit(static=, dynamic=) against the annotations;
and spellings that were false alarms (@jit on Module.forward, partial(F.dropout, p=p))."""

import functools
from typing import Optional, TypeVar

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, IntLike

T = TypeVar("T", bound=IntLike)


@symscalar.jit
def debug_print(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    print(f"scale {s:.3f}")  # E: formatting (an f-string or str.format()) needs the Python value of dynamic value "s" (DynamicFloat), which is only known when the compiled program runs...  [symscalar-concretization]
    return x * s


@symscalar.jit
def format_method(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    print("{} rows".format(n))  # E: formatting (an f-string or str.format()) needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]
    return x * n


@symscalar.jit
def str_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    name = "n=" + str(n)  # E: str() needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]
    return x if name else -x


@symscalar.jit
def print_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    print(n)  # E: print() needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]
    return x


@symscalar.jit
def hash_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * (hash(n) % 2)  # E: hash() needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]


@symscalar.jit
def dict_key(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    table = {n: 1.0}  # E: hashing (a dict key or set item) needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]
    return x * len(table)


@symscalar.jit
def set_item(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * len({n, 2})  # E: hashing (a dict key or set item) needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]


@symscalar.jit
def in_list_display(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x if 3 in [n, 4] else -x  # E: "3 in [n, 4]" needs the Python value of a dynamic value (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]


@symscalar.jit
def percent_format(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    print("%s rows" % n)  # E: "%"-formatting needs the Python value of dynamic value "n" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]
    return x


@symscalar.jit
def format_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    print(f"{x.shape} {[n]} {n!r}", "%d" % x.dim(), {1: n}, hash((1, 2)))
    return x * n


def reduce_generic(x: torch.Tensor, k: T) -> torch.Tensor:
    return x.sum(k)  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "k" (T)...  [symscalar-static-required]  # plain-E: Argument 1 to "sum" of "TensorBase" has incompatible type "T"...  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def typevar_helper(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return reduce_generic(x, n)


@symscalar.jit
def typevar_parameter(x: torch.Tensor, k: T) -> torch.Tensor:
    return x.sum(k)  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "k" (T)...  [symscalar-static-required]  # plain-E: Argument 1 to "sum" of "TensorBase" has incompatible type "T"...  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def divmod_result(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    q, r = divmod(n, 2)
    return x.sum(q) * r  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "q" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "sum" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def divmod_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    q, _ = divmod(x.dim(), 2)
    return x.sum(q) * n


@symscalar.jit
def shape_through_variable(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    shape = (*x.shape[:-1], n, -1)
    return x.reshape(shape)  # E: torch.Tensor.reshape: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt) in "shape"...  [symscalar-static-required]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def shape_through_variable_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    shape = (*x.shape[:-1], 1, -1)
    return x.reshape(shape) * n


@symscalar.jit
def untyped_lambda(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    total = lambda t: t.sum(n)  # noqa: E731 - the way users write it  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]
    return total(x)


@symscalar.jit
def untyped_lambda_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    total = lambda t: t.sum(0)  # noqa: E731
    return total(x) * n


@symscalar.jit
def optional_condition(x: torch.Tensor, d: Optional[DynamicFloat]) -> torch.Tensor:
    if d:  # E: Dynamic value used as a condition: "d" may be a dynamic value (DynamicFloat | None), whose truth is only known when the compiled program runs...  [symscalar-dynamic-condition]
        return x * d
    return x


@symscalar.jit
def optional_or(x: torch.Tensor, d: Optional[DynamicFloat]) -> torch.Tensor:
    return x * (d or 1.0)  # E: Dynamic value used as a condition: "d" may be a dynamic value (DynamicFloat | None), whose truth is only known when the compiled program runs...  [symscalar-dynamic-condition]


@symscalar.jit
def optional_is_none(x: torch.Tensor, d: Optional[DynamicFloat]) -> torch.Tensor:
    return x if d is None else x * d


@symscalar.jit
def intlike_condition(x: torch.Tensor, k: IntLike) -> torch.Tensor:
    if k:  # E: Dynamic value used as a condition: "k" may be a dynamic value (int | DynamicInt), whose truth is only known when the compiled program runs...  [symscalar-dynamic-condition]
        return x
    return -x


@symscalar.jit
def invert_bool(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return x * ~b  # E: Unsupported operand type for ~ ("DynamicBool")  [operator]  # pyright-E: reportOperatorIssue


@symscalar.jit
def xor_bool(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return x * (b ^ True)


def sum_over_k(x: torch.Tensor, k: IntLike, u, d: int) -> torch.Tensor:
    return x.sum(u) + d


def static_on_intlike(x: torch.Tensor) -> torch.Tensor:
    return symscalar.jit(sum_over_k, static=["k"])(x, 0, 0, 1)  # E: jit(..., static=["k"]): parameter "k" is annotated int | DynamicInt, which makes it dynamic...  [symscalar-jit-option]


def dynamic_on_int(x: torch.Tensor) -> torch.Tensor:
    return symscalar.jit(sum_over_k, dynamic=["d"])(x, 0, 0, 1)  # E: jit(..., dynamic=["d"]): parameter "d" is annotated int, which makes it static...  [symscalar-jit-option]


def not_a_parameter(x: torch.Tensor) -> torch.Tensor:
    return symscalar.jit(sum_over_k, static=["dim"])(x, 0, 0, 1)  # E: jit(..., static=...): 'dim' is not a parameter; the parameters are "x", "k", "u", "d"  [symscalar-jit-option]


def options_where_unannotated(x: torch.Tensor) -> torch.Tensor:
    return symscalar.jit(sum_over_k, static=["u"], dynamic=[1])(x, 0, 0, 1)


class Scale(torch.nn.Module):
    @symscalar.jit
    def forward(self, x: torch.Tensor, p: DynamicFloat) -> torch.Tensor:
        return x * p


def module_forward(x: torch.Tensor) -> torch.Tensor:
    m = Scale()
    return m.forward(x, 0.5) + m(x, 0.25)  # plain-E: Argument 2 has incompatible type "float"; expected "DynamicFloat"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def partial_dropout(x: torch.Tensor, p: DynamicFloat) -> torch.Tensor:
    drop = functools.partial(F.dropout, p=p, training=False)
    return drop(x) + F.dropout(x, p=p, training=False)


X = torch.ones(2, 3)
CALLS = [
    (debug_print, (X, 0.5)),
    (format_method, (X, 2)),
    (str_of, (X, 2)),
    (print_of, (X, 2)),
    (hash_of, (X, 2)),
    (dict_key, (X, 2)),
    (set_item, (X, 2)),
    (in_list_display, (X, 2)),
    (percent_format, (X, 2)),
    (format_static, (X, 2)),
    (typevar_helper, (X, 1), reduce_generic),
    (typevar_parameter, (X, 1)),
    (divmod_result, (X, 3)),
    (divmod_static, (X, 3)),
    (shape_through_variable, (X, 3)),
    (shape_through_variable_static, (X, 3)),
    (untyped_lambda, (X, 1)),
    (untyped_lambda_static, (X, 1)),
    (optional_condition, (X, 0.5)),
    (optional_or, (X, 0.5)),
    (optional_is_none, (X, 0.5)),
    (intlike_condition, (X, 1)),
    (invert_bool, (X, True)),
    (xor_bool, (X, True)),
    (static_on_intlike, (X,)),
    (dynamic_on_int, (X,)),
    (not_a_parameter, (X,)),
    (options_where_unannotated, (X,)),
    (module_forward, (X,)),
    (partial_dropout, (X, 0.5)),
]
