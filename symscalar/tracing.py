"""Recording traces: the tracer, the tensor proxy and the torch frontend table.

While ``symscalar.jit`` traces a function, tensors are ``TensorProxy`` objects and dynamic
numbers are ``DynamicInt``/``DynamicFloat``/``DynamicBool`` proxies. Both route torch
functions, ``Tensor`` methods and operators through ``__torch_function__`` to the handler
registered for that torch callable with ``@implements`` (next to the op, in ``ops/``).
Handlers and ops are checked against their annotations: a dynamic value reaching a parameter
annotated ``StaticInt``/``StaticDims``/... raises ``StaticValueRequiredError``.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import inspect
import math
import sys
import types as pytypes
import typing
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch

try:
    import numpy as np
except ImportError:  # torch runs without numpy (not a dependency); then no numpy scalars arrive
    np = None  # type: ignore[assignment]

from symscalar import autocast
from symscalar.compiling import answer_isinstance_for, called_from_symscalar, reporting_compiling
from symscalar.errors import (
    DynamicValueError,
    RegistrationError,
    StaticValueRequiredError,
    TraceCheckError,
    UnsupportedOperationError,
)
from symscalar.nvfuser_lowering import register_nvfuser
from symscalar.scalar import SCALAR_BINARY, SCALAR_UNARY, check_p
from symscalar.trace import (
    Atom,
    Eqn,
    Namespace,
    Primitive,
    Registry,
    ScalarVar,
    TensorVar,
    Trace,
    Var,
    contains_dynamic,
    leaves,
    register_vjp,
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
    Traced,
    current_tracer,
)

__all__ = [
    "TraceBuilder",
    "TensorProxy",
    "implements",
    "defop",
    "static_message",
    "OpSignature",
    "OPS",
    "TORCH_FUNCTIONS",
    "supported_torch_functions",
    "register_fallback",
    "tracing",
]

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")

_PROXY_CLASS: dict[type, type[NumberProxy]] = {
    int: DynamicInt,
    float: DynamicFloat,
    bool: DynamicBool,
}


# Every tensor any trace built from Python values alone (by id, weakly): a later trace may read
# one again from a cache the first trace filled (``functools.lru_cache`` around a mask maker),
# and it is still a constant: the same Python values give the same tensor.
_TRACE_CONSTANTS: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()


def is_trace_constant(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` was built by some trace from Python values alone."""
    return _TRACE_CONSTANTS.get(id(tensor)) is tensor


_TENSOR_CLASSES: dict[type, bool] = {torch.Tensor: True}


