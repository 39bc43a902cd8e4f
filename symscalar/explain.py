"""Why a jitted function traced again, and how often it may.

Every cache miss of a jitted function is recorded as a ``Miss``: what differs from the closest
earlier call that traced (``parameter 'dim' 0 → 1``, ``tensor 'x' shape (8, 8) → (16, 8)``,
``grad mode off → on``, a failed ``specialize`` guard), where the parameter is declared, the
fix where there is one, and how long the trace took. ``f.explain()`` lists them; the
``symscalar.jit`` logger logs each at INFO (``SYMSCALAR_LOGS=retraces`` shows them; see
``symscalar/logs.py``).

A trace budget (``config.max_traces``, or ``jit(max_traces=...)``) warns or raises when a
function keeps tracing; ``no_retrace()`` (or ``jit(retrace=False)``) makes any miss raise
``RetraceError``, for tests and serving. Recording happens on misses only: the per-call path
of a cache hit does not change.

Facts about a call are kept as ``{label: (display, comparable)}``: the comparable part decides
whether two calls differ (``200`` and ``200.0`` differ by type), the display is what a message
shows.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import sys
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from symscalar import logs
from symscalar.errors import RetraceError
from symscalar.generated import called_from_symscalar

__all__ = [
    "Config",
    "config",
    "Miss",
    "Explanation",
    "WouldTrace",
    "TraceLimitWarning",
    "UnannotatedNumberWarning",
    "no_retrace",
    "retrace_forbidden",
    "Facts",
    "differences",
    "closest",
    "RetraceLog",
    "logger",
]

logger = logs.jit_log


def _user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the user's call: the first frame
    outside symscalar (its modules and the code it generates)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and called_from_symscalar(frame, generated=True):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


@dataclasses.dataclass
class Config:
    """Global defaults of ``symscalar.jit``'s limits; ``jit(...)`` options override them.

    Attributes:
        max_traces: how many traces one jitted function may make before ``on_limit`` applies
            (torch.compile's recompile limit is 8 too).
        on_limit: ``"warn"`` (once per function) or ``"error"`` (``RetraceError``).
        max_entries: how many compiled entries one jitted function keeps; the least recently
            used is evicted beyond that.
    """

    max_traces: int = 8
    on_limit: str = "warn"
    max_entries: int = 256


config = Config()

_ON_LIMIT = ("warn", "error")


def check_limits(max_traces: int | None, on_limit: str | None, max_entries: int | None) -> None:
    """Reject bad option values with a message that says what is allowed."""
    if max_traces is not None and (isinstance(max_traces, bool) or not isinstance(max_traces, int) or max_traces < 1):
        raise ValueError(f"max_traces must be a positive int, got {max_traces!r}")
    if on_limit is not None and on_limit not in _ON_LIMIT:
        raise ValueError(f"on_limit must be one of {_ON_LIMIT}, got {on_limit!r}")
    if max_entries is not None and (
        isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1
    ):
        raise ValueError(f"max_entries must be a positive int, got {max_entries!r}")


class TraceLimitWarning(UserWarning):
    """A jitted function traced more often than its budget (``max_traces``) allows."""


class RetraceWarning(UserWarning):
    """A call pattern that traces a new program on every call (a state argument that grows,
    such as a dynamic KV cache), with the fix; warned once per function."""


class UnannotatedNumberWarning(UserWarning):
    """An unannotated (hence static) number caused repeated retraces."""


_forbidden: contextvars.ContextVar[bool] = contextvars.ContextVar("symscalar_no_retrace", default=False)


@contextlib.contextmanager
def no_retrace() -> Iterator[None]:
    """Inside this block, a call of any jitted function that would trace raises
    ``RetraceError`` with the reason instead (warm the cache first, then serve or test).

    Example:
        >>> f(x, 0.5)                 # warm up: traces
        >>> with symscalar.no_retrace():
        ...     f(x, 0.7)             # a dynamic value: a hit
        ...     f(x.double(), 0.7)    # RetraceError: tensor 'x' dtype torch.float32 → torch.float64
    """
    token = _forbidden.set(True)
    try:
        yield
    finally:
        _forbidden.reset(token)


def retrace_forbidden() -> bool:
    return _forbidden.get()


# A call's facts: label -> (display, comparable).
Facts = Mapping[str, tuple[str, Any]]


def differences(old: Facts, new: Facts) -> list[str]:
    """``label old → new`` for every fact that differs (in the order of ``new``)."""
    out = []
    for label, (shown, value) in new.items():
        before = old.get(label)
        if before is None:
            out.append(f"{label} (absent) → {shown}")
        elif before[1] != value:
            out.append(f"{label} {before[0]} → {shown}")
    out.extend(f"{label} {old[label][0]} → (absent)" for label in old if label not in new)
    return out


def closest(candidates: Sequence[Facts], new: Facts) -> Facts | None:
    """The earlier call whose facts differ from ``new`` in the fewest places."""
    if not candidates:
        return None
    return min(reversed(candidates), key=lambda old: len(differences(old, new)))


@dataclasses.dataclass(frozen=True)
class Miss:
    """One trace of a jitted function and why it happened."""

    function: str  # the jitted function's name
    reasons: tuple[str, ...]  # what differs from the closest earlier trace, with fixes
    trace_ms: float  # how long tracing and compiling took
    number: int  # 1 for the first trace of the function, 2 for the next...

    def __str__(self) -> str:
        return f"{self.function} trace #{self.number}: {'; '.join(self.reasons)} ({self.trace_ms:.1f} ms)"


# How many traces ``explain()`` keeps (the most recent; ``Explanation.total`` counts them all)
HISTORY = 64


class Explanation(list[Miss]):
    """What ``f.explain()`` returns: the misses in order (the last ``HISTORY``; ``total``
    counts every trace); prints one line a miss. ``compiles`` lists what a lazily compiling
    backend (``backend="inductor"``) compiled after tracing, in the cached entries, with how
    long each took (printed after the misses). ``guards`` lists the size guards of the cached
    entries (``symscalar/size_guards.py``), each with the line and the op that asked for it."""

    def __init__(
        self,
        misses: Iterable[Miss] = (),
        compiles: Iterable[Any] = (),
        total: int | None = None,
        guards: Iterable[Any] = (),
    ) -> None:
        super().__init__(misses)
        self.compiles: list[Any] = list(compiles)
        self.guards: list[Any] = list(guards)
        self.total = len(self) if total is None else total

    def __str__(self) -> str:
        if not self:
            return "no traces yet"
        earlier = self.total - len(self)
        head = [f"({earlier} earlier traces not kept)"] if earlier > 0 else []
        return "\n".join(
            [*head, *map(str, self), *(f"  compile {c}" for c in self.compiles), *(f"  {g}" for g in self.guards)]
        )


@dataclasses.dataclass(frozen=True)
class WouldTrace:
    """What ``f.would_trace(...)`` returns: true when the call would trace, with the reasons."""

    trace: bool
    reasons: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.trace

    def __str__(self) -> str:
        return "; ".join(self.reasons) if self.trace else "a cache hit"


class RetraceLog:
    """A jitted function's record of its traces, its budget, and its one-time warnings."""

    def __init__(self, function: str, max_traces: int | None, on_limit: str | None, allowed: bool) -> None:
        self.function = function
        self._max_traces = max_traces
        self._on_limit = on_limit
        self.allowed = allowed  # jit(retrace=False) makes every miss an error
        # the last HISTORY traces (why, and the facts of their calls): a function that keeps
        # tracing (a new shape per call under max_entries) must not keep every record
        self.misses: collections.deque[Miss] = collections.deque(maxlen=HISTORY)
        self.facts: collections.deque[Facts] = collections.deque(maxlen=HISTORY)
        self.traces = 0  # every trace, including those no longer in the history
        self.label_counts: collections.Counter[str] = collections.Counter()  # retraces by cause
        self._warned_limit = False
        self._warned_numbers: set[str] = set()

    @property
    def max_traces(self) -> int:
        return self._max_traces if self._max_traces is not None else config.max_traces

    @property
    def on_limit(self) -> str:
        return self._on_limit if self._on_limit is not None else config.on_limit

    def reasons(self, facts: Facts, extra: list[str]) -> list[str]:
        """Why a call with ``facts`` misses: ``extra`` (failed guards) or the differences from
        the closest earlier call that traced."""
        if extra:
            return extra
        old = closest(self.facts, facts)
        if old is None:
            return ["first call"]
        found = differences(old, facts)
        return found or [
            "the same as an earlier call that traced: its entry was evicted (max_entries), "
            "removed by cache_clear(), or state captured from outside the function changed"
        ]

    def before_trace(self, reasons: list[str], fixes: Mapping[str, str]) -> None:
        """Called on a miss, before tracing: raise where retracing is forbidden or over budget."""
        shown = [_with_fix(r, fixes) for r in reasons]
        if not self.allowed or retrace_forbidden():
            where = "jit(..., retrace=False)" if not self.allowed else "symscalar.no_retrace()"
            raise RetraceError(
                f"{self.function} would trace again under {where}: "
                + "; ".join(shown)
                + ". Warm the cache with this kind of call first, or fix the cause."
            )
        if self.traces >= self.max_traces:
            if self.on_limit == "error":
                raise RetraceError(self._limit_message(reasons, fixes, "would trace"))
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(
                    self._limit_message(reasons, fixes, "traces"), TraceLimitWarning, stacklevel=_user_stacklevel()
                )

    def record(
        self, facts: Facts, reasons: list[str], fixes: Mapping[str, str], trace_ms: float, auto_numbers: Collection[str]
    ) -> Miss:
        """Record a trace that happened; log it, warn where a limit or a habit calls for it."""
        for reason in reasons:
            for fact_label in facts:
                if reason.startswith(fact_label + " "):
                    self.label_counts[fact_label] += 1
        self.traces += 1
        miss = Miss(self.function, tuple(_with_fix(r, fixes) for r in reasons), trace_ms, self.traces)
        self.misses.append(miss)
        self.facts.append(dict(facts))
        logger.info("%s", miss, extra=logs.artifact("retraces"))
        for label in auto_numbers:
            if self.label_counts[label] >= 2 and label not in self._warned_numbers:
                self._warned_numbers.add(label)
                seen = list(dict.fromkeys(f[label][0] for f in self.facts if label in f))
                annotation = _annotation_for({f[label][1][0] for f in self.facts if label in f})
                warnings.warn(
                    f"{self.function}: unannotated number {label} has caused "
                    f"{self.label_counts[label]} retraces (values {', '.join(seen)}). "
                    f"Unannotated numbers are static: each new value compiles a new program. "
                    f"Annotate it {annotation} to make it a runtime input (one program for all values).",
                    UnannotatedNumberWarning,
                    stacklevel=_user_stacklevel(),
                )
        return miss

    def _limit_message(self, reasons: list[str], fixes: Mapping[str, str], verb: str) -> str:
        text = (
            f"{self.function} has traced {self.traces} times (max_traces={self.max_traces}); "
            f"this call {verb} again because " + "; ".join(_with_fix(r, fixes) for r in reasons) + "."
        )
        if self.label_counts:
            label, count = self.label_counts.most_common(1)[0]
            seen = list(dict.fromkeys(f[label][0] for f in self.facts if label in f))
            text += f" Most retraces came from {label} ({count} of {self.traces - 1}; values so far: {', '.join(seen)})"
            fix = fixes.get(label)
            text += f": {fix}." if fix else "."
        return text + " Raise the limit with jit(..., max_traces=N) or symscalar.config.max_traces."


def _annotation_for(types: set[type]) -> str:
    """The dynamic annotation that accepts every Python number type seen."""
    if types <= {bool}:
        return "DynamicBool"
    if types <= {int}:
        return "DynamicInt"
    if types <= {int, float}:
        return "DynamicFloat"
    return "NumberLike"


def _with_fix(reason: str, fixes: Mapping[str, str]) -> str:
    for label, fix in fixes.items():
        if reason.startswith(label + " "):
            return f"{reason} ({fix})"
    return reason
