"""The op library: ``symscalar.ops.sum(x, dim)``, ``symscalar.ops.mul(x, s)``...

Importing this package registers every primitive and every torch spelling it implements.
"""

from symscalar.ops import scalar as scalar
from symscalar.ops.elementwise import add, div, exp, mul, neg, sub
from symscalar.ops.factories import full, to, zeros_like
from symscalar.ops.reductions import sum
from symscalar.ops.shape import expand, reshape

__all__ = [
    "add", "sub", "mul", "div", "neg", "exp", "sum", "reshape", "expand", "full", "zeros_like", "to",
]
