"""Helpers shared by test modules that inspect traces."""

from collections.abc import Callable
from typing import Any

import torch

import symscalar


def trace_of(fn: Callable[..., Any], *args: Any) -> symscalar.Trace:
    """The forward trace of ``fn`` traced with the torch backend (no autograd wiring)."""
    f = symscalar.jit(fn, backend="torch")
    with torch.no_grad():
        f(*args)
    trace = f.last_trace()
    assert trace is not None
    return trace
