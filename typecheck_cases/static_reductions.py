# executable
"""Dynamic values in the static parameters of reductions and softmax (`dim`, `keepdim`,
`correction`, `unbiased`), in the symscalar.ops, torch and Tensor-method spellings.

Each function passes a dynamic value to exactly one static parameter: mypy (with the plugin)
flags that line, and under symscalar.jit the call raises StaticValueRequiredError."""

from typing import Any

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, ops



@symscalar.jit
def ops_amax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.amax(x, n)  # E: symscalar.ops.amax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "amax" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_amax_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.amax(x, 0, b)  # E: symscalar.ops.amax: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "amax" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_amax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.amax(x, n)  # E: torch.amax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "amax" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_amax_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.amax(x, 0, b)  # E: torch.amax: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "amax" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_amax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.amax(n)  # E: torch.Tensor.amax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "amax" of "TensorBase" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_amax_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.amax(0, b)  # E: torch.Tensor.amax: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "amax" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_amin_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.amin(x, n)  # E: symscalar.ops.amin: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "amin" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_amin_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.amin(x, 0, b)  # E: symscalar.ops.amin: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "amin" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_amin_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.amin(x, n)  # E: torch.amin: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "amin" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_amin_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.amin(x, 0, b)  # E: torch.amin: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "amin" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_amin_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.amin(n)  # E: torch.Tensor.amin: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "amin" of "TensorBase" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_amin_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.amin(0, b)  # E: torch.Tensor.amin: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "amin" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_argmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.argmax(x, n)  # E: symscalar.ops.argmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "argmax" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_argmax_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.argmax(x, 0, b)  # E: symscalar.ops.argmax: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "argmax" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_argmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.argmax(x, n)  # E: torch.argmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "argmax" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_argmax_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.argmax(x, 0, b)  # E: torch.argmax: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "argmax" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_argmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.argmax(n)  # E: torch.Tensor.argmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "argmax" of "TensorBase" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_argmax_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.argmax(0, b)  # E: torch.Tensor.argmax: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "argmax" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_argmin_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.argmin(x, n)  # E: symscalar.ops.argmin: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "argmin" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_argmin_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.argmin(x, 0, b)  # E: symscalar.ops.argmin: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "argmin" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_argmin_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.argmin(x, n)  # E: torch.argmin: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "argmin" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_argmin_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.argmin(x, 0, b)  # E: torch.argmin: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "argmin" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_argmin_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.argmin(n)  # E: torch.Tensor.argmin: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "argmin" of "TensorBase" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_argmin_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.argmin(0, b)  # E: torch.Tensor.argmin: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "argmin" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_logsumexp_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.logsumexp(x, n)  # E: symscalar.ops.logsumexp: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "logsumexp" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_logsumexp_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.logsumexp(x, 0, b)  # E: symscalar.ops.logsumexp: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "logsumexp" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_logsumexp_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.logsumexp(x, n)  # E: torch.logsumexp: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "logsumexp" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_logsumexp_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.logsumexp(x, 0, b)  # E: torch.logsumexp: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "logsumexp" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_logsumexp_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.logsumexp(n)  # E: torch.Tensor.logsumexp: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "logsumexp" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_logsumexp_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.logsumexp(0, b)  # E: torch.Tensor.logsumexp: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "logsumexp" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.mean(x, n)  # E: symscalar.ops.mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "mean" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.mean(x, 0, b)  # E: symscalar.ops.mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "mean" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.mean(x, n)  # E: torch.mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "mean" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.mean(x, 0, b)  # E: torch.mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "mean" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.mean(n)  # E: torch.Tensor.mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "mean" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.mean(0, b)  # E: torch.Tensor.mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "mean" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_prod_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.prod(x, n)  # E: symscalar.ops.prod: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "prod" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_prod_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.prod(x, 0, b)  # E: symscalar.ops.prod: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "prod" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_prod_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.prod(x, n)  # E: torch.prod: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "prod" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_prod_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.prod(x, 0, b)  # E: torch.prod: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "prod" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_prod_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.prod(n)  # E: torch.Tensor.prod: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "prod" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_prod_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.prod(0, b)  # E: torch.Tensor.prod: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "prod" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def special_logsumexp_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.special.logsumexp(x, n)  # E: torch.special.logsumexp: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "logsumexp" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_logsumexp_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.special.logsumexp(x, 0, b)  # E: torch.special.logsumexp: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "logsumexp" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_std_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.std(x, n)  # E: symscalar.ops.std: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "std" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_std_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.std(x, 0, correction=n)  # E: symscalar.ops.std: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "correction" to "std" has incompatible type "DynamicInt"; expected "int | float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_std_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.std(x, 0, keepdim=b)  # E: symscalar.ops.std: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "keepdim" to "std" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_std_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std(x, n)  # E: torch.std: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "std" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_std_unbiased(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std(x, 0, unbiased=b)  # E: torch.std: parameter "unbiased" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "std" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_std_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std(x, 0, keepdim=b)  # E: torch.std: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "std" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_std_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std(x, 0, correction=n)  # E: torch.std: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "std" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_std_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.std(n)  # E: torch.Tensor.std: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "std" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_std_unbiased(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.std(0, unbiased=b)  # E: torch.Tensor.std: parameter "unbiased" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "std" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_std_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.std(0, keepdim=b)  # E: torch.Tensor.std: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "std" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_std_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.std(0, correction=n)  # E: torch.Tensor.std: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "std" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_var_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.var(x, n)  # E: symscalar.ops.var: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "var" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_var_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.var(x, 0, correction=n)  # E: symscalar.ops.var: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "correction" to "var" has incompatible type "DynamicInt"; expected "int | float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_var_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.var(x, 0, keepdim=b)  # E: symscalar.ops.var: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "keepdim" to "var" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_var_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var(x, n)  # E: torch.var: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "var" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_var_unbiased(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var(x, 0, unbiased=b)  # E: torch.var: parameter "unbiased" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "var" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_var_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var(x, 0, keepdim=b)  # E: torch.var: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "var" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_var_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var(x, 0, correction=n)  # E: torch.var: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "var" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_var_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.var(n)  # E: torch.Tensor.var: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "var" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_var_unbiased(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.var(0, unbiased=b)  # E: torch.Tensor.var: parameter "unbiased" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "var" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_var_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.var(0, keepdim=b)  # E: torch.Tensor.var: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "var" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_var_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.var(0, correction=n)  # E: torch.Tensor.var: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "var" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_std_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.std_mean(x, n)[0]  # E: symscalar.ops.std_mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "std_mean" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_std_mean_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.std_mean(x, 0, correction=n)[0]  # E: symscalar.ops.std_mean: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "correction" to "std_mean" has incompatible type "DynamicInt"; expected "int | float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_std_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.std_mean(x, 0, keepdim=b)[0]  # E: symscalar.ops.std_mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "keepdim" to "std_mean" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_std_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std_mean(x, n)[0]  # E: torch.std_mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "std_mean" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_std_mean_unbiased(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std_mean(x, 0, unbiased=b)[0]  # E: torch.std_mean: parameter "unbiased" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "std_mean" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_std_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std_mean(x, 0, keepdim=b)[0]  # E: torch.std_mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "std_mean" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_std_mean_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.std_mean(x, 0, correction=n)[0]  # E: torch.std_mean: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "std_mean" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_var_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.var_mean(x, n)[0]  # E: symscalar.ops.var_mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "var_mean" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_var_mean_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.var_mean(x, 0, correction=n)[0]  # E: symscalar.ops.var_mean: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "correction" to "var_mean" has incompatible type "DynamicInt"; expected "int | float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_var_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.var_mean(x, 0, keepdim=b)[0]  # E: symscalar.ops.var_mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "keepdim" to "var_mean" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_var_mean_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var_mean(x, n)[0]  # E: torch.var_mean: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "var_mean" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_var_mean_unbiased(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var_mean(x, 0, unbiased=b)[0]  # E: torch.var_mean: parameter "unbiased" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "var_mean" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_var_mean_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var_mean(x, 0, keepdim=b)[0]  # E: torch.var_mean: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "var_mean" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_var_mean_correction(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.var_mean(x, 0, correction=n)[0]  # E: torch.var_mean: parameter "correction" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "var_mean" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.softmax(x, n)  # E: symscalar.ops.softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "softmax" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.softmax(x, n)  # E: torch.softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "softmax" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.softmax(n)  # E: torch.Tensor.softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "softmax" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.softmax(x, n)  # E: torch.nn.functional.softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "softmax" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.special.softmax(x, n)  # E: torch.special.softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "softmax" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_log_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.log_softmax(x, n)  # E: symscalar.ops.log_softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "log_softmax" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_log_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.log_softmax(x, n)  # E: torch.log_softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "log_softmax" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_log_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.log_softmax(n)  # E: torch.Tensor.log_softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "log_softmax" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_log_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.log_softmax(x, n)  # E: torch.nn.functional.log_softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "log_softmax" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_log_softmax_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.special.log_softmax(x, n)  # E: torch.special.log_softmax: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "log_softmax" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


