"""The nvFuser lowerings checked for their numbers on the CPU, through a reference interpreter.

``symscalar.jit(..., backend="nvfuser")`` runs here exactly as on a GPU (tracing, grad,
partition, lowering, the fusion cache, the generated plan), except that each fusion region,
instead of ``fd.execute``, is evaluated by ``tests/nvfuser_interpreter.py`` from what the
lowering emitted into the real ``FusionDefinition``. Results are compared with eager torch
(forward) and torch.autograd (every gradient, None-ness included):

- the interpreter's own ops against nvFuser's documentation, runtime and python tests;
- every lowered primitive, forward and backward, in float32, float16 and bfloat16, for several
  dynamic-scalar values and two batch sizes on ONE set of fusion definitions (no new build
  after the first call: nothing dynamic was baked);
- the hazard functions of tests/test_grad_hazards.py and the gelu / softmax / layer_norm
  chains of benchmarks/nvfuser.py, forward and backward;
- OpInfo samples (one spelling per op, float samples first) with static and dynamic scalars;
- registry-driven: a primitive with a lowering that no sample runs through a fusion fails
  ``test_every_lowered_primitive_is_checked`` (new ops are picked up by the OpInfo sweep).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from conformance import opinfo_support as support
from symscalar import DynamicFloat
from symscalar import nvfuser_backend as nb
from symscalar.nvfuser_lowering import NVFUSER_LOWERINGS
from symscalar.trace import PRIMITIVES, VJPS
from tests import nvfuser_interpreter as ni
from tests import test_grad_hazards as hazards
from tests.test_nvfuser_lowerings import LOWERED_CASES, arange_trace

pytestmark = [
    pytest.mark.slow,  # the semantic sweep: left out by `make test-fast`
    pytest.mark.skipif(not nb.nvfuser_available(), reason="nvfuser_direct does not import: no definitions to build"),
    pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning"),
]
D = ni.torch_dtype
LOW_DTYPES = (torch.float16, torch.bfloat16)


# ----------------------------------------------------------------------------------------
# The interpreted backend


@dataclasses.dataclass
class Observed:
    """What the interpreted regions ran: primitives per phase, fusions used."""

    prims: dict[str, set[str]] = dataclasses.field(default_factory=lambda: collections.defaultdict(set))
    fusions: set[int] = dataclasses.field(default_factory=set)
    phase: str = "forward"
    gradients_compared: bool = False


_OBSERVED: list[Observed] = []


def _build_recorded(region: nb.Region, layouts: Sequence[Any]) -> Any:
    """``nb.build_fusion``, with the lowering's calls recorded on the FusionDefinition."""
    for eqn in region.eqns:
        nb.check_static_params(eqn)
    nv = nb.import_nvfuser()
    fd, recording = ni.record(lambda rec: nb._define(rec, nv, region, layouts))
    fd.symscalar_recording = recording
    return fd


def _run_interpreted(region: nb.Region, *args: Any) -> list[torch.Tensor]:
    """``Region.__call__`` with the interpreter in place of ``fd.execute``."""
    metas = [
        nb.TensorMeta(tuple(args[i].shape), args[i].dtype, tuple(args[i].stride())) for i in region.tensor_positions
    ]
    fd = region.fusion_for(metas)
    for observed in _OBSERVED:
        observed.prims[observed.phase].update(e.prim.name for e in region.eqns)
        observed.fusions.add(id(fd))
    return ni.interpret(fd.symscalar_recording, list(args))  # the inputs, then the sizes


@contextlib.contextmanager
def interpreted_nvfuser() -> Iterator[Observed]:
    """Within: every jit (backend 'nvfuser' or 'auto') uses the nvFuser backend on CPU tensors,
    its fusions interpreted. Starts from an empty fusion cache (every fusion is recorded)."""
    observed = Observed()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nb, "check_available", lambda trace: None)
        mp.setattr(nb, "usable_for", lambda trace: True)
        mp.setattr(nb, "build_fusion", _build_recorded)
        mp.setattr(nb.Region, "__call__", _run_interpreted)
        nb.fusion_cache_clear()
        _OBSERVED.append(observed)
        try:
            yield observed
        finally:
            _OBSERVED.remove(observed)
            nb.fusion_cache_clear()


# ----------------------------------------------------------------------------------------
# Comparing with eager torch


TOL = {
    torch.float64: {"atol": 1e-10, "rtol": 1e-7},
    torch.float32: {"atol": 1e-5, "rtol": 1e-4},
    torch.float16: {"atol": 1e-2, "rtol": 1e-2},
    torch.bfloat16: {"atol": 5e-2, "rtol": 2e-2},
}


