"""Running the Python symscalar generates: programs, dispatchers, cache-entry checks.

Every ``exec`` of generated source goes through ``exec_generated``, which compiles it under a
readable file name (``<symscalar program f#2>``) and registers the source with ``linecache``
(as torch.fx's ``_exec_with_source`` does), so a traceback through generated code shows the
generated line, and ``inspect.getsource`` of a generated function works. Torch-free.
"""

from __future__ import annotations

import itertools
import linecache
import threading
from typing import Any

__all__ = ["exec_generated"]

_counter = itertools.count(1)
_lock = threading.Lock()


def exec_generated(source: str, what: str, namespace: dict[str, Any]) -> str:
    """Run ``source`` in ``namespace`` as the file ``<symscalar {what}#N>`` (N unique to this
    process, so two versions of one label keep their own lines); return that file name.

    Args:
        source: Python source text, one or more definitions.
        what: what it is, for the file name: ``"program f"``, ``"dispatch of f"``.
        namespace: the globals the code runs in; its definitions land there.
    """
    with _lock:
        filename = f"<symscalar {what}#{next(_counter)}>"
    # mtime None: linecache.checkcache keeps the entry (there is no file to compare with)
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    return filename
