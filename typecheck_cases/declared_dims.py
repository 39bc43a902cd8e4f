# executable
"""Sizes of declared dims (``Dims`` annotations): ``x.shape[i]`` / ``x.size(i)`` of a dim
declared by name is a ``DynamicInt`` size symbol, of a static dim an ``int``. A size goes
where a size goes (view/reshape/expand targets, zeros/ones/full/empty sizes, arange bounds,
indices and slice bounds, narrow's start and length) and nowhere else among the static parameters; a
dynamic value that is not a size is refused in a size slot too."""

from typing import Annotated, reveal_type

import torch

import symscalar
from symscalar import Dim, Dims, DynamicInt

X = Annotated[torch.Tensor, Dims("B", "T", 64)]


@symscalar.jit
def revealed(x: X) -> torch.Tensor:
    reveal_type(x.shape[1])  # plugin-N: Revealed type is "symscalar.types.DynamicInt"  # plain-N: Revealed type is "int"
    reveal_type(x.size(0))  # plugin-N: Revealed type is "symscalar.types.DynamicInt"  # plain-N: Revealed type is "int"
    reveal_type(x.shape[2])  # N: Revealed type is "int"
    return x


@symscalar.jit
def view_sizes(x: X) -> torch.Tensor:
    return x.view(x.shape[0] * x.shape[1], 64)


@symscalar.jit
def reshape_size_call(x: X) -> torch.Tensor:
    return x.reshape(x.size(0), -1)


@symscalar.jit
def expand_sizes(x: X) -> torch.Tensor:
    return x[:, :1].expand(x.shape[0], x.shape[1], 64)


@symscalar.jit
def ones_size(x: X) -> torch.Tensor:
    return x + torch.ones(x.shape[1], 64)


@symscalar.jit
def zeros_local_sizes(x: X) -> torch.Tensor:
    B = x.shape[0]
    T = x.shape[1]
    return x + torch.zeros(B, T, 1)


@symscalar.jit
def full_size(x: X) -> torch.Tensor:
    T = x.size(1)
    return x + torch.full((T, 64), 2.0)


@symscalar.jit
def empty_size(x: X) -> torch.Tensor:
    return torch.empty(x.shape[0], x.shape[1]).fill_(1.0).sum() + x.sum()


@symscalar.jit
def arange_size(x: X) -> torch.Tensor:
    return x + torch.arange(x.shape[1])[:, None]


@symscalar.jit
def arange_bounds(x: X) -> torch.Tensor:
    T = x.shape[1]
    return torch.arange(0, T * 2, 2) + x.sum()


@symscalar.jit
def slice_bound(x: X) -> torch.Tensor:
    T = x.shape[1]
    return x[:, : T - 1]


@symscalar.jit
def narrow_length(x: X) -> torch.Tensor:
    return x.narrow(1, 0, x.shape[1] - 1)


@symscalar.jit
def narrow_start(x: X) -> torch.Tensor:
    return x.narrow(1, x.shape[1] - 1, 1)


@symscalar.jit
def static_dim_in_dim_slot(x: X) -> torch.Tensor:
    return x.sum(x.shape[2] - 63)


@symscalar.jit
def size_as_scalar(x: X) -> torch.Tensor:
    return x * x.shape[1] + x.size(0) / 2


@symscalar.jit
def torch_reshape(x: X) -> torch.Tensor:
    return torch.reshape(x, (x.shape[0] * x.shape[1], 64))


@symscalar.jit
def shape_display_variable(x: X) -> torch.Tensor:
    T = x.shape[1]
    shape = (x.shape[0], T, 64)
    return x.view(shape)


@symscalar.jit
def causal_mask(x: X) -> torch.Tensor:
    T = x.shape[1]
    return torch.tril(torch.ones(T, T)) @ x


@symscalar.jit
def direct_annotation(x: Annotated[torch.Tensor, Dims("N", Dim("L", max=32))]) -> torch.Tensor:
    return x.view(-1, x.size(1), x.shape[2])


@symscalar.jit
def tuple_assigned_sizes(x: X) -> torch.Tensor:
    B, T = x.shape[0], x.shape[1]
    return x[:, : T - 1].reshape(B, -1) + x.view(B * T, 64).sum()


