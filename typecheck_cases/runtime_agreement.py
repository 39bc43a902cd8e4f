# executable
"""Spellings where the plugin once disagreed with the tracer: each is jitted and run, and its
mypy verdict must equal the run-time one (tests/test_typecheck.py). Indexing with a dynamic
value, bool(), and/or chains, `in`, any/all, match, partials, **kwargs, sorted/min."""

import functools

import torch

import symscalar
from symscalar import DynamicBool, DynamicInt, StaticBool


@symscalar.jit
def index_dynamic(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x[n]  # E: torch.Tensor.__getitem__: parameter "indices" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Invalid index type "DynamicInt" for "Tensor"; expected type "SupportsIndex | bool | int | slice[Any, Any, Any] | EllipsisType | Tensor | _NestedSequence[bool | int | slice[Any, Any, Any] | EllipsisType | Tensor | None] | None | tuple[SupportsIndex | bool | int | slice[Any, Any, Any] | EllipsisType | Tensor | _NestedSequence[bool | int | slice[Any, Any, Any] | EllipsisType | Tensor | None] | None, ...]"  [index]  # pyright-E: reportArgumentType


@symscalar.jit
def slice_bound_dynamic(x: torch.Tensor, t: DynamicInt) -> torch.Tensor:
    return x[:, :t]  # E: torch.Tensor.__getitem__: parameter "indices" must be static (a compile-time constant) but got dynamic value "t" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def index_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x[0, 1:] * n + x[..., None][:, -1]


@symscalar.jit
def bool_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * bool(n)  # E: bool() needs the Python value of dynamic value "n" (DynamicInt)...  [symscalar-concretization]


@symscalar.jit
def and_chain(x: torch.Tensor, flag: StaticBool, n: DynamicInt) -> torch.Tensor:
    if flag and n > 1:  # E: Dynamic value used as a condition: "n > 1"...  [symscalar-dynamic-condition]
        return x
    return -x


@symscalar.jit
def or_chain(x: torch.Tensor, flag: StaticBool, n: DynamicInt) -> torch.Tensor:
    while flag or n < 0:  # E: Dynamic value used as a condition: "n < 0"...  [symscalar-dynamic-condition]
        return x
    return -x


@symscalar.jit
def not_and_chain(x: torch.Tensor, flag: StaticBool, n: DynamicInt) -> torch.Tensor:
    return x if not (flag and n == 2) else -x  # E: Dynamic value used as a condition: "n == 2"...  [symscalar-dynamic-condition]


@symscalar.jit
def static_chain(x: torch.Tensor, flag: StaticBool, n: DynamicInt) -> torch.Tensor:
    both = flag and n  # the right operand is returned, not tested
    return x * both


@symscalar.jit
def in_tuple(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if n in (1, 2):  # E: "n in (1, 2)" needs the Python value of a dynamic value (DynamicInt)...  [symscalar-concretization]
        return x
    return -x


@symscalar.jit
def in_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * n if 2 in (1, 2) else x


@symscalar.jit
def in_mapping_keys(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    scales = {"a": n}
    return x * scales["a"] if "a" in scales else x


@symscalar.jit
def any_generator(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if any(v > n for v in (1, 2)):  # E: any() needs the Python value of dynamic value "v > n for ..." (typing.Generator[DynamicBool, None, None])...  [symscalar-concretization]
        return x
    return -x


@symscalar.jit
def all_list(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
    return x * all([b, True])  # E: all() needs the Python value of dynamic value "b" (DynamicBool)...  [symscalar-concretization]


@symscalar.jit
def any_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * n if any(v > 1 for v in x.shape) else x


@symscalar.jit
def match_value(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    match n:  # E: match needs the Python value of dynamic value "n" (DynamicInt)...  [symscalar-concretization]
        case 1:
            return x
    return -x


@symscalar.jit
def partial_keyword(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return functools.partial(torch.sum, dim=n)(x)  # E: torch.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # pyright-E: reportCallIssue


@symscalar.jit
def partial_bound_method(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return functools.partial(x.sum, n)()  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # pyright-E: reportCallIssue


@symscalar.jit
def partial_static(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return functools.partial(torch.sum, dim=1)(x) * n


@symscalar.jit
def bound_method_alias(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    reduce = x.sum
    return reduce(n)  # E: No overload variant matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def spread_kwargs(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    opts = {"dim": n}
    return x.sum(**opts)  # E: torch.Tensor.sum: parameters "dim", "keepdim" must be static (a compile-time constant) but got dynamic value "**opts" (dict[str, DynamicInt])...  [symscalar-static-required]  # plain-E: No overload variant of "sum" of "TensorBase" matches argument type "dict[str, DynamicInt]"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def sorted_mixed(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * sorted([n, 2])[0]  # E: sorted() needs the Python value of dynamic value "n" (DynamicInt)...  [symscalar-concretization]  # plain-E: Value of type variable "SupportsRichComparisonT" of "sorted" cannot be "object"  [type-var]  # plain-E: Unsupported operand types for * ("Tensor" and "object")  [operator]


@symscalar.jit
def min_of(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return x * min(n, 2)  # E: min() needs the Python value of dynamic value "n" (DynamicInt)...  [symscalar-concretization]  # plain-E: Unsupported operand types for * ("Tensor" and "SupportsDunderLT[Any]")  [operator]  # plain-E: Unsupported operand types for * ("Tensor" and "SupportsDunderGT[Any]")  [operator]


def unbound_method(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    """Not run: the tracer cannot take torch.Tensor.sum(proxy, ...) yet (TypeError)."""
    return torch.Tensor.sum(x, n)  # E: No overload variant of "sum" of "TensorBase" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


X = torch.ones(2, 3)
CALLS = [
    (index_dynamic, (X, 1)),
    (slice_bound_dynamic, (X, 2)),
    (index_static, (X, 2)),
    (bool_of, (X, 1)),
    (and_chain, (X, True, 2)),
    (or_chain, (X, False, 2)),
    (not_and_chain, (X, True, 2)),
    (static_chain, (X, True, 2)),
    (in_tuple, (X, 1)),
    (in_static, (X, 1)),
    (in_mapping_keys, (X, 1)),
    (any_generator, (X, 1)),
    (all_list, (X, True)),
    (any_static, (X, 1)),
    (match_value, (X, 1)),
    (partial_keyword, (X, 1)),
    (partial_bound_method, (X, 1)),
    (partial_static, (X, 1)),
    (bound_method_alias, (X, 1)),
    (spread_kwargs, (X, 1)),
    (sorted_mixed, (X, 1)),
    (min_of, (X, 1)),
]
