"""The IR: a tiny single-assignment trace of primitive applications.

A ``Trace`` has inputs (tensor and dynamic-scalar variables), a list of ``Eqn``\\ s and outputs.
Values are positional arguments of an equation (variables, or static literals such as the
``2.0`` of ``x * 2.0``); static parameters (reduction dims, shapes, dtypes) are keyword
parameters recorded on it. ``check_trace`` re-runs every primitive's meta function and rejects
a dynamic value in a static parameter: every trace, forward or backward, is checked before a
backend sees it.

``str(trace)`` is runnable Python (``import torch``, ``from symscalar import prims``) with a type
comment on each line.
"""

from __future__ import annotations

import dataclasses
import math
import typing
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic

import torch
from typing_extensions import TypeIs, TypeVar

from symscalar import sizes
from symscalar.errors import RegistrationError, StaticValueRequiredError, TraceCheckError
from symscalar.types import NumberProxy, current_tracer

__all__ = [
    "TensorVar",
    "ScalarVar",
    "Var",
    "Atom",
    "Eqn",
    "Trace",
    "Primitive",
    "PRIMITIVES",
    "Registry",
    "VJPS",
    "DISCONNECTED",
    "register_vjp",
    "prims",
    "check_trace",
    "eval_trace",
    "python_source",
    "Namespace",
    "eqn_source",
    "contains_dynamic",
    "leaves",
    "dce",
    "last_uses",
    "memoized_meta",
]


@dataclasses.dataclass(frozen=True, eq=False)
class TensorVar:
    """A tensor value of a trace. Identity is the variable: two TensorVars are never equal."""

    shape: tuple[int, ...]  # static sizes; a dynamic dim's is a ``sizes.Size`` (see jit's dynamic_dims)
    dtype: torch.dtype
    device: torch.device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def type_str(self) -> str:
        return f"{dtype_short_name(self.dtype)}[{', '.join(map(str, self.shape))}]"


@dataclasses.dataclass(frozen=True, eq=False)
class ScalarVar:
    """A dynamic scalar value of a trace (a runtime input or a value computed from inputs)."""

    dtype: type  # int, float or bool: the Python type of the runtime value

    def type_str(self) -> str:
        return self.dtype.__name__


Var = TensorVar | ScalarVar
# What an equation's positional argument can be: a variable or a static literal.
Atom = TensorVar | ScalarVar | int | float | bool | complex | None


_DTYPE_SHORT = {
    torch.float64: "f64",
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "b8",
    torch.complex64: "c64",
    torch.complex128: "c128",
}


def dtype_short_name(dtype: torch.dtype) -> str:
    short = _DTYPE_SHORT.get(dtype)
    return short if short is not None else str(dtype).removeprefix("torch.")


K = TypeVar("K")
V = TypeVar("V")
# What ``Primitive.bind`` returns to the op that binds it: a tensor unless said otherwise
# (``Primitive[tuple[Tensor, Tensor]]`` for two results, ``Primitive[NumberProxy]`` for a
# scalar op).
R = TypeVar("R", default=torch.Tensor)


class Registry(Mapping[K, V]):
    """A table filled once, at import, that refuses a second registration of a key.

    Every table of rules is one of these: primitives by name, vjps and backend lowerings by
    primitive, ops and torch spellings. A repeat registration raises ``RegistrationError``
    instead of silently replacing the first one depending on import order.
    """

    def __init__(self, what: str, describe: Callable[[K], str] = str) -> None:
        self.what = what  # what a key is, for the error: "primitive", "vjp of primitive", ...
        self._describe = describe  # how the error names a key
        self._items: dict[K, V] = {}

    def register(self, key: K, value: V) -> V:
        """Add ``key -> value``; returns ``value``.

        Raises:
            RegistrationError: ``key`` is registered already.
        """
        self.require_new(key)
        self._items[key] = value
        return value

    def require_new(self, key: K) -> None:
        """Raise ``RegistrationError`` if ``key`` is registered already."""
        if key in self._items:
            raise RegistrationError(
                f"{self.what} {self._describe(key)} is already registered (as {self._items[key]!r}); "
                "each is registered exactly once, next to its op. Register a new primitive (or "
                "torch spelling) under its own name instead of registering this one again."
            )

    def unregister(self, key: K) -> V:
        """Remove ``key`` (for tests that register something temporary)."""
        return self._items.pop(key)

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def get(self, key: K, default: Any = None) -> Any:  # dict's, without Mapping's try/except
        return self._items.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.what}, {len(self._items)} entries)"


