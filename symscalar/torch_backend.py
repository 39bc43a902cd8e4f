"""The reference backend: a trace becomes a generated Python function calling torch.

The function is generated once per cache entry (source from ``trace.python_source``, each
primitive's torch lowering bound to a global name), so the per-call path is straight-line
Python with no interpreter loop. Each tensor is deleted after its last use, so peak memory
follows eager's. Runs on every device torch supports.

A long trace runs through a small interpreter on its first call and is compiled on its
second: CPython compiles some 20-40 thousand lines a second, so generating and compiling a
program of a few thousand equations costs more than running it once, and a first call (or a
backward that runs once) should not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from symscalar.backend import Render, register_backend
from symscalar.generated import exec_generated
from symscalar.simplify import simplify
from symscalar.sizes import is_symbolic_shape
from symscalar.trace import (
    Primitive,
    ScalarVar,
    TensorVar,
    Trace,
    is_var,
    last_uses,
    python_source,
    with_codegen_name,
)

__all__ = ["compile_trace", "TorchBackend", "BACKEND", "INTERPRET_FIRST_CALL_ABOVE"]

# Traces with more equations than this are interpreted on their first call (see above).
INTERPRET_FIRST_CALL_ABOVE = 200


def compile_trace(trace: Trace, render_outputs: Render | None = None) -> Callable[..., Any]:
    """Compile ``trace`` into a Python function of its inputs.

    Args:
        trace: a checked trace.
        render_outputs: builds the returned expression from the output expressions (jit
            uses it to return the user's output structure directly); default: a tuple.

    Returns:
        The function; its ``__source__`` attribute holds the generated code. Algebraic no-ops
        (``symscalar.simplify``) are left out of it.
    """
    trace = simplify(trace)
    # (a trace with dynamic dims binds its sizes in the generated code's first lines)
    if len(trace.eqns) > INTERPRET_FIRST_CALL_ABOVE and not _has_dynamic_dims(trace):
        return _TieredProgram(trace, render_outputs)
    return _generated(trace, render_outputs)


def _generated(trace: Trace, render_outputs: Render | None) -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    names: dict[Primitive[Any], str] = {}
    trace = with_codegen_name(trace)

    def callee(prim: Primitive[Any]) -> str:
        if prim not in names:
            names[prim] = f"_prim_{prim.name}"
            namespace[names[prim]] = prim.impl
        return names[prim]

    source = python_source(trace, callee=callee, header=False, render_outputs=render_outputs, free=True)
    namespace["torch"] = torch
    exec_generated(source, f"program {trace.name}", namespace)
    fn: Callable[..., Any] = namespace[trace.name]
    fn.__source__ = source  # type: ignore[attr-defined]
    return fn


def _has_dynamic_dims(trace: Trace) -> bool:
    return any(isinstance(v, TensorVar) and is_symbolic_shape(v.shape) for v in trace.inputs)


class _TieredProgram:
    """A long trace's program: interpreted on the first call, generated code from the second
    on (same results, same frees). ``__source__`` is the generated code."""

    def __init__(self, trace: Trace, render_outputs: Render | None) -> None:
        self.trace = trace
        self.render_outputs = render_outputs
        self._run: Callable[..., Any] = self._first

    def __call__(self, *args: Any) -> Any:
        return self._run(*args)

    def _first(self, *args: Any) -> Any:
        self._run = self._compile_and_run
        return _interpret(self.trace, self.render_outputs)(*args)

    def _compile_and_run(self, *args: Any) -> Any:
        self._run = _generated(self.trace, self.render_outputs)
        return self._run(*args)

    @property
    def __source__(self) -> str:
        run = self._run if hasattr(self._run, "__source__") else _generated(self.trace, self.render_outputs)
        return run.__source__  # type: ignore[attr-defined, no-any-return]


def _interpret(trace: Trace, render_outputs: Render | None) -> Callable[..., Any]:
    """``trace`` as a loop over its equations, each value in a dict by variable, each tensor
    dropped after its last use as the generated code deletes it. Nothing is prepared per
    equation beforehand: the loop runs once (the program is compiled for the next call)."""
    dead = last_uses(trace)
    n_inputs = len(trace.inputs)
    names = [f"o[{i}]" for i in range(len(trace.outputs))]
    namespace: dict[str, Any] = {"torch": torch}
    if render_outputs is None:
        returned = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    else:
        returned = render_outputs(names)
    exec_generated(f"def render(o):\n    return {returned}\n", f"outputs of {trace.name}", namespace)
    render = namespace["render"]

    def run(*args: Any) -> Any:
        if len(args) != n_inputs:
            raise TypeError(f"{trace.name}() takes {n_inputs} arguments, got {len(args)}")
        env: dict[Any, Any] = dict(zip(trace.inputs, args))
        for eqn in trace.eqns:
            prim = eqn.prim
            result = prim.impl(
                *[env[a] if isinstance(a, (TensorVar, ScalarVar)) else a for a in eqn.args], **eqn.params
            )
            if prim.multiple_results:
                env.update(zip(eqn.outs, result))
            elif eqn.outs:
                env[eqn.outs[0]] = result
            if eqn in dead:
                for v in dead[eqn]:
                    del env[v]
        return render([env[a] if is_var(a) else a for a in trace.outputs])

    return run


class TorchBackend:
    """The torch backend as ``symscalar.backend.Backend``: runs anything, fuses nothing."""

    name = "torch"
    priority = 0

    def compile_trace(self, trace: Trace, render_outputs: Render | None = None) -> Callable[..., Any]:
        return compile_trace(trace, render_outputs)

    def check_available(self, trace: Trace) -> None:
        return None

    def usable_for(self, trace: Trace) -> bool:
        return True

    def for_entry(self) -> TorchBackend:
        return self  # nothing to remember per entry

    def last_fusions(self) -> list[Any]:
        return []

    def compile_log(self) -> list[Any]:
        return []  # compiled when traced


BACKEND = register_backend(TorchBackend())