@symscalar.jit
def sum_size(x: X) -> torch.Tensor:
    T = x.shape[1]
    return x.sum(T)  # E: torch.Tensor.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "T" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def softmax_size(x: X) -> torch.Tensor:
    return x.softmax(x.shape[0])  # E: torch.Tensor.softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "x.shape[0]" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def cat_size(x: X) -> torch.Tensor:
    return torch.cat([x, x], x.size(1))  # E: torch.cat: parameter "dim" must be static (a compile-time constant) but got dynamic value "x.size(1)" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def transpose_size(x: X) -> torch.Tensor:
    return x.transpose(0, x.size(1))  # E: torch.Tensor.transpose: parameter "dim1" must be static (a compile-time constant) but got dynamic value "x.size(1)" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def chunk_count_size(x: X) -> torch.Tensor:
    return x.chunk(x.shape[0], 2)[0]  # E: torch.Tensor.chunk: parameter "chunks" must be static (a compile-time constant) but got dynamic value "x.shape[0]" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def mean_size_expression(x: X) -> torch.Tensor:
    d = x.size(1) - 4
    return x.mean(dim=d)  # E: torch.Tensor.mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "d" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def size_as_int_index(x: X) -> torch.Tensor:
    return x[:, x.shape[1] - 1]


@symscalar.jit
def range_of_size(x: X) -> torch.Tensor:
    for _ in range(x.shape[0]):  # E: range() needs the Python value of dynamic value "x.shape[0]" (DynamicInt), which is only known when the compiled program runs...  [symscalar-concretization]
        x = x * 2
    return x


@symscalar.jit
def tuple_assigned_dim(x: X) -> torch.Tensor:
    B, T = x.shape[0], x.shape[1]
    return x.amax(B)  # E: torch.Tensor.amax: parameter "dim" must be static (a compile-time constant) but got dynamic value "B" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def floor_divided_size(x: X) -> torch.Tensor:
    T = x.shape[1]
    return torch.zeros(T // 2, 64).sum() + x.reshape(x.shape[0], -1)


@symscalar.jit
def size_divided_by_size(x: X) -> torch.Tensor:
    return x.view(x.shape[1] // x.shape[0], -1)  # E: torch.Tensor.view: parameter "size" must be static (a compile-time constant) but got dynamic value "x.shape[1] // x.shape[0]" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def view_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return x.view(n, -1)  # E: torch.Tensor.view: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "view" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def ones_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return torch.ones(n, 64) + x  # E: torch.ones: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "ones" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def slice_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return x[:, :n]  # E: torch.Tensor.__getitem__: parameter "indices" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]


@symscalar.jit
def view_size_plus_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return x.view(x.shape[1] + n, -1)  # E: torch.Tensor.view: parameter "size" must be static (a compile-time constant) but got dynamic value "x.shape[1] + n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "view" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def narrow_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return x.narrow(1, 0, n)  # E: torch.Tensor.narrow: parameter "length" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" of "TensorBase" matches argument types "int", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def arange_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return torch.arange(n) + x.sum()  # E: torch.arange: parameter "end" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "arange" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def full_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    return torch.full((n,), 1.0) + x.sum()  # E: torch.full: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "full" has incompatible type "tuple[DynamicInt]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def local_from_parameter(x: X, n: DynamicInt) -> torch.Tensor:
    T = n * 2
    return x.reshape(T, -1)  # E: torch.Tensor.reshape: parameter "shape" must be static (a compile-time constant) but got dynamic value "T" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "reshape" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


X3 = torch.randn(2, 5, 64)
CALLS = [
    (revealed, (X3,)),
    (view_sizes, (X3,)),
    (reshape_size_call, (X3,)),
    (expand_sizes, (X3,)),
    (ones_size, (X3,)),
    (zeros_local_sizes, (X3,)),
    (full_size, (X3,)),
    (empty_size, (X3,)),
    (arange_size, (X3,)),
    (arange_bounds, (X3,)),
    (slice_bound, (X3,)),
    (narrow_length, (X3,)),
    (narrow_start, (X3,)),
    (static_dim_in_dim_slot, (X3,)),
    (size_as_scalar, (X3,)),
    (torch_reshape, (X3,)),
    (shape_display_variable, (X3,)),
    (causal_mask, (X3,)),
    (direct_annotation, (X3,)),
    (tuple_assigned_sizes, (X3,)),
    (tuple_assigned_dim, (X3,)),
    (floor_divided_size, (X3,)),
    (size_divided_by_size, (torch.randn(2, 6, 64),)),
    (sum_size, (X3,)),
    (softmax_size, (X3,)),
    (cat_size, (X3,)),
    (transpose_size, (X3,)),
    (chunk_count_size, (X3,)),
    (mean_size_expression, (X3,)),
    (size_as_int_index, (X3,)),
    (range_of_size, (X3,)),
    (view_parameter, (X3, 5)),
    (ones_parameter, (X3, 5)),
    (slice_parameter, (X3, 3)),
    (view_size_plus_parameter, (X3, 5)),
    (narrow_parameter, (X3, 3)),
    (arange_parameter, (X3, 3)),
    (full_parameter, (X3, 3)),
    (local_from_parameter, (X3, 5)),
]
