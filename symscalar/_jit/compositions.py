"""How ``symscalar.jit`` composes with torch's other wrappers: refused where it would be silently
wrong or fail deep inside torch, and kept out of ``torch.compile``'s way.

- ``jit(module)`` of a class overriding ``__call__``: jit calls ``forward`` (with hooks), so
  the override would never run. Refused.
- ``jit(DDP(model))``: DistributedDataParallel's Python forward (``prepare_for_backward``,
  buffer broadcast) would run once, while tracing; from the second step gradients are no
  longer all-reduced. Refused with the composition that works, ``DDP(jit(model))``.
- ``jit(torch.compile(f))``, ``jit(torch.jit.script(f))``: the compiled callable is not Python
  code jit can trace. Refused, naming the fix.
- ``torch.compile`` over code that calls a jitted function: the per-call function is marked
  like ``torch.compiler.disable`` marks a function (dynamo graph-breaks at the call and runs it,
  and everything it calls, eagerly). Not the public wrapper itself: it would add ~1 µs to every
  call of every jitted function; the markers cost nothing outside dynamo.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from symscalar.errors import UnsupportedOperationError

__all__ = ["check_jittable", "hide_from_dynamo"]

try:  # torch's own markers for code dynamo must run eagerly (see torch._dynamo.skip_code)
    from torch._C._dynamo.eval_frame import _FrameAction as FrameAction
    from torch._C._dynamo.eval_frame import _FrameExecStrategy as FrameExecStrategy
    from torch._C._dynamo.eval_frame import set_code_exec_strategy
except ImportError:  # pragma: no cover - a torch without dynamo
    set_code_exec_strategy = None  # type: ignore[assignment]


def check_jittable(fn: Any) -> None:
    """Raise a clear error for a callable jit cannot trace faithfully."""
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    if isinstance(fn, torch.nn.parallel.DistributedDataParallel):
        raise UnsupportedOperationError(
            "symscalar.jit(DistributedDataParallel(model)) is not supported: DDP's Python forward "
            "(prepare_for_backward, buffer broadcast) would run once, at trace time, and later steps "
            "would not all-reduce gradients. Fix: wrap the jitted model in DDP instead, "
            "DistributedDataParallel(symscalar.jit(model))."
        )
    dynamo = sys.modules.get("torch._dynamo.eval_frame")  # imported by the first torch.compile
    if (dynamo is not None and isinstance(fn, dynamo.OptimizedModule)) or hasattr(fn, "_torchdynamo_orig_callable"):
        raise UnsupportedOperationError(
            f"symscalar.jit(torch.compile({name})) is not supported: a torch.compile'd callable runs "
            "through dynamo's frame evaluation, which symscalar cannot trace. Fix: jit the function "
            "or module itself (symscalar.jit(f)); torch.compile(symscalar.jit(f)) runs the jitted "
            "function eagerly inside the compiled code."
        )
    if isinstance(fn, (torch.jit.ScriptFunction, torch.jit.ScriptModule)):
        raise UnsupportedOperationError(
            f"symscalar.jit of a TorchScript callable ({type(fn).__name__}) is not supported: "
            "TorchScript runs its own interpreter, which symscalar cannot trace. Fix: jit the Python "
            "function before torch.jit.script (symscalar.jit(f), not symscalar.jit(torch.jit.script(f)))."
        )
    if isinstance(fn, torch.nn.Module) and type(fn).__call__ is not torch.nn.Module.__call__:
        raise UnsupportedOperationError(
            f"symscalar.jit({type(fn).__name__}(...)): the class overrides __call__, but a jitted "
            "module runs forward (with its hooks), so the override would silently not run. Fix: "
            "move that logic into forward (or a forward pre-hook), or jit a function that calls "
            "the module, symscalar.jit(lambda *args: model(*args)), if what __call__ does is the "
            "same on every call."
        )


def hide_from_dynamo(fn: Any, codes: tuple[Any, ...]) -> None:
    """Make ``torch.compile`` graph-break at a call of ``fn`` and run ``codes`` (and all they
    call) eagerly: the markers ``torch.compiler.disable`` sets, without its per-call wrapper."""
    fn._torchdynamo_disable = True
    fn._torchdynamo_disable_msg = "a symscalar.jit function runs its own compiled program"
    if set_code_exec_strategy is not None:
        for code in codes:
            set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))
