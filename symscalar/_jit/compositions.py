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
import types
from collections.abc import Iterator
from typing import Any

import torch
import torch.utils.checkpoint

from symscalar.compiling import patch_while_tracing
from symscalar.errors import UnsupportedOperationError
from symscalar.proxy import TensorProxy
from symscalar.types import current_tracer

__all__ = ["check_jittable", "hide_from_dynamo", "check_no_functorch"]


def check_no_functorch(label: str) -> None:
    """Refuse a call under a torch.func transform (grad, jacrev, vjp, vmap): the program is a
    ``torch.autograd.Function`` without functorch support, and tracing would see the
    transform's wrapped tensors."""
    if torch._C._are_functorch_transforms_active():
        raise UnsupportedOperationError(
            f"{label} is called under a torch.func transform (torch.func.grad, jacrev, jacfwd, vjp "
            "or vmap), which symscalar.jit does not support. Fix: differentiate the jitted "
            "function with torch.autograd (loss.backward(), torch.autograd.grad), or apply the "
            "transform to the function without jit."
        )


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


# -- torch.utils.checkpoint inside a traced function ----------------------------------------
# Checkpointing is a recompute policy: the values and gradients are those of the function
# without it. While a trace runs, ``checkpoint(fn, *args)`` (any spelling: reentrant or not,
# preserve_rng_state or not, ``checkpoint`` bound early with ``from ... import``) traces ``fn``
# through, so the program computes what eager computes; the recompute itself is not honoured
# (the program keeps what its backward needs). The two functions ``checkpoint`` calls are
# swapped while tracing (both are read from torch.utils.checkpoint's globals at each call).


class _TracedThroughCheckpoint:
    """``CheckpointFunction`` while tracing: ``apply(fn, preserve_rng_state, *args)`` calls fn."""

    def __init__(self, original: Any) -> None:
        self.original = original

    def apply(self, function: Any, preserve: Any, *args: Any) -> Any:
        if current_tracer.get() is None:
            return self.original.apply(function, preserve, *args)
        if not any(getattr(a, "requires_grad", False) is True for a in args):
            with torch.no_grad():  # eager: no input requires grad, so neither does the output
                return function(*args)
        return function(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


def _traced_through_generator(original: Any) -> Any:
    def generator(*args: Any, **kwargs: Any) -> Iterator[None]:
        if current_tracer.get() is None:
            yield from original(*args, **kwargs)
            return
        yield  # checkpoint then calls the function itself, which is traced

    return generator


patch_while_tracing("torch.utils.checkpoint", "CheckpointFunction", _TracedThroughCheckpoint)
patch_while_tracing("torch.utils.checkpoint", "_checkpoint_without_reentrant_generator", _traced_through_generator)


# -- a torch.jit.script'ed helper called inside a traced function ----------------------------
# TorchScript's interpreter cannot take traced values. A scripted *function* keeps the Python
# function it was compiled from (``_torchdynamo_inline``, which dynamo inlines for the same
# reason): while tracing, calling it traces that function, which runs the same torch ops. Not
# when code it reaches asks ``torch.jit.is_scripting()``: the Python function would take the
# other branch than the scripted one, so it is refused. A scripted *module* keeps no Python
# forward: ``state/hooks.py`` refuses it when the traced function calls it.

_SCRIPTING_QUERIES = frozenset({"is_scripting", "_is_scripting"})


def _asks_is_scripting(fn: Any) -> bool:
    """Whether the code of ``fn``, of the functions nested in it, or of the Python functions
    its code names in its globals (transitively) reads ``torch.jit.is_scripting``."""
    seen: set[int] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        codes = [code]
        while codes:
            c = codes.pop()
            if _SCRIPTING_QUERIES.intersection(c.co_names):
                return True
            codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
            g = getattr(f, "__globals__", {})
            todo += [g[n] for n in c.co_names if isinstance(g.get(n), types.FunctionType)]
    return False


def _traced_through_script_function(original: Any) -> Any:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if current_tracer.get() is None:
            return original(self, *args, **kwargs)
        fn = getattr(self, "_torchdynamo_inline", None)
        name = getattr(self, "qualified_name", None) or getattr(self, "__name__", "?")
        if not isinstance(fn, types.FunctionType) or _asks_is_scripting(fn):
            why = (
                "it reads torch.jit.is_scripting(), so its Python code differs from the scripted one"
                if isinstance(fn, types.FunctionType)
                else "it keeps no Python function to trace"
            )
            raise UnsupportedOperationError(
                f"a torch.jit.script'ed function ({name}) is called inside a symscalar.jit function, "
                f"and {why}: TorchScript's interpreter cannot run on traced values. Fix: call the "
                "Python function itself (before torch.jit.script) inside the jitted function."
            )
        return fn(*args, **kwargs)

    return call


patch_while_tracing(torch.jit.ScriptFunction, "__call__", _traced_through_script_function)


# -- a custom torch.autograd.Function applied to traced values -------------------------------
# Its backward is Python code autograd calls at backward time, which a trace does not record;
# tracing its forward alone would differentiate the forward and silently drop the custom
# backward (a straight-through estimator's, a recomputing one's). ``Function.apply`` first
# unwraps functorch's dead wrappers, a C++ call that fails deep inside torch on a traced value:
# refused there by name, with the fix.


def _refusing_custom_functions(original: Any) -> Any:
    def unwrap_dead_wrappers(args: tuple[Any, ...]) -> tuple[Any, ...]:
        if current_tracer.get() is None or not any(isinstance(a, TensorProxy) for a in args):
            unwrapped: tuple[Any, ...] = original(args)
            return unwrapped
        function = sys._getframe(1).f_locals.get("cls")
        name = getattr(function, "__qualname__", "a torch.autograd.Function")
        raise UnsupportedOperationError(
            f"{name}.apply (a custom torch.autograd.Function) on traced values is not supported by "
            "symscalar: its backward is Python code autograd runs at backward time, which a trace does "
            "not record, and tracing its forward alone would ignore that backward. Fix: apply it outside "
            "the jitted function, or compute it with torch ops (its forward's) where the backward is "
            "their derivative (e.g. transformers' BloomGelu, whose backward is the derivative of "
            "bloom_gelu_forward: replace each by a module returning bloom_gelu_forward(x))."
        )

    return unwrap_dead_wrappers


patch_while_tracing("torch._functorch.utils", "unwrap_dead_wrappers", _refusing_custom_functions)
