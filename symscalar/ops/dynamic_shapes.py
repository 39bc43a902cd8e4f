"""Symbolic shape rules of the primitives whose metas run torch (``torch_meta``) or are
written by hand: what each result's shape is when input dims are dynamic (``sizes.Size``).

The broadcasting, reduction and other ``small_meta`` primitives need no entry here: their
plain-Python shape rule runs on symbolic shapes as it is (``sizes.symbolic_meta``). A
primitive with neither refuses dynamic dims with a clear error; every rule's result is
checked against the concrete meta at the traced sizes.
"""

from __future__ import annotations

import dataclasses
import fractions
import inspect
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from symscalar import size_guards
from symscalar.errors import UnsupportedOperationError
from symscalar.grad_regions import stop_gradient_p
from symscalar.ops.composites import (
    bmm_mat2_backward_p,
    bmm_self_backward_p,
    linear_bias_grad_p,
    mm_mat1_backward_p,
    mm_mat2_backward_p,
    sdpa_flash_cpu_backward_p,
    sdpa_flash_cpu_p,
)
from symscalar.ops.conv import (
    adaptive_avg_pool2d_backward_p,
    adaptive_avg_pool2d_p,
    avg_pool2d_backward_p,
    avg_pool2d_p,
    batch_norm_backward_p,
    batch_norm_eval_backward_p,
    batch_norm_eval_p,
    batch_norm_p,
    batch_norm_stats_p,
    conv_output_size,
    convolution_backward_p,
    convolution_p,
    max_pool2d_backward_p,
    max_pool2d_p,
)
from symscalar.ops.define import (
    Primitive,
    StaticValueRequiredError,
    Tensor,
    autograd_backward,
    canonical_dim,
    register_vjp,
    torch_meta,
)
from symscalar.ops.factories import arange_p, convert_element_type_p, float_step_fraction, full_p
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
    topk_p,
)
from symscalar.ops.join import cat, split_p
from symscalar.ops.norms import (
    group_norm_backward_p,
    layer_norm_backward_p,
    native_group_norm_p,
    native_layer_norm_p,
    weight_norm_backward_p,
)
from symscalar.ops.opaque import register_opaque_shape_rule, register_symbolic_form
from symscalar.ops.random import multinomial_p, normal_p, random_int_p, uniform_p
from symscalar.ops.shape import (
    clone_p,
    expand_p,
    narrow,
    permute_p,
    reshape_p,
    slice_p,
    zero_pad_p,
)
from symscalar.size_ops import size_of, sym_size_p
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


def _replaced(shape: tuple[Any, ...], dim: int, size: Any) -> tuple[Any, ...]:
    """``shape`` with dim ``dim`` (if any: a 0-d shape stays 0-d) of size ``size``."""
    return tuple(size if i == dim else s for i, s in enumerate(shape))


