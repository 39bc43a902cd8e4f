"""Reverse-mode autodiff over traces, and its wiring into ``torch.autograd``.

``vjp(trace, wrt)`` turns a forward trace into a backward trace
``(cotangents..., residuals...) -> gradients of the wrt inputs`` and names the *residuals*
(forward values the backward reads); ``vjp_traces`` also gives the forward trace that returns
them.

The backward is recorded by running each primitive's ``vjp`` rule (defined next to the op, and
written with symscalar ops) on proxies, so it is an ordinary trace: printed, checked by
``check_trace`` and run by any backend. Dynamic scalars the backward reads (the ``s`` of
``x * s``) are residuals, i.e. backward *inputs*, never constants; reduction axes and shapes a
rule introduces come from static shapes and static parameters, and ``check_trace`` proves it.

``autograd_runner`` wires a trace into ``torch.autograd`` with eager's semantics: an input
gets ``None`` where no differentiable path joins it to the outputs that received a gradient
(eager leaves ``.grad`` untouched), outputs computed without such a path do not require grad,
inputs returned as-is are returned as the same object, and the backward is itself
differentiable (``create_graph=True``, double backward), because it is a trace too.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from typing_extensions import TypeIs

from symscalar import logs, size_guards, sizes
from symscalar.backend import Backend
from symscalar.errors import SymscalarError, UnsupportedOperationError
from symscalar.generated import exec_generated
from symscalar.grad_regions import stop_gradient_p
from symscalar.ops.factories import full
from symscalar.recorder import Recorder, recording
from symscalar.simplify import simplify
from symscalar.trace import (
    DISCONNECTED,
    SEEDED_VJPS,
    VJPS,
    Primitive,
    TensorVar,
    Trace,
    Var,
    check_trace,
    dce,
    format_static,
    is_var,
)
from symscalar.vjp_wanted import wanting

__all__ = ["vjp", "VJP", "vjp_traces", "autograd_runner", "is_differentiable", "connected_vars", "STOP_GRADIENT"]


# Primitives whose floating results carry no gradient although their inputs may (a stop
# gradient, e.g. ``detach`` or a region under ``torch.no_grad()``): eager leaves their results
# off the autograd graph, and so do we. Every other primitive needs a ``vjp``.
STOP_GRADIENT: set[Primitive[Any]] = {stop_gradient_p}


def is_differentiable(v: object) -> TypeIs[TensorVar]:
    return isinstance(v, TensorVar) and (v.dtype.is_floating_point or v.dtype.is_complex)


def connected_vars(trace: Trace, wrt: Sequence[int]) -> set[Var]:
    """The variables a differentiable path joins to the inputs at ``wrt``: what eager marks
    ``requires_grad``. Integer and boolean results, stop-gradients and values computed from
    other inputs only are not connected. (A primitive without a gradient rule passes the
    connection on: ``vjp`` raises if a gradient ever has to go through it.)"""
    connected: set[Var] = {trace.inputs[i] for i in wrt}
    for eqn in trace.eqns:
        if connected.isdisjoint(eqn.args) or eqn.prim in STOP_GRADIENT:
            continue
        if any(a in connected and is_differentiable(a) for a in eqn.args):
            connected.update([o for o in eqn.outs if is_differentiable(o)])
    return connected


@dataclasses.dataclass(frozen=True)
class VJP:
    """A backward trace and what its inputs and outputs stand for."""

    backward: Trace  # (cotangents..., saved..., constants...) -> gradients of grad_inputs
    cotangents: tuple[Var, ...]  # the forward variable each cotangent input belongs to
    saved: tuple[Var, ...]  # the forward variable each saved input (residual) holds
    constants: tuple[torch.Tensor, ...]  # tensors a rule created eagerly, passed by reference
    grad_inputs: tuple[int, ...]  # positions in the forward's inputs; the others in wrt: None


def vjp(
    trace: Trace, wrt: Sequence[int], cotangents: Sequence[Var] | None = None, *, connected: set[Var] | None = None
) -> VJP:
    """The backward trace of ``trace`` with respect to the inputs at ``wrt``.

    Args:
        trace: a checked forward trace.
        wrt: indices of the inputs to differentiate with respect to (floating tensors).
        cotangents: the forward variables that receive a cotangent (default: every
            differentiable output, one cotangent per output position).
        connected: ``connected_vars(trace, wrt)``, where the caller has it already.

    An input of ``wrt`` gets a gradient when a differentiable path joins it to a variable of
    ``cotangents`` (zeros where every rule on the path gives none, as eager's ``floor``);
    otherwise it is left out of ``grad_inputs``: eager's ``None``.
    """
    if connected is None:
        connected = connected_vars(trace, wrt)
    if cotangents is None:
        cotangents = tuple(o for o in trace.outputs if is_differentiable(o))
    builder = Recorder(f"{trace.name}_backward")
    residual_of: dict[Var, Any] = {}  # forward var -> backward input proxy
    forward_of: dict[Var, Var] = {}  # backward input var -> forward var
    grads: dict[Var, Any] = {}  # forward var -> accumulated cotangent proxy
    reached: set[Var] = set()  # forward vars on a differentiable path to a cotangent

    def residual(v: Any) -> Any:
        if not is_var(v):
            return v
        if v not in residual_of:
            proxy: Any
            if isinstance(v, TensorVar):
                proxy = builder.tensor_input(TensorVar(v.shape, v.dtype, v.device))
            else:
                proxy = builder.scalar_input(v.dtype, None, "a dynamic value saved from the forward")
            residual_of[v] = proxy
            forward_of[proxy._var] = v
        return residual_of[v]

    def accumulate(v: Var, ct: Any, where: str, *, total: bool = False) -> None:
        assert isinstance(v, TensorVar)
        if tuple(ct.shape) != v.shape and size_guards.equal_shapes(tuple(ct.shape), v.shape, f"the vjp of {where}"):
            ct = ct.reshape(v.shape)  # dims a size guard of the forward made equal (s_B == s_T)
        if tuple(ct.shape) != v.shape:
            raise SymscalarError(
                f"internal error: the vjp of {where} gave a cotangent of shape "
                f"{tuple(ct.shape)} for a value of shape {v.shape}"
            )
        if ct.dtype != v.dtype:  # a gradient has its value's dtype (autocast casts, mixed inputs)
            ct = ct.to(v.dtype)
        grads[v] = grads[v] + ct if v in grads and not total else ct

    for v in cotangents:
        assert isinstance(v, TensorVar)
        ct = builder.tensor_input(TensorVar(v.shape, v.dtype, v.device))
        if v in connected:
            reached.add(v)
            accumulate(v, ct, "an output")

    with recording(builder):
        for eqn in reversed(trace.eqns):
            if eqn.prim in STOP_GRADIENT or reached.isdisjoint(eqn.outs):
                continue
            joined = [a for a in eqn.args if a in connected and is_differentiable(a)]
            cts = [grads.get(o) for o in eqn.outs]
            if not joined or all(ct is None for ct in cts):
                reached.update(joined)
                continue
            vjp = VJPS.get(eqn.prim)
            if vjp is None:
                raise NotImplementedError(
                    f"symscalar has no gradient rule (vjp) for {eqn.prim.name}; it cannot be "
                    "differentiated yet. Detach its inputs or call the function under "
                    "torch.no_grad()."
                )
            args = [residual(a) for a in eqn.args]
            outs = [residual(o) for o in eqn.outs]
            seeds = _seeds(eqn.args, joined, grads) if eqn.prim in SEEDED_VJPS else {}
            params = {**eqn.params, "seeds": seeds} if seeds else eqn.params
            with wanting(tuple(a in joined for a in eqn.args)):
                if eqn.prim.multiple_results:
                    arg_cts = vjp(tuple(cts), tuple(outs), *args, **params)
                else:
                    arg_cts = vjp(cts[0], outs[0], *args, **params)
            disconnected = {a for a, g in zip(eqn.args, arg_cts) if g is DISCONNECTED}
            reached.update(a for a in joined if a not in disconnected)
            for i, (a, g) in enumerate(zip(eqn.args, arg_cts)):
                if g is not None and g is not DISCONNECTED and a in connected and is_differentiable(a):
                    accumulate(a, g, eqn.prim.name, total=i in seeds)
        grad_inputs = tuple(i for i in wrt if trace.inputs[i] in reached)
        results = []
        for i in grad_inputs:
            v = trace.inputs[i]
            assert isinstance(v, TensorVar)
            g = grads.get(v)
            results.append(g if g is not None else full(v.shape, 0, dtype=v.dtype, device=v.device))

    size_sources = _size_sources(builder, trace, residual) if sizes.enabled()[0] else set()
    raw = dce(simplify(builder.build(results)))  # rules' no-ops out first: fewer residuals
    used = _used_vars(raw)
    n_cts = len(cotangents)
    n_inputs = len(builder.inputs)
    ct_inputs = raw.inputs[:n_cts]
    kept_residuals = tuple(v for v in raw.inputs[n_cts:n_inputs] if v in used or v in size_sources)
    # constants a rule created eagerly (e.g. torch.full((), 2.0)) are read by reference
    constants = [(v, t) for v, t in zip(raw.inputs[n_inputs:], builder.captured_tensors()) if v in used]
    inputs = ct_inputs + kept_residuals + tuple(v for v, _ in constants)
    backward = Trace(inputs, raw.eqns, raw.outputs, raw.name, namespace=raw.namespace)
    backward = dataclasses.replace(backward, comment=_backward_comment(backward, n_cts, len(kept_residuals)))
    check_trace(backward)
    return VJP(
        backward,
        tuple(cotangents),
        tuple(forward_of[v] for v in kept_residuals),
        tuple(t for _, t in constants),
        grad_inputs,
    )


def _seeds(args: Sequence[Any], joined: Sequence[Var], grads: dict[Var, Any]) -> dict[int, Any]:
    """The cotangents that the arguments of a ``SEEDED_VJPS`` equation have accumulated from later
    equations, by position: the rule adds its uses onto them in eager's order.

    Eager's engine adds each use's contribution to an input's buffer as it arrives (reverse
    creation order), so an op that eager records as several autograd nodes (an opaque torch call:
    cosine_similarity uses x three times) adds its uses one by one onto what later ops gave,
    ``((later + c3) + c2) + c1``; a rule that summed its uses first, ``later + (c3 + c2 + c1)``,
    rounds differently. An argument passed twice is seeded at its first position: the rule makes it
    one leaf, whose uses at both positions torch adds interleaved, as eager does."""
    first = {a: next(i for i, b in enumerate(args) if b is a) for a in joined}
    return {i: grads[a] for a, i in first.items() if a in grads}


def _size_sources(builder: Recorder, trace: Trace, residual: Callable[[Any], Any]) -> set[Var]:
    """Dynamic dims the backward uses (a reshape to ``x.shape``, ``1 / numel`` in mean's rule)
    that none of its tensor inputs has as a dim: each is read from a forward tensor saved for
    that purpose (a saved input, like a saved ``DynamicFloat``). Returns those inputs."""
    needed: set[sizes.Symbol] = set()
    for eqn in builder.eqns:
        needed |= sizes.symbols_of(eqn.params)
        for v in (*eqn.args, *eqn.outs):
            if isinstance(v, TensorVar):
                needed |= sizes.symbols_of(v.shape)
    sources: set[Var] = set()
    for symbol in needed:
        size = sizes.Size.of(symbol)
        # a backward input has it (cotangents come first: they are always kept); else save one
        found = next((v for v in builder.inputs if isinstance(v, TensorVar) and size in v.shape), None)
        if found is None:
            forward = (*trace.inputs, *(o for eqn in trace.eqns for o in eqn.outs))
            holder = next((v for v in forward if isinstance(v, TensorVar) and size in v.shape), None)
            if holder is None:
                raise UnsupportedOperationError(
                    f"the backward of {trace.name} needs the dynamic size {size!r}, which no forward tensor "
                    "has as a dim"
                )
            found = residual(holder)._var
        sources.add(found)
    return sources


def vjp_traces(trace: Trace, wrt: Sequence[int]) -> tuple[Trace, Trace, tuple[torch.Tensor, ...]]:
    """The forward-with-residuals trace and the backward trace of ``trace``.

    Returns:
        ``(forward, backward, constants)``. ``forward`` returns ``trace.outputs`` followed by
        the residuals. ``backward`` takes one cotangent per differentiable output of ``trace``
        (in output order), the residuals, then ``constants``, and returns one gradient per
        input of ``wrt`` that a differentiable path joins to an output (see ``vjp``).
    """
    result = vjp(trace, wrt)
    forward = Trace(
        trace.inputs, trace.eqns, trace.outputs + result.saved, f"{trace.name}_forward", namespace=trace.namespace
    )
    check_trace(forward)
    return forward, result.backward, result.constants


def _backward_comment(backward: Trace, n_cts: int, n_saved: int) -> str:
    """Say which inputs of a backward are cotangents, saved values and constants."""
    names = backward.input_names()
    parts = [
        ("cotangents", names[:n_cts]),
        ("saved for backward", names[n_cts : n_cts + n_saved]),
        ("constants", names[n_cts + n_saved :]),
    ]
    return "; ".join(f"{label}: {', '.join(group)}" for label, group in parts if group)


def _used_vars(trace: Trace) -> set[Any]:
    used = {a for eqn in trace.eqns for a in eqn.args if is_var(a)}
    used.update(a for a in trace.outputs if is_var(a))
    return used


# ----------------------------------------------------------------------------------------
# torch.autograd integration

_AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps")


@contextlib.contextmanager
def _autocast_disabled() -> Iterator[None]:
    """Run a trace exactly as recorded: the tracer made autocast's casts explicit, so an
    ambient autocast (``.backward()`` called inside ``torch.autocast``) must not cast again."""
    with contextlib.ExitStack() as stack:
        for device in _AUTOCAST_DEVICES:
            if torch.is_autocast_enabled(device):
                stack.enter_context(torch.autocast(device, enabled=False))
        yield


def _call(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    if torch._C._is_any_autocast_enabled():
        with _autocast_disabled():
            return fn(*args)
    return fn(*args)


def _batched_create_graph_message(name: str) -> str:
    return (
        f"torch.autograd.grad(..., is_grads_batched=True, create_graph=True) through {name}: torch "
        "runs a batched backward under its legacy vmap, which records no graph for the "
        "differentiable backward program, so the gradients would come back without one (wrong "
        "higher-order gradients). This is what torch.autograd.functional.jacobian/hessian("
        "vectorize=True, create_graph=True) do. Fix: is_grads_batched=False (one grad call per "
        "cotangent; jacobian(..., vectorize=False)), or create_graph=False when no gradient of "
        "the gradients is needed."
    )


class _Backward:
    """One backward program: compiled for first-order use; under ``create_graph=True`` run
    through its own autograd program (built per pattern of inputs requiring grad), so the
    gradients it returns have a graph."""

    def __init__(self, result: VJP, backend: Backend) -> None:
        self.vjp = result
        self.backend = backend
        name = result.backward.name
        with logs.phase(logs.backend_log, name, f"compiling the backward for the {backend.name} backend") as done:
            self.fn = backend.compile_trace(result.backward)
            done.detail = f"{len(result.backward.eqns)} equations"
        self._programs: dict[tuple[bool, ...], _Program] = {}

    def __call__(self, inputs: list[Any]) -> Any:
        args = (*inputs, *self.vjp.constants)
        if torch.is_grad_enabled():
            pattern = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
            if any(pattern):
                if any(isinstance(a, torch.Tensor) and torch._C._functorch.is_legacy_batchedtensor(a) for a in args):
                    raise UnsupportedOperationError(_batched_create_graph_message(self.vjp.backward.name))
                program = self._programs.get(pattern)
                if program is None:
                    program = self._programs[pattern] = _Program(self.vjp.backward, pattern, self.backend)
                return program(*args)
        return self.fn(*args)


class _Program:
    """A trace run inside a ``torch.autograd.Function``.

    The Function's outputs are the trace's outputs (an input returned as-is is given back as
    the same object, as eager does) followed by the values the backward reads: the forward
    saves them with ``save_for_backward`` as outputs of the Function, so that under
    ``create_graph=True`` a gradient reaching a saved value flows back through this node.
    The backward trace depends on which outputs received a gradient (an input joined only
    to outputs that got none gets ``None``, as in eager); one is built per such set, lazily.
    """

    def __init__(self, trace: Trace, requires_grad: Sequence[bool], backend: Backend) -> None:
        self.name = trace.name
        self.backend = backend
        self.n_in = len(trace.inputs)
        self.wrt = [i for i, r in enumerate(requires_grad) if r and is_differentiable(trace.inputs[i])]
        self.connected = connected = connected_vars(trace, self.wrt)
        position = {v: i for i, v in enumerate(trace.inputs)}
        outs = list(dict.fromkeys(o for o in trace.outputs if is_var(o) and o not in position))
        with logs.phase(logs.grad_log, trace.name, "building the backward trace") as built:
            wanted = [o for o in outs if is_differentiable(o) and o in connected]
            first = vjp(trace, self.wrt, wanted, connected=connected)
            built.detail = f"{len(first.backward.eqns)} equations, {len(first.saved)} saved for backward"
        outs += [v for v in dict.fromkeys(first.saved) if v not in position and v not in outs]
        self.outs = tuple(outs)
        self.forward = Trace(trace.inputs, trace.eqns, self.outs, f"{trace.name}_forward", namespace=trace.namespace)
        with logs.phase(logs.trace_log, trace.name, "checking the forward with its saved values"):
            check_trace(self.forward)
        with logs.phase(logs.backend_log, trace.name, f"compiling the forward for the {backend.name} backend") as done:
            self.forward_fn = backend.compile_trace(self.forward)
            done.detail = f"{len(self.forward.eqns)} equations"
        out_index = {v: j for j, v in enumerate(self.outs)}
        # where each user output comes from: ("in", i), ("out", j) or ("literal", value)
        self.output_sources: tuple[tuple[str, Any], ...] = tuple(
            ("in", position[o])
            if is_var(o) and o in position
            else ("out", out_index[o])
            if is_var(o)
            else ("literal", o)
            for o in trace.outputs
        )
        self.differentiable = tuple(is_differentiable(o) and o in connected for o in self.outs)
        self.saved = first.saved
        self.saved_sources = tuple(("in", position[v]) if v in position else ("out", out_index[v]) for v in self.saved)
        self.saved_is_tensor = tuple(isinstance(v, TensorVar) for v in self.saved)
        self.backwards: dict[tuple[int, ...], tuple[_Backward, tuple[int, ...]]] = {}
        mask = tuple(out_index[v] for v in first.cotangents)
        self.backwards[mask] = (_Backward(first, backend), tuple(range(len(self.saved))))
        self.backward_trace = first.backward
        self.function = self._function()

    def _backward_for(self, mask: tuple[int, ...]) -> tuple[_Backward, tuple[int, ...]]:
        """The backward for the outputs at ``mask`` (positions in ``self.outs``) receiving a
        gradient, and where each of its saved values sits among ``self.saved``."""
        found = self.backwards.get(mask)
        if found is not None:
            return found
        # self.forward has the trace's inputs and equations: the same connected variables
        with logs.phase(logs.grad_log, self.name, "building a backward trace for other output gradients") as built:
            result = vjp(self.forward, self.wrt, [self.outs[j] for j in mask], connected=self.connected)
            built.detail = f"{len(result.backward.eqns)} equations"
        index = {v: k for k, v in enumerate(self.saved)}
        missing = [v for v in result.saved if v not in index]
        if missing:
            raise NotImplementedError(
                f"the backward of {self.name} for this set of output gradients (e.g. a double "
                f"backward through a value it saved) needs {len(missing)} forward value(s) "
                "that its forward did not save, so they are gone. Compute this gradient "
                "eagerly (call the function without symscalar.jit), or report this case."
            )
        found = (_Backward(result, self.backend), tuple(index[v] for v in result.saved))
        self.backwards[mask] = found
        return found

    def _function(self) -> type[torch.autograd.Function]:
        program = self
        saved_sources, saved_is_tensor = self.saved_sources, self.saved_is_tensor
        nondiff = [
            j for j, (o, d) in enumerate(zip(self.outs, self.differentiable)) if not d and isinstance(o, TensorVar)
        ]

        class TraceFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, *args: Any) -> Any:
                outs = _call(program.forward_fn, args)
                values = [args[i] if kind == "in" else outs[i] for kind, i in saved_sources]
                ctx.save_for_backward(*(v for v, t in zip(values, saved_is_tensor) if t))
                ctx.scalars = [v for v, t in zip(values, saved_is_tensor) if not t]
                ctx.mark_non_differentiable(*(outs[j] for j in nondiff))
                ctx.set_materialize_grads(False)
                return outs

            @staticmethod
            def backward(ctx: Any, *grads: Any) -> Any:
                return program.backward(ctx, grads)

        return TraceFunction

    def backward(self, ctx: Any, grads: Sequence[Any]) -> tuple[Any, ...]:
        mask = tuple(j for j, g in enumerate(grads) if g is not None and self.differentiable[j])
        result: list[Any] = [None] * self.n_in
        if not mask:
            return tuple(result)
        backward, picks = self._backward_for(mask)
        tensors = iter(ctx.saved_tensors)  # raises if the graph was freed, as eager does
        scalars = iter(ctx.scalars)
        saved = [next(tensors) if t else next(scalars) for t in self.saved_is_tensor]
        inputs = [grads[j] for j in mask] + [saved[k] for k in picks]
        in_grads = _call(backward, (inputs,))
        for i, g in zip(backward.vjp.grad_inputs, in_grads):
            result[i] = g
        return tuple(result)

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        """The trace's outputs, flat, wired into autograd."""
        if torch._C._are_functorch_transforms_active():  # apply would fail inside torch
            raise UnsupportedOperationError(
                "a symscalar.jit function is called under a torch.func transform (torch.func.grad, "
                "jacrev, vjp, vmap), which it does not support. Fix: differentiate it with "
                "torch.autograd (loss.backward(), torch.autograd.grad), or apply the transform to "
                "the function without jit."
            )
        outs = self.function.apply(*args) if self.outs else ()  # type: ignore[no-untyped-call]
        return tuple(args[i] if kind == "in" else outs[i] if kind == "out" else i for kind, i in self.output_sources)


def autograd_runner(
    trace: Trace,
    render: Callable[[list[str]], str],
    captured: tuple[torch.Tensor, ...],
    backend: Backend,
    requires_grad: Sequence[bool],
) -> tuple[Callable[..., Any], Trace]:
    """A runner whose outputs are wired into torch.autograd, and its first backward trace.

    Under ``torch.no_grad()`` the runner runs the plain forward (compiled on first use);
    otherwise it runs the
    program inside a ``torch.autograd.Function`` (see ``_Program``). Either way the program
    runs with autocast off: the trace holds autocast's casts.
    """
    program = _Program(trace, requires_grad, backend)
    plain: list[Callable[..., Any]] = []  # compiled on the first call under no_grad

    def plain_fn(*all_args: Any) -> Any:
        if not plain:
            plain.append(backend.compile_trace(trace, render))
        return plain[0](*all_args)

    exprs = [
        f"a[{i}]" if kind == "in" else f"o[{i}]" if kind == "out" else format_static(i)
        for kind, i in program.output_sources
    ]
    namespace: dict[str, Any] = {"torch": torch}
    exec_generated(f"def unflatten(a, o):\n    return {render(exprs)}\n", f"outputs of {trace.name}", namespace)
    unflatten = namespace["unflatten"]
    apply = program.function.apply if program.outs else (lambda *args: ())

    def run(*args: Any) -> Any:
        all_args = args + captured
        if torch._C._is_any_autocast_enabled():
            return _call(run_as_traced, all_args)
        if torch.is_grad_enabled():
            return unflatten(all_args, apply(*all_args))
        return plain_fn(*all_args)

    def run_as_traced(*all_args: Any) -> Any:
        if torch.is_grad_enabled():
            return unflatten(all_args, apply(*all_args))
        return plain_fn(*all_args)

    return run, program.backward_trace


def with_grad_enabled(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` with grad enabled: a program traced from a function called without grad that
    builds a graph inside ``torch.enable_grad()`` (its other values carry stop_gradient)."""

    def run_with_grad(*args: Any) -> Any:
        with torch.enable_grad():
            return run(*args)

    return run_with_grad