def assert_same(got: Any, expected: Any, where: str) -> None:
    """Same structure, dtype and shape; close values (NaN where eager has NaN)."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, torch.Tensor), f"{where}: expected a tensor, got {got!r}"
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape), (
            f"{where}: got {got.dtype}{list(got.shape)}, eager gives {expected.dtype}{list(expected.shape)}"
        )
        torch.testing.assert_close(
            got, expected, equal_nan=True, msg=lambda m: f"{where}: {m}", **TOL.get(expected.dtype, {})
        )
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{where}[{i}]")
    else:
        assert got == expected, f"{where}: got {got!r}, eager gives {expected!r}"


def _float_leaves(out: Any) -> list[torch.Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, torch.Tensor) and o.dtype.is_floating_point and o.requires_grad]


def _seq(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _fresh(args: Sequence[Any], grad: bool) -> list[Any]:
    return [
        a.detach().clone().requires_grad_(grad and a.dtype.is_floating_point) if isinstance(a, torch.Tensor) else a
        for a in args
    ]


def _eager(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args)


def check_calls(
    f: Any,
    fn: Callable[..., Any],
    calls: Sequence[Sequence[Any]],
    where: str,
    observed: Observed,
    grad: bool = True,
    expanded: bool = False,
) -> int:
    """Run each call jitted and eagerly; compare outputs and (``grad``) every input gradient
    for a random cotangent, or (``expanded``) the expanded ones ``out.sum().backward()``
    hands each output: a new layout, whose dims are broadcast dims of the backward fusion.
    Returns the number of calls checked."""
    for n, args in enumerate(calls):
        here = f"{where} call {n} ({', '.join(_describe(a) for a in args)})"
        eager_args, jit_args = _fresh(args, grad), _fresh(args, grad)
        expected = _eager(fn, eager_args)
        observed.phase = "forward"
        got = f(*jit_args)
        assert_same(got, expected, here)
        ref_outs = _float_leaves(expected)
        outs = [o for o, r in zip(_seq(got), _seq(expected)) if any(r is e for e in ref_outs)]
        wrt = [a for a in jit_args if isinstance(a, torch.Tensor) and a.requires_grad]
        ref_wrt = [a for a in eager_args if isinstance(a, torch.Tensor) and a.requires_grad]
        if not (grad and outs and wrt):
            continue
        cts = [torch.ones((), dtype=o.dtype).expand(o.shape) if expanded else torch.randn_like(o) for o in ref_outs]
        observed.phase = "backward"
        observed.gradients_compared = True
        grads = torch.autograd.grad(outs, wrt, cts, allow_unused=True)
        ref_grads = torch.autograd.grad(ref_outs, ref_wrt, cts, allow_unused=True)
        for i, (g, r) in enumerate(zip(grads, ref_grads)):
            assert (g is None) == (r is None), f"{here}: grad {i} is {g}, eager's is {r}"
            if r is not None:
                assert_same(g, r, f"{here}: grad {i}")
    return len(calls)


def _describe(a: Any) -> str:
    if isinstance(a, torch.Tensor):
        return f"{str(a.dtype).removeprefix('torch.')}{list(a.shape)}"
    return repr(a)


# ----------------------------------------------------------------------------------------
# The interpreter against nvFuser's own semantics. Each case: a definition written against the
# nvfuser_direct API, inputs, and the result nvFuser documents (docstring, runtime/helpers.cu)
# or asserts in its python tests (tests/python/direct/test_python_frontend.py, named).


NV = nb.import_nvfuser() if nb.nvfuser_available() else None


def _semantic_cases() -> dict[str, tuple[Callable[[Any, list[Any]], None], list[Any], Callable[..., Any]]]:
    """name -> (define(fd, inputs), inputs, expected(*inputs)); the sources are named."""
    DT = NV.DataType
    x, y = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    h = torch.randn(4, 5, dtype=torch.float16)
    i64 = torch.tensor([-7, 7, -8, 9])
    idx = torch.tensor([3, 0, 2, 2])
    nan_x = torch.tensor([[1.0, float("nan"), -2.0], [0.5, 3.0, float("inf")]])

    def out(fd: Any, *values: Any) -> None:
        for v in values:
            fd.add_output(v)

    def unary(name: str) -> Callable[[Any, list[Any]], None]:
        return lambda fd, t: out(fd, getattr(fd.ops, name)(t[0]), getattr(fd.ops, name)(t[1]))

    cases: dict[str, tuple[Callable[[Any, list[Any]], None], list[Any], Callable[..., Any]]] = {
        # uniform/normal: nvFuser's Philox numbers are not reproducible on CPU; what holds
        # for any stream: uniform samples lie in [low, high), normal samples are finite
        "uniform_in_bounds": (
            lambda fd, t: out(
                fd,
                (lambda u: fd.ops.logical_and(fd.ops.ge(u, 2.0), fd.ops.lt(u, 5.0)))(
                    fd.ops.uniform(
                        fd.define_scalar(2.0),
                        fd.define_scalar(5.0),
                        [3, 4],
                        rng_seed=fd.define_scalar(7),
                        rng_offset=fd.define_scalar(1),
                        dtype=DT.Float,
                    )
                ),
            ),
            [],
            lambda: torch.ones(3, 4, dtype=torch.bool),
        ),
        "normal_is_finite": (
            lambda fd, t: out(
                fd,
                fd.ops.isfinite(
                    fd.ops.normal(
                        fd.define_scalar(0.0),
                        fd.define_scalar(1.0),
                        [3, 4],
                        rng_seed=fd.define_scalar(7),
                        rng_offset=fd.define_scalar(2),
                        dtype=DT.Float,
                    )
                ),
            ),
            [],
            lambda: torch.ones(3, 4, dtype=torch.bool),
        ),
        # set: a copy of its operand (the lowering of clone, contiguous and stop_gradient)
        "set_is_a_copy": (lambda fd, t: out(fd, fd.ops.mul(fd.ops.set(t[0]), t[1])), [x, y], lambda a, b: a * b),
        # test_python_frontend.py: test_cast_double_to_half
        "cast_double_to_half": (
            lambda fd, t: out(
                fd,
                fd.ops.cast(fd.ops.relu(fd.ops.add(fd.ops.cast(t[0], DT.Half), fd.ops.cast(t[1], DT.Half))), DT.Half),
            ),
            [torch.randn(2, 4, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)],
            lambda a, b: torch.relu(a.half() + b.half()),
        ),
        # test_squeeze (sizes [1, 4, 1] and [2, 1, 4]); squeeze removes size-1 dims
        "squeeze_sum_mul": (
            lambda fd, t: out(
                fd,
                fd.ops.mul(
                    fd.ops.mul(t[0], fd.ops.squeeze(t[1], [0, -1])), fd.ops.sum(fd.ops.squeeze(t[2], [-2]), [0])
                ),
            ),
            [torch.randn(4), torch.randn(1, 4, 1), torch.randn(2, 1, 4)],
            lambda a, b, c: a * b.squeeze(0).squeeze(-1) * c.squeeze(-2).sum(0),
        ),
        # test_expand: expand a [1, 1, 4] tensor to [2, 3, 4]; broadcast_in_dim as expand
        # (test_broadcast_in_dim_no_redundant_set)
        "broadcast_in_dim": (
            lambda fd, t: out(
                fd,
                fd.ops.mul(fd.ops.broadcast_in_dim(t[0], [fd.ops.size(t[1], d) for d in range(3)], [0, 1, 2]), t[1]),
                fd.ops.broadcast_in_dim(t[2], [2, 3, 4], [2]),
            ),
            [torch.randn(1, 1, 4), torch.randn(2, 3, 4), torch.randn(4)],
            lambda a, b, c: (a.expand(2, 3, 4) * b, c.expand(2, 3, 4)),
        ),
        "broadcast": (
            lambda fd, t: out(fd, fd.ops.add(fd.ops.broadcast(t[0], [True, False, True]), t[1])),
            [torch.randn(3), torch.randn(2, 3, 4)],
            lambda a, b: a[None, :, None] + b,
        ),
        # test_index_select (dims 0 and 1)
        "cumsum": (
            lambda fd, t: out(fd, fd.ops.cumsum(t[0], 1), fd.ops.cumsum(t[1], 0)),
            [torch.randn(4, 6), torch.randn(5, 3, dtype=torch.float64)],
            lambda a, b: (torch.cumsum(a, 1), torch.cumsum(b, 0)),
        ),
        "index_select": (
            lambda fd, t: out(
                fd, fd.ops.index_select(fd.ops.add(t[0], t[1]), t[2], 0), fd.ops.index_select(t[0], t[2], 1)
            ),
            [torch.randn(8, 16), torch.randn(8, 16), idx],
            lambda a, b, i: (torch.index_select(a + b, 0, i), torch.index_select(a, 1, i)),
        ),
        # test_where: pred, a, b of mixed float dtypes -> torch.where
        "where_dtypes": (
            lambda fd, t: out(fd, fd.ops.where(t[0], t[1], t[2]), fd.ops.where(t[0], t[1], 2.5)),
            [torch.rand(5) > 0.5, torch.randn(5, dtype=torch.float16), torch.randn(5)],
            lambda p, a, b: (torch.where(p, a, b), torch.where(p, a, 2.5)),
        ),
        # test_slice: x[:, 1:, 2:] of a [2, 5, 10] tensor
        "slice": (
            lambda fd, t: out(fd, fd.ops.slice(t[0], [0, 1, 2], [2, 5, 10], [1, 1, 1])),
            [torch.randn(2, 5, 10)],
            lambda a: a[:, 1:, 2:],
        ),
        # test_iota: iota(2, 0, 2, Int) = [0, 2]; iota(3, 100, 1, Int32) = [100, 101, 102]
        "iota": (
            lambda fd, t: out(
                fd,
                fd.ops.iota(fd.define_scalar(2), fd.define_scalar(0), fd.define_scalar(2), DT.Int),
                fd.ops.iota(fd.define_scalar(3), fd.define_scalar(100), fd.define_scalar(1), DT.Int32),
            ),
            [],
            lambda: (torch.tensor([0, 2]), torch.tensor([100, 101, 102], dtype=torch.int32)),
        ),
        # test_pad: pad widths are F.pad's (last dim first); a value other than 0
        "pad": (
            lambda fd, t: out(
                fd,
                fd.ops.pad(t[0], [1, 1, 1, 1]),
                fd.ops.pad(t[0], [0, 0, 2, 3]),
                fd.ops.pad(t[0], [2, 3], fd.define_scalar(2.0)),
                fd.ops.pad(t[0], [2, 3, 0, 0, 0, 0]),
            ),
            [torch.randn(1, 2, 3)],
            lambda a: (
                F.pad(a, [1, 1, 1, 1]),
                F.pad(a, [0, 0, 2, 3]),
                F.pad(a, [2, 3], value=2.0),
                F.pad(a, [2, 3, 0, 0, 0, 0]),
            ),
        ),
        # test_cat
        "cat": (
            lambda fd, t: out(fd, fd.ops.cat([t[0], t[1]], 1), fd.ops.cat([t[0], t[2]], 0)),
            [torch.randn(2, 4), torch.randn(2, 3), torch.randn(4, 4)],
            lambda a, b, c: (torch.cat([a, b], 1), torch.cat([a, c], 0)),
        ),
        # test_var_correction / test_var_mean_correction: torch.var(_mean)(x, [-1], correction=c)
        "var_correction": (
            lambda fd, t: out(
                fd,
                *(fd.ops.var(t[0], [-1], c) for c in (0, 1)),
                *fd.ops.var_mean(t[0], [-1], 1),
                fd.ops.var(t[0], [0, 2], 0, True),
            ),
            [torch.randn(2, 2, 3)],
            lambda a: (
                a.var([-1], correction=0),
                a.var([-1], correction=1),
                *torch.var_mean(a, [-1], correction=1),
                a.var([0, 2], correction=0, keepdim=True),
            ),
        ),
        # test_expanded_reduction: the sum of an expanded [2, 3] view of a scalar
        "expanded_reduction": (
            lambda fd, t: out(fd, fd.ops.sum(t[0], [0], False), fd.ops.sum(t[0], [0], True)),
            [torch.tensor(1.5).as_strided((2, 3), (0, 0))],
            lambda a: (a.sum(0), a.sum(0, keepdim=True)),
        ),
        # sum's docstring: dtype casts before the reduction; integers and bools reduce in Int
        "sum_dtype": (
            lambda fd, t: out(
                fd, fd.ops.sum(t[0], [1], False, DT.Double), fd.ops.sum(t[1], [0]), fd.ops.prod(t[2], [0, 1], True)
            ),
            [x.float(), i64, x[0]],
            lambda a, b, c: (a.double().sum(1), b.sum(0), c.prod(1, keepdim=True).prod(0, keepdim=True)),
        ),
        # max/min reductions and maximum/minimum propagate NaN (runtime/helpers.cu: max, min)
        "nan_propagation": (
            lambda fd, t: out(
                fd,
                fd.ops.max(t[0], [1]),
                fd.ops.min(t[0], [0], True),
                fd.ops.maximum(t[0], 0.0),
                fd.ops.minimum(t[0], t[0]),
            ),
            [nan_x],
            lambda a: (a.amax(1), a.amin(0, keepdim=True), torch.maximum(a, torch.tensor(0.0)), torch.minimum(a, a)),
        ),
        # remainder: fmod, then the sign of the divisor (runtime/helpers.cu); div: C++ `/`
        # (the docstring: "truncated towards zero"), truediv: floating point
        "remainder_div": (
            lambda fd, t: out(
                fd,
                fd.ops.remainder(t[0], -1.25),
                fd.ops.div(t[1], fd.define_scalar(3)),
                fd.ops.truediv(t[1], fd.define_scalar(3)),
                fd.ops.div(t[0], t[0]),
            ),
            [x, i64],
            lambda a, b: (torch.remainder(a, -1.25), torch.div(b, 3, rounding_mode="trunc"), (b / 3).float(), a / a),
        ),
        # lerp: runtime/helpers.cu's two-sided formula; equal to torch.lerp within an ulp
        "lerp": (
            lambda fd, t: out(
                fd, fd.ops.lerp(t[0], t[1], 0.25), fd.ops.lerp(t[0], t[1], 0.75), fd.ops.lerp(t[0], t[1], t[2])
            ),
            [x, y, torch.rand(2, 3, 4)],
            lambda a, b, w: (torch.lerp(a, b, 0.25), torch.lerp(a, b, 0.75), torch.lerp(a, b, w)),
        ),
        # type promotion: half op half computes in float (nvFuser's result dtype is Float);
        # half * double scalar is Float; int * double scalar is Double
        "promotion": (
            lambda fd, t: out(
                fd,
                fd.ops.add(t[0], t[0]),
                fd.ops.mul(t[0], fd.define_scalar(0.1)),
                fd.ops.mul(t[1], fd.define_scalar(0.5)),
                fd.ops.exp(t[1]),
                fd.ops.neg(t[1]),
            ),
            [h, i64],
            lambda a, b: (a.float() + a.float(), a.float() * 0.1, b.double() * 0.5, b.exp(), -b),
        ),
        "reshape_permute_full": (
            lambda fd, t: out(
                fd,
                fd.ops.permute(fd.ops.reshape(t[0], [fd.ops.size(t[0], 0), 12]), [1, 0]),
                fd.ops.full([2, fd.ops.size(t[0], 1)], fd.define_scalar(1.5), DT.Half),
            ),
            [x],
            lambda a: (a.reshape(2, 12).permute(1, 0), torch.full((2, 3), 1.5, dtype=torch.float16)),
        ),
        "matmul": (
            lambda fd, t: out(fd, fd.ops.matmul(t[0], t[1]), fd.ops.matmul(t[2], t[3])),
            [torch.randn(3, 4, 5), torch.randn(5, 2), h, torch.randn(5, 3, dtype=torch.float16)],
            lambda a, b, c, d: (a @ b, c @ d),
        ),
        "linear": (
            lambda fd, t: out(fd, fd.ops.linear(t[0], t[1], t[2]), fd.ops.linear(t[3], t[4])),
            [
                torch.randn(3, 4, 5),
                torch.randn(2, 5),
                torch.randn(2),
                torch.randn(4, 5, dtype=torch.float16),
                torch.randn(3, 5, dtype=torch.float16),
            ],
            lambda a, b, bias, c, d: (F.linear(a, b, bias), F.linear(c, d)),
        ),
        # scalar arithmetic on sizes (the lowerings' counts and end indices)
        "size_arithmetic": (
            lambda fd, t: out(
                fd,
                fd.ops.iota(fd.ops.size(t[0], 1), fd.ops.sub(fd.ops.size(t[0], 1), 1), -1),
                fd.ops.div(t[0], fd.ops.mul(fd.ops.size(t[0], 0), fd.ops.size(t[0], 2))),
            ),
            [x],
            lambda a: (torch.arange(2, -1, -1), a / 8),
        ),
        "logical": (
            lambda fd, t: out(
                fd,
                fd.ops.logical_not(t[0]),
                fd.ops.logical_and(t[0], fd.ops.gt(t[0], 0.0)),
                fd.ops.logical_or(t[1], t[1]),
                fd.ops.isinf(t[0]),
                fd.ops.isnan(t[0]),
                fd.ops.isfinite(t[0]),
                fd.ops.sign(t[0]),
            ),
            [nan_x, i64],
            lambda a, b: (
                ~a.bool(),
                a.bool() & (a > 0),
                b.bool() | b.bool(),
                a.isinf(),
                a.isnan(),
                a.isfinite(),
                a.sign(),
            ),
        ),
    }
    for name in (
        "neg",
        "abs",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log1p",
        "log2",
        "sqrt",
        "rsqrt",
        "reciprocal",
        "sin",
        "cos",
        "tan",
        "tanh",
        "sigmoid",
        "relu",
        "silu",
        "erf",
        "floor",
        "ceil",
        "round",
        "trunc",
    ):
        fn = getattr(torch, name, None) or getattr(F, name)
        # half operands compute in float32; nvFuser's result is Float, or Half for the ops
        # that keep their input's dtype
        keeps = torch.float16 if name in ("abs", "relu", "silu", "floor", "ceil", "round", "trunc") else torch.float32
        cases[name] = (
            unary(name),
            [x.abs() + 0.5 if name.startswith(("log", "sqrt", "rsqrt")) else x * 2, h.abs() + 0.5],
            lambda a, b, fn=fn, keeps=keeps: (fn(a), fn(b.float()).to(keeps)),
        )
    for name in ("add", "sub", "mul", "pow", "atan2", "eq", "ne", "lt", "le", "gt", "ge"):
        fn = getattr(torch, name)
        cases[name] = (
            lambda fd, t, name=name: out(fd, getattr(fd.ops, name)(t[0], t[1]), getattr(fd.ops, name)(t[0], 1.5)),
            [x.abs() + 0.1, y],
            lambda a, b, fn=fn: (fn(a, b), fn(a, torch.tensor(1.5))),
        )
    return cases


SEMANTIC_CASES = _semantic_cases() if NV else {}


@pytest.mark.parametrize("name", list(SEMANTIC_CASES))
def test_interpreter_matches_nvfuser_semantics(name: str) -> None:
    define, inputs, expected = SEMANTIC_CASES[name]

    def build(fd: Any) -> None:
        values = [fd.from_pytorch(t) for t in inputs]
        define(fd, values)

    _, recording = ni.record(build)
    got = ni.interpret(recording, inputs)
    want = expected(*inputs)
    assert_same(tuple(got), want if isinstance(want, tuple) else (want,), name)


def test_interpreter_dtypes_are_nvfusers() -> None:
    """The interpreter casts each result to the dtype nvFuser gave it at definition time."""

    def build(fd: Any) -> None:
        t = fd.from_pytorch(torch.empty(2, 3, dtype=torch.float16))
        fd.add_output(fd.ops.mul(t, 0.5))  # Float in nvFuser (torch: Half)
        fd.add_output(fd.ops.sum(t, [0]))  # Half

    _, recording = ni.record(build)
    assert [c.dtypes for c in recording.calls if c.op in ("mul", "sum")] == [(torch.float32,), (torch.float16,)]
    a, b = ni.interpret(recording, [torch.ones(2, 3, dtype=torch.float16)])
    assert (a.dtype, b.dtype) == (torch.float32, torch.float16)


def test_interpreter_half_sum_accumulates_in_half() -> None:
    """nvFuser reduces a Half tensor in Half (csrc/ops/arith.cpp ``sum``: no upcast): 4096
    ones stop growing at 2048, where Half's spacing becomes 2. Torch accumulates in float."""

    def build(fd: Any) -> None:
        fd.add_output(fd.ops.sum(fd.from_pytorch(torch.empty(4096, dtype=torch.float16)), [0]))

    _, recording = ni.record(build)
    (got,) = ni.interpret(recording, [torch.ones(4096, dtype=torch.float16)])
    assert got.item() == 2048.0 and torch.ones(4096, dtype=torch.float16).sum().item() == 4096.0


