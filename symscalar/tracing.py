"""Recording traces: the tracer, the tensor proxy and the torch frontend table.

While ``symscalar.jit`` traces a function, tensors are ``TensorProxy`` objects and dynamic
numbers are ``DynamicInt``/``DynamicFloat``/``DynamicBool`` proxies. Both route torch
functions, ``Tensor`` methods and operators through ``__torch_function__`` to the handler
registered for that torch callable with ``@implements`` (next to the op, in ``ops/``).
Handlers and ops are checked against their annotations: a dynamic value reaching a parameter
annotated ``StaticInt``/``StaticDims``/... raises ``StaticValueRequiredError``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import types as pytypes
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch

from symscalar.errors import (
    DynamicValueError,
    StaticValueRequiredError,
    TraceCheckError,
    UnsupportedOperationError,
)
from symscalar.trace import (
    PRIMITIVES,
    Atom,
    Eqn,
    Primitive,
    ScalarVar,
    TensorVar,
    Trace,
    Var,
    contains_dynamic,
)
from symscalar.types import (
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    NumberProxy,
    StaticBool,
    StaticDims,
    StaticFloat,
    StaticInt,
    StaticShape,
    current_tracer,
)

__all__ = [
    "TraceBuilder",
    "TensorProxy",
    "implements",
    "defop",
    "OpSignature",
    "OPS",
    "TORCH_FUNCTIONS",
    "supported_torch_functions",
    "tracing",
]

F = TypeVar("F", bound=Callable[..., Any])

_PROXY_CLASS: dict[type, type[NumberProxy]] = {
    int: DynamicInt,
    float: DynamicFloat,
    bool: DynamicBool,
}


class TraceBuilder:
    """Records equations while a Python function runs on proxies (implements ``Tracer``)."""

    def __init__(self, name: str = "f") -> None:
        self.name = name
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []
        # Concrete trace-time values of scalar variables (inputs and values computed only
        # from scalars), for specialize() and guards. Never read by the program itself.
        self.scalar_values: dict[ScalarVar, Any] = {}
        # Where each dynamic scalar came from, e.g. "parameter 'n' of f".
        self.roots: dict[ScalarVar, frozenset[str]] = {}
        # Guards added by specialize(): (variable, value it must equal).
        self.guards: list[tuple[ScalarVar, Any]] = []
        # Tensors captured from the enclosing scope, passed by reference on every call.
        self.captured: dict[int, tuple[TensorVar, torch.Tensor]] = {}
        # Whether each tensor input requires grad at the call being traced (from the call's
        # arguments; the cache key holds it), read by ``TensorProxy.requires_grad``.
        self.requires_grad: dict[TensorVar, bool] = {}
        # State the traced function writes, in order: (real tensor outside the trace, traced
        # value it must hold after each call). jit makes each value an output of the program
        # and copies it into the real tensor after every call (functionalized state writes:
        # running statistics, an EMA, a KV cache).
        self.write_backs: list[tuple[torch.Tensor, Any]] = []
        # The program's RNG seed, an int input created by the first random op (see
        # ops/random.py); the caller supplies a fresh one on every call. It follows the
        # inputs and precedes the captured tensors in the built trace.
        self.rng_seed: NumberProxy | None = None
        self._rng_offsets = 0
        self._counts = {"t": 0, "s": 0}

    # -- inputs and proxies -------------------------------------------------------------

    def _name(self, var: Var) -> str:
        prefix = "t" if isinstance(var, TensorVar) else "s"
        name = f"{prefix}{self._counts[prefix]}"
        self._counts[prefix] += 1
        return name

    def tensor_input(self, var: TensorVar, requires_grad: bool = False) -> TensorProxy:
        self.inputs.append(var)
        self.requires_grad[var] = requires_grad
        return TensorProxy(self, var, self._name(var))

    def scalar_input(self, python_type: type, value: Any, origin: str) -> NumberProxy:
        var = ScalarVar(python_type)
        self.inputs.append(var)
        if value is not None:
            self.scalar_values[var] = value
        self.roots[var] = frozenset([origin])
        return _PROXY_CLASS[python_type](self, var, self._name(var), origin)

    def _wrap(self, var: Var) -> Any:
        if isinstance(var, TensorVar):
            return TensorProxy(self, var, self._name(var))
        roots = self.roots.get(var, frozenset())
        origin = "computed from " + ", ".join(sorted(roots)) if roots else "computed in the trace"
        return _PROXY_CLASS[var.dtype](self, var, self._name(var), origin)

    def unwrap(self, value: Any) -> Atom:
        """A proxy becomes its variable; a static literal stays; a captured tensor becomes an
        extra input read by reference on every call."""
        if isinstance(value, (TensorProxy, NumberProxy)):
            if value._tracer is not self:
                raise DynamicValueError(
                    f"{value!r} belongs to another trace; traced values cannot be stored "
                    "between calls of a jitted function. Return them instead."
                )
            return value._var
        if isinstance(value, torch.Tensor):
            return self._capture(value)
        if value is None or isinstance(value, (bool, int, float, complex)):
            return value
        raise TypeError(
            f"cannot use a value of type {type(value).__name__} as an operand in a traced "
            "function; operands are tensors and numbers"
        )

    def _capture(self, tensor: torch.Tensor) -> TensorVar:
        found = self.captured.get(id(tensor))
        if found is None:
            var = TensorVar(tuple(tensor.shape), tensor.dtype, tensor.device)
            found = (var, tensor)
            self.captured[id(tensor)] = found
            self._name(var)
        return found[0]

    # -- the Tracer protocol -------------------------------------------------------------

    def bind(self, prim: Primitive, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        atoms = tuple(self.unwrap(a) for a in args)
        for key, value in params.items():
            if contains_dynamic(value):
                raise StaticValueRequiredError(
                    f"primitive {prim.name}: static parameter {key!r} got a dynamic value "
                    f"{value!r}; use a static value or symscalar.specialize()"
                )
        result = prim.meta(*atoms, **params)
        outs: tuple[Var, ...] = result if prim.multiple_results else (result,)
        if result is None:
            outs = ()
        self.eqns.append(Eqn(prim, atoms, dict(params), outs))
        self._propagate_scalar_values(prim, atoms, params, outs)
        wrapped = tuple(self._wrap(v) for v in outs)
        if prim.multiple_results:
            return wrapped
        return wrapped[0] if wrapped else None

    def _propagate_scalar_values(
        self, prim: Primitive, atoms: tuple[Atom, ...], params: dict[str, Any], outs: tuple[Var, ...]
    ) -> None:
        scalar_outs = [v for v in outs if isinstance(v, ScalarVar)]
        if not scalar_outs:
            return
        roots = frozenset().union(*(self.roots.get(a, frozenset()) for a in atoms if isinstance(a, ScalarVar)))
        for v in scalar_outs:
            self.roots[v] = roots
        if any(isinstance(a, TensorVar) for a in atoms):
            return
        if any(isinstance(a, ScalarVar) and a not in self.scalar_values for a in atoms):
            return
        try:
            value = prim.impl(*(self.scalar_values.get(a, a) if isinstance(a, ScalarVar) else a for a in atoms), **params)
        except Exception:  # noqa: BLE001 - trace-time value only feeds specialize()
            return
        values = value if prim.multiple_results else (value,)
        self.scalar_values.update(zip(scalar_outs, values))

    def scalar_op(self, name: str, args: tuple[Any, ...]) -> NumberProxy:
        return self.bind(PRIMITIVES[f"scalar_{name}"], args, {})  # type: ignore[no-any-return]

    def torch_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        handler = TORCH_FUNCTIONS.get(func)
        if handler is None:
            raise _unsupported(func)
        return handler(*args, **kwargs)

    def specialize(self, proxy: NumberProxy) -> Any:
        var = proxy._var
        if var not in self.scalar_values:
            raise DynamicValueError(
                f"cannot specialize {proxy._name} ({proxy._origin}): its value depends on tensor "
                "data, which is not known while tracing"
            )
        value = self.scalar_values[var]
        self.guards.append((var, value))
        return value

    def check(self, pred: NumberProxy, message: str) -> None:
        self.bind(PRIMITIVES["check"], (pred,), {"message": message})

    def write_back(self, target: torch.Tensor, value: Any) -> None:
        """Record that after every call the real tensor ``target`` (state read from outside
        the trace, e.g. a module buffer) must hold the traced ``value`` (see ``write_backs``)."""
        if not isinstance(target, torch.Tensor) or isinstance(target, TensorProxy):
            raise TypeError(f"write_back target must be a real tensor, got {type(target).__name__}")
        self.write_backs.append((target, value))

    def rng_state(self) -> tuple[NumberProxy, int]:
        """The program's RNG seed and a fresh static offset: one stream per random op."""
        if self.rng_seed is None:
            var = ScalarVar(int)
            self.roots[var] = frozenset(["the RNG seed of the program"])
            self.rng_seed = DynamicInt(self, var, self._name(var), "the RNG seed of the program")
        offset = self._rng_offsets
        self._rng_offsets += 1
        return self.rng_seed, offset

    # -- result ---------------------------------------------------------------------------

    def build(self, outputs: Sequence[Any]) -> Trace:
        out_atoms = tuple(self.unwrap(o) for o in outputs)
        captured_vars = tuple(var for var, _ in self.captured.values())
        rng = (self.rng_seed._var,) if self.rng_seed is not None else ()
        return Trace(tuple(self.inputs) + rng + captured_vars, tuple(self.eqns), out_atoms, self.name)

    def captured_tensors(self) -> tuple[torch.Tensor, ...]:
        return tuple(t for _, t in self.captured.values())


