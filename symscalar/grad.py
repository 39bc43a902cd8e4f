"""Reverse-mode autodiff over traces, and its wiring into ``torch.autograd``.

``vjp_traces(trace, wrt)`` turns a forward trace into

- a forward trace that also returns the *residuals* (forward values the backward reads), and
- a backward trace ``(cotangents..., residuals...) -> gradients of the wrt inputs``.

The backward is recorded by running each primitive's ``vjp`` rule (defined next to the op, and
written with symscalar ops) on proxies, so it is an ordinary trace: printed, checked by
``check_trace`` and run by any backend. Dynamic scalars the backward reads (the ``s`` of
``x * s``) are residuals, i.e. backward *inputs*, never constants; reduction axes and shapes a
rule introduces come from static shapes and static parameters, and ``check_trace`` proves it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.autograd.function import once_differentiable

from symscalar.errors import SymscalarError
from typing_extensions import TypeIs

from symscalar.trace import TensorVar, Trace, Var, check_trace, dce, is_var
from symscalar.tracing import TraceBuilder, tracing
from symscalar.ops.factories import full

__all__ = ["vjp_traces", "autograd_runner", "is_differentiable"]


def is_differentiable(v: object) -> TypeIs[TensorVar]:
    return isinstance(v, TensorVar) and (v.dtype.is_floating_point or v.dtype.is_complex)


def vjp_traces(trace: Trace, wrt: Sequence[int]) -> tuple[Trace, Trace, tuple[torch.Tensor, ...]]:
    """The forward-with-residuals trace and the backward trace of ``trace``.

    Args:
        trace: a checked forward trace.
        wrt: indices of the inputs to differentiate with respect to (floating tensors).

    Returns:
        ``(forward, backward, constants)``. ``forward`` returns ``trace.outputs`` followed by
        the residuals. ``backward`` takes one cotangent per differentiable output of ``trace``
        (in output order), the residuals, then ``constants`` (tensors a rule created eagerly,
        passed by reference), and returns one gradient per ``wrt``.
    """
    builder = TraceBuilder(f"{trace.name}_backward")
    residual_of: dict[Var, Any] = {}  # forward var -> backward input proxy
    forward_of: dict[Var, Var] = {}  # backward input var -> forward var
    cotangents: dict[Var, Any] = {}

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

    def accumulate(v: Var, ct: Any, where: str) -> None:
        assert isinstance(v, TensorVar)
        if tuple(ct.shape) != v.shape:
            raise SymscalarError(
                f"internal error: the vjp of {where} gave a cotangent of shape "
                f"{tuple(ct.shape)} for a value of shape {v.shape}"
            )
        if ct.dtype != v.dtype:
            ct = ct.to(v.dtype)
        cotangents[v] = cotangents[v] + ct if v in cotangents else ct

    n_cts = 0
    for out in trace.outputs:
        if is_differentiable(out):
            ct = builder.tensor_input(TensorVar(out.shape, out.dtype, out.device))
            n_cts += 1
            accumulate(out, ct, "an output")

    with tracing(builder):
        for eqn in reversed(trace.eqns):
            cts = [cotangents.get(o) for o in eqn.outs]
            if all(ct is None for ct in cts):
                continue
            if not any(is_differentiable(a) for a in eqn.args):
                continue
            if eqn.prim.vjp is None:
                raise NotImplementedError(
                    f"symscalar has no gradient rule (vjp) for {eqn.prim.name}; it cannot be "
                    "differentiated yet. Detach its inputs or call the function under "
                    "torch.no_grad()."
                )
            args = [residual(a) for a in eqn.args]
            outs = [residual(o) for o in eqn.outs]
            if eqn.prim.multiple_results:
                arg_cts = eqn.prim.vjp(tuple(cts), tuple(outs), *args, **eqn.params)
            else:
                arg_cts = eqn.prim.vjp(cts[0], outs[0], *args, **eqn.params)
            for a, g in zip(eqn.args, arg_cts):
                if g is not None and is_differentiable(a):
                    accumulate(a, g, eqn.prim.name)
        grads = []
        for i in wrt:
            v = trace.inputs[i]
            assert isinstance(v, TensorVar)
            g = cotangents.get(v)
            grads.append(g if g is not None else full(v.shape, 0, dtype=v.dtype, device=v.device))

    raw = dce(builder.build(grads))
    used = _used_vars(raw)
    n_inputs = len(builder.inputs)
    ct_inputs = raw.inputs[:n_cts]
    kept_residuals = tuple(v for v in raw.inputs[n_cts:n_inputs] if v in used)
    # constants a rule created eagerly (e.g. torch.full((), 2.0)) are read by reference
    constants = [(v, t) for v, t in zip(raw.inputs[n_inputs:], builder.captured_tensors()) if v in used]
    inputs = ct_inputs + kept_residuals + tuple(v for v, _ in constants)
    backward = Trace(inputs, raw.eqns, raw.outputs, raw.name)
    backward = dataclasses.replace(backward, comment=_backward_comment(backward, n_cts, len(kept_residuals)))
    forward = Trace(
        trace.inputs, trace.eqns, trace.outputs + tuple(forward_of[v] for v in kept_residuals),
        f"{trace.name}_forward",
    )
    check_trace(forward)
    check_trace(backward)
    return forward, backward, tuple(t for _, t in constants)


def _backward_comment(backward: Trace, n_cts: int, n_saved: int) -> str:
    """Say which inputs of a backward are cotangents, saved values and constants."""
    names = backward.input_names()
    parts = [("cotangents", names[:n_cts]), ("saved for backward", names[n_cts:n_cts + n_saved]),
             ("constants", names[n_cts + n_saved:])]
    return "; ".join(f"{label}: {', '.join(group)}" for label, group in parts if group)


def _used_vars(trace: Trace) -> set[Any]:
    used = {a for eqn in trace.eqns for a in eqn.args if is_var(a)}
    used.update(a for a in trace.outputs if is_var(a))
    return used


def autograd_runner(
    trace: Trace,
    render: Callable[[list[str]], str],
    captured: tuple[torch.Tensor, ...],
    backend: Any,
    requires_grad: Sequence[bool],
    output_requires_grad: Sequence[bool] | None = None,
) -> tuple[Callable[..., Any], Trace]:
    """A runner whose outputs are wired into torch.autograd, and its backward trace.

    Under ``torch.no_grad()`` the runner runs the plain forward; otherwise it runs the
    forward-with-residuals inside a ``torch.autograd.Function`` whose backward runs the
    backward trace. ``output_requires_grad`` (from the tracer) marks the outputs that do
    not require grad in eager, e.g. computed under ``no_grad`` inside the function.
    """
    wrt = [i for i, r in enumerate(requires_grad) if r and is_differentiable(trace.inputs[i])]
    forward, backward, constants = vjp_traces(trace, wrt)
    forward_fn = backend.compile_trace(forward)
    backward_fn = backend.compile_trace(backward)
    plain_fn = backend.compile_trace(trace)
    names = [f"o{i}" for i in range(len(trace.outputs))]
    namespace: dict[str, Any] = {"torch": torch}
    exec(f"def unflatten({', '.join(names)}):\n    return {render(names)}\n", namespace)  # noqa: S102
    unflatten = namespace["unflatten"]
    n_out = len(trace.outputs)
    n_in = len(trace.inputs)
    differentiable = [is_differentiable(o) for o in trace.outputs]
    # outputs autograd must not track: not differentiable, or without grad in eager
    tracked = [d and (output_requires_grad is None or r)
               for d, r in zip(differentiable, output_requires_grad or differentiable)]
    residual_is_tensor = [isinstance(v, TensorVar) for v in forward.outputs[n_out:]]

    class TraceFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            results = forward_fn(*args)
            outs, residuals = results[:n_out], results[n_out:]
            ctx.save_for_backward(*(r for r, t in zip(residuals, residual_is_tensor) if t))
            ctx.scalars = [r for r, t in zip(residuals, residual_is_tensor) if not t]
            ctx.mark_non_differentiable(
                *(o for o, t in zip(outs, tracked) if not t and isinstance(o, torch.Tensor))
            )
            return outs

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, *grads: Any) -> Any:
            tensors = iter(ctx.saved_tensors)
            scalars = iter(ctx.scalars)
            residuals = [next(tensors) if t else next(scalars) for t in residual_is_tensor]
            cts = [g for g, d in zip(grads, differentiable) if d]
            in_grads = backward_fn(*cts, *residuals, *constants)
            result: list[Any] = [None] * n_in
            for i, g in zip(wrt, in_grads):
                result[i] = g
            return tuple(result)

    def run(*args: Any) -> Any:
        all_args = args + captured
        if torch.is_grad_enabled():
            return unflatten(*TraceFunction.apply(*all_args))  # type: ignore[no-untyped-call]
        return unflatten(*plain_fn(*all_args))

    return run, backward