def half_sum_fn(a: torch.Tensor) -> Any:
    return a.sum(0), a.sum((0, 1), keepdim=True), a.sum(1, dtype=torch.float16)


@pytest.mark.parametrize("dtype", LOW_DTYPES, ids=["f16", "bf16"])
def test_regression_low_precision_sum_accumulates_in_float(dtype: torch.dtype) -> None:
    """Bug found by the interpreter: sum's lowering reduced Half/BFloat16 in Half/BFloat16
    (nvFuser does not upcast), so 4096 ones summed to 2048 in f16 (256 in bf16). It now
    reduces in float32, as torch does, and so does the backward's unbroadcast sum."""
    with interpreted_nvfuser() as observed:
        f = symscalar.jit(half_sum_fn, backend="nvfuser")
        check_calls(
            f, half_sum_fn, [[torch.ones(4096, 2, dtype=dtype)], [torch.rand(3000, 2, dtype=dtype)]], "sum", observed
        )
    assert "sum" in observed.prims["forward"] | observed.prims["backward"]


def matmul_reduced_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return (a @ b).sum(0) * s, (a @ b).sum() * s


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["f32", "f16"])
def test_regression_matmul_with_an_expanded_cotangent(dtype: torch.dtype) -> None:
    """Bug found here: the backward of ``(a @ b).sum(0)`` multiplies by a cotangent expanded
    along the contracted dim, which nvFuser's matmul refuses ("K should be broadcast in both A
    and B, or neither") while the fusion is defined, so every such backward crashed. The
    lowering now multiplies and sums when exactly one operand's K is broadcast."""
    calls = [
        [torch.randn(n, 4, dtype=dtype), torch.randn(4, 3, dtype=dtype), v] for n, v in ((5, 0.5), (5, 2.0), (9, 1.5))
    ]
    with interpreted_nvfuser() as observed:
        f = symscalar.jit(matmul_reduced_fn, backend="nvfuser")
        check_calls(f, matmul_reduced_fn, calls, "matmul backward", observed)
    # (the 2-d products' gradients are mm_mat1/mm_mat2_backward, lowered as matmuls)
    assert observed.prims["backward"] & {"matmul", "mm_mat1_backward", "mm_mat2_backward"}


