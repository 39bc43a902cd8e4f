"""The op library: ``symscalar.ops.sum(x, dim)``, ``symscalar.ops.mul(x, s)``...

Importing this package registers every primitive and every torch spelling it implements.
"""

from symscalar.ops import scalar as scalar
from symscalar.ops.elementwise import add, div, exp, mul, neg, sub
from symscalar.ops.factories import arange, full, full_like, ones, ones_like, to, zeros, zeros_like
from symscalar.ops.reductions import sum
from symscalar.ops.shape import (
    broadcast_in_dim, cat, chunk, expand, flatten, flip, getitem, narrow, permute, reshape,
    select, split, squeeze, stack, transpose, unbind, unsqueeze,
)

__all__ = [
    "add", "sub", "mul", "div", "neg", "exp", "sum", "reshape", "expand", "full", "zeros_like", "to",
    "zeros", "ones", "full_like", "ones_like", "arange", "broadcast_in_dim", "cat", "chunk",
    "flatten", "flip", "getitem", "narrow", "permute", "select", "split", "squeeze", "stack", "transpose",
    "unbind", "unsqueeze",
]
