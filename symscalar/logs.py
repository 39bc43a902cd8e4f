"""symscalar's logging: standard ``logging`` loggers, one per concern, and ``SYMSCALAR_LOGS``.

symscalar logs through ``logging.getLogger("symscalar")`` and its children, so an
application configures them like any other library's:

- ``symscalar.jit``: each trace of a jitted function at INFO (why it traced; see
  ``symscalar/explain.py``), a progress line at INFO while a first call (a cache miss) has
  taken more than ``PROGRESS_AFTER_S`` seconds, and the whole miss at DEBUG;
- ``symscalar.trace``: recording a trace and checking it (DEBUG, with times and sizes);
- ``symscalar.grad``: building backward traces (DEBUG);
- ``symscalar.backend``: compiling a trace for a backend (DEBUG).

Nothing is printed unless asked for (a library leaves handlers to the application), except
through ``SYMSCALAR_LOGS``, read once at import and validated like ``TORCH_LOGS``: a
comma-separated list of components (``jit``, ``trace``, ``grad``, ``backend``, ``all``) at
INFO, ``+component`` at DEBUG, ``-component`` at ERROR, and artifacts (``retraces``,
``progress``) that show those records only. An unknown setting raises
``ConfigurationError`` listing the valid ones, as ``TORCH_LOGS=bogus`` does: a typo must not
silently show nothing. ``set_logs`` does the same from code.

The phase events cost a few attribute reads per cache miss when nothing listens; a cache hit
logs nothing.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
import time
from types import TracebackType

from symscalar.errors import ConfigurationError

__all__ = [
    "jit_log",
    "trace_log",
    "grad_log",
    "backend_log",
    "COMPONENTS",
    "ARTIFACTS",
    "PROGRESS_AFTER_S",
    "set_logs",
    "phase",
    "first_call",
    "artifact",
]

root_log = logging.getLogger("symscalar")
jit_log = logging.getLogger("symscalar.jit")
trace_log = logging.getLogger("symscalar.trace")
grad_log = logging.getLogger("symscalar.grad")
backend_log = logging.getLogger("symscalar.backend")

COMPONENTS: dict[str, logging.Logger] = {"jit": jit_log, "trace": trace_log, "grad": grad_log, "backend": backend_log}
# artifact -> what it shows: the records of one kind, whatever their logger's level
ARTIFACTS: dict[str, str] = {
    "retraces": "each trace of a jitted function and why it happened (INFO on symscalar.jit)",
    "progress": "what a first call that has taken over a second is doing (INFO on symscalar.jit)",
}
_ARTIFACT_LOGGER = {"retraces": jit_log, "progress": jit_log}

# A first call (cache miss) running longer than this logs what it is doing.
PROGRESS_AFTER_S = 1.0

_LEVELS = {"+": logging.DEBUG, "": logging.INFO, "-": logging.ERROR}
_handler: logging.Handler | None = None  # the one SYMSCALAR_LOGS / set_logs installed
_levels_set: list[logging.Logger] = []


def artifact(name: str) -> dict[str, str]:
    """The ``extra=`` of a record of artifact ``name`` (``jit_log.info(..., extra=artifact("retraces"))``)."""
    return {"symscalar_artifact": name}


def _valid_settings() -> str:
    components = ", ".join(f"{c} (+{c}, -{c})" for c in [*COMPONENTS, "all"])
    artifacts = "; ".join(f"{a}: {what}" for a, what in ARTIFACTS.items())
    return f"components {components}; artifacts {artifacts}"


def _parse(spec: str) -> tuple[dict[str, int], set[str]]:
    levels: dict[str, int] = {}
    artifacts: set[str] = set()
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            continue
        sign, name = (part[0], part[1:]) if part[0] in "+-" else ("", part)
        if name in ARTIFACTS and not sign:
            artifacts.add(name)
        elif name in COMPONENTS or name == "all":
            for component in COMPONENTS if name == "all" else [name]:
                levels[component] = _LEVELS[sign]
        else:
            raise ConfigurationError(
                f"SYMSCALAR_LOGS: unknown setting {part!r}. Valid settings, comma-separated: "
                f"{_valid_settings()}. Example: SYMSCALAR_LOGS='+jit,retraces'."
            )
    return levels, artifacts


class _Filter(logging.Filter):
    """Pass a record when its component was asked for at its level, or its artifact was."""

    def __init__(self, levels: dict[str, int], artifacts: set[str]) -> None:
        super().__init__()
        self.levels = levels
        self.artifacts = artifacts

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "symscalar_artifact", None) in self.artifacts:
            return True
        component = record.name.split(".")[1] if record.name.count(".") >= 1 else ""
        wanted = self.levels.get(component)
        return wanted is not None and record.levelno >= wanted


def set_logs(spec: str) -> None:
    """Show symscalar's logs on stderr as ``SYMSCALAR_LOGS=spec`` would (see the module
    docstring); ``""`` turns them off again. Replaces the previous setting.

    Raises:
        ConfigurationError: ``spec`` names an unknown component or artifact.

    Example:
        >>> symscalar.set_logs("+trace,retraces")  # DEBUG of tracing, and every retrace
    """
    global _handler
    levels, artifacts = _parse(spec)
    if _handler is not None:
        root_log.removeHandler(_handler)
        _handler = None
    for log in _levels_set:
        log.setLevel(logging.NOTSET)
    _levels_set.clear()
    if not levels and not artifacts:
        return
    wanted: dict[logging.Logger, int] = {}
    for component, level in levels.items():
        wanted[COMPONENTS[component]] = level
    for name in artifacts:
        log = _ARTIFACT_LOGGER[name]
        wanted[log] = min(wanted.get(log, logging.INFO), logging.INFO)
    for log, level in wanted.items():
        log.setLevel(level)
        _levels_set.append(log)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[symscalar] %(message)s"))
    handler.addFilter(_Filter(levels, artifacts))
    root_log.addHandler(handler)
    _handler = handler


# -- phases and progress ------------------------------------------------------------------


class _FirstCall:
    """A cache miss in progress: its label, start, current phase; logs a progress line once
    it has run for ``PROGRESS_AFTER_S`` (from a timer thread, so that a single long phase is
    reported while it runs), then at the start of every later phase and at the end."""

    __slots__ = ("label", "start", "phase", "reported", "timer", "_token")

    def __init__(self, label: str) -> None:
        self.label = label
        self.phase = "tracing the function"
        self.reported = False
        self.timer: threading.Timer | None = None
        self.start = time.perf_counter()

    def __enter__(self) -> _FirstCall:
        self._token = _current.set(self)
        if jit_log.isEnabledFor(logging.INFO):
            self.timer = threading.Timer(PROGRESS_AFTER_S, self._still_running)
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        _current.reset(self._token)
        if self.timer is not None:
            self.timer.cancel()
        elapsed = time.perf_counter() - self.start
        if self.reported or elapsed > PROGRESS_AFTER_S:
            outcome = "done" if kind is None else f"failed ({kind.__name__})"
            jit_log.info("%s: %s in %.1f s", self.label, outcome, elapsed, extra=artifact("progress"))
        if jit_log.isEnabledFor(logging.DEBUG):
            jit_log.debug("%s: traced and compiled in %.1f ms", self.label, elapsed * 1e3)

    def _still_running(self) -> None:
        self.reported = True
        elapsed = time.perf_counter() - self.start
        jit_log.info("%s: still running after %.1f s: %s", self.label, elapsed, self.phase, extra=artifact("progress"))

    def enter_phase(self, what: str) -> None:
        self.phase = what
        if self.reported:
            elapsed = time.perf_counter() - self.start
            jit_log.info("%s: %s (%.1f s so far)", self.label, what, elapsed, extra=artifact("progress"))


_current: contextvars.ContextVar[_FirstCall | None] = contextvars.ContextVar("symscalar_first_call", default=None)


def first_call(label: str) -> _FirstCall:
    """Context of a cache miss (``label``: ``"f trace #2"``): the progress line and the
    DEBUG event of the whole miss. ``phase`` contexts inside it say what it is doing."""
    return _FirstCall(label)


class phase:  # noqa: N801 - used as a context manager, like contextlib's lower-case ones
    """One phase of a miss (tracing, checking, building a backward, compiling), logged at
    DEBUG on ``log`` with its time and ``detail`` (set inside the block: ``p.detail =
    "12 equations"``); it is also what a progress line says the miss is doing."""

    __slots__ = ("log", "name", "what", "detail", "start")

    def __init__(self, log: logging.Logger, name: str, what: str) -> None:
        self.log = log
        self.name = name
        self.what = what
        self.detail = ""

    def __enter__(self) -> phase:
        call = _current.get()
        if call is not None:
            call.enter_phase(f"{self.what} ({self.name})")
        self.start = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None and self.log.isEnabledFor(logging.DEBUG):
            ms = (time.perf_counter() - self.start) * 1e3
            detail = f", {self.detail}" if self.detail else ""
            self.log.debug("%s: %s: %.2f ms%s", self.name, self.what, ms, detail)


set_logs(os.environ.get("SYMSCALAR_LOGS", ""))
