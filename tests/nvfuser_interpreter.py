"""A reference interpreter for nvFuser fusion definitions, on CPU tensors.

Why: nvFuser executes only on CUDA, so without a GPU a lowering is checked for its structure
but never for its numbers. This module records what a lowering emits into a real
``FusionDefinition`` (every ``define_tensor`` / ``define_scalar`` / ``ops.*`` / ``add_output``
call, forwarded to nvFuser so the definition is built and validated as usual) and evaluates the
recording with torch implementations of those nvFuser ops, following nvFuser's semantics:

- **dtypes are nvFuser's**: every op's result is cast to the dtype nvFuser itself gave the
  result when it was defined (read from the real TensorView / Val), so type promotion is
  nvFuser's, never torch's. Half and bfloat16 operands of elementwise ops are computed in
  float32 (nvFuser's runtime helpers do ``__half2float`` ... ``__float2half``).
- **low-precision reductions accumulate in their own dtype**: nvFuser's ``sum``/``prod`` reduce
  in the output dtype (``csrc/ops/arith.cpp``: no upcast; the accumulator is the output's
  type), so a Half/BFloat16 reduction is evaluated element by element, rounding after each
  step, as one thread's serial loop does. Torch accumulates them in float32: a lowering must
  upcast, and this is how the interpreter notices when it does not.
- **sizes are symbolic**: a ``-1`` extent takes the input's size; a ``1`` extent must get a
  size-1 input; scalars defined without a value are fusion inputs, in definition order.
- ``var``/``var_mean``: ``sum((x - mean)^2) * reciprocal(max(N - correction, 0))``, as the
  definition nvFuser prints; ``remainder`` has the sign of the divisor and ``maximum``/
  ``minimum``/``max``/``min`` propagate NaN (``runtime/helpers.cu``); ``lerp`` is the
  two-sided formula of ``helpers.cu``; ``div`` truncates integers (C++ ``/``), ``truediv``
  does not.

Each op's implementation is checked against nvFuser's own documentation and python tests in
``tests/test_nvfuser_numerics.py`` (so the oracle is not trusted blindly).

Example:
    >>> recording = record(lambda fd: build(fd))     # or the backend's ``record_region``
    >>> outputs = interpret(recording, [x, 2.0])
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

import torch

from symscalar import nvfuser_backend as nb

__all__ = [
    "OPS",
    "InterpreterError",
    "Node",
    "OpCall",
    "Recording",
    "RecordingFusionDefinition",
    "Value",
    "interpret",
    "record",
    "torch_dtype",
]


class InterpreterError(AssertionError):
    """The recording cannot be evaluated: an input does not fit its definition, or an op is
    used outside the semantics this interpreter implements."""


@dataclasses.dataclass(frozen=True)
class Node:
    """A value defined in the recording (input, constant, or an op's result)."""

    index: int


@dataclasses.dataclass(frozen=True)
class OpCall:
    """One recorded call: ``outs = op(*args, **kwargs)`` with Nodes in place of values."""

    op: str  # "define_tensor", "define_scalar", "add_output" or an ``fd.ops`` name
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    outs: tuple[Node, ...]
    dtypes: tuple[torch.dtype | None, ...]  # nvFuser's dtype of each result (None: unknown)
    ndims: tuple[int | None, ...]  # nvFuser's rank of each result (None: a scalar)


@dataclasses.dataclass
class Recording:
    """What a fusion definition was built from, in order."""

    calls: list[OpCall] = dataclasses.field(default_factory=list)
    inputs: list[Node] = dataclasses.field(default_factory=list)
    outputs: list[Node] = dataclasses.field(default_factory=list)
    n_nodes: int = 0

    def new_node(self) -> Node:
        self.n_nodes += 1
        return Node(self.n_nodes - 1)

    def ops_used(self) -> set[str]:
        return {c.op for c in self.calls}


_TORCH_DTYPES = {name: dtype for dtype, name in nb._DTYPE_NAMES.items()}
_TORCH_DTYPES["Index"] = torch.int64
# A scalar Val prints as its IR name (``d7``, ``i0``, ``b3``, ``f22``) or a constant
# (``double(0.5)``): the prefix is its dtype.
_SCALAR_PREFIX = {
    "d": torch.float64,
    "double": torch.float64,
    "f": torch.float32,
    "float": torch.float32,
    "i": torch.int64,
    "int64_t": torch.int64,
    "b": torch.bool,
    "bool": torch.bool,
}


def torch_dtype(data_type: Any) -> torch.dtype:
    """The torch dtype of an nvFuser ``DataType``."""
    name = str(data_type).removeprefix("DataType.")
    try:
        return _TORCH_DTYPES[name]
    except KeyError:
        raise InterpreterError(f"no torch dtype for nvFuser {data_type}") from None


def _nvfuser_dtype_of(real: Any) -> torch.dtype | None:
    """nvFuser's dtype of a real TensorView (``dtype()``) or scalar Val (its printed name)."""
    if hasattr(real, "dtype"):
        return torch_dtype(real.dtype())
    match = re.match(r"([a-z_0-9]+?)(\d+$|\()", str(real))
    return _SCALAR_PREFIX.get(match.group(1)) if match else None


def _ndim_of(real: Any) -> int | None:
    return real.ndim if hasattr(real, "dtype") else None


class Value:
    """A value of the definition being recorded: its Node, and the real nvFuser TensorView or
    Val, to which attribute reads (``dtype()``, ``ndim``) are forwarded, so lowerings see
    nvFuser's answers."""

    def __init__(self, node: Node, real: Any) -> None:
        self.node = node
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __repr__(self) -> str:
        return f"Value({self.node.index}, {self.real})"


def _unwrap(value: Any, to: Callable[[Value], Any]) -> Any:
    if isinstance(value, Value):
        return to(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, to) for v in value)
    if isinstance(value, dict):  # keyword arguments (rng_seed=..., rng_offset=...)
        return {k: _unwrap(v, to) for k, v in value.items()}
    return value