class Primitive(Generic[R]):
    """An operation of the IR: its name, torch lowering and meta function, defined once in
    ``ops/``. Its other rules live in tables owned by who uses them, registered next to it:
    the vjp with ``register_vjp`` (here), the nvFuser lowering with
    ``nvfuser_lowering.register_nvfuser``.

    Attributes:
        name: unique name; also the attribute of ``symscalar.prims`` that runs it eagerly.
        impl: the torch lowering, called as ``impl(*values, **static_params)``.
        meta: ``meta(*atoms, **static_params)`` returns the output variable(s) for variable
            inputs; it validates the inputs and raises a clear error for bad ones. Memoized
            by signature (see ``memoized_meta``).
        multiple_results: whether ``meta``/``impl`` return a tuple.
        size_params: the static parameters that hold the shape of the (single) result, with
            any -1 resolved by the meta: a backend with symbolic sizes (nvFuser) passes their
            entries as runtime sizes instead of constants.
        may_alias: whether eager's op may return a view of its first input (reshape, slice,
            detach...): an in-place update of such an output, or of a value such an op read,
            would reach the other in eager, so the tracer refuses to functionalize it.
        register: False for an operation a backend substitutes into its own copy of a trace
            (``_jit/state_updates.py``'s in-place forms): not an operation of the IR, so not
            in ``PRIMITIVES`` (no vjp, lowering or op-table entry to have).
    """

    # No other attributes: a rule assigned as one (``prim.vjp = ...``) raises at import
    # instead of being silently ignored.
    __slots__ = ("name", "impl", "meta", "multiple_results", "size_params", "may_alias")

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        meta: Callable[..., Any],
        *,
        multiple_results: bool = False,
        size_params: tuple[str, ...] = (),
        may_alias: bool = False,
        register: bool = True,
    ) -> None:
        self.name = name
        self.impl = impl
        self.meta = memoized_meta(meta, name)
        self.multiple_results = multiple_results
        self.size_params = size_params
        self.may_alias = may_alias
        if register:
            PRIMITIVES.register(name, self)

    def __repr__(self) -> str:
        return f"Primitive({self.name})"

    def __str__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> R:
        """Apply the primitive: recorded in the current trace, or run eagerly outside one."""
        tracer = current_tracer.get()
        if tracer is None:
            return typing.cast(R, self.impl(*args, **params))
        result: R = tracer.bind(self, args, params)  # (no typing.cast call: the hot path of tracing)
        return result


PRIMITIVES: Registry[str, Primitive[Any]] = Registry("primitive")

# A reverse-mode rule: ``vjp(ct, out, *args, **params)`` returns one cotangent (or None) per
# positional argument; for a primitive with multiple results ``ct`` and ``out`` are tuples.
# Written with symscalar ops, so a backward is a trace like any other (see grad.py).
VJPS: Registry[Primitive[Any], Callable[..., Any]] = Registry("vjp of primitive")


class _Disconnected:
    def __repr__(self) -> str:
        return "DISCONNECTED"


# What a vjp rule returns for an argument that no differentiable path joins to the results
# (torch's own autograd graph has none, e.g. a loss's target used only as a condition): its
# gradient stays None, as eager's, where a rule's None means a zero gradient (eager's floor).
DISCONNECTED: Any = _Disconnected()


# Primitives whose vjp takes ``seeds=`` (position -> cotangent accumulated from later
# equations) and returns totals, adding its uses onto it in eager's order (grad.py's ``_seeds``).
SEEDED_VJPS: set[Primitive[Any]] = set()


def register_vjp(prim: Primitive[Any], rule: Callable[..., Any], *, seeded: bool = False) -> None:
    """Register the reverse-mode rule of ``prim`` (once; see ``VJPS``, ``SEEDED_VJPS``)."""
    VJPS.register(prim, rule)
    SEEDED_VJPS.update([prim] if seeded else [])


_META_CACHE_SIZE = 256  # signatures remembered per primitive