def _random_functions() -> frozenset[Any]:
    F = torch.nn.functional
    names = (
        "rand randn randint rand_like randn_like randint_like randperm bernoulli normal "
        "poisson multinomial"
    )
    tensor_methods = "uniform_ normal_ bernoulli bernoulli_ random_ exponential_ geometric_ log_normal_ cauchy_"
    return frozenset(
        [getattr(torch, n) for n in names.split()]
        + [getattr(torch.Tensor, n) for n in tensor_methods.split()]
        + [F.dropout, torch.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,
           F.gumbel_softmax, F.rrelu]
    )


_RANDOM_FUNCTIONS = _random_functions()


class _NoRandomMode(torch.overrides.TorchFunctionMode):
    """Active while tracing: a random op would run once, at trace time, and its sample would
    be baked into the program as a constant. Those symscalar implements (ops/random.py) are
    recorded, drawing from the program's RNG seed, even when no argument is traced
    (``torch.rand(2, 3)``); the others are refused."""

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        if func in _RANDOM_FUNCTIONS:
            handler = TORCH_FUNCTIONS.get(func)
            if handler is not None:
                return handler(*args, **(kwargs or {}))
            name = torch.overrides.resolve_name(func) or repr(func)
            raise UnsupportedOperationError(
                f"{name} inside a traced function is not supported: it would run once while "
                "tracing and bake that sample into the compiled program. Draw random tensors "
                "outside the jitted function and pass them in."
            )
        return func(*args, **(kwargs or {}))


