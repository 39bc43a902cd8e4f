"""While symscalar traces, ``torch.compiler.is_compiling()`` answers True in the tracing thread,
and ``isinstance(traced_tensor, torch.Tensor)`` answers True in user and library code.

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

Where a library's compile branch computes something else than its eager branch (transformers'
attention packs the grouped query heads of a one-token decode step under eager and repeats the
key/value heads under torch.compile: the same attention, rounded differently, so the program's
logits were 1 ulp from eager's), and the eager branch is value-free too, the function is
registered with ``eager_branch_in``: ``is_compiling()`` asked from it (directly or through a
registered forwarder such as transformers' ``is_torchdynamo_compiling``) gets torch's own answer.

``isinstance``: a traced tensor (``TensorProxy``) is not a ``torch.Tensor`` subclass (see the
comment above it in ``proxy.py``: faking ``__class__`` crashes torch's C++ argument parser).
Yet user and library code branches on ``isinstance(x, torch.Tensor)`` / ``torch.is_tensor(x)``
(``x * 2 if isinstance(x, torch.Tensor) else x``, transformers' mask helpers), and answering
False there silently computes something other than eager. So while a trace runs,
``builtins.isinstance`` is a wrapper that answers for a proxy what it would answer for the
tensor it stands for: a ``Parameter`` argument is a ``Parameter`` (its class is part of the
cache key), a computed value a ``Tensor``; except when the caller
is symscalar itself, which must tell proxies from real tensors. C code (torch's argument
parser) calls ``PyObject_IsInstance`` directly and never sees the wrapper. Every other object
gets the builtin's answer, so other threads are unaffected but for a few hundred nanoseconds a
call while a trace runs. Left: ``type(x) is torch.Tensor`` and ``issubclass(type(x), ...)``
still see ``TensorProxy`` (documented in docs/limitations.md).
"""

from __future__ import annotations

import builtins
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

import torch

from symscalar.generated import called_from_symscalar
from symscalar.types import current_tracer

__all__ = [
    "reporting_compiling",
    "answer_isinstance_for",
    "answer_int_for",
    "patch_while_tracing",
    "called_from_symscalar",
    "eager_branch_in",
]

_torch_is_compiling = torch.compiler.is_compiling
_lock = threading.Lock()
_active = 0  # traces running in any thread; the wrappers are installed while it is > 0
# (module or class, attribute, wrap): while any trace runs, the attribute is wrap(original)
_PATCHES: list[tuple[str | type, str, Callable[[Any], Any]]] = []
_saved: list[tuple[Any, str, Any]] = []  # (module, attribute, original) of the installed ones


def patch_while_tracing(module: str | type, name: str, wrap: Callable[[Any], Any]) -> None:
    """Replace ``module.name`` by ``wrap(original)`` while any trace runs in any thread (the
    installation is counted, so nested and concurrent traces share it). The replacement must
    behave as the original outside a tracing context (``current_tracer`` is None there): other
    threads run eager code meanwhile. A module not imported when a trace starts is skipped.
    ``module`` may be a class instead of a module's name (a method of a C type, e.g.
    ``torch._C.ScriptFunction.__call__``)."""
    _PATCHES.append((module, name, wrap))


_builtin_isinstance = builtins.isinstance
_proxy_type: type | None = None


def answer_isinstance_for(proxy_type: type) -> None:
    """Declare the traced-tensor class (proxy.py's ``TensorProxy``; set once, at import)."""
    global _proxy_type
    _proxy_type = proxy_type


# A dynamic dim's size symbol (size_ops.py): its proxy type and the test that a value is one.
_size_type: type | None = None
_is_size: Callable[[object], bool] = lambda obj: False  # noqa: E731


def answer_int_for(size_type: type, is_size: Callable[[object], bool]) -> None:
    """Declare the size symbols (``x.shape[1]`` of a declared dynamic dim; set once, at import),
    which answer ``isinstance(n, int)`` as the ``int`` that ``x.shape[1]`` is in eager code."""
    global _size_type, _is_size
    _size_type, _is_size = size_type, is_size