def memoized_meta(meta: Callable[..., Any], name: str = "") -> Callable[..., Any]:
    """``meta``, remembered by input signature: tensor shapes, dtypes and devices, scalar
    types, static literals and parameters (by type and repr: ``1`` is not ``1.0`` nor
    ``True``, ``-0.0`` is not ``0.0``), and the ambient state a meta may read (the default dtype;
    metas run with autocast off). Why: tracing, ``check_trace`` of a trace, of its forward-with-residuals and of
    its backward evaluate the same metas again and again. Each call still returns fresh
    variables; errors are not remembered (they are raised again); a signature with a value
    of another kind in it is not remembered at all."""
    cache: dict[Any, Any] = {}
    enabled = sizes.enabled()

    def symbolic(*atoms: Any, **params: Any) -> Any:
        return sizes.symbolic_meta(meta, name, atoms, params)

    def template(*atoms: Any, **params: Any) -> Any:
        """The remembered result, as a template of variables (what check_trace compares)."""
        if enabled[0] and sizes.has_symbolic(atoms, params):  # dynamic dims (opt-in): not memoized
            return _template(_without_autocast(symbolic, atoms, params))
        try:
            key = (
                tuple([_signature_key(a) for a in atoms]),
                tuple([(k, _signature_key(v)) for k, v in params.items()]) if params else (),
                torch.get_default_dtype(),
            )
        except TypeError:
            return _template(_without_autocast(meta, atoms, params))
        found = cache.get(key, _MISSING)
        if found is _MISSING:
            if len(cache) >= _META_CACHE_SIZE:  # bounded: a new shape per call must not grow it
                del cache[next(iter(cache))]  # the oldest signature
            found = cache[key] = _template(_without_autocast(meta, atoms, params))
        return found

    def memo(*atoms: Any, **params: Any) -> Any:
        found = template(*atoms, **params)
        if found is not None and found[0] is TensorVar:  # the common case of ``_fresh``
            return TensorVar(found[1], found[2], found[3])
        return _fresh(found)

    memo.__wrapped__ = meta  # type: ignore[attr-defined]
    memo.template = template  # type: ignore[attr-defined]
    return memo


_MISSING = object()
_AUTOCAST_DEVICES = ("cpu", "cuda")


def _without_autocast(meta: Callable[..., Any], atoms: tuple[Any, ...], params: dict[str, Any]) -> Any:
    """Run a meta with autocast off. An equation's types never depend on autocast: the tracer
    records autocast's casts as equations of their own, and a meta that runs the op on small
    CPU tensors must not have them cast again (check_trace may run inside torch.autocast)."""
    if not torch._C._is_any_autocast_enabled():
        return meta(*atoms, **params)
    enabled = [d for d in _AUTOCAST_DEVICES if torch.is_autocast_enabled(d)]
    for device in enabled:
        torch.set_autocast_enabled(device, False)
    try:
        return meta(*atoms, **params)
    finally:
        for device in enabled:
            torch.set_autocast_enabled(device, True)


def _signature_key(v: Any) -> Any:
    if type(v) is TensorVar:  # the common case, without a call
        return (TensorVar, v.shape, v.dtype, v.device)
    key = _SIGNATURE_KEYS.get(type(v))
    if key is None:
        if isinstance(v, Mapping):
            return (dict, tuple([(k, _signature_key(x)) for k, x in v.items()]))
        raise TypeError(f"not a signature value: {type(v).__name__}")
    return key(v)


def _literal_key(v: Any) -> Any:
    return (type(v), v)


def _sequence_key(v: Any) -> Any:
    return (type(v), tuple([_signature_key(x) for x in v]))


# The key of each kind of value by its exact type (a TensorVar's is built in ``_signature_key``).
_SIGNATURE_KEYS: dict[type, Callable[[Any], Any]] = {
    ScalarVar: lambda v: (ScalarVar, v.dtype),
    float: lambda v: (float, repr(v)),  # -0.0 and NaN by repr
    complex: lambda v: (complex, repr(v)),
    tuple: _sequence_key,
    list: _sequence_key,
    **dict.fromkeys(
        (type(None), type(Ellipsis), bool, int, str, torch.dtype, torch.device, torch.memory_format, torch.layout),
        _literal_key,
    ),
}


