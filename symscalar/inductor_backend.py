"""The Inductor backend: a trace becomes an aten-level FX graph that Inductor compiles.

Why: on CPU the torch backend runs each equation as its own eager kernel; Inductor fuses
elementwise and reduction chains into generated C++ (Triton on CUDA). symscalar already holds
what ``torch.compile`` spends most of its time producing, an explicit forward and backward
trace, so this backend hands those traces to Inductor directly: no dynamo, no re-trace of user
code.

How a trace is lowered (``lower``):

1. **Host part.** Scalar-only equations (``scalar_mul``, ``check`` ...: no tensor operand or
   result) run in Python before the graph, as in the torch backend, so a ``symscalar.check``
   raises its own error and a scalar output is computed exactly.
2. **Graph.** The remaining equations are run symbolically with ``make_fx`` (fake tensors,
   static shapes): each equation's torch lowering (``Primitive.impl``) records the aten calls
   it makes, so the graph holds exactly the kernels the torch backend would call. make_fx
   rather than our own FX emitter because the lowerings are torch code already: one
   definition per op, and the graph is aten-level by construction. Every dynamic scalar the
   graph reads is a **0-d tensor input** (float64 / int64 / bool) turned into a Python scalar
   by ``.item()`` inside the graph: an unbacked symbol to Inductor, so the compiled code is
   generic in the value and a new value never recompiles. Static values are literals of the
   equations: constants of the graph.
3. **Randomness.** ``uniform``/``normal`` are opaque custom ops (``symscalar::uniform``,
   ``symscalar::normal``) that call the torch lowering itself: Inductor runs them as extern
   calls, so the samples equal the torch backend's for the same RNG seed (the seed is the
   program's input, drawn by jit per call, as everywhere).
4. **Compile** with ``torch._inductor.standalone_compile`` (Inductor's documented entry point
   for an already-traced graph) under ``torch.no_grad()``: the forward and the backward are
   separate traces, each compiled as an inference graph; on CPU with ``cpp_wrapper``
   (``CPU_OPTIONS``), since gcc, once per generated file, is most of the compile time. Inductor's FX graph cache is on
   (``TORCHINDUCTOR_CACHE_DIR``): a second process compiling the same trace loads the kernels.

Ops Inductor has no lowering for run as extern aten calls (Inductor's own fallback). A trace
that cannot be lowered at all (a lowering that reads a dynamic value in Python, a
data-dependent op) is run by the torch backend, and the reason is recorded in the entry's
compile log (``explain()``). Compiled code assumes the input strides it was compiled for: a
call with other strides runs the torch backend's program (the key does not hold strides).

Compile cost is paid lazily: a program runs ``compile_after`` calls on the torch backend
(default 1: the first call is as fast as with ``backend="torch"``) and compiles on the next.
``backend="auto"`` never picks this backend: see docs/inductor.md.

Tolerance: Inductor reorders float reductions and fuses ``x * s + y`` into one expression
(with the scalar in double), so results match the torch backend to rounding (tests use
``rtol=1.3e-6, atol=1e-5`` for float32), and exactly where an extern kernel runs.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from symscalar import torch_backend
from symscalar.backend import Render, register_backend
from symscalar.ops.random import normal_p, uniform_p
from symscalar.simplify import simplify
from symscalar.trace import Eqn, Primitive, ScalarVar, TensorVar, Trace, Var, dce, format_static, is_var

__all__ = ["InductorBackend", "CPU_OPTIONS", "CompileRecord", "InductorFallbackWarning", "Lowered", "lower", "BACKEND"]

_SCALAR_DTYPES: dict[type, torch.dtype] = {
    float: torch.float64,
    int: torch.int64,
    bool: torch.bool,
    complex: torch.complex128,
}


# Inductor config patches for a program whose tensors are all on the CPU: ``cpp_wrapper``
# makes the graph one C++ file (one gcc run per graph, where the Python wrapper builds one
# shared object per kernel: 0.4x the compile CPU, docs/inductor.md)
CPU_OPTIONS: Mapping[str, Any] = {"cpp_wrapper": True}


def _config_patches(user: Mapping[str, Any], args: Sequence[Any]) -> dict[str, Any]:
    """Inductor's config patches for a program called with ``args``: ``CPU_OPTIONS`` where
    every tensor is on the CPU (on CUDA a C++ wrapper would add a gcc run that Triton's
    Python launcher does not need), then the user's ``options``."""
    on_cpu = all(a.device.type == "cpu" for a in args if isinstance(a, torch.Tensor))
    return {**(CPU_OPTIONS if on_cpu else {}), **user}


