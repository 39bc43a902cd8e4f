"""Where the user's code called into symscalar: the first frame outside symscalar and torch.

A check recorded while tracing (``symscalar.check``) runs on every later call, long after the
user's frame is gone; the location is taken at trace time so that a failure can still name
the line that asked for it. torch's frames are skipped too: an op's own check (dropout's
``p``) is reached through ``torch.nn.functional`` from the user's call of it.
"""

from __future__ import annotations

import os
import sys

__all__ = ["user_location"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal_prefixes() -> tuple[str, ...]:
    """symscalar's directory, the code it generates (``<symscalar ...>``), torch's directory."""
    torch = sys.modules.get("torch")
    torch_file = getattr(torch, "__file__", None)
    return (_PACKAGE_DIR, "<symscalar") + ((os.path.dirname(torch_file) + os.sep,) if torch_file else ())


def user_location() -> str | None:
    """``"path/to/file.py:12"`` of the innermost frame of the caller's stack that is neither
    symscalar's nor torch's (as a traceback names it), or None when there is none."""
    internal = _internal_prefixes()
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(internal):
        frame = frame.f_back  # type: ignore[assignment]
    return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"
