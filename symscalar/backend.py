"""What a backend is to ``symscalar.jit``, and the registry that names them.

A backend compiles a checked trace into a Python callable of the trace's inputs. ``jit(...,
backend="torch" | "nvfuser" | "inductor" | "auto")`` looks the name up here instead of knowing
the backends: ``"auto"`` takes the registered backend of highest ``priority`` that is usable
for the trace (nvFuser for CUDA inputs when it imports, else torch; never Inductor). A backend
object (``InductorBackend(compile_after=0)``) may be passed instead of a name, to configure it. Each backend module
registers itself once, at import; registering a name twice raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from symscalar.trace import Trace

__all__ = [
    "Backend",
    "Render",
    "register_backend",
    "backend_named",
    "backend_names",
    "check_backend",
    "choose_backend",
]

Render = Callable[[list[str]], str]  # the returned expression over the output names


class Backend(Protocol):
    """A backend, as jit and grad use it."""

    name: str  # what ``jit(backend=...)`` says
    priority: int  # "auto" prefers the usable backend of highest priority

    def compile_trace(self, trace: Trace, render_outputs: Render | None = None) -> Callable[..., Any]:
        """A function of the trace's inputs returning ``render_outputs(names)`` (a tuple by
        default)."""
        ...

    def check_available(self, trace: Trace) -> None:
        """Raise ``BackendUnavailableError`` saying why this backend cannot run ``trace``."""
        ...

    def usable_for(self, trace: Trace) -> bool:
        """Whether ``backend="auto"`` may pick this backend for ``trace``."""
        ...

    def for_entry(self) -> Backend:
        """The backend object one cache entry keeps (it may remember what it compiled)."""
        ...

    def last_fusions(self) -> list[Any]:
        """The fused kernels the entry's programs ran most recently (empty when none)."""
        ...

    def compile_log(self) -> list[Any]:
        """What the entry's backend compiled lazily, after tracing (``explain()`` lists it)."""
        ...


_REGISTRY: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Make ``backend`` selectable by its name; a name registers once."""
    if backend.name in _REGISTRY or backend.name == "auto":
        raise ValueError(f"a backend named {backend.name!r} is already registered")
    _REGISTRY[backend.name] = backend
    return backend


def backend_names() -> tuple[str, ...]:
    """The names ``jit(backend=...)`` accepts."""
    return ("auto", *sorted(_REGISTRY, key=lambda name: -_REGISTRY[name].priority))


def backend_named(name: str) -> Backend:
    if name not in _REGISTRY:
        raise ValueError(f"backend must be one of {backend_names()}, got {name!r}")
    return _REGISTRY[name]


def check_backend(backend: str | Backend) -> None:
    """Raise ``ValueError`` unless ``backend`` is ``"auto"``, a registered name or a backend
    object (what ``jit(backend=...)`` accepts)."""
    if isinstance(backend, str):
        if backend != "auto":
            backend_named(backend)
    elif not callable(getattr(backend, "compile_trace", None)) or not callable(getattr(backend, "for_entry", None)):
        raise ValueError(
            f"backend must be one of {backend_names()} or a backend object (symscalar.backend.Backend), got {backend!r}"
        )


def choose_backend(name: str | Backend, trace: Trace) -> Backend:
    """The backend object for a new cache entry of ``trace``: the named (or given) one
    (raising when it cannot run the trace), or for ``"auto"`` the usable one of highest
    priority."""
    if not isinstance(name, str):
        name.check_available(trace)
        return name.for_entry()
    if name != "auto":
        backend = backend_named(name)
        backend.check_available(trace)
        return backend.for_entry()
    for backend in sorted(_REGISTRY.values(), key=lambda b: -b.priority):
        if backend.usable_for(trace):
            return backend.for_entry()
    raise ValueError(f"no registered backend can run {trace.name}; registered: {list(_REGISTRY)}")
