"""symscalar's static/dynamic contract applied to lightning-thunder's own traces.

symscalar grew out of two thunder bug classes: a ``NumberProxy`` that reaches a parameter a
backend needs as a constant (a reduction's axes, a permutation), and a dynamic number folded
into a program as a literal, so that a cache hit with another value reuses the old one. symscalar
rules both out for its own programs with one table: which parameter of which op must be static
(``symscalar/_static_params.py``). This module maps thunder's symbols onto that table and reads
thunder's prologue, computation and backward traces for the three findings below.

lightning-thunder is an optional dependency (``pip install symscalar[thunder]``): nothing else in
symscalar imports this module, and importing it without thunder raises ``MissingDependencyError``.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import functools
import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from symscalar._thunder_symbols import SIZE_LIKE, THUNDER_SYMBOLS, Contract, contract_of
from symscalar.errors import MissingDependencyError

__all__ = [
    "lint_thunder",
    "LintReport",
    "Finding",
    "ProxyInStaticArgument",
    "BakedLiteral",
    "PinnedArgument",
    "Contract",
    "THUNDER_SYMBOLS",
    "SIZE_LIKE",
    "contract_of",
    "symbol_name",
    "recording_jits",
    "has_run",
    "lintable",
]


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        error = MissingDependencyError(
            f"symscalar.lint_thunder needs lightning-thunder ({module} does not import): "
            "install it with `pip install symscalar[thunder]`"
        )
    raise error


thunder = _require("thunder")
_proxies = _require("thunder.core.proxies")
_pytree = _require("thunder.core.pytree")
_TraceCtx = _require("thunder.core.trace").TraceCtx
_CONSTRAINT = _proxies.CONSTRAINT
_SYMBOLIC_VALUES = _require("thunder.core.options").CACHE_OPTIONS.SYMBOLIC_VALUES


def symbol_name(sym: Any) -> str:
    """A thunder symbol's name in ``THUNDER_SYMBOLS``: its id for thunder.torch ("torch.sum"),
    "prims.<name>" for a primitive, the executor's id otherwise ("sum" for torch's executor)."""
    return sym.id if isinstance(sym.id, str) else f"prims.{sym.name}"


# --- findings --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding(abc.ABC):
    """One place a thunder trace breaks symscalar's static/dynamic contract."""

    kind: ClassVar[str]  # the report's name for the class: "proxy", "baked", "pinned"

    trace: str  # "prologue", "computation" or "backward"
    indices: tuple[int, ...]  # the positions in that trace list where it occurs
    symbol: str  # the thunder symbol (symbol_name), e.g. "torch.sum"
    argument: str  # thunder's parameter name, e.g. "dim"
    value: str  # what the argument holds, as the trace prints it: "(d1, d0, 2)"
    names: tuple[str, ...]  # the proxies (or, for a baked literal, the arguments) the finding is about
    origin: str  # where they come from
    line: str  # the trace's line it sits in (the top-level bound symbol)
    contract: str = ""  # the STATIC_PARAMS entry that makes the argument static

    @property
    def where(self) -> str:
        return f"{self.trace} {_ranges(self.indices)}"

    @abc.abstractmethod
    def explain(self) -> str:
        """One sentence: what the argument holds, where it comes from, why it matters."""

    def __str__(self) -> str:
        return f"{self.where}: {self.explain()}\n    {self.line}"


@dataclass(frozen=True)
class ProxyInStaticArgument(Finding):
    """A NumberProxy in an argument symscalar requires to be a constant: a backend that needs the
    constant (nvFuser's reduction axes) rejects it, and a transform that needs its value (grad)
    folds it in without a guard."""

    kind = "proxy"

    def explain(self) -> str:
        return (
            f"{self.symbol}({self.argument}={self.value}) holds the NumberProxy {', '.join(self.names)}, "
            f"{self.origin}; {self.contract} needs a static {self.argument}"
        )


