"""The nvFuser backend: a trace becomes a plan of nvFuser fusions, torch calls and host code.

Why a separate backend: nvFuser compiles a region of tensor ops into one kernel (or a few), but
only if every value it must treat as a constant is static. symscalar's traces are built so
that it is (``check_trace``), and this module keeps it so at the boundary:

1. **Partition.** Scalar-only equations (``scalar_mul``, ``check`` ...) run on the host and
   feed fusions as scalar inputs. An equation whose primitive has an nvFuser lowering
   (in ``NVFUSER_LOWERINGS``), whose tensors have dtypes nvFuser supports and whose operands and
   static parameters its ``supports`` predicate (if any) accepts is *fusible*; runs of
   consecutive fusible equations form one fusion region; anything else runs in torch.
2. **Lower** each region in three phases: define inputs (tensors with symbolic sizes ``-1``
   except size-1 broadcast dims, contiguity and stride order from the actual strides; each
   dynamic scalar as ``fd.define_scalar(dtype=...)``), translate each equation through its
   op's lowering ``lower(fd, *args, **params)``, add outputs. Static literals become
   constants; torch dtypes in parameters become nvFuser ``DataType``\\ s.
3. **Cache.** A region's ``FusionDefinition`` is cached on its structure, static values and
   input ranks/dtypes/broadcast dims/contiguity, never on dynamic scalar values or sizes:
   sizes other than 1 in a size parameter (``Primitive.size_params``: the ``shape`` of
   reshape, expand, full) are passed to the
   fusion as scalar inputs, so a new batch size reuses the same fusion.

**Dynamic dims** (``jit(..., dynamic_dims=...)``): a dim whose size is a ``sizes.Size`` is ``-1``
like any non-1 dim, and a size expression in a size parameter (``s_B * s_T``) is one of those
scalar inputs, evaluated by the plan from the sizes it binds from its inputs on every call, so
one fusion serves every size. A size-1 call of a dynamic dim is not a broadcast dim: its layout
is computed as if the dim were larger. An equation with a size in any other size-like parameter
(a slice bound, an ``arange`` end, a padding) runs in torch.

The result is one generated Python function for the whole trace (like ``torch_backend``),
with the same ``compile_trace(trace, render_outputs)`` interface. ``lower(trace, inputs)``
builds the fusions for given input metadata without running anything (no GPU needed).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import torch

from symscalar import messages, sizes
from symscalar.backend import register_backend
from symscalar.errors import BackendUnavailableError, DynamicValueError, StaticValueRequiredError, TraceCheckError
from symscalar.generated import exec_generated
from symscalar.nvfuser_lowering import NVFUSER_LOWERINGS
from symscalar.trace import (
    Eqn,
    Namespace,
    ScalarVar,
    TensorVar,
    Trace,
    Var,
    check_trace,
    contains_dynamic,
    dce,
    eqn_source,
    format_static,
    is_var,
    return_source,
    signature_source,
    size_bindings,
    with_codegen_name,
)

__all__ = [
    "compile_trace",
    "lower",
    "Plan",
    "Region",
    "NvFuserBackend",
    "FusionList",
    "TensorMeta",
    "import_nvfuser",
    "nvfuser_available",
    "fusion_cache_info",
    "fusion_cache_clear",
    "FusionCacheInfo",
    "dynamic_descriptor",
]

_DTYPE_NAMES = {
    torch.float64: "Double",
    torch.float32: "Float",
    torch.float16: "Half",
    torch.bfloat16: "BFloat16",
    torch.int64: "Int",
    torch.int32: "Int32",
    torch.bool: "Bool",
    torch.complex64: "ComplexFloat",
    torch.complex128: "ComplexDouble",
}
_SCALAR_DTYPE_NAMES = {float: "Double", int: "Int", bool: "Bool", complex: "ComplexDouble"}


# ----------------------------------------------------------------------------------------
# The deferred import


def import_nvfuser() -> types.ModuleType:
    """The ``nvfuser_direct`` module, imported on first use.

    Raises:
        BackendUnavailableError: nvfuser_direct is not installed or fails to import.
    """
    result = _import_nvfuser()
    if isinstance(result, BackendUnavailableError):
        raise result
    return result


@functools.cache
def _import_nvfuser() -> types.ModuleType | BackendUnavailableError:
    """This is the one deferred import of symscalar, on purpose: nvFuser is an optional
    dependency that loads CUDA libraries (over a second), so ``import symscalar`` must neither
    need it nor pay for it. The module, or the error saying why it is unavailable, is cached."""
    try:
        import nvfuser_direct  # type: ignore[import-untyped]  # noqa: PLC0415 - optional, see above
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        error = BackendUnavailableError(
            f"backend='nvfuser' needs the nvfuser_direct package, which failed to import "
            f"({type(e).__name__}: {e}). Install the wheel matching your torch and CUDA, e.g. "
            "`pip install nvfuser-cu128-torch210` for torch 2.10 + CUDA 12.8, or use "
            "backend='torch'."
        )
        error.__cause__ = e
        return error
    return nvfuser_direct  # type: ignore[no-any-return]


def nvfuser_available() -> bool:
    """Whether nvfuser_direct imports in this environment."""
    try:
        import_nvfuser()
    except BackendUnavailableError:
        return False
    return True


def nvfuser_dtype(dtype: torch.dtype) -> Any:
    """The nvFuser ``DataType`` of a torch dtype (BackendUnavailableError if it has none)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        raise BackendUnavailableError(f"nvFuser does not support dtype {dtype}")
    return getattr(import_nvfuser().DataType, name)


