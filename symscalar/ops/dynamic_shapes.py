"""Symbolic shape rules of the primitives whose metas run torch (``torch_meta``) or are
written by hand: what each result's shape is when input dims are dynamic (``sizes.Size``).

The broadcasting, reduction and other ``small_meta`` primitives need no entry here: their
plain-Python shape rule runs on symbolic shapes as it is (``sizes.symbolic_meta``). A
primitive with neither refuses dynamic dims with a clear error; every rule's result is
checked against the concrete meta at the traced sizes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from symscalar.grad_regions import stop_gradient_p
from symscalar.ops.composites import (
    group_norm_backward_p,
    layer_norm_backward_p,
    linear_bias_grad_p,
    mm_mat1_backward_p,
    mm_mat2_backward_p,
    native_group_norm_p,
    native_layer_norm_p,
    sdpa_flash_cpu_backward_p,
    sdpa_flash_cpu_p,
    weight_norm_backward_p,
)
from symscalar.ops.conv import (
    adaptive_avg_pool2d_backward_p,
    adaptive_avg_pool2d_p,
    avg_pool2d_backward_p,
    avg_pool2d_p,
    batch_norm_backward_p,
    batch_norm_p,
    batch_norm_stats_p,
    convolution_backward_p,
    convolution_p,
    max_pool2d_backward_p,
    max_pool2d_p,
)
from symscalar.ops.factories import arange_p, convert_element_type_p, full_p
from symscalar.ops.indexing import (
    broadcast_shapes,
    cumsum_p,
    embedding_backward_p,
    embedding_p,
    gather_p,
    index_add_p,
    index_p,
    index_put_p,
    index_select_p,
    scatter_add_p,
    scatter_p,
    sort_p,
)
from symscalar.ops.join import cat, split_p
from symscalar.ops.opaque import register_symbolic_form
from symscalar.ops.random import multinomial_p, normal_p, random_int_p, uniform_p
from symscalar.ops.shape import clone_p, expand_p, narrow, permute_p, reshape_p, slice_p, zero_pad_p
from symscalar.size_ops import sym_size_p
from symscalar.sizes import (
    Size,
    SizeDecisionError,
    hint,
    register_shape_rule,
    register_size_params,
    register_symbolic_meta,
)
from symscalar.trace import TensorVar
from symscalar.types import NumberProxy

__all__: list[str] = []


def _same(x: Any, *args: Any, **params: Any) -> tuple[Any, ...]:
    return tuple(x.shape)


def _target(x: Any, *, shape: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(shape)


def _length(start: Any, stop: Any, step: Any) -> Any:
    if type(step) is not int or step <= 0:
        raise SizeDecisionError(f"a range with step {step!r} over a dynamic size (only positive static steps)")
    for bound in (start, stop):
        if not isinstance(bound, (int, Size)):
            raise SizeDecisionError(
                f"a range with the bound {bound!r} next to a dynamic size (only int and size bounds): "
                "shift an integer range instead (torch.arange(T) + 0.5)"
            )
    return (stop - start + step - 1) // step


def _slice(x: Any, *, starts: Any, stops: Any, steps: Any) -> tuple[Any, ...]:
    return tuple(_length(a, b, c) for a, b, c in zip(starts, stops, steps))


def _zero_pad(x: Any, *, padding: Any) -> tuple[Any, ...]:
    out = []
    for size, (lo, hi, interior) in zip(x.shape, padding):
        if interior and isinstance(size, Size) and not size >= 1:  # (raises where undecided)
            raise SizeDecisionError("interior padding of a dynamic dim that may be empty")
        # ``max(size - 1, 0) * interior`` between the elements (size >= 1 where it is dynamic)
        between = (size - 1 if isinstance(size, Size) else max(size - 1, 0)) * interior
        out.append(size + lo + hi + between)
    return tuple(out)


def _arange_meta(*, start: Any, end: Any, step: Any, dtype: torch.dtype | None, device: torch.device) -> TensorVar:
    """``arange`` with a dynamic bound: sizes are ints, so the result is int64 unless a float
    bound or ``dtype`` says otherwise (as torch.arange)."""
    if dtype is None:
        dtype = (
            torch.int64 if all(isinstance(v, (int, Size)) for v in (start, end, step)) else torch.get_default_dtype()
        )
    return TensorVar((_length(start, end, step),), dtype, torch.device(device if device is not None else "cpu"))


def _layer_norm(x: Any, weight: Any, bias: Any, eps: Any, *, normalized_shape: tuple[int, ...]) -> list[Any]:
    k = len(normalized_shape)
    stats = tuple(x.shape[: x.ndim - k]) + (1,) * k
    return [tuple(x.shape), stats, stats]


def _layer_norm_backward(ct: Any, x: Any, mean: Any, rstd: Any, weight: Any, bias: Any, **params: Any) -> list[Any]:
    wanted = zip((weight, bias), params["mask"][1:])  # the gradients of x, then weight and bias where asked
    return [tuple(x.shape)] + [tuple(t.shape) for t, want in wanted if want]


# The size-like static parameters: the only ones check_trace lets hold a dynamic size.
register_size_params(reshape_p, "shape")
register_size_params(expand_p, "shape")
register_size_params(full_p, "shape")
register_size_params(arange_p, "start", "end")
register_size_params(slice_p, "starts", "stops")
register_size_params(zero_pad_p, "padding")
register_size_params(sym_size_p, "size")
for _sampler in (uniform_p, normal_p, random_int_p):  # random samples of a (dynamic) shape
    register_size_params(_sampler, "shape")
for _sampler in (uniform_p, random_int_p):  # (normal_p shares uniform_p's meta, which keys the rule)
    register_shape_rule(_sampler, lambda seed, *bounds, shape, **params: tuple(shape))
register_shape_rule(multinomial_p, lambda seed, probs, *, num_samples, **params: (*probs.shape[:-1], num_samples))

register_shape_rule(reshape_p, _target)
register_shape_rule(expand_p, _target)
register_shape_rule(full_p, lambda fill, *, shape, **params: tuple(shape))
register_symbolic_meta(arange_p, _arange_meta)
register_shape_rule(permute_p, lambda x, *, dims: tuple(x.shape[d] for d in dims))
register_shape_rule(slice_p, _slice)
register_shape_rule(zero_pad_p, _zero_pad)
register_shape_rule(
    split_p, lambda x, *, sizes, dim: [tuple(s if i == dim else d for i, d in enumerate(x.shape)) for s in sizes]
)
register_shape_rule(cumsum_p, _same)
register_shape_rule(index_add_p, _same)
register_shape_rule(scatter_add_p, _same)
register_shape_rule(scatter_p, _same)
register_shape_rule(gather_p, lambda x, index, *, dim: tuple(index.shape))
register_shape_rule(
    index_select_p, lambda x, index, *, dim: tuple(index.shape[0] if d == dim else s for d, s in enumerate(x.shape))
)
register_shape_rule(sort_p, lambda x, **params: [tuple(x.shape), tuple(x.shape)])
register_shape_rule(clone_p, _same)  # and contiguous_p: the same meta
register_shape_rule(convert_element_type_p, _same)
register_shape_rule(stop_gradient_p, _same)
register_shape_rule(embedding_p, lambda indices, weight, **params: (*indices.shape, weight.shape[1]))
register_shape_rule(embedding_backward_p, lambda ct, indices, *, num_weights, **params: (num_weights, ct.shape[-1]))
register_shape_rule(native_layer_norm_p, _layer_norm)
register_shape_rule(mm_mat2_backward_p, lambda ct, a, b: tuple(b.shape))
register_shape_rule(mm_mat1_backward_p, lambda ct, b, a: tuple(a.shape))
register_shape_rule(linear_bias_grad_p, lambda ct, x: tuple(ct.shape[-1:]))
register_shape_rule(weight_norm_backward_p, lambda ct, v, g, norms, **params: [tuple(v.shape), tuple(g.shape)])
register_shape_rule(
    native_group_norm_p,
    lambda x, *rest, num_groups: [tuple(x.shape), (x.shape[0], num_groups), (x.shape[0], num_groups)],
)
register_shape_rule(
    group_norm_backward_p,
    lambda ct, x, mean, rstd, weight, *, mask, **params: (
        [tuple(x.shape)] + [tuple(weight.shape) for w in mask[1:] if w]
    ),
)
register_shape_rule(layer_norm_backward_p, _layer_norm_backward)
register_shape_rule(
    sdpa_flash_cpu_backward_p, lambda ct, q, k, v, *rest, **params: [tuple(q.shape), tuple(k.shape), tuple(v.shape)]
)
register_shape_rule(sdpa_flash_cpu_p, lambda q, k, v, mask, scale, **params: [tuple(q.shape), tuple(q.shape[:-1])])


# -- the vision primitives (ops/conv.py) over a dynamic batch dim: a result's dim 0 is its
# input's, every other dim comes from the static geometry (the concrete meta). A dynamic
# channel or spatial dim is refused (its output size is arithmetic on the geometry that no
# rule here tracks yet).
def _batched(prim: Any, like: tuple[int | None, ...]) -> None:
    """Register the rule of ``prim``: result ``i`` has the dim 0 of operand ``like[i]`` (None:
    a static result, e.g. a weight's gradient) and the concrete meta's other dims."""

    def rule(*atoms: Any, **params: Any) -> Any:
        for a in atoms:
            shape = getattr(a, "shape", None)
            if type(shape) is tuple and any(isinstance(s, Size) for s in shape[1:]):
                raise SizeDecisionError(f"only the batch dim (dim 0) may be dynamic here, got {list(shape)}")
        concrete = prim.meta(*[_hinted(a) for a in atoms], **params)
        results = concrete if isinstance(concrete, tuple) else (concrete,)
        shapes = [
            tuple(r.shape) if i is None or r is None else (atoms[i].shape[0], *r.shape[1:])
            for r, i in zip(results, like[: len(results)], strict=True)  # conv backward: no grad bias without bias
        ]
        return shapes if isinstance(concrete, tuple) else shapes[0]

    register_shape_rule(prim, rule)


def _hinted(a: Any) -> Any:
    shape = getattr(a, "shape", None)
    if type(shape) is tuple and any(isinstance(s, Size) for s in shape):
        return dataclasses.replace(a, shape=hint(shape))
    return a


_batched(convolution_p, (0,))
_batched(convolution_backward_p, (1, None, None))  # (grad x, grad w[, grad bias])
_batched(max_pool2d_p, (0, 0))
_batched(max_pool2d_backward_p, (1,))
_batched(avg_pool2d_p, (0,))
_batched(avg_pool2d_backward_p, (1,))
_batched(adaptive_avg_pool2d_p, (0,))
_batched(adaptive_avg_pool2d_backward_p, (1,))
_batched(batch_norm_p, (0, None, None))  # (out, mean, invstd): the statistics are per channel
_batched(batch_norm_backward_p, (1, None, None))
_batched(batch_norm_stats_p, (None, None))  # the new running statistics, per channel


# advanced indexing (transformers' ``position_ids[batch_idx, q_idx]``): the index tensors'
# broadcast shape, then the dims not indexed; the values (positions) are data, not shape
register_shape_rule(
    index_p, lambda x, *indices: broadcast_shapes(*(i.shape for i in indices)) + x.shape[len(indices) :]
)
register_shape_rule(index_put_p, _same)


def _diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """``torch.diff`` on dynamic dims (transformers' packed-sequence detection): ``prepend``,
    ``input``, ``append`` concatenated, then ``x[1:] - x[:-1]`` along ``dim`` ``n`` times
    (``!=`` for bool tensors, as torch's). Static shapes keep the opaque call."""
    if not isinstance(n, int) or isinstance(n, NumberProxy) or n < 0:
        raise RuntimeError(f"torch.diff: order must be a non-negative static int, got {n!r}")
    d = dim % input.ndim
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        later, earlier = narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1)
        x = torch.logical_xor(later, earlier) if x.dtype == torch.bool else later - earlier
    return x


register_symbolic_form("torch.diff", _diff)
register_symbolic_form("torch.Tensor.diff", _diff)
