"""Size guards: a decision about dynamic sizes that the declared ranges cannot make, recorded.

Library code branches on sizes (transformers' mask helpers: ``if q_length == 1 or ...``) where
the normal form and the declared ranges (``sizes.decide``) give no answer. Refusing every such
branch makes real models untraceable with dynamic dims; answering with the trace-time sizes
and forgetting it would silently run the program on sizes it is wrong for. A guard is the
third way: the answer at the traced sizes is taken, and the condition it assumed (``s_T != 1``)
is recorded with the user's file:line and what asked for it. The cache entry checks its
guards on every call before its program runs (``checker``), so a call whose sizes fail a guard
retraces (a new entry under the same key) and never runs a program traced for other sizes.

A guard that leaves a declared dim one possible value (``s_T == 1``, or ``s_T <= 1`` with
``min=1``) would make that dim static without saying so; it is refused unless the dim opts in
with ``Dim(name, specialize=True)`` (each such value is then its own program). ``explain()``
lists every guard and ``cache_info().guards`` counts them.

Torch-free: it knows sizes (``sizes.Size``) and the tracer only as a weak key.
"""

from __future__ import annotations

import dataclasses
import fractions
import math
import operator
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symscalar import sizes
from symscalar.callsite import user_location
from symscalar.errors import DynamicValueError
from symscalar.generated import exec_generated
from symscalar.sizes import Symbol
from symscalar.types import current_tracer

__all__ = [
    "SizeGuard",
    "decide_or_guard",
    "guard_at_hints",
    "pinned",
    "linear",
    "guarded",
    "guards_of",
    "same_size",
    "equal_shapes",
    "known_equal",
    "broadcast_size",
    "eager_raises",
    "checker",
    "failed",
    "input_dims",
    "WINDOW",
]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}
_SPELLING = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_NEGATION = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
# How far around the traced size a one-dim guard is searched for another value it allows (the
# test of "pins the dim to one value"; exact for the linear and polynomial guards model code
# writes, whose other solutions, if any, are near or absent).
WINDOW = 256


@dataclasses.dataclass(frozen=True)
class SizeGuard:
    """``lhs <op> rhs`` holds (``op``: lt, le, gt, ge, eq, ne), as it did when traced."""

    lhs: Any  # a sizes.Size or an int
    op: str
    rhs: Any
    asked_by: str  # what asked: the comparison as the code wrote it, or the op
    where: str | None  # the user's file:line

    def holds(self, values: Mapping[Symbol, int]) -> bool:
        return _OPS[self.op](sizes.evaluate(self.lhs, values), sizes.evaluate(self.rhs, values))

    def condition(self) -> str:
        return f"{self.lhs!r} {_SPELLING[self.op]} {self.rhs!r}"

    def __str__(self) -> str:
        return f"guard {self.condition()}: asked by {self.asked_by} at {self.where or 'an unknown line'}"


# Per tracer (a TraceBuilder), the guards its trace recorded, in order.
_GUARDS: weakref.WeakKeyDictionary[Any, list[SizeGuard]] = weakref.WeakKeyDictionary()


def guards_of(tracer: Any) -> tuple[SizeGuard, ...]:
    return tuple(_GUARDS.get(tracer, ()))


def decide_or_guard(tracer: Any, op: str, a: Any, b: Any, asked_by: str) -> bool:
    """``a <op> b`` for sizes: decided by the ranges if they can, else the answer at the traced
    sizes, recorded as a guard of ``tracer``'s trace. Raises ``DynamicValueError`` where that
    guard pins a declared dim to one value and the dim does not opt in."""
    guard = guard_at_hints(op, a, b, asked_by, user_location())
    if guard is None:
        decided = sizes.decide(op, a, b)
        assert decided is not None
        return decided
    answer = guard.op == op
    known = _GUARDS.setdefault(tracer, [])
    if any(g.lhs == guard.lhs and g.op == guard.op and g.rhs == guard.rhs for g in known):
        return answer
    form = linear(guard)
    if form is not None and _feasible(form[0], known) == _feasible(form[0], [*known, guard]):
        return answer  # implied by the guards already recorded (s_T > 1 after s_T != 1, min 1)
    symbol = pinned(guard, known)
    if symbol is not None:
        raise _pinning_error(guard, symbol)
    known.append(guard)
    return answer


def guard_at_hints(op: str, a: Any, b: Any, asked_by: str, where: str | None) -> SizeGuard | None:
    """The guard ``a <op> b`` needs at the traced sizes (the symbols' hints): the comparison
    or its negation, whichever holds there; None where the normal form and the declared ranges
    decide it. (The mypy plugin asks the same of each size comparison at every size.)"""
    if sizes.decide(op, a, b) is not None:
        return None
    answer = bool(_OPS[op](sizes.hint(a), sizes.hint(b)))
    return SizeGuard(a, op if answer else _NEGATION[op], b, asked_by, where)


