"""The reference backend: a trace becomes a generated Python function calling torch.

The function is generated once per cache entry (source from ``trace.python_source``, each
primitive's torch lowering bound to a global name), so the per-call path is straight-line
Python with no interpreter loop. Each tensor is deleted after its last use, so peak memory
follows eager's. Runs on every device torch supports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from symscalar.trace import Primitive, Trace, python_source, with_codegen_name

__all__ = ["compile_trace"]


def compile_trace(
    trace: Trace, render_outputs: Callable[[list[str]], str] | None = None
) -> Callable[..., Any]:
    """Compile ``trace`` into a Python function of its inputs.

    Args:
        trace: a checked trace.
        render_outputs: builds the returned expression from the output expressions (jit
            uses it to return the user's output structure directly); default: a tuple.

    Returns:
        The function; its ``__source__`` attribute holds the generated code.
    """
    namespace: dict[str, Any] = {}
    names: dict[Primitive[Any], str] = {}
    trace = with_codegen_name(trace)

    def callee(prim: Primitive[Any]) -> str:
        if prim not in names:
            names[prim] = f"_prim_{prim.name}"
            namespace[names[prim]] = prim.impl
        return names[prim]

    source = python_source(
        trace, callee=callee, header=False, render_outputs=render_outputs, free=True
    )
    namespace["torch"] = torch
    code = compile(source, f"<symscalar torch backend: {trace.name}>", "exec")
    exec(code, namespace)  # noqa: S102 - our own generated code
    fn: Callable[..., Any] = namespace[trace.name]
    fn.__source__ = source  # type: ignore[attr-defined]
    return fn
