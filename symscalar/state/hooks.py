"""Module hooks: which jit can honour, and running the jitted module's own around the program.

The jitted module's forward (pre-)hooks run eagerly around the compiled program on every call
(``call_with_hooks``); any other hook would run once, at trace time, on traced values, so it
is refused (``refused_hooks``) while tracing (``_Recorder``) and whenever the hook epoch moves
(``HookWatch``).
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Callable
from typing import Any, Protocol

import torch
from torch.nn.modules import module as nn_module
from torch.utils.hooks import RemovableHandle

from symscalar.errors import UnsupportedOperationError
from symscalar.types import current_tracer


def hook_epoch() -> int:
    """A number that changes whenever any hook is registered anywhere in torch (every
    ``register_*hook`` returns a ``RemovableHandle``, which takes the next id): jit compares it
    on every call and re-checks the hooks of the modules it traced only when it moved."""
    return RemovableHandle.next_id


def describe_module(module: torch.nn.Module, names: dict[int, str]) -> str:
    name = names.get(id(module))
    return f"{type(module).__name__} {name!r}" if name else type(module).__name__


def hook_names(hooks: dict[int, Any]) -> str:
    return ", ".join(getattr(h, "__qualname__", repr(h)) for h in hooks.values())


_MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
_GLOBAL_HOOKS = {
    "register_module_forward_pre_hook": "_global_forward_pre_hooks",
    "register_module_forward_hook": "_global_forward_hooks",
    "register_module_full_backward_pre_hook": "_global_backward_pre_hooks",
    "register_module_full_backward_hook": "_global_backward_hooks",
}


def only_requires_grad(hook: Any) -> bool:
    """Whether ``hook`` only calls ``requires_grad_`` on its arguments: no globals, no closure,
    no other attribute, no nested function (transformers' ``enable_input_require_grads`` and
    peft's ``make_inputs_require_grad``: ``output.requires_grad_(True)``). Such a forward hook of
    a submodule is traced through like the module's forward: what it does is recorded
    (``GradRegions.set_requires_grad``), and it keeps no Python state a later call would miss."""
    code = getattr(hook, "__code__", None)
    return (
        code is not None
        and code.co_names == ("requires_grad_",)
        and not code.co_freevars
        and not any(isinstance(c, type(code)) for c in code.co_consts)
    )


# The code of forward hooks traced through like the module's forward (``trace_hooks_through``).
_TRACED_THROUGH: set[Any] = set()


def trace_hooks_through(code: Any) -> None:
    """Trace through the forward hooks whose code is ``code``: hooks that act only on objects
    the traced call itself creates (transformers' ``output_capturing_hook`` appends the hidden
    states to a collector its model's forward sets for the call, and does nothing otherwise), so
    running them while tracing records what they do on every call."""
    _TRACED_THROUGH.add(code)


def _traced_through(hook: Any) -> bool:
    return only_requires_grad(hook) or getattr(hook, "__code__", None) in _TRACED_THROUGH


def refused_hooks(module: torch.nn.Module, top: torch.nn.Module | None, names: dict[int, str]) -> str | None:
    """Why ``module``'s hooks cannot be honoured, or None. The jitted module's own forward
    (pre-)hooks run eagerly around the compiled program; a submodule's forward hook that only
    marks its output to require grad (``only_requires_grad``) is traced through; every other
    hook would run once, at trace time, on traced values."""
    if isinstance(module, torch.jit.ScriptModule):
        return (
            f"the traced function calls a torch.jit.script'ed module ({module.original_name}"
            f"{f' {names[id(module)]!r}' if names.get(id(module)) else ''}): "
            "TorchScript's interpreter cannot run on traced values, and a scripted module keeps no "
            "Python forward to trace. Fix: call the Python module itself (the nn.Module before "
            "torch.jit.script) inside the jitted function."
        )
    fsdp = sys.modules.get("torch.distributed.fsdp")
    if fsdp is not None and module is not top and isinstance(module, fsdp.FSDPModule):
        return (
            f"submodule {describe_module(module, names)} is sharded with "
            "torch.distributed.fsdp.fully_shard: its hooks (all-gather before forward, reshard and "
            "reduce-scatter after) would run once, while tracing, on traced values. Fix: jit the "
            "blocks inside the sharded model, before sharding them: `block.forward = "
            "symscalar.jit(block.forward)` (or `model.layers[i] = symscalar.jit(block)`), then "
            "fully_shard(block) and fully_shard(model); or shard only the root, "
            "symscalar.jit(fully_shard(model)). See docs/distributed.md."
        )
    for attr in _MODULE_HOOKS:
        hooks = getattr(module, attr)
        if not hooks or (module is top and attr in ("_forward_pre_hooks", "_forward_hooks")):
            continue
        if attr == "_forward_hooks" and all(_traced_through(h) for h in hooks.values()):
            continue
        kind = attr.strip("_").replace("_hooks", " hook").replace("_", " ")
        where = "the jitted module" if module is top else f"submodule {describe_module(module, names)}"
        return (
            f"{where} has a {kind} ({hook_names(hooks)}); symscalar.jit runs the forward "
            "(pre-)hooks of the jitted module itself around the program on every call, but cannot "
            "honour hooks of submodules or backward hooks: they would run once, while tracing, on "
            "traced values. Fix: remove the hook (handle.remove()), or call the hooked module "
            "outside the jitted function."
        )
    for register, attr in _GLOBAL_HOOKS.items():
        hooks = {k: h for k, h in getattr(nn_module, attr).items() if not isinstance(h, _Recorder)}
        if hooks:
            return (
                f"a global module hook is registered with torch.nn.modules.module.{register} "
                f"({hook_names(hooks)}); it would run once, while tracing, on traced values. Fix: "
                "remove it while calling jitted functions that call modules."
            )
    return None


class _Watch(Protocol):
    """What ``_Recorder`` needs of the ``watch.TraceWatch`` it reports to."""

    builder: Any

    def called(self, module: torch.nn.Module) -> None: ...


class _Recorder:
    """A global forward pre-hook installed while tracing: it records every module the traced
    function calls and refuses, at once, a module whose hooks cannot be honoured."""

    def __init__(self, watch: _Watch) -> None:
        self.watch = watch

    def __call__(self, module: torch.nn.Module, args: Any) -> None:
        if current_tracer.get() is not self.watch.builder:
            return  # another thread, or an eager call
        self.watch.called(module)


# ----------------------------------------------------------------------------------------
# Hooks of the jitted module, run eagerly around the compiled program


# (module, args, kwargs) of the JitModule call under way, as the caller passed them: the
# module's hooks must see those (eager's ``_call_impl``), not the arguments bound with their
# defaults filled in, which a hook reading ``len(args)`` or returning new kwargs tells apart
RAW_CALL: contextvars.ContextVar[tuple[torch.nn.Module, tuple[Any, ...], dict[str, Any]] | None] = (
    contextvars.ContextVar("symscalar_raw_call", default=None)
)


def call_with_hooks(
    module: torch.nn.Module, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``module(*args, **kwargs)`` with ``forward`` replaced by ``call`` (the compiled program):
    the module's forward pre-hooks and forward hooks run eagerly, exactly as
    ``torch.nn.Module._call_impl`` runs them (a pre-hook may replace the arguments, a forward
    hook the output), with the arguments as the caller passed them where ``RAW_CALL`` has them."""
    raw = RAW_CALL.get()
    if raw is not None and raw[0] is module:
        RAW_CALL.set(None)  # consumed: a nested call of the same module binds its own
        args, kwargs = raw[1], dict(raw[2])
    for hook_id, hook in list(module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    out = call(*args, **kwargs)
    for hook_id, hook in list(module._forward_hooks.items()):
        if hook_id in module._forward_hooks_with_kwargs:
            result = hook(module, args, kwargs, out)
        else:
            result = hook(module, args, out)
        if result is not None:
            out = result
    return out


class HookWatch:
    """The modules a jitted function's traces called, re-checked for hooks whenever the hook
    epoch moves (see ``hook_epoch``)."""

    def __init__(self, top: torch.nn.Module | None) -> None:
        self.top = top
        self.modules: dict[int, torch.nn.Module] = {}
        self.names: dict[int, str] = {}

    def add(self, modules: dict[int, torch.nn.Module], names: dict[int, str]) -> None:
        self.modules.update(modules)
        self.names.update(names)

    def check(self) -> bool:
        """Raise if a traced module now has a hook jit cannot honour; return whether the
        jitted module has forward (pre-)hooks to run around the program."""
        for module in self.modules.values():
            reason = refused_hooks(module, self.top, self.names)
            if reason:
                raise UnsupportedOperationError(reason)
        top = self.top
        return top is not None and bool(top._forward_pre_hooks or top._forward_hooks)