def check_tensor_class(tensor: torch.Tensor, what: str) -> None:
    """Refuse a tensor whose class changes what torch calls do (``__torch_function__`` or
    ``__torch_dispatch__`` of its own: a logging or quantized subclass, torchvision's
    ``tv_tensors``, ``DTensor``) or what they return (a plain subclass: eager's results are of
    that class too). The trace records torch's own ops, so such a class would be silently
    ignored. A ``Parameter`` (and a subclass that overrides neither) behaves as a tensor."""
    cls = type(tensor)
    plain = _TENSOR_CLASSES.get(cls)
    if plain is None:
        function = getattr(cls.__torch_function__, "__func__", cls.__torch_function__)
        plain = (
            function is torch._C._disabled_torch_function_impl
            and cls.__torch_dispatch__ is torch.Tensor.__torch_dispatch__
        )
        _TENSOR_CLASSES[cls] = plain
    if not plain:
        raise UnsupportedOperationError(
            f"{what} is a {cls.__module__}.{cls.__qualname__} (shape {tuple(tensor.shape)}, "
            f"{tensor.dtype}), a torch.Tensor subclass whose own __torch_function__/__torch_dispatch__ "
            "decides what torch calls on it do and return; symscalar traces torch's own ops, so it "
            "would silently ignore that behaviour. Pass a plain tensor (t.as_subclass(torch.Tensor)) "
            "and apply the subclass's behaviour outside the jitted function, or call it eagerly."
        )


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
        # The torch function that first read each captured tensor (by id), for messages.
        self.read_by: dict[int, Any] = {}
        self.reading: Any = None
        # Whether each tensor input requires grad at the call being traced (from the call's
        # arguments; the cache key holds it), read by ``TensorProxy.requires_grad``.
        self.requires_grad: dict[TensorVar, bool] = {}
        # Python attributes user code found absent on an argument tensor (hasattr, getattr with a
        # default): the program holds only while they stay absent (jit checks them on every call)
        self.absent_attributes: dict[TensorVar, set[str]] = {}
        # State the traced function writes, in order: (real tensor outside the trace, traced
        # value it must hold after each call). jit makes each value an output of the program
        # and copies it into the real tensor after every call (functionalized state writes:
        # running statistics, an EMA, a KV cache).
        self.write_backs: list[tuple[torch.Tensor, Any]] = []
        # The program's RNG seed, an int input created by the first random op (see
        # ops/random.py); the caller supplies a fresh one on every call. It is the last
        # input of the built trace, after the captured tensors.
        self.rng_seed: NumberProxy | None = None
        self._rng_offsets = 0
        # The proxy standing for each captured tensor (by id; ``captured`` keeps it alive).
        self._captured_proxies: dict[int, TensorProxy] = {}
        self._kept_captured: tuple[torch.Tensor, ...] = ()
        # Constants: tensors the traced function built from Python values alone (by id; the
        # dict keeps them alive). Torch calls on constants only are folded (run eagerly).
        self.constants: dict[int, torch.Tensor] = {}
        # Storages of captured tensors: an in-place op on a constant sharing one is traced.
        self._captured_storages: set[int] = set()
        # Traced values that are the current value of state updated in place, and its tensor.
        self._state_of: dict[TensorVar, torch.Tensor] = {}
        # Leaves that require grad updated in place under no_grad (a manual SGD step), by id.
        self._updated_leaves: set[int] = set()
        # values that may share storage with another in eager though not in the trace (the
        # operands and result of a _MAY_RETURN_INPUT call): never updated in place
        self.aliased: set[Var] = set()
        # Grad mode when tracing started: a region of the traced function that runs with grad
        # disabled while it was enabled here (``with torch.no_grad():`` inside the function)
        # gets a ``stop_gradient`` on what it computes from values that require grad.
        self.grad_enabled_at_start = torch.is_grad_enabled()
        self.inference_at_start = torch.is_inference_mode_enabled()
        # Set when a function called without grad computes, in an ``enable_grad()`` region, a
        # value that requires grad: the program then runs with autograd, as eager builds a graph.
        self.grad_inside = False
        # Values computed without grad from ones that require grad (a call without grad), and
        # their stop_gradient where an enable_grad() region or an output of such a call uses them.
        self._no_grad_values: set[TensorVar] = set()
        self._cuts: dict[TensorVar, TensorVar] = {}
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
            read_by = f", read by {public_name(self.reading)}," if self.reading is not None else ""
            check_tensor_class(
                tensor, f"a tensor the traced function reads from outside (a parameter, buffer or global){read_by}"
            )
            var = TensorVar(tuple(tensor.shape), tensor.dtype, tensor.device)
            self._created(var)
            self.captured[id(tensor)] = (var, tensor)
            self.requires_grad[var] = tensor.requires_grad
            proxy = TensorProxy(self, var, "captured")
            self._captured_proxies[id(tensor)] = proxy
            self.read_by[id(tensor)] = self.reading
            self._captured_storages.add(_storage_of(tensor))
            if self.depth > 0:
                # First read inside a handler: the tensors user code passes to a torch call are
                # captured before its handler runs (depth 0), so this one the handler built from
                # Python values (an index list, the zeros of add_zero_attn): a constant.
                self.constants[id(tensor)] = tensor
        return proxy

    def read_captured(self, tensor: torch.Tensor) -> TensorProxy:
        """``capture``, for an operand of a torch call of the traced function."""
        if id(tensor) in self._updated_leaves and torch.is_grad_enabled():
            raise UnsupportedOperationError(
                f"the traced function reads a tensor that requires grad (shape {tuple(tensor.shape)}, "
                f"{tensor.dtype}, e.g. a parameter) with grad enabled, after updating it in place under "
                "torch.no_grad() in the same call: eager differentiates the later use with respect to the "
                "updated leaf, which the compiled program cannot express. Fix: update it outside the "
                "jitted function (an optimizer step after the call), or read it under torch.no_grad()."
            )
        return self.capture(tensor)

    def is_constant(self, tensor: torch.Tensor) -> bool:
        """Whether ``tensor`` was built in this trace from Python values only, and is not an
        input of the program yet (once captured, its value is read at run time)."""
        return id(tensor) in self.constants and id(tensor) not in self.captured

    def add_constants(self, result: Any) -> None:
        if isinstance(result, torch.Tensor):
            self.constants[id(result)] = result
            _TRACE_CONSTANTS[id(result)] = result
        elif isinstance(result, (tuple, list)):
            for r in result:
                self.add_constants(r)

    # -- the Tracer protocol -------------------------------------------------------------

    def bind(self, prim: Primitive[Any], args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        # Meta functions run torch on meta tensors: not user code, so not traced.
        self.depth += 1
        try:
            return self._bind(prim, args, params)
        finally:
            self.depth -= 1

    def _bind(self, prim: Primitive[Any], args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        atoms = tuple([self.unwrap(a) for a in args])
        if self._no_grad_values and torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
            atoms = tuple([self._cut_no_grad(a) for a in atoms])
        if params:
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
        self._unnamed.extend(outs)  # see ``_created``
        if not isinstance(result, TensorVar):  # only scalar results have values to propagate
            self._propagate_scalar_values(prim, atoms, params, outs)
        outs = self._propagate_requires_grad(prim, atoms, outs)
        if prim.multiple_results:
            return tuple([self._wrap(v) for v in outs])
        return self._wrap(outs[0]) if outs else None

    def _propagate_requires_grad(
        self, prim: Primitive[Any], atoms: tuple[Atom, ...], outs: tuple[Var, ...]
    ) -> tuple[Var, ...]:
        """Record whether each output requires grad, as eager autograd would decide it; in a
        region where the traced function disabled grad, cut the gradient with stop_gradient."""
        if prim is stop_gradient_p:
            return outs
        from_grad = False
        for a in atoms:
            if isinstance(a, TensorVar) and self.requires_grad.get(a, False):
                from_grad = True
                break
        if not from_grad and not self._no_grad_values:
            return outs  # nothing to record, whatever the grad mode
        grad_on = torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
        if not grad_on and not self.grad_enabled_at_start:
            # a call without grad: values computed from ones that require grad carry none, which
            # matters only if an enable_grad() region uses them (see ``_cut_no_grad``)
            if from_grad or any(a in self._no_grad_values for a in atoms):
                self._no_grad_values.update(v for v in outs if isinstance(v, TensorVar))
            return outs
        if not from_grad:
            return outs
        if grad_on:
            if not self.grad_enabled_at_start:
                self._enter_grad_region()
            for v in outs:
                if isinstance(v, TensorVar):
                    self.requires_grad[v] = v.dtype.is_floating_point or v.dtype.is_complex
            return outs
        return tuple(self._stop_gradient(v) if isinstance(v, TensorVar) else v for v in outs)

    def _enter_grad_region(self) -> None:
        """An op under ``torch.enable_grad()`` (or ``set_grad_enabled(True)``) in a function
        called without grad builds a graph in eager torch: the program is run with autograd
        (``grad_inside``), and values computed without grad are cut where they are used."""
        if self.inference_at_start:
            raise UnsupportedOperationError(
                f"{self.name} is called under torch.inference_mode() and computes, inside a "
                "torch.inference_mode(False) region, a value that requires grad: eager torch builds "
                "a graph there but refuses to save inference tensors (the arguments) for backward. "
                "Fix: call it under torch.no_grad() instead of inference_mode, or move the region "
                "that needs gradients outside the jitted function."
            )
        self.grad_inside = True

    def _cut_no_grad(self, atom: Atom) -> Atom:
        """``atom`` as a value with grad enabled: a value computed without grad (from one that
        requires grad) carries no gradient, as in eager torch."""
        if not isinstance(atom, TensorVar) or atom not in self._no_grad_values:
            return atom
        cut = self._cuts.get(atom)
        if cut is None:
            cut = self._cuts[atom] = self._stop_gradient(atom)
        return cut

    def _stop_gradient(self, var: TensorVar) -> TensorVar:
        out = TensorVar(var.shape, var.dtype, var.device)
        self.eqns.append(Eqn(stop_gradient_p, (var,), {}, (out,)))
        self._created(out)
        self.requires_grad[out] = False
        return out

    def _propagate_scalar_values(
        self, prim: Primitive[Any], atoms: tuple[Atom, ...], params: dict[str, Any], outs: tuple[Var, ...]
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
            value = prim.impl(
                *(self.scalar_values.get(a, a) if isinstance(a, ScalarVar) else a for a in atoms), **params
            )
        except Exception:  # noqa: BLE001 - trace-time value only feeds specialize()
            return
        values = value if prim.multiple_results else (value,)
        self.scalar_values.update(zip(scalar_outs, values))

    def scalar_op(self, name: str, args: tuple[Any, ...]) -> NumberProxy:
        """Bind the scalar primitive of Python operator ``name`` (``"add"``, ``"neg"`` ...)."""
        prim = SCALAR_BINARY[name] if len(args) == 2 else SCALAR_UNARY[name]
        return typing.cast(NumberProxy, self.bind(prim, args, {}))

    def torch_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Trace ``func(*args, **kwargs)`` through its handler. Captured tensors among the
        operands become proxies first, so that a handler never computes eagerly on them."""
        if self.depth == 0:
            self.reading = func  # names the op in the message about a captured tensor it reads
        handler = TORCH_FUNCTIONS.get(func)
        if handler is None:  # an in-place method is one without a handler of its own
            target = self._inplace_target(func, args)
            if target is not None:
                return self._update_in_place(func, target, args, kwargs)
        args, kwargs = _prepare_arguments(self, func, args, kwargs, handler is not None)
        if handler is None:
            handler = _proxy_attribute(func, args)
        self.depth += 1
        try:
            if self.depth == 1 and torch._C._is_any_autocast_enabled():
                args, kwargs = autocast.cast_arguments(func, args, kwargs, self._autocast_cast)
            result = handler(*args, **kwargs)
        finally:
            self.depth -= 1
        if func in _MAY_RETURN_INPUT:
            self.aliased.update(p._var for p in _tensor_proxies((args, kwargs, result)))
        return result

    def _autocast_cast(self, proxy: TensorProxy, dtype: torch.dtype) -> Any:
        return self.torch_function(torch.Tensor.to, (proxy, dtype), {})

    # -- in-place updates of state read from outside (buffers) --------------------------------

    def _inplace_target(self, func: Any, args: tuple[Any, ...]) -> TensorProxy | None:
        """The traced value an in-place method updates, when the update can be traced with
        eager's semantics (see ``_update_in_place``); else None (the method is refused)."""
        if not args or func in TORCH_FUNCTIONS or not _functional_form(public_name(func).rsplit(".", 1)[-1]):
            return None
        return self._updatable(args[0], public_name(func))

    def _updatable(self, target: Any, name: str) -> TensorProxy | None:
        """``target`` as a proxy whose value an in-place update ``name`` may replace, or None."""
        tensor: torch.Tensor | None
        if isinstance(target, TensorProxy) and target._tracer is self:
            if target._kind == "input" and target._var not in self._state_of:
                return None  # an argument of the jitted function: the caller's tensor
            tensor = target._captured() if target._kind == "captured" else None
        elif isinstance(target, torch.Tensor):
            tensor = target
        else:
            return None
        if tensor is not None and id(tensor) in self.constants:
            raise _built_here_error(name, tensor)
        proxy: TensorProxy = target if tensor is None else self.capture(tensor)  # a capture: state, a buffer
        # Eager's update also reaches every alias: a view taken of the target, or the value the
        # target is a view of. Functionalized, either would keep the old value, so a computed
        # value is updated only where no op that may alias (``Primitive.may_alias``) made it
        # or read it; other reads (``s = x.sum(); x /= s``) made new tensors from the old
        # value, as eager's did. State read from outside is updated only before any read: a
        # tensor built at trace time is a constant the program reads on every call.
        var = proxy._var
        computed = proxy._kind == "computed" and var not in self._state_of
        if var in self.aliased:
            return None
        for eqn in self.eqns:
            if (var in eqn.args and (eqn.prim.may_alias or not computed)) or (eqn.prim.may_alias and var in eqn.outs):
                return None
        return proxy

    def _update_in_place(self, func: Any, target: TensorProxy, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Functionalize ``target.<op>_(...)``: trace the out-of-place op (see ``_assign_update``)."""
        short = public_name(func).rsplit(".", 1)[-1]
        rest = args[1:]

        def compute(target: TensorProxy) -> Any:
            if short == "zero_":
                return self.torch_function(torch.zeros_like, (target,), {})
            if short == "fill_":
                return self.torch_function(torch.full_like, (target, *rest), kwargs)
            if short == "copy_":
                source = self.torch_function(torch.Tensor.to, (rest[0], target.dtype), {})
                return self.torch_function(torch.Tensor.expand, (source, tuple(target.shape)), {})
            return self.torch_function(getattr(torch.Tensor, short[:-1]), (target, *rest), kwargs)

        return self._assign_update(f"torch.Tensor.{short}", target, compute)

    def update_in_place(self, name: str, target: Any, compute: Callable[[TensorProxy], Any]) -> Any:
        """The in-place spelling ``name`` of a handler (``F.relu(x, inplace=True)``,
        ``x[i] = v``) whose new value ``compute(target)`` traces out of place: traced under the
        rules of the in-place methods (``_updatable``), so every reference to ``target``
        sees the update as in eager, or refused with an error naming ``name``."""
        proxy = self._updatable(target, name)
        if proxy is None:
            raise _inplace_error(name, target if isinstance(target, TensorProxy) else None)
        return self._assign_update(name, proxy, compute)

    def _assign_update(self, name: str, target: TensorProxy, compute: Callable[[TensorProxy], Any]) -> Any:
        """``target`` holds ``compute(target)`` from now on (cast back to the target's dtype,
        same shape, as eager's in-place op). A computed value's proxy then stands for the new
        value (every Python reference to it sees the update, as eager's); state read from
        outside (``num_batches_tracked.add_(1)``) is written back after every call, and later
        reads of it in this trace see the new value."""
        state = self.state_tensor(target)
        if state is not None and state.requires_grad and state.is_leaf:
            if torch.is_grad_enabled():
                raise RuntimeError(
                    f"a leaf Variable that requires grad is being used in an in-place operation "
                    f"({name} on a tensor of shape {tuple(state.shape)} read from outside, "
                    "e.g. a parameter); eager torch refuses this too. Fix: do the update under "
                    "torch.no_grad() (as an optimizer step does), or outside the jitted function."
                )
            self._updated_leaves.add(id(state))
        new = compute(target)
        if tuple(new.shape) != tuple(target.shape):
            raise RuntimeError(
                f"output with shape {list(target.shape)} doesn't match the broadcast shape {list(new.shape)} ({name})"
            )
        if not torch.can_cast(new.dtype, target.dtype):
            raise RuntimeError(f"result type {new.dtype} can't be cast to the desired output type {target.dtype}")
        if new.dtype != target.dtype:
            new = self.torch_function(torch.Tensor.to, (new, target.dtype), {})
        if state is not None:
            self.assign_state(state, new)
            return new
        target._var = new._var
        return target

    def state_tensor(self, value: Any) -> torch.Tensor | None:
        """The real tensor (state read from outside) whose current value ``value`` is: a
        captured tensor, or the traced value an in-place update assigned to one."""
        if isinstance(value, TensorProxy):
            if value._var in self._state_of:
                return self._state_of[value._var]
            return value._captured() if value._kind == "captured" else None
        return value if isinstance(value, torch.Tensor) else None

    def assign_state(self, target: torch.Tensor, value: TensorProxy) -> None:
        """``target`` (a real tensor read from outside) holds ``value`` from now on: written
        back after every call, and what later reads of ``target`` in this trace see."""
        self.capture(target)  # an input of the program: the write-back target is read by path
        self.write_back(target, value)
        self._captured_proxies[id(target)] = value
        self._state_of[value._var] = target

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
        self.bind(check_p, (pred,), {"message": message})

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
            self._created(var)
            self.roots[var] = frozenset(["the RNG seed of the program"])
            self.rng_seed = DynamicInt(self, var, "the RNG seed of the program")
        offset = self._rng_offsets
        self._rng_offsets += 1
        return self.rng_seed, offset

    # -- result ---------------------------------------------------------------------------

    def build(self, outputs: Sequence[Any]) -> Trace:
        out_atoms = tuple(self.unwrap(o) for o in outputs)
        if self.grad_inside:  # run with autograd: what was computed without grad carries none
            out_atoms = tuple(self._cut_no_grad(a) for a in out_atoms)
        # Captured tensors whose metadata was read but no op used are not program inputs.
        used: set[Var] = set()
        if self.captured:  # else nothing to look for
            used.update(a for eqn in self.eqns for a in eqn.args if isinstance(a, TensorVar))
            used.update(a for a in out_atoms if isinstance(a, TensorVar))
            used.update(self.captured[id(t)][0] for t, _ in self.write_backs if id(t) in self.captured)
        kept = [(var, t) for var, t in self.captured.values() if var in used]
        self._kept_captured = tuple(t for _, t in kept)
        captured_vars = tuple(var for var, _ in kept)
        rng = (self.rng_seed._var,) if self.rng_seed is not None else ()
        return Trace(
            tuple(self.inputs) + captured_vars + rng,
            tuple(self.eqns),
            out_atoms,
            self.name,
            namespace=self.namespace,
        )

    def captured_tensors(self) -> tuple[torch.Tensor, ...]:
        """The tensors passed by reference for the captured inputs of the built trace."""
        return self._kept_captured


# Eager returns the input tensor itself from these under conditions that may depend on a
# dynamic value (dropout with p == 0), where the trace computes a new value.
_MAY_RETURN_INPUT = frozenset(
    {
        torch.dropout,
        torch.nn.functional.dropout,
        torch.nn.functional.alpha_dropout,
        torch.nn.functional.feature_alpha_dropout,
        torch.nn.functional.dropout1d,
        torch.nn.functional.dropout2d,
        torch.nn.functional.dropout3d,
        torch.alpha_dropout,
        torch.feature_dropout,
        torch.feature_alpha_dropout,
    }
)


def _tensor_proxies(tree: Any) -> list[TensorProxy]:
    return [leaf for leaf in leaves(tree) if isinstance(leaf, TensorProxy)]


def _random_functions() -> frozenset[Any]:
    F = torch.nn.functional
    names = "rand randn randint rand_like randn_like randint_like randperm bernoulli normal poisson multinomial"
    tensor_methods = "uniform_ normal_ bernoulli bernoulli_ random_ exponential_ geometric_ log_normal_ cauchy_"
    return frozenset(
        [getattr(torch, n) for n in names.split()]
        + [getattr(torch.Tensor, n) for n in tensor_methods.split()]
        + [
            F.dropout,
            torch.dropout,
            F.dropout1d,
            F.dropout2d,
            F.dropout3d,
            F.alpha_dropout,
            F.feature_alpha_dropout,
            F.gumbel_softmax,
            F.rrelu,
        ]
    )


_RANDOM_FUNCTIONS = _random_functions()


# ---- stop_gradient: the value, without a gradient. The tracer inserts it where the traced
# function computes with grad disabled (``with torch.no_grad():``), and ``detach`` is it.
def _stop_gradient_meta(x: TensorVar) -> TensorVar:
    return TensorVar(x.shape, x.dtype, x.device)


stop_gradient_p = Primitive(
    "stop_gradient",
    torch.Tensor.detach,
    _stop_gradient_meta,
    may_alias=True,  # detach() shares storage
)
register_vjp(stop_gradient_p, lambda ct, out, x: (None,))
register_nvfuser(stop_gradient_p, lambda fd, x: fd.ops.set(x))


# Functions that read their data argument as Python values: a dynamic number there would be
# concretized, a traced tensor copied outside autograd.
_TENSOR_FROM_DATA = frozenset(
    [torch.tensor, torch.as_tensor, torch.asarray, torch.scalar_tensor, torch.Tensor.new_tensor]
)


def _tensor_property_getters() -> dict[Any, str]:
    getters = {}
    for name in dir(torch.Tensor):
        attr = inspect.getattr_static(torch.Tensor, name, None)
        if name.startswith("__") or not hasattr(attr, "__set__") or callable(attr):
            continue
        if hasattr(getattr(torch.Tensor, name), "__get__"):
            getters[getattr(torch.Tensor, name).__get__] = name
    return getters


# Tensor.shape.__get__ -> "shape": how a TorchFunctionMode sees an attribute read.
_PROPERTY_GETTERS = _tensor_property_getters()

# Reads of a real tensor's metadata (static, guarded by jit) run eagerly: they must not make
# the tensor an input of the program.
_METADATA_READS = frozenset(
    [
        getattr(torch.Tensor, n).__get__
        for n in (
            "shape dtype device ndim layout is_cuda is_cpu is_meta is_sparse is_sparse_csr "
            "is_nested is_quantized is_mkldnn itemsize nbytes names requires_grad is_leaf"
        ).split()
    ]
    + [
        getattr(torch.Tensor, n)
        for n in (
            "size dim ndimension numel nelement element_size is_floating_point is_complex is_signed get_device __len__"
        ).split()
    ]
    + [torch.is_floating_point, torch.is_complex, torch.numel]
)


def _tensor_operands(value: Any) -> list[Any]:
    """The tensors (real or traced) and dynamic numbers among ``value``'s leaves: a torch call
    with any of them is traced."""
    return [v for v in leaves(value) if isinstance(v, (torch.Tensor, TensorProxy, NumberProxy))]


def maybe_in_place(name: str, input: Any, inplace: bool, compute: Callable[[Any], R]) -> R:
    """A handler's ``inplace=`` flag (``F.relu(x, inplace=True)``, ``nn.ReLU(inplace=True)``):
    ``compute(input)``, written into ``input`` when ``inplace`` is set, as eager's in-place
    kernel writes it (``TraceBuilder.update_in_place``: every reference sees the new value;
    refused where an alias would see the old one)."""
    if not inplace or not isinstance(input, TensorProxy):
        return compute(input)
    return typing.cast(R, input._tracer.update_in_place(name, input, compute))


def _storage_of(tensor: torch.Tensor) -> int:
    try:
        return int(tensor.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):  # tensors without storage (subclasses, meta)
        return -1


def _is_inplace(func: Any) -> bool:
    name = getattr(func, "__name__", "")
    return (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_DUNDERS


def _foldable(builder: TraceBuilder, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a torch call reads only Python values and constants (tensors the traced
    function built from Python values, such as ``torch.arange(T)`` or a causal mask): its
    result is the same on every call, so it runs once, at trace time, and is a constant
    too. Anything reading a traced value or a tensor from outside is traced."""
    for a in args:
        if isinstance(a, (TensorProxy, NumberProxy)):
            return False  # the common case, decided without walking the arguments
    operands = []
    for t in leaves((args, kwargs)):  # stops at the first traced operand
        if isinstance(t, (TensorProxy, NumberProxy)):
            return False
        if isinstance(t, torch.Tensor):
            if not builder.is_constant(t):
                return False
            operands.append(t)
    if operands and _is_inplace(func):
        # writing into a constant the program already reads by reference would change it
        return not any(_storage_of(t) in builder._captured_storages for t in operands)
    return True


def _as_traced(builder: TraceBuilder, value: Any) -> Any:
    """Arguments as handlers receive them: real tensors become captured proxies, numpy
    scalars the Python numbers eager torch treats them as."""
    if value is None or type(value) in (bool, int, float, complex, str):  # passed as they are
        return value
    if isinstance(value, (TensorProxy, NumberProxy)):
        return value
    if isinstance(value, torch.Tensor):
        return builder.read_captured(value)
    if np is not None and isinstance(value, np.bool_):  # torch's parser promotes numpy.bool_ like a float
        return float(value)
    if np is not None and isinstance(value, (np.integer, np.floating)):
        return value.item()
    if type(value) in (list, tuple):
        return type(value)(_as_traced(builder, v) for v in value)
    if isinstance(value, slice):
        return slice(*(_as_traced(builder, v) for v in (value.start, value.stop, value.step)))
    return value


def public_name(func: Any) -> str:
    """How the user spells a torch callable: ``torch.sum``, ``torch.Tensor.add_``,
    ``torch._weight_norm`` (torch's resolver does not know every private builtin).
    Remembered per callable: torch's resolver installs a warnings filter on every call, a
    third of the cost of tracing an elementwise op."""
    try:
        return _PUBLIC_NAMES[func]
    except KeyError:
        name = _PUBLIC_NAMES[func] = _resolve_public_name(func)
        return name
    except TypeError:  # an unhashable callable
        return _resolve_public_name(func)


_PUBLIC_NAMES: dict[Any, str] = {}


def _resolve_public_name(func: Any) -> str:
    name = torch.overrides.resolve_name(func)
    if isinstance(name, str):
        return name
    short = getattr(func, "__name__", "")
    if short and getattr(torch, short, None) is func:
        return f"torch.{short}"
    qualname = getattr(func, "__qualname__", None)
    return qualname if isinstance(qualname, str) else repr(func)


def _prepare_arguments(
    builder: TraceBuilder, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], handled: bool
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments as ``func``'s handler (``handled``: it has one) receives them, after the
    checks that refuse ``out=``, data read as Python numbers and in-place methods."""
    name = public_name(func)
    if kwargs.get("out") is not None:
        short = name.rsplit(".", 1)[-1]
        raise UnsupportedOperationError(
            f"{name}(..., out=...) is not supported inside a traced function: out= writes into "
            f"an existing tensor in place, which symscalar does not trace. Use the result "
            f"instead: `y = {name}(...)` without out=."
            if short
            else f"{name}: out= is not supported inside a traced function"
        )
    if func in _TENSOR_FROM_DATA and _tensor_operands((args, kwargs)):
        raise _from_data_error(name, args, kwargs)
    short = "" if handled else name.rsplit(".", 1)[-1]
    if short.endswith("_") and not short.endswith("__"):
        detail = "" if _functional_form(short) else f" (its out-of-place form {short[:-1]} is not supported either)"
        raise _inplace_error(name, next((a for a in args if isinstance(a, TensorProxy)), None), detail)
    if kwargs and isinstance(func, _BUILTIN_KINDS):
        # torch's C++ argument parser accepts numpy's spellings of these keywords everywhere
        for alias, canonical in (("axis", "dim"), ("keepdims", "keepdim")):
            if alias in kwargs and canonical not in kwargs:
                kwargs = {canonical if k == alias else k: v for k, v in kwargs.items()}
    args = tuple([a if isinstance(a, (TensorProxy, NumberProxy)) else _as_traced(builder, a) for a in args])
    if kwargs:
        kwargs = {k: _as_traced(builder, v) for k, v in kwargs.items()}
    return args, kwargs


_BUILTIN_KINDS = (pytypes.BuiltinFunctionType, pytypes.MethodDescriptorType, pytypes.WrapperDescriptorType)


def _from_data_error(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception:
    numbers = _find_proxies((args, tuple(kwargs.values())))
    if numbers:
        what = ", ".join(f"{p._name} ({type(p).__name__}, {p._origin})" for p in numbers)
        return DynamicValueError(
            f"{name}() of dynamic value {what}: it reads its data as Python numbers, and a "
            "dynamic value is only known when the compiled program runs. Use "
            "torch.full((), s, dtype=...) for a 0-d tensor holding s (or torch.stack of such "
            "tensors for a list), or symscalar.specialize(s) to bake the current value."
        )
    return UnsupportedOperationError(
        f"{name}() of a traced tensor is not supported: it copies the data outside autograd. "
        "Use x.detach().clone() (or x.clone()) instead."
    )


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


# The handler of torch callables that have none of their own (ops/opaque.py: the opaque torch
# call), registered once: ``fallback(func, args, kwargs)`` traces the call or raises why not.
_FALLBACK: list[Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = []


def register_fallback(fallback: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]) -> None:
    """Register the handler of every torch callable without one (once)."""
    if _FALLBACK:
        raise RegistrationError(f"the fallback handler is already registered (as {_FALLBACK[0]!r})")
    _FALLBACK.append(fallback)


def _fallback(func: Any) -> Callable[..., Any]:
    """The fallback's handler of ``func``, or the unsupported-operation error (data-dependent
    ops keep theirs)."""
    if not _FALLBACK or func in _DATA_DEPENDENT or func in (torch.histc, torch.Tensor.histc):
        raise _unsupported(func)
    fallback = _FALLBACK[0]
    return lambda *args, **kwargs: fallback(func, args, kwargs)


class _TraceMode(torch.overrides.TorchFunctionMode):
    """Active while tracing user code. Every torch call on tensors (traced or captured) or
    dynamic numbers is recorded, never run eagerly: a parameter's ``weight.t()``,
    ``1 + weight`` or ``logit_scale.exp()`` re-runs on every call with the current values.

    Calls that only build a tensor from Python values (``torch.arange(T)``,
    ``torch.ones(3)``) run once, at trace time: their result is a constant of the program
    (an input passed by reference, that nothing modifies). Random ops would be such a
    constant: those symscalar implements (ops/random.py) are recorded even with no traced
    operand (``torch.rand(2, 3)``) and draw from the program's RNG seed; the others are refused.
    """

    def __init__(self, builder: TraceBuilder) -> None:
        super().__init__()
        self.builder = builder

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in _RANDOM_FUNCTIONS:
            if func in TORCH_FUNCTIONS:  # recorded: draws from the program's RNG seed
                return self.builder.torch_function(func, args, kwargs)
            raise UnsupportedOperationError(
                f"{public_name(func)} inside a traced function is not supported: it would run "
                "once while tracing and bake that sample into the compiled program. Draw "
                "random tensors outside the jitted function and pass them in."
            )
        builder = self.builder
        # Handlers (depth > 0) compute shapes with meta tensors and build constants eagerly.
        if builder.depth > 0 or func in _METADATA_READS:
            return func(*args, **kwargs)
        if _foldable(builder, func, args, kwargs):
            result = func(*args, **kwargs)
            builder.add_constants(result)
            return result
        return builder.torch_function(func, args, kwargs)


class tracing:  # noqa: N801 - a context manager, named like torch.no_grad
    """Context manager that makes ``builder`` the current tracer of this thread/context
    (and ``torch.compiler.is_compiling()`` True there: see ``symscalar/compiling.py``)."""

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder = builder
        self._mode = _TraceMode(builder)
        self._compiling = reporting_compiling()

    def __enter__(self) -> TraceBuilder:
        self._compiling.__enter__()
        self._token = current_tracer.set(self.builder)
        self.builder.grad_enabled_at_start = torch.is_grad_enabled()
        self.builder.inference_at_start = torch.is_inference_mode_enabled()
        # torch leaves TorchFunctionMode.__enter__/__exit__ unannotated.
        self._mode.__enter__()  # type: ignore[no-untyped-call]
        return self.builder

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)  # type: ignore[no-untyped-call]
        current_tracer.reset(self._token)
        self._compiling.__exit__(None, None, None)


# ----------------------------------------------------------------------------------------
# The tensor proxy
#
# A TensorProxy answers every public attribute of torch.Tensor (the table below is generated
# from dir(torch.Tensor), so a new torch attribute is never left to a default): static
# metadata truthfully, torch methods through the frontend table, and anything whose answer
# depends on values, storage or autograd state the trace cannot know with a named error.
#
# TensorProxy is not a torch.Tensor subclass, and does not fake __class__: faking it makes
# torch's C++ argument parser take the proxy for a real tensor when it matches a Scalar
# parameter: torch.where(c, proxy, 1.0) and torch.full((2,), proxy) crash the interpreter
# (measured on torch 2.10). User and library code still gets eager's answer from
# isinstance(proxy, torch.Tensor) and torch.is_tensor(proxy): True, through the isinstance
# wrapper installed while a trace runs (symscalar/compiling.py); symscalar's own modules get
# the builtin's answer (False), which is how they tell a proxy from a real tensor.


def _forward(name: str) -> Callable[..., Any]:
    func = getattr(torch.Tensor, name)

    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        return self._tracer.torch_function(func, (self, *args), kwargs)

    method.__name__ = name
    method._forwarded = True  # type: ignore[attr-defined]
    return method


def _functional_form(short: str) -> bool:
    """Whether the in-place method ``short`` (``add_``, ``masked_fill_``...) has an
    out-of-place form symscalar traces (``zero_``/``fill_``/``copy_`` are built from others)."""
    if short in ("zero_", "fill_", "copy_"):
        return True
    if not short.endswith("_") or short.endswith("__"):
        return False
    return getattr(torch.Tensor, short[:-1], None) in TORCH_FUNCTIONS


def _inplace_error(name: str, proxy: TensorProxy | None, detail: str = "") -> UnsupportedOperationError:
    what = f" on {proxy._describe()}{detail}" if proxy is not None else ""
    return UnsupportedOperationError(
        f"{name}{what}: symscalar traces an in-place operation only on a value computed in "
        "the function that is not a view and of which no view was taken, or on a buffer read "
        "from outside before any op reads it (eager would also update every alias of the "
        "tensor: views taken earlier, the tensor a view was taken of, the caller's tensor). "
        "Write the out-of-place form and use its result: `y = y + 1` instead of `y += 1` or "
        "`y.add_(1)`, `y = torch.where(mask, value, y)` instead of `y[mask] = value`, "
        "`F.relu(x)` instead of `F.relu(x, inplace=True)`."
    )


def _built_here_error(name: str, tensor: torch.Tensor) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        f"{name}: an in-place update of a tensor of shape {tuple(tensor.shape)} ({tensor.dtype}) that the traced "
        "function built from Python values alone (torch.zeros(...), torch.full(...), a clone of one), with a traced "
        "operand or after a traced op read it: symscalar builds such a tensor once, while tracing, and the compiled "
        "program reads it on every call, where eager builds a fresh one each call; updated in place, the update "
        "would carry over from call to call. Write the out-of-place form and use its result: `buf = buf + x` "
        "instead of `buf += x`, "
        "`buf = torch.where(mask, x, buf)` instead of `buf[mask] = x`, or build the tensor from a traced one "
        "(`x.new_zeros(...)`, `torch.zeros_like(x)`)."
    )


def _values_error(proxy: TensorProxy, what: str) -> DynamicValueError:
    return DynamicValueError(
        f"{what} of traced tensor {proxy._describe()}: a tensor's values are not known while "
        "tracing, so the result would be baked into the compiled program. Keep the value a "
        "tensor (torch.where(...) instead of `if`, symscalar.check(...) for a runtime check), "
        "or pass the number as an argument of the jitted function."
    )


def _unknowable(proxy: TensorProxy, name: str, why: str) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        f"torch.Tensor.{name} of traced tensor {proxy._describe()} is not available while tracing: {why}"
    )


# Attributes whose answer depends on memory layout, storage or autograd history that a trace
# does not have, with the reason given in the error.
_LAYOUT = (
    "the memory layout of traced values is chosen by the backend. "
    "Call .contiguous() if the code needs contiguous memory."
)
_STORAGE = "traced values have no storage while tracing."
_REFUSED = {
    "stride": _LAYOUT,
    "is_contiguous": _LAYOUT,
    "storage_offset": _LAYOUT,
    "dim_order": _LAYOUT,
    "is_non_overlapping_and_dense": _LAYOUT,
    "data_ptr": _STORAGE,
    "storage": _STORAGE,
    "untyped_storage": _STORAGE,
    "is_shared": _STORAGE,
    "is_pinned": _STORAGE,
    "is_set_to": _STORAGE,
    "is_inference": "whether a value is an inference tensor depends on the caller's tensors.",
    "backward": "call .backward() on the result of the jitted function, outside it.",
    "register_hook": (
        "hooks on traced values are not supported; register them on the jitted function's inputs or outputs."
    ),
    "register_post_accumulate_grad_hook": (
        "hooks on traced values are not supported; register them on the parameters outside the jitted function."
    ),
    "retain_grad": (
        "gradients of intermediate values of a jitted function are not kept; "
        "return the value and call retain_grad() on it."
    ),
    "grad_dtype": "gradient settings of traced values are not traced.",
    "__array__": "a traced tensor has no values to convert to numpy.",
    "__array_wrap__": "a traced tensor has no values to convert to numpy.",
    "__dlpack__": _STORAGE,
    "__dlpack_device__": _STORAGE,
    "__dlpack_c_exchange_api__": _STORAGE,
    "__deepcopy__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__reduce__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__reduce_ex__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__getstate__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__setstate__": "traced values cannot be copied or pickled; they exist only while tracing.",
}

_INPLACE_DUNDERS = (
    "__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __imatmul__ "
    "__iand__ __ior__ __ixor__ __ilshift__ __irshift__ __idiv__ __setitem__ __delitem__"
).split()

_FORWARDED_DUNDERS = (
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __div__ "
    "__rdiv__ __floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ "
    "__rmatmul__ __neg__ __pos__ __abs__ __invert__ __and__ __rand__ __or__ __ror__ __xor__ "
    "__rxor__ __lshift__ __rlshift__ __rshift__ __rrshift__ __lt__ __le__ __gt__ __ge__ "
    "__eq__ __ne__ __getitem__ __reversed__"
).split()

# Names of torch.Tensor that are Python object machinery rather than tensor attributes: a
# proxy answers them as any Python object does.
PYTHON_OBJECT_NAMES = frozenset(
    "__class__ __delattr__ __dict__ __dir__ __doc__ __getattribute__ __init__ __init_subclass__ "
    "__module__ __new__ __setattr__ __sizeof__ __subclasshook__ __weakref__ __annotations__ "
    "__torch_function__ __torch_dispatch__ __hash__ __repr__".split()
)


def _inplace_method(name: str) -> Callable[..., Any]:
    """A proxy's in-place method: traced when it can be (``TraceBuilder._update_in_place``),
    refused otherwise."""
    func = getattr(torch.Tensor, name)

    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        # an in-place method with a handler of its own (ops/random.py's fills) decides itself
        if func not in TORCH_FUNCTIONS and self._tracer._inplace_target(func, (self, *args)) is None:
            raise _inplace_error(f"torch.Tensor.{name}", self)
        return self._tracer.torch_function(func, (self, *args), kwargs)

    method.__name__ = name
    return method


def _raise_inplace(name: str) -> Callable[..., Any]:
    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        raise _inplace_error(f"torch.Tensor.{name}", self)

    method.__name__ = name
    return method


def _raise_refused(name: str) -> Callable[..., Any]:
    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        raise _unknowable(self, name, _REFUSED[name])

    method.__name__ = name
    return method


def _raise_values(name: str, what: str) -> Callable[..., Any]:
    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        raise _values_error(self, what)

    method.__name__ = name
    return method


_DEVICE_FLAGS = {f"is_{t}": t for t in "cpu cuda xpu mps ipu xla maia mtia vulkan hpu".split()}
_FALSE_FLAGS = "is_meta is_sparse is_sparse_csr is_nested is_quantized is_mkldnn".split()


class TensorProxy(Traced):
    """Stands for a tensor while tracing. Shapes, dtype and device are static; torch
    functions, methods and operators are recorded through the frontend table."""

    __slots__ = ("_kind", "_class", "_attributes")
    _tracer: TraceBuilder
    _var: TensorVar

    def __init__(
        self, tracer: TraceBuilder, var: TensorVar, kind: str = "computed", tensor_class: type = torch.Tensor
    ) -> None:
        self._tracer = tracer
        self._var = var
        self._kind = kind  # "input" (an argument), "captured" (read from outside) or "computed"
        # the class isinstance answers for (compiling.py): an argument's own (a Parameter)
        self._class = tensor_class
        # the Python attributes set on the argument's tensor object (`p._no_weight_decay = True`,
        # nn.Buffer's `_is_buffer`): read on the proxy, they raise (see __getattr__)
        self._attributes: dict[str, str] = {}  # name -> the argument's description

    def __repr__(self) -> str:
        return f"TensorProxy({self._name}: {self._var.type_str()})"

    def _describe(self) -> str:
        return f"{self._name} ({self._var.type_str()}, {self._kind})"

    __hash__ = object.__hash__  # torch.Tensor hashes by identity too

    @classmethod
    def _outside_trace(cls) -> Exception:
        return TraceCheckError("a traced tensor was used outside its trace")

    # -- static metadata -------------------------------------------------------------------
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
    def layout(self) -> torch.layout:
        return torch.strided

    @property
    def itemsize(self) -> int:
        return self._var.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._var.dtype.itemsize

    @property
    def names(self) -> tuple[None, ...]:
        return (None,) * self._var.ndim

    @property
    def name(self) -> None:
        return None

    @property
    def volatile(self) -> bool:
        return False

    @property
    def _has_symbolic_sizes_strides(self) -> bool:
        return False

    __array_priority__ = 1000

    def __getattr__(self, name: str) -> Any:
        if name in _DEVICE_FLAGS:
            return self._var.device.type == _DEVICE_FLAGS[name]
        if name in _FALSE_FLAGS:
            return False  # traced values are dense, strided, unquantized tensors
        kind = _METHOD_KINDS.get(name)
        if kind == "method":
            return pytypes.MethodType(_FORWARDS[name], self)
        if kind == "inplace":
            return pytypes.MethodType(_inplace_method(name), self)
        if name in _REFUSED:
            raise _unknowable(self, name, _REFUSED[name])
        if name in self._attributes:  # getattr(x, name, default)/hasattr would silently say "absent"
            raise UnsupportedOperationError(
                f"{self._attributes[name]} ({self._describe()}) has {name!r}, a Python attribute set on "
                "its tensor object, which a traced tensor does not carry (getattr(x, name, default), hasattr and "
                "isinstance(x, nn.Buffer) would silently take the other answer than eager). Pass its value "
                "as an argument of its own (static where it picks a code path), or read it outside the "
                "jitted function."
            )
        if self._kind == "input" and not called_from_symscalar(sys._getframe(1)):
            self._tracer.absent_attributes.setdefault(self._var, set()).add(name)
        if name.startswith("_"):
            raise AttributeError(
                f"'TensorProxy' (a traced torch.Tensor) has no attribute {name!r}: private "
                "tensor internals do not exist while tracing"
            )
        if hasattr(torch.Tensor, name):
            raise UnsupportedOperationError(f"torch.Tensor.{name} is not available on a traced tensor")
        raise AttributeError(f"'TensorProxy' (a traced torch.Tensor) has no attribute {name!r}")

    def dim(self) -> int:
        return self._var.ndim

    def ndimension(self) -> int:
        return self._var.ndim

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self.shape
        return self._var.shape[dim]

    def numel(self) -> int:
        return math.prod(self._var.shape)

    nelement = numel

    def is_floating_point(self) -> bool:
        return self._var.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._var.dtype.is_complex

    def is_signed(self) -> bool:
        return self._var.dtype.is_signed

    def element_size(self) -> int:
        return self._var.dtype.itemsize

    def get_device(self) -> int:
        device = self._var.device
        return -1 if device.type == "cpu" else (device.index or 0)

    def is_same_size(self, other: Any) -> bool:
        return tuple(self.shape) == tuple(other.shape)

    def has_names(self) -> bool:
        return False

    def is_conj(self) -> bool:
        if self._var.dtype.is_complex:
            raise _unknowable(
                self, "is_conj", "whether a complex input is a conjugate view depends on the caller's tensor."
            )
        return False

    def is_neg(self) -> bool:
        if self._var.dtype.is_complex:
            raise _unknowable(
                self, "is_neg", "whether a complex input is a negative view depends on the caller's tensor."
            )
        return False

    def __len__(self) -> int:
        if not self._var.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._var.shape[0]

    def __iter__(self) -> Any:
        if not self._var.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self._tracer.torch_function(torch.Tensor.unbind, (self, 0), {}))

    # -- autograd state --------------------------------------------------------------------
    def _requires_grad(self) -> bool:
        return self._tracer.requires_grad.get(self._var, False)

    def _set_requires_grad(self, value: bool) -> None:
        raise _inplace_error("torch.Tensor.requires_grad = ...", self)

    requires_grad = property(_requires_grad, _set_requires_grad)

    @property
    def is_leaf(self) -> bool:
        if not self.requires_grad:
            return True  # as in eager: a tensor that does not require grad is a leaf
        if self._kind == "computed":
            return False
        if self._kind == "captured":
            return self._captured().is_leaf
        raise _unknowable(
            self,
            "is_leaf",
            "whether an input that requires grad is a leaf depends on the caller's tensor, "
            "which the cache key does not hold.",
        )

    @property
    def grad_fn(self) -> Any:
        if not self.requires_grad or (self._kind == "captured" and self._captured().grad_fn is None):
            return None
        raise _unknowable(
            self,
            "grad_fn",
            "autograd nodes do not exist while tracing; the jitted function's outputs get one when it runs.",
        )

    @property
    def output_nr(self) -> int:
        if not self.requires_grad:
            return 0
        if self._kind == "captured":
            return self._captured().output_nr
        raise _unknowable(self, "output_nr", "autograd nodes do not exist while tracing.")

    @property
    def retains_grad(self) -> bool:
        if self._kind == "captured":
            return self._captured().retains_grad
        if self._kind == "computed" or not self.requires_grad:
            return False
        raise _unknowable(self, "retains_grad", "it depends on the caller's tensor.")

    @property
    def grad(self) -> Any:
        if self._kind == "computed":
            return None  # eager: only leaves accumulate .grad
        raise _unknowable(
            self,
            "grad",
            "it is the gradient accumulated outside the jitted function, whose value the compiled "
            "program cannot read. Pass it as an argument instead.",
        )

    @property
    def data(self) -> Any:
        raise _unknowable(
            self,
            "data",
            "`.data` is an alias of the storage that autograd does not track, and writes through it "
            "would bypass the trace. Use .detach() for the value without a gradient.",
        )

    @property
    def real(self) -> Any:
        if not self._var.dtype.is_complex:
            return self  # eager returns the tensor itself
        return self._tracer.torch_function(torch.real, (self,), {})

    @property
    def imag(self) -> Any:
        if not self._var.dtype.is_complex:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return self._tracer.torch_function(torch.imag, (self,), {})

    def _captured(self) -> torch.Tensor:
        return next(t for var, t in self._tracer.captured.values() if var is self._var)

    # -- values: not known while tracing ---------------------------------------------------
    def __bool__(self) -> bool:
        raise _values_error(self, "bool()")

    __nonzero__ = __bool__
    __int__ = _raise_values("__int__", "int()")
    __long__ = _raise_values("__long__", "int()")
    __float__ = _raise_values("__float__", "float()")
    __complex__ = _raise_values("__complex__", "complex()")
    __index__ = _raise_values("__index__", "__index__() (use as an index or a size)")
    __contains__ = _raise_values("__contains__", "`in`")
    __str__ = _raise_values("__str__", "str()")
    __format__ = _raise_values("__format__", "format() / an f-string")
    item = _raise_values("item", ".item()")
    tolist = _raise_values("tolist", ".tolist()")
    numpy = _raise_values("numpy", ".numpy()")

    # -- views -----------------------------------------------------------------------------
    @property
    def T(self) -> Any:  # noqa: N802 - torch's name
        return self._tracer.torch_function(torch.Tensor.permute, (self, *reversed(range(self.ndim))), {})

    @property
    def mT(self) -> Any:  # noqa: N802 - torch's name
        return self._tracer.torch_function(torch.Tensor.transpose, (self, -2, -1), {})

    @property
    def H(self) -> Any:  # noqa: N802 - torch's name
        if self.ndim > 2:
            raise RuntimeError("tensor.H is only supported on matrices (2-D tensors).")
        t = self.T
        return t if not self._var.dtype.is_complex else self._tracer.torch_function(torch.Tensor.conj, (t,), {})

    @property
    def mH(self) -> Any:  # noqa: N802 - torch's name
        t = self.mT
        return t if not self._var.dtype.is_complex else self._tracer.torch_function(torch.Tensor.conj, (t,), {})

    for _attr in _FORWARDED_DUNDERS:
        locals()[_attr] = _forward(_attr)
    for _attr in _INPLACE_DUNDERS:
        locals()[_attr] = _raise_inplace(_attr)
    # x[i] = v: traced where an in-place update can be (ops/indexing.py)
    locals()["__setitem__"] = _forward("__setitem__")
    # x += y is x.add_(y): traced where an in-place method can be
    for _attr, _method in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"), ("__itruediv__", "div_")):
        locals()[_attr] = _inplace_method(_method)
    for _attr in [n for n in _REFUSED if n.startswith("__")]:
        _refuse = _raise_refused(_attr)
        locals()[_attr] = _refuse if callable(getattr(torch.Tensor, _attr)) else property(_refuse)
    del _refuse
    del _attr


def _method_kinds() -> dict[str, str]:
    """Every public method of torch.Tensor that TensorProxy does not define itself: in-place
    (refused) or a torch method traced through the frontend table."""
    kinds = {}
    for name in dir(torch.Tensor):
        if name.startswith("_") or name in TensorProxy.__dict__ or name in _REFUSED:
            continue
        if not callable(inspect.getattr_static(torch.Tensor, name)):
            continue
        kinds[name] = "inplace" if name.endswith("_") else "method"
    return kinds


_METHOD_KINDS = _method_kinds()
_FORWARDS = {name: _forward(name) for name, kind in _METHOD_KINDS.items() if kind == "method"}
answer_isinstance_for(TensorProxy)  # isinstance(proxy, torch.Tensor) in user code: compiling.py


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
OPS: Registry[str, OpSignature] = Registry("op")
# torch callable -> handler, consulted by __torch_function__.
TORCH_FUNCTIONS: Registry[Any, Callable[..., Any]] = Registry(
    "the symscalar handler of", lambda func: public_name(func)
)

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
    positional = sum(1 for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return sig, OpSignature(name, params, static, positional)


def _checked(fn: F, name: str) -> F:
    """Wrap ``fn`` so that a dynamic value in a static parameter raises at trace time."""
    sig, contract = _contract(fn, name)
    OPS.register(name, contract)
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
                    raise StaticValueRequiredError(static_message(name, param, value))
        return fn(*args, **kwargs)

    return typing.cast(F, wrapper)


def static_message(op: str, param: str, value: Any) -> str:
    """The error message for dynamic ``value`` passed to static parameter ``param`` of ``op``:
    it names the value, where it came from, and the two fixes."""
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
    return [v for v in leaves(value) if isinstance(v, NumberProxy)]


@typing.overload
def defop(fn: F, /) -> F: ...


@typing.overload
def defop(*, torch: Sequence[Any]) -> Callable[[F], F]: ...


def defop(fn: F | None = None, /, *, torch: Sequence[Any] = ()) -> F | Callable[[F], F]:
    """Register a user-facing op of ``symscalar.ops``; its annotations are its contract.

    ``@defop(torch=(torch.exp, torch.Tensor.exp))`` also makes it the handler of those torch
    spellings: for an op whose signature is exactly theirs (parameter names included), so
    that a pure passthrough is not written twice. Where a spelling behaves differently,
    register its own handler with ``@implements``.
    """

    def register(fn: F) -> F:
        name = f"symscalar.ops.{fn.__name__}"
        OPS.require_new(name)
        _require_new_spellings(torch)
        op = _checked(fn, name)
        _handle(fn, torch)
        return op

    return register if fn is None else register(fn)


def implements(*torch_functions: Any) -> Callable[[F], F]:
    """Register the handler of one or more torch callables (``torch.sum``,
    ``torch.Tensor.sum``, ``torch.nn.functional.softmax``...) for traced values."""

    def register(handler: F) -> F:
        return _handle(handler, torch_functions)

    return register


def _handle(handler: F, torch_functions: Sequence[Any]) -> F:
    """Make ``handler`` the handler of each torch callable: one checked wrapper per spelling,
    so that an error names the spelling the user wrote (``torch.Tensor.var``, not
    ``torch.var``). ``dict.fromkeys``: aliases such as Tensor.__neg__ / Tensor.neg are the
    same object. Returns the first wrapper (or ``handler`` if there are no spellings). Nothing
    is registered unless every spelling is new."""
    _require_new_spellings(torch_functions)
    by_name: dict[str, F] = {}
    for func in dict.fromkeys(torch_functions):
        name = public_name(func)
        if name not in by_name:
            by_name[name] = _checked(handler, name)
        TORCH_FUNCTIONS.register(func, by_name[name])
    return next(iter(by_name.values()), handler)


def _require_new_spellings(torch_functions: Sequence[Any]) -> None:
    for func in torch_functions:
        TORCH_FUNCTIONS.require_new(func)
        OPS.require_new(public_name(func))


def supported_torch_functions() -> list[str]:
    """Names of the torch functions, methods and operators symscalar can trace."""
    return sorted({public_name(f) for f in TORCH_FUNCTIONS})


_MOE_FIX = (
    " For mixture-of-experts routing, compute the experts for every token-expert pair by "
    "gathering each token's expert weights (transformers: model.set_experts_implementation("
    "'batched_mm')) instead of grouping tokens by expert."
)


def data_dependent_shape_error(name: str, what: str) -> UnsupportedOperationError:
    """The refusal of an op whose output *shape* depends on tensor values (``nonzero``,
    ``x[mask]``, one-argument ``torch.where``): a trace has one shape per value, and
    symscalar does not specialize on data."""
    return UnsupportedOperationError(
        f"{name} on traced values: its output's shape depends on {what}, which is not known "
        "while tracing (a trace never depends on tensor values). Write it with a fixed shape: "
        "torch.where(mask, x, other), masked_fill, or multiplying by the mask instead of "
        "selecting, scatter/index_add with every index instead of the selected ones; or run "
        "this part outside the jitted function." + _MOE_FIX
    )


_DATA_DEPENDENT: dict[Any, str] = {
    **dict.fromkeys(
        [torch.nonzero, torch.Tensor.nonzero, torch.argwhere, torch.Tensor.argwhere], "how many elements are nonzero"
    ),
    **dict.fromkeys([torch.masked_select, torch.Tensor.masked_select], "how many mask elements are True"),
    **dict.fromkeys(
        [
            torch.unique,
            torch.functional.unique,
            torch.Tensor.unique,
            torch.unique_consecutive,
            torch.functional.unique_consecutive,
            torch.Tensor.unique_consecutive,
        ],
        "how many distinct values there are",
    ),
    **dict.fromkeys([torch.bincount, torch.Tensor.bincount], "the largest value"),
}


def _unsupported(func: Any) -> UnsupportedOperationError:
    name = public_name(func)
    if func in _DATA_DEPENDENT:
        return data_dependent_shape_error(name, _DATA_DEPENDENT[func])
    if func in (torch.histc, torch.Tensor.histc):  # transformers' grouped_mm MoE sizes its groups with it
        return UnsupportedOperationError(f"{name} is not supported on traced values by symscalar." + _MOE_FIX)
    supported = sorted({public_name(f) for f in TORCH_FUNCTIONS})
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