# ----------------------------------------------------------------------------------------
# Tensor metadata and the fusion cache


class TensorMeta(NamedTuple):
    """What a fusion needs to know about a tensor input: sizes (only the size-1 pattern is
    used), dtype and strides."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    stride: tuple[int, ...]

    @staticmethod
    def contiguous(shape: Sequence[int], dtype: torch.dtype) -> TensorMeta:
        stride = torch.empty(tuple(shape), dtype=dtype, device="meta").stride()
        return TensorMeta(tuple(shape), dtype, tuple(stride))


@functools.lru_cache(maxsize=4096)
def _descriptor(shape: tuple[int, ...], stride: tuple[int, ...]) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """nvFuser's (contiguity, stride_order) of a tensor layout."""
    contiguity, stride_order = import_nvfuser().compute_tensor_descriptor(shape, stride)
    return tuple(contiguity), tuple(stride_order)


class FusionCacheInfo(NamedTuple):
    """Regions whose FusionDefinition was found in the cache, built, and how many are held."""

    hits: int
    misses: int
    entries: int


_FUSIONS: dict[Any, Any] = {}
_fusion_stats = {"hits": 0, "misses": 0}


def fusion_cache_info() -> FusionCacheInfo:
    """Counters of the process-wide fusion cache."""
    return FusionCacheInfo(_fusion_stats["hits"], _fusion_stats["misses"], len(_FUSIONS))


def fusion_cache_clear() -> None:
    """Forget every cached FusionDefinition and reset the counters."""
    _FUSIONS.clear()
    _fusion_stats.update(hits=0, misses=0)


# ----------------------------------------------------------------------------------------
# Regions


def is_host_eqn(eqn: Eqn) -> bool:
    """Scalar-only work (no tensor argument or result): it runs on the host as Python."""
    return not any(isinstance(a, TensorVar) for a in (*eqn.args, *eqn.outs))


