"""Helpers shared by the op modules: meta functions from torch's meta tensors, dim handling."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from symscalar.trace import Atom, ScalarVar, TensorVar

__all__ = [
    "torch_meta", "output_device", "canonical_dim", "canonical_dims", "result_dtype",
    "holomorphic", "Tensor",
]

Tensor = torch.Tensor

# A representative value of each dynamic scalar type: enough for shape and dtype inference.
_EXAMPLE = {int: 2, float: 2.0, bool: True}


def output_device(atoms: Sequence[Atom]) -> torch.device:
    """The device of an op's result: the first tensor with dims, else the first tensor."""
    tensors = [a for a in atoms if isinstance(a, TensorVar)]
    if not tensors:
        return torch.device("cpu")
    for t in tensors:
        if t.ndim > 0:
            return t.device
    return tensors[0].device


def _to_meta(a: Atom) -> Any:
    if isinstance(a, TensorVar):
        return torch.empty(a.shape, dtype=a.dtype, device="meta")
    if isinstance(a, ScalarVar):
        return _EXAMPLE[a.dtype]
    return a


def _from_meta(result: Any, device: torch.device) -> Any:
    if isinstance(result, torch.Tensor):
        return TensorVar(tuple(result.shape), result.dtype, device)
    if isinstance(result, (tuple, list)):
        return tuple(_from_meta(r, device) for r in result)
    raise TypeError(f"meta evaluation returned {type(result).__name__}")


def torch_meta(impl: Callable[..., Any]) -> Callable[..., Any]:
    """A meta function that runs the torch lowering on meta tensors: shapes, dtypes, type
    promotion and argument validation are exactly torch's. The device is the inputs'."""

    def meta(*atoms: Atom, **params: Any) -> Any:
        device = params.get("device") or output_device(atoms)
        meta_params = {**params, "device": "meta"} if "device" in params else params
        result = impl(*(_to_meta(a) for a in atoms), **meta_params)
        return _from_meta(result, torch.device(device))

    return meta


def result_dtype(a: Any, b: Any) -> torch.dtype:
    """``torch.result_type(a, b)`` for traced or real tensors, static or dynamic numbers: the
    dtype torch's binary ops compute in. A dynamic number promotes like its Python type."""

    def example(v: Any) -> Any:
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return torch.empty((1,) * min(len(v.shape), 1), dtype=v.dtype, device="meta")
        return _EXAMPLE.get(getattr(v, "_python_type", None), v)  # type: ignore[arg-type]

    return torch.result_type(example(a), example(b))


def canonical_dim(dim: int, ndim: int) -> int:
    """A dim in ``[-ndim, ndim)`` (``[-1, 0]`` for a 0-d tensor) as a non-negative int."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})"
        )
    return dim % bound if ndim > 0 else 0


def canonical_dims(dims: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Reduction dims as a sorted tuple of non-negative ints; None or () means all dims."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    if len(dims) == 0:
        return tuple(range(ndim))
    out = tuple(sorted(canonical_dim(d, ndim) for d in dims))
    if len(set(out)) != len(out):
        raise ValueError(f"dim {tuple(dims)} appears multiple times in the list of dims")
    return out if ndim > 0 else ()


def unbroadcast(ct: Any, shape: Sequence[int]) -> Any:
    """Sum a cotangent down to ``shape`` (the inverse of broadcasting ``shape`` to
    ``ct.shape``). The dims come from static shapes, so they are static by construction."""
    lead = ct.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and ct.shape[lead + i] != 1
    )
    if dims:
        ct = ct.sum(dims, keepdim=True)
    if tuple(ct.shape) != tuple(shape):
        ct = ct.reshape(tuple(shape))
    return ct


def grad_for(ct: Any, arg: Any) -> Any:
    """The cotangent of a broadcasting elementwise operand: None for a scalar operand."""
    if not hasattr(arg, "shape"):
        return None
    return unbroadcast(ct, arg.shape)


def _is_complex(v: Any) -> bool:
    return hasattr(v, "dtype") and hasattr(v, "shape") and v.dtype.is_complex


def holomorphic(rule: Callable[..., Any]) -> Callable[..., Any]:
    """Make a vjp rule written with the real derivative right for complex values too.

    torch's convention for a holomorphic ``f`` is ``grad = ct * conj(f'(z))``; a rule written
    for real inputs computes ``ct * f'(z)``. Since ``conj(rule(conj(ct))) = ct * conj(f'(z))``,
    conjugating the cotangent and the rule's results is exact for every holomorphic op, and
    skipped (no trace op) when no operand is complex. A real operand of a complex op then gets
    a complex gradient, of which the grad transform keeps the real part, as torch does.
    """

    def vjp(ct: Any, out: Any, *args: Any, **params: Any) -> Any:
        cts = ct if isinstance(ct, tuple) else (ct,)
        if not any(_is_complex(v) for v in (*cts, *args)):
            return rule(ct, out, *args, **params)
        conj_ct = tuple(_conj(c) for c in cts) if isinstance(ct, tuple) else _conj(ct)
        return tuple(_conj(g) for g in rule(conj_ct, out, *args, **params))

    return vjp


def _conj(v: Any) -> Any:
    """The complex conjugate of a traced tensor (``torch.conj_physical`` routes to the op);
    real tensors, numbers and None are their own conjugate."""
    return torch.conj_physical(v) if _is_complex(v) else v
