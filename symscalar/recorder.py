"""The recorder: the IR-building core of a trace, small enough to read (a jaxpr frame).

``Recorder`` holds a trace's inputs and equations, names its values, keeps the trace-time
values and origins of its scalars (for ``specialize``) and the tensors it reads by reference.
It is a complete ``types.Tracer`` for code that calls only symscalar ops and torch functions on
traced values: ``grad.vjp`` records a backward with one, under ``recording``. What recording
*user* code needs on top (grad regions, in-place writes, the RNG seed, state writes, autocast,
the checks of torch calls, the tracing mode) is ``tracer.TraceBuilder``'s, which extends it.
"""

from __future__ import annotations

import collections
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from symscalar import messages, size_ops, sizes
from symscalar.compiling import reporting_compiling
from symscalar.errors import DynamicValueError, StaticValueRequiredError
from symscalar.frontend import _PROPERTY_GETTERS, TORCH_FUNCTIONS, _fallback
from symscalar.proxy import SIZES_ON, TensorProxy, _GradFlags, _inplace_error
from symscalar.scalar import SCALAR_BINARY, SCALAR_UNARY, check_p
from symscalar.trace import Atom, Eqn, Namespace, Primitive, ScalarVar, TensorVar, Trace, Var, contains_dynamic
from symscalar.types import DynamicBool, DynamicFloat, DynamicInt, NumberProxy, current_tracer

__all__ = ["Recorder", "recording"]

_PROXY_CLASS: dict[type, type[NumberProxy]] = {
    int: DynamicInt,
    float: DynamicFloat,
    bool: DynamicBool,
}


class _NoLeaves:
    """The grad regions of a plain ``Recorder`` (the backward traces ``grad.vjp`` records):
    no user code runs there, so no value is made a leaf; ``requires_grad_()`` is refused."""

    def __init__(self) -> None:
        self.leaves: set[TensorVar] = set()

    def set_requires_grad(self, var: TensorVar, value: Any, *, computed: bool, attribute: bool) -> bool:
        return False