def test_interpreter_checks_inputs_against_the_definition() -> None:
    def build(fd: Any) -> None:
        fd.add_output(fd.ops.neg(fd.from_pytorch(torch.empty(1, 3))))

    _, recording = ni.record(build)
    assert ni.interpret(recording, [torch.ones(1, 5)])[0].shape == (1, 5)  # -1: symbolic
    with pytest.raises(ni.InterpreterError, match="dim 0 defined with extent 1"):
        ni.interpret(recording, [torch.ones(2, 3)])
    with pytest.raises(ni.InterpreterError, match=r"defined as torch\.float32"):
        ni.interpret(recording, [torch.ones(1, 3, dtype=torch.float64)])


def test_every_emitted_op_has_a_semantic_test() -> None:
    """The ops the lowerings emit (in every recording this module makes) are exactly ops the
    semantic cases above exercise."""
    tested: set[str] = set()
    for define, inputs, _ in SEMANTIC_CASES.values():
        _, recording = ni.record(lambda fd, d=define, i=inputs: d(fd, [fd.from_pytorch(t) for t in i]))
        tested |= recording.ops_used()
    emitted: set[str] = set()
    for report in all_reports():
        emitted |= report.ops
    emitted -= {"define_tensor", "define_scalar"}
    assert emitted - tested == set(), f"ops the lowerings emit without a semantic test: {sorted(emitted - tested)}"
    assert emitted, "no op recorded"