def _template(result: Any) -> Any:
    if isinstance(result, TensorVar):
        return (TensorVar, result.shape, result.dtype, result.device)
    if isinstance(result, ScalarVar):
        return (ScalarVar, result.dtype)
    if isinstance(result, (tuple, list)):
        return (tuple, tuple(map(_template, result)))
    if result is None:
        return None
    raise TypeError(f"a meta function returned {type(result).__name__}")


def _fresh(template: Any) -> Any:
    if template is None:
        return None
    if template[0] is TensorVar:
        return TensorVar(*template[1:])
    if template[0] is ScalarVar:
        return ScalarVar(template[1])
    return tuple(map(_fresh, template[1]))


class _Prims:
    """``symscalar.prims.<name>(...)`` runs a primitive eagerly; printed traces call these."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return PRIMITIVES[name].impl
        except KeyError:
            raise AttributeError(f"symscalar has no primitive {name!r}") from None


prims = _Prims()


@dataclasses.dataclass(frozen=True, eq=False)
class Eqn:
    """One primitive application: ``outs = prim(*args, **params)``."""

    prim: Primitive[Any]  # what is applied
    args: tuple[Atom, ...]  # values: variables or static literals, positional
    params: Mapping[str, Any]  # static parameters, by keyword; never contain a variable
    outs: tuple[Var, ...]  # fresh variables defined by this equation


@dataclasses.dataclass(frozen=True, eq=False)
class Trace:
    """A program: ``outputs = f(*inputs)`` as a list of equations in order."""

    inputs: tuple[Var, ...]  # tensor and dynamic-scalar inputs, in call order
    eqns: tuple[Eqn, ...]  # single assignment: each variable is defined once
    outputs: tuple[Atom, ...]  # variables or static literals
    name: str = "f"  # the function name used when printing
    comment: str = ""  # printed under the signature, e.g. which inputs a backward saved
    # Who names its variables: the tracer's, so that printing calls a value what an error
    # message called it; shared by the traces a transform derives (see ``Namespace``).
    namespace: Namespace = dataclasses.field(default_factory=lambda: Namespace())

    def __str__(self) -> str:
        return python_source(self)

    def input_names(self) -> list[str]:
        """The inputs' names. Only they are named now (first, as printing names them): the
        other values get theirs when the trace is printed, in definition order."""
        return [self.namespace.define(v) for v in self.inputs]


def is_var(x: object) -> TypeIs[TensorVar | ScalarVar]:
    return isinstance(x, (TensorVar, ScalarVar))


def leaves(value: Any) -> Iterator[Any]:
    """The values inside ``value``, through tuples, lists and mappings (their values), in order:
    what a walk over arguments or parameters looks at."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from leaves(v)
    else:
        yield value


def contains_dynamic(value: Any) -> bool:
    """Whether a static-parameter value holds a dynamic scalar (a proxy or a ScalarVar)."""
    return any(isinstance(v, (NumberProxy, ScalarVar, TensorVar)) for v in leaves(value))


# ----------------------------------------------------------------------------------------
# Printing as runnable Python


class Namespace:
    """The one naming authority: names variables ``t0, t1, ...`` (tensors) and ``s0, s1, ...``
    (scalars), each once, never shadowing a builtin or each other (torch.fx's ``_Namespace``).

    A value is named when its name is first needed: by an error message while tracing
    (``proxy._name``) or by printing a trace, which names the rest in definition order (so a
    trace nobody asked about prints as ``t0, t1, ...`` with no gaps). The tracer's namespace
    is the trace's, and traces a transform derives share it: a message and every printed
    trace call a value the same.
    """

    def __init__(self, parent: Namespace | None = None) -> None:
        self._parent = parent  # where names come from, for a view of one trace (see ``of``)
        self._names: dict[Var, str] = {}
        self._counts = {"t": 0, "s": 0}

    @classmethod
    def of(cls, trace: Trace) -> Namespace:
        """The names of ``trace``'s variables, inputs first, then in order of definition:
        the view a printer reads (it knows only the variables ``trace`` defines)."""
        names = cls(trace.namespace)
        for v in iter_vars(trace):
            names.define(v)
        return names

    def define(self, v: Var) -> str:
        """``v``'s name: the one it has, or the next free one."""
        name = self._names.get(v)
        if name is None:
            name = self._names[v] = self._parent.define(v) if self._parent else self._fresh(v)
        return name

    def _fresh(self, v: Var) -> str:
        prefix = "t" if isinstance(v, TensorVar) else "s"
        name = f"{prefix}{self._counts[prefix]}"
        self._counts[prefix] += 1
        return name

    def __getitem__(self, v: Var) -> str:
        try:
            return self._names[v]
        except KeyError:
            raise TraceCheckError(f"variable {v} is used but never defined") from None

    def atom(self, a: Atom) -> str:
        return self[a] if is_var(a) else format_static(a)