def _target(x: Any, *, shape: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(shape)


def _length(start: Any, stop: Any, step: Any) -> Any:
    if type(step) is float and step > 0:  # a float range's length (factories.arange checked it is exact)
        fraction = float_step_fraction(step)
        a, b = fraction.numerator, fraction.denominator
        return ((stop - start) * b + a - 1) // a
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
register_size_params(topk_p, "k")  # (k = T // 2: a size)
register_shape_rule(topk_p, lambda x, *, k, dim, **params: [_replaced(x.shape, dim, k)] * 2)
register_shape_rule(clone_p, _same)  # and contiguous_p: the same meta
register_shape_rule(convert_element_type_p, _same)
register_shape_rule(stop_gradient_p, _same)
register_shape_rule(embedding_p, lambda indices, weight, **params: (*indices.shape, weight.shape[1]))
register_shape_rule(embedding_backward_p, lambda ct, indices, *, num_weights, **params: (num_weights, ct.shape[-1]))
register_shape_rule(native_layer_norm_p, _layer_norm)
register_shape_rule(mm_mat2_backward_p, lambda ct, a, b: tuple(b.shape))
register_shape_rule(mm_mat1_backward_p, lambda ct, b, a: tuple(a.shape))
register_shape_rule(bmm_self_backward_p, lambda ct, b: (*ct.shape[:-1], b.shape[-2]))
register_shape_rule(bmm_mat2_backward_p, lambda ct, a: (*ct.shape[:-2], a.shape[-1], ct.shape[-1]))
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
# channel or spatial dim of a 2-d pooling is refused (its output size is arithmetic on the
# geometry that no rule here tracks yet); convolution and batch norm have their own rules.
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


def _static_channels(x: Any, *params: Any) -> None:
    """Only the batch and spatial dims of a convolution's input may be dynamic."""
    shapes = [x.shape[1:2], *(p.shape for p in params if p is not None)]
    if any(isinstance(s, Size) for shape in shapes for s in shape):
        raise SizeDecisionError(f"a convolution's channels and weight must be static, got {list(x.shape)}")


def _convolution(x: Any, w: Any, b: Any, *, stride: Any, padding: Any, dilation: Any, groups: int) -> tuple[Any, ...]:
    """A convolution over dynamic batch and spatial dims (static channels and weight): each
    spatial dim's output length is ``(n + 2 p - d (k - 1) - 1) // s + 1`` (the frontend records
    the guard that it is at least 1 where eager would raise)."""
    _static_channels(x, w, b)
    spatial = tuple(
        conv_output_size(n, k, p, s, d) for n, k, p, s, d in zip(x.shape[2:], w.shape[2:], padding, stride, dilation)
    )
    return (x.shape[0], w.shape[0], *spatial)


def _convolution_backward(ct: Any, x: Any, w: Any, *, bias: bool, **geometry: Any) -> list[tuple[Any, ...]]:
    _static_channels(x, w)
    return [tuple(x.shape), tuple(w.shape)] + ([(w.shape[0],)] if bias else [])


register_shape_rule(convolution_p, _convolution)
register_shape_rule(convolution_backward_p, _convolution_backward)
_batched(max_pool2d_p, (0, 0))
_batched(max_pool2d_backward_p, (1,))
_batched(avg_pool2d_p, (0,))
_batched(avg_pool2d_backward_p, (1,))
_batched(adaptive_avg_pool2d_p, (0,))
_batched(adaptive_avg_pool2d_backward_p, (1,))


def _channels(x: Any) -> Any:
    """A batch norm's channel count (dim 1), which must be static; the other dims may be dynamic."""
    if isinstance(x.shape[1], Size):
        raise SizeDecisionError(f"a batch norm's channel dim (dim 1) must be static, got {list(x.shape)}")
    return x.shape[1]


def _batch_norm_backward(ct: Any, x: Any, weight: Any, mean: Any, invstd: Any, *, mask: Any, **params: Any) -> Any:
    channels = (_channels(x),)
    return [shape for shape, wanted in zip((tuple(x.shape), channels, channels), mask) if wanted]


# (out, mean, invstd): the statistics are per channel; the new running statistics too
register_shape_rule(batch_norm_p, lambda x, *params, **geometry: [tuple(x.shape), *[(_channels(x),)] * 2])
register_shape_rule(batch_norm_backward_p, _batch_norm_backward)
register_shape_rule(batch_norm_stats_p, lambda x, mean, var, **params: [(_channels(x),)] * 2)
# evaluation mode (eager's kernel, ops/conv.py)
register_shape_rule(batch_norm_eval_p, lambda x, *params, **geometry: (_channels(x), tuple(x.shape))[1])
register_shape_rule(
    batch_norm_eval_backward_p,
    lambda ct, x, weight, mean, var, *, mask, **params: _batch_norm_backward(ct, x, weight, mean, var, mask=mask),
)


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


# ---- Tensor.unfold on dynamic dims (static shapes stay an opaque view call): eager's view
# and its unfold_backward kernel, so eager's strides and bits.
def _unfold_impl(x: Any, *, dimension: int, size: int, step: int) -> Any:
    return x.unfold(dimension, size, step)


def _unfold_shape(x: Any, *, dimension: int, size: int, step: int) -> tuple[Any, ...]:
    """``(n - size) // step + 1`` windows in place of dim ``dimension`` (of size n), then ``size``."""
    windows = (x.shape[dimension] - size) // step + 1
    return (*x.shape[:dimension], windows, *x.shape[dimension + 1 :], size)


unfold_p = Primitive("unfold", _unfold_impl, torch_meta(_unfold_impl), may_alias=True)
unfold_backward_p = Primitive("unfold_backward", *autograd_backward(_unfold_impl))
# unfold is linear: the backward's own vjp is unfold of the cotangent
register_vjp(unfold_p, lambda ct, out, x, **params: (unfold_backward_p.bind(ct, x, **params),))
register_vjp(unfold_backward_p, lambda ct, out, ct_in, x, **params: (unfold_p.bind(ct, **params), None))
register_shape_rule(unfold_p, _unfold_shape)
register_shape_rule(unfold_backward_p, lambda ct, x, **params: tuple(x.shape))


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold`` of a tensor with dynamic dims: the windows ``[i * step, i * step + size)``
    of dim ``dimension`` for ``i < (n - size) // step + 1``, as a new last dim of length
    ``size`` (static ints: the output's shape). Where ``size`` may exceed ``n`` the program
    records the size guard ``n >= size`` (eager raises at the other sizes)."""
    for name, value in (("dimension", dimension), ("size", size), ("step", step)):
        if type(value) is not int:
            raise StaticValueRequiredError(
                f"Tensor.unfold: `{name}` must be a static int on a tensor with dynamic dims, got {value!r} "
                f"({getattr(value, '_origin', 'a dynamic value')}): the output's shape depends on it."
            )
    if input.ndim == 0 or step <= 0 or size < 0:
        raise RuntimeError(
            f"Tensor.unfold(dimension={dimension}, size={size}, step={step}): symscalar needs a tensor of at "
            "least one dim, step > 0 and size >= 0 on dynamic dims (as eager, which also takes 0-d tensors)"
        )
    d = canonical_dim(dimension, input.ndim)
    n = input.shape[d]
    asked = f"Tensor.unfold(dimension={d}, size={size}, step={step}) of a dim of size {n!r} (eager raises below {size})"
    if size_guards.eager_raises("gt", size, n, asked):
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    return unfold_p.bind(input, dimension=d, size=size, step=step)


# Tensor.unfold: a primitive with a shape rule where a dim is dynamic (an opaque view call otherwise)
register_symbolic_form("torch.Tensor.unfold", unfold)


# -- opaque calls of eager's own kernels (forward and backward: eager's bits) on dynamic dims,
# with the shape rule of their results (ops/opaque.py checks it at the traced sizes and the
# results at every call).
def _pointwise_loss(func: Callable[..., Any]) -> Callable[..., Any]:
    """The rule of a loss over ``input`` and ``target`` elementwise: a 0-d result when reduced,
    else their shape, which must be one shape at every size (equal, or equal under a guard)."""
    signature = inspect.signature(func)

    def rule(*args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        reduction = given.get("reduction", "mean")
        if given.get("size_average") is not None or given.get("reduce") is not None:
            reduction = torch.nn._reduction.legacy_get_string(given.get("size_average"), given.get("reduce"), False)
        if reduction != "none":
            return [()]
        shape, other = tuple(given["input"].shape), tuple(given["target"].shape)
        if not size_guards.equal_shapes(shape, other, f"{func.__name__}'s target"):
            raise UnsupportedOperationError(
                f"{func.__name__}(reduction='none') of input {list(shape)} and target {list(other)}: on dynamic dims "
                "symscalar needs one shape for both (declare their dims with the same names)."
            )
        return [shape]

    return rule


for _loss in (
    F.mse_loss,
    F.l1_loss,
    F.smooth_l1_loss,
    F.huber_loss,
    F.binary_cross_entropy,
    F.binary_cross_entropy_with_logits,
    F.kl_div,
    F.soft_margin_loss,
    F.poisson_nll_loss,
):
    register_opaque_shape_rule(f"torch.nn.functional.{_loss.__name__}", _pointwise_loss(_loss))
register_opaque_shape_rule("torch.nn.functional.normalize", lambda input, *args, **kwargs: [tuple(input.shape)])
for _name in ("torch.cummax", "torch.Tensor.cummax", "torch.cummin", "torch.Tensor.cummin"):
    register_opaque_shape_rule(_name, lambda input, *args, **kwargs: [tuple(input.shape)] * 2)
for _name in ("torch.logcumsumexp", "torch.Tensor.logcumsumexp"):
    register_opaque_shape_rule(_name, lambda input, *args, **kwargs: [tuple(input.shape)])


def _one(value: Any) -> int:
    """A 1-d pooling's int or one-element geometry."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(items) != 1 or type(items[0]) is not int:
        raise UnsupportedOperationError(f"a 1-d pooling over a dynamic dim needs static int geometry, got {value!r}")
    return items[0]


def _pool1d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
    **options: Any,
) -> list[tuple[Any, ...]]:
    """``F.max_pool1d``/``F.avg_pool1d`` over a dynamic length: ``(n + 2p - d (k - 1) - 1) // s + 1``
    (eager's rule without ``ceil_mode``, whose last window depends on the size otherwise)."""
    if ceil_mode:
        raise UnsupportedOperationError(
            "a 1-d pooling with ceil_mode=True over a dynamic dim: whether eager keeps the last window depends on "
            "the size. Pad the input to a multiple of the stride instead (F.pad), or declare the dim static."
        )
    k = _one(kernel_size)
    s = k if stride is None or stride == [] or stride == () else _one(stride)
    length = conv_output_size(input.shape[-1], k, _one(padding), s, _one(dilation))
    shape = (*input.shape[:-1], length)
    return [shape, shape] if return_indices else [shape]


register_opaque_shape_rule("torch.nn.functional.max_pool1d", _pool1d)
register_opaque_shape_rule(
    "torch.nn.functional.max_pool1d_with_indices",
    lambda *args, **kwargs: _pool1d(*args, **kwargs)[:1] * 2,  # (values, indices) always
)
register_opaque_shape_rule(
    "torch.nn.functional.avg_pool1d",
    lambda input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True: _pool1d(
        input, kernel_size, stride, padding, 1, ceil_mode
    ),
)
register_opaque_shape_rule(
    "torch.nn.functional.adaptive_avg_pool1d", lambda input, output_size: [(*input.shape[:-1], _one(output_size))]
)


def _recurrent(
    input: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> list[tuple[Any, ...]]:
    """``torch.gru``/``lstm``/``rnn_tanh``/``rnn_relu`` (what ``nn.GRU``... call) over a dynamic
    batch and length: the output ``(batch, seq, directions * hidden)`` (``batch_first``) or
    ``(seq, batch, ...)``, and the final states shaped as the initial ones."""
    states = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
    if input.ndim != 3:
        raise UnsupportedOperationError(f"a recurrent layer's input must be 3-d here, got {list(input.shape)}")
    hidden = states[0].shape[-1] * (2 if bidirectional else 1)
    return [(input.shape[0], input.shape[1], hidden), *(tuple(h.shape) for h in states)]  # (either order)


for _name in ("torch.gru", "torch.lstm", "torch.rnn_tanh", "torch.rnn_relu"):
    register_opaque_shape_rule(_name, _recurrent)


def _size_argument(value: Any) -> Any:
    """A factory's size argument as a size: an int, or a size symbol's normal form."""
    size = size_of(value) if isinstance(value, NumberProxy) else value
    if type(size) is not int and not isinstance(size, Size):
        raise UnsupportedOperationError(f"a factory's size must be an int or a size of a dynamic dim, got {value!r}")
    return size


# factories of a size (torch.linspace(0, 1, T)): eager's kernel, the size an operand of the call
for _name in ("torch.linspace", "torch.logspace"):
    register_opaque_shape_rule(_name, lambda start, end, steps, *args, **kwargs: [(_size_argument(steps),)])
register_opaque_shape_rule(
    "torch.eye", lambda n, m=None, **kwargs: [(_size_argument(n), _size_argument(n if m is None else m))]
)


def _tile(input: Any, dims: Any) -> list[tuple[Any, ...]]:
    """``Tensor.tile``: each dim times its repeat count (static ints; missing leading counts 1)."""
    counts = tuple(dims)
    if not all(type(c) is int for c in counts):
        raise UnsupportedOperationError(f"tile: the repeat counts must be static ints, got {list(counts)}")
    shape = (1,) * (len(counts) - input.ndim) + tuple(input.shape)
    counts = (1,) * (len(shape) - len(counts)) + counts
    return [tuple(s * c for s, c in zip(shape, counts))]


def _norm_rule(
    input: Any,
    ord: Any = 2,  # noqa: A002 - torch's name
    dim: Any = None,
    keepdim: bool = False,
    **kwargs: Any,
) -> list[Any]:
    """``torch.linalg.vector_norm`` (and ``Tensor.norm(p, dim, keepdim)``): a reduction over
    ``dim`` (static ints; None: every dim)."""
    dims = range(input.ndim) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    reduced = {d % input.ndim for d in dims}
    if keepdim:
        return [tuple(1 if i in reduced else s for i, s in enumerate(input.shape))]
    return [tuple(s for i, s in enumerate(input.shape) if i not in reduced)]


def _one_shape(x1: Any, x2: Any, op: str) -> tuple[Any, ...]:
    """The one shape of two operands on dynamic dims (equal, or equal under a size guard)."""
    shape, other = tuple(x1.shape), tuple(x2.shape)
    if not size_guards.equal_shapes(shape, other, op):
        raise UnsupportedOperationError(
            f"{op} of {list(shape)} and {list(other)} on dynamic dims: symscalar needs one shape for both "
            "(declare their dims with the same names)."
        )
    return shape


def _cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> list[tuple[Any, ...]]:
    shape = _one_shape(x1, x2, "cosine_similarity")
    return [tuple(s for i, s in enumerate(shape) if i != dim % len(shape))]


def _glu(input: Any, dim: int = -1) -> list[tuple[Any, ...]]:
    d = dim % input.ndim
    if isinstance(input.shape[d], Size):
        raise UnsupportedOperationError(
            f"glu along the dynamic dim {d} ({input.shape[d]!r}): its halves need an even size, which one program "
            "cannot assume. Split along a static dim, or declare the dim static."
        )
    return [tuple(s // 2 if i == d else s for i, s in enumerate(input.shape))]


for _name in ("torch.tile", "torch.Tensor.tile"):
    register_opaque_shape_rule(_name, _tile)
register_opaque_shape_rule("torch.linalg.vector_norm", _norm_rule)
register_opaque_shape_rule("torch.nn.functional.cosine_similarity", _cosine_similarity)
register_opaque_shape_rule("torch.nn.functional.glu", _glu)
for _name in ("torch.norm", "torch.Tensor.norm"):
    register_opaque_shape_rule(_name, _norm_rule)  # (p, dim, keepdim: the same positions)


def _pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> list[Any]:
    shape = _one_shape(x1, x2, "pairwise_distance")[:-1]
    return [(*shape, 1) if keepdim else shape]


register_opaque_shape_rule("torch.nn.functional.pairwise_distance", _pairwise_distance)


def _meshgrid(*tensors: Any, indexing: str | None = None) -> list[tuple[Any, ...]]:
    """``torch.meshgrid`` of 1-d tensors: each result has their lengths (the first two swapped
    with ``indexing="xy"``)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    sizes = [t.shape[0] if t.ndim else 1 for t in tensors]
    if indexing == "xy" and len(sizes) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    return [tuple(sizes)] * len(tensors)


register_opaque_shape_rule("torch.functional.meshgrid", _meshgrid)


def _scaled(size: Any, scale: Any) -> Any:
    """``floor(size * scale)`` as eager computes it in double: for a dynamic size and a scale
    that is the binary fraction ``a / b``, ``(size * a) // b``, exact while ``size * a < 2**53``
    (decided by the ranges or a size guard)."""
    if not isinstance(size, Size):
        return math.floor(size * scale)
    fraction = fractions.Fraction(scale)
    a, b = fraction.numerator, fraction.denominator
    if type(scale) is not float or a <= 0 or b >= 2**53:
        raise UnsupportedOperationError(
            f"interpolate: the scale {scale!r} of the dynamic dim {size!r} is not a positive short binary fraction "
            f"(it is {a} / {b} in binary), so eager's floor(size * scale), rounded in double, is not a formula of the "
            "sizes. Pass size= (e.g. size=3 * T // 10), a scale such as 0.5 or 1.5, or declare the dim static."
        )
    asked = f"interpolate's output size floor({size!r} * {scale!r}) (exact for {size!r} * {a} < 2**53)"
    if not size_guards.guarded("lt", size * a, 2**53, asked):
        raise UnsupportedOperationError(f"{asked}: the size is too large; declare the dim static")
    return (size * a) // b


def _interpolate(
    input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest", *args: Any, **kwargs: Any
) -> list[tuple[Any, ...]]:
    """``F.interpolate`` over dynamic dims: the spatial dims of ``size`` (ints or sizes), or each
    spatial dim scaled by ``scale_factor``; batch and channels kept."""
    spatial = input.ndim - 2
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * spatial
        return [(*input.shape[:2], *(_size_argument(s) for s in sizes))]
    scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * spatial
    return [(*input.shape[:2], *(_scaled(n, s) for n, s in zip(input.shape[2:], scales)))]


register_opaque_shape_rule("torch.nn.functional.interpolate", _interpolate)


def _pair(value: Any) -> tuple[int, int]:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(items) != 2 or not all(type(v) is int for v in items):
        raise UnsupportedOperationError(f"F.unfold over dynamic dims needs static int geometry, got {value!r}")
    return items[0], items[1]


def _im2col(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> list[Any]:
    """``F.unfold`` of ``(B, C, H, W)``: ``(B, C * kh * kw, L)``, ``L`` the number of windows,
    the product of a convolution's output lengths over H and W."""
    if input.ndim != 4 or isinstance(input.shape[1], Size):
        raise UnsupportedOperationError(
            f"F.unfold over dynamic dims needs a 4-d input of static channels, got {list(input.shape)}"
        )
    geometry = zip(input.shape[2:], _pair(kernel_size), _pair(padding), _pair(stride), _pair(dilation))
    windows = math.prod(conv_output_size(n, k, p, s, d) for n, k, p, s, d in geometry)
    kh, kw = _pair(kernel_size)
    return [(input.shape[0], input.shape[1] * kh * kw, windows)]


register_opaque_shape_rule("torch.nn.functional.unfold", _im2col)