# ----------------------------------------------------------------------------------------
# Every lowered primitive: the cases of test_nvfuser_lowerings (one or more per lowered
# primitive), at two batch sizes and several dynamic values, in three dtypes.


S_VALUES = (0.3125, 1.75, -0.625)
# Cases whose tensors are not all batch-generic in dim 0: (batch-generic args by position)
FIXED_SHAPES = {"first_set": (), "matmul": (0,), "addmm": (1,), "native_layer_norm": (0,), "batch_norm_eval": (0,)}
# Cases whose BACKWARD holds a size as a static value, so a new batch size builds one new
# (correctly keyed) backward fusion: never a stale result, but a recompile per batch size.
REBUILDS_FOR_NEW_BATCH = {
    "prod": (2, "prod's vjp (eager's prod_backward) narrows and concatenates at offsets = the batch size"),
    "std": (1, "std's vjp folds 1/(N - correction) into a literal (N = the batch)"),
    "std_mean": (1, "std_mean's vjp folds 1/(N - correction) into a literal (N = the batch)"),
    "slice": (1, "slice's vjp is zero_pad with padding (1, N - 3) on the batch dim"),
    "zero_pad": (1, "zero_pad's vjp is a slice whose stop is the batch size"),
    "cat": (1, "cat's vjp slices at static offsets = the batch size"),
}


@dataclasses.dataclass
class Report:
    """What one sample group checked."""

    name: str
    calls: int
    prims: dict[str, set[str]]  # "forward" / "backward": primitives run in fusions
    ops: set[str]  # nvFuser ops the fusions used
    vjps: set[str]  # primitives whose vjp ran and whose gradients matched torch.autograd


def report(name: str, calls: int, observed: Observed) -> Report:
    """What ``observed`` saw, after ``calls`` calls of sample group ``name`` passed."""
    vjps = {p for p in observed.prims["forward"] if PRIMITIVES[p] in VJPS} if observed.gradients_compared else set()
    return Report(name, calls, dict(observed.prims), _recordings(), vjps)