def pinned(guard: SizeGuard, known: Sequence[SizeGuard] = ()) -> Symbol | None:
    """The declared dim that ``guard``, with the guards ``known`` already, leaves one possible
    value, unless it opts in (``Dim(specialize=True)``); None if it pins none."""
    for symbol in sorted(sizes.symbols_of((guard.lhs, guard.rhs)), key=repr):
        if not symbol.specialize and _pins(symbol, [*known, guard]):
            return symbol
    return None


def guarded(op: str, a: Any, b: Any, asked_by: str) -> bool:
    """``decide_or_guard`` in the trace being recorded (an op's frontend: squeeze, split)."""
    tracer = current_tracer.get()
    if tracer is None:
        raise sizes.SizeDecisionError(f"{asked_by}: a dynamic size compared outside a trace")
    return decide_or_guard(tracer, op, a, b, asked_by)


# Per declared dim (weakly: a trace no longer used is forgotten), the pairs of sizes a size
# guard of its trace made equal, so that evaluating the same op again (check_trace, the
# backward's metas) finds them equal without a guard of its own.
_EQUAL: weakref.WeakKeyDictionary[Symbol, set[frozenset[Any]]] = weakref.WeakKeyDictionary()


def same_size(a: Any, b: Any, what: str) -> bool:
    """Whether two sizes an op needs equal (matmul's inner dims, cat's other dims) are equal.

    Two dims provably equal (the same normal form) or two static ints need no guard. Where a
    dynamic dim meets a different size and both were equal at the traced sizes, eager's result
    holds only while they stay equal: the equality is a size guard (``s_K == s_T``), which
    pins a dim met by a static size (refused unless the dim opts in). Sizes that differ at
    the traced sizes are unequal: the op raises eager's error. Only the user's trace records
    a guard (its cache entry checks them); elsewhere the equality must be one it recorded.
    """
    if a == b or not (isinstance(a, sizes.Size) or isinstance(b, sizes.Size)):
        return bool(a == b)
    if sizes.hint(a) != sizes.hint(b):
        return False
    if known_equal(a, b):
        return True
    tracer = current_tracer.get()
    if not getattr(tracer, "checks_size_guards", False):
        raise sizes.SizeDecisionError(
            f"{what}: {a!r} meets {b!r}, which are not provably equal, where no size guard can be recorded "
            "(inside symscalar's own code: a backward rule). Declare the two dims with the same name."
        )
    lhs, rhs = sorted((a, b), key=lambda v: (not isinstance(v, sizes.Size), repr(v)))
    equal = decide_or_guard(tracer, "eq", lhs, rhs, f"{what}: {a!r} meets {b!r}")
    if equal:
        _EQUAL.setdefault(min(sizes.symbols_of((a, b)), key=repr), set()).add(frozenset((a, b)))
    return equal


# Per declared dim (weakly, as ``_EQUAL``), the quotients a reshape's -1 took only under the
# guards pinning a dim (``pinned_values``): the backward's metas evaluate the reshape again
# outside the trace that recorded the guards.
_QUOTIENTS: weakref.WeakKeyDictionary[Symbol, dict[tuple[Any, Any], Any]] = weakref.WeakKeyDictionary()


def remember_pinned(a: Any, b: Any, quotient: Any = None) -> None:
    """Note that ``a == b`` (or, with ``quotient``, ``a // b == quotient``) holds under the size
    guards of the trace being recorded, for ``known_equal`` and ``pinned_quotient`` to find."""
    symbol = min(sizes.symbols_of((a, b)), key=repr)
    if quotient is None:
        _EQUAL.setdefault(symbol, set()).add(frozenset((a, b)))
    else:
        _QUOTIENTS.setdefault(symbol, {})[(a, b)] = quotient


def pinned_quotient(a: Any, b: Any) -> Any:
    """The quotient ``remember_pinned`` noted for ``a // b``, or None."""
    found = sizes.symbols_of((a, b))
    return _QUOTIENTS.get(min(found, key=repr), {}).get((a, b)) if found else None


def known_equal(a: Any, b: Any) -> bool:
    """Whether ``a == b`` structurally or by a size guard ``same_size`` recorded (no new guard):
    a dynamic dim pinned to 1 (``s_A == 1``, opted in) is a broadcast dim to the vjp rules."""
    if a == b or not (isinstance(a, sizes.Size) or isinstance(b, sizes.Size)):
        return bool(a == b)
    return frozenset((a, b)) in _EQUAL.get(min(sizes.symbols_of((a, b)), key=repr), ())


