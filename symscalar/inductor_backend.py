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
   static shapes unless the trace has dynamic dims, below): each equation's torch lowering
   (``Primitive.impl``) records the aten calls it makes, so the graph holds exactly the kernels
   the torch backend would call. make_fx rather than our own FX emitter because the lowerings
   are torch code already: one definition per op, and the graph is aten-level by construction.
   Every dynamic scalar the graph reads is a **0-d tensor input** (float64 / int64 / bool)
   turned into a Python scalar by ``.item()`` inside the graph: an unbacked symbol to Inductor,
   so the compiled code is generic in the value and a new value never recompiles. Static values
   are literals of the equations: constants of the graph.
3. **Randomness.** ``uniform``/``normal`` are opaque custom ops (``symscalar::uniform``,
   ``symscalar::normal``) that call the torch lowering itself: Inductor runs them as extern
   calls, so the samples equal the torch backend's for the same RNG seed (the seed is the
   program's input, drawn by jit per call, as everywhere).
4. **Compile** with ``torch._inductor.standalone_compile`` (Inductor's documented entry point
   for an already-traced graph) under ``torch.no_grad()``: the forward and the backward are
   separate traces, each compiled as an inference graph; on CPU with ``cpp_wrapper``
   (``CPU_OPTIONS``), since gcc, once per generated file, is most of the compile time. Inductor's FX graph cache is on
   (``TORCHINDUCTOR_CACHE_DIR``): a second process compiling the same trace loads the kernels.

**Dynamic dims** (``jit(dynamic_dims=...)``): the graph is traced with ``make_fx`` on fake
inputs of one ShapeEnv whose declared dims are symbols (``_symbolic_inputs``), under torch's
size-oblivious reasoning, so one compile serves every size; a size read as a scalar is a SymInt
of the graph, read from an input's size. Inductor's guards (``s_T != 1`` where a torch
decomposition branched on the hint) and the inputs' layouts are checked on every call; a call
that fails them runs the torch backend's program, and ``explain()`` names the sizes.

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

import contextlib
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

from symscalar import sizes, torch_backend
from symscalar.backend import Render, register_backend
from symscalar.ops.random import normal_p, uniform_p
from symscalar.simplify import simplify
from symscalar.size_ops import sym_size_p
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
    # with dynamic dims: the sizes Inductor's code is for ("every size", or "sizes where ..."
    # from its guards); a call with other sizes runs on the torch backend
    assumes: str = ""

    def __str__(self) -> str:
        if self.fallback:
            return f"{self.program}: runs on the torch backend ({self.fallback})"
        compiled = f"{self.program}: compiled by Inductor in {self.seconds:.2f} s"
        if self.assumes == "every size":
            return f"{compiled}, for every size"
        if self.assumes:
            return f"{compiled}, for {self.assumes} (other sizes run on the torch backend)"
        return compiled