# ---- random ops as opaque extern calls: the torch lowering, run by Inductor's wrapper
def _random_op(prim: Primitive[Any]) -> Any:
    @torch.library.custom_op(f"symscalar::{prim.name}", mutates_args=())
    def sample(
        seed: torch.Tensor, shape: list[int], dtype: torch.dtype, device: torch.device, offset: int
    ) -> torch.Tensor:
        return prim.impl(int(seed), shape=tuple(shape), dtype=dtype, device=device, offset=offset)  # type: ignore[no-any-return]

    @sample.register_fake
    def _(seed: torch.Tensor, shape: list[int], dtype: torch.dtype, device: torch.device, offset: int) -> torch.Tensor:
        return torch.empty(shape, dtype=dtype, device=device)

    return sample


@functools.cache
def _random_ops() -> dict[Primitive[Any], Any]:
    """The custom ops, defined on the first lowering (defining them costs ``import symscalar``
    some 70 ms otherwise)."""
    return {prim: _random_op(prim) for prim in (uniform_p, normal_p)}


class InductorFallbackWarning(UserWarning):
    """Inductor failed to compile a lowered trace: the torch backend runs it (correct, slower)."""


@dataclasses.dataclass(frozen=True)
class CompileRecord:
    """One Inductor compile of a program (what ``explain()`` lists)."""

    program: str  # the trace's name, e.g. ``f_forward``, ``f_forward_backward``
    seconds: float  # lowering + Inductor (0 where it fell back)
    fallback: str = ""  # why the torch backend runs it instead, where it does

    def __str__(self) -> str:
        if self.fallback:
            return f"{self.program}: runs on the torch backend ({self.fallback})"
        return f"{self.program}: compiled by Inductor in {self.seconds:.2f} s"


@dataclasses.dataclass(frozen=True)
class Lowered:
    """A trace split for Inductor: the host program, the FX graph and how to call them."""

    host: Callable[..., Any]  # trace inputs -> the host-computed scalars (``host_vars``)
    host_vars: tuple[ScalarVar, ...]
    graph: torch.fx.GraphModule
    graph_inputs: tuple[Var, ...]  # tensor inputs, then scalars (passed as 0-d tensors)
    graph_outputs: tuple[TensorVar, ...]


def _split(trace: Trace) -> tuple[list[Eqn], list[Eqn]]:
    host: list[Eqn] = []
    tensor: list[Eqn] = []
    for eqn in trace.eqns:
        has_tensor = any(isinstance(a, TensorVar) for a in (*eqn.args, *eqn.outs))
        if not has_tensor:
            host.append(eqn)
        elif any(isinstance(o, ScalarVar) for o in eqn.outs):
            raise _LoweringError(f"{eqn.prim.name} computes a scalar from a tensor")
        else:
            tensor.append(eqn)
    return host, tensor


class _LoweringError(Exception):
    """A trace this backend leaves to the torch backend (the message says why)."""