def _batched(args: Sequence[Any], batch: int, generic: Sequence[int] | None) -> list[Any]:
    out = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and (generic is None or i in generic) and a.ndim > 0:
            a = torch.randn(batch, *a.shape[1:], dtype=a.dtype)
        out.append(a)
    return out


def _with_scalars(args: Sequence[Any], k: int) -> list[Any]:
    floats = [i for i, a in enumerate(args) if isinstance(a, float)]
    return [
        S_VALUES[(k + floats.index(i)) % len(S_VALUES)] * (1 + 0.5 * floats.index(i)) if i in floats else a
        for i, a in enumerate(args)
    ]


def _recordings() -> set[str]:
    """The nvFuser ops in every fusion built since the cache was cleared."""
    ops: set[str] = set()
    for fd in nb._FUSIONS.values():
        ops |= fd.symscalar_recording.ops_used()
    return ops


@functools.cache
def lowered_case_report(name: str, dtype: torch.dtype) -> Report:
    torch.manual_seed(0)
    fn, args, _ = LOWERED_CASES[name]
    args = [a.to(dtype) if isinstance(a, torch.Tensor) and a.dtype.is_floating_point else a for a in args]
    generic = FIXED_SHAPES.get(name)
    first = [_with_scalars(_batched(args, 3, generic), 0)]
    rest = [_with_scalars(_batched(args, 3, generic), 1), _with_scalars(_batched(args, 5, generic), 2)]
    if generic == ():
        rest = [_with_scalars(args, 1), _with_scalars(args, 2)]
    with interpreted_nvfuser() as observed:
        f = symscalar.jit(fn, backend="nvfuser")
        where = f"{name} [{dtype}]"
        n = check_calls(f, fn, first, where, observed)
        built = nb.fusion_cache_info()
        n += check_calls(f, fn, rest, where, observed)
        after = nb.fusion_cache_info()
        rebuilt = after.misses - built.misses
        assert rebuilt == REBUILDS_FOR_NEW_BATCH.get(name, (0, ""))[0], (
            f"{where}: a new dynamic value or batch size built {rebuilt} new fusion(s): something "
            "dynamic was baked into the definition (expected: REBUILDS_FOR_NEW_BATCH)"
        )
        n += check_calls(f, fn, rest[-1:], f"{where} (expanded cotangent)", observed, expanded=True)
        return report(where, n, observed)


def _has_floating_input(name: str) -> bool:
    return any(isinstance(a, torch.Tensor) and a.dtype.is_floating_point for a in LOWERED_CASES[name][1])


# Random ops draw from nvFuser's Philox stream, which neither eager torch nor a CPU
# interpreter reproduces: their values cannot be compared. test_nvfuser_lowerings checks
# that the seed and offset reach fd.ops.uniform/normal; tests/test_random.py checks the
# torch backend's statistics and reproducibility.
NOT_COMPARABLE = {
    "uniform": "random numbers from nvFuser's Philox stream (not reproducible on CPU)",
    "normal": "random numbers from nvFuser's Philox stream (not reproducible on CPU)",
}

