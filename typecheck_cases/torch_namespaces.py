# executable
"""torch.special, torch.linalg and torch.fft: torch builds them from C builtins of modules without a
stub (``logsumexp = _add_docstr(_special.special_logsumexp, ...)``), so every function there was
``Any`` to every checker and a dynamic value in a static parameter went unseen, though the run time
refuses it. symscalar's torch stubs declare their signatures (``torch_stubs.NAMESPACES``, from
torch's native_functions.yaml): the registered ops (``torch.special.logsumexp``) get the plugin's
message, the others (opaque torch calls at run time, static where their schema says ``int``/``bool``)
the checkers' own; dynamic numbers stay fine where the schema takes a Scalar or a float."""

from typing import Any

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt


@symscalar.jit
def special_logsumexp_dynamic_dim(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.special.logsumexp(x, dim=n)  # E: torch.special.logsumexp: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "dim" to "logsumexp" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_logsumexp_dynamic_keepdim(x: torch.Tensor, b: DynamicBool) -> Any:
    return torch.special.logsumexp(x, 1, keepdim=b)  # E: torch.special.logsumexp: parameter "keepdim" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "keepdim" to "logsumexp" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_polygamma_dynamic_order(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.special.polygamma(n, x)  # E: Argument 1 to "polygamma" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_multigammaln_dynamic_p(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.special.multigammaln(x + 3, n)  # E: Argument 2 to "multigammaln" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def special_static(x: torch.Tensor, s: DynamicFloat) -> Any:
    y = torch.special.logsumexp(x, 1) + torch.special.xlogy(x, s) + torch.special.polygamma(1, x + 1)
    return y + torch.special.softmax(x, 1) * s + torch.special.logit(x.sigmoid(), eps=s)


@symscalar.jit
def linalg_vector_norm_dynamic_dim(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.linalg.vector_norm(x, dim=n)  # E: Argument "dim" to "vector_norm" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def linalg_matrix_norm_dynamic_keepdim(x: torch.Tensor, b: DynamicBool) -> Any:
    return torch.linalg.matrix_norm(x, keepdim=b)  # E: No overload variant of "matrix_norm" matches argument types "Tensor", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def linalg_matrix_power_dynamic_exponent(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.linalg.matrix_power(x, n)  # E: Argument 2 to "matrix_power" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def linalg_static(x: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.linalg.vector_norm(x, ord=s, dim=1) + torch.linalg.matrix_norm(x).sum() + torch.linalg.det(x).sum()


@symscalar.jit
def fft_dynamic_length(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.fft.fft(x, n=n)  # E: Argument "n" to "fft" has incompatible type "DynamicInt"; expected "int | SymInt | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def fft_dynamic_dim(x: torch.Tensor, n: DynamicInt) -> Any:
    return torch.fft.rfft(x, dim=n)  # E: Argument "dim" to "rfft" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def fft_static(x: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.fft.irfft(torch.fft.rfft(x * s, n=4, dim=-1, norm="ortho"), n=4).abs()


X = torch.rand(4, 4)
CALLS = [
    (special_logsumexp_dynamic_dim, (X, 1)),
    (special_logsumexp_dynamic_keepdim, (X, True)),
    (special_polygamma_dynamic_order, (X, 1)),
    (special_multigammaln_dynamic_p, (X, 2)),
    (special_static, (X, 0.5)),
    (linalg_vector_norm_dynamic_dim, (X, 1)),
    (linalg_matrix_norm_dynamic_keepdim, (X, True)),
    (linalg_matrix_power_dynamic_exponent, (X, 2)),
    (linalg_static, (X, 2.0)),
    (fft_dynamic_length, (X, 4)),
    (fft_dynamic_dim, (X, 1)),
    (fft_static, (X, 0.5)),
]