@dataclass(frozen=True)
class BakedLiteral(Finding):
    """A literal in a static argument that equals the value of a dynamic number argument which
    itself reaches a static argument elsewhere: thunder folded the argument in, and the prologue
    does not check it, so a call with another value reuses this one (stale results, wrong
    gradients, or a crash)."""

    evidence: str = ""  # where the dynamic argument reaches a static argument as a proxy

    kind = "baked"

    def explain(self) -> str:
        return (
            f"{self.symbol}({self.argument}={self.value}) holds the value of {', '.join(self.names)} as a "
            f"literal, folded in without a guard: {self.origin}; {self.evidence}"
        )


@dataclass(frozen=True)
class PinnedArgument(Finding):
    """A number argument of a function jitted with ``cache="symbolic values"`` whose value the
    prologue checks: thunder made it static (correct, but every new value retraces)."""

    kind = "pinned"

    def explain(self) -> str:
        return f"the prologue pins {self.origin} to {self.value}: thunder made it static, every new value retraces"


def _ranges(indices: Sequence[int]) -> str:
    parts: list[str] = []
    for i in sorted(indices):
        if parts and parts[-1].split("-")[-1] == str(i - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{i}"
        else:
            parts.append(str(i))
    return ",".join(parts)


@dataclass(frozen=True)
class LintReport:
    """The findings of ``lint_thunder``; ``str(report)`` is a table."""

    findings: tuple[Finding, ...]
    traces: Mapping[str, int] = field(default_factory=dict)  # trace kind -> how many were linted
    subject: str = "the traces"

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    @property
    def ok(self) -> bool:
        return not self.findings

    def table(self) -> str:
        header = ("trace", "kind", "symbol", "argument", "holds", "origin")
        rows = [(f.where, f.kind, f.symbol, f.argument, f.value, f.origin) for f in self.findings]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
        lines = []
        for row in [header, *rows]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths)]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
        lines.insert(1, "  ".join("-" * w for w in [*widths, len(header[-1])]))
        return "\n".join(lines)

    def __str__(self) -> str:
        linted = ", ".join(f"{n} {kind}" for kind, n in self.traces.items()) or "no"
        head = f"lint_thunder: {len(self.findings)} finding(s) in {linted} trace(s) of {self.subject}"
        if not self.findings:
            return head
        details = "\n".join(f"- {finding}" for finding in self.findings)
        return f"{head}\n{self.table()}\n\n{details}"


# --- reading the traces ----------------------------------------------------------------------------------


