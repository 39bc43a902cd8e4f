"""``torch._higher_order_ops.associative_scan`` inside a traced function: a sequential scan.

Libraries call torch's associative scan where ``torch.compiler.is_compiling()`` is True
(transformers' Mamba takes it instead of its Python loop over the sequence), and symscalar
answers True while it traces (see compiling.py). Eager's generic implementation slices with
``aten.slice`` and maps the combine function with ``torch.vmap``, neither of which a trace
records. The scan's contract is the inclusive scan ``out[i] = xs[0] ⊕ ... ⊕ xs[i]`` of an
associative, pure ``combine_fn`` over ``dim``; while tracing it is computed left to right,
``combine_fn`` applied to one slice at a time (as eager's generic mode sees slices without the
scan dim), which is the same function and the order of the eager loop it stands for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils import _pytree as pytree

from symscalar.compiling import patch_while_tracing
from symscalar.types import current_tracer

__all__ = ["sequential_associative_scan"]


def sequential_associative_scan(
    combine_fn: Callable[[Any, Any], Any], xs: Any, dim: int, reverse: bool = False, combine_mode: str = "pointwise"
) -> Any:
    """The inclusive scan of ``xs`` (a pytree of tensors) along ``dim`` by ``combine_fn``,
    one slice after the other (``reverse``: from the last slice, as eager flips, scans and flips
    back). ``combine_mode`` chooses eager's kernel only: every mode computes this function."""
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"combine_mode must be 'pointwise' or 'generic', got {combine_mode!r}")
    leaves, spec = pytree.tree_flatten(xs)
    if not leaves:
        raise ValueError("associative_scan: xs has no tensors")
    length = leaves[0].shape[dim]
    if any(leaf.shape[dim] != length for leaf in leaves):
        raise ValueError("associative_scan: every leaf of xs must have the same size along dim")
    carry: Any = None
    steps: list[list[Any]] = []
    for i in reversed(range(length)) if reverse else range(length):
        x = pytree.tree_unflatten([leaf.select(dim, i) for leaf in leaves], spec)
        carry = x if carry is None else combine_fn(carry, x)
        steps.append(pytree.tree_leaves(carry))
    if reverse:
        steps.reverse()
    stacked = [torch.stack([step[k] for step in steps], dim) for k in range(len(leaves))]
    return pytree.tree_unflatten(stacked, spec)


def _while_tracing(original: Callable[..., Any]) -> Callable[..., Any]:
    def associative_scan(
        combine_fn: Any, xs: Any, dim: int, reverse: bool = False, combine_mode: str = "pointwise"
    ) -> Any:
        if current_tracer.get() is None:
            return original(combine_fn, xs, dim, reverse=reverse, combine_mode=combine_mode)
        return sequential_associative_scan(combine_fn, xs, dim, reverse, combine_mode)

    return associative_scan


patch_while_tracing("torch._higher_order_ops.associative_scan", "associative_scan", _while_tracing)
