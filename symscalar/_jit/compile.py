"""A cache miss, traced and compiled into an entry: trace the call, check the trace, choose a
backend, wire the program into torch.autograd when an input requires grad, and wrap it in the
state guard (``symscalar.state.make_entry``) that re-checks what the trace read from outside."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import torch

from symscalar import autocast, logs, torch_backend
from symscalar import grad as grad_transform
from symscalar import state as outside
from symscalar._jit import arguments, pystate, tree
from symscalar._jit.cache import MISS, Entry
from symscalar._jit.mutable import MutableArguments, check_objects, loud_on_raise
from symscalar._jit.outputs import Output, finish_with_state, with_state_outputs
from symscalar._jit.params import Kind, identifier, qualname
from symscalar._jit.state_updates import in_place_updates, refuse_returned_views, unshared
from symscalar.backend import Backend, choose_backend
from symscalar.errors import UnsupportedOperationError
from symscalar.grad_regions import check_leaf_outputs, stop_gradient_p
from symscalar.ops.random import draw_seed
from symscalar.size_guards import SizeGuard, checker, guards_of, input_dims
from symscalar.trace import ScalarVar, TensorVar, Trace, check_trace
from symscalar.tracer import TraceBuilder, tracing

__all__ = ["compile_entry", "guard_function"]

# ``call(convert, target)``: call ``target`` with each argument converted by
# ``convert(kind, where, value)`` (see function.FunctionState.call).
CallWith = Callable[[Callable[[Kind, str, Any], Any], Callable[..., Any]], Any]


def _constants_traced(builder: TraceBuilder, result: Any) -> Any:
    """The result with each tensor the function built from Python values alone (``torch.zeros(3)``,
    ``torch.arange(n)``: a constant of the program) replaced by a traced copy of it: the program
    returns a fresh tensor on every call, as eager builds one."""
    values, spec = tree.flatten(result)
    if builder.inplace.refilled:  # constants a random fill made computed values (`torch.empty(n).uniform_()`)
        values = [builder.inplace.refilled_value(v) for v in values]
        result = tree.unflatten(values, spec)
    if not any(isinstance(v, torch.Tensor) and builder.is_constant(v) and not v.requires_grad for v in values):
        return result
    with tracing(builder):
        values = [
            builder.torch_function(torch.Tensor.clone, (builder.capture(v),), {})
            if isinstance(v, torch.Tensor) and builder.is_constant(v) and not v.requires_grad
            else v
            for v in values
        ]
    return tree.unflatten(values, spec)


def compile_entry(
    fn: Any,
    traced: Callable[..., Any],
    call: CallWith,
    call_args: tuple[Any, ...],
    roots: outside.Roots,
    top: torch.nn.Module | None,
    hooks: outside.HookWatch,
    backend_name: str | Backend,
    objects: list[tuple[str, Any]] = (),  # type: ignore[assignment]
) -> Entry:
    """Trace ``traced`` on proxies of this call's arguments and compile the entry that runs
    it (``call_args`` are the program inputs the per-call path passes; ``objects`` the
    state-holding objects among the arguments, with where each was passed)."""
    check_objects(objects, qualname(fn))  # caches that are not modelled as state (see mutable.py)
    builder = TraceBuilder(identifier(qualname(fn).rsplit(".", 1)[-1]))
    roots = _with_argument_roots(roots, objects)
    watch = outside.TraceWatch(roots, builder, top)
    seed = torch.initial_seed()
    name = builder.name  # the trace's name, as printed (f, f_forward, f_backward)
    with logs.phase(logs.trace_log, name, "tracing the function") as traced_phase, watch, tracing(builder):
        # jit(module) traces forward: the module's own hooks run around the program
        mutable = MutableArguments(builder.inplace)  # state objects: a KV cache
        result = call(mutable.converting(functools.partial(arguments.proxy, builder)), traced)
        traced_phase.detail = f"{len(builder.eqns)} equations"
    if torch.initial_seed() != seed:
        raise UnsupportedOperationError(
            f"{qualname(fn)} calls torch.manual_seed while it is traced: that runs once, at "
            "trace time, while the program's random ops draw a fresh seed on every call. "
            "Seed outside the jitted function (torch.manual_seed before calling it)."
        )
    result, write_back = mutable.finish(result, qualname(fn), fn)
    output = Output(_constants_traced(builder, result), qualname(fn))
    leaves = output.leaves
    pending, values = _state_writes(fn, builder, watch)
    render = with_state_outputs(output.render, len(leaves)) if pending else output.render
    trace = builder.build([*leaves, *values])
    with logs.phase(logs.trace_log, name, "checking the trace"):
        check_trace(trace)
    backend = choose_backend(backend_name, trace)
    rng_seed = (None,) if builder.rng_seed is not None else ()
    captured = watch.captured(builder, qualname(fn))  # those the trace reads, in its input order
    requires_grad = [
        isinstance(value, torch.Tensor) and value.requires_grad
        for value in (*call_args, *(c.tensor for c in captured), *rng_seed)
    ]
    position = {id(c.tensor): j for j, c in enumerate(captured)}
    with_grad = _depends_on(trace, {v for v, r in zip(trace.inputs, requires_grad) if r})
    grad_program = (torch.is_grad_enabled() or builder.grad_inside) and any(
        r and grad_transform.is_differentiable(v) for r, v in zip(requires_grad, trace.inputs)
    )
    check_leaf_outputs(builder, builder.grad.leaves, trace.outputs[: len(leaves)], with_grad if grad_program else None)
    writes = [
        outside.StateWrite(how, position[target] if how == "copy" else target, name, detach=out not in with_grad)
        for (how, target, name), out in zip(pending, trace.outputs[len(leaves) :])
    ]
    backward: Trace | None = None
    # grad mode is part of the key, so an entry traced without grad never runs with it
    if grad_program:
        refuse_returned_views(trace, len(leaves), mutable.updated, (), qualname(fn))
        run, backward = grad_transform.autograd_runner(trace, render, (), backend, requires_grad)
        if builder.grad_inside:  # an enable_grad() region in a call without grad
            run = grad_transform.with_grad_enabled(run)
    else:
        program, donated = trace, ()  # type: tuple[Trace, tuple[int, ...]]
        if write_back is not None and isinstance(backend, torch_backend.TorchBackend):  # KV cache updates run in place
            program, donated = in_place_updates(trace, mutable.updated)
            write_back.in_place = len(donated) == len(write_back.changes)  # a raise leaves eager's state
        refuse_returned_views(trace, len(leaves), mutable.updated, donated, qualname(fn))
        with logs.phase(logs.backend_log, name, f"compiling for the {backend.name} backend") as compiled:
            run = backend.compile_trace(program, render)
            compiled.detail = f"{len(trace.eqns)} equations"
        if autocast.autocast_state():  # part of the key: calls that find this entry have it too
            run = _autocast_off(run)
    # every state tensor the call updates, in place or written back, against every tensor the program
    # reads (captured ones too): eager's update would be seen through the other; refused before any update.
    # The one check of shared memory per call: the write-back relies on it (each updated tensor is an input)
    olds = {old for old, _ in mutable.updated}
    updated = tuple(j for j, v in enumerate(trace.inputs) if v in olds)
    if len(updated) != len(olds):
        raise RuntimeError(f"symscalar internal error: a state tensor {qualname(fn)} updates is not a program input")
    if updated:
        run = unshared(run, trace, updated, qualname(fn))
    if builder.grad.inference_values:
        run = _inference_outputs(run, trace, len(leaves), builder, qualname(fn))
    if rng_seed:
        run = _append_rng_seed(run)
    run = finish_with_state(run, output) if pending else output.wrap(run)
    modules = {**{i: m for i, (m, _) in watch.modules.items()}, **watch.used_modules}
    hooks.add(watch.used_modules, watch.names)
    guards = tuple(builder.guards)
    guard = guard_function(trace, guards, builder) if guards else None
    attributes, root_values = pystate.attribute_guards(watch, modules, qualname(fn))
    size_guards = guards_of(builder)
    if writes:  # written back after the program ran: eager's raising call has made the writes before the op
        run = loud_on_raise(run, "the module buffers or other tensors it reads from outside and updates")
    entry_run = outside.make_entry(
        run,
        watch.roots,
        captured,
        [(m, watch.modules[i][1] if i in watch.modules else None) for i, m in modules.items()],
        _with_size_guards(_with_absent_attributes(guard, trace, builder), trace, size_guards, qualname(fn)),
        writes,
        MISS,
        qualname(fn),
        aliases=watch.aliases(captured, modules),
        attributes=attributes,
        root_values=root_values,
        same=pystate.same_value,
    )
    if write_back is not None:
        entry_run = write_back.wrap(entry_run, MISS)
    return Entry(trace, entry_run, guards, backward, backend, guard, size_guards)


def _with_argument_roots(roots: outside.Roots, objects: list[tuple[str, Any]]) -> outside.Roots:
    """The roots of one entry: the function's, plus the objects passed as arguments (keyed by
    identity, see ``tree.holds_state``), whose tensors and modules the entry then reads by path
    and checks on every call, and whose attribute writes it replays."""
    if not objects:
        return roots
    extended = copy.copy(roots)
    extended.roots = [
        *roots.roots,
        *(outside.Root(f"_ss_o{len(roots.roots) + j}", obj, where, "const") for j, (where, obj) in enumerate(objects)),
    ]
    return extended


def _state_writes(
    fn: Any, builder: TraceBuilder, watch: outside.TraceWatch
) -> tuple[list[tuple[str, Any, str]], list[Any]]:
    """The state the traced function writes, as (how, target, name) and the traced values:
    in-place ops on captured tensors (``builder.write_backs``, copied in) first, then
    attribute assignments of traced tensors (assigned with ``setattr``)."""
    writes: list[tuple[str, Any, str]] = []
    values: list[Any] = []
    for target, value in builder.write_backs:  # a leaf requiring grad: checked by the tracer
        builder.unwrap(target)  # read on every call, by path when it has one
        writes.append(("copy", id(target), ""))
        values.append(value)
    for write in watch.writes:
        how = "set" if write.persistent is None else "buffer" if write.persistent else "buffer_np"
        writes.append((how, write.owner, write.name))
        values.append(write.value)
    return writes, values


def _autocast_off(compiled: Callable[..., Any]) -> Callable[..., Any]:
    """A compiled program run with autocast disabled: the trace already holds the casts
    autocast made while tracing (see ``symscalar.autocast``), and torch must not cast a second
    time (``grad.autograd_runner`` does the same for programs wired into autograd)."""

    def run(*args: Any) -> Any:
        state = autocast.autocast_state()
        if state is None:
            return compiled(*args)
        for device, _ in state:
            torch.set_autocast_enabled(device, False)
        try:
            return compiled(*args)
        finally:
            for device, _ in state:
                torch.set_autocast_enabled(device, True)

    return run


def _inference_outputs(
    run: Callable[..., Any], trace: Trace, n_leaves: int, builder: TraceBuilder, label: str
) -> Callable[..., Any]:
    """A program whose function entered ``torch.inference_mode()`` and returns what it computed
    there: eager returns inference tensors, so the program runs under inference mode. Refused
    when it also returns tensors computed outside the region (eager's mix cannot be rebuilt)."""
    outs = [v for v in trace.outputs[:n_leaves] if isinstance(v, TensorVar) and v not in trace.inputs]
    inside = [v in builder.grad.inference_values for v in outs]
    if not any(inside):
        return run
    if not all(inside) or len(trace.outputs) > n_leaves:
        raise UnsupportedOperationError(
            f"{label} returns tensors computed inside a torch.inference_mode() region it enters "
            "together with tensors (or state writes) computed outside it: eager returns inference "
            "tensors for the first only, which symscalar.jit cannot reproduce. Fix: use "
            "torch.no_grad() inside the function, or call the whole jitted function under "
            "torch.inference_mode()."
        )

    def run_in_inference_mode(*args: Any) -> Any:
        with torch.inference_mode():
            return run(*args)

    return run_in_inference_mode


def _depends_on(trace: Trace, sources: set[Any]) -> set[Any]:
    """The variables of ``trace`` computed from any of ``sources``."""
    reached = set(sources)
    for eqn in trace.eqns:
        if eqn.prim is stop_gradient_p:  # detach(), a no_grad region: no gradient flows on
            continue
        if not reached.isdisjoint(eqn.args):  # literals are never among the variables reached
            reached.update(eqn.outs)
    return reached


def _append_rng_seed(run: Callable[..., Any]) -> Callable[..., Any]:
    """Supply a program with random ops its RNG seed, drawn fresh from torch's default
    generator on every call (the seed is the trace's last input, after the captured tensors)."""

    def run_with_rng_seed(*args: Any) -> Any:
        return run(*args, draw_seed())

    return run_with_rng_seed


def _with_absent_attributes(
    guard: Callable[..., bool] | None, trace: Trace, builder: TraceBuilder
) -> Callable[..., bool] | None:
    """``guard``, and the argument tensors still lack the Python attributes the traced code
    found absent on them (``getattr(x, "scale", 1.0)``): one set later retraces, where reading
    it raises (TensorProxy.__getattr__), instead of the program silently keeping the default."""
    if not builder.absent_attributes:
        return guard
    position = {var: i for i, var in enumerate(trace.inputs)}
    absent = [(position[var], tuple(names)) for var, names in builder.absent_attributes.items()]

    def holds(*args: Any) -> bool:
        for i, names in absent:
            attributes = args[i].__dict__
            if any(name in attributes for name in names):
                return False
        return guard is None or guard(*args)

    return holds


def _with_size_guards(
    guard: Callable[..., bool] | None, trace: Trace, size_guards: tuple[SizeGuard, ...], label: str
) -> Callable[..., bool] | None:
    """``guard``, and the size guards the trace recorded hold for the call's sizes (read from
    the input tensors that have each dim): a call failing one retraces."""
    if not size_guards:
        return guard
    sizes_ok = checker(size_guards, input_dims(trace.inputs), label)
    if guard is None:
        return sizes_ok

    def holds(*args: Any) -> bool:
        return sizes_ok(*args) and guard(*args)

    return holds


def guard_function(
    trace: Trace, guards: tuple[tuple[ScalarVar, Any], ...], builder: TraceBuilder
) -> Callable[..., bool]:
    """A function of the program's inputs that is true when every specialize() guard holds."""
    wanted = {var for var, _ in guards}
    needed: list[Any] = []
    for eqn in reversed(trace.eqns):
        if any(out in wanted for out in eqn.outs):
            needed.append(eqn)
            wanted.update(a for a in eqn.args if isinstance(a, ScalarVar))
    guard_trace = Trace(trace.inputs, tuple(reversed(needed)), tuple(var for var, _ in guards), "guard")
    # compared like static keys: -0.0 is not 0.0, and a NaN guard holds for a NaN
    expected = tree.static_key(tuple(value for _, value in guards))
    compute = torch_backend.compile_trace(guard_trace)
    n_inputs = len(trace.inputs)

    def values(*args: Any) -> tuple[Any, ...]:
        # guards are computed from scalar inputs only: missing captured tensors are not read
        return tuple(compute(*args, *(None,) * (n_inputs - len(args))))

    def guard(*args: Any) -> bool:
        return bool(tree.static_key(compute(*args)) == expected)

    # for messages (explain, would_trace): the values and where each came from
    guard.values = values  # type: ignore[attr-defined]
    guard.expected = tuple(value for _, value in guards)  # type: ignore[attr-defined]
    guard.origins = tuple(  # type: ignore[attr-defined]
        ", ".join(sorted(builder.roots.get(var, ()))) or "a computed value" for var, _ in guards
    )
    return guard
