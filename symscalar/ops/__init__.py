"""The op library: ``symscalar.ops.sum(x, dim)``, ``symscalar.ops.mul(x, s)``...

Importing this package registers every primitive and every torch spelling it implements.
"""

from symscalar.ops import scalar as scalar
from symscalar.ops import elementwise as _elementwise
from symscalar.ops import reductions as _reductions
from symscalar.ops.elementwise import *  # noqa: F403 - the family lists its ops in __all__
from symscalar.ops.factories import arange, full, full_like, ones, ones_like, to, zeros, zeros_like
from symscalar.ops.reductions import *  # noqa: F403 - the family lists its ops in __all__
from symscalar.ops.shape import (
    broadcast_in_dim, cat, chunk, expand, flatten, flip, getitem, narrow, permute, reshape,
    split, squeeze, stack, transpose, unbind, unsqueeze,
)

__all__ = [
    *_elementwise.__all__, *_reductions.__all__, "reshape", "expand", "full", "zeros_like", "to",
    "zeros", "ones", "full_like", "ones_like", "arange", "broadcast_in_dim", "cat", "chunk",
    "flatten", "flip", "getitem", "narrow", "permute", "split", "squeeze", "stack", "transpose",
    "unbind", "unsqueeze",
]
