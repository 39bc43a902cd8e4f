"""The errors symscalar raises.

Every error that concerns the static/dynamic contract names the value, where it came from,
and the fix, so that a user never has to read a traceback from inside the tracer.
"""

from __future__ import annotations

__all__ = [
    "SymscalarError",
    "DynamicValueError",
    "StaticValueRequiredError",
    "TraceCheckError",
    "UnsupportedOperationError",
    "CheckFailedError",
    "BackendUnavailableError",
    "RetraceError",
    "RegistrationError",
    "MissingDependencyError",
    "ConfigurationError",
    "ShapeContractError",
    "JitOptionError",
]


class SymscalarError(Exception):
    """Base class of every error symscalar raises."""


class DynamicValueError(SymscalarError, TypeError):
    """A dynamic value was implicitly turned into a Python value at trace time.

    ``bool(d)``, ``int(d)``, ``float(d)`` and ``d.__index__()`` (so ``if d > 0:``,
    ``range(d)``, ``lst[d]``) need the concrete value, which a dynamic value does not have
    until the compiled program runs.
    """


class StaticValueRequiredError(SymscalarError, TypeError):
    """A dynamic value reached a parameter that must be a compile-time constant."""


class TraceCheckError(SymscalarError):
    """``check_trace`` found a malformed trace (use before definition, wrong meta, ...)."""


class UnsupportedOperationError(SymscalarError, NotImplementedError):
    """A torch function or method that symscalar cannot trace was called on a traced value."""


class CheckFailedError(SymscalarError, RuntimeError):
    """A runtime check recorded with ``symscalar.check`` failed when the program ran."""


class BackendUnavailableError(SymscalarError, RuntimeError):
    """The requested backend cannot run these inputs (no CUDA, nvFuser not installed, ...)."""


class RetraceError(SymscalarError, RuntimeError):
    """A jitted function would trace again where that is forbidden (``symscalar.no_retrace()``,
    ``jit(retrace=False)``) or over its budget (``max_traces`` with ``on_limit="error"``).
    The message says what differs from the closest earlier call and how to fix it."""


class RegistrationError(SymscalarError, ValueError):
    """Something was registered twice: a primitive name, a vjp, a backend lowering, an op or a
    torch spelling. Each is registered once, next to its op; a second registration would
    silently replace the first depending on import order."""


class MissingDependencyError(SymscalarError, ImportError):
    """An optional dependency a feature needs is not installed (``symscalar.lint_thunder`` needs
    lightning-thunder: ``pip install symscalar[thunder]``)."""


class ConfigurationError(SymscalarError, ValueError):
    """A setting symscalar reads has a value it does not accept (``SYMSCALAR_LOGS=bogus``);
    the message lists the valid values."""


class ShapeContractError(SymscalarError, ValueError):
    """A call's tensor shapes violate the jitted function's declared dynamic dims (a size out
    of its declared range, two sizes declared equal that differ, a rank too small): the
    message names the parameter, the dim and the values. Never a silent retrace."""


class JitOptionError(SymscalarError, ValueError):
    """``jit(static=..., dynamic=...)`` names something that is not a parameter, names one
    parameter in both, or contradicts a parameter's annotation (the annotation decides; the
    options only decide for parameters whose annotation does not). Raised when ``jit`` is
    applied; the mypy plugin reports the same at the ``jit(...)`` call."""
