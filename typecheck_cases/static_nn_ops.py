# executable
"""Dynamic values in the static parameters of the indexing and language-model ops (dims,
`k`, `padding_idx`, `num_classes`, `diagonal`, `repeats`, `ignore_index`), and dynamic values
where they are allowed (`masked_fill`'s value, `addmm`'s beta/alpha, `label_smoothing`).

Each function of the first group passes a dynamic value to exactly one static parameter:
mypy (with the plugin) flags that line, and under symscalar.jit the call raises
StaticValueRequiredError. The second group type-checks cleanly and runs."""

import torch
import torch.nn.functional as F

import symscalar
from typing import Any

from symscalar import DynamicBool, DynamicFloat, DynamicInt, ops


@symscalar.jit
def torch_gather_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.gather(x, n, i)  # E: torch.gather: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "gather" matches argument types "Tensor", "DynamicInt", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_index_select_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return x.index_select(n, i[0])  # E: torch.Tensor.index_select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "index_select" of "TensorBase" matches argument types "DynamicInt", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_embedding_padding_idx(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return F.embedding(i, x, padding_idx=n)  # E: torch.nn.functional.embedding: parameter "padding_idx" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding_idx" to "embedding" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_topk_k(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.topk(x, n)[0]  # E: torch.topk: parameter "k" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "topk" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_cumsum_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.cumsum(x, n)  # E: torch.cumsum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "cumsum" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_one_hot_num_classes(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return F.one_hot(i, n)  # E: torch.nn.functional.one_hot: parameter "num_classes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "one_hot" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_tril_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.tril(x, n)  # E: torch.tril: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "tril" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_repeat_interleave_repeats(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return ops.repeat_interleave(x, n, 0)  # E: symscalar.ops.repeat_interleave: parameter "repeats" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "repeat_interleave" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_cross_entropy_ignore_index(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return F.cross_entropy(x, i[:, 0], ignore_index=n)  # E: torch.nn.functional.cross_entropy: parameter "ignore_index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "ignore_index" to "cross_entropy" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def dynamic_allowed(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    y = x.masked_fill(x > 0, f) + torch.addmm(x, x, x.mT, beta=f, alpha=f)
    return y + F.cross_entropy(x, i[:, 0], label_smoothing=f)


# One function per remaining static parameter of every spelling (generated once from
# symscalar/_static_params.py; the expectations are mypy's output).