class _RecordingOps:
    def __init__(self, fd: RecordingFusionDefinition) -> None:
        self._fd = fd

    def __getattr__(self, name: str) -> Callable[..., Any]:
        real_op = getattr(self._fd.real.ops, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._fd._call(name, real_op, args, kwargs)

        return call


class RecordingFusionDefinition:
    """Stands in for a ``FusionDefinition`` while it is defined: each call goes to the real
    definition (entered by the caller) and is recorded in ``self.recording``."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.recording = Recording()
        self.ops = _RecordingOps(self)

    def _call(self, op: str, real_op: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        result = real_op(*_unwrap(args, lambda v: v.real), **_unwrap(kwargs, lambda v: v.real))
        reals = result if isinstance(result, tuple) else (result,)
        outs = tuple(self.recording.new_node() for _ in reals)
        self.recording.calls.append(
            OpCall(
                op,
                _unwrap(tuple(args), lambda v: v.node),
                _unwrap(dict(kwargs), lambda v: v.node),
                outs,
                tuple(_nvfuser_dtype_of(r) for r in reals),
                tuple(_ndim_of(r) for r in reals),
            )
        )
        wrapped = tuple(Value(n, r) for n, r in zip(outs, reals))
        return wrapped if isinstance(result, tuple) else wrapped[0]

    def define_tensor(self, *args: Any, **kwargs: Any) -> Value:
        value = self._call("define_tensor", self.real.define_tensor, args, kwargs)
        self.recording.inputs.append(value.node)
        return value  # type: ignore[no-any-return]

    def define_scalar(self, *args: Any, **kwargs: Any) -> Value:
        value = self._call("define_scalar", self.real.define_scalar, args, kwargs)
        if (args[0] if args else kwargs.get("value")) is None:
            self.recording.inputs.append(value.node)
        return value  # type: ignore[no-any-return]

    def from_pytorch(self, tensor: torch.Tensor) -> Value:
        contiguity, stride_order = nb._descriptor(tuple(tensor.shape), tuple(tensor.stride()))
        return self.define_tensor(
            shape=[1 if s == 1 else -1 for s in tensor.shape],
            contiguity=list(contiguity),
            dtype=nb.nvfuser_dtype(tensor.dtype),
            stride_order=list(stride_order),
        )

    def add_output(self, value: Value) -> None:
        self.real.add_output(value.real)
        self.recording.outputs.append(value.node)


def record(define: Callable[[RecordingFusionDefinition], None]) -> tuple[Any, Recording]:
    """Build a real FusionDefinition with ``define(recording_fd)``; return it and the recording."""
    real = nb.import_nvfuser().FusionDefinition()
    fd = RecordingFusionDefinition(real)
    real.__enter__()
    try:
        define(fd)
    finally:
        real.__exit__(None, None, None)
    return real, fd.recording


# ----------------------------------------------------------------------------------------
# Evaluation


def interpret(recording: Recording, inputs: Sequence[Any]) -> list[torch.Tensor]:
    """Evaluate ``recording`` on ``inputs`` (tensors and numbers, in definition order, as
    ``fd.execute`` takes them); returns the outputs in ``add_output`` order."""
    if len(inputs) != len(recording.inputs):
        raise InterpreterError(f"the fusion takes {len(recording.inputs)} inputs, got {len(inputs)}")
    bound = dict(zip(recording.inputs, inputs))
    env: dict[Node, Any] = {}
    for call in recording.calls:
        if call.op == "define_tensor":
            env[call.outs[0]] = _bind_tensor(call, bound[call.outs[0]])
            continue
        if call.op == "define_scalar":
            node = call.outs[0]
            value = bound[node] if node in bound else (call.args[0] if call.args else call.kwargs.get("value"))
            env[node] = _scalar(value, call.dtypes[0])
            continue
        impl = OPS.get(call.op)
        if impl is None:
            raise InterpreterError(f"fd.ops.{call.op} has no implementation in the interpreter")
        args = _unwrap_nodes(call.args, env)
        kwargs = _unwrap_nodes(call.kwargs, env)
        result = impl(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(call.outs):
            raise InterpreterError(f"fd.ops.{call.op}: {len(results)} results, nvFuser made {len(call.outs)}")
        for node, r, dtype, ndim in zip(call.outs, results, call.dtypes, call.ndims):
            if isinstance(r, torch.Tensor) and r.ndim != ndim:
                raise InterpreterError(
                    f"fd.ops.{call.op}: the interpreter made rank {r.ndim}, nvFuser's result has rank {ndim}"
                )
            env[node] = _as_dtype(r, dtype, call.op)
    return [env[n] for n in recording.outputs]


def _unwrap_nodes(value: Any, env: dict[Node, Any]) -> Any:
    if isinstance(value, Node):
        return env[value]
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap_nodes(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap_nodes(v, env) for k, v in value.items()}
    return value


def _bind_tensor(call: OpCall, value: Any) -> torch.Tensor:
    shape = call.kwargs.get("shape", call.args[0] if call.args else None)
    dtype = call.dtypes[0]
    if not isinstance(value, torch.Tensor):
        raise InterpreterError(f"input {call.outs[0].index}: expected a tensor, got {type(value).__name__}")
    if value.dtype != dtype:
        raise InterpreterError(f"input {call.outs[0].index}: defined as {dtype}, got {value.dtype}")
    if shape is not None:
        if len(shape) != value.ndim:
            raise InterpreterError(f"input {call.outs[0].index}: defined with rank {len(shape)}, got {value.ndim}")
        for d, (declared, actual) in enumerate(zip(shape, value.shape)):
            if declared != -1 and declared != actual:
                raise InterpreterError(
                    f"input {call.outs[0].index}: dim {d} defined with extent {declared}, got {actual}"
                )
    layout = (call.kwargs.get("contiguity"), call.kwargs.get("stride_order"))
    if layout[0] is not None:
        # the fusion was defined for this layout (nvFuser would reject another one)
        # a -1 extent given size 1 is a dynamic dim (a static size-1 dim is defined as 1): the
        # backend defined it as a dim that is not a broadcast dim (nb.dynamic_descriptor)
        dynamic = [d for d, s in enumerate(value.shape) if s == 1 and shape is not None and shape[d] == -1]
        contiguity, stride_order = nb.dynamic_descriptor(tuple(value.shape), tuple(value.stride()), dynamic)
        if list(contiguity) != list(layout[0]) or (layout[1] is not None and list(stride_order) != list(layout[1])):
            raise InterpreterError(
                f"input {call.outs[0].index}: defined with contiguity {layout[0]} and stride order "
                f"{layout[1]}, got a tensor with strides {value.stride()}"
            )
    return value


class Scalar:
    """A scalar of the fusion: a Python number and nvFuser's dtype for it."""

    __slots__ = ("dtype", "value")

    def __init__(self, value: Any, dtype: torch.dtype) -> None:
        self.value = value
        self.dtype = dtype

    def tensor(self) -> torch.Tensor:
        return torch.tensor(self.value, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"Scalar({self.value!r}, {self.dtype})"


def _python_type(dtype: torch.dtype) -> type:
    if dtype == torch.bool:
        return bool
    return float if dtype.is_floating_point else int


def _scalar(value: Any, dtype: torch.dtype | None) -> Scalar:
    if isinstance(value, Scalar):
        value = value.value
    if isinstance(value, torch.Tensor):
        value = value.item()
    if dtype is None:
        dtype = {bool: torch.bool, int: torch.int64, float: torch.float64}[type(value)]
    kind = _python_type(dtype)
    if kind is int and isinstance(value, float):
        value = int(value)  # C++ static_cast: toward zero
    return Scalar(kind(value), dtype)


def _as_dtype(result: Any, dtype: torch.dtype | None, op: str) -> Any:
    if isinstance(result, torch.Tensor):
        if dtype is None:
            raise InterpreterError(f"fd.ops.{op}: nvFuser gave a scalar where the interpreter made a tensor")
        return result.to(dtype)
    if isinstance(result, (Scalar, int, float, bool)):
        return _scalar(result, dtype)
    return result


# ----------------------------------------------------------------------------------------
# The ops


def _operand(x: Any) -> Any:
    """An elementwise operand as torch computes it: Half/BFloat16 in float32, scalars as 0-d
    tensors of their nvFuser dtype."""
    if isinstance(x, Scalar):
        return x.tensor()
    if isinstance(x, (bool, int, float)):
        return _scalar(x, None).tensor()
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16):
        return x.float()
    return x


def _elementwise(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An nvFuser elementwise op; with scalars only, a scalar result."""

    def op(*args: Any) -> Any:
        result = fn(*(_operand(a) for a in args))
        if not any(isinstance(a, torch.Tensor) for a in args):
            return _scalar(result.item(), None)
        return result

    return op


def _div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C++ ``/``: integers truncate toward zero."""
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        return torch.true_divide(a, b)
    return torch.div(a, b, rounding_mode="trunc")


def _lerp(start: torch.Tensor, end: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # runtime/helpers.cu: start + w*(end-start) below 0.5, end - (end-start)*(1-w) above
    diff = end - start
    return torch.where(weight < 0.5, start + weight * diff, end - diff * (1 - weight))


def _where(cond: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.where(cond.bool(), a, b)


_UNARY: dict[str, Callable[..., Any]] = {
    "neg": torch.neg,
    "abs": torch.abs,
    "exp": torch.exp,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log": torch.log,
    "log1p": torch.log1p,
    "log2": torch.log2,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "silu": torch.nn.functional.silu,
    "erf": torch.erf,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "trunc": torch.trunc,
    "sign": torch.sign,
    "isnan": torch.isnan,
    "isinf": torch.isinf,
    "isfinite": torch.isfinite,
    "set": torch.clone,  # nvFuser's set: a copy of its operand
    "logical_not": lambda a: torch.logical_not(a.bool()),
}
_BINARY: dict[str, Callable[..., Any]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": _div,
    "truediv": torch.true_divide,
    "pow": torch.pow,
    "atan2": torch.atan2,
    "remainder": torch.remainder,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "logical_and": lambda a, b: torch.logical_and(a.bool(), b.bool()),
    "logical_or": lambda a, b: torch.logical_or(a.bool(), b.bool()),
}
_TERNARY: dict[str, Callable[..., Any]] = {"where": _where, "lerp": _lerp}


def _dims(x: torch.Tensor, dims: Any) -> list[int]:
    if isinstance(dims, int):
        dims = [dims]
    return sorted(d % x.ndim for d in dims)


def _accumulate(
    x: torch.Tensor, dims: list[int], keepdim: bool, dtype: torch.dtype, step: Callable[..., Any]
) -> torch.Tensor:
    """Reduce serially in ``dtype``, rounding after each step (a thread's loop)."""
    moved = x.movedim(dims, list(range(len(dims)))).reshape(-1, *[x.shape[d] for d in range(x.ndim) if d not in dims])
    acc = moved[0].to(dtype)
    for item in moved[1:]:
        acc = step(acc.float(), item.float()).to(dtype)
    if keepdim:
        for d in dims:
            acc = acc.unsqueeze(d)
    return acc


def _sum(x: torch.Tensor, dims: Any, keepdim: bool = False, dtype: Any = None) -> torch.Tensor:
    acc = _reduction_dtype(x, dtype)
    x = x.to(acc)
    dims = _dims(x, dims)
    if acc in (torch.float16, torch.bfloat16) and x.numel() > 0:
        return _accumulate(x, dims, keepdim, acc, torch.add)
    return torch.sum(x, dims, keepdim)


def _prod(x: torch.Tensor, dims: Any, keepdim: bool = False, dtype: Any = None) -> torch.Tensor:
    acc = _reduction_dtype(x, dtype)
    x = x.to(acc)
    dims = _dims(x, dims)
    if acc in (torch.float16, torch.bfloat16) and x.numel() > 0:
        return _accumulate(x, dims, keepdim, acc, torch.mul)
    for d in reversed(dims):
        x = torch.prod(x, d, keepdim=True)
    return x if keepdim else x.squeeze(dims)


def _reduction_dtype(x: torch.Tensor, dtype: Any) -> torch.dtype:
    """``sum``/``prod``: cast to ``dtype`` first; integers and bools reduce in Int."""
    if dtype is not None and str(dtype) != "DataType.Null":
        return torch_dtype(dtype)
    if not x.dtype.is_floating_point:
        return torch.int64
    return x.dtype


def _max(x: torch.Tensor, dims: Any, keepdim: bool = False, dtype: Any = None) -> torch.Tensor:
    return torch.amax(x, _dims(x, dims), keepdim)


def _min(x: torch.Tensor, dims: Any, keepdim: bool = False, dtype: Any = None) -> torch.Tensor:
    return torch.amin(x, _dims(x, dims), keepdim)


def _var_mean(
    x: torch.Tensor, dims: Any, correction: int = 1, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dtype in (torch.float16, torch.bfloat16):
        raise InterpreterError("nvFuser's var/var_mean reject Half/BFloat16 (upcast first)")
    dims = _dims(x, dims)
    n = 1
    for d in dims:
        n *= x.shape[d]
    mean = torch.mean(x, dims, keepdim=True)
    var_sum = torch.sum((x - mean) ** 2, dims, keepdim)
    var = var_sum * (1.0 / max(n - correction, 0) if n - correction > 0 else float("inf"))
    return var, mean if keepdim else mean.squeeze(dims)


def _var(x: torch.Tensor, dims: Any, correction: int = 1, keepdim: bool = False) -> torch.Tensor:
    return _var_mean(x, dims, correction, keepdim)[0]


def _size_of(v: Any) -> int:
    if isinstance(v, Scalar):
        return int(v.value)
    if isinstance(v, torch.Tensor):
        return int(v.item())
    return int(v)


def _broadcast(x: torch.Tensor, is_broadcast_dim: Sequence[bool]) -> torch.Tensor:
    if sum(not b for b in is_broadcast_dim) != x.ndim:
        raise InterpreterError(f"broadcast: {list(is_broadcast_dim)} does not fit a rank-{x.ndim} tensor")
    for i, flag in enumerate(is_broadcast_dim):
        if flag:
            x = x.unsqueeze(i)
    return x


def _broadcast_in_dim(x: torch.Tensor, shape: Sequence[Any], broadcast_dims: Sequence[int]) -> torch.Tensor:
    sizes = [_size_of(s) for s in shape]
    if len(broadcast_dims) != x.ndim or sorted(broadcast_dims) != list(broadcast_dims):
        raise InterpreterError(f"broadcast_in_dim: dims {list(broadcast_dims)} for a rank-{x.ndim} tensor")
    view = [1] * len(sizes)
    for i, d in enumerate(broadcast_dims):
        if x.shape[i] not in (1, sizes[d]):
            raise InterpreterError(f"broadcast_in_dim: input dim {i} of size {x.shape[i]} cannot become {sizes[d]}")
        view[d] = x.shape[i]
    return x.reshape(view).expand(sizes)


def _expand(x: torch.Tensor, shape: Sequence[Any]) -> torch.Tensor:
    return x.expand([_size_of(s) for s in shape])


def _squeeze(x: torch.Tensor, dims: Sequence[int], squeeze_expanded: bool = False) -> torch.Tensor:
    dims = _dims(x, dims)
    for d in dims:
        if x.shape[d] != 1 and not squeeze_expanded:
            raise InterpreterError(f"squeeze: dim {d} has size {x.shape[d]}, not 1")
    return x.squeeze(dims) if all(x.shape[d] == 1 for d in dims) else x.select(dims[0], 0)


def _reshape(x: torch.Tensor, new_shape: Sequence[Any]) -> torch.Tensor:
    return x.reshape([_size_of(s) for s in new_shape])


def _slice(
    x: torch.Tensor,
    start_indices: Sequence[Any],
    end_indices: Sequence[Any],
    strides: Sequence[Any] | None = None,
    manual_normalization: bool = False,
) -> torch.Tensor:
    steps = [1] * x.ndim if strides is None else [_size_of(s) for s in strides]
    index = tuple(slice(_size_of(a), _size_of(b), s) for a, b, s in zip(start_indices, end_indices, steps))
    return x[index]


def _pad(x: torch.Tensor, pad_widths: Sequence[Any], value: Any = None) -> torch.Tensor:
    fill = 0 if value is None else (value.value if isinstance(value, Scalar) else value)
    return torch.nn.functional.pad(x, [_size_of(w) for w in pad_widths], value=fill)


def _iota(length: Any, start: Any = None, step: Any = None, dtype: Any = None) -> torch.Tensor:
    out = torch.int64 if dtype is None else torch_dtype(dtype)
    first = 0 if start is None else start.value if isinstance(start, Scalar) else start
    by = 1 if step is None else step.value if isinstance(step, Scalar) else step
    return (
        torch.arange(_size_of(length), dtype=torch.float64 if out.is_floating_point else torch.int64)
        .mul(by)
        .add(first)
        .to(out)
    )


def _full(shape: Sequence[Any], fill_value: Any, dtype: Any) -> torch.Tensor:
    fill = fill_value.value if isinstance(fill_value, Scalar) else fill_value
    return torch.full([_size_of(s) for s in shape], fill, dtype=torch_dtype(dtype))


def _random(draw: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """``fd.ops.uniform``/``normal``: nvFuser's Philox numbers cannot be reproduced on CPU, so
    these draw from a generator seeded by (seed, offset), like symscalar's torch lowering.
    What this checks is the plumbing (shape, dtype, bounds, that the seed and offset reach the
    op), and samples whose result does not depend on the numbers (bernoulli with p 0 or 1)."""

    def sample(
        a: Any, b: Any, shape: Sequence[Any], rng_seed: Any = None, rng_offset: Any = None, dtype: Any = None
    ) -> torch.Tensor:
        lo, hi = (v.value if isinstance(v, Scalar) else v for v in (a, b))
        seed = rng_seed.value if isinstance(rng_seed, Scalar) else rng_seed
        offset = rng_offset.value if isinstance(rng_offset, Scalar) else rng_offset
        generator = torch.Generator().manual_seed((int(seed) * 1_000_003 + int(offset or 0)) % 2**63)
        base = draw([_size_of(s) for s in shape], generator=generator, dtype=torch.float64)
        return (lo + (hi - lo) * base).to(torch_dtype(dtype))

    return sample


def _cast(x: Any, dtype: Any) -> Any:
    target = torch_dtype(dtype)
    if isinstance(x, Scalar):
        return _scalar(x.value, torch.int64 if target == torch.int32 else target)
    return x.to(target)


def _size(x: torch.Tensor, dim: int) -> Scalar:
    return Scalar(x.shape[dim], torch.int64)


def _matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(_operand(a), _operand(b))


def _linear(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """nvFuser's linear: ``a @ b.T + bias`` (operands as ``_matmul`` takes them)."""
    return torch.nn.functional.linear(_operand(a), _operand(b), None if bias is None else _operand(bias))


OPS: dict[str, Callable[..., Any]] = {
    **{name: _elementwise(fn) for name, fn in {**_UNARY, **_BINARY, **_TERNARY}.items()},
    "sum": _sum,
    "prod": _prod,
    "max": _max,
    "min": _min,
    "var": _var,
    "var_mean": _var_mean,
    "broadcast": _broadcast,
    "broadcast_in_dim": _broadcast_in_dim,
    "expand": _expand,
    "squeeze": _squeeze,
    "reshape": _reshape,
    "permute": lambda x, dims: x.permute(list(dims)),
    "slice": _slice,
    "pad": _pad,
    "cat": lambda tensors, dim, *a, **k: torch.cat(list(tensors), dim),
    "index_select": lambda x, index, dim: torch.index_select(x, dim, index),
    "iota": _iota,
    "full": _full,
    "cast": _cast,
    "size": _size,
    "matmul": _matmul,
    "linear": _linear,
    "cumsum": lambda x, dim: torch.cumsum(x, dim),
    "uniform": _random(torch.rand),
    "normal": _random(torch.randn),
}
