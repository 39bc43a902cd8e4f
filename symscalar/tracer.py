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
from symscalar.grad_regions import GradRegions
from symscalar.inplace import InPlaceWrites
from symscalar.proxy import _INPLACE_DUNDERS, TensorProxy, _inplace_error
from symscalar.recorder import Recorder, _proxy_attribute
from symscalar.trace import (
    Atom,
    Primitive,
    ScalarVar,
    TensorVar,
    Var,
    leaves,
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


class RngStream:
    """The program's RNG seed, an int input created by the first random op (see
    ops/random.py); the caller supplies a fresh one on every call. It is the last input of
    the built trace, after the captured tensors."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self.seed: NumberProxy | None = None
        self._offsets = 0

    def state(self) -> tuple[NumberProxy, int]:
        """The program's RNG seed and a fresh static offset: one stream per random op."""
        recorder = self._recorder
        if self.seed is None:
            var = ScalarVar(int)
            recorder._created(var)
            recorder.roots[var] = frozenset(["the RNG seed of the program"])
            self.seed = DynamicInt(recorder, var, "the RNG seed of the program")
        offset = self._offsets
        self._offsets += 1
        return self.seed, offset


class TraceBuilder(Recorder):
    """Records equations while a Python function runs on proxies: a ``Recorder`` that also
    traces what user code does besides calling ops (captured tensors, grad regions, in-place
    writes, the RNG seed, state writes, autocast, the checks of torch calls)."""

    grad: GradRegions  # (a plain Recorder's makes no leaves)
    checks_size_guards = True  # its size guards are checked by its cache entry (size_guards.py)

    def __init__(self, name: str = "f") -> None:
        super().__init__(name)
        # The torch function that first read each captured tensor (by id), for messages.
        self.read_by: dict[int, Any] = {}
        self.reading: Any = None
        # Constants: tensors the traced function built from Python values alone (by id; the
        # dict keeps them alive). Torch calls on constants only are folded (run eagerly).
        self.constants: dict[int, torch.Tensor] = {}
        # Storages of captured tensors: an in-place op on a constant sharing one is traced.
        self._captured_storages: set[int] = set()
        # The concerns of user code, one collaborator each.
        self.grad = GradRegions(self)  # grad mode inside the function: requires_grad, stop_gradient
        self.inplace = InPlaceWrites(self)  # in-place updates and state write-backs
        self.rng = RngStream(self)  # the program's RNG seed and one offset per random op
        self._autocast_cast = autocast.CastCache(self._cast)  # eager's autocast weight cache

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
        if id(tensor) in self.inplace.updated_leaves and torch.is_grad_enabled():
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

    def torch_function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Trace ``func(*args, **kwargs)`` through its handler. Captured tensors among the
        operands become proxies first, so that a handler never computes eagerly on them."""
        if self.depth == 0:
            self.reading = func  # names the op in the message about a captured tensor it reads
        handler = TORCH_FUNCTIONS.get(func)
        if handler is None:  # an in-place method is one without a handler of its own
            target = self._inplace_target(func, args)
            if target is not None:
                return self.inplace.update_method(func, target, args, kwargs)
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
            self.inplace.aliased.update(p._var for p in _tensor_proxies((args, kwargs, result)))
        return result

    def _cast(self, proxy: TensorProxy, dtype: torch.dtype) -> Any:
        # Autocast's cast of an operand, through CastCache: eager reuses its cast of a parameter
        # within an autocast region, and every use's gradient then sums in that dtype.
        return self.torch_function(torch.Tensor.to, (proxy, dtype), {})

    # -- the recorder's seams -------------------------------------------------------------

    def _operands(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        if self.inplace.stale:
            self.inplace.check_reads(atoms)
        return self.grad.operands(atoms)

    def _results(self, prim: Primitive[Any], atoms: tuple[Atom, ...], outs: tuple[Var, ...]) -> tuple[Var, ...]:
        outs = self.grad.propagate_requires_grad(prim, atoms, outs)
        if not self.grad.inference_at_start and torch.is_inference_mode_enabled():
            self.grad.inference_values.update(v for v in outs if isinstance(v, TensorVar))
        return outs

    def _outputs(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        if self.inplace.stale:
            self.inplace.check_reads(atoms)
        return self.grad.outputs(atoms)

    def _written(self) -> list[TensorVar]:
        return [self.captured[id(t)][0] for t, _ in self.write_backs if id(t) in self.captured]

    def _extra_inputs(self) -> tuple[Var, ...]:
        return (self.rng_seed._var,) if self.rng_seed is not None else ()

    # -- the collaborators' answers, under the names the rest of symscalar uses ------------

    @property
    def grad_inside(self) -> bool:
        return self.grad.grad_inside

    @property
    def write_backs(self) -> list[tuple[torch.Tensor, Any]]:
        return self.inplace.write_backs

    @property
    def rng_seed(self) -> NumberProxy | None:
        return self.rng.seed

    def rng_state(self) -> tuple[NumberProxy, int]:
        return self.rng.state()

    def _inplace_target(self, func: Any, args: tuple[Any, ...]) -> TensorProxy | None:
        return self.inplace.target(func, args)

    def update_in_place(self, name: str, target: Any, compute: Callable[[TensorProxy], Any]) -> Any:
        return self.inplace.update_in_place(name, target, compute)

    def state_tensor(self, value: Any) -> torch.Tensor | None:
        return self.inplace.state_tensor(value)

    def assign_state(self, target: torch.Tensor, value: TensorProxy) -> None:
        self.inplace.assign_state(target, value)

    def write_back(self, target: torch.Tensor, value: Any) -> None:
        self.inplace.write_back(target, value)

    # -- in-place updates of state read from outside (buffers) --------------------------------

    # -- result ---------------------------------------------------------------------------


def _tensor_proxies(tree: Any) -> list[TensorProxy]:
    return [leaf for leaf in leaves(tree) if isinstance(leaf, TensorProxy)]


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
                self.builder.inplace.fill_constant(func, args)  # `torch.empty(n).bernoulli_(p)`
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
        self.builder.grad.start()
        # torch leaves TorchFunctionMode.__enter__/__exit__ unannotated.
        self._mode.__enter__()  # type: ignore[no-untyped-call]
        return self.builder

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)  # type: ignore[no-untyped-call]
        current_tracer.reset(self._token)
        self._compiling.__exit__(None, None, None)


def _find_proxies(value: Any) -> list[NumberProxy]:
    return [v for v in leaves(value) if isinstance(v, NumberProxy)]