def equal_shapes(a: Sequence[Any], b: Sequence[Any], what: str) -> bool:
    """Whether two shapes are equal dim by dim as ``same_size`` says (guards where it must)."""
    return len(a) == len(b) and all(same_size(x, y, f"{what} (dim {i})") for i, (x, y) in enumerate(zip(a, b)))


def broadcast_size(a: Any, b: Any, what: str) -> Any:
    """The size where two dims broadcast (an elementwise op, matmul's batch dims), at least
    one of them dynamic; raises RuntimeError (eager's message, at the traced sizes) where they
    do not broadcast.

    A dynamic dim never broadcasts: a static 1 broadcasts to it; a dynamic dim broadcasts only
    under the guard that it is 1 (which pins it: refused unless ``Dim(specialize=True)``); two
    dims equal at the traced sizes stay equal under a guard (``same_size``).
    """
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    if same_size(a, b, what):
        return a if isinstance(b, sizes.Size) else b  # a static side: the guard pinned the dim to it
    for one, other in ((a, b), (b, a)):
        if sizes.hint(one) == 1 and same_size(one, 1, f"{what}: broadcasting to {other!r}"):
            return other
    raise RuntimeError(
        f"The size of tensor a ({sizes.hint(a)}) must match the size of tensor b ({sizes.hint(b)}) at "
        f"non-singleton dimension ({what})"
    )


def eager_raises(op: str, a: Any, b: Any, asked_by: str) -> bool:
    """Whether ``a <op> b``, the condition under which eager raises (``numel == 1`` in a
    training norm, a ``-1`` next to a 0), holds for this call. Sizes never compare ``==`` to an
    int as plain objects do (``Size == 1`` is False), so an op must ask here: decided by the
    ranges, else the answer at the traced sizes, where False is recorded as a guard (a program
    is made only for the sizes where eager does not raise; True needs none: the op raises)."""
    if not (isinstance(a, sizes.Size) or isinstance(b, sizes.Size)):
        return bool(_OPS[op](a, b))
    decided = sizes.decide(op, a, b)
    if decided is not None:
        return decided
    if _OPS[op](sizes.hint(a), sizes.hint(b)):
        return True
    return guarded(op, a, b, asked_by)


def linear(guard: SizeGuard) -> tuple[Symbol, int, int] | None:
    """``(s, c1, c0)`` where the guard is ``c1 * s + c0 <op> 0`` over one declared dim."""
    difference = guard.lhs - guard.rhs
    if not isinstance(difference, sizes.Size):
        return None
    symbol, c1, c0 = None, 0, 0
    for monomial, coeff in difference.terms:
        if monomial == ():
            c0 = coeff
        elif len(monomial) == 1 and isinstance(monomial[0], Symbol) and symbol is None:
            symbol, c1 = monomial[0], coeff
        else:
            return None
    return None if symbol is None else (symbol, c1, c0)


_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _feasible(symbol: Symbol, guards: Sequence[SizeGuard]) -> tuple[float, float, frozenset[int]]:
    """The values of ``symbol`` its range and the linear guards over it alone allow: an
    interval ``[lo, hi]`` less the excluded points inside it (the ends not excluded)."""
    lo: float = symbol.min
    hi: float = math.inf if symbol.max is None else symbol.max
    excluded: set[int] = set()
    for guard in guards:
        form = linear(guard)
        if form is None or form[0] is not symbol:
            continue
        _, c1, c0 = form
        op = guard.op if c1 > 0 else _FLIP[guard.op]
        q = fractions.Fraction(-c0, c1)  # symbol <op> q
        if op == "gt":
            lo = max(lo, math.floor(q) + 1)
        elif op == "ge":
            lo = max(lo, math.ceil(q))
        elif op == "lt":
            hi = min(hi, math.ceil(q) - 1)
        elif op == "le":
            hi = min(hi, math.floor(q))
        elif op == "eq":
            lo, hi = (max(lo, int(q)), min(hi, int(q))) if q.denominator == 1 else (1, 0)
        elif q.denominator == 1:
            excluded.add(int(q))
    while lo <= hi and lo in excluded:
        lo += 1
    while lo <= hi and hi in excluded:
        hi -= 1
    return lo, hi, frozenset(v for v in excluded if lo < v < hi)