@dataclass
class _Provenance:
    """What the prologue and the traces say about each proxy name (names are unique per compile)."""

    arguments: dict[str, str] = field(default_factory=dict)  # name -> "argument `d` of f (args[1])"
    pinned: dict[str, Any] = field(default_factory=dict)  # name -> the value the prologue checks
    producers: dict[str, tuple[str, Any]] = field(default_factory=dict)  # name -> (trace kind, bsym)
    saved: set[str] = field(default_factory=set)  # names the backward unpacks from saved_for_backward
    prologue: bool = False  # whether a prologue trace was read (it names the function's arguments)

    def roots(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """The argument and size names ``name`` is computed from."""
        if name in self.arguments or name in seen or name not in self.producers:
            return {name}
        bsym = self.producers[name][1]
        if bsym.sym.name == "shape":
            return {name}
        found: set[str] = set()
        for x in bsym.flat_args:
            if isinstance(x, _proxies.NumberProxy):
                found |= self.roots(x.name, seen | {name})
        return found or {name}

    def sources(self, name: str) -> set[str]:
        """The arguments ``name`` is computed from, or ``{name}`` if none (a size, a constant)."""
        return (self.roots(name) & self.arguments.keys()) or {name}

    def is_size(self, name: str) -> bool:
        producer = self.producers.get(name)
        return producer is not None and producer[1].sym.name == "shape"

    def value(self, name: str) -> Any:
        """The value thunder recorded for the int proxy ``name`` (None if unknown)."""
        producer = self.producers.get(name)
        outs = producer[1].flat_outs if producer is not None else ()
        value = next((getattr(x, "value", None) for x in outs if getattr(x, "name", None) == name), None)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def describe(self, name: str, kind: str = "computation") -> str:
        if name in self.arguments:
            pinned = f"pinned to {self.pinned[name]!r}" if name in self.pinned else "not pinned by the prologue"
            saved = "saved for backward: " if kind == "backward" and name in self.saved else ""
            return f"{saved}{self.arguments[name]}, {pinned}"
        if self.is_size(name):
            tensor = self.producers[name][1].flat_args[0]
            return f"a size of {getattr(tensor, 'name', tensor)}"
        roots = sorted(self.roots(name) - {name})
        if roots:
            producer = symbol_name(self.producers[name][1].sym)
            return f"{producer} of {', '.join(roots)}"
        if name in self.saved:
            return "saved for backward by the forward (lint the jitted function to see its origin)"
        return "no producer in the linted traces"


def _trace_kind(trace: Any) -> str:
    name = trace.siginfo().name
    if name == "prologue":
        return "prologue"
    return "backward" if "backward" in name else "computation"


def _bind(bsym: Any) -> Mapping[str, Any] | None:
    signature = _signature(bsym.sym.meta)
    try:
        return signature.bind(*bsym.args, **bsym.kwargs).arguments if signature is not None else None
    except TypeError:
        return None


@functools.cache
def _signature(meta: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(meta)
    except (TypeError, ValueError):
        return None


def _flat(value: Any) -> list[Any]:
    return list(_pytree.tree_flatten(value)[0]) if isinstance(value, (tuple, list)) else [value]


@dataclass(frozen=True)
class _Hit:
    """A static argument of one bound symbol, as found."""

    symbol: str
    contract: Contract | None
    param: str  # symscalar's name
    argument: str  # thunder's name
    raw: Any  # the argument as passed
    values: tuple[Any, ...]  # its leaves
    statement: Any  # the top-level bound symbol it sits in (printed only for a finding)
    top: bool  # the first symbol with a contract under its top-level bound symbol


_Located = tuple[str, int, _Hit]  # (trace kind, position in its list, static argument)


def _static_arguments(bsym: Any, statement: Any, top: bool = True) -> Iterator[_Hit]:
    """Each static argument of ``bsym`` and of its subsymbols, outermost first."""
    name = symbol_name(bsym.sym)
    contract = contract_of(name)
    arguments = _bind(bsym) if contract is not None else None
    if contract is not None and arguments is not None:
        for param, argument in contract.static:
            if argument in arguments:
                value = arguments[argument]
                if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], (tuple, list)):
                    value = value[0]  # *dims passed as one sequence: permute(a, (1, 0))
                yield _Hit(name, contract, param, argument, value, tuple(_flat(value)), statement, top)
        top = False
    for sub in bsym.subsymbols:
        yield from _static_arguments(sub, statement, top)


def _line(bsym: Any) -> str:
    lines = bsym.python(indent=0, print_depth=1)
    return str(lines[0]).split("  # ")[0].strip() if lines else symbol_name(bsym.sym)


