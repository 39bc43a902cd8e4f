"""transformers' functions whose eager branch symscalar traces (``compiling.eager_branch_in``).

While tracing, ``torch.compiler.is_compiling()`` answers True so that libraries take their
value-free branches (see ``symscalar/compiling.py``). Where transformers' compile branch is not its
eager computation, the program's numbers were not eager's:

- ``sdpa_attention_forward``: for a one-token decode step with grouped key/value heads and a mask,
  eager packs the query heads of each group into rows (``pack_gqa``: one attention over the
  key/value heads) and torch.compile repeats the key/value heads (``repeat_kv``). Same attention,
  other blocks for the kernel: the logits of every decode step were 1 ulp from eager's. The eager
  branch reads shapes only (``q_length == 1``), so it is traced.

And ``output_hidden_states=True`` / ``output_attentions=True``: transformers records them with
forward hooks on the layers, installed by the model's forward the first time they are asked for
(an attribute write a trace cannot replay: refused, and every later call refused for the hooks
left installed). ``prepare(fn)`` installs them when a model's forward is jitted, as that forward
would (``maybe_install_capturing_hooks`` on each module whose forward captures outputs), and their
code is traced through: outside a call that asks, they do nothing; in one, they append the traced
states to the collector the call returns.

``register()`` reads the modules from ``sys.modules``, so that this module does not import
transformers: ``symscalar.jit`` calls it when transformers is loaded.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import torch

from symscalar.compiling import eager_branch_in
from symscalar.state.hooks import trace_hooks_through

__all__ = ["register", "prepare"]

_registered: set[int] = set()


def register() -> None:
    """Register the functions of the transformers modules already imported (idempotent)."""
    sdpa = sys.modules.get("transformers.integrations.sdpa_attention")
    import_utils = sys.modules.get("transformers.utils.import_utils")
    if sdpa is None or import_utils is None or id(sdpa) in _registered:
        return
    function = getattr(sdpa, "sdpa_attention_forward", None)
    forwarders = tuple(
        f for f in (getattr(import_utils, name, None) for name in ("is_torchdynamo_compiling", "is_tracing")) if f
    )
    if callable(function) and forwarders:
        eager_branch_in(function, forwarders=forwarders)
    _registered.add(id(sdpa))


def _capturing() -> Any:
    return sys.modules.get("transformers.utils.output_capturing")


def _register_output_capturing() -> None:
    install = getattr(_capturing(), "install_output_capuring_hook", None)
    for const in getattr(getattr(install, "__code__", None), "co_consts", ()):
        if isinstance(const, types.CodeType) and const.co_name == "output_capturing_hook":
            trace_hooks_through(const)


def prepare(fn: Any) -> None:
    """Install transformers' output-capturing hooks in the model ``fn`` is (or is the forward of),
    on the modules whose forward would install them (``capture_outputs``)."""
    capturing = _capturing()
    install = getattr(capturing, "maybe_install_capturing_hooks", None)
    owner = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if install is None or not isinstance(owner, torch.nn.Module):
        return
    _register_output_capturing()
    for module in owner.modules():
        if _captures_outputs(getattr(type(module), "forward", None), getattr(capturing, "__file__", None)):
            install(module)


def _captures_outputs(forward: Any, capturing_file: str | None) -> bool:
    """Whether ``forward`` is decorated with ``capture_outputs`` (among its other decorators)."""
    for _ in range(16):  # the decorators' wrappers, outermost first
        code = getattr(forward, "__code__", None)
        if code is None:
            return False
        if code.co_name == "wrapper" and code.co_filename == capturing_file:
            return True
        forward = getattr(forward, "__wrapped__", None)
    return False
