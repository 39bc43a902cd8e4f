"""symscalar: explicit static and dynamic scalars for tensor programs.

Ops take ``StaticInt`` (compile-time constants) where a backend needs a constant and
``DynamicInt``/``DynamicFloat`` (runtime values, never ``int``/``float``) where it does not.
``symscalar.jit`` traces a function, checks that contract, differentiates it and runs it;
dynamic values change between calls without recompiling.
"""

import importlib
import sys
from typing import TYPE_CHECKING, Any

# Loaded as the parent package of the mypy plugin (`plugins = ["symscalar.mypy_plugin"]`), the
# package must not import torch: that would add seconds to every mypy run. Nor as the parent of
# the command line (`python -m symscalar check` needs mypy only; Python sets argv[0] to "-m"
# while it imports the package of a `-m` module). There the public API loads on first
# attribute access instead (PEP 562); everywhere else, eagerly as usual.
_LAZY = not TYPE_CHECKING and ("mypy.plugin" in sys.modules or sys.argv[:1] == ["-m"])

if not _LAZY:
    from symscalar import ops as ops
    from symscalar.errors import (
        CheckFailedError,
        DynamicValueError,
        RetraceError,
        StaticValueRequiredError,
        SymscalarError,
        UnsupportedOperationError,
    )
    from symscalar.explain import config, no_retrace
    from symscalar.jit import CacheInfo, JitFunction, JitModule, grad, jit, value_and_grad
    from symscalar.trace import Trace, check_trace, eval_trace, prims
    from symscalar.tracing import TORCH_FUNCTIONS as TORCH_FUNCTIONS
    from symscalar.tracing import supported_torch_functions
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
    "jit",
    "grad",
    "value_and_grad",
    "JitFunction",
    "JitModule",
    "CacheInfo",
    "ops",
    "prims",
    "Trace",
    "check_trace",
    "eval_trace",
    "StaticInt",
    "StaticFloat",
    "StaticBool",
    "StaticDims",
    "StaticShape",
    "DynamicInt",
    "DynamicFloat",
    "DynamicBool",
    "NumberProxy",
    "IntLike",
    "FloatLike",
    "BoolLike",
    "NumberLike",
    "NumberClasses",
    "is_static",
    "is_dynamic",
    "specialize",
    "check",
    "supported_torch_functions",
    "SymscalarError",
    "DynamicValueError",
    "StaticValueRequiredError",
    "UnsupportedOperationError",
    "CheckFailedError",
    "RetraceError",
    "config",
    "no_retrace",
]


def __getattr__(name: str) -> Any:
    """Load the public API on first use when imported lazily (see ``_LAZY``)."""
    if not _LAZY or name not in (*__all__, "TORCH_FUNCTIONS"):
        raise AttributeError(f"module 'symscalar' has no attribute {name!r}")
    importlib.import_module("symscalar.ops")
    namespace: dict[str, Any] = {}
    for module in (
        "symscalar.types",
        "symscalar.errors",
        "symscalar.trace",
        "symscalar.tracing",
        "symscalar.explain",
        "symscalar.jit",
    ):
        namespace.update(vars(importlib.import_module(module)))
    namespace["ops"] = importlib.import_module("symscalar.ops")
    wanted = (*__all__, "TORCH_FUNCTIONS")
    globals().update({key: namespace[key] for key in wanted if key in namespace})
    return globals()[name]
