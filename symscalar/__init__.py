"""symscalar: explicit static and dynamic scalars for tensor programs.

Ops take ``StaticInt`` (compile-time constants) where a backend needs a constant and
``DynamicInt``/``DynamicFloat`` (runtime values, never ``int``/``float``) where it does not.
``symscalar.jit`` traces a function, checks that contract, differentiates it and runs it;
dynamic values change between calls without recompiling.
"""

import importlib
import importlib.metadata
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Loaded as the parent package of the mypy plugin (`plugins = ["symscalar.mypy_plugin"]`), the
# package must not import torch: that would add seconds to every mypy run. Nor as the parent of
# the command line (`python -m symscalar check` needs mypy only; Python sets argv[0] to "-m"
# while it imports the package of a `-m` module). There the public API loads on first
# attribute access instead (PEP 562); everywhere else, eagerly as usual.
_LAZY = not TYPE_CHECKING and ("mypy.plugin" in sys.modules or sys.argv[:1] == ["-m"])

if TYPE_CHECKING:  # lightning-thunder is optional: the module that needs it loads on first use
    from symscalar.thunder_lint import LintReport

if not _LAZY:
    from symscalar import ops as ops
    from symscalar.errors import (
        CheckFailedError,
        ConfigurationError,
        DynamicValueError,
        RetraceError,
        ShapeContractError,
        StaticValueRequiredError,
        SymscalarError,
        UnsupportedOperationError,
    )
    from symscalar.explain import config, no_retrace
    from symscalar.frontend import TORCH_FUNCTIONS as TORCH_FUNCTIONS
    from symscalar.frontend import supported_torch_functions
    from symscalar.jit import CacheInfo, JitFunction, JitModule, grad, jit, value_and_grad
    from symscalar.logs import set_logs
    from symscalar.sizes import Dim, Dims
    from symscalar.trace import Trace, check_trace, eval_trace, prims
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


def _version() -> str:
    """The version pyproject.toml declares: from the installed metadata, or, in a source
    checkout on ``sys.path`` without metadata (scripts/bootstrap.sh), from the file itself."""
    try:
        return importlib.metadata.version("symscalar")
    except importlib.metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        found = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.MULTILINE) if pyproject.exists() else None
        return found.group(1) if found else "0+unknown"


__version__ = _version()

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
    "ConfigurationError",
    "ShapeContractError",
    "Dim",
    "Dims",
    "config",
    "no_retrace",
    "lint_thunder",
    "set_logs",
]


def lint_thunder(target: Any) -> "LintReport":
    """Check lightning-thunder traces against symscalar's static/dynamic contract and return a
    ``symscalar.thunder_lint.LintReport`` (see that module and docs/thunder_lint.md). ``target``
    is a function returned by ``thunder.jit`` that has run, a thunder trace, or a list of traces.
    thunder is optional: it is imported here, on first use, never by ``import symscalar``."""
    report: LintReport = importlib.import_module("symscalar.thunder_lint").lint_thunder(target)
    return report


def __getattr__(name: str) -> Any:
    """Load the public API on first use when imported lazily (see ``_LAZY``)."""
    if not _LAZY or name not in (*__all__, "TORCH_FUNCTIONS"):
        raise AttributeError(f"module 'symscalar' has no attribute {name!r}")
    importlib.import_module("symscalar.ops")
    namespace: dict[str, Any] = {}
    for module in (
        "symscalar.types",
        "symscalar.errors",
        "symscalar.sizes",
        "symscalar.trace",
        "symscalar.frontend",
        "symscalar.explain",
        "symscalar.logs",
        "symscalar.jit",
    ):
        namespace.update(vars(importlib.import_module(module)))
    namespace["ops"] = importlib.import_module("symscalar.ops")
    wanted = (*__all__, "TORCH_FUNCTIONS")
    globals().update({key: namespace[key] for key in wanted if key in namespace})
    return globals()[name]