def is_fusible(eqn: Eqn) -> bool:
    """Whether nvFuser can run ``eqn``: its primitive has a lowering, its results are tensors,
    every tensor has a dtype nvFuser supports, and its lowering's ``supports``
    predicate (if any) accepts its operands and static parameters. Anything else runs in
    torch: a lowering that cannot handle a case says so there, never by a wrong result."""
    lowering = NVFUSER_LOWERINGS.get(eqn.prim)
    if lowering is None or not eqn.outs:
        return False
    if not all(isinstance(o, TensorVar) for o in eqn.outs):
        return False
    tensors = [a for a in (*eqn.args, *eqn.outs) if isinstance(a, TensorVar)]
    if not all(t.dtype in _DTYPE_NAMES for t in tensors):
        return False
    if sizes.enabled()[0] and any(
        key not in eqn.prim.size_params and sizes.symbols_of(value) for key, value in eqn.params.items()
    ):
        return False  # a dynamic size in a slice bound, an arange end, a padding: torch runs it
    try:
        return lowering.supports is None or bool(lowering.supports(*eqn.args, **eqn.params))
    except DynamicValueError:  # a predicate that would need a dynamic size's value
        return False


def _freeze(value: Any) -> Any:
    """A static value as a cache-key part: ``1``, ``True`` and ``1.0`` differ, and so do
    ``0.0`` and ``-0.0`` (which compare equal but lower to different constants)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, complex):
        return ("complex", value.real.hex(), value.imag.hex())
    if isinstance(value, (bool, int)):
        return (type(value).__name__, value)
    return value


def _size_pattern(shape: Sequence[int]) -> tuple[int | None, ...]:
    """The cache-key view of a shape: 1 stays (a broadcast dim), other sizes are symbolic."""
    return tuple(1 if s == 1 else None for s in shape)


def _resolved_shape(eqn: Eqn, key: str, value: Any) -> tuple[int, ...]:
    """A size parameter (``Primitive.size_params``) with any -1 resolved: it is the (single)
    result's shape. Its entries other than 1 are passed to the fusion as scalar inputs
    (nvFuser sizes are symbolic); entries equal to 1 stay constants (they make broadcast dims)
    and are part of the cache key."""
    out = eqn.outs[0]
    if isinstance(out, TensorVar) and len(out.shape) == len(value):
        return out.shape
    raise TraceCheckError(
        f"primitive {eqn.prim.name}: size parameter {key!r}={value!r} does not match the shape "
        "of its result; only a parameter holding the result's shape belongs in the primitive's "
        "size_params"
    )


class Region:
    """A run of consecutive fusible equations, lowered to one nvFuser FusionDefinition.

    Attributes:
        eqns: the equations, in trace order.
        inputs: variables read by the region and defined outside it, in order of first use.
        outputs: variables defined by the region and read after it.
        sizes: runtime values of the size inputs (entries != 1 of size parameters).
        structure: the cache key part that does not depend on strides.
        last_fusion: the FusionDefinition the region ran (or was lowered to) most recently.
    """

    def __init__(self, eqns: Sequence[Eqn], live_after: set[Var]) -> None:
        self.eqns = tuple(eqns)
        defined: set[Var] = set()
        inputs: list[Var] = []
        for eqn in self.eqns:
            for a in eqn.args:
                if is_var(a) and a not in defined and a not in inputs:
                    inputs.append(a)
            defined.update(eqn.outs)
        self.inputs = tuple(inputs)
        self.outputs = tuple(v for eqn in self.eqns for v in eqn.outs if v in live_after)
        self.sizes = tuple(
            s
            for eqn in self.eqns
            for key, value in eqn.params.items()
            if key in eqn.prim.size_params
            for s in _resolved_shape(eqn, key, value)
            if s != 1
        )
        self.tensor_positions = tuple(i for i, v in enumerate(self.inputs) if isinstance(v, TensorVar))
        # per tensor input, its dynamic dims (a size-1 call of one is not a broadcast dim)
        self.dynamic_dims = tuple(
            tuple(d for d, s in enumerate(typing.cast(TensorVar, self.inputs[i]).shape) if isinstance(s, sizes.Size))
            for i in self.tensor_positions
        )
        self.structure = self._structure()
        self.fusions: dict[Any, Any] = {}  # layout descriptors -> FusionDefinition
        self.last_fusion: Any = None

    def _structure(self) -> Any:
        index: dict[Var, Any] = {v: ("in", i) for i, v in enumerate(self.inputs)}
        body = []
        for k, eqn in enumerate(self.eqns):
            for j, o in enumerate(eqn.outs):
                index[o] = ("eqn", k, j)
            args = tuple(index[a] if isinstance(a, (TensorVar, ScalarVar)) else ("lit", _freeze(a)) for a in eqn.args)
            params = tuple(
                (key, _size_pattern(_resolved_shape(eqn, key, v)) if key in eqn.prim.size_params else _freeze(v))
                for key, v in eqn.params.items()
            )
            body.append((eqn.prim.name, args, params, tuple(_signature(o) for o in eqn.outs)))
        ins = tuple(
            ("tensor", v.dtype, _size_pattern(v.shape)) if isinstance(v, TensorVar) else ("scalar", v.dtype)
            for v in self.inputs
        )
        return ins, tuple(body), tuple(index[o] for o in self.outputs)

    def fusion_for(self, metas: Sequence[TensorMeta]) -> Any:
        """The FusionDefinition for tensor inputs with these layouts (one per tensor input)."""
        layouts = tuple(
            dynamic_descriptor(m.shape, m.stride, dynamic) if dynamic else _descriptor(m.shape, m.stride)
            for m, dynamic in zip(metas, self.dynamic_dims)
        )
        fd = self.fusions.get(layouts)
        if fd is None:
            key = (self.structure, layouts)
            fd = _FUSIONS.get(key)
            if fd is None:
                _fusion_stats["misses"] += 1
                fd = _FUSIONS[key] = build_fusion(self, layouts)
            else:
                _fusion_stats["hits"] += 1
            self.fusions[layouts] = fd
        self.last_fusion = fd
        return fd

    def __call__(self, *args: Any) -> list[torch.Tensor]:
        """Run the region on its inputs followed by the values of its ``sizes`` (the plan
        passes both: a size may be an expression of the dynamic sizes of this call)."""
        metas = [
            TensorMeta(tuple(args[i].shape), args[i].dtype, tuple(args[i].stride())) for i in self.tensor_positions
        ]
        fd = self.fusion_for(metas)
        return fd.execute(list(args))  # type: ignore[no-any-return]


def dynamic_descriptor(
    shape: tuple[int, ...], stride: tuple[int, ...], dynamic: Sequence[int]
) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """nvFuser's (contiguity, stride_order) of a tensor whose ``dynamic`` dims are ``-1`` in
    the definition. A size-1 call of a dynamic dim is not a broadcast dim (the plain descriptor
    would give it no contiguity): in the descriptor's stride order, each dim that is neither a
    static size-1 dim nor expanded (stride 0) is contiguous exactly where its stride is the next
    inner dim's stride times that dim's size, the real sizes counted. So every claim holds for
    the tensor at hand (nvFuser computes a contiguous dim's stride from those sizes), and a
    contiguous tensor at size 1 has the descriptor, and the fusion, of every other size."""
    contiguity, stride_order = _descriptor(shape, stride)
    if not any(shape[d] == 1 for d in dynamic):
        return contiguity, stride_order
    flags: list[Any] = list(contiguity)
    expected = 1
    for d in sorted(range(len(shape)), key=lambda d: stride_order[d]):  # innermost first
        if (shape[d] == 1 and d not in dynamic) or stride[d] == 0:
            flags[d] = None  # a static size-1 dim, an expanded dim: broadcast, as nvFuser's own
            continue
        flags[d] = stride[d] == expected
        expected = stride[d] * shape[d]
    return tuple(flags), stride_order


def _signature(v: Var) -> Any:
    if isinstance(v, TensorVar):
        return ("tensor", v.dtype, len(v.shape))
    return ("scalar", v.dtype)


def check_static_params(eqn: Eqn) -> None:
    """Raise StaticValueRequiredError, naming the op, if a static parameter is dynamic.

    ``check_trace`` already guarantees this; checking again here means a lowering can never
    receive a proxy or ScalarVar where nvFuser needs a constant (which nvFuser would report
    as an opaque TypeError, or a fusion split).
    """
    for key, value in eqn.params.items():
        if contains_dynamic(value):
            raise StaticValueRequiredError(
                f"nvFuser lowering of {eqn.prim.name}: static parameter {key!r} holds a dynamic value "
                f"({value!r}), where nvFuser needs a compile-time constant" + messages.two_fixes()
            )


def build_fusion(region: Region, layouts: Sequence[tuple[tuple[Any, ...], tuple[int, ...]]]) -> Any:
    """Lower ``region`` to a new FusionDefinition (three phases: inputs, equations, outputs).

    Args:
        region: the region.
        layouts: nvFuser's ``(contiguity, stride_order)`` of each tensor input, in order.
    """
    for eqn in region.eqns:
        check_static_params(eqn)
    nv = import_nvfuser()
    fd = nv.FusionDefinition()
    # Enter and leave the definition by hand: FusionDefinition.__exit__ prints any exception
    # it sees to stdout; ours propagate with their own message instead.
    fd.__enter__()
    try:
        _define(fd, nv, region, layouts)
    finally:
        fd.__exit__(None, None, None)
    return fd


def _define(fd: Any, nv: Any, region: Region, layouts: Sequence[tuple[tuple[Any, ...], tuple[int, ...]]]) -> None:
    env: dict[Var, Any] = {}
    layout_of = dict(zip(region.tensor_positions, layouts))
    for i, v in enumerate(region.inputs):
        if isinstance(v, TensorVar):
            contiguity, stride_order = layout_of[i]
            env[v] = fd.define_tensor(
                shape=[1 if s == 1 else -1 for s in v.shape],
                contiguity=list(contiguity),
                dtype=nvfuser_dtype(v.dtype),
                stride_order=list(stride_order),
            )
        else:
            env[v] = fd.define_scalar(dtype=getattr(nv.DataType, _SCALAR_DTYPE_NAMES[v.dtype]))
    for eqn in region.eqns:
        args = [env[a] if isinstance(a, (TensorVar, ScalarVar)) else _constant(fd, nv, a) for a in eqn.args]
        params = {key: _lower_param(fd, nv, eqn, key, value) for key, value in eqn.params.items()}
        result = NVFUSER_LOWERINGS[eqn.prim].lower(fd, *args, **params)
        results = result if eqn.prim.multiple_results else (result,)
        for out, r in zip(eqn.outs, results):
            assert isinstance(out, TensorVar)
            # nvFuser's type promotion differs from torch's for scalar operands (f16 * double is
            # f32 in nvFuser, f16 in torch): the trace's dtype is the contract.
            if r.dtype() != nvfuser_dtype(out.dtype):
                r = fd.ops.cast(r, nvfuser_dtype(out.dtype))
            env[out] = r
    for v in region.outputs:
        fd.add_output(env[v])


def _constant(fd: Any, nv: Any, value: Any) -> Any:
    """A static literal operand as an nvFuser constant (not a fusion input)."""
    if value is None:
        return None
    return fd.define_scalar(value, dtype=getattr(nv.DataType, _SCALAR_DTYPE_NAMES[type(value)]))


def _lower_param(fd: Any, nv: Any, eqn: Eqn, key: str, value: Any) -> Any:
    if key in eqn.prim.size_params:
        shape = _resolved_shape(eqn, key, value)
        return [1 if s == 1 else fd.define_scalar(dtype=nv.DataType.Int) for s in shape]
    if isinstance(value, torch.dtype):
        return nvfuser_dtype(value)
    return value


# ----------------------------------------------------------------------------------------
# The plan


@dataclasses.dataclass
class Plan:
    """A whole trace as host code, torch calls and fusion regions, in one generated function.

    Attributes:
        trace: the trace.
        regions: the fusion regions, in order.
        steps: ``("host" | "torch" | "fusion", payload)`` in execution order (payload: the
            Eqn, or the Region).
        run: the generated function of the trace's inputs; ``run.__source__`` is its code.
    """

    trace: Trace
    regions: tuple[Region, ...]
    steps: tuple[tuple[str, Any], ...]
    run: Callable[..., Any]

    @property
    def fusions(self) -> FusionList:
        """The FusionDefinition each region ran (or was lowered to) most recently."""
        return FusionList(r.last_fusion for r in self.regions if r.last_fusion is not None)

    def __str__(self) -> str:
        return self.run.__source__  # type: ignore[attr-defined, no-any-return]


class FusionList(list[Any]):
    """A list of FusionDefinitions that prints as their definitions."""

    def __str__(self) -> str:
        return "\n".join(repr(fd) for fd in self)


def partition(trace: Trace) -> list[tuple[str, Any]]:
    """Host equations first (they read only scalars), then runs of fusible equations as
    regions and the rest as torch steps, in trace order. Dead equations are dropped."""
    trace = dce(trace)
    host = [e for e in trace.eqns if is_host_eqn(e)]
    rest = [e for e in trace.eqns if not is_host_eqn(e)]
    groups: list[tuple[str, list[Eqn]]] = []
    for fusible, run in itertools.groupby(rest, key=is_fusible):
        if fusible:
            groups.append(("fusion", list(run)))
        else:
            groups.extend(("torch", [e]) for e in run)
    steps: list[tuple[str, Any]] = [("host", e) for e in host]
    for n, (kind, eqns) in enumerate(groups):
        if kind == "torch":
            steps.append(("torch", eqns[0]))
            continue
        live_after = {a for a in trace.outputs if is_var(a)}
        for _, later in groups[n + 1 :]:
            live_after.update(a for e in later for a in e.args if is_var(a))
        steps.append(("fusion", Region(eqns, live_after)))
    return steps


def build_plan(trace: Trace, render_outputs: Callable[[list[str]], str] | None = None) -> Plan:
    """Check, partition and generate the plan's function (fusions are built on first call)."""
    trace = with_codegen_name(trace)
    check_trace(trace)
    for eqn in trace.eqns:
        check_static_params(eqn)
    steps = partition(trace)
    names = Namespace.of(trace)
    namespace: dict[str, Any] = {"torch": torch}
    lines = [signature_source(trace, names)]
    lines += [f"    {line}" for line in size_bindings(trace, names)]  # s_T = t0.shape[1] ...
    regions: list[Region] = []
    for kind, payload in steps:
        if kind == "fusion":
            region = payload
            fn_name = f"_fusion{len(regions)}"
            namespace[fn_name] = region
            regions.append(region)
            inputs = ", ".join([names[v] for v in region.inputs] + [format_static(s) for s in region.sizes])
            targets = "".join(f"{names[v]}, " for v in region.outputs)
            lines.append(f"    {targets}= {fn_name}({inputs})")
            continue
        eqn = payload
        fn_name = f"_prim_{eqn.prim.name}"
        namespace[fn_name] = eqn.prim.impl
        lines.append(f"    {eqn_source(eqn, names, fn_name)}  # {kind}")
    lines.append(return_source(trace, names, render_outputs))
    source = "\n".join(lines) + "\n"
    exec_generated(source, f"nvfuser program {trace.name}", namespace)
    run: Callable[..., Any] = namespace[trace.name]
    run.__source__ = source  # type: ignore[attr-defined]
    plan = Plan(trace, tuple(regions), tuple(steps), run)
    run.plan = plan  # type: ignore[attr-defined]
    return plan


def compile_trace(trace: Trace, render_outputs: Callable[[list[str]], str] | None = None) -> Callable[..., Any]:
    """Compile ``trace`` into a Python function of its inputs that runs fusions with nvFuser.

    Same interface as ``torch_backend.compile_trace``; the function's ``plan`` attribute is
    the ``Plan`` and ``__source__`` its generated code. FusionDefinitions are built on the
    first call, when the inputs' strides are known, and come from the fusion cache after.
    """
    import_nvfuser()
    return build_plan(trace, render_outputs).run


def lower(trace: Trace, inputs: Sequence[Any]) -> Plan:
    """Build every fusion of ``trace`` for the given inputs without running anything.

    Args:
        trace: the trace.
        inputs: one per trace input: a tensor, a ``TensorMeta`` (or ``None``: contiguous) for a
            tensor input, anything for a scalar input. Intermediate tensors made by torch
            steps are assumed contiguous.

    Returns:
        The plan; ``plan.fusions`` holds its FusionDefinitions (``repr(fd)`` prints one,
        ``fd.fusion.print_math()`` its IR).

    Example:
        >>> plan = lower(trace, [torch.empty(4, 3), 2.0])
        >>> print(plan.fusions)
    """
    import_nvfuser()
    if len(inputs) != len(trace.inputs):
        raise TypeError(f"lower(): the trace takes {len(trace.inputs)} inputs, got {len(inputs)}")
    plan = build_plan(trace)
    metas: dict[Var, TensorMeta] = {}
    for v, x in zip(trace.inputs, inputs):
        if isinstance(v, TensorVar):
            metas[v] = _meta_of(v, x)
    for kind, payload in plan.steps:
        if kind == "fusion":
            payload.fusion_for([metas[payload.inputs[i]] for i in payload.tensor_positions])
            outs = payload.outputs
        else:
            outs = payload.outs
        for o in outs:
            if isinstance(o, TensorVar):
                metas[o] = TensorMeta.contiguous(sizes.hint(o.shape), o.dtype)
    return plan


def _meta_of(v: TensorVar, x: Any) -> TensorMeta:
    if isinstance(x, torch.Tensor):
        return TensorMeta(tuple(x.shape), x.dtype, tuple(x.stride()))
    if isinstance(x, TensorMeta):
        return x
    if x is None:
        return TensorMeta.contiguous(sizes.hint(v.shape), v.dtype)
    raise TypeError(f"lower(): expected a tensor, a TensorMeta or None for {v.type_str()}, got {type(x).__name__}")


# ----------------------------------------------------------------------------------------
# The backend object jit uses


class NvFuserBackend:
    """The nvFuser backend as ``symscalar.backend.Backend``; the object of one cache entry
    (``for_entry``) remembers the plans it made (forward, backward) for ``last_fusion()``."""

    name = "nvfuser"
    priority = 10  # "auto" prefers it where usable

    def __init__(self) -> None:
        self.plans: list[Plan] = []

    def check_available(self, trace: Trace) -> None:
        check_available(trace)

    def usable_for(self, trace: Trace) -> bool:
        return usable_for(trace)

    def for_entry(self) -> NvFuserBackend:
        return NvFuserBackend()

    def compile_trace(
        self, trace: Trace, render_outputs: Callable[[list[str]], str] | None = None
    ) -> Callable[..., Any]:
        run = compile_trace(trace, render_outputs)
        self.plans.append(run.plan)  # type: ignore[attr-defined]
        return run

    def last_fusions(self) -> FusionList:
        """The FusionDefinitions the entry's plans ran most recently, forward then backward."""
        return FusionList(fd for plan in self.plans for fd in plan.fusions)

    def compile_log(self) -> list[Any]:
        return []  # lowered when traced; nvFuser compiles its kernels on first execution


def check_available(trace: Trace) -> None:
    """Raise BackendUnavailableError unless nvFuser can run ``trace``: nvfuser_direct imports
    and every tensor input is a CUDA tensor."""
    not_cuda = sorted({str(v.device) for v in trace.inputs if isinstance(v, TensorVar) and v.device.type != "cuda"})
    if not_cuda:
        raise BackendUnavailableError(
            f"backend='nvfuser' runs CUDA tensors only, but {trace.name}() got tensors on "
            f"{', '.join(not_cuda)}. Move the inputs to the GPU (x.cuda()), or use "
            "backend='torch' (backend='auto' picks torch for CPU tensors)."
        )
    import_nvfuser()


def usable_for(trace: Trace) -> bool:
    """Whether ``backend='auto'`` should pick nvFuser: every tensor input is on CUDA (and
    there is at least one) and nvfuser_direct imports."""
    tensors = [v for v in trace.inputs if isinstance(v, TensorVar)]
    return bool(tensors) and all(v.device.type == "cuda" for v in tensors) and nvfuser_available()


register_backend(NvFuserBackend())
