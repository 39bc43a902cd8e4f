"""While symscalar traces, ``torch.compiler.is_compiling()`` answers True in the tracing thread.

Why: model libraries decide some things from tensor *values* in eager mode, as shortcuts
(transformers skips building an attention mask when ``padding_mask.all()``; torch's
``TransformerEncoder`` inspects a padding mask before its nested-tensor fast path). A trace
cannot know values, so such a branch is a ``bool(tensor)`` that symscalar must refuse. The
same libraries keep a value-free branch for ``torch.compile`` / ``torch.export`` and select it
with ``torch.compiler.is_compiling()``: it computes the same result (the mask is always built;
the fast path is skipped), because torch.compile's own contract is to match eager. Answering
True while tracing, as ``thunder.jit`` does (a lookaside in ``thunder/core/jit_ext.py``) and
as ``torch.export``'s non-strict mode does (``torch._export.utils._compiling_state_context``),
lets symscalar take those branches.

Unlike torch.export, which sets a process-wide flag, the answer is per thread/context: the
function is swapped for a wrapper only while a trace runs, and the wrapper says True only
where that trace runs (``current_tracer``), so eager code in other threads is unaffected.
``torch.compiler.is_exporting()`` stays False. Code that bound ``is_compiling`` before (``from
torch.compiler import is_compiling``) sees torch's own answer: its eager branch, which
symscalar traces or refuses as usual. The branch taken is fixed in the trace, like every
other Python decision; it is the same on every call, so no guard is needed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from symscalar.types import current_tracer

__all__ = ["reporting_compiling"]

_torch_is_compiling = torch.compiler.is_compiling
_lock = threading.Lock()
_active = 0  # traces running in any thread; the wrapper is installed while it is > 0


def _is_compiling() -> bool:
    """``torch.compiler.is_compiling`` while a symscalar trace runs somewhere."""
    return current_tracer.get() is not None or _torch_is_compiling()


@contextmanager
def reporting_compiling() -> Iterator[None]:
    """Make ``torch.compiler.is_compiling()`` True for the trace running in this context."""
    global _active
    with _lock:
        if _active == 0:
            torch.compiler.is_compiling = _is_compiling
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                torch.compiler.is_compiling = _torch_is_compiling