@dataclasses.dataclass(frozen=True)
class Lowered:
    """A trace split for Inductor: the host program, the FX graph and how to call them."""

    host: Callable[..., Any]  # trace inputs -> the host-computed scalars (``host_vars``)
    host_vars: tuple[ScalarVar, ...]
    graph: torch.fx.GraphModule
    graph_inputs: tuple[Var, ...]  # tensor inputs, then scalars (passed as 0-d tensors)
    graph_outputs: tuple[TensorVar, ...]
    # with dynamic dims: the graph's placeholder values (fake tensors with symbolic sizes),
    # whose ShapeEnv holds the guards Inductor's compile adds; () for static shapes
    symbolic_inputs: tuple[Any, ...] = ()
    layouts: Mapping[int, _Layout] = dataclasses.field(default_factory=dict)  # by tensor input


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
    """Lower ``trace`` for the inputs ``example_args``: their strides are the graph's and, for
    a trace with dynamic dims, their sizes are the hints of the graph's symbolic sizes."""
    host_eqns, tensor_eqns = _split(trace)
    inputs = set(trace.inputs)
    tensor_outputs = tuple(dict.fromkeys(o for o in trace.outputs if isinstance(o, TensorVar) and o not in inputs))
    graph_trace = dce(Trace(trace.inputs, tuple(tensor_eqns), tensor_outputs, trace.name))
    # a size scalar (``sym_size``, e.g. ``x * T``) the graph reads is computed in the graph from
    # its inputs' symbolic sizes: a SymInt to Inductor, never a 0-d tensor input
    size_of: dict[Var, Any] = {e.outs[0]: e.params["size"] for e in host_eqns if e.prim is sym_size_p}
    used: set[Var] = {a for eqn in graph_trace.eqns for a in eqn.args if is_var(a)}
    returned: set[Var] = {o for o in trace.outputs if is_var(o)}
    # in definition order, so that the graph (and Inductor's cache key) is the same every time
    host_defined = [o for eqn in host_eqns for o in eqn.outs if isinstance(o, ScalarVar)]
    host_vars = tuple(v for v in host_defined if v in used or v in returned)
    scalar_vars = [v for v in trace.inputs if isinstance(v, ScalarVar) and v in used]
    scalar_vars += [v for v in host_vars if v in used and v not in size_of]
    tensor_inputs: list[Var] = [v for v in trace.inputs if isinstance(v, TensorVar) and v in used]
    bindings = _size_bindings(trace, graph_trace, [size_of[v] for v in used if v in size_of], tensor_inputs)
    graph_inputs: tuple[Var, ...] = (*tensor_inputs, *scalar_vars)
    host_trace = Trace(trace.inputs, tuple(host_eqns), host_vars, f"{trace.name}_host")
    host = torch_backend.compile_trace(host_trace)

    random_ops = _random_ops()

    def body(*values: Any) -> list[torch.Tensor]:
        env: dict[Any, Any] = dict(zip(graph_inputs, values))
        symbols = {symbol: env[v].shape[d] for symbol, (v, d) in bindings.items()}  # SymInts
        items: dict[Any, Any] = {}

        def read(a: Any) -> Any:
            if isinstance(a, ScalarVar):
                if a not in items:
                    items[a] = sizes.evaluate(size_of[a], symbols) if a in size_of else env[a].item()
                return items[a]
            return env[a] if isinstance(a, TensorVar) else a

        for eqn in graph_trace.eqns:
            params = {k: sizes.evaluate(p, symbols) for k, p in eqn.params.items()} if symbols else eqn.params
            if eqn.prim in random_ops:
                result = random_ops[eqn.prim](
                    env[eqn.args[0]], list(params["shape"]), params["dtype"], params["device"], params["offset"]
                )
            else:
                result = eqn.prim.impl(*map(read, eqn.args), **params)
            env.update(zip(eqn.outs, result if eqn.prim.multiple_results else (result,)))
        return [env[o] for o in tensor_outputs]

    if not tensor_outputs:
        raise _LoweringError("no tensor is computed (nothing for Inductor to compile)")
    symbolic: tuple[Any, ...] = ()
    layouts: dict[int, _Layout] = {}
    if bindings:
        position = {v: i for i, v in enumerate(trace.inputs)}
        symbolic, layouts = _symbolic_inputs(graph_inputs, bindings, [example_args[position[v]] for v in tensor_inputs])
        graph_args: list[Any] = list(symbolic)
    else:
        graph_args = _graph_args(trace, host, host_vars, graph_inputs, example_args)
    try:
        with _size_oblivious(bool(bindings)):
            graph = make_fx(body, tracing_mode="symbolic" if bindings else "fake")(*graph_args)
    except Exception as e:  # any lowering that does not trace symbolically
        raise _LoweringError(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    for node in graph.graph.nodes:  # standalone_compile(dynamic_shapes="from_graph") reads these
        if "val" in node.meta:
            node.meta["example_value"] = node.meta["val"]
    return Lowered(host, host_vars, graph, graph_inputs, tensor_outputs, symbolic, layouts)


def _size_oblivious(on: bool) -> contextlib.AbstractContextManager[Any]:
    """torch's size-oblivious reasoning for the symbolic sizes, where ``on``: a decision on a
    size (contiguity, a broadcast) takes the answer that holds for every size >= 0 instead of
    guarding ``s != 1`` on the hint, as symscalar's own rule is (a dynamic dim never
    broadcasts; size 1 is a value like any other), so sizes 1 run the compiled code too."""
    if not on:
        return contextlib.nullcontext()
    config = importlib.import_module("torch.fx.experimental._config")
    return config.patch(backed_size_oblivious=True)  # type: ignore[no-any-return]


def _size_bindings(
    trace: Trace, graph_trace: Trace, read_sizes: Sequence[Any], tensor_inputs: list[Var]
) -> dict[sizes.Symbol, tuple[TensorVar, int]]:
    """Where the graph reads each size symbol it uses: ``symbol -> (input tensor, dim)``, from
    its tensor inputs first; a tensor input is added (to ``tensor_inputs``) where only another
    input of the trace has the dim. Empty for a trace without dynamic dims."""
    needed: set[sizes.Symbol] = sizes.symbols_of(list(read_sizes))
    for eqn in graph_trace.eqns:
        needed |= sizes.symbols_of(list(eqn.params.values()))
        for v in (*eqn.args, *eqn.outs):
            if isinstance(v, TensorVar):
                needed |= sizes.symbols_of(v.shape)
    for v in graph_trace.outputs:
        needed |= sizes.symbols_of(v.shape) if isinstance(v, TensorVar) else set()
    candidates = [*tensor_inputs, *(v for v in trace.inputs if isinstance(v, TensorVar) and v not in tensor_inputs)]
    while True:  # an added input's own dims are read too: until no input is added
        for v in tensor_inputs:
            needed |= sizes.symbols_of(v.shape)  # type: ignore[union-attr]
        found: dict[sizes.Symbol, tuple[TensorVar, int]] = {}
        for v in candidates:
            assert isinstance(v, TensorVar)
            for d, size in enumerate(v.shape):
                symbol = size.symbol() if isinstance(size, sizes.Size) else None
                if symbol is not None and symbol not in found:
                    found[symbol] = (v, d)
        if needed - set(found):
            missing = sorted(map(repr, needed - set(found)))
            raise _LoweringError(f"the sizes {missing} are no dim of an input tensor")
        extra = {found[symbol][0] for symbol in needed} - set(tensor_inputs)
        if not extra:
            return {symbol: found[symbol] for symbol in needed}
        tensor_inputs.extend(v for v in candidates if v in extra)


@dataclasses.dataclass(frozen=True)
class _Layout:
    """A tensor input's strides over its symbolic sizes, read off the compiling call's tensor:
    along the dims from innermost to outermost (``order``), each stride is a constant
    (``scale``) times the sizes of the dynamic dims inside it (``dynamic``), 0 along a broadcast
    dim. Contiguous tensors, transposed views, expanded ones and slices along a static dim
    (``q`` of a fused ``qkv``) have one; the program checks it on every call."""

    order: tuple[int, ...]
    scale: tuple[int, ...]
    dynamic: tuple[bool, ...]

    @classmethod
    def of(cls, t: torch.Tensor, dynamic: Sequence[bool]) -> _Layout | None:
        """The layout of ``t`` (None where a stride is no multiple of the sizes inside it)."""
        order = tuple(sorted(range(t.ndim), key=lambda d: (t.stride(d), -d)))
        scale = [0] * t.ndim
        inner = 1
        for d in order:
            if t.stride(d) == 0:
                continue
            if t.stride(d) % inner:
                return None
            scale[d] = t.stride(d) // inner
            inner *= t.shape[d] if dynamic[d] else 1
        return cls(order, tuple(scale), tuple(dynamic))

    def strides(self, shape: Sequence[Any], times: Callable[[Any, Any], Any] = lambda a, b: a * b) -> tuple[Any, ...]:
        """The strides for ``shape`` (ints, SymInts, or source text with ``times`` writing a product)."""
        strides: list[Any] = [0] * len(shape)
        inner: Any = 1
        for d in self.order:
            if self.scale[d] == 0:
                continue
            strides[d] = times(self.scale[d], inner)
            inner = times(inner, shape[d]) if self.dynamic[d] else inner
        return tuple(strides)


def _symbolic_inputs(
    graph_inputs: Sequence[Var], bindings: Mapping[sizes.Symbol, tuple[TensorVar, int]], examples: Sequence[Any]
) -> tuple[tuple[Any, ...], dict[int, _Layout]]:
    """The graph's placeholder values for a trace with dynamic dims: fake tensors whose declared
    dims are symbols of one ShapeEnv (one symbol per declared name, hinted by ``examples``,
    ranged by the declaration; 0 and 1 are values like any other, as in symscalar), scalars as
    fake 0-d tensors. Also, per tensor input with dynamic dims, its layout (the example's)."""
    # imported on the first lowering with dynamic dims: torch._dynamo takes seconds to import
    symbolic_shapes = importlib.import_module("torch.fx.experimental.symbolic_shapes")
    source = importlib.import_module("torch._dynamo.source")
    fake_tensor = importlib.import_module("torch._subclasses.fake_tensor")
    int_oo = importlib.import_module("torch.utils._sympy.numbers").int_oo
    shape_env = symbolic_shapes.ShapeEnv()
    mode = fake_tensor.FakeTensorMode(shape_env=shape_env)
    index = {v: i for i, v in enumerate(graph_inputs)}
    symbols: dict[sizes.Symbol, Any] = {}
    for symbol, (bound, d) in bindings.items():
        hint = int(examples[index[bound]].shape[d])
        name = source.ConstantSource(f"s_{symbol.name}")
        expr = shape_env.create_symbol(
            hint, name, dynamic_dim=symbolic_shapes.DimDynamic.DYNAMIC, do_not_specialize_zero_one=True
        )
        shape_env.constrain_symbol_range(expr, symbol.min, int_oo if symbol.max is None else symbol.max)
        symbols[symbol] = shape_env.create_symintnode(expr, hint=hint, source=name)
    values: list[Any] = []
    layouts: dict[int, _Layout] = {}
    with mode:
        for i, v in enumerate(graph_inputs):
            if not isinstance(v, TensorVar):
                values.append(torch.empty((), dtype=_SCALAR_DTYPES[v.dtype]))
                continue
            example = examples[i]
            shape, strides = tuple(example.shape), tuple(example.stride())
            if sizes.is_symbolic_shape(v.shape):
                layout = _Layout.of(example, [isinstance(size, sizes.Size) for size in v.shape])
                if layout is None or strides != layout.strides(shape):
                    raise _LoweringError(
                        f"input {i} ({v.type_str()}) has strides {strides}, which are no multiples of its dynamic "
                        "sizes: Inductor cannot compile it for every size; call .contiguous() on it"
                    )
                layouts[i] = layout
                shape = sizes.evaluate(v.shape, symbols)
                strides = layout.strides(shape)
            values.append(torch.empty_strided(shape, strides, dtype=v.dtype, device=v.device))
    return tuple(values), layouts


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
        self._variants: list[Callable[..., Any]] = []  # the compiled programs, tried in order

    def __call__(self, *args: Any) -> Any:
        return self._run(*args)

    def _counting(self, *args: Any) -> Any:
        with self._lock:
            self.calls += 1
            if self.calls > self.backend.compile_after and self._run == self._counting:
                self._run = self._compile(args, self._outside(0))
                self._variants.append(self._run)
            run = self._run if self._run != self._counting else self.torch_run
        return run(*args)

    def _outside(self, k: int) -> Callable[..., Any]:
        """What a call outside compiled program ``k``'s guards or layouts runs: the next one,
        compiled for this call (its sizes the hints, its strides the layouts) while fewer than
        the backend's ``variants`` are, else the torch program."""

        def outside(*args: Any) -> Any:
            with self._lock:
                if len(self._variants) == k + 1 and len(self._variants) < self.backend.variants:
                    self._variants.append(self._compile(args, self._outside(k + 1)))
                run = self._variants[k + 1] if len(self._variants) > k + 1 else self.torch_run
            return run(*args)

        return outside

    def _compile(self, args: tuple[Any, ...], outside: Callable[..., Any]) -> Callable[..., Any]:
        start = time.perf_counter()
        try:
            lowered = lower(self.trace, args)
            # imported here, on the first compile: torch._inductor takes seconds to import
            # (it imports dynamo), which ``import symscalar`` must not pay
            inductor = importlib.import_module("torch._inductor")
            if lowered.symbolic_inputs:  # dynamic dims: the graph's own fake inputs carry the symbols
                example = list(lowered.symbolic_inputs)
            else:
                example = _graph_args(self.trace, lowered.host, lowered.host_vars, lowered.graph_inputs, args)
            with torch.no_grad(), _size_oblivious(bool(lowered.symbolic_inputs)):
                compiled = inductor.standalone_compile(
                    lowered.graph,
                    example,
                    dynamic_shapes="from_graph",
                    options={"config_patches": _config_patches(self.backend.options, args)},
                )
            guard, assumes = _guard(lowered)
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
        self.backend.compiles.append(CompileRecord(self.trace.name, time.perf_counter() - start, assumes=assumes))
        return _runner(self.trace, self.render, lowered, compiled, args, outside, guard)

    @property
    def __source__(self) -> str:
        return self.torch_run.__source__  # type: ignore[attr-defined, no-any-return]


def _guard(lowered: Lowered) -> tuple[Callable[..., bool] | None, str]:
    """The guards Inductor's compile of a graph with symbolic sizes added (``s_T != 1`` where
    a decision took the hint's side, the declared ranges), as a function of the graph's tensor
    arguments, and as text with the declared names (``s_T`` for ``L['t0'].size()[1]``).
    ``(None, "")`` for a graph with static shapes."""
    if not lowered.symbolic_inputs:
        return None, ""
    tensors = list(lowered.symbolic_inputs[: sum(isinstance(v, TensorVar) for v in lowered.graph_inputs)])
    shape_env = tensors[0].fake_mode.shape_env
    code = shape_env.produce_guards_expression(tensors)
    if not code:
        return None, "every size"
    text = _readable_guards(code, lowered.graph_inputs[: len(tensors)])
    interp = importlib.import_module("torch.fx.experimental.symbolic_shapes").SYMPY_INTERP
    checks = compile(code, f"<symscalar inductor guards: {text}>", "eval")
    names = [f"t{j}" for j in range(len(tensors))]

    def guard(*args: torch.Tensor) -> bool:
        return bool(eval(checks, interp, {"L": dict(zip(names, args))}))  # noqa: S307 - torch's own guard code

    return guard, text


def _readable_guards(code: str, tensor_inputs: Sequence[Var]) -> str:
    """Inductor's guards in the declared names (``s_T`` for ``L['t0'].size()[1]``), without
    what symscalar checks itself on every call (the declared ranges, the strides) and without
    the equalities that the names make trivial; "every size" where nothing is left."""
    declared: dict[str, sizes.Symbol] = {}
    for j, v in enumerate(tensor_inputs):
        for d, size in enumerate(v.shape if isinstance(v, TensorVar) else ()):
            symbol = size.symbol() if isinstance(size, sizes.Size) else None
            if symbol is not None:
                code = code.replace(f"L['t{j}'].size()[{d}]", repr(symbol))
                declared[repr(symbol)] = symbol

    terms: list[str] = []
    for term in code.split(" and "):
        if ".stride()" in term or term in terms or _implied(term, declared):
            continue
        terms.append(term)
    return f"sizes where {' and '.join(terms)}" if terms else "every size"


def _implied(term: str, declared: Mapping[str, sizes.Symbol]) -> bool:
    """``s_T == s_T``, ``1 <= s_T`` with ``Dim("T", min=1)``, ``s_T <= 64`` with ``max=64``."""
    left, _, right = term.partition(" == ")
    if right and left == right:
        return True
    left, _, right = term.partition(" <= ")
    if left in declared and right.isdigit():
        return declared[left].max == int(right)
    if right in declared and left.isdigit():
        return declared[right].min == int(left)
    return False


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
    guard: Callable[..., bool] | None = None,
) -> Callable[..., Any]:
    """The per-call function of a compiled program, generated like the torch backend's: the
    host scalars, the graph's arguments (scalars as 0-d tensors), the compiled graph, the
    user's output structure. A call whose tensors have other strides than the compiled ones
    (for a tensor with dynamic dims: contiguous, or broadcast along the same dims), or whose
    sizes fail Inductor's ``guard``, runs ``torch_run`` instead."""
    position = {v: i for i, v in enumerate(trace.inputs)}
    host_index = {v: j for j, v in enumerate(lowered.host_vars)}
    out_index = {v: j for j, v in enumerate(lowered.graph_outputs)}
    every = ", ".join(f"a{i}" for i in range(len(trace.inputs)))
    lines = [f"def run({every}):"]
    tensor_inputs = [v for v in lowered.graph_inputs if isinstance(v, TensorVar)]
    checks = [_stride_check(position[v], j, lowered, example_args) for j, v in enumerate(tensor_inputs)]
    if guard is not None:
        checks.append(f"not guard({', '.join(f'a{position[v]}' for v in tensor_inputs)})")
    if checks:
        lines.append(f"    if {' or '.join(checks)}:")
        lines.append(f"        return torch_run({every})")
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
        "guard": guard,
    }
    exec(compile("\n".join(lines) + "\n", f"<symscalar inductor backend: {trace.name}>", "exec"), namespace)  # noqa: S102
    fn: Callable[..., Any] = namespace["run"]
    return fn