def pinned_values(tracer: Any) -> dict[Symbol, int]:
    """The declared dims that the linear guards of ``tracer``'s trace leave one value (``s_T == 1``
    of an opted-in dim: a decode step's one token), with that value. The program runs only
    where they hold, so a size may be read at it (a reshape of the one token's heads)."""
    own: dict[Symbol, list[SizeGuard]] = {}
    for guard in _GUARDS.get(tracer, ()):
        form = linear(guard)
        if form is not None:
            own.setdefault(form[0], []).append(guard)
    values = {}
    for symbol, guards in own.items():
        lo, hi, _ = _feasible(symbol, guards)
        if lo == hi:
            values[symbol] = int(lo)
    return values


def _pins(symbol: Symbol, guards: Sequence[SizeGuard]) -> bool:
    """Whether the guards over ``symbol`` alone leave it no value but the traced one: exact for
    linear guards, searched around the traced size for the others."""
    own = [g for g in guards if sizes.symbols_of((g.lhs, g.rhs)) == {symbol}]
    if not own:
        return False
    if all(linear(g) is not None for g in own):
        lo, hi, _ = _feasible(symbol, own)
        return lo == hi
    lo = max(symbol.min, symbol.hint - WINDOW)
    hi = symbol.hint + WINDOW if symbol.max is None else min(symbol.max, symbol.hint + WINDOW)
    return not any(v != symbol.hint and all(g.holds({symbol: v}) for g in own) for v in range(lo, hi + 1))


def _pinning_error(guard: SizeGuard, symbol: Symbol) -> DynamicValueError:
    return DynamicValueError(
        f"{guard.asked_by} at {guard.where or 'an unknown line'} needs the guard `{guard.condition()}`, which "
        f"pins the declared dim {symbol.name} to the one value {symbol.hint}: the program would only be "
        f"right for {symbol.name} = {symbol.hint}.\n"
        "Fix it in one of three ways:\n"
        f"  - declare a range that decides it (symscalar.Dim({symbol.name!r}, min=..., max=...));\n"
        f"  - allow it: symscalar.Dim({symbol.name!r}, specialize=True) in dynamic_dims (each size it pins is "
        "then its own program, listed in explain());\n"
        f"  - or declare the dim static (leave {symbol.name} out of dynamic_dims): each size is then its own program."
    )


def failed(guards: Sequence[SizeGuard], dims: Mapping[Symbol, tuple[int, int]], args: Sequence[Any]) -> list[str]:
    """The guards that the sizes of ``args`` (the program's inputs) fail, each as a reason."""
    values = {s: int(args[i].shape[d]) for s, (i, d) in dims.items() if i < len(args)}
    reasons = []
    for g in guards:
        if sizes.symbols_of((g.lhs, g.rhs)) <= set(values) and not g.holds(values):
            now = ", ".join(f"{s!r} = {values[s]}" for s in sorted(sizes.symbols_of((g.lhs, g.rhs)), key=repr))
            reasons.append(f"{g} failed: {now} now")
    return reasons


def checker(guards: Sequence[SizeGuard], dims: Mapping[Symbol, tuple[int, int]], label: str) -> Callable[..., bool]:
    """A function of the program's inputs that is true when every guard holds: ``dims`` says
    where each symbol's size is read (input index, dim). Generated straight-line code."""
    used = sizes.symbols_of([(g.lhs, g.rhs) for g in guards])
    missing = used - set(dims)
    if missing:
        raise DynamicValueError(
            f"{label}: size guards over {sorted(map(repr, missing))}, which no input tensor of the program has "
            "as a dim: they could not be checked when it runs. Declare the dim on a tensor the function uses."
        )
    read = {s: dims[s] for s in sorted(used, key=repr)}  # only the sizes the guards use
    args = max(i for i, _ in read.values()) + 1
    lines = [f"    {s!r} = a{i}.shape[{d}]" for s, (i, d) in read.items()]
    condition = " and ".join(f"({g.condition()})" for g in guards)
    params = ", ".join(f"a{i}" for i in range(args))
    source = f"def size_guard({params}, *rest):\n" + "\n".join(lines) + f"\n    return {condition}\n"
    namespace: dict[str, Any] = {}
    exec_generated(source, f"size guards of {label}", namespace)
    check: Callable[..., bool] = namespace["size_guard"]
    return check


def input_dims(inputs: Sequence[Any]) -> dict[Symbol, tuple[int, int]]:
    """Where each declared dim's size is read among a program's inputs: (input, dim) of the
    first input variable whose shape has the symbol itself as a dim."""
    where: dict[Symbol, tuple[int, int]] = {}
    for i, var in enumerate(inputs):
        shape = getattr(var, "shape", None)
        for d, s in enumerate(shape if type(shape) is tuple else ()):
            symbol = s.symbol() if isinstance(s, sizes.Size) else None
            if symbol is not None:
                where.setdefault(symbol, (i, d))
    return where
