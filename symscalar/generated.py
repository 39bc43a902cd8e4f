"""Running the Python symscalar generates: programs, dispatchers, cache-entry checks.

Every ``exec`` of generated source goes through ``exec_generated``, which compiles it under a
readable file name (``<symscalar program f#2>``) and registers the source with ``linecache``
(as torch.fx's ``_exec_with_source`` does), so a traceback through generated code shows the
generated line, and ``inspect.getsource`` of a generated function works. The source stays
registered while a function it defined lives: an evicted cache entry's program takes its
lines with it, so a function that keeps tracing holds bounded memory. ``called_from_symscalar``
is the one answer to "is this frame symscalar's own code?" (its modules, and with
``generated=True`` the code they generate). Torch-free.
"""

from __future__ import annotations

import itertools
import linecache
import types
import weakref
from types import FrameType
from typing import Any

__all__ = ["called_from_symscalar", "exec_generated"]

# How every file name of generated code starts.
_PREFIX = "<symscalar "

_counter = itertools.count(1)
# Numbers of file names whose code is gone, by label, for reuse: compile() interns a code's
# file name, and interned strings live for the whole process (CPython 3.12), so unique names per
# program would grow memory with every trace of a function that keeps tracing. Reused under the
# same label only, so the names a label ever had are as many as its code alive at once.
_free: dict[str, list[int]] = {}


def exec_generated(source: str, what: str, namespace: dict[str, Any]) -> str:
    """Run ``source`` in ``namespace`` as the file ``<symscalar {what}#N>`` (N unique among the
    generated code alive in this process, so two versions of one label keep their own lines);
    return that file name.

    Args:
        source: Python source text, one or more definitions.
        what: what it is, for the file name: ``"program f"``, ``"dispatch of f"``.
        namespace: the globals the code runs in; its definitions land there.
    """
    # no lock: a finalizer (``forget`` below) may run here, in this very thread, when an
    # allocation triggers the garbage collector; list.pop/append and next() are atomic
    free = _free.setdefault(what, [])
    try:
        number = free.pop()
    except IndexError:
        number = next(_counter)
    filename = f"{_PREFIX}{what}#{number}>"
    # mtime None: linecache.checkcache keeps the entry (there is no file to compare with)
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    defined = [
        f for f in namespace.values() if isinstance(f, types.FunctionType) and f.__code__.co_filename == filename
    ]
    if defined:  # the lines (and the number) go when the last function defined from them does
        alive = [len(defined)]

        def forget() -> None:
            alive[0] -= 1
            if not alive[0]:
                linecache.cache.pop(filename, None)
                free.append(number)

        for f in defined:
            weakref.finalize(f, forget)
    return filename


def called_from_symscalar(frame: FrameType, *, generated: bool = False) -> bool:
    """Whether ``frame`` runs code of symscalar's own modules (which tell proxies from tensors),
    not user or library code; with ``generated``, code symscalar generated counts as its own
    too (the dispatcher, a program: for a warning's stack level, which should name the user's line)."""
    module: str = frame.f_globals.get("__name__", "")
    if module == "symscalar" or module.startswith("symscalar."):
        return True
    return generated and frame.f_code.co_filename.startswith(_PREFIX)
