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
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from typing_extensions import TypeIs

from symscalar.errors import StaticValueRequiredError, TraceCheckError
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
    "prims",
    "check_trace",
    "eval_trace",
    "python_source",
    "contains_dynamic",
    "dce",
    "last_uses",
    "memoized_meta",
]


@dataclasses.dataclass(frozen=True, eq=False)
class TensorVar:
    """A tensor value of a trace. Identity is the variable: two TensorVars are never equal."""

    shape: tuple[int, ...]  # static sizes
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
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "b8", torch.complex64: "c64", torch.complex128: "c128",
}


def dtype_short_name(dtype: torch.dtype) -> str:
    return _DTYPE_SHORT.get(dtype, str(dtype).removeprefix("torch."))


class Primitive:
    """An operation of the IR: its name, meta function and lowerings, defined once in ``ops/``.

    Attributes:
        name: unique name; also the attribute of ``symscalar.prims`` that runs it eagerly.
        impl: the torch lowering, called as ``impl(*values, **static_params)``.
        meta: ``meta(*atoms, **static_params)`` returns the output variable(s) for variable
            inputs; it validates the inputs and raises a clear error for bad ones. Memoized
            by signature (see ``memoized_meta``).
        vjp: reverse-mode rule, filled in by the op's module (see ``grad.py``).
        nvfuser: nvFuser lowering, filled in by the op's module (see ``nvfuser_backend.py``).
        nvfuser_supports: optional predicate ``(*atoms, **static_params) -> bool``: whether the
            lowering handles this equation; where it says no, the equation runs in torch.
        multiple_results: whether ``meta``/``impl`` return a tuple.
        may_alias: whether eager's op may return a view of its first input (reshape, slice,
            detach...): an in-place update of such an output, or of a value such an op read,
            would reach the other in eager, so the tracer refuses to functionalize it.
    """

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        meta: Callable[..., Any],
        *,
        multiple_results: bool = False,
    ) -> None:
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is already registered")
        self.name = name
        self.impl = impl
        self.meta = memoized_meta(meta)
        self.multiple_results = multiple_results
        self.vjp: Callable[..., Any] | None = None
        self.nvfuser: Callable[..., Any] | None = None
        self.nvfuser_supports: Callable[..., bool] | None = None
        self.may_alias = False
        PRIMITIVES[name] = self

    def __repr__(self) -> str:
        return f"Primitive({self.name})"

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive: recorded in the current trace, or run eagerly outside one."""
        tracer = current_tracer.get()
        if tracer is None:
            return self.impl(*args, **params)
        return tracer.bind(self, args, params)


PRIMITIVES: dict[str, Primitive] = {}


def memoized_meta(meta: Callable[..., Any]) -> Callable[..., Any]:
    """``meta``, remembered by input signature: tensor shapes, dtypes and devices, scalar
    types, static literals and parameters (by type and repr: ``1`` is not ``1.0`` nor
    ``True``, ``-0.0`` is not ``0.0``), and the ambient state a meta may read (the default dtype;
    metas run with autocast off). Why: tracing, ``check_trace`` of a trace, of its forward-with-residuals and of
    its backward evaluate the same metas again and again. Each call still returns fresh
    variables; errors are not remembered (they are raised again); a signature with a value
    of another kind in it is not remembered at all."""
    cache: dict[Any, Any] = {}

    def template(*atoms: Any, **params: Any) -> Any:
        """The remembered result, as a template of variables (what check_trace compares)."""
        try:
            key = (
                tuple([_signature_key(a) for a in atoms]),
                tuple([(k, _signature_key(v)) for k, v in params.items()]),
                torch.get_default_dtype(),
            )
        except TypeError:
            return _template(_without_autocast(meta, atoms, params))
        found = cache.get(key, _MISSING)
        if found is _MISSING:
            found = cache[key] = _template(_without_autocast(meta, atoms, params))
        return found

    def memo(*atoms: Any, **params: Any) -> Any:
        return _fresh(template(*atoms, **params))

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


_SIGNATURE_KEYS: dict[type, Callable[[Any], Any]] = {
    TensorVar: lambda v: (TensorVar, v.shape, v.dtype, v.device),
    ScalarVar: lambda v: (ScalarVar, v.dtype),
    float: lambda v: (float, repr(v)),  # -0.0 and NaN by repr
    complex: lambda v: (complex, repr(v)),
    tuple: _sequence_key,
    list: _sequence_key,
    **{t: _literal_key for t in (type(None), bool, int, str, torch.dtype, torch.device,
                                 torch.memory_format, torch.layout)},
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

    prim: Primitive  # what is applied
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

    def __str__(self) -> str:
        return python_source(self)

    def input_names(self) -> list[str]:
        names = _Namer(self)
        return [names[v] for v in self.inputs]


def is_var(x: object) -> TypeIs[TensorVar | ScalarVar]:
    return isinstance(x, (TensorVar, ScalarVar))


def contains_dynamic(value: Any) -> bool:
    """Whether a static-parameter value holds a dynamic scalar (a proxy or a ScalarVar)."""
    if isinstance(value, (NumberProxy, ScalarVar, TensorVar)):
        return True
    if isinstance(value, (tuple, list)):
        return any(contains_dynamic(v) for v in value)
    if isinstance(value, Mapping):
        return any(contains_dynamic(v) for v in value.values())
    return False


# ----------------------------------------------------------------------------------------
# Printing as runnable Python


class _Namer:
    """Names variables ``t0, t1, ...`` (tensors) and ``s0, s1, ...`` (scalars) in order of
    definition; the names never shadow a builtin or each other."""

    def __init__(self, trace: Trace) -> None:
        self._names: dict[Var, str] = {}
        self._counts = {"t": 0, "s": 0}
        for v in trace.inputs:
            self.define(v)
        for eqn in trace.eqns:
            for v in eqn.outs:
                self.define(v)

    def define(self, v: Var) -> None:
        prefix = "t" if isinstance(v, TensorVar) else "s"
        self._names[v] = f"{prefix}{self._counts[prefix]}"
        self._counts[prefix] += 1

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
    callee: Callable[[Primitive], str] = lambda p: f"prims.{p.name}",
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
    names = _Namer(trace)
    dead_after = last_uses(trace) if free else {}
    lines = ["import torch", "from symscalar import prims", "", ""] if header else []
    params = ", ".join(names[v] for v in trace.inputs)
    lines.append(f"def {trace.name}({params}):")
    if trace.comment:
        lines.extend(f"    # {line}" for line in trace.comment.splitlines())
    if trace.inputs:
        types = ", ".join(f"{names[v]}: {_type_comment(v)}" for v in trace.inputs)
        lines.append(f"    # {types}")
    for eqn in trace.eqns:
        args = [names.atom(a) for a in eqn.args]
        args += [f"{k}={format_static(v)}" for k, v in eqn.params.items()]
        call = f"{callee(eqn.prim)}({', '.join(args)})"
        if not eqn.outs:
            lines.append(f"    {call}")
        else:
            targets = ", ".join(names[v] for v in eqn.outs)
            if eqn.prim.multiple_results and len(eqn.outs) == 1:
                targets += ","
            comment = ", ".join(f"{names[v]}: {v.type_str()}" for v in eqn.outs)
            lines.append(f"    {targets} = {call}  # {comment}")
        if dead_after.get(eqn):
            lines.append(f"    del {', '.join(names[v] for v in dead_after[eqn])}")
    outs = [names.atom(a) for a in trace.outputs]
    if render_outputs is None:
        lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    else:
        lines.append(f"    return {render_outputs(outs)}")
    return "\n".join(lines) + "\n"


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
    for i, eqn in enumerate(trace.eqns):
        where = f"equation {i} ({eqn.prim.name})"
        for a in eqn.args:
            use(a, where)
        for key, value in eqn.params.items():
            if contains_dynamic(value):
                raise StaticValueRequiredError(
                    f"{where}: static parameter {key!r} holds a dynamic value ({value!r}). "
                    "A backend needs a compile-time constant here; whatever produced this trace "
                    "must compute the parameter from static shapes and static parameters."
                )
        expected = _expected_outputs(eqn)
        if len(expected) != len(eqn.outs):
            raise TraceCheckError(f"{where}: meta gives {len(expected)} outputs, eqn has {len(eqn.outs)}")
        for exp, out in zip(expected, eqn.outs):
            if exp != _template(out):
                raise TraceCheckError(
                    f"{where}: output is {_signature(out)} but the meta function says "
                    f"{_signature(_fresh(exp))}"
                )
            define(out)
    for a in trace.outputs:
        use(a, "outputs")


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
        if eqn.outs and not any(o in live for o in eqn.outs):
            continue
        kept.append(eqn)
        live.update(a for a in eqn.args if is_var(a))
    return dataclasses.replace(trace, eqns=tuple(reversed(kept)))