X = torch.ones(2, 3, 4)
# The torch.special spellings (typed Any by torch's stubs, see above) are not called: mypy
# cannot flag them, while the jit does raise StaticValueRequiredError.


@symscalar.jit
def torch_max_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> Any:
    return torch.max(x, 0, b)  # E: torch.max: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "max" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_max_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> Any:
    return x.max(0, b)  # E: torch.Tensor.max: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "max" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_min_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> Any:
    return torch.min(x, 0, b)  # E: torch.min: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "min" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_min_keepdim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> Any:
    return x.min(0, b)  # E: torch.Tensor.min: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "min" of "TensorBase" matches argument types "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


CALLS = [
    (special_logsumexp_dim, (X, 1, True, 0.5)),
    (special_logsumexp_keepdim, (X, 1, True, 0.5)),
    (special_softmax_dim, (X, 1, True, 0.5)),
    (special_log_softmax_dim, (X, 1, True, 0.5)),
    (torch_max_keepdim, (X, 1, True, 0.5)),
    (method_max_keepdim, (X, 1, True, 0.5)),
    (torch_min_keepdim, (X, 1, True, 0.5)),
    (method_min_keepdim, (X, 1, True, 0.5)),
    (ops_amax_dim, (X, 1, True, 0.5)),
    (ops_amax_keepdim, (X, 1, True, 0.5)),
    (torch_amax_dim, (X, 1, True, 0.5)),
    (torch_amax_keepdim, (X, 1, True, 0.5)),
    (method_amax_dim, (X, 1, True, 0.5)),
    (method_amax_keepdim, (X, 1, True, 0.5)),
    (ops_amin_dim, (X, 1, True, 0.5)),
    (ops_amin_keepdim, (X, 1, True, 0.5)),
    (torch_amin_dim, (X, 1, True, 0.5)),
    (torch_amin_keepdim, (X, 1, True, 0.5)),
    (method_amin_dim, (X, 1, True, 0.5)),
    (method_amin_keepdim, (X, 1, True, 0.5)),
    (ops_argmax_dim, (X, 1, True, 0.5)),
    (ops_argmax_keepdim, (X, 1, True, 0.5)),
    (torch_argmax_dim, (X, 1, True, 0.5)),
    (torch_argmax_keepdim, (X, 1, True, 0.5)),
    (method_argmax_dim, (X, 1, True, 0.5)),
    (method_argmax_keepdim, (X, 1, True, 0.5)),
    (ops_argmin_dim, (X, 1, True, 0.5)),
    (ops_argmin_keepdim, (X, 1, True, 0.5)),
    (torch_argmin_dim, (X, 1, True, 0.5)),
    (torch_argmin_keepdim, (X, 1, True, 0.5)),
    (method_argmin_dim, (X, 1, True, 0.5)),
    (method_argmin_keepdim, (X, 1, True, 0.5)),
    (ops_logsumexp_dim, (X, 1, True, 0.5)),
    (ops_logsumexp_keepdim, (X, 1, True, 0.5)),
    (torch_logsumexp_dim, (X, 1, True, 0.5)),
    (torch_logsumexp_keepdim, (X, 1, True, 0.5)),
    (method_logsumexp_dim, (X, 1, True, 0.5)),
    (method_logsumexp_keepdim, (X, 1, True, 0.5)),
    (ops_mean_dim, (X, 1, True, 0.5)),
    (ops_mean_keepdim, (X, 1, True, 0.5)),
    (torch_mean_dim, (X, 1, True, 0.5)),
    (torch_mean_keepdim, (X, 1, True, 0.5)),
    (method_mean_dim, (X, 1, True, 0.5)),
    (method_mean_keepdim, (X, 1, True, 0.5)),
    (ops_prod_dim, (X, 1, True, 0.5)),
    (ops_prod_keepdim, (X, 1, True, 0.5)),
    (torch_prod_dim, (X, 1, True, 0.5)),
    (torch_prod_keepdim, (X, 1, True, 0.5)),
    (method_prod_dim, (X, 1, True, 0.5)),
    (method_prod_keepdim, (X, 1, True, 0.5)),
    (ops_std_dim, (X, 1, True, 0.5)),
    (ops_std_correction, (X, 1, True, 0.5)),
    (ops_std_keepdim, (X, 1, True, 0.5)),
    (torch_std_dim, (X, 1, True, 0.5)),
    (torch_std_unbiased, (X, 1, True, 0.5)),
    (torch_std_keepdim, (X, 1, True, 0.5)),
    (torch_std_correction, (X, 1, True, 0.5)),
    (method_std_dim, (X, 1, True, 0.5)),
    (method_std_unbiased, (X, 1, True, 0.5)),
    (method_std_keepdim, (X, 1, True, 0.5)),
    (method_std_correction, (X, 1, True, 0.5)),
    (ops_var_dim, (X, 1, True, 0.5)),
    (ops_var_correction, (X, 1, True, 0.5)),
    (ops_var_keepdim, (X, 1, True, 0.5)),
    (torch_var_dim, (X, 1, True, 0.5)),
    (torch_var_unbiased, (X, 1, True, 0.5)),
    (torch_var_keepdim, (X, 1, True, 0.5)),
    (torch_var_correction, (X, 1, True, 0.5)),
    (method_var_dim, (X, 1, True, 0.5)),
    (method_var_unbiased, (X, 1, True, 0.5)),
    (method_var_keepdim, (X, 1, True, 0.5)),
    (method_var_correction, (X, 1, True, 0.5)),
    (ops_std_mean_dim, (X, 1, True, 0.5)),
    (ops_std_mean_correction, (X, 1, True, 0.5)),
    (ops_std_mean_keepdim, (X, 1, True, 0.5)),
    (torch_std_mean_dim, (X, 1, True, 0.5)),
    (torch_std_mean_unbiased, (X, 1, True, 0.5)),
    (torch_std_mean_keepdim, (X, 1, True, 0.5)),
    (torch_std_mean_correction, (X, 1, True, 0.5)),
    (ops_var_mean_dim, (X, 1, True, 0.5)),
    (ops_var_mean_correction, (X, 1, True, 0.5)),
    (ops_var_mean_keepdim, (X, 1, True, 0.5)),
    (torch_var_mean_dim, (X, 1, True, 0.5)),
    (torch_var_mean_unbiased, (X, 1, True, 0.5)),
    (torch_var_mean_keepdim, (X, 1, True, 0.5)),
    (torch_var_mean_correction, (X, 1, True, 0.5)),
    (ops_softmax_dim, (X, 1, True, 0.5)),
    (torch_softmax_dim, (X, 1, True, 0.5)),
    (method_softmax_dim, (X, 1, True, 0.5)),
    (F_softmax_dim, (X, 1, True, 0.5)),
    (ops_log_softmax_dim, (X, 1, True, 0.5)),
    (torch_log_softmax_dim, (X, 1, True, 0.5)),
    (method_log_softmax_dim, (X, 1, True, 0.5)),
    (F_log_softmax_dim, (X, 1, True, 0.5)),
]