def _isinstance(obj: object, classinfo: Any, /) -> bool:
    """``builtins.isinstance`` while a trace runs: a traced tensor answers as a ``torch.Tensor``
    would, and a size symbol as an ``int``, for every caller outside symscalar."""
    if type(obj) is not _proxy_type:
        if type(obj) is _size_type and not _builtin_isinstance(obj, classinfo) and _is_size(obj):
            try:
                as_int = issubclass(int, classinfo)
            except TypeError:
                return False
            return as_int and not called_from_symscalar(sys._getframe(1))
        return _builtin_isinstance(obj, classinfo)
    if _builtin_isinstance(obj, classinfo):
        return True
    # The class first, the caller only where the answers differ: symscalar's own checks of a
    # proxy against (tuple, list), Mapping... are on the tracer's hot path.
    try:
        as_tensor = issubclass(obj._class, classinfo)  # type: ignore[attr-defined]
    except TypeError:  # a classinfo issubclass refuses (a data Protocol): the builtin's answer
        return False
    if not as_tensor:
        return False
    return not called_from_symscalar(sys._getframe(1))


# Functions whose eager branch symscalar traces (``eager_branch_in``), and the helpers that
# forward their question to ``torch.compiler.is_compiling`` (their caller is the one asking).
_EAGER_BRANCHES: set[CodeType] = set()
_FORWARDERS: set[CodeType] = set()


def eager_branch_in(function: Callable[..., Any], *, forwarders: tuple[Callable[..., Any], ...] = ()) -> None:
    """Trace ``function``'s eager branch: ``is_compiling()`` asked from it, or from one of
    ``forwarders`` called by it, answers as outside a trace. For a library function whose compile
    branch is not eager's computation (only its rounding may differ) and whose eager branch
    decides nothing from tensor values."""
    for fn, codes in ((function, _EAGER_BRANCHES), *((f, _FORWARDERS) for f in forwarders)):
        code = getattr(inspect.unwrap(fn), "__code__", None)
        if not isinstance(code, CodeType):
            raise TypeError(f"eager_branch_in: {fn!r} is not a Python function")
        codes.add(code)


def _asks_for_eager_branch(frame: FrameType | None) -> bool:
    """Whether the function asking (past the forwarders) is registered with ``eager_branch_in``."""
    while frame is not None and frame.f_code in _FORWARDERS:
        frame = frame.f_back
    return frame is not None and frame.f_code in _EAGER_BRANCHES


def _is_compiling() -> bool:
    """``torch.compiler.is_compiling`` while a symscalar trace runs somewhere: True in the
    tracing context, but for the functions whose eager branch is traced (``eager_branch_in``)."""
    if current_tracer.get() is None or (_EAGER_BRANCHES and _asks_for_eager_branch(sys._getframe(1))):
        return _torch_is_compiling()
    return True


patch_while_tracing("torch.compiler", "is_compiling", lambda original: _is_compiling)
patch_while_tracing("builtins", "isinstance", lambda original: _isinstance)


@contextmanager
def reporting_compiling() -> Iterator[None]:
    """Install every ``patch_while_tracing`` replacement for the trace running in this context:
    ``torch.compiler.is_compiling()`` True there, ``isinstance(proxy, torch.Tensor)`` True
    outside symscalar, and whatever other modules registered (``state/watch.py``'s RNG refusals)."""
    global _active
    with _lock:
        if _active == 0:
            for module_name, name, wrap in _PATCHES:
                module = sys.modules.get(module_name) if isinstance(module_name, str) else module_name
                original = getattr(module, name, None)
                if original is not None:
                    _saved.append((module, name, original))
                    setattr(module, name, wrap(original))
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                for module, name, original in _saved:
                    setattr(module, name, original)
                _saved.clear()
