"""Helpers shared by the op modules: meta functions from torch's meta tensors, dim handling."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from symscalar.errors import StaticValueRequiredError
from symscalar.size_guards import broadcast_size, known_equal
from symscalar.sizes import Size
from symscalar.trace import Atom, Primitive, ScalarVar, TensorVar

__all__ = [
    "torch_meta",
    "small_meta",
    "elementwise_meta",
    "elementwise_primitive",
    "broadcast_shapes",
    "reduced_shape",
    "same_shape",
    "output_device",
    "canonical_dim",
    "canonical_dims",
    "result_dtype",
    "holomorphic",
    "Tensor",
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


def autograd_backward(impl: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The backward of eager's op ``impl`` with respect to its first operand, and its meta: run
    by ``torch.autograd`` on ``impl`` (eager's own backward kernel, so eager's bits), called as
    ``backward(cotangent, x, *other_operands, **params)``."""

    def backward(ct: Any, x: Any, *args: Any, **params: Any) -> Any:
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(impl(leaf, *args, **params), leaf, ct)
        return grad

    def meta(ct: TensorVar, x: TensorVar, *args: Any, **params: Any) -> TensorVar:
        return TensorVar(x.shape, x.dtype, x.device)

    return backward, meta


def small_meta(impl: Callable[..., Any], shape_rule: Callable[..., Any], size: int = 1) -> Callable[..., Any]:
    """A meta function from a shape rule, without torch's meta tensors.

    Why: torch runs many ops on meta tensors through its Python references, which import
    ``torch._dynamo`` and sympy (~900 modules, 1-2 s) on first use. Here ``shape_rule(*atoms,
    **params)`` gives the output shape (a list of shapes for several results) and the dtype,
    with torch's own argument checks, comes from running the lowering on small CPU tensors of
    the operands' ranks and dtypes (every size ``size``), which promote exactly like the
    full-size ones. Where the rule or that run fails (a dtype the CPU kernel lacks, an
    invalid call), torch's meta path decides: the exact error or answer.
    """
    fallback = torch_meta(impl)

    def meta(*atoms: Atom, **params: Any) -> Any:
        try:
            shapes = shape_rule(*atoms, **params)
            result = impl(*(_to_small(a, size) for a in atoms), **params)
        except Exception:  # noqa: BLE001 - torch's meta path gives the exact error or answer
            return fallback(*atoms, **params)
        device = torch.device(params.get("device") or output_device(atoms))
        if isinstance(result, (tuple, list)):
            return tuple(TensorVar(tuple(s), r.dtype, device) for s, r in zip(shapes, result))
        return TensorVar(tuple(shapes), result.dtype, device)

    meta.shape_rule = shape_rule  # type: ignore[attr-defined]  # also the symbolic-shape rule (sizes.py)
    return meta


def elementwise_meta(impl: Callable[..., Any]) -> Callable[..., Any]:
    """The meta of a broadcasting elementwise op: the broadcast shape (see ``small_meta``)."""
    return small_meta(
        impl, lambda *atoms, **params: broadcast_shapes([a.shape for a in atoms if isinstance(a, TensorVar)])
    )


def elementwise_primitive(name: str, impl: Callable[..., Any]) -> Primitive:
    """The primitive of a broadcasting elementwise op: ``impl`` is its torch lowering, its
    meta the broadcast shape with torch's dtype (see ``elementwise_meta``)."""
    return Primitive(name, impl, elementwise_meta(impl))


def reduced_shape(x: TensorVar, *, dims: tuple[int, ...], keepdim: bool, **params: Any) -> tuple[int, ...]:
    """The shape of a reduction of ``x`` over ``dims`` (non-negative, as canonical_dims gives)."""
    # torch decides: dims out of range, reducing an empty dim, and dims=() (all dims for
    # some reductions, none for others)
    if (
        (not dims and x.ndim > 0)
        or any(not 0 <= d < max(x.ndim, 1) for d in dims)
        or any(x.shape[d] == 0 for d in dims if d < x.ndim)
    ):
        raise IndexError(f"let torch's meta decide dims {dims} for shape {x.shape}")
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    return tuple(s for i, s in enumerate(x.shape) if i not in dims)