def lint_thunder(target: Any) -> LintReport:
    """Check thunder traces against symscalar's static/dynamic contract.

    Args:
        target: a function returned by ``thunder.jit`` that has run (its last prologue,
            computation and backward traces are checked), a thunder trace, or a list of traces.

    Returns:
        A ``LintReport``: every static argument (per ``THUNDER_SYMBOLS``) that holds a NumberProxy
        (``ProxyInStaticArgument``), every literal there that is the unguarded value of a dynamic
        number argument (``BakedLiteral``), and, for ``cache="symbolic values"``, every number
        argument the prologue pins (``PinnedArgument``).

    Example:
        >>> jf = thunder.jit(lambda a, d: torch.softmax(a, d), cache="symbolic values")
        >>> jf(torch.randn(3, 4, requires_grad=True), 1).sum().backward()
        >>> print(symscalar.lint_thunder(jf))  # flags the backward's torch.sum(t, d, True)
    """
    traces, subject, symbolic = _collect(target)
    provenance = _Provenance()
    fn = _jitted_source(target)
    for kind, _, trace in traces:
        _read_provenance(provenance, kind, trace, fn)
    record = _Recorder()
    uses, literals = _find_proxies(traces, provenance, record)
    _find_baked(literals, uses, provenance, record)
    if symbolic:
        _find_pinned(traces, provenance, record)
    counts: dict[str, int] = {}
    for kind, _, _ in traces:
        counts[kind] = counts.get(kind, 0) + 1
    order = {"prologue": 0, "computation": 1, "backward": 2}
    findings = sorted(record.findings.values(), key=lambda f: (order[f.trace], f.indices[0]))
    return LintReport(tuple(findings), counts, subject)


_Traces = Sequence[tuple[str, int, Any]]  # (kind, position in its list, trace)
_Uses = dict[tuple[str, str], str]  # (argument, role) -> where it first reaches a static argument as a proxy


def _find_proxies(traces: _Traces, provenance: _Provenance, record: _Recorder) -> tuple[_Uses, list[_Located]]:
    """Record every static argument holding a NumberProxy; return where each argument reaches
    one, and the static arguments that hold int literals (for ``_find_baked``)."""
    uses: _Uses = {}
    literals: list[_Located] = []
    for kind, index, trace in traces:
        for bsym in trace.bound_symbols:
            covered: set[str] = set()  # what an enclosing symbol already reported
            for hit in _static_arguments(bsym, bsym):
                proxies = [v for v in hit.values if _is_proxy(v) and _is_violation(provenance, hit.param, v)]
                if not proxies:
                    if hit.top and hit.param not in SIZE_LIKE | _DERIVED and any(map(_is_int, hit.values)):
                        literals.append((kind, index, hit))
                    continue
                sources = {source for p in proxies for source in provenance.sources(p.name)}
                if sources <= covered:
                    continue
                covered |= sources
                if hit.param not in SIZE_LIKE:
                    for source in sources & provenance.arguments.keys():
                        uses.setdefault((source, _role(hit.param)), f"{hit.symbol}({hit.argument}) in {kind} {index}")
                origin = "; ".join(_origin(provenance, p.name, kind, len(proxies) > 1) for p in proxies)
                record(ProxyInStaticArgument, kind, index, hit, tuple(p.name for p in proxies), origin)
    return uses, literals


def _find_baked(literals: list[_Located], uses: _Uses, provenance: _Provenance, record: _Recorder) -> None:
    """Record every literal equal to the value of an unpinned argument that reaches (as a proxy)
    a static argument of the same role."""
    for kind, index, hit in literals:
        role = _role(hit.param)
        folded: dict[str, int] = {}
        for value in filter(_is_int, hit.values):
            for name, used_as in uses:
                if used_as == role and name not in provenance.pinned and provenance.value(name) == value:
                    folded[name] = value
        if folded:
            origin = "; ".join(_origin(provenance, name, kind, len(folded) > 1) for name in folded)
            evidence = "; ".join(f"{name} reaches {uses[name, role]}" for name in folded)
            record(BakedLiteral, kind, index, hit, tuple(folded), origin, evidence=evidence)


def _find_pinned(traces: _Traces, provenance: _Provenance, record: _Recorder) -> None:
    """Record every number argument a prologue checks the value of."""
    for kind, index, trace in traces:
        for bsym in trace.bound_symbols if kind == "prologue" else ():
            name = getattr(bsym.args[0], "name", None) if bsym.args else None
            if bsym.sym.name == "check_number_type_and_value" and name in provenance.arguments:
                hit = _Hit(bsym.sym.name, None, "value", "value", bsym.args[1], (bsym.args[1],), bsym, True)
                record(PinnedArgument, kind, index, hit, (name,), provenance.arguments[name])