# OpInfo stems whose results are random numbers (bernoulli with p 0/1 and dropout with p 0
# are deterministic and compared in full)
RANDOM_STEMS = frozenset({"rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "multinomial"})

# float32 for every case; float16/bfloat16 for those with a floating input
LOWERED_PARAMS = [
    pytest.param(name, dtype, id=f"{name}-{label}")
    for name in LOWERED_CASES
    if name not in NOT_COMPARABLE
    for dtype, label in ((torch.float32, "f32"), (torch.float16, "f16"), (torch.bfloat16, "bf16"))
    if dtype == torch.float32 or _has_floating_input(name)
]


@pytest.mark.parametrize(("name", "dtype"), LOWERED_PARAMS)
def test_lowered_primitive_matches_eager(name: str, dtype: torch.dtype) -> None:
    checked = lowered_case_report(name, dtype)
    assert checked.prims["forward"], f"{name}: nothing ran in a fusion"


def test_integer_arange_is_interpreted() -> None:
    """arange (an iota) appears only in hand-built traces: jit folds it into a constant."""
    with interpreted_nvfuser() as observed:
        trace = arange_trace(2, 17, 3, torch.int64)
        plan = nb.build_plan(trace)
        a = torch.randn(2, 5)
        (got,) = plan.run(a)
    torch.testing.assert_close(got, a * torch.arange(2, 17, 3))
    assert "arange" in observed.prims["forward"]


def special_values_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return (
        torch.logsumexp(a, 1),
        torch.softmax(a * s, 1),
        torch.log_softmax(a, 1),
        a.amax(1),
        a.amin(0),
        a.sum(1),
        a.mean(1),
        a.var(1),
        torch.clamp(a, -s, s),
        torch.maximum(a, a.flip(1)),
        a.abs() ** s,
    )


def test_special_values_match_eager() -> None:
    """Rows of -inf, +inf and NaN through the stabilised reductions (the max subtraction of
    softmax/logsumexp must not turn an all -inf row into NaN) and NaN-propagating ops."""
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([[-inf, -inf, -inf], [inf, 0.0, 1.0], [1.0, 2.0, 3.0], [nan, 1.0, -1.0], [-inf, 0.5, inf]])
    with interpreted_nvfuser() as observed:
        f = symscalar.jit(special_values_fn, backend="nvfuser")
        check_calls(f, special_values_fn, [[a, 0.5], [a, 2.0]], "special values", observed, grad=False)
    assert {"logsumexp", "softmax", "log_softmax", "amax", "var"} <= observed.prims["forward"]


def layout_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.softmax(a * s, 1) + b, (a @ b.t()).sum(0)


def test_non_contiguous_inputs_match_eager() -> None:
    """Transposed and expanded inputs: each gets a fusion defined for its layout (the
    interpreter checks the declared contiguity and stride order against the tensor)."""
    a, b = torch.randn(6, 5), torch.randn(5, 6)
    with interpreted_nvfuser() as observed:
        f = symscalar.jit(layout_fn, backend="nvfuser")
        check_calls(
            f,
            layout_fn,
            [
                [a, b.t().contiguous(), 0.5],
                [a.t().contiguous().t(), b.t(), 1.5],
                [a, torch.randn(1, 5).expand(6, 5), 0.25],
            ],
            "layouts",
            observed,
        )
    assert len(observed.fusions) > 1  # one per layout


# ----------------------------------------------------------------------------------------
# Multi-op regions: hazards (tests/test_grad_hazards.py) and chains (benchmarks/nvfuser.py)


def gelu_chain(x: torch.Tensor, bias: torch.Tensor, scale: DynamicFloat) -> Any:
    return F.gelu(x * scale + bias)


def softmax_chain(x: torch.Tensor, scale: DynamicFloat) -> Any:
    return torch.softmax(x * scale, -1)


def layer_norm_chain(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: DynamicFloat) -> Any:
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def norm_chain(a: torch.Tensor, w: torch.Tensor, b: torch.Tensor, s: DynamicFloat, eps: DynamicFloat) -> Any:
    h = F.gelu(F.layer_norm(a * s, (a.shape[-1],), w, b, eps), approximate="tanh")
    return torch.log_softmax(h, -1) + torch.logsumexp(h, -1, keepdim=True)


CHAINS: dict[str, tuple[Callable[..., Any], Callable[[int, torch.dtype], list[torch.Tensor]], tuple[float, ...]]] = {
    "scale_bias_gelu": (
        gelu_chain,
        lambda n, dt: [torch.randn(n, 64, dtype=dt), torch.randn(64, dtype=dt)],
        (0.5, 2.0),
    ),
    "softmax": (softmax_chain, lambda n, dt: [torch.randn(n, 64, dtype=dt)], (0.125, 3.0)),
    "layer_norm": (
        layer_norm_chain,
        lambda n, dt: [torch.randn(n, 64, dtype=dt), torch.randn(64, dtype=dt), torch.randn(64, dtype=dt)],
        (1e-5, 0.5),
    ),
    "norm_chain": (
        norm_chain,
        lambda n, dt: [torch.randn(n, 16, dtype=dt), torch.randn(16, dtype=dt), torch.randn(16, dtype=dt)],
        (0.75, 1e-5),
    ),
}


@functools.cache
def chain_report(name: str, dtype: torch.dtype) -> Report:
    torch.manual_seed(0)
    fn, make, values = CHAINS[name]
    n_scalars = len([p for p in fn.__annotations__.values() if p in ("DynamicFloat", DynamicFloat)])
    calls = [
        [*make(batch, dtype), *([v] if n_scalars == 1 else [v, values[1]])]
        for batch, v in ((6, values[0]), (6, values[1]), (40, values[0] * 1.5))
    ]
    # In low precision, eager's fused layer_norm backward rounds once where the decomposed
    # trace rounds after each op (a bf16 weight-grad differs by 4%): the reference is then the
    # same trace run by symscalar's torch backend, which isolates the lowering's error.
    reference = fn if dtype not in LOW_DTYPES else symscalar.jit(fn, backend="torch")
    if name == "layer_norm" and dtype in LOW_DTYPES:
        # The torch backend runs eager's own layer-norm backward kernel now, and the lowering
        # is one float32 computation rounded once: the reference is that computation itself
        # (float32 on the upcast inputs, the outputs and, through ``.float()``'s backward, the
        # gradients rounded once to the input dtype).
        def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> Any:
            return fn(x.float(), w.float(), b.float(), eps).to(x.dtype)

    with interpreted_nvfuser() as observed:
        f = symscalar.jit(fn, backend="nvfuser")
        n = check_calls(f, reference, calls[:1], f"{name} [{dtype}]", observed)
        built = nb.fusion_cache_info()
        n += check_calls(f, reference, calls[1:], f"{name} [{dtype}]", observed)
        assert nb.fusion_cache_info().misses == built.misses, f"{name}: fusions rebuilt for a new value or batch size"
        if dtype not in LOW_DTYPES:
            # (in low precision the expanded cotangent makes norm_chain's input gradient the
            # cancellation 1 - 16 softmax + 16 softmax: rounding noise of either backend)
            n += check_calls(
                f, reference, calls[-1:], f"{name} [{dtype}] (expanded cotangent)", observed, expanded=True
            )
        return report(f"{name} [{dtype}]", n, observed)


@pytest.mark.parametrize("dtype", [torch.float32, *LOW_DTYPES], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", list(CHAINS))
def test_chain_forward_and_backward_match_eager(name: str, dtype: torch.dtype) -> None:
    report = chain_report(name, dtype)
    assert report.prims["forward"] and report.prims["backward"]


@functools.cache
def hazard_report(index: int, dtype: torch.dtype) -> Report:
    torch.manual_seed(0)
    case = hazards.CASES[index]
    calls = [[a.detach().to(dtype) if isinstance(a, torch.Tensor) else a for a in args] for args in case.calls]
    with interpreted_nvfuser() as observed:
        f = symscalar.jit(case.fn, backend="nvfuser", dynamic=case.dynamic, static=case.static)
        reference = (
            case.fn
            if dtype not in LOW_DTYPES
            else symscalar.jit(case.fn, backend="torch", dynamic=case.dynamic, static=case.static)
        )
        n = check_calls(f, reference, calls, f"hazard {case.name} [{dtype}]", observed)
        return report(f"hazard {case.name} [{dtype}]", n, observed)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16], ids=["f64", "f32", "f16"])
@pytest.mark.parametrize("index", range(len(hazards.CASES)), ids=[c.name for c in hazards.CASES])
def test_hazard_matches_eager(index: int, dtype: torch.dtype) -> None:
    hazard_report(index, dtype)


# ----------------------------------------------------------------------------------------
# OpInfo samples: one spelling per op (the registry's), float samples first


OPINFO_PER_OP = 3


@functools.cache
def opinfo_calls() -> dict[str, list[support.Call]]:
    by_stem: dict[str, list[support.Call]] = {}
    for func in support.registered_spellings():
        stem = support.op_stem(support.spelling_name(func))
        if stem in by_stem or support.spelling_name(func).startswith("torch.Tensor."):
            continue
        calls = [c for c in support.calls_for(func) if isinstance(c, support.Call)]
        floats = [
            c
            for c in calls
            if any(
                isinstance(t, torch.Tensor) and t.dtype.is_floating_point for t in support.leaves((c.args, c.kwargs))
            )
        ]
        float_ids = {id(c) for c in floats}
        chosen = (floats + [c for c in calls if id(c) not in float_ids])[:OPINFO_PER_OP]
        if chosen:
            by_stem[stem] = chosen
    return by_stem


@functools.cache
def opinfo_report() -> Report:
    checked, prims, ops, failures = 0, collections.defaultdict(set), set(), []  # type: ignore[var-annotated]
    for stem, calls in opinfo_calls().items():
        for call in calls:
            try:
                expected = call.run()
            except Exception:  # noqa: BLE001, S112 - torch eager rejects this sample: nothing to compare
                continue
            with interpreted_nvfuser() as observed:
                try:
                    f, tensors = support.jitted(call.func, call.args, call.kwargs)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)
                        got = f(tensors)
                    if stem in RANDOM_STEMS:  # random values: only what does not depend on them
                        assert (got.shape, got.dtype) == (expected.shape, expected.dtype), stem
                        checked += 1
                        continue
                    # torch.empty & co: eager's values are whatever memory held (any are valid)
                    uninitialized = support.spelling_name(call.func) in support.UNINITIALIZED_SPELLINGS
                    compare = support.assert_same_metadata if uninitialized else assert_same
                    compare(got, expected, f"{stem}: {call.source}")
                    dynamic = support.dynamic_positions(call)
                    if dynamic is not None:
                        args, kwargs, values = dynamic
                        g, tensors = support.jitted(call.func, args, kwargs, len(values))
                        compare(g(tensors, *values), expected, f"{stem} (dynamic {values}): {call.source}")
                except symscalar.UnsupportedOperationError:
                    continue
                except Exception as e:  # noqa: BLE001 - collected, reported together
                    failures.append(f"{stem} {call.source}: {e}")
                    continue
                checked += 1
                prims["forward"] |= observed.prims["forward"]
                ops |= _recordings()
    assert not failures, f"{len(failures)} OpInfo samples differ from eager through the interpreter:\n" + "\n".join(
        failures
    )
    return Report("opinfo", checked, dict(prims), ops, set())


