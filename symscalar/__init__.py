"""symscalar: explicit static and dynamic scalars for tensor programs.

Ops take ``StaticInt`` (compile-time constants) where a backend needs a constant and
``DynamicInt``/``DynamicFloat`` (runtime values, never ``int``/``float``) where it does not.
``symscalar.jit`` traces a function, checks that contract, differentiates it and runs it;
dynamic values change between calls without recompiling.
"""

import torch.overrides

from symscalar import ops as ops
from symscalar.errors import (
    CheckFailedError,
    DynamicValueError,
    StaticValueRequiredError,
    SymscalarError,
    UnsupportedOperationError,
)
from symscalar.jit import CacheInfo, JitFunction, grad, jit, value_and_grad
from symscalar.trace import Trace, check_trace, eval_trace, prims
from symscalar.tracing import TORCH_FUNCTIONS
from symscalar.types import (
    BoolLike,
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    FloatLike,
    IntLike,
    NumberClasses,
    NumberLike,
    NumberProxy,
    StaticBool,
    StaticDims,
    StaticFloat,
    StaticInt,
    StaticShape,
    check,
    is_dynamic,
    is_static,
    specialize,
)

__version__ = "0.1.0"

__all__ = [
    "jit", "grad", "value_and_grad", "JitFunction", "CacheInfo", "ops", "prims", "Trace", "check_trace", "eval_trace",
    "StaticInt", "StaticFloat", "StaticBool", "StaticDims", "StaticShape",
    "DynamicInt", "DynamicFloat", "DynamicBool", "NumberProxy",
    "IntLike", "FloatLike", "BoolLike", "NumberLike", "NumberClasses",
    "is_static", "is_dynamic", "specialize", "check", "supported_torch_functions",
    "SymscalarError", "DynamicValueError", "StaticValueRequiredError",
    "UnsupportedOperationError", "CheckFailedError",
]


def supported_torch_functions() -> list[str]:
    """Names of the torch functions, methods and operators symscalar can trace."""
    return sorted({torch.overrides.resolve_name(f) or repr(f) for f in TORCH_FUNCTIONS})