@symscalar.jit
def ops_argsort_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.argsort(x, dim=n)  # E: symscalar.ops.argsort: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "dim" to "argsort" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_argsort_descending(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.argsort(x, descending=b)  # E: symscalar.ops.argsort: parameter "descending" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "descending" to "argsort" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_argsort_stable(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.argsort(x, stable=b)  # E: symscalar.ops.argsort: parameter "stable" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "stable" to "argsort" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_cross_entropy_ignore_index(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.cross_entropy(x, i[:, 0], ignore_index=n)  # E: symscalar.ops.cross_entropy: parameter "ignore_index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "ignore_index" to "cross_entropy" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_cumsum_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.cumsum(x, n)  # E: symscalar.ops.cumsum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "cumsum" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_embedding_padding_idx(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.embedding(i, x, padding_idx=n)  # E: symscalar.ops.embedding: parameter "padding_idx" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "padding_idx" to "embedding" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_embedding_scale_grad_by_freq(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.embedding(i, x, scale_grad_by_freq=b)  # E: symscalar.ops.embedding: parameter "scale_grad_by_freq" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "scale_grad_by_freq" to "embedding" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_gather_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.gather(x, n, i)  # E: symscalar.ops.gather: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "gather" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_index_add_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.index_add(x, n, i[0], x)  # E: symscalar.ops.index_add: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "index_add" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_index_put_accumulate(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.index_put(x, (i[0],), x, b)  # E: symscalar.ops.index_put: parameter "accumulate" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 4 to "index_put" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_index_select_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.index_select(x, n, i[0])  # E: symscalar.ops.index_select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "index_select" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_nll_loss_ignore_index(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.nll_loss(x, i[:, 0], ignore_index=n)  # E: symscalar.ops.nll_loss: parameter "ignore_index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "ignore_index" to "nll_loss" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_one_hot_num_classes(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.one_hot(i, n)  # E: symscalar.ops.one_hot: parameter "num_classes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "one_hot" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_repeat_interleave_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.repeat_interleave(x, 2, n)  # E: symscalar.ops.repeat_interleave: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 3 to "repeat_interleave" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_scatter_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.scatter(x, n, i, x)  # E: symscalar.ops.scatter: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "scatter" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_scatter_add_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.scatter_add(x, n, i, x)  # E: symscalar.ops.scatter_add: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "scatter_add" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_sort_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.sort(x, dim=n)[0]  # E: symscalar.ops.sort: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "dim" to "sort" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_sort_descending(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.sort(x, descending=b)[0]  # E: symscalar.ops.sort: parameter "descending" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "descending" to "sort" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_sort_stable(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.sort(x, stable=b)[0]  # E: symscalar.ops.sort: parameter "stable" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "stable" to "sort" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_take_along_dim_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.take_along_dim(x, i, n)  # E: symscalar.ops.take_along_dim: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 3 to "take_along_dim" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_topk_k(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.topk(x, n)[0]  # E: symscalar.ops.topk: parameter "k" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "topk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_topk_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.topk(x, 1, dim=n)[0]  # E: symscalar.ops.topk: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "dim" to "topk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_topk_largest(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.topk(x, 1, largest=b)[0]  # E: symscalar.ops.topk: parameter "largest" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "largest" to "topk" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_topk_sorted(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.topk(x, 1, sorted=b)[0]  # E: symscalar.ops.topk: parameter "sorted" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "sorted" to "topk" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_tril_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.tril(x, n)  # E: symscalar.ops.tril: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "tril" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def ops_triu_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return ops.triu(x, n)  # E: symscalar.ops.triu: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "triu" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_argsort_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.argsort(dim=n)  # E: torch.Tensor.argsort: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "argsort" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_argsort_descending(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.argsort(descending=b)  # E: torch.Tensor.argsort: parameter "descending" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "argsort" of "TensorBase" matches argument type "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def method_argsort_stable(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.argsort(stable=b)  # E: torch.Tensor.argsort: parameter "stable" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "argsort" of "TensorBase" matches argument type "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def method_cumsum_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.cumsum(n)  # E: torch.Tensor.cumsum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "cumsum" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_gather_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.gather(n, i)  # E: torch.Tensor.gather: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "gather" of "TensorBase" matches argument types "DynamicInt", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_gather_sparse_grad(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.gather(0, i, sparse_grad=b)  # E: torch.Tensor.gather: parameter "sparse_grad" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "gather" of "TensorBase" matches argument types "int", "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_index_add_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.index_add(n, i[0], x)  # E: torch.Tensor.index_add: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "index_add" of "TensorBase" matches argument types "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_index_copy_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.index_copy(n, i[0], x)  # E: torch.Tensor.index_copy: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "index_copy" of "TensorBase" matches argument types "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_index_put_accumulate(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.index_put((i[0],), x, b)  # E: torch.Tensor.index_put: parameter "accumulate" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 3 to "index_put" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_repeat_interleave_repeats(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.repeat_interleave(n)  # E: torch.Tensor.repeat_interleave: parameter "repeats" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "repeat_interleave" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_repeat_interleave_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.repeat_interleave(2, n)  # E: torch.Tensor.repeat_interleave: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "repeat_interleave" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_repeat_interleave_output_size(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.repeat_interleave(2, 0, output_size=n)  # E: torch.Tensor.repeat_interleave: parameter "output_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "repeat_interleave" of "TensorBase" matches argument types "int", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_scatter_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.scatter(n, i, x)  # E: torch.Tensor.scatter: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "scatter" of "TensorBase" matches argument types "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_scatter_add_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.scatter_add(n, i, x)  # E: torch.Tensor.scatter_add: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "scatter_add" of "TensorBase" matches argument types "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_sort_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.sort(dim=n)[0]  # E: torch.Tensor.sort: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "sort" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def method_sort_descending(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.sort(descending=b)[0]  # E: torch.Tensor.sort: parameter "descending" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "sort" of "TensorBase" matches argument type "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def method_sort_stable(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.sort(stable=b)[0]  # E: torch.Tensor.sort: parameter "stable" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "sort" of "TensorBase" matches argument type "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def method_take_along_dim_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.take_along_dim(i, n)  # E: torch.Tensor.take_along_dim: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "take_along_dim" of "TensorBase" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_topk_k(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.topk(n)[0]  # E: torch.Tensor.topk: parameter "k" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 1 to "topk" of "TensorBase" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_topk_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.topk(1, dim=n)[0]  # E: torch.Tensor.topk: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "dim" to "topk" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_topk_largest(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.topk(1, largest=b)[0]  # E: torch.Tensor.topk: parameter "largest" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "largest" to "topk" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_topk_sorted(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.topk(1, sorted=b)[0]  # E: torch.Tensor.topk: parameter "sorted" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "sorted" to "topk" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_tril_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.tril(n)  # E: torch.Tensor.tril: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 1 to "tril" of "TensorBase" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_triu_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.triu(n)  # E: torch.Tensor.triu: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 1 to "triu" of "TensorBase" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_type_non_blocking(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return x.type(torch.float64, non_blocking=b)  # E: torch.Tensor.type: parameter "non_blocking" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "type" of "TensorBase" matches argument types "dtype", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_argsort_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.argsort(x, dim=n)  # E: torch.argsort: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "argsort" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_argsort_descending(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.argsort(x, descending=b)  # E: torch.argsort: parameter "descending" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "argsort" matches argument types "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_argsort_stable(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.argsort(x, stable=b)  # E: torch.argsort: parameter "stable" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "argsort" matches argument types "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_gather_sparse_grad(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.gather(x, 0, i, sparse_grad=b)  # E: torch.gather: parameter "sparse_grad" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "gather" matches argument types "Tensor", "int", "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_index_add_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.index_add(x, n, i[0], x)  # E: torch.index_add: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "index_add" matches argument types "Tensor", "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_index_copy_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.index_copy(x, n, i[0], x)  # E: torch.index_copy: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "index_copy" matches argument types "Tensor", "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_index_put_accumulate(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.index_put(x, (i[0],), x, b)  # E: torch.index_put: parameter "accumulate" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 4 to "index_put" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_index_select_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.index_select(x, n, i[0])  # E: torch.index_select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "index_select" matches argument types "Tensor", "DynamicInt", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def F_cross_entropy_size_average(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.cross_entropy(x, i[:, 0], size_average=b)  # E: torch.nn.functional.cross_entropy: parameter "size_average" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "size_average" to "cross_entropy" has incompatible type "DynamicBool"; expected "bool | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_cross_entropy_reduce(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.cross_entropy(x, i[:, 0], reduce=b)  # E: torch.nn.functional.cross_entropy: parameter "reduce" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "reduce" to "cross_entropy" has incompatible type "DynamicBool"; expected "bool | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_embedding_max_norm(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.embedding(i, x, max_norm=f)  # E: torch.nn.functional.embedding: parameter "max_norm" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "max_norm" to "embedding" has incompatible type "DynamicFloat"; expected "float | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_embedding_norm_type(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.embedding(i, x, norm_type=f)  # E: torch.nn.functional.embedding: parameter "norm_type" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "norm_type" to "embedding" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_embedding_scale_grad_by_freq(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.embedding(i, x, scale_grad_by_freq=b)  # E: torch.nn.functional.embedding: parameter "scale_grad_by_freq" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "scale_grad_by_freq" to "embedding" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_embedding_sparse(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.embedding(i, x, sparse=b)  # E: torch.nn.functional.embedding: parameter "sparse" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "sparse" to "embedding" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_nll_loss_size_average(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.nll_loss(x, i[:, 0], size_average=b)  # E: torch.nn.functional.nll_loss: parameter "size_average" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "size_average" to "nll_loss" has incompatible type "DynamicBool"; expected "bool | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_nll_loss_ignore_index(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.nll_loss(x, i[:, 0], ignore_index=n)  # E: torch.nn.functional.nll_loss: parameter "ignore_index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "ignore_index" to "nll_loss" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def F_nll_loss_reduce(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return F.nll_loss(x, i[:, 0], reduce=b)  # E: torch.nn.functional.nll_loss: parameter "reduce" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "reduce" to "nll_loss" has incompatible type "DynamicBool"; expected "bool | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_repeat_interleave_repeats(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.repeat_interleave(x, n)  # E: torch.repeat_interleave: parameter "repeats" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "repeat_interleave" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_repeat_interleave_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.repeat_interleave(x, 2, n)  # E: torch.repeat_interleave: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "repeat_interleave" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_repeat_interleave_output_size(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.repeat_interleave(x, 2, 0, output_size=n)  # E: torch.repeat_interleave: parameter "output_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "repeat_interleave" matches argument types "Tensor", "int", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_scatter_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.scatter(x, n, i, x)  # E: torch.scatter: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "scatter" matches argument types "Tensor", "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_scatter_add_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.scatter_add(x, n, i, x)  # E: torch.scatter_add: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "scatter_add" matches argument types "Tensor", "DynamicInt", "Tensor", "Tensor"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_sort_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.sort(x, dim=n)[0]  # E: torch.sort: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "sort" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue

@symscalar.jit
def torch_sort_descending(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.sort(x, descending=b)[0]  # E: torch.sort: parameter "descending" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "sort" matches argument types "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_sort_stable(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.sort(x, stable=b)[0]  # E: torch.sort: parameter "stable" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: No overload variant of "sort" matches argument types "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_take_along_dim_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.take_along_dim(x, i, n)  # E: torch.take_along_dim: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 3 to "take_along_dim" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_topk_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.topk(x, 1, dim=n)[0]  # E: torch.topk: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "dim" to "topk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_topk_largest(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.topk(x, 1, largest=b)[0]  # E: torch.topk: parameter "largest" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "largest" to "topk" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_topk_sorted(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.topk(x, 1, sorted=b)[0]  # E: torch.topk: parameter "sorted" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument "sorted" to "topk" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def torch_triu_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat, b: DynamicBool) -> Any:
    return torch.triu(x, n)  # E: torch.triu: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt); declare the value static where it enters the jitted function (annotate it StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program; or pass symscalar.specialize(value): the program is guarded on its current value  [symscalar-static-required]  # plain-E: Argument 2 to "triu" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType

X = torch.randn(3, 3)
I = torch.zeros(3, 2, dtype=torch.int64)
CALLS = [
    (method_index_copy_dim, (X, I, 1, 0.5, True)),
    (torch_index_copy_dim, (X, I, 1, 0.5, True)),
    (torch_gather_dim, (X, I, 1, 0.5)),
    (method_index_select_dim, (X, I, 1, 0.5)),
    (F_embedding_padding_idx, (X, I, 1, 0.5)),
    (torch_topk_k, (X, I, 1, 0.5)),
    (torch_cumsum_dim, (X, I, 1, 0.5)),
    (F_one_hot_num_classes, (X, I, 1, 0.5)),
    (torch_tril_diagonal, (X, I, 1, 0.5)),
    (ops_repeat_interleave_repeats, (X, I, 1, 0.5)),
    (F_cross_entropy_ignore_index, (X, I, 1, 0.5)),
    (dynamic_allowed, (X, I, 1, 0.5)),
    (ops_argsort_dim, (X, I, 1, 0.5, True)),
    (ops_argsort_descending, (X, I, 1, 0.5, True)),
    (ops_argsort_stable, (X, I, 1, 0.5, True)),
    (ops_cross_entropy_ignore_index, (X, I, 1, 0.5, True)),
    (ops_cumsum_dim, (X, I, 1, 0.5, True)),
    (ops_embedding_padding_idx, (X, I, 1, 0.5, True)),
    (ops_embedding_scale_grad_by_freq, (X, I, 1, 0.5, True)),
    (ops_gather_dim, (X, I, 1, 0.5, True)),
    (ops_index_add_dim, (X, I, 1, 0.5, True)),
    (ops_index_put_accumulate, (X, I, 1, 0.5, True)),
    (ops_index_select_dim, (X, I, 1, 0.5, True)),
    (ops_nll_loss_ignore_index, (X, I, 1, 0.5, True)),
    (ops_one_hot_num_classes, (X, I, 1, 0.5, True)),
    (ops_repeat_interleave_dim, (X, I, 1, 0.5, True)),
    (ops_scatter_dim, (X, I, 1, 0.5, True)),
    (ops_scatter_add_dim, (X, I, 1, 0.5, True)),
    (ops_sort_dim, (X, I, 1, 0.5, True)),
    (ops_sort_descending, (X, I, 1, 0.5, True)),
    (ops_sort_stable, (X, I, 1, 0.5, True)),
    (ops_take_along_dim_dim, (X, I, 1, 0.5, True)),
    (ops_topk_k, (X, I, 1, 0.5, True)),
    (ops_topk_dim, (X, I, 1, 0.5, True)),
    (ops_topk_largest, (X, I, 1, 0.5, True)),
    (ops_topk_sorted, (X, I, 1, 0.5, True)),
    (ops_tril_diagonal, (X, I, 1, 0.5, True)),
    (ops_triu_diagonal, (X, I, 1, 0.5, True)),
    (method_argsort_dim, (X, I, 1, 0.5, True)),
    (method_argsort_descending, (X, I, 1, 0.5, True)),
    (method_argsort_stable, (X, I, 1, 0.5, True)),
    (method_cumsum_dim, (X, I, 1, 0.5, True)),
    (method_gather_dim, (X, I, 1, 0.5, True)),
    (method_gather_sparse_grad, (X, I, 1, 0.5, True)),
    (method_index_add_dim, (X, I, 1, 0.5, True)),
    (method_index_put_accumulate, (X, I, 1, 0.5, True)),
    (method_repeat_interleave_repeats, (X, I, 1, 0.5, True)),
    (method_repeat_interleave_dim, (X, I, 1, 0.5, True)),
    (method_repeat_interleave_output_size, (X, I, 1, 0.5, True)),
    (method_scatter_dim, (X, I, 1, 0.5, True)),
    (method_scatter_add_dim, (X, I, 1, 0.5, True)),
    (method_sort_dim, (X, I, 1, 0.5, True)),
    (method_sort_descending, (X, I, 1, 0.5, True)),
    (method_sort_stable, (X, I, 1, 0.5, True)),
    (method_take_along_dim_dim, (X, I, 1, 0.5, True)),
    (method_topk_k, (X, I, 1, 0.5, True)),
    (method_topk_dim, (X, I, 1, 0.5, True)),
    (method_topk_largest, (X, I, 1, 0.5, True)),
    (method_topk_sorted, (X, I, 1, 0.5, True)),
    (method_tril_diagonal, (X, I, 1, 0.5, True)),
    (method_triu_diagonal, (X, I, 1, 0.5, True)),
    (method_type_non_blocking, (X, I, 1, 0.5, True)),
    (torch_argsort_dim, (X, I, 1, 0.5, True)),
    (torch_argsort_descending, (X, I, 1, 0.5, True)),
    (torch_argsort_stable, (X, I, 1, 0.5, True)),
    (torch_gather_sparse_grad, (X, I, 1, 0.5, True)),
    (torch_index_add_dim, (X, I, 1, 0.5, True)),
    (torch_index_put_accumulate, (X, I, 1, 0.5, True)),
    (torch_index_select_dim, (X, I, 1, 0.5, True)),
    (F_cross_entropy_size_average, (X, I, 1, 0.5, True)),
    (F_cross_entropy_reduce, (X, I, 1, 0.5, True)),
    (F_embedding_max_norm, (X, I, 1, 0.5, True)),
    (F_embedding_norm_type, (X, I, 1, 0.5, True)),
    (F_embedding_scale_grad_by_freq, (X, I, 1, 0.5, True)),
    (F_embedding_sparse, (X, I, 1, 0.5, True)),
    (F_nll_loss_size_average, (X, I, 1, 0.5, True)),
    (F_nll_loss_ignore_index, (X, I, 1, 0.5, True)),
    (F_nll_loss_reduce, (X, I, 1, 0.5, True)),
    (torch_repeat_interleave_repeats, (X, I, 1, 0.5, True)),
    (torch_repeat_interleave_dim, (X, I, 1, 0.5, True)),
    (torch_repeat_interleave_output_size, (X, I, 1, 0.5, True)),
    (torch_scatter_dim, (X, I, 1, 0.5, True)),
    (torch_scatter_add_dim, (X, I, 1, 0.5, True)),
    (torch_sort_dim, (X, I, 1, 0.5, True)),
    (torch_sort_descending, (X, I, 1, 0.5, True)),
    (torch_sort_stable, (X, I, 1, 0.5, True)),
    (torch_take_along_dim_dim, (X, I, 1, 0.5, True)),
    (torch_topk_dim, (X, I, 1, 0.5, True)),
    (torch_topk_largest, (X, I, 1, 0.5, True)),
    (torch_topk_sorted, (X, I, 1, 0.5, True)),
    (torch_triu_diagonal, (X, I, 1, 0.5, True)),
]