def format_static(value: Any) -> str:
    """A Python expression for a static value (numbers, dtypes, devices, tuples, strings)."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"float({str(value)!r})"
        return repr(value)
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, tuple):
        inner = ", ".join(format_static(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_static(v) for v in value) + "]"
    return repr(value)


def python_source(
    trace: Trace,
    callee: Callable[[Primitive[Any]], str] = lambda p: f"prims.{p.name}",
    header: bool = True,
    render_outputs: Callable[[list[str]], str] | None = None,
    free: bool = False,
) -> str:
    """The trace as Python source defining ``def <trace.name>(*inputs)``.

    ``callee`` names the function each primitive is called through (backends bind the
    lowerings to global names instead of ``prims.<name>``); ``render_outputs`` turns the
    output expressions into the returned expression (default: a tuple). With ``free``, a
    ``del`` follows each tensor's last use, so generated code holds no more memory than eager
    code that rebinds its temporaries (the torch backend sets it).
    """
    names = Namespace.of(trace)
    dead_after = last_uses(trace) if free else {}
    lines = ["import torch", "from symscalar import prims", "", ""] if header else []
    lines.append(signature_source(trace, names))
    if trace.comment:
        lines.extend(f"    # {line}" for line in trace.comment.splitlines())
    if trace.inputs:
        types = ", ".join(f"{names[v]}: {_type_comment(v)}" for v in trace.inputs)
        lines.append(f"    # {types}")
    lines.extend(f"    {line}" for line in size_bindings(trace, names))
    for eqn in trace.eqns:
        line = f"    {eqn_source(eqn, names, callee(eqn.prim))}"
        if eqn.outs:
            line += "  # " + ", ".join(f"{names[v]}: {v.type_str()}" for v in eqn.outs)
        lines.append(line)
        if dead_after.get(eqn):
            lines.append(f"    del {', '.join(names[v] for v in dead_after[eqn])}")
    lines.append(return_source(trace, names, render_outputs))
    return "\n".join(lines) + "\n"


def size_bindings(trace: Trace, names: Namespace) -> list[str]:
    """``s_T = x.shape[1]`` for each dynamic dim the trace's equations or outputs use, read
    from the first input tensor that has it as a dim: the program's sizes come from its
    inputs on every call, so one program serves every size."""
    if not sizes.enabled()[0]:
        return []
    needed: set[sizes.Symbol] = set()
    for eqn in trace.eqns:
        needed |= sizes.symbols_of(eqn.params)
        for v in (*eqn.args, *eqn.outs):
            if isinstance(v, TensorVar):
                needed |= sizes.symbols_of(v.shape)
    if not needed:
        return []
    found: dict[sizes.Symbol, str] = {}
    for v in trace.inputs:
        if isinstance(v, TensorVar):
            for d, s in enumerate(v.shape):
                symbol = s.symbol() if isinstance(s, sizes.Size) else None
                if symbol is not None and symbol in needed and symbol not in found:
                    found[symbol] = f"{symbol!r} = {names[v]}.shape[{d}]"
    missing = needed - set(found)
    if missing:
        raise TraceCheckError(
            f"trace {trace.name} uses the dynamic sizes {sorted(map(repr, missing))}, which no input "
            "tensor has as a dim: the program could not read them when it runs"
        )
    return list(found.values())


def signature_source(trace: Trace, names: Namespace) -> str:
    """``def <name>(<inputs>):``, the first line of a trace's generated function."""
    return f"def {trace.name}({', '.join(names[v] for v in trace.inputs)}):"