def test_opinfo_samples_match_eager() -> None:
    report = opinfo_report()
    assert report.calls > 100, f"only {report.calls} OpInfo samples ran"


# ----------------------------------------------------------------------------------------
# Registry-driven coverage and the count


def all_reports() -> list[Report]:
    reports = [lowered_case_report(p.values[0], p.values[1]) for p in LOWERED_PARAMS]
    reports += [chain_report(name, dtype) for name in CHAINS for dtype in (torch.float32, *LOW_DTYPES)]
    reports += [
        hazard_report(i, dtype)
        for i in range(len(hazards.CASES))
        for dtype in (torch.float64, torch.float32, torch.float16)
    ]
    reports.append(opinfo_report())
    return reports


# Primitives with a lowering that no sample here runs through a fusion, and why. Empty: a
# new lowering without a sample fails below until a case or an OpInfo sample reaches it.
UNSAMPLED: dict[str, str] = {
    "arange": "folded into a constant by jit; test_integer_arange_is_interpreted",
    **NOT_COMPARABLE,
}


# Lowered primitives only a vjp makes, and why: checked inside backward fusions (their
# gradients compared with torch.autograd); the test fails if no backward fusion holds them.
BACKWARD_ONLY: dict[str, str] = {
    "gelu_backward": "gelu's vjp: in the backward fusions of the gelu cases (its own vjp, a double "
    "backward, by gradgradcheck in tests/test_fused_kernels.py)",
    **{
        f"{name}_backward": f"{name}'s vjp: in the backward fusions of the {name} case (its own vjp, a double "
        "backward, against eager in tests/test_ops_elementwise.py)"
        for name in ("hardsigmoid", "hardswish", "hardtanh", "leaky_relu")
    },
    **{
        f"{name}_backward": f"{name}'s vjp (torch's backward kernel on the torch backend): in the backward "
        f"fusions of the {name} cases (its own vjp, a double backward, by gradgradcheck and the 16-bit audit, "
        "tests/test_soundness_16bit_backward.py)"
        for name in ("sigmoid", "tanh", "silu", "softmax", "log_softmax", "layer_norm")
    },
    **dict.fromkeys(
        ("mm_mat1_backward", "mm_mat2_backward", "linear_bias_grad", "bmm_self_backward", "bmm_mat2_backward"),
        "the 2-d products' and linear's vjps (the order of eager's mm backward and bias sum): in the backward "
        "fusions of the matmul and linear cases (their own vjps, a double backward, in tests/test_op_bits.py)",
    ),
    "batch_norm_eval_backward": "batch_norm_eval's vjp (torch's backward kernel on the torch backend): in the "
    "backward fusions of the batch_norm_eval case (its own vjp, a double backward, by gradgradcheck in "
    "tests/test_batch_norm_eval_bits.py)",
}


def test_every_lowered_primitive_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    lowered = {n for n, p in PRIMITIVES.items() if p in NVFUSER_LOWERINGS and not n.startswith("test_")}
    reports = all_reports()
    forward = set().union(*(r.prims.get("forward", set()) for r in reports))
    backward = set().union(*(r.prims.get("backward", set()) for r in reports))
    missing = lowered - forward - set(UNSAMPLED) - (set(BACKWARD_ONLY) & backward)
    assert not missing, f"lowered primitives no sample runs through a fusion: {sorted(missing)}; add a case"
    with_vjp = {n for n in lowered if PRIMITIVES[n] in VJPS}
    vjps = set().union(*(r.vjps for r in reports))
    assert with_vjp - vjps - set(UNSAMPLED) - set(BACKWARD_ONLY) == set(), (
        f"vjps never checked through fusions: {sorted(with_vjp - vjps)}"
    )
    calls = sum(r.calls for r in reports)
    pairs = sum(len(r.prims.get("forward", ())) + len(r.prims.get("backward", ())) for r in reports)
    with capsys.disabled():
        print(
            f"\nnvFuser numerics through the interpreter: {len(forward & lowered)}/{len(lowered)} lowered primitives "
            f"forward, {len(vjps & with_vjp)}/{len(with_vjp)} vjps (gradients vs torch.autograd), "
            f"{len(backward & lowered)} primitives inside backward fusions; "
            f"{len(reports)} sample groups, {calls} calls; primitives x samples checked: {pairs}"
        )