class tracing:
    """Context manager that makes ``builder`` the current tracer of this thread/context."""

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder = builder
        self._mode = _NoRandomMode()

    def __enter__(self) -> TraceBuilder:
        self._token = current_tracer.set(self.builder)
        # torch leaves TorchFunctionMode.__enter__/__exit__ unannotated.
        self._mode.__enter__()  # type: ignore[no-untyped-call]
        return self.builder

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)  # type: ignore[no-untyped-call]
        current_tracer.reset(self._token)


# ----------------------------------------------------------------------------------------
# The tensor proxy


def _forward(name: str) -> Callable[..., Any]:
    func = getattr(torch.Tensor, name)

    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        return self._tracer.torch_function(func, (self, *args), kwargs)

    method.__name__ = name
    return method


class TensorProxy:
    """Stands for a tensor while tracing. Shapes, dtype and device are static; torch
    functions, methods and operators are recorded through the frontend table."""

    __slots__ = ("_tracer", "_var", "_name", "__weakref__")

    def __init__(self, tracer: TraceBuilder, var: TensorVar, name: str) -> None:
        self._tracer = tracer
        self._var = var
        self._name = name

    def __repr__(self) -> str:
        return f"TensorProxy({self._name}: {self._var.type_str()})"

    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        tracer = current_tracer.get()
        if tracer is None:
            raise TraceCheckError("a traced tensor was used outside its trace")
        return tracer.torch_function(func, args, kwargs or {})

    # Static metadata
    @property
    def shape(self) -> torch.Size:
        return torch.Size(self._var.shape)

    @property
    def dtype(self) -> torch.dtype:
        return self._var.dtype

    @property
    def device(self) -> torch.device:
        return self._var.device

    @property
    def ndim(self) -> int:
        return self._var.ndim

    @property
    def is_cuda(self) -> bool:
        return self._var.device.type == "cuda"

    @property
    def layout(self) -> torch.layout:
        return torch.strided

    @property
    def requires_grad(self) -> bool:
        return False

    def dim(self) -> int:
        return self._var.ndim

    def ndimension(self) -> int:
        return self._var.ndim

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self.shape
        return self._var.shape[dim]

    def numel(self) -> int:
        n = 1
        for s in self._var.shape:
            n *= s
        return n

    def is_floating_point(self) -> bool:
        return self._var.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._var.dtype.is_complex

    def element_size(self) -> int:
        return self._var.dtype.itemsize

    def __len__(self) -> int:
        if not self._var.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._var.shape[0]

    def __bool__(self) -> bool:
        raise DynamicValueError(
            f"bool() of traced tensor {self._name} ({self._var.type_str()}): a tensor's "
            "values are not known while tracing. Use torch.where(...) to select values, or "
            "symscalar.check(...) for a runtime check."
        )

    def item(self) -> Any:
        raise DynamicValueError(
            f"{self._name}.item(): a tensor's values are not known while tracing "
            "(data-dependent scalars are not supported); keep the value a tensor."
        )

    def tolist(self) -> Any:
        raise DynamicValueError(f"{self._name}.tolist(): tensor values are not known while tracing")

    def numpy(self) -> Any:
        raise DynamicValueError(f"{self._name}.numpy(): tensor values are not known while tracing")

    @property
    def T(self) -> Any:  # noqa: N802 - torch's name
        return self._tracer.torch_function(torch.Tensor.permute, (self, *reversed(range(self.ndim))), {})

    @property
    def mT(self) -> Any:  # noqa: N802 - torch's name
        return self._tracer.torch_function(torch.Tensor.transpose, (self, -2, -1), {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or not hasattr(torch.Tensor, name):
            raise AttributeError(f"'TensorProxy' (a traced torch.Tensor) has no attribute {name!r}")
        return functools.partial(_forward(name), self)

    for _name in (
        "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ "
        "__floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ "
        "__neg__ __pos__ __abs__ __invert__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ "
        "__lt__ __le__ __gt__ __ge__ __eq__ __ne__ __getitem__"
    ).split():
        locals()[_name] = _forward(_name)
    del _name


# ----------------------------------------------------------------------------------------
# Ops and the frontend table


@dataclasses.dataclass(frozen=True)
class OpSignature:
    """The static/dynamic contract of a user-facing op or torch spelling."""

    name: str  # "symscalar.ops.sum", "torch.sum", "torch.Tensor.sum"
    params: tuple[str, ...]  # parameter names in order
    static: tuple[str, ...]  # those that must be static
    positional: int  # how many of params can be passed positionally


# Every user-facing op and every torch spelling, by name: the single source of truth of which
# parameters are static (exported for the mypy plugin by ``symscalar.export``).
OPS: dict[str, OpSignature] = {}
# torch callable -> handler, consulted by __torch_function__.
TORCH_FUNCTIONS: dict[Any, Callable[..., Any]] = {}

_STATIC_ALIASES = (StaticInt, StaticFloat, StaticBool, StaticDims, StaticShape)


def is_static_annotation(hint: Any) -> bool:
    """``StaticInt``, ``StaticDims``, ... or a union of those with None."""
    if any(hint is alias for alias in _STATIC_ALIASES):
        return True
    if typing.get_origin(hint) in (typing.Union, pytypes.UnionType):
        members = [h for h in typing.get_args(hint) if h is not type(None)]
        return bool(members) and all(is_static_annotation(h) for h in members)
    return False


def _contract(fn: Callable[..., Any], name: str) -> tuple[inspect.Signature, OpSignature]:
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    params = tuple(sig.parameters)
    static = tuple(p for p in params if is_static_annotation(hints.get(p)))
    positional = sum(
        1 for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    return sig, OpSignature(name, params, static, positional)


def _checked(fn: F, name: str) -> F:
    """Wrap ``fn`` so that a dynamic value in a static parameter raises at trace time."""
    sig, contract = _contract(fn, name)
    if name in OPS:
        raise ValueError(f"{name} is already registered")
    OPS[name] = contract
    static = contract.static

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if static:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{name}(): {e}") from None
            for param in static:
                value = bound.arguments.get(param)
                if contains_dynamic(value):
                    raise StaticValueRequiredError(_static_message(name, param, value))
        return fn(*args, **kwargs)

    return typing.cast(F, wrapper)


def _static_message(op: str, param: str, value: Any) -> str:
    proxies = _find_proxies(value)
    what = ", ".join(f"{p._name} ({type(p).__name__}, {p._origin})" for p in proxies)
    return (
        f"{op}: parameter '{param}' must be static (a compile-time constant), but got dynamic "
        f"value {what}.\n"
        "Fix it in one of two ways:\n"
        "  - declare the value static where it enters the jitted function (annotate the "
        "parameter `StaticInt`, or jit(fn, static=[...])): a new value compiles a new program;\n"
        "  - or pass symscalar.specialize(value): the program is guarded on its current value."
    )


def _find_proxies(value: Any) -> list[NumberProxy]:
    if isinstance(value, NumberProxy):
        return [value]
    if isinstance(value, (tuple, list)):
        return [p for v in value for p in _find_proxies(v)]
    return []


def defop(fn: F) -> F:
    """Register a user-facing op of ``symscalar.ops``; its annotations are its contract."""
    return _checked(fn, f"symscalar.ops.{fn.__name__}")


def implements(*torch_functions: Any) -> Callable[[F], F]:
    """Register the handler of one or more torch callables (``torch.sum``,
    ``torch.Tensor.sum``, ``torch.nn.functional.softmax``...) for traced values."""

    def register(handler: F) -> F:
        # One checked wrapper per spelling, so that an error names the spelling the user
        # wrote (``torch.Tensor.var``, not ``torch.var``). dict.fromkeys: aliases such as
        # Tensor.__neg__ / Tensor.neg are the same object.
        by_name: dict[str, F] = {}
        for func in dict.fromkeys(torch_functions):
            if func in TORCH_FUNCTIONS:
                raise ValueError(f"{func} already has a symscalar handler")
            name = torch.overrides.resolve_name(func) or repr(func)
            if name not in by_name:
                by_name[name] = _checked(handler, name)
            TORCH_FUNCTIONS[func] = by_name[name]
        return next(iter(by_name.values()))

    return register


def supported_torch_functions() -> list[str]:
    """Names of the torch functions, methods and operators symscalar can trace."""
    return sorted({torch.overrides.resolve_name(f) or repr(f) for f in TORCH_FUNCTIONS})


def _unsupported(func: Any) -> UnsupportedOperationError:
    name = torch.overrides.resolve_name(func) or getattr(func, "__name__", repr(func))
    supported = sorted({torch.overrides.resolve_name(f) or "" for f in TORCH_FUNCTIONS} - {""})
    short = name.rsplit(".", 1)[-1]
    by_short = {s.rsplit(".", 1)[-1]: s for s in supported}
    close = difflib.get_close_matches(short, list(by_short), n=3, cutoff=0.5)
    hint = (
        "the nearest supported: " + ", ".join(by_short[c] for c in close)
        if close
        else f"see symscalar.supported_torch_functions() for the {len(supported)} supported ones"
    )
    return UnsupportedOperationError(
        f"{name} is not supported on traced values by symscalar ({hint}). It was not run "
        "eagerly: running it would bake its trace-time result into the compiled program."
    )