def same_shape(x: TensorVar, **params: Any) -> tuple[int, ...]:
    return x.shape


def broadcast_shapes(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """torch's broadcasting rule, in plain Python (``torch.broadcast_shapes`` imports sympy).

    A dynamic dim meeting another size broadcasts as ``size_guards.broadcast_size`` says
    (never by its value: under a guard where it must).

    Raises:
        RuntimeError: with torch's message, when two sizes differ and neither is 1.
    """
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Any] = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape, ndim - len(shape)):
            if isinstance(size, Size) or isinstance(out[i], Size):  # dynamic dims: size_guards.py
                out[i] = broadcast_size(out[i], size, f"broadcasting dim {i} of {list(shape)}")
                continue
            if size != out[i] and out[i] != 1 and size != 1:
                raise RuntimeError(
                    f"The size of tensor a ({out[i]}) must match the size of tensor b ({size}) "
                    f"at non-singleton dimension {i}"
                )
            if out[i] == 1:
                out[i] = size
    return tuple(out)


def _to_small(a: Atom, size: int) -> Any:
    if isinstance(a, TensorVar):
        return torch.ones((size,) * a.ndim, dtype=a.dtype)
    if isinstance(a, ScalarVar):
        return _EXAMPLE[a.dtype]
    return a


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
    if isinstance(dim, Size):
        raise _dim_from_size(dim)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim % bound if ndim > 0 else 0


def canonical_dims(dims: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Reduction dims as a sorted tuple of non-negative ints; None or () means all dims."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, Size):
        raise _dim_from_size(dims)
    if isinstance(dims, int):
        dims = (dims,)
    if len(dims) == 0:
        return tuple(range(ndim))
    out = tuple(sorted(canonical_dim(d, ndim) for d in dims))
    if len(set(out)) != len(out):
        raise ValueError(f"dim {tuple(dims)} appears multiple times in the list of dims")
    return out if ndim > 0 else ()


def _dim_from_size(size: Size) -> StaticValueRequiredError:
    return StaticValueRequiredError(
        f"a dim (or dims) parameter got the dynamic size {size!r}: dims are structure (which axis), and "
        "structure stays static. Pass a static int; dynamic sizes go to size parameters (view, expand, "
        "factories, slice bounds)."
    )


def unbroadcast(ct: Any, shape: Sequence[int]) -> Any:
    """Sum a cotangent down to ``shape`` (the inverse of broadcasting ``shape`` to
    ``ct.shape``). The dims come from static shapes, so they are static by construction."""
    ct_shape, shape = tuple(ct.shape), tuple(shape)
    if ct_shape == shape:  # the common case: nothing was broadcast
        return ct
    lead = len(ct_shape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if known_equal(s, 1) and not known_equal(ct_shape[lead + i], 1)
    )
    if dims:
        ct = ct.sum(dims, keepdim=True)
    if tuple(ct.shape) != shape:
        ct = ct.reshape(shape)
    return ct


def grad_for(ct: Any, arg: Any) -> Any:
    """The cotangent of a broadcasting elementwise operand: None for a scalar operand."""
    shape = getattr(arg, "shape", None)  # None for a number or a number proxy
    return None if shape is None else unbroadcast(ct, shape)


def _is_complex(v: Any) -> bool:
    """Whether ``v`` is a complex tensor (numbers, number proxies and None are not)."""
    if v is None or type(v) in (bool, int, float, complex):
        return False
    dtype = getattr(v, "dtype", None)
    return isinstance(dtype, torch.dtype) and dtype.is_complex and hasattr(v, "shape")


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