def _stride_check(i: int, j: int, lowered: Lowered, example_args: Sequence[Any]) -> str:
    """``a<i>.stride() != ...``: the test that trace input ``i`` (the graph's tensor input
    ``j``) has other strides than the compiled code assumes: the example's, or for a tensor
    with dynamic dims its layout's strides at the call's sizes."""
    layout = lowered.layouts.get(j)
    if layout is None:
        return f"a{i}.stride() != {tuple(example_args[i].stride())!r}"
    shape = [f"a{i}.shape[{d}]" for d in range(len(layout.order))]
    strides = [str(s) for s in layout.strides(shape, lambda a, b: b if a == 1 else a if b == 1 else f"{a} * {b}")]
    return f"a{i}.stride() != ({', '.join(strides)}{',' if len(strides) == 1 else ''})"


class InductorBackend:
    """The Inductor backend as ``symscalar.backend.Backend``.

    ``jit(f, backend="inductor")`` uses the defaults; ``jit(f, backend=InductorBackend(
    compile_after=0, options={...}))`` sets them: ``compile_after`` calls of each program
    (forward, backward) run on the torch backend before it is compiled, and ``options`` are
    Inductor config patches (as ``torch.compile(options=...)``) over ``CPU_OPTIONS`` for a
    program whose tensors are all on the CPU (``{"cpp_wrapper": False}`` restores Inductor's
    default). ``variants`` (default 1) is how many Inductor programs one trace may get: a call
    outside every compiled one's guards or input layouts (another size range with dynamic dims,
    other strides) compiles another, for that call, until there are ``variants``; beyond, such
    calls run on the torch backend. The object of one cache entry (``for_entry``) keeps the
    entry's compile log (``compiles``, shown by ``explain()``).
    """

    name = "inductor"
    priority = -10  # "auto" never picks it (see docs/inductor.md)

    def __init__(self, compile_after: int = 1, options: Mapping[str, Any] | None = None, variants: int = 1) -> None:
        if not isinstance(compile_after, int) or isinstance(compile_after, bool) or compile_after < 0:
            raise ValueError(f"compile_after must be an int >= 0 (calls before compiling), got {compile_after!r}")
        if not isinstance(variants, int) or isinstance(variants, bool) or variants < 1:
            raise ValueError(f"variants must be an int >= 1 (Inductor compiles per program), got {variants!r}")
        self.compile_after = compile_after
        self.variants = variants
        self.options = dict(options or {})
        self.compiles: list[CompileRecord] = []

    def compile_trace(self, trace: Trace, render_outputs: Render | None = None) -> Callable[..., Any]:
        return _Program(trace, render_outputs, self)

    def check_available(self, trace: Trace) -> None:
        return None  # Inductor runs on every device torch.compile supports

    def usable_for(self, trace: Trace) -> bool:
        return False

    def for_entry(self) -> InductorBackend:
        return InductorBackend(self.compile_after, self.options, self.variants)

    def last_fusions(self) -> list[Any]:
        return []

    def compile_log(self) -> list[CompileRecord]:
        return list(self.compiles)


BACKEND = register_backend(InductorBackend())