def eqn_source(eqn: Eqn, names: Namespace, callee: str) -> str:
    """One equation as a Python statement: ``outs = callee(*args, **params)`` (the call alone
    where it has no outputs). Every printer of traces renders equations with this."""
    args = [names.atom(a) for a in eqn.args]
    args += [f"{k}={format_static(v)}" for k, v in eqn.params.items()]
    call = f"{callee}({', '.join(args)})"
    if not eqn.outs:
        return call
    targets = ", ".join(names[v] for v in eqn.outs)
    if eqn.prim.multiple_results and len(eqn.outs) == 1:
        targets += ","
    return f"{targets} = {call}"


def return_source(trace: Trace, names: Namespace, render_outputs: Callable[[list[str]], str] | None) -> str:
    """The ``return`` line: the outputs as a tuple, or as ``render_outputs`` builds them."""
    outs = [names.atom(a) for a in trace.outputs]
    if render_outputs is None:
        return f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})"
    return f"    return {render_outputs(outs)}"


def last_uses(trace: Trace) -> dict[Eqn, list[TensorVar]]:
    """For each equation, the tensors nothing after it reads: its arguments read for the last
    time and its results never read. Outputs live to the end; inputs are included (the
    caller's references keep those alive, deleting the local only drops ours)."""
    last: dict[Var, Eqn] = {}
    for eqn in trace.eqns:
        for v in eqn.outs:
            last[v] = eqn
        for a in eqn.args:
            if isinstance(a, TensorVar):
                last[a] = eqn
    for a in trace.outputs:
        if is_var(a):
            last.pop(a, None)
    dead: dict[Eqn, list[TensorVar]] = {}
    for v, eqn in last.items():
        if isinstance(v, TensorVar):
            dead.setdefault(eqn, []).append(v)
    return dead


def with_codegen_name(trace: Trace) -> Trace:
    """The trace, renamed if its name would shadow what generated code calls (``torch``, the
    ``_prim_<name>`` lowerings bound by the backends)."""
    if trace.name == "torch" or trace.name.startswith("_prim_"):
        return dataclasses.replace(trace, name=f"{trace.name}_fn")
    return trace


def _type_comment(v: Var) -> str:
    if isinstance(v, TensorVar):
        return f"{v.type_str()} {v.device}"
    return v.type_str()


# ----------------------------------------------------------------------------------------
# Checking and evaluation


def check_trace(trace: Trace) -> None:
    """Validate a trace: single assignment, defined-before-use, no dynamic value in a static
    parameter, and every equation's outputs agree with its primitive's meta function.

    Raises:
        StaticValueRequiredError: a static parameter holds a dynamic value.
        TraceCheckError: anything else.
    """
    checked = _CHECKED.get(id(trace.eqns))
    if checked is not None and checked.eqns is trace.eqns and checked.inputs is trace.inputs:
        _check_outputs(trace, checked)
        return
    defined: set[Var] = set()

    def define(v: Any) -> None:
        if not is_var(v):
            raise TraceCheckError(f"{v!r} is not a variable")
        if v in defined:
            raise TraceCheckError(f"variable {v} is defined twice (single assignment)")
        defined.add(v)

    def use(a: Atom, where: str) -> None:
        if isinstance(a, NumberProxy):
            raise TraceCheckError(f"{where}: a tracing proxy {a!r} leaked into the trace")
        if is_var(a) and a not in defined:
            raise TraceCheckError(f"{where}: variable used before it is defined")

    for v in trace.inputs:
        define(v)
    # One pass, the cheap way where nothing is wrong (messages are built only on failure).
    for i, eqn in enumerate(trace.eqns):
        for a in eqn.args:
            if isinstance(a, (TensorVar, ScalarVar)) and a in defined:
                continue
            if isinstance(a, (TensorVar, ScalarVar, NumberProxy)):
                use(a, _where(i, eqn))  # raises: a variable not defined yet, or a proxy
        if eqn.params:
            for key, value in eqn.params.items():
                if contains_dynamic(value):
                    raise StaticValueRequiredError(
                        f"{_where(i, eqn)}: static parameter {key!r} holds a dynamic value ({value!r}). "
                        "A backend needs a compile-time constant here; whatever produced this trace "
                        "must compute the parameter from static shapes and static parameters."
                    )
                if sizes.enabled()[0] and key not in sizes.size_params_of(eqn.prim) and sizes.symbols_of(value):
                    raise StaticValueRequiredError(
                        f"{_where(i, eqn)}: static parameter {key!r} holds the dynamic size {value!r}, but it is "
                        "not a size parameter of the primitive: structure (dims, counts) must stay static."
                    )
        expected = _expected_outputs(eqn)
        if len(expected) != len(eqn.outs):
            raise TraceCheckError(f"{_where(i, eqn)}: meta gives {len(expected)} outputs, eqn has {len(eqn.outs)}")
        for exp, out in zip(expected, eqn.outs):
            if exp != _template(out):
                raise TraceCheckError(
                    f"{_where(i, eqn)}: output is {_signature(out)} but the meta function says "
                    f"{_signature(_fresh(exp))}"
                )
            if not isinstance(out, (TensorVar, ScalarVar)) or out in defined:
                define(out)  # raises
            defined.add(out)
    for a in trace.outputs:
        use(a, "outputs")
    _CHECKED[id(trace.eqns)] = trace


