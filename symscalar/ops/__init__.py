"""The op library: ``symscalar.ops.sum(x, dim)``, ``symscalar.ops.mul(x, s)``...

Importing this package registers every primitive and every torch spelling it implements.
"""

from symscalar.ops import scalar as scalar
from symscalar.ops.elementwise import add, div, exp, mul, neg, sub
from symscalar.ops.factories import full, to, zeros_like
from symscalar.ops.reductions import (
    amax, amin, argmax, argmin, log_softmax, logsumexp, mean, prod, softmax, std, std_mean, sum, var,
    var_mean,
)
from symscalar.ops.shape import expand, reshape

__all__ = [
    "add", "sub", "mul", "div", "neg", "exp",
    "sum", "mean", "amax", "amin", "prod", "var", "std", "var_mean", "std_mean", "logsumexp",
    "softmax", "log_softmax", "argmax", "argmin",
    "reshape", "expand", "full", "zeros_like", "to",
]
