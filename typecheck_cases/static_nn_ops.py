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
from symscalar import DynamicFloat, DynamicInt, ops


@symscalar.jit
def torch_gather_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.gather(x, n, i)  # E: torch.gather: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "gather" matches argument types "Tensor", "DynamicInt", "Tensor"  [call-overload]


@symscalar.jit
def method_index_select_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return x.index_select(n, i[0])  # E: torch.Tensor.index_select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "index_select" of "TensorBase" matches argument types "DynamicInt", "Tensor"  [call-overload]


@symscalar.jit
def F_embedding_padding_idx(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return F.embedding(i, x, padding_idx=n)  # E: torch.nn.functional.embedding: parameter "padding_idx" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding_idx" to "embedding" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]


@symscalar.jit
def torch_topk_k(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.topk(x, n)[0]  # E: torch.topk: parameter "k" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "topk" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]


@symscalar.jit
def torch_cumsum_dim(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.cumsum(x, n)  # E: torch.cumsum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "cumsum" matches argument types "Tensor", "DynamicInt"  [call-overload]


@symscalar.jit
def F_one_hot_num_classes(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return F.one_hot(i, n)  # E: torch.nn.functional.one_hot: parameter "num_classes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "one_hot" has incompatible type "DynamicInt"; expected "int"  [arg-type]


@symscalar.jit
def torch_tril_diagonal(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return torch.tril(x, n)  # E: torch.tril: parameter "diagonal" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "tril" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]


@symscalar.jit
def ops_repeat_interleave_repeats(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return ops.repeat_interleave(x, n, 0)  # E: symscalar.ops.repeat_interleave: parameter "repeats" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "repeat_interleave" has incompatible type "DynamicInt"; expected "int"  [arg-type]


@symscalar.jit
def F_cross_entropy_ignore_index(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    return F.cross_entropy(x, i[:, 0], ignore_index=n)  # E: torch.nn.functional.cross_entropy: parameter "ignore_index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "ignore_index" to "cross_entropy" has incompatible type "DynamicInt"; expected "int"  [arg-type]


@symscalar.jit
def dynamic_allowed(x: torch.Tensor, i: torch.Tensor, n: DynamicInt, f: DynamicFloat) -> torch.Tensor:
    y = x.masked_fill(x > 0, f) + torch.addmm(x, x, x.mT, beta=f, alpha=f)  # plain-E: No overload variant of "masked_fill" of "TensorBase" matches argument types "Tensor", "DynamicFloat"  [call-overload]  # plain-E: No overload variant of "addmm" matches argument types...  [call-overload]
    return y + F.cross_entropy(x, i[:, 0], label_smoothing=f)  # plain-E: Argument "label_smoothing" to "cross_entropy" has incompatible type "DynamicFloat"; expected "float"  [arg-type]


X = torch.randn(3, 3)
I = torch.zeros(3, 2, dtype=torch.int64)
CALLS = [
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
]