def _where(i: int, eqn: Eqn) -> str:
    """Where a check failed, for its message (built only then)."""
    return f"equation {i} ({eqn.prim.name})"


# The last checked trace for each equation list (by identity): a trace made of the same
# inputs and equations with other outputs (the forward-with-residuals of a checked forward)
# only needs its outputs checked. Weak: a trace no longer used is forgotten.
_CHECKED: weakref.WeakValueDictionary[int, Trace] = weakref.WeakValueDictionary()


def _check_outputs(trace: Trace, checked: Trace) -> None:
    """Check the outputs of ``trace``, whose inputs and equations are those of ``checked``."""
    defined = set(trace.inputs)
    defined.update(v for eqn in trace.eqns for v in eqn.outs)
    for a in trace.outputs:
        if isinstance(a, NumberProxy):
            raise TraceCheckError(f"outputs: a tracing proxy {a!r} leaked into the trace")
        if is_var(a) and a not in defined:
            raise TraceCheckError("outputs: variable used before it is defined")


def _expected_outputs(eqn: Eqn) -> tuple[Any, ...]:
    """Templates (see ``_template``) of the outputs the primitive's meta gives for ``eqn``,
    from its memo where it has one (no fresh variables to build)."""
    template_of = getattr(eqn.prim.meta, "template", None)
    if template_of is not None:
        template = template_of(*eqn.args, **eqn.params)
    else:
        template = _template(eqn.prim.meta(*eqn.args, **eqn.params))
    if template is None:
        return ()
    if eqn.prim.multiple_results:
        return tuple(template[1])
    return (template,)


def _signature(v: Any) -> tuple[Any, ...]:
    if isinstance(v, TensorVar):
        return ("tensor", v.shape, v.dtype, v.device)
    if isinstance(v, ScalarVar):
        return ("scalar", v.dtype)
    return ("literal", v)


def eval_trace(trace: Trace, *args: Any) -> tuple[Any, ...]:
    """Run a trace eagerly with each primitive's torch lowering (the reference semantics)."""
    if len(args) != len(trace.inputs):
        raise TypeError(f"trace takes {len(trace.inputs)} inputs, got {len(args)}")
    env: dict[Var, Any] = dict(zip(trace.inputs, args))

    def read(a: Atom) -> Any:
        return env[a] if is_var(a) else a

    for eqn in trace.eqns:
        result = eqn.prim.impl(*map(read, eqn.args), **eqn.params)
        results = result if eqn.prim.multiple_results else (result,)
        env.update(zip(eqn.outs, results))
    return tuple(map(read, trace.outputs))


def iter_vars(trace: Trace) -> Iterator[Var]:
    """Every variable of the trace, inputs first, in definition order."""
    yield from trace.inputs
    for eqn in trace.eqns:
        yield from eqn.outs


def dce(trace: Trace) -> Trace:
    """Drop equations whose results are never used. Equations without outputs (runtime
    checks) are kept: they exist for their effect."""
    live = {a for a in trace.outputs if is_var(a)}
    kept: list[Eqn] = []
    for eqn in reversed(trace.eqns):
        if eqn.outs and live.isdisjoint(eqn.outs):
            continue
        kept.append(eqn)
        live.update([a for a in eqn.args if isinstance(a, (TensorVar, ScalarVar))])
    return dataclasses.replace(trace, eqns=tuple(reversed(kept)))
