"""Tracing user code: ``TraceBuilder`` records equations while a function runs on proxies.

``tracing(builder)`` makes a builder the current tracer and installs ``_TraceMode``, the torch
function mode that records every torch call on traced values (or on tensors read from outside)
and runs the rest (metadata reads, constants built from Python values) eagerly. The builder
owns the concerns of recording user code: captured tensors, grad regions, in-place writes,
the RNG seed, state writes, naming, autocast's casts and the checks of its operands.
"""

from __future__ import annotations

import types as pytypes
import weakref
from collections.abc import Callable
from typing import Any

import torch

__all__ = [
    "TraceBuilder",
    "check_tensor_class",
    "is_trace_constant",
    "stop_gradient_p",
    "tracing",
]

try:
    import numpy as np
except ImportError:  # torch runs without numpy (not a dependency); then no numpy scalars arrive
    np = None  # type: ignore[assignment]

from symscalar import autocast
from symscalar.compiling import reporting_compiling
from symscalar.errors import DynamicValueError, UnsupportedOperationError
from symscalar.frontend import (
    _MAY_RETURN_INPUT,
    _METADATA_READS,
    _RANDOM_FUNCTIONS,
    _TENSOR_FROM_DATA,
    TORCH_FUNCTIONS,
    _functional_form,
    public_name,
)
from symscalar.nvfuser_lowering import register_nvfuser
from symscalar.proxy import _INPLACE_DUNDERS, TensorProxy, _inplace_error
from symscalar.recorder import Recorder, _proxy_attribute
from symscalar.trace import (
    Atom,
    Eqn,
    Primitive,
    ScalarVar,
    TensorVar,
    Var,
    leaves,
    register_vjp,
)
from symscalar.types import DynamicInt, NumberProxy, current_tracer

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


class TraceBuilder(Recorder):
    """Records equations while a Python function runs on proxies: a ``Recorder`` that also
    traces what user code does besides calling ops (captured tensors, grad regions, in-place
    writes, the RNG seed, state writes, autocast, the checks of torch calls)."""

    def __init__(self, name: str = "f") -> None:
        super().__init__(name)
        # The torch function that first read each captured tensor (by id), for messages.
        self.read_by: dict[int, Any] = {}
        self.reading: Any = None
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

    # -- inputs and proxies -------------------------------------------------------------

    def capture(self, tensor: torch.Tensor) -> TensorProxy:
        """``Recorder.capture``, checking the tensor's class and remembering, for messages and
        in-place rules, which torch call read it and its storage; a tensor first read inside a
        handler is a constant."""
        proxy = self._captured_proxies.get(id(tensor))
        if proxy is None:
            read_by = f", read by {public_name(self.reading)}," if self.reading is not None else ""
            check_tensor_class(
                tensor, f"a tensor the traced function reads from outside (a parameter, buffer or global){read_by}"
            )
            proxy = super().capture(tensor)
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

    # -- the recorder's seams -------------------------------------------------------------

    def _operands(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        if self._no_grad_values and torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
            atoms = tuple([self._cut_no_grad(a) for a in atoms])
        return atoms

    def _results(self, prim: Primitive[Any], atoms: tuple[Atom, ...], outs: tuple[Var, ...]) -> tuple[Var, ...]:
        return self._propagate_requires_grad(prim, atoms, outs)

    def _outputs(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        if self.grad_inside:  # run with autograd: what was computed without grad carries none
            atoms = tuple(self._cut_no_grad(a) for a in atoms)
        return atoms

    def _written(self) -> list[TensorVar]:
        return [self.captured[id(t)][0] for t, _ in self.write_backs if id(t) in self.captured]

    def _extra_inputs(self) -> tuple[Var, ...]:
        return (self.rng_seed._var,) if self.rng_seed is not None else ()

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


def _tensor_proxies(tree: Any) -> list[TensorProxy]:
    return [leaf for leaf in leaves(tree) if isinstance(leaf, TensorProxy)]


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


def _tensor_operands(value: Any) -> list[Any]:
    """The tensors (real or traced) and dynamic numbers among ``value``'s leaves: a torch call
    with any of them is traced."""
    return [v for v in leaves(value) if isinstance(v, (torch.Tensor, TensorProxy, NumberProxy))]


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


def _find_proxies(value: Any) -> list[NumberProxy]:
    return [v for v in leaves(value) if isinstance(v, NumberProxy)]
