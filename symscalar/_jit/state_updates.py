"""State tensors of arguments updated in place by the program, not copied back whole.

A static KV cache layer's ``keys.index_copy_(2, cache_position, key_states)`` is traced out of
place (``t62 = scatter(t3, index, key_states)``: the trace is functional) and written back
into the caller's tensor after the call (``WriteBack``: ``keys.copy_(t62)``). Run so, a decode
step copies every layer's whole cache twice, once into the scatter's result and once back:
for a cache of a few thousand positions that is most of the step.

``in_place_updates`` rewrites the torch backend's copy of such a trace (the trace itself, as
``last_trace`` shows it, stays functional) so that each update whose result is a state output
written back into its input runs as the in-place op on the caller's tensor
(``t62 = scatter_(t3, ...)``, which returns ``t3`` itself; the write-back then has nothing to
copy). That computes what the trace computes only where nothing else can see the input's old
values after the update, which the rewrite checks once:

- the update's first operand is the input itself (or the result of another such update of it),
  read by no other equation, at no other operand position, and not an output: no view of it
  exists (a view is an equation reading it) and no later equation reads its old value;
- the updated tensors share no memory with each other or with any other input of the program
  (a parameter, another argument): ``unshared`` checks that on every call, since the tensors
  differ from call to call (refused, with the fix, when they do: eager would see the update
  through the other tensor too, where the trace reads the old values).

Only programs that no gradient flows through are rewritten (the autograd runner saves its
inputs), and only for the torch backend (the others compile the trace themselves). A failure
after the update (a later op raising) leaves the caller's tensor updated, as eager's
``index_copy_`` would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symscalar.errors import UnsupportedOperationError
from symscalar.ops.indexing import index_put_p, scatter_p
from symscalar.trace import Eqn, Primitive, TensorVar, Trace, Var, is_var

__all__ = ["in_place_updates", "refuse_returned_views", "unshared"]


def _scatter_into(x: Any, index: Any, src: Any, *, dim: int) -> Any:
    return x.scatter_(dim, index, src)


def _index_put_into(x: Any, values: Any, *indices: Any, accumulate: bool) -> Any:
    return x.index_put_(indices, values, accumulate)


# out-of-place primitive -> the in-place form, updating and returning its first operand
_IN_PLACE: dict[Primitive[Any], Primitive[Any]] = {
    prim: Primitive(f"{prim.name}_", impl, prim.meta, may_alias=True, register=False)
    for prim, impl in ((scatter_p, _scatter_into), (index_put_p, _index_put_into))
}


def in_place_updates(trace: Trace, updates: Iterable[tuple[Var, Var]]) -> tuple[Trace, tuple[int, ...]]:
    """``trace`` with the updates of ``updates`` (``(input, state output)``: the output is
    written back into the input after every call) that can run in place rewritten so, and the
    positions of the inputs they update (see the module docstring); ``trace`` and ``()`` when
    none can."""
    eqns = trace.eqns
    readers: dict[Var, list[int]] = {}
    producer: dict[Var, int] = {}
    for i, eqn in enumerate(eqns):
        for a in eqn.args:
            if is_var(a):
                readers.setdefault(a, []).append(i)
        for o in eqn.outs:
            producer[o] = i
    returned = {a for a in trace.outputs if is_var(a)}
    inputs = {v: j for j, v in enumerate(trace.inputs)}
    rewritten: dict[int, Eqn] = {}
    donated: list[int] = []
    for old, new in updates:
        chain = _chain(eqns, readers, producer, returned, old, new)
        if chain is None or old not in inputs or old in returned:
            continue
        for i in chain:
            rewritten[i] = dataclasses.replace(eqns[i], prim=_IN_PLACE[eqns[i].prim])
        donated.append(inputs[old])
    if not donated:
        return trace, ()
    new_eqns = tuple(rewritten.get(i, eqn) for i, eqn in enumerate(eqns))
    return dataclasses.replace(trace, eqns=new_eqns), tuple(donated)


def _chain(
    eqns: Sequence[Eqn],
    readers: dict[Var, list[int]],
    producer: dict[Var, int],
    returned: set[Var],
    old: Var,
    new: Var,
) -> list[int] | None:
    """The equations (last first) that take ``old`` to ``new`` by updates of their first
    operand that may run in place, each operand read by its update alone; None if there are
    none such."""
    chain: list[int] = []
    value = new
    while value is not old:
        i = producer.get(value)
        if i is None or eqns[i].prim not in _IN_PLACE:
            return None
        base = eqns[i].args[0]
        if not is_var(base) or readers.get(base) != [i] or (base is not old and base in returned):
            return None
        chain.append(i)
        value = base
    return chain or None


def unshared(run: Callable[..., Any], trace: Trace, donated: tuple[int, ...], label: str) -> Callable[..., Any]:
    """``run`` (the rewritten ``trace``), refusing a call where a tensor it updates (``donated``:
    the positions of those it updates in place, and of those written back after it, so that the
    call is refused before it changed any) shares memory with another of its inputs. The only
    check of shared memory on a call with state arguments (``WriteBack`` relies on it): each
    input's storage is looked up once, and the exact test (empty tensors share nothing) runs
    only where two pointers are equal."""
    others = tuple(j for j, v in enumerate(trace.inputs) if isinstance(v, TensorVar) and j not in donated)

    def run_unshared(*args: Any) -> Any:
        updated = {args[j].untyped_storage().data_ptr() for j in donated}
        if len(updated) < len(donated) or not updated.isdisjoint(
            [args[j].untyped_storage().data_ptr() for j in others]
        ):
            _check_unshared(args, donated, others, label)
        return run(*args)

    run_unshared.__source__ = getattr(run, "__source__", None)  # type: ignore[attr-defined]
    return run_unshared


def _check_unshared(args: Sequence[Any], donated: tuple[int, ...], others: tuple[int, ...], label: str) -> None:
    """Refuse the call (see ``unshared``) unless the pointers that are equal are of empty tensors."""
    ptrs = [args[j].untyped_storage().data_ptr() for j in donated]
    updated = set(ptrs)
    updated.discard(0)  # an empty tensor has no memory to share
    if len(updated) < len(ptrs) - ptrs.count(0) or not updated.isdisjoint(
        {args[j].untyped_storage().data_ptr() for j in others}
    ):
        raise UnsupportedOperationError(
            f"{label}: tensors of a state object passed to it (a KV cache layer's keys or values), which the "
            "call updates in place, share memory with each other or with another tensor the call reads (an "
            "argument, a parameter or buffer): eager would see each update through the other tensor. Give each "
            "cache layer tensors of its own (a fresh cache, or .clone() the shared tensor)."
        )


def refuse_returned_views(
    trace: Trace, n_leaves: int, updates: Sequence[tuple[Var, Var]], donated: tuple[int, ...], label: str
) -> None:
    """Refuse a program returning a view (a slice, a reshape) of a state tensor it updates out
    of place (with grad, for the backends that compile the trace themselves, or where the old
    values are read too). Eager returns a view of the caller's tensor, which sees the next
    call's update; the program's view is of its own copy, which the write-back copies from, so
    it would silently keep this call's values. The state tensor itself is returned as the
    caller's (``WriteBack``); an update run in place (``in_place_updates``) is the caller's
    tensor, and so are its views."""
    in_place = {trace.inputs[j] for j in donated}
    producer = {o: eqn for eqn in trace.eqns for o in eqn.outs}
    versions: set[Var] = set()  # the values the state tensors take in the program, but their inputs
    for old, new in updates:
        if old in in_place:
            continue
        value: Any = new
        while is_var(value) and value is not old and value not in versions:
            versions.add(value)
            eqn = producer.get(value)
            value = eqn.args[0] if eqn is not None and eqn.args else None
    if not versions:
        return
    views = set(versions)
    for eqn in trace.eqns:
        if eqn.prim.may_alias and eqn.args and is_var(eqn.args[0]) and eqn.args[0] in views:
            views.update(eqn.outs)
    if any(is_var(a) and a in views and a not in versions for a in trace.outputs[:n_leaves]):
        raise UnsupportedOperationError(
            f"{label} returns a view (a slice, a reshape) of a tensor of a state object passed to it (a KV cache "
            "layer's keys or values) that it updates in place: eager's view sees the next call's update of the "
            "cache, and the program's, computed from its own copy of the updated tensor (with grad enabled, or "
            "for a backend other than torch), would not. Return the state tensor itself (the caller's tensor is "
            "returned), a copy (.clone()), or call it under torch.no_grad() with the torch backend."
        )