class Recorder:
    """Records equations on proxies (implements ``types.Tracer`` and ``proxy.TensorTracer``)."""

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
        # The proxy standing for each captured tensor (by id; ``captured`` keeps it alive).
        self._captured_proxies: dict[int, TensorProxy] = {}
        self._kept_captured: tuple[torch.Tensor, ...] = ()
        # Whether each tensor input requires grad at the call being traced (from the call's
        # arguments; the cache key holds it), read by ``TensorProxy.requires_grad``.
        self.requires_grad: dict[TensorVar, bool] = {}
        # Which computed values requires_grad_() made leaves (``TraceBuilder``: ``GradRegions``).
        self.grad: _GradFlags = _NoLeaves()
        # Python attributes user code found absent on an argument tensor (hasattr, getattr with a
        # default): the program holds only while they stay absent (jit checks them on every call)
        self.absent_attributes: dict[TensorVar, set[str]] = {}
        # How many torch functions are being handled: only the outermost call of user code
        # (depth 0) is seen by the tracing mode and autocast; handlers run at depth > 0.
        self.depth = 0
        # The names of the values: given when first asked for (by a message or by printing
        # the trace, whose namespace this is), the same everywhere after. Values not named
        # yet, in order of creation: asking for one's name names those before it first, so
        # names follow the order of definition.
        self.namespace = Namespace()
        self._unnamed: collections.deque[Var] = collections.deque()

    # -- inputs and proxies -------------------------------------------------------------

    def name_of(self, var: Var) -> str:
        """``var``'s name, in messages as in the printed trace (see ``Namespace``)."""
        while self._unnamed and var in self._unnamed:
            self.namespace.define(self._unnamed.popleft())
        return self.namespace.define(var)

    def _created(self, *variables: Var) -> None:
        self._unnamed.extend(variables)

    def tensor_input(
        self, var: TensorVar, requires_grad: bool = False, tensor_class: type = torch.Tensor
    ) -> TensorProxy:
        self.inputs.append(var)
        self._created(var)
        self.requires_grad[var] = requires_grad
        return TensorProxy(self, var, "input", tensor_class)

    def scalar_input(self, python_type: type, value: Any, origin: str) -> NumberProxy:
        var = ScalarVar(python_type)
        self.inputs.append(var)
        self._created(var)
        if value is not None:
            self.scalar_values[var] = value
        self.roots[var] = frozenset([origin])
        return _PROXY_CLASS[python_type](self, var, origin)

    def _wrap(self, var: Var) -> Any:
        if isinstance(var, TensorVar):
            return TensorProxy(self, var, "computed")
        roots = self.roots.get(var, frozenset())
        origin = "computed from " + ", ".join(sorted(roots)) if roots else "computed in the trace"
        return _PROXY_CLASS[var.dtype](self, var, origin)

    def unwrap(self, value: Any) -> Atom:
        """A proxy becomes its variable; a static literal stays; a captured tensor becomes an
        extra input read by reference on every call."""
        if value is None or type(value) in (bool, int, float, complex):  # the common literals first
            return typing.cast(Atom, value)
        if isinstance(value, (TensorProxy, NumberProxy)):
            if value._tracer is not self:
                raise DynamicValueError(
                    f"{value!r} belongs to another trace; traced values cannot be stored "
                    "between calls of a jitted function. Return them instead."
                )
            return value._var
        if isinstance(value, torch.Tensor):
            return self._capture(value)
        # IntEnum, numpy.float64...: torch reads a subclass of a Python number as that
        # number, so the literal in the program is the plain value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, complex):
            return complex(value)
        if isinstance(value, sizes.Size):  # a dynamic size an op computed (1 / numel in mean's vjp)
            return typing.cast(Atom, size_ops.size_proxy(self, value)._var)
        raise TypeError(
            f"cannot use a value of type {type(value).__name__} as an operand in a traced "
            "function; operands are tensors and numbers"
        )

    def _capture(self, tensor: torch.Tensor) -> TensorVar:
        return self.capture(tensor)._var

    def capture(self, tensor: torch.Tensor) -> TensorProxy:
        """The proxy of a tensor read from outside the trace (a parameter, a buffer, a
        closed-over or newly created constant tensor): an extra input of the program, passed
        by reference on every call, so that nothing computed from it is baked in."""
        proxy = self._captured_proxies.get(id(tensor))
        if proxy is None:
            var = TensorVar(tuple(tensor.shape), tensor.dtype, tensor.device)
            self._created(var)
            self.captured[id(tensor)] = (var, tensor)
            self.requires_grad[var] = tensor.requires_grad
            proxy = TensorProxy(self, var, "captured")
            self._captured_proxies[id(tensor)] = proxy
        return proxy

    # -- the Tracer protocol -------------------------------------------------------------

    def bind(self, prim: Primitive[Any], args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        # Meta functions run torch on meta tensors: not user code, so not traced.
        self.depth += 1
        try:
            return self._bind(prim, args, params)
        finally:
            self.depth -= 1

    def _bind(self, prim: Primitive[Any], args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        atoms = self._operands(tuple([self.unwrap(a) for a in args]))
        if params:
            for key, value in params.items():
                if contains_dynamic(value):
                    raise StaticValueRequiredError(
                        messages.static_required(f"primitive {prim.name}", [key], repr(value))
                    )
        result = prim.meta(*atoms, **params)
        outs: tuple[Var, ...] = result if prim.multiple_results else (result,)
        if result is None:
            outs = ()
        self.eqns.append(Eqn(prim, atoms, dict(params), outs))
        self._unnamed.extend(outs)  # see ``_created``
        if not isinstance(result, TensorVar):  # only scalar results have values to propagate
            _propagate_scalar_values(self, prim, atoms, params, outs)
        outs = self._results(prim, atoms, outs)
        if prim.multiple_results:
            return tuple([self._wrap(v) for v in outs])
        return self._wrap(outs[0]) if outs else None

    # The seams a tracer of user code extends (``tracer.TraceBuilder``): the operands and results
    # of every equation (grad regions), the program's outputs, what it writes, its extra inputs.

    def _operands(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        return atoms

    def _results(self, prim: Primitive[Any], atoms: tuple[Atom, ...], outs: tuple[Var, ...]) -> tuple[Var, ...]:
        return outs

    def _outputs(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        return atoms

    def _written(self) -> list[TensorVar]:
        """Captured inputs the program writes after every call (read whether or not an op does)."""
        return []

    def _extra_inputs(self) -> tuple[Var, ...]:
        """Inputs after the captured tensors (the RNG seed)."""
        return ()

    def scalar_op(self, name: str, args: tuple[Any, ...]) -> NumberProxy:
        """Bind the scalar primitive of Python operator ``name`` (``"add"``, ``"neg"`` ...)."""
        if SIZES_ON[0]:  # dynamic dims: size symbols keep a normal form (see size_ops)
            result = size_ops.scalar_op(self, name, args)
            if result is not NotImplemented:
                return typing.cast(NumberProxy, result)
        prim = SCALAR_BINARY[name] if len(args) == 2 else SCALAR_UNARY[name]
        return typing.cast(NumberProxy, self.bind(prim, args, {}))

    def torch_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Trace ``func(*args, **kwargs)`` through its handler (a torch method or operator on
        a traced value in a vjp rule: ``ct.to(dtype)``, ``g + ct``)."""
        handler = TORCH_FUNCTIONS.get(func)
        if handler is None:
            handler = _proxy_attribute(func, args)
        self.depth += 1
        try:
            return handler(*args, **kwargs)
        finally:
            self.depth -= 1

    def _inplace_target(self, func: Any, args: tuple[Any, ...]) -> TensorProxy | None:
        """In-place updates are user code's (``TraceBuilder``): none here."""
        return None

    def update_in_place(self, name: str, target: Any, compute: Callable[[TensorProxy], Any]) -> Any:
        raise _inplace_error(name, target if isinstance(target, TensorProxy) else None)

    def specialize(self, proxy: NumberProxy) -> Any:
        var = proxy._var
        if size_ops.size_of(var) is not None:
            raise DynamicValueError(
                f"cannot specialize {proxy._name} ({proxy._origin}): it is the size of a declared dynamic dim "
                f"({size_ops.size_of(var)!r}); pinning it to one value would silently make the dim static. "
                "Declare the dim static instead (leave it out of dynamic_dims)."
            )
        if var not in self.scalar_values:
            raise DynamicValueError(
                f"cannot specialize {proxy._name} ({proxy._origin}): its value depends on tensor "
                "data, which is not known while tracing"
            )
        value = self.scalar_values[var]
        self.guards.append((var, value))
        return value

    def check(self, pred: NumberProxy, message: str, where: str | None = None) -> None:
        self.bind(check_p, (pred,), {"message": message} if where is None else {"message": message, "where": where})

    # -- result ---------------------------------------------------------------------------

    def build(self, outputs: Sequence[Any]) -> Trace:
        out_atoms = self._outputs(tuple(self.unwrap(o) for o in outputs))
        # Captured tensors whose metadata was read but no op used are not program inputs.
        used: set[Var] = set()
        if self.captured:  # else nothing to look for
            used.update(a for eqn in self.eqns for a in eqn.args if isinstance(a, TensorVar))
            used.update(a for a in out_atoms if isinstance(a, TensorVar))
            used.update(self._written())
        kept = [(var, t) for var, t in self.captured.values() if var in used]
        self._kept_captured = tuple(t for _, t in kept)
        captured_vars = tuple(var for var, _ in kept)
        return Trace(
            tuple(self.inputs) + captured_vars + self._extra_inputs(),
            tuple(self.eqns),
            out_atoms,
            self.name,
            namespace=self.namespace,
        )

    def captured_tensors(self) -> tuple[torch.Tensor, ...]:
        """The tensors passed by reference for the captured inputs of the built trace."""
        return self._kept_captured


def _propagate_scalar_values(
    recorder: Recorder, prim: Primitive[Any], atoms: tuple[Atom, ...], params: dict[str, Any], outs: tuple[Var, ...]
) -> None:
    """The roots of a scalar result, and its value where every operand's is known (for
    ``specialize`` and guards; the program never reads it)."""
    scalar_outs = [v for v in outs if isinstance(v, ScalarVar)]
    if not scalar_outs:
        return
    roots = frozenset().union(*(recorder.roots.get(a, frozenset()) for a in atoms if isinstance(a, ScalarVar)))
    for v in scalar_outs:
        recorder.roots[v] = roots
    if any(isinstance(a, TensorVar) for a in atoms):
        return
    if any(isinstance(a, ScalarVar) and a not in recorder.scalar_values for a in atoms):
        return
    try:
        value = prim.impl(
            *(recorder.scalar_values.get(a, a) if isinstance(a, ScalarVar) else a for a in atoms), **params
        )
    except Exception:  # noqa: BLE001 - trace-time value only feeds specialize()
        return
    values = value if prim.multiple_results else (value,)
    recorder.scalar_values.update(zip(scalar_outs, values))


@contextmanager
def recording(recorder: Recorder) -> Iterator[Recorder]:
    """Make ``recorder`` the current tracer of this thread/context: torch calls on its proxies
    are recorded there (``types.Traced.__torch_function__``); anything else runs eagerly (no
    tracing mode: the code recorded is symscalar's own, the vjp rules)."""
    token = current_tracer.set(recorder)
    try:
        with reporting_compiling():
            yield recorder
    finally:
        current_tracer.reset(token)


def _proxy_attribute(func: Any, args: tuple[Any, ...]) -> Callable[..., Any]:
    """For a torch callable without a handler: the TensorProxy attribute it stands for
    (``Tensor.shape.__get__``, ``Tensor.size``, ``torch.numel``...), if the proxy defines
    it itself; otherwise the unsupported-operation error is raised."""
    if not args or not isinstance(args[0], TensorProxy):
        return _fallback(func)
    prop = _PROPERTY_GETTERS.get(func)
    if prop is not None:
        return lambda proxy: getattr(proxy, prop)
    name = getattr(func, "__name__", "")
    if getattr(torch.Tensor, name, None) is func or getattr(torch, name, None) is func:
        attr = TensorProxy.__dict__.get(name)
        if callable(attr) and not getattr(attr, "_forwarded", False):
            return attr  # type: ignore[no-any-return]
    return _fallback(func)
