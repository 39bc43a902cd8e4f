"""What a traced function reads and writes outside its arguments, kept honest on every call.

A function traced by ``symscalar.jit`` may read tensors it was not passed (a module's
parameters and buffers, a closed-over or global tensor), may depend on modules (their
``training`` flag, their hooks), and may write state (``self.avg = 0.9 * self.avg + ...``).
A cache entry is valid only while what its trace assumed still holds, so this package

- finds, for every captured tensor, a *path* from the jitted callable (``self._modules['fc']
  ._parameters['weight']``, a closure cell, a global) and generates the entry's per-call
  *state guard*: it reads each captured tensor by path (a replaced parameter is seen), checks
  its shape, dtype, device and requires_grad against the trace, checks the identity and
  ``training`` flag of every module the trace depends on, and answers "miss" (retrace) when
  anything differs — never a stale value;
- watches tracing: it snapshots the state reachable from the callable, records the modules
  called, refuses hooks it cannot honour, turns an attribute assignment of a traced tensor
  into a *write-back* (an extra program output assigned after every call) and restores the
  snapshot, so tracing itself has no side effect and no ``TensorProxy`` is left anywhere;
- writes the state back after every call with eager's semantics.

One concern per module, as in ``_jit/``: ``paths`` (roots, paths and the walk that finds
them), ``hooks`` (which module hooks jit honours, and running the jitted module's own),
``watch`` (the snapshot, writes and refusals while tracing), ``guards`` (the generated per-entry
state guard and write-back). This module re-exports what ``_jit`` uses.
"""

from symscalar.state.guards import StateWrite, copy_into, make_entry, set_buffer
from symscalar.state.hooks import HookWatch, call_with_hooks, hook_epoch, refused_hooks
from symscalar.state.paths import Captured, Path, Root, Roots, Walk
from symscalar.state.watch import AttributeWrite, TraceWatch

__all__ = [
    "AttributeWrite",
    "Captured",
    "HookWatch",
    "Path",
    "Root",
    "Roots",
    "StateWrite",
    "TraceWatch",
    "Walk",
    "call_with_hooks",
    "copy_into",
    "hook_epoch",
    "make_entry",
    "refused_hooks",
    "set_buffer",
]
