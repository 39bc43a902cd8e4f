"""In-place writes of a traced function, functionalized with eager's semantics or refused.

``x.add_(1)``, ``x[i] = v``, ``F.relu(x, inplace=True)``, ``buf.copy_(y)``: the trace records
the out-of-place op, and ``InPlaceWrites`` makes every reference see the new value, as eager's
would: a computed value's proxy stands for the new value; state read from outside (a buffer,
``num_batches_tracked``) is written back after every call (``write_backs``). An update that an
alias would see differently (a view, the caller's tensor, a constant built at trace time) is
refused with the out-of-place spelling to use instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import torch

from symscalar import size_guards
from symscalar.errors import UnsupportedOperationError
from symscalar.frontend import TORCH_FUNCTIONS, _functional_form, public_name
from symscalar.proxy import TensorProxy, TensorTracer, _inplace_error
from symscalar.trace import Eqn, TensorVar, Var

__all__ = ["InPlaceWrites"]

# torch.empty itself (``size_ops`` routes the name through a size-aware wrapper while tracing)
_EMPTY = torch.empty


class _Builder(TensorTracer, Protocol):
    """What ``InPlaceWrites`` needs of the ``tracer.TraceBuilder`` it serves (which creates
    the proxies it updates)."""

    eqns: list[Eqn]
    constants: dict[int, torch.Tensor]
    captured: dict[int, tuple[TensorVar, torch.Tensor]]
    _captured_proxies: dict[int, TensorProxy]

    def is_constant(self, tensor: torch.Tensor) -> bool: ...


class InPlaceWrites:
    """The in-place concern of one trace."""

    def __init__(self, builder: _Builder) -> None:
        self._builder = builder
        # State the traced function writes, in order: (real tensor outside the trace, traced
        # value it must hold after each call). jit makes each value an output of the program
        # and copies it into the real tensor after every call (functionalized state writes:
        # running statistics, an EMA, a KV cache).
        self.write_backs: list[tuple[torch.Tensor, Any]] = []
        # Traced values that are the current value of state updated in place, and its tensor.
        self._state_of: dict[TensorVar, torch.Tensor] = {}
        # Leaves that require grad updated in place under no_grad (a manual SGD step), by id.
        self.updated_leaves: set[int] = set()
        # values that may share storage with another in eager though not in the trace (the
        # operands and result of a _MAY_RETURN_INPUT call): never updated in place
        self.aliased: set[Var] = set()
        # Constants a random fill overwrote (``fill_constant``), kept alive by id.
        self.refilled: dict[int, torch.Tensor] = {}
        # Arguments' tensors held by a state object (a KV cache, see _jit/mutable.py), by proxy
        # id: updated in place like computed values; jit writes the new value back after the call.
        self.mutable_inputs: set[int] = set()
        # whether the traced code has changed a state object passed to it so far (set by jit)
        self.state_changed: Callable[[], bool] = _unchanged
        # values an in-place update of a view of them (or of a tensor they are a view of) changed
        # in eager, where the trace keeps their old value: reading them later is refused (see
        # ``_update_through_views``), by var, with the name of the update
        self.stale: dict[Var, str] = {}

    def target(self, func: Any, args: tuple[Any, ...]) -> TensorProxy | None:
        """The traced value an in-place method updates, when the update can be traced with
        eager's semantics (see ``update_method``); else None (the method is refused)."""
        if not args or func in TORCH_FUNCTIONS or not _functional_form(public_name(func).rsplit(".", 1)[-1]):
            return None
        return self.updatable(args[0], public_name(func))

    def updatable(self, target: Any, name: str) -> TensorProxy | None:
        """``target`` as a proxy whose value an in-place update ``name`` may replace, or None."""
        tensor: torch.Tensor | None
        if isinstance(target, TensorProxy) and target._tracer is self._builder:
            if target._kind == "input" and target._var not in self._state_of and id(target) not in self.mutable_inputs:
                return None  # an argument of the jitted function: the caller's tensor
            tensor = target._captured() if target._kind == "captured" else None
        elif isinstance(target, torch.Tensor):
            tensor = target
        else:
            return None
        if tensor is not None and id(tensor) in self._builder.constants:
            raise _built_here_error(name, tensor)
        proxy: TensorProxy = target if tensor is None else self._builder.capture(tensor)  # a capture: state, a buffer
        # Eager's update also reaches every alias: a view taken of the target, or the value the
        # target is a view of. Functionalized, either would keep the old value, so a computed
        # value is updated only where no op that may alias (``Primitive.may_alias``) made it
        # or read it; other reads (``s = x.sum(); x /= s``) made new tensors from the old
        # value, as eager's did. State read from outside is updated only before any read: a
        # tensor built at trace time is a constant the program reads on every call.
        var = proxy._var
        computed = (proxy._kind == "computed" or id(proxy) in self.mutable_inputs) and var not in self._state_of
        if var in self.aliased:
            return None
        for eqn in self._builder.eqns:
            if (var in eqn.args and (eqn.prim.may_alias or not computed)) or (eqn.prim.may_alias and var in eqn.outs):
                held = id(proxy) in self.mutable_inputs  # a state object's tensor: written back after the call
                return proxy if computed and self._update_through_views(var, name, held) else None
        return proxy

    def fill_constant(self, func: Any, args: tuple[Any, ...]) -> None:
        """Before a random fill ``func`` (``Tensor.bernoulli_``, ``uniform_``, ...) of a constant
        (``torch.empty(shape, dtype=x.dtype).bernoulli_(p)``, torchvision's ``StochasticDepth``):
        eager fills a fresh tensor on every call, so the constant becomes a value the program
        computes (zeros of its shape, dtype and device, which the fill then overwrites, drawing
        from the program's RNG) and every later reference to it reads that value. Only where
        no traced op has read it and nothing shares its storage (a view taken of it, folded at
        trace time, would keep the old values): otherwise the fill is refused as before."""
        builder = self._builder
        tensor = args[0] if args else None
        name = public_name(func).rsplit(".", 1)[-1]
        if not (name.endswith("_") and type(tensor) is torch.Tensor and builder.is_constant(tensor)):
            return
        storage = _storage_of(tensor)
        others = [t for t in builder.constants.values() if t is not tensor] + [t for _, t in builder.captured.values()]
        if storage == -1 or any(_storage_of(t) == storage for t in others):
            return
        fresh = builder.torch_function(_EMPTY, (tuple(tensor.shape),), {"dtype": tensor.dtype, "device": tensor.device})
        del builder.constants[id(tensor)]
        self.refilled[id(tensor)] = tensor
        builder._captured_proxies[id(tensor)] = fresh

    def refilled_value(self, value: Any) -> Any:
        """The traced value a constant overwritten by a random fill (``fill_constant``) holds
        now, or ``value`` itself."""
        if type(value) is torch.Tensor and self.refilled.get(id(value)) is value:
            return self._builder._captured_proxies[id(value)]
        return value

    def _update_through_views(self, var: Var, name: str, held: bool = False) -> bool:
        """Whether ``var``, a computed value that is a view or has views, may be updated in
        place: every value it may share storage with (its bases and their views, through the
        ops that may alias) is computed in this trace, not state or an input. Those keep
        their old value in the trace, where eager's update reached them: they become stale,
        and reading one later is refused (``check_reads``). EfficientNet's
        ``nn.Dropout(inplace=True)`` on ``torch.flatten(pooled, 1)``: the pooled tensor is
        never read again. ``held``: ``var`` is a state object's tensor (a KV cache layer's keys),
        an input whose new value is written back into the caller's tensor after the call, so
        only its views in the trace become stale (a static sliding-window layer rolls its keys,
        ``torch.roll`` traced as slices and a ``cat``, then copies the result back in)."""
        eqns = [e for e in self._builder.eqns if e.prim.may_alias]
        group, frontier = {var}, [var]
        while frontier:
            v = frontier.pop()
            for eqn in eqns:
                linked = [*eqn.args, *eqn.outs]
                if v in linked:
                    new = [a for a in linked if isinstance(a, TensorVar) and a not in group]
                    group.update(new)
                    frontier.extend(new)
        produced = {o for e in self._builder.eqns for o in e.outs}
        if any(
            (v not in produced and not (held and v is var)) or v in self._state_of or v in self.aliased for v in group
        ):
            return False
        self.stale.update(dict.fromkeys(group - {var}, name))
        return True

    def check_reads(self, atoms: tuple[Any, ...]) -> None:
        """Refuse reading a value that an in-place update through a view changed in eager."""
        for atom in atoms:
            if isinstance(atom, TensorVar) and atom in self.stale:
                raise UnsupportedOperationError(
                    f"a tensor read after an in-place update ({self.stale[atom]}) of a view of it (or of a tensor "
                    "it is a view of): eager would read the updated values, which symscalar does not trace through "
                    "views. Write the out-of-place form and use its result (`y = F.dropout(y, p)` instead of "
                    "`F.dropout(y, p, inplace=True)`), or read the tensor before the update."
                )

    def update_method(self, func: Any, target: TensorProxy, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Functionalize ``target.<op>_(...)``: trace the out-of-place op (see ``assign_update``)."""
        short = public_name(func).rsplit(".", 1)[-1]
        rest = args[1:]

        def compute(target: TensorProxy) -> Any:
            if short == "zero_":
                return self._builder.torch_function(torch.zeros_like, (target,), {})
            if short == "fill_":
                return self._builder.torch_function(torch.full_like, (target, *rest), kwargs)
            if short == "copy_":
                source = self._builder.torch_function(torch.Tensor.to, (rest[0], target.dtype), {})
                return self._builder.torch_function(torch.Tensor.expand, (source, tuple(target.shape)), {})
            return self._builder.torch_function(getattr(torch.Tensor, short[:-1]), (target, *rest), kwargs)

        return self.assign_update(f"torch.Tensor.{short}", target, compute)

    def update_in_place(self, name: str, target: Any, compute: Callable[[TensorProxy], Any]) -> Any:
        """The in-place spelling ``name`` of a handler (``F.relu(x, inplace=True)``,
        ``x[i] = v``) whose new value ``compute(target)`` traces out of place: traced under the
        rules of the in-place methods (``updatable``), so every reference to ``target``
        sees the update as in eager, or refused with an error naming ``name``."""
        proxy = self.updatable(target, name)
        if proxy is None:
            raise _inplace_error(name, target if isinstance(target, TensorProxy) else None)
        return self.assign_update(name, proxy, compute)

    def assign_update(self, name: str, target: TensorProxy, compute: Callable[[TensorProxy], Any]) -> Any:
        """``target`` holds ``compute(target)`` from now on (cast back to the target's dtype,
        same shape, as eager's in-place op). A computed value's proxy then stands for the new
        value (every Python reference to it sees the update, as eager's); state read from
        outside (``num_batches_tracked.add_(1)``) is written back after every call, and later
        reads of it in this trace see the new value."""
        state = self.state_tensor(target)
        if target._var in self._builder.grad.leaves and torch.is_grad_enabled():
            raise RuntimeError(
                f"a leaf Variable that requires grad is being used in an in-place operation ({name} on "
                f"{target._describe()}, made a leaf by requires_grad_()); eager torch refuses this too."
            )
        if state is not None and state.requires_grad and state.is_leaf:
            if torch.is_grad_enabled():
                raise RuntimeError(
                    f"a leaf Variable that requires grad is being used in an in-place operation "
                    f"({name} on a tensor of shape {tuple(state.shape)} read from outside, "
                    "e.g. a parameter); eager torch refuses this too. Fix: do the update under "
                    "torch.no_grad() (as an optimizer step does), or outside the jitted function."
                )
            self.updated_leaves.add(id(state))
        new = compute(target)
        if tuple(new.shape) != tuple(target.shape) and size_guards.equal_shapes(
            tuple(new.shape), tuple(target.shape), name
        ):  # dims a size guard made equal (s_B == s_S): the value with the target's shape
            new = self._builder.torch_function(torch.reshape, (new, tuple(target.shape)), {})
        if tuple(new.shape) != tuple(target.shape):
            raise RuntimeError(
                f"output with shape {list(target.shape)} doesn't match the broadcast shape {list(new.shape)} ({name})"
            )
        if not torch.can_cast(new.dtype, target.dtype):
            raise RuntimeError(f"result type {new.dtype} can't be cast to the desired output type {target.dtype}")
        if new.dtype != target.dtype:
            new = self._builder.torch_function(torch.Tensor.to, (new, target.dtype), {})
        if target.requires_grad and not new.requires_grad and torch.is_grad_enabled():
            # eager's updated tensor stays on the graph (`x.clone().zero_()`: its gradient with
            # respect to the old value is zero), so the new value is tied to the old one
            old = self._builder.torch_function(torch.zeros_like, (target,), {"dtype": torch.bool})
            new = self._builder.torch_function(torch.where, (old, target, new), {})
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
        self._builder.capture(target)  # an input of the program: the write-back target is read by path
        self.write_back(target, value)
        self._builder._captured_proxies[id(target)] = value
        self._state_of[value._var] = target

    def write_back(self, target: torch.Tensor, value: Any) -> None:
        """Record that after every call the real tensor ``target`` (state read from outside
        the trace, e.g. a module buffer) must hold the traced ``value`` (see ``write_backs``)."""
        if not isinstance(target, torch.Tensor) or isinstance(target, TensorProxy):
            raise TypeError(f"write_back target must be a real tensor, got {type(target).__name__}")
        self.write_backs.append((target, value))


def _unchanged() -> bool:
    return False


def _storage_of(tensor: torch.Tensor) -> int:
    try:
        return int(tensor.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):  # tensors without storage (subclasses, meta)
        return -1


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