def lower(trace: Trace, example_args: Sequence[Any]) -> Lowered:
    """Lower ``trace`` for the inputs ``example_args`` (their strides are the graph's)."""
    host_eqns, tensor_eqns = _split(trace)
    inputs = set(trace.inputs)
    tensor_outputs = tuple(dict.fromkeys(o for o in trace.outputs if isinstance(o, TensorVar) and o not in inputs))
    graph_trace = dce(Trace(trace.inputs, tuple(tensor_eqns), tensor_outputs, trace.name))
    used: set[Var] = {a for eqn in graph_trace.eqns for a in eqn.args if is_var(a)}
    returned: set[Var] = {o for o in trace.outputs if is_var(o)}
    # in definition order, so that the graph (and Inductor's cache key) is the same every time
    host_defined = [o for eqn in host_eqns for o in eqn.outs if isinstance(o, ScalarVar)]
    host_vars = tuple(v for v in host_defined if v in used or v in returned)
    scalar_vars = [v for v in trace.inputs if isinstance(v, ScalarVar) and v in used]
    scalar_vars += [v for v in host_vars if v in used]
    tensor_inputs: list[Var] = [v for v in trace.inputs if isinstance(v, TensorVar) and v in used]
    graph_inputs: tuple[Var, ...] = (*tensor_inputs, *scalar_vars)
    host_trace = Trace(trace.inputs, tuple(host_eqns), host_vars, f"{trace.name}_host")
    host = torch_backend.compile_trace(host_trace)

    random_ops = _random_ops()

    def body(*values: Any) -> list[torch.Tensor]:
        env: dict[Any, Any] = dict(zip(graph_inputs, values))
        items: dict[Any, Any] = {}

        def read(a: Any) -> Any:
            if isinstance(a, ScalarVar):
                if a not in items:
                    items[a] = env[a].item()
                return items[a]
            return env[a] if isinstance(a, TensorVar) else a

        for eqn in graph_trace.eqns:
            if eqn.prim in random_ops:
                params = eqn.params
                result = random_ops[eqn.prim](
                    env[eqn.args[0]], list(params["shape"]), params["dtype"], params["device"], params["offset"]
                )
            else:
                result = eqn.prim.impl(*map(read, eqn.args), **eqn.params)
            env.update(zip(eqn.outs, result if eqn.prim.multiple_results else (result,)))
        return [env[o] for o in tensor_outputs]

    if not tensor_outputs:
        raise _LoweringError("no tensor is computed (nothing for Inductor to compile)")
    try:
        graph = make_fx(body, tracing_mode="fake")(*_graph_args(trace, host, host_vars, graph_inputs, example_args))
    except Exception as e:  # any lowering that does not trace symbolically
        raise _LoweringError(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    for node in graph.graph.nodes:  # standalone_compile(dynamic_shapes="from_graph") reads these
        if "val" in node.meta:
            node.meta["example_value"] = node.meta["val"]
    return Lowered(host, host_vars, graph, graph_inputs, tensor_outputs)


def _value(v: ScalarVar, position: Mapping[Var, int], args: Sequence[Any], host_values: Mapping[ScalarVar, Any]) -> Any:
    return args[position[v]] if v in position else host_values[v]


def _as_tensor(v: ScalarVar, value: Any) -> torch.Tensor:
    return torch.tensor(value, dtype=_SCALAR_DTYPES[v.dtype])


class _Program:
    """A trace's program: the torch backend's for the first ``compile_after`` calls, then
    Inductor's (or the torch backend's for good, when the trace cannot be lowered)."""

    def __init__(self, trace: Trace, render: Render | None, backend: InductorBackend) -> None:
        self.trace = simplify(trace)
        self.render = render
        self.backend = backend
        self.torch_run = torch_backend.compile_trace(trace, render)
        self.calls = 0
        self._run: Callable[..., Any] = self._counting
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> Any:
        return self._run(*args)

    def _counting(self, *args: Any) -> Any:
        with self._lock:
            self.calls += 1
            if self.calls > self.backend.compile_after and self._run == self._counting:
                self._run = self._compile(args)
            run = self._run if self._run != self._counting else self.torch_run
        return run(*args)

    def _compile(self, args: tuple[Any, ...]) -> Callable[..., Any]:
        start = time.perf_counter()
        try:
            lowered = lower(self.trace, args)
            # imported here, on the first compile: torch._inductor takes seconds to import
            # (it imports dynamo), which ``import symscalar`` must not pay
            inductor = importlib.import_module("torch._inductor")
            with torch.no_grad():
                compiled = inductor.standalone_compile(
                    lowered.graph,
                    _graph_args(self.trace, lowered.host, lowered.host_vars, lowered.graph_inputs, args),
                    dynamic_shapes="from_graph",
                    options={"config_patches": _config_patches(self.backend.options, args)},
                )
        except _LoweringError as e:
            self.backend.compiles.append(CompileRecord(self.trace.name, 0.0, str(e)))
            return self.torch_run
        except Exception as e:  # noqa: BLE001 - Inductor failed; the torch backend program is still right
            reason = f"Inductor failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            self.backend.compiles.append(CompileRecord(self.trace.name, 0.0, reason))
            warnings.warn(
                f"symscalar: {self.trace.name} runs on the torch backend: {reason}",
                InductorFallbackWarning,
                stacklevel=2,
            )
            return self.torch_run
        self.backend.compiles.append(CompileRecord(self.trace.name, time.perf_counter() - start))
        return _runner(self.trace, self.render, lowered, compiled, args, self.torch_run)

    @property
    def __source__(self) -> str:
        return self.torch_run.__source__  # type: ignore[attr-defined, no-any-return]


def _graph_args(
    trace: Trace,
    host: Callable[..., Any],
    host_vars: Sequence[ScalarVar],
    graph_inputs: Sequence[Var],
    args: Sequence[Any],
) -> list[Any]:
    """The graph's arguments for the trace's arguments ``args`` (scalars as 0-d tensors)."""
    position = {v: i for i, v in enumerate(trace.inputs)}
    host_values = dict(zip(host_vars, host(*args)))
    return [
        args[position[v]] if isinstance(v, TensorVar) else _as_tensor(v, _value(v, position, args, host_values))
        for v in graph_inputs
    ]


def _runner(
    trace: Trace,
    render: Render | None,
    lowered: Lowered,
    compiled: Callable[..., Any],
    example_args: Sequence[Any],
    torch_run: Callable[..., Any],
) -> Callable[..., Any]:
    """The per-call function of a compiled program, generated like the torch backend's: the
    host scalars, the graph's arguments (scalars as 0-d tensors), the compiled graph, the
    user's output structure. A call whose tensors have other strides than the example's runs
    ``torch_run`` instead."""
    position = {v: i for i, v in enumerate(trace.inputs)}
    host_index = {v: j for j, v in enumerate(lowered.host_vars)}
    out_index = {v: j for j, v in enumerate(lowered.graph_outputs)}
    lines = [f"def run({', '.join(f'a{i}' for i in range(len(trace.inputs)))}):"]
    strided = [i for i, v in enumerate(trace.inputs) if isinstance(v, TensorVar) and v in set(lowered.graph_inputs)]
    strides = {i: tuple(example_args[i].stride()) for i in strided}
    if strided:
        checks = " or ".join(f"a{i}.stride() != {strides[i]!r}" for i in strided)
        lines.append(f"    if {checks}:")
        lines.append(f"        return torch_run({', '.join(f'a{i}' for i in range(len(trace.inputs)))})")
    if lowered.host_vars:
        lines.append(f"    h = host({', '.join(f'a{i}' for i in range(len(trace.inputs)))})")

    def scalar(v: ScalarVar) -> str:
        return f"a{position[v]}" if v in position else f"h[{host_index[v]}]"

    graph_args = [
        f"a{position[v]}" if isinstance(v, TensorVar) else f"tensor({scalar(v)}, dtype={_SCALAR_DTYPES[v.dtype]})"
        for v in lowered.graph_inputs
    ]
    lines.append(f"    o = compiled({', '.join(graph_args)})")

    def expr(a: Any) -> str:
        if isinstance(a, TensorVar):
            return f"a{position[a]}" if a in position else f"o[{out_index[a]}]"
        if isinstance(a, ScalarVar):
            return scalar(a)
        return format_static(a)

    names = [expr(a) for a in trace.outputs]
    returned = render(names) if render is not None else f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    lines.append(f"    return {returned}")
    namespace: dict[str, Any] = {
        "torch": torch,
        "tensor": torch.tensor,
        "host": lowered.host,
        "compiled": compiled,
        "torch_run": torch_run,
    }
    exec(compile("\n".join(lines) + "\n", f"<symscalar inductor backend: {trace.name}>", "exec"), namespace)  # noqa: S102
    fn: Callable[..., Any] = namespace["run"]
    return fn


class InductorBackend:
    """The Inductor backend as ``symscalar.backend.Backend``.

    ``jit(f, backend="inductor")`` uses the defaults; ``jit(f, backend=InductorBackend(
    compile_after=0, options={...}))`` sets them: ``compile_after`` calls of each program
    (forward, backward) run on the torch backend before it is compiled, and ``options`` are
    Inductor config patches (as ``torch.compile(options=...)``) over ``CPU_OPTIONS`` for a
    program whose tensors are all on the CPU (``{"cpp_wrapper": False}`` restores Inductor's
    default). The object of one cache entry (``for_entry``) keeps the entry's compile log
    (``compiles``, shown by ``explain()``).
    """

    name = "inductor"
    priority = -10  # "auto" never picks it (see docs/inductor.md)

    def __init__(self, compile_after: int = 1, options: Mapping[str, Any] | None = None) -> None:
        if not isinstance(compile_after, int) or isinstance(compile_after, bool) or compile_after < 0:
            raise ValueError(f"compile_after must be an int >= 0 (calls before compiling), got {compile_after!r}")
        self.compile_after = compile_after
        self.options = dict(options or {})
        self.compiles: list[CompileRecord] = []

    def compile_trace(self, trace: Trace, render_outputs: Render | None = None) -> Callable[..., Any]:
        return _Program(trace, render_outputs, self)

    def check_available(self, trace: Trace) -> None:
        return None  # Inductor runs on every device torch.compile supports

    def usable_for(self, trace: Trace) -> bool:
        return False

    def for_entry(self) -> InductorBackend:
        return InductorBackend(self.compile_after, self.options)

    def last_fusions(self) -> list[Any]:
        return []

    def compile_log(self) -> list[CompileRecord]:
        return list(self.compiles)


BACKEND = register_backend(InductorBackend())