# Static parameters whose literals thunder derives from shapes (which dimensions a broadcast keeps):
# they hold small dimension numbers by construction, so they are not compared with dynamic arguments.
_DERIVED = frozenset({"broadcast_dims"})
_DIMS = frozenset({"dim", "dims", "dim0", "dim1", "start_dim", "end_dim", "axis0", "axis1", "broadcast_dims"})


def _role(param: str) -> str:
    """A literal in a static parameter is compared with the arguments reaching the same role."""
    return "dim" if param in _DIMS else param


def _is_proxy(value: Any) -> bool:
    return isinstance(value, _proxies.NumberProxy)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_violation(provenance: _Provenance, param: str, proxy: Any) -> bool:
    if proxy.name in provenance.pinned or proxy.constraint is _CONSTRAINT.STATIC:
        return False  # the prologue guards the value: a cache hit always has this one
    if param in SIZE_LIKE:
        return bool(provenance.sources(proxy.name) & provenance.arguments.keys())
    return True


def _origin(provenance: _Provenance, name: str, kind: str, named: bool) -> str:
    described = provenance.describe(name, kind)
    return f"{name}: {described}" if named else described


def _show(value: Any) -> str:
    if _is_proxy(value):
        return str(value.name)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(map(_show, value))
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else f"({inner})"
    return repr(value)


class _Recorder:
    """The findings so far; the same finding in a later trace of the list adds its index (and the
    line the latest trace shows, which is the one that runs)."""

    def __init__(self) -> None:
        self.findings: dict[tuple[Any, ...], Finding] = {}
        self._occurrences: dict[tuple[Any, ...], int] = {}

    def __call__(
        self,
        cls: type[Finding],
        kind: str,
        index: int,
        hit: _Hit,
        names: tuple[str, ...],
        origin: str,
        **extra: str,
    ) -> None:
        ident = (cls.__name__, kind, hit.symbol, hit.argument, _show(hit.raw))
        occurrence = self._occurrences.get((*ident, index), 0)
        self._occurrences[(*ident, index)] = occurrence + 1
        key = (*ident, occurrence)
        old = self.findings.get(key)
        if old is None:
            contract = hit.contract.key if hit.contract is not None else ""
            self.findings[key] = cls(
                kind,
                (index,),
                hit.symbol,
                hit.argument,
                _show(hit.raw),
                names,
                origin,
                _line(hit.statement),
                contract,
                **extra,
            )
        elif index not in old.indices:
            self.findings[key] = dataclasses.replace(old, indices=(*old.indices, index), line=_line(hit.statement))


def _read_provenance(provenance: _Provenance, kind: str, trace: Any, fn: Callable[..., Any] | None) -> None:
    params = _parameter_names(fn)
    provenance.prologue |= kind == "prologue"
    for bsym in trace.bound_symbols:
        for out in bsym.flat_outs:
            name = getattr(out, "name", None)
            if isinstance(out, _proxies.NumberProxy) and name is not None:
                provenance.producers.setdefault(name, (kind, bsym))
        sym = bsym.sym.name
        if kind == "prologue" and sym == "unpack_getitem" and len(bsym.args) == 2:
            container, key = bsym.args
            out = bsym.flat_outs[0] if bsym.flat_outs else None
            if getattr(container, "name", None) in ("args", "kwargs") and isinstance(out, _proxies.NumberProxy):
                described = f"args[{key}]" if container.name == "args" else f"kwargs[{key!r}]"
                label = params[key] if container.name == "args" and _is_int(key) and key < len(params) else None
                label = label or (key if container.name == "kwargs" else None)
                owner = f" of {_display_name(fn)}" if fn is not None else ""
                provenance.arguments[out.name] = f"argument {label or out.name}{owner} ({described})"
        if kind == "prologue" and sym == "check_number_type_and_value" and bsym.args:
            name = getattr(bsym.args[0], "name", None)
            if name is not None:
                provenance.pinned[name] = bsym.args[1]
        if kind == "backward" and sym == "unpack_sequence":
            provenance.saved |= {o.name for o in bsym.flat_outs if isinstance(o, _proxies.NumberProxy)}
    if kind == "computation" and not provenance.prologue:
        # no prologue to say which are the function's arguments: the computation's number inputs are
        for i, arg in enumerate(trace.args or ()):
            if isinstance(arg, _proxies.NumberProxy):
                provenance.arguments.setdefault(arg.name, f"input {arg.name} of the computation (position {i})")


