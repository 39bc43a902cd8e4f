"""Tracebacks that start at the user's line: symscalar's own frames are left out of the errors
a call raises while it traces (as JAX's ``traceback_util`` does), so a message is followed by
the user's code, not by ten frames of the tracer. ``SYMSCALAR_TRACEBACK=full`` keeps them (for
debugging symscalar itself)."""

from __future__ import annotations

import os
import types

__all__ = ["filter_traceback", "show_all_frames", "hide_internal_frames"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def show_all_frames() -> bool:
    """Whether ``SYMSCALAR_TRACEBACK=full`` asks for every frame (read on each error)."""
    return os.environ.get("SYMSCALAR_TRACEBACK", "").lower() == "full"


def _internal(frame: types.FrameType) -> bool:
    # generated code (the dispatcher, a program) stays: its lines are the program that ran
    return frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the frames of symscalar's modules (generated code's frames are kept)."""
    kept = []
    while tb is not None:
        if not _internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    new: types.TracebackType | None = None
    for entry in reversed(kept):
        new = types.TracebackType(new, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return new


def hide_internal_frames(error: BaseException) -> None:
    """Drop symscalar's frames from ``error``'s traceback (unless ``SYMSCALAR_TRACEBACK=full``);
    called in an ``except`` block that then re-raises with a bare ``raise``."""
    if not show_all_frames():
        error.with_traceback(filter_traceback(error.__traceback__))