def _parameter_names(fn: Callable[..., Any] | None) -> list[str]:
    """The positional parameters of the jitted function (of its ``forward`` for a module)."""
    if fn is None:
        return []
    try:
        signature = inspect.signature(fn.forward if isinstance(fn, torch.nn.Module) else fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values() if p.kind <= p.POSITIONAL_OR_KEYWORD]


def _display_name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or type(fn).__name__)


def _jitted_source(target: Any) -> Callable[..., Any] | None:
    data = thunder.compile_data(target)
    return getattr(data, "fn", None) if data is not None else None


def _collect(target: Any) -> tuple[list[tuple[str, int, Any]], str, bool]:
    """(kind, index, trace) for every trace to lint, what they belong to, and whether the
    function was jitted with symbolic values."""
    if thunder.compile_stats(target) is not None:
        stats = thunder.compile_stats(target)
        if stats.last_traces is None:
            raise TypeError(
                f"lint_thunder: {target!r} has not run yet, so it has no traces: call it once "
                "(with the arguments whose traces you want checked), then lint it"
            )
        fn = _jitted_source(target)
        subject = _display_name(fn) if fn is not None else type(target).__name__
        traces: list[tuple[str, int, Any]] = []
        for kind, listed in (
            ("prologue", stats.last_prologue_traces),
            ("computation", stats.last_traces),
            ("backward", stats.last_backward_traces),
        ):
            traces += [(kind, i, trace) for i, trace in enumerate(listed or ())]
        return traces, subject, thunder.cache_option(target) is _SYMBOLIC_VALUES
    items = list(target) if isinstance(target, Iterable) and not isinstance(target, _TraceCtx) else [target]
    bad = [x for x in items if not isinstance(x, _TraceCtx)]
    if bad:
        raise TypeError(
            f"lint_thunder takes a function returned by thunder.jit, a thunder trace or a list of traces, "
            f"not {type(bad[0]).__name__}"
        )
    counters: dict[str, int] = {}
    traces = []
    for trace in items:
        kind = _trace_kind(trace)
        traces.append((kind, counters.get(kind, 0), trace))
        counters[kind] = counters.get(kind, 0) + 1
    return traces, "the traces", False


def has_run(fn: Any) -> bool:
    """Whether ``fn`` is a function returned by ``thunder.jit`` that has traces to lint."""
    stats = thunder.compile_stats(fn)
    return stats is not None and stats.last_traces is not None


def lintable(target: Any) -> bool:
    """Whether ``lint_thunder(target)`` has traces to check (it raises TypeError otherwise)."""
    if has_run(target) or isinstance(target, _TraceCtx):
        return True
    return isinstance(target, (list, tuple)) and bool(target) and all(isinstance(t, _TraceCtx) for t in target)


@contextlib.contextmanager
def recording_jits() -> Iterator[list[Any]]:
    """Within the block, every function ``thunder.jit`` returns is appended to the list yielded
    (``python -m symscalar lint-thunder`` lints the ones that ran)."""
    jitted: list[Any] = []
    original = thunder.jit

    def jit(*args: Any, **kwargs: Any) -> Any:
        fn = original(*args, **kwargs)
        jitted.append(fn)
        return fn

    thunder.jit = jit
    try:
        yield jitted
    finally:
        thunder.jit = original
