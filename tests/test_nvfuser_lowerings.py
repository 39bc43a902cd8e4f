"""The nvFuser lowerings of the op library, checked on the CPU (FusionDefinitions build without
a GPU): every lowered primitive makes the right nvFuser op with dynamic scalars as fusion
inputs and static dims as constants; the primitives left without a lowering are exactly an
allow-list; cases a lowering cannot handle run in torch; the issue's hazard functions lower,
forward and backward, to one fusion each; and each lowering's arithmetic, read with torch
ops for nvFuser's, matches the torch backend. Execution on a GPU is marked ``cuda``."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat, StaticInt
from symscalar import nvfuser_backend as nb
from symscalar.grad import vjp_traces
from symscalar.nvfuser_lowering import NVFUSER_LOWERINGS
from symscalar.ops import random as random_ops
from symscalar.ops.factories import arange_p
from symscalar.ops.shape import zero_pad_p
from symscalar.scalar import SCALAR_BINARY, SCALAR_UNARY
from symscalar.trace import PRIMITIVES, Eqn, ScalarVar, TensorVar, Trace, dce, is_var
from tests.tracing_support import trace_of

HAS_NVFUSER = nb.nvfuser_available()
needs_nvfuser = pytest.mark.skipif(not HAS_NVFUSER, reason="nvfuser_direct does not import here; lowering needs it")
cuda = pytest.mark.cuda
needs_cuda = pytest.mark.skipif(
    not (torch.cuda.is_available() and HAS_NVFUSER),
    reason="execution needs a CUDA GPU and an nvfuser_direct wheel matching this torch/CUDA "
    f"(cuda available: {torch.cuda.is_available()}, nvfuser_direct imports: {HAS_NVFUSER})",
)

# Dynamic values no lowering would print by accident: if one shows up in a fusion's
# definition, it was baked in as a constant.
S = 0.3125
P = 1.4375
EPS = 0.0078125
DOUBLE_INPUT = "define_scalar(None, dtype=DataType.Double)"


def lower_trace(trace: Trace) -> nb.Plan:
    return nb.lower(trace, [None if isinstance(v, TensorVar) else S for v in trace.inputs])


def kinds(plan: nb.Plan) -> list[str]:
    """The plan's steps other than host scalar work."""
    return [k for k, _ in plan.steps if k != "host"]


def float_scalar_inputs(region: nb.Region) -> int:
    return sum(1 for v in region.inputs if isinstance(v, ScalarVar) and v.dtype is float)


def grad_traces(trace: Trace) -> tuple[Trace, Trace]:
    wrt = [i for i, v in enumerate(trace.inputs) if isinstance(v, TensorVar) and v.dtype.is_floating_point]
    forward, backward, _ = vjp_traces(trace, wrt)
    return forward, backward


# ----------------------------------------------------------------------------------------
# One case per lowered primitive: (id, fn, inputs, nvFuser ops / patterns the fusion shows)


def x(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype)


def abs_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.abs(a) * s


def exp2_fn(a: torch.Tensor) -> Any:
    return torch.exp2(a)


def copies_fn(a: torch.Tensor) -> Any:
    return a.clone() * a.transpose(1, 2).contiguous().transpose(1, 2) + a.detach()


def expm1_fn(a: torch.Tensor) -> Any:
    return torch.expm1(a)


def log_fn(a: torch.Tensor) -> Any:
    return torch.log(a)


def log1p_fn(a: torch.Tensor) -> Any:
    return torch.log1p(a)


def log2_fn(a: torch.Tensor) -> Any:
    return torch.log2(a)


def sqrt_fn(a: torch.Tensor) -> Any:
    return torch.sqrt(a)


def rsqrt_fn(a: torch.Tensor) -> Any:
    return torch.rsqrt(a)


def reciprocal_fn(a: torch.Tensor) -> Any:
    return torch.reciprocal(a)


def sin_fn(a: torch.Tensor) -> Any:
    return torch.sin(a)


def cos_fn(a: torch.Tensor) -> Any:
    return torch.cos(a)


def tan_fn(a: torch.Tensor) -> Any:
    return torch.tan(a)


def tanh_fn(a: torch.Tensor) -> Any:
    return torch.tanh(a)


def sigmoid_fn(a: torch.Tensor) -> Any:
    return torch.sigmoid(a)


def relu_fn(a: torch.Tensor) -> Any:
    return torch.relu(a)


def silu_fn(a: torch.Tensor) -> Any:
    return F.silu(a)


def gelu_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return F.gelu(a * s)


def gelu_tanh_fn(a: torch.Tensor) -> Any:
    return F.gelu(a, approximate="tanh")


def hardsigmoid_fn(a: torch.Tensor) -> Any:
    return F.hardsigmoid(a * 4)


def hardswish_fn(a: torch.Tensor) -> Any:
    return F.hardswish(a * 4)


def hardtanh_fn(a: torch.Tensor) -> Any:
    return F.hardtanh(a, -0.5, 0.75)


def leaky_relu_fn(a: torch.Tensor) -> Any:
    return F.leaky_relu(a, 0.2)


def erf_fn(a: torch.Tensor) -> Any:
    return torch.erf(a)


def floor_fn(a: torch.Tensor) -> Any:
    return torch.floor(a)


def ceil_fn(a: torch.Tensor) -> Any:
    return torch.ceil(a)


def round_fn(a: torch.Tensor) -> Any:
    return torch.round(a)


def sign_fn(a: torch.Tensor) -> Any:
    return torch.sign(a)


def isnan_fn(a: torch.Tensor) -> Any:
    return torch.isnan(a)


def isfinite_fn(a: torch.Tensor) -> Any:
    return torch.isfinite(a)


def logical_not_fn(a: torch.Tensor) -> Any:
    return torch.logical_not(a)


def pow_fn(a: torch.Tensor, p: DynamicFloat) -> Any:
    return a.abs() ** p


def rpow_fn(a: torch.Tensor, p: DynamicFloat) -> Any:
    return p**a


def maximum_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.maximum(a, b)


def minimum_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.minimum(a, b)


def atan2_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.atan2(a, b)


def remainder_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.remainder(a, s)


def div_floor_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.div(a, b, rounding_mode="floor")


def div_trunc_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.div(a, s, rounding_mode="trunc")


def eq_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a == s


def ne_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return a != b


def lt_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a < s


def le_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a <= s


def gt_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a > s


def ge_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a >= s


def logical_and_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.logical_and(a, b)


def logical_or_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.logical_or(a > 0, b)


def where_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.where(a > 0, a, s)


def where_scalars_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.where(a > 0, s, -1.5)


def clamp_fn(a: torch.Tensor, s: DynamicFloat, p: DynamicFloat) -> Any:
    return torch.clamp(a, s, p)


def clamp_min_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.clamp(a, min=s)


def clamp_tensor_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.clamp(a, max=b)


def lerp_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.lerp(a, b, s)


def addcmul_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.addcmul(a, a, b, value=s)


def clone_fn(a: torch.Tensor) -> Any:
    return a.clone() * 2


def contiguous_fn(a: torch.Tensor) -> Any:
    return a.contiguous() * 2


def detach_fn(a: torch.Tensor) -> Any:
    return a.detach() * 2


def uniform_fn(a: torch.Tensor) -> Any:
    return a + torch.rand_like(a)


def normal_fn(a: torch.Tensor) -> Any:
    return a * torch.randn_like(a)


def mean_fn(a: torch.Tensor, d: StaticInt) -> Any:
    return a.mean(d)


def amax_fn(a: torch.Tensor) -> Any:
    return a.amax(1)


def amin_fn(a: torch.Tensor) -> Any:
    return a.amin((0, 2), keepdim=True)


def prod_fn(a: torch.Tensor) -> Any:
    return a.prod(1)


def var_fn(a: torch.Tensor) -> Any:
    return a.var(1)


def std_fn(a: torch.Tensor) -> Any:
    return a.std(0, correction=0, keepdim=True)


def var_mean_fn(a: torch.Tensor) -> Any:
    return torch.var_mean(a, 2)


def std_mean_fn(a: torch.Tensor) -> Any:
    return torch.std_mean(a, (0, 2))


def logsumexp_fn(a: torch.Tensor) -> Any:
    return torch.logsumexp(a, 1)


def softmax_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.softmax(a * s, 1)


def log_softmax_fn(a: torch.Tensor) -> Any:
    return torch.log_softmax(a, -1)


def permute_fn(a: torch.Tensor) -> Any:
    return a.permute(2, 0, 1)


def slice_fn(a: torch.Tensor) -> Any:
    return a[1:3, :, 2:]


def cat_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.cat([a, b], 0)


def split_fn(a: torch.Tensor) -> Any:
    return torch.split(a, [1, 3], 1)


def flip_fn(a: torch.Tensor) -> Any:
    return a.flip(0, 2)


def matmul_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return a @ b


def linear_fn(a: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> Any:
    return F.linear(a, w, b)


def addmm_fn(b: torch.Tensor, m1: torch.Tensor, m2: torch.Tensor) -> Any:
    return torch.addmm(b, m1, m2)


def linear_no_bias_fn(a: torch.Tensor, w: torch.Tensor) -> Any:
    return F.linear(a, w)


def native_layer_norm_fn(a: torch.Tensor, w: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return F.layer_norm(a, a.shape[1:], w, b, s)


def batch_norm_eval_fn(a: torch.Tensor, w: torch.Tensor, b: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> Any:
    return F.batch_norm(a, m.detach(), v.detach().abs() + 0.5, w, b, training=False, eps=EPS)


def cumsum_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.cumsum(a * s, 1)


def first_set_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    # the ops lowered first: add sub mul div neg exp sum reshape expand full convert
    y = torch.exp(-a.reshape(2, 20).expand(3, 2, 20)) / s - torch.full((3, 2, 20), s)
    return (y.sum(0) + b.reshape(2, 20).to(torch.float64)).to(torch.float32)


def zero_pad_direct_fn(a: torch.Tensor) -> Any:
    # the backward of slice is zero_pad; called here directly through the primitive
    return zero_pad_p.bind(a, padding=((1, 2, 0), (0, 0, 0), (3, 0, 0)))


A = (2, 4, 5)
B = (2, 4, 5)
# (fn, input makers, substrings/regexes the fusion definition must contain)
LOWERED_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...], tuple[str, ...]]] = {
    "first_set": (
        first_set_fn,
        (x(*A), x(*B), S),
        tuple(
            f"fd.ops.{op}(" for op in ("add", "sub", "div", "neg", "exp", "sum", "reshape", "expand", "full", "cast")
        ),
    ),
    "abs": (abs_fn, (x(*A), S), ("fd.ops.abs(",)),
    "exp2": (exp2_fn, (x(*A),), ("fd.ops.exp2(",)),
    # clone, contiguous and stop_gradient (detach) are fd.ops.set, which nvFuser prints as a cast
    "copies": (copies_fn, (x(*A),), ("fd.ops.cast(", "fd.ops.mul(", "fd.ops.add(")),
    "expm1": (expm1_fn, (x(*A),), ("fd.ops.expm1(",)),
    "log": (log_fn, (x(*A),), ("fd.ops.log(",)),
    "log1p": (log1p_fn, (x(*A),), ("fd.ops.log1p(",)),
    "log2": (log2_fn, (x(*A),), ("fd.ops.log2(",)),
    "sqrt": (sqrt_fn, (x(*A),), ("fd.ops.sqrt(",)),
    "rsqrt": (rsqrt_fn, (x(*A),), ("fd.ops.rsqrt(",)),
    "reciprocal": (reciprocal_fn, (x(*A),), ("fd.ops.reciprocal(",)),
    "sin": (sin_fn, (x(*A),), ("fd.ops.sin(",)),
    "cos": (cos_fn, (x(*A),), ("fd.ops.cos(",)),
    "tan": (tan_fn, (x(*A),), ("fd.ops.tan(",)),
    "tanh": (tanh_fn, (x(*A),), ("fd.ops.tanh(",)),
    "sigmoid": (sigmoid_fn, (x(*A),), ("fd.ops.sigmoid(",)),
    "relu": (relu_fn, (x(*A),), ("fd.ops.relu(",)),
    "silu": (silu_fn, (x(*A),), ("fd.ops.silu(",)),
    "gelu": (gelu_fn, (x(*A), S), ("fd.ops.erf(",)),
    "gelu_tanh": (gelu_tanh_fn, (x(*A),), ("fd.ops.tanh(",)),
    "hardsigmoid": (hardsigmoid_fn, (x(*A),), ("fd.ops.minimum(", "fd.ops.maximum(")),
    "hardswish": (hardswish_fn, (x(*A),), ("fd.ops.minimum(", "fd.ops.maximum(")),
    "hardtanh": (hardtanh_fn, (x(*A),), ("fd.ops.minimum(", "fd.ops.maximum(")),
    "leaky_relu": (leaky_relu_fn, (x(*A),), ("fd.ops.where(",)),
    "erf": (erf_fn, (x(*A),), ("fd.ops.erf(",)),
    "floor": (floor_fn, (x(*A),), ("fd.ops.floor(",)),
    "ceil": (ceil_fn, (x(*A),), ("fd.ops.ceil(",)),
    "round": (round_fn, (x(*A),), ("fd.ops.round(",)),
    "sign": (sign_fn, (x(*A),), ("fd.ops.gt(", "fd.ops.lt(", "fd.ops.where(")),  # as nvFuser prints it
    "isnan": (isnan_fn, (x(*A),), ("fd.ops.isnan(",)),
    "isfinite": (isfinite_fn, (x(*A),), ("fd.ops.isfinite(",)),
    "logical_not": (logical_not_fn, (x(*A),), ("fd.ops.logical_not(",)),
    "pow": (pow_fn, (x(*A), P), ("fd.ops.pow(",)),
    "rpow": (rpow_fn, (x(*A), P), ("fd.ops.pow(",)),
    "maximum": (maximum_fn, (x(*A), x(*B)), ("fd.ops.maximum(",)),
    "minimum": (minimum_fn, (x(*A), x(*B)), ("fd.ops.minimum(",)),
    "atan2": (atan2_fn, (x(*A), x(*B)), ("fd.ops.atan2(",)),
    "remainder": (remainder_fn, (x(*A), S), ("fd.ops.remainder(",)),
    "div_floor": (div_floor_fn, (x(*A), x(*B)), ("fd.ops.floor(",)),
    "div_trunc": (div_trunc_fn, (x(*A), S), ("fd.ops.trunc(",)),
    "eq": (eq_fn, (x(*A), S), ("fd.ops.eq(",)),
    "ne": (ne_fn, (x(*A), x(*B)), ("fd.ops.ne(",)),
    "lt": (lt_fn, (x(*A), S), ("fd.ops.lt(",)),
    "le": (le_fn, (x(*A), S), ("fd.ops.le(",)),
    "gt": (gt_fn, (x(*A), S), ("fd.ops.gt(",)),
    "ge": (ge_fn, (x(*A), S), ("fd.ops.ge(",)),
    "logical_and": (logical_and_fn, (x(*A), x(*B)), ("fd.ops.logical_and(",)),
    "logical_or": (logical_or_fn, (x(*A), x(*B)), ("fd.ops.logical_or(",)),
    "where": (where_fn, (x(*A), S), ("fd.ops.where(",)),
    "where_scalars": (where_scalars_fn, (x(*A), S), ("fd.ops.where(",)),
    "clamp": (clamp_fn, (x(*A), S, P), ("fd.ops.maximum(", "fd.ops.minimum(")),
    "clamp_min": (clamp_min_fn, (x(*A), S), ("fd.ops.maximum(",)),
    "clamp_tensor": (clamp_tensor_fn, (x(*A), x(*B)), ("fd.ops.minimum(",)),
    "lerp": (lerp_fn, (x(*A), x(*B), S), ("fd.ops.lerp(",)),
    "addcmul": (addcmul_fn, (x(*A), x(*B), S), ("fd.ops.mul(", "fd.ops.add(")),
    "mean": (mean_fn, (x(*A), 1), (r"fd\.ops\.sum\(tv\d+, dims=\[1\]", "fd.ops.size(", "fd.ops.div(")),
    "amax": (amax_fn, (x(*A),), (r"fd\.ops\.max\(tv\d+, dims=\[1\]",)),
    "amin": (amin_fn, (x(*A),), (r"fd\.ops\.min\(tv\d+, dims=\[0, 2\]",)),
    "prod": (prod_fn, (x(*A),), (r"fd\.ops\.prod\(tv\d+, dims=\[1\]",)),
    "var": (var_fn, (x(*A),), (r"fd\.ops\.sum\(tv\d+, dims=\[1\]",)),
    "std": (std_fn, (x(*A),), (r"fd\.ops\.sum\(tv\d+, dims=\[0\]", "fd.ops.sqrt(")),
    "var_mean": (var_mean_fn, (x(*A),), (r"fd\.ops\.welford\(tv\d+, dims=\[2\]\)",)),
    "std_mean": (std_mean_fn, (x(*A),), (r"fd\.ops\.welford\(tv\d+, dims=\[0, 2\]\)", "fd.ops.sqrt(")),
    "logsumexp": (logsumexp_fn, (x(*A),), (r"fd\.ops\.max\(tv\d+, dims=\[1\]", "fd.ops.log(", "fd.ops.isinf(")),
    "softmax": (softmax_fn, (x(*A), S), (r"fd\.ops\.max\(tv\d+, dims=\[1\]", r"fd\.ops\.sum\(tv\d+, dims=\[1\]")),
    "log_softmax": (log_softmax_fn, (x(*A),), (r"fd\.ops\.max\(tv\d+, dims=\[2\]", "fd.ops.log(")),
    "permute": (permute_fn, (x(*A),), (r"fd\.ops\.permute\(tv\d+, dims=\[2, 0, 1\]\)",)),
    "slice": (slice_fn, (x(*A),), ("fd.ops.slice(",)),
    "zero_pad": (zero_pad_direct_fn, (x(*A),), (r"fd\.ops\.pad\(tv\d+, pad_widths=\[3, 0, 0, 0, 1, 2\]",)),
    "cat": (cat_fn, (x(*A), x(*B)), ("fd.ops.cat(",)),
    "split": (split_fn, (x(*A),), ("fd.ops.slice(",)),
    "flip": (flip_fn, (x(*A),), ("fd.ops.iota(", "fd.ops.index_select(")),
    "matmul": (matmul_fn, (x(3, 4, 5), x(5, 2)), ("fd.ops.matmul(",)),
    "bmm": (matmul_fn, (x(2, 3, 4), x(2, 4, 5)), ("fd.ops.matmul(",)),
    "linear": (linear_fn, (x(3, 4, 5), x(2, 5), x(2)), ("fd.ops.linear(",)),
    "addmm": (addmm_fn, (x(2), x(4, 5), x(5, 2)), ("fd.ops.linear(", "fd.ops.permute(")),
    "native_layer_norm": (
        native_layer_norm_fn,
        (x(2, 3, 4), x(3, 4), x(3, 4), S),
        (r"fd\.ops\.welford\(tv\d+, dims=\[1, 2\]\)", "fd.ops.rsqrt("),
    ),  # var_mean prints as welford
    "batch_norm_eval": (
        batch_norm_eval_fn,
        (x(2, 3, 4, 5), x(3), x(3), x(3), x(3)),
        ("fd.ops.rsqrt(", r"fd\.ops\.broadcast\(tv\d+, is_broadcast_dim=\[True, False, True, True\]"),
    ),
    "linear_no_bias": (linear_no_bias_fn, (x(4, 5), x(2, 5)), ("fd.ops.linear(",)),
    "clone": (clone_fn, (x(*A),), ("fd.ops.mul(",)),  # nvFuser prints the copy (set) as an alias
    "contiguous": (contiguous_fn, (x(*A),), ("fd.ops.mul(",)),  # nvFuser prints the copy (set) as an alias
    "stop_gradient": (detach_fn, (x(*A),), ("fd.ops.mul(",)),  # nvFuser prints the copy (set) as an alias
    "uniform": (uniform_fn, (x(*A),), ("fd.ops.uniform(", "rng_seed=")),
    "normal": (normal_fn, (x(*A),), ("fd.ops.normal(", "rng_seed=")),
    "cumsum": (cumsum_fn, (x(*A), S), (r"fd\.ops\.cumsum\(tv\d+, dim=1\)",)),
}
CASE_IDS = list(LOWERED_CASES)


def _case_trace(name: str) -> Trace:
    fn, args, _ = LOWERED_CASES[name]
    return trace_of(fn, *args)


@needs_nvfuser
@pytest.mark.parametrize("name", CASE_IDS)
def test_lowered_op_makes_its_nvfuser_op(name: str) -> None:
    fn, args, expected = LOWERED_CASES[name]
    trace = trace_of(fn, *args)
    plan = lower_trace(trace)
    assert kinds(plan) == ["fusion"], f"{name}: {kinds(plan)}\n{plan}"
    (region,) = plan.regions
    (fd,) = plan.fusions
    text = repr(fd)
    for pattern in expected:
        assert re.search(pattern if pattern.startswith("fd\\") else re.escape(pattern), text), (pattern, text)
    dynamic = [a for a in args if isinstance(a, float)]
    assert float_scalar_inputs(region) == len(dynamic)
    assert text.count(DOUBLE_INPUT) == len(dynamic), text
    for value in dynamic:
        assert repr(value) not in text, f"{value} was baked into the fusion"


@needs_nvfuser
@pytest.mark.parametrize("name", ["mean", "softmax", "logsumexp", "var_mean", "std", "split", "flip", "cat", "gelu"])
def test_new_batch_size_reuses_the_fusion(name: str) -> None:
    # Sizes are symbolic: a count (mean, var) or an end index (split, flip) must come from
    # fd.ops.size, not from a constant, or a new batch would need (or wrongly reuse) a fusion.
    fn, args, _ = LOWERED_CASES[name]
    (small,) = lower_trace(trace_of(fn, *args)).fusions
    bigger = tuple(torch.randn(7, *a.shape[1:]) if isinstance(a, torch.Tensor) else a for a in args)
    before = nb.fusion_cache_info()
    (large,) = lower_trace(trace_of(fn, *bigger)).fusions
    assert large is small
    assert nb.fusion_cache_info().misses == before.misses


def _prims_in(trace: Trace) -> set[str]:
    return {e.prim.name for e in trace.eqns}


@needs_nvfuser
def test_every_lowered_primitive_has_a_case() -> None:
    lowered = {n for n, p in PRIMITIVES.items() if p in NVFUSER_LOWERINGS and not n.startswith("test_")}
    covered = set().union(*(_prims_in(_case_trace(name)) for name in CASE_IDS))
    covered |= _prims_in(arange_trace(0, 4, 1, torch.int64))
    covered |= _prims_in(gelu_backward_trace("none"))
    # their backward primitives (torch's backward kernels in the torch backend)
    for name in ("hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "sigmoid", "tanh", "silu", "softmax"):
        covered |= _prims_in(grad_traces(_case_trace(name))[1])
    for name in ("log_softmax", "native_layer_norm", "batch_norm_eval", "linear", "bmm"):  # (linear: mm_mat2_backward)
        covered |= _prims_in(grad_traces(_case_trace(name))[1])
    assert lowered - covered == set(), "lowered primitives without a test case"


def gelu_backward_trace(approximate: str) -> Trace:
    """``gelu_backward(ct, a)``, built by hand: only gelu's backward makes the primitive."""
    ct, a, out = (TensorVar((3, 4), torch.float32, torch.device("cpu")) for _ in range(3))
    params = {} if approximate == "none" else {"approximate": approximate}
    return Trace((ct, a), (Eqn(PRIMITIVES["gelu_backward"], (ct, a), params, (out,)),), (out,), "gelu_backward_fn")


@needs_nvfuser
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_is_one_fusion_matching_torch(approximate: str) -> None:
    trace = gelu_backward_trace(approximate)
    assert kinds(lower_trace(trace)) == ["fusion"]
    _check_lowered_arithmetic(trace)


# Every primitive without an nvFuser lowering, and why. A new op without a lowering fails
# test_unlowered_primitives_are_exactly_the_allow_list until someone decides.
UNLOWERED = {
    "argmax": "nvFuser has no argmax/argmin op (topk/argsort need not pick the first index)",
    "argmin": "nvFuser has no argmax/argmin op (topk/argsort need not pick the first index)",
    "check": "host-only: a scalar assertion, run in Python before the fusions",
    "tensor_check": "a runtime check of a one-element tensor (a raise-only branch): host-only, between fusions",
    **dict.fromkeys(
        ("ctc_loss", "ctc_loss_backward"),
        "nvFuser has no CTC op (a dynamic-programming recurrence); torch's kernels run it",
    ),
    "multinomial": "torch's sampler on the stream's generator (eager's distribution); nvFuser has no such op",
    "random_int": "torch's integer sampler on the stream's generator (eager's distribution exactly)",
    "conj": "complex tensors only (it exists for complex gradients); the lowerings are tested on real dtypes",
    **dict.fromkeys(
        ("torch_call", "torch_view_call"),
        "the opaque torch call (ops/opaque.py) runs any torch function by torch itself: a fusion break",
    ),
    **dict.fromkeys(
        ("index_select", "index_add", "gather", "scatter_add", "scatter", "index", "index_put", "embedding", "one_hot"),
        "torch raises on an out-of-range index; nvFuser's gather/scatter/index ops do not "
        "check, so a fusion could silently read or write out of bounds",
    ),
    **dict.fromkeys(
        (
            "convolution",
            "convolution_backward",
            "max_pool2d",
            "max_pool2d_backward",
            "avg_pool2d",
            "avg_pool2d_backward",
            "adaptive_avg_pool2d",
            "adaptive_avg_pool2d_backward",
        ),
        "nvFuser has no convolution or windowed pooling op; torch's kernels run them",
    ),
    **dict.fromkeys(
        ("batch_norm", "batch_norm_backward"),
        "training-mode batch norm runs torch's kernels so that gradients are eager's to the bit "
        "(ops/conv.py: bfloat16 amplifies the composite's other summation order)",
    ),
    **dict.fromkeys(
        ("native_group_norm", "group_norm_backward"),
        "torch's group_norm kernels, so that values and gradients are eager's to the bit (ops/composites.py: "
        "the composite's sums round otherwise); a lowering like native_layer_norm's is future work",
    ),
    **dict.fromkeys(
        ("weight_norm", "weight_norm_backward"),
        "torch's fused _weight_norm_interface kernels, so that weight-normalized layers are eager's to the bit",
    ),
    "baddbmm": "torch's kernel, which adds beta * input inside its accumulation (ops/attention.py); "
    "dynamic coefficients compose lowered ops",
    "embedding_backward": "torch's embedding_dense_backward (16-bit rows summed in float32); torch raises on an "
    "out-of-range index, nvFuser's scatter does not check",
    "batch_norm_stats": "torch's update kernel of the running statistics, so that they are eager's to the bit "
    "(ops/conv.py: it rounds the batch statistics to the buffers' dtype and adds in double)",
    **dict.fromkeys(
        ("nll_loss", "nll_loss_backward", "counted_weight"),
        "torch's nll_loss kernels (and aten's sum of the counted weights): eager's order of addition "
        "and its division by the total weight, bit for bit (ops/nn.py)",
    ),
    **dict.fromkeys(
        ("sdpa_flash_cpu", "sdpa_flash_cpu_backward", "sdpa_flash_cpu_double_backward"),
        "torch's CPU flash-attention kernels: traced only for CPU operands, which nvFuser never runs",
    ),
    "sym_size": "host-only: a dynamic dim's size (ops/dynamic_shapes.py), computed by the plan from its "
    "inputs and fed to the fusions as a scalar input",
    "sort": "nvFuser's argsort need not order ties (and NaNs) as torch's sort does",
    "topk": "nvFuser's topk need not order ties (and NaNs) as torch's topk does",
    **dict.fromkeys(
        ("unfold", "unfold_backward"),
        "Tensor.unfold on dynamic dims: eager's overlapping-window view and its unfold_backward kernel "
        "(nvFuser has no windowed view)",
    ),
    **{p.name: "host-only: scalar arithmetic feeds fusions as a scalar input" for p in SCALAR_BINARY.values()},
    **{p.name: "host-only: scalar arithmetic feeds fusions as a scalar input" for p in SCALAR_UNARY.values()},
}


def test_unlowered_primitives_are_exactly_the_allow_list() -> None:
    unlowered = {n for n, p in PRIMITIVES.items() if p not in NVFUSER_LOWERINGS and not n.startswith("test_")}
    assert unlowered == set(UNLOWERED), (
        f"without a lowering but not allowed: {sorted(unlowered - set(UNLOWERED))}; "
        f"allowed but lowered now: {sorted(set(UNLOWERED) - unlowered)}"
    )
    assert all(reason for reason in UNLOWERED.values())


def arange_trace(start: int, end: int, step: int, dtype: torch.dtype) -> Trace:
    """``a * arange(start, end, step)``, built by hand: jit folds a tensor made from static
    values alone into a constant input, so a traced function never shows the equation."""
    length = len(range(start, end, step))
    a = TensorVar((2, length), torch.float32, torch.device("cpu"))
    r = TensorVar((length,), dtype, torch.device("cpu"))
    out = TensorVar((2, length), torch.float32, torch.device("cpu"))
    params = {"start": start, "end": end, "step": step, "dtype": dtype, "device": torch.device("cpu")}
    eqns = (Eqn(arange_p, (), params, (r,)), Eqn(PRIMITIVES["mul"], (a, r), {}, (out,)))
    return Trace((a,), eqns, (out,), "arange_fn")


@needs_nvfuser
def test_integer_arange_is_an_iota() -> None:
    plan = lower_trace(arange_trace(2, 17, 3, torch.int64))
    assert kinds(plan) == ["fusion"]
    assert re.search(r"fd\.ops\.iota\(length=5, start=2, step=3", repr(plan.fusions[0])), repr(plan.fusions[0])
    float_range = arange_trace(2, 17, 3, torch.float32)
    assert kinds(lower_trace(float_range)) == ["torch", "fusion"]


# ----------------------------------------------------------------------------------------
# Cases a lowering cannot handle run in torch (a fallback, never a wrong result or a crash)


def round_decimals_fn(a: torch.Tensor) -> Any:
    return torch.round(a, decimals=2) * 2.0


def slice_step_fn(a: torch.Tensor) -> Any:
    return a[::2] * 2.0


def cat_mixed_fn(a: torch.Tensor, b: torch.Tensor) -> Any:
    return torch.cat([a, b.to(torch.float64)], 0) * 2.0


def var_fraction_fn(a: torch.Tensor) -> Any:
    return torch.var(a, 1, correction=0.5) * 2.0


def sqrt_int_fn(a: torch.Tensor) -> Any:
    return torch.sqrt(a.to(torch.int64)) * 2.0


def sum_0d_fn(a: torch.Tensor) -> Any:
    return a.sum().sum() * 2.0


def pow_int_fn(a: torch.Tensor) -> Any:
    return a.to(torch.int64) ** 2 * 2


def floor_div_int_fn(a: torch.Tensor) -> Any:
    return torch.div((a * 100).to(torch.int64), 7, rounding_mode="floor") * 2


FALLBACKS = {
    "round_decimals": (round_decimals_fn, (x(*A),), "round"),
    "slice_step": (slice_step_fn, (x(*A),), "slice"),
    "cat_mixed_dtypes": (cat_mixed_fn, (x(*A), x(*B)), "cat"),
    "var_fractional_correction": (var_fraction_fn, (x(*A),), "var"),
    "sqrt_of_int": (sqrt_int_fn, (x(*A),), "sqrt"),
    "sum_of_0d": (sum_0d_fn, (x(*A),), "sum"),
    "pow_of_int": (pow_int_fn, (x(*A),), "pow"),
    "floor_div_of_int": (floor_div_int_fn, (x(*A),), "div"),
}


@needs_nvfuser
@pytest.mark.parametrize("name", list(FALLBACKS))
def test_unsupported_case_runs_in_torch(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fn, args, prim = FALLBACKS[name]
    trace = trace_of(fn, *args)
    plan = lower_trace(trace)
    torch_prims = [payload.prim.name for kind, payload in plan.steps if kind == "torch"]
    fused_prims = {e.prim.name for r in plan.regions for e in r.eqns}
    assert prim in torch_prims, (name, str(plan))
    assert "mul" in fused_prims  # the rest still fuses
    # and the plan, regions run through torch, computes what the torch backend computes
    monkeypatch.setattr(nb.Region, "__call__", _region_through_torch)
    got = plan.run(*args)
    expected = symscalar.eval_trace(trace, *args)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, equal_nan=True)


def _region_through_torch(region: nb.Region, *args: Any) -> list[Any]:
    return list(symscalar.eval_trace(Trace(region.inputs, region.eqns, region.outputs, "region"), *args))


# ----------------------------------------------------------------------------------------
# The lowerings' arithmetic, read with torch ops for nvFuser's: each composite (gelu,
# softmax, logsumexp, mean, var, split, flip, pad ...) computes what the op computes.


class FakeTensorView:
    """A torch tensor standing in for an nvFuser TensorView (``dtype()``, ``ndim``)."""

    def __init__(self, t: torch.Tensor) -> None:
        self.t = t

    @property
    def ndim(self) -> int:
        return self.t.ndim

    def dtype(self) -> Any:
        return nb.nvfuser_dtype(self.t.dtype)

    def get_logical_domain(self) -> list[str]:
        """IterDomains as nvFuser prints them: ``bS`` for a broadcast (size-1 or expanded) dim."""
        return ["bS" if size == 1 or stride == 0 else "iS" for size, stride in zip(self.t.shape, self.t.stride())]


def _torch_dtype(data_type: Any) -> torch.dtype:
    return {nb.nvfuser_dtype(d): d for d in nb._DTYPE_NAMES}[data_type]


def _un(v: Any) -> Any:
    return v.t if isinstance(v, FakeTensorView) else v


def _prod(t: torch.Tensor, dims: Sequence[int], keepdim: bool = False) -> torch.Tensor:
    for d in sorted(dims, reverse=True):
        t = torch.prod(t, d, keepdim)
    return t


def _broadcast(t: torch.Tensor, flags: Sequence[bool]) -> torch.Tensor:
    for i, flag in enumerate(flags):
        if flag:
            t = t.unsqueeze(i)
    return t


_SCALAR_OPS: dict[str, Callable[..., Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}
_TENSOR_OPS: dict[str, Callable[..., Any]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.true_divide,
    "truediv": torch.true_divide,
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
    "silu": F.silu,
    "erf": torch.erf,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "trunc": torch.trunc,
    "sign": torch.sign,
    "isnan": torch.isnan,
    "isinf": torch.isinf,
    "isfinite": torch.isfinite,
    "logical_not": torch.logical_not,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "pow": torch.pow,
    "atan2": torch.atan2,
    "remainder": torch.remainder,
    "maximum": torch.maximum,
    "set": torch.clone,
    "minimum": torch.minimum,
    "where": torch.where,
    "lerp": torch.lerp,
    "sum": lambda t, dims, keepdim=False, dtype=None: torch.sum(t, dims, keepdim, dtype=dtype and _torch_dtype(dtype)),
    "max": lambda t, dims, keepdim=False: torch.amax(t, dims, keepdim),
    "min": lambda t, dims, keepdim=False: torch.amin(t, dims, keepdim),
    "prod": _prod,
    "var": lambda t, dims, correction=1, keepdim=False: torch.var(t, dims, correction=correction, keepdim=keepdim),
    "var_mean": lambda t, dims, correction=1, keepdim=False: torch.var_mean(
        t, dims, correction=correction, keepdim=keepdim
    ),
    "broadcast": _broadcast,
    "squeeze": lambda t, dims: t.squeeze(tuple(dims)),
    "cast": lambda t, dtype: t.to(_torch_dtype(dtype)),
    "index_select": lambda t, index, dim: torch.index_select(t, dim, index),
    "slice": lambda t, starts, stops: t[tuple(slice(a, b) for a, b in zip(starts, stops))],
    "pad": lambda t, widths: F.pad(t, widths),
    "cat": lambda ts, dim: torch.cat(ts, dim),
    "permute": lambda t, dims: t.permute(dims),
    "matmul": torch.matmul,
    "linear": F.linear,
    "cumsum": lambda t, dim: torch.cumsum(t, dim),
    "reshape": lambda t, shape: t.reshape(shape),
    "broadcast_in_dim": lambda t, shape, bdims: t.reshape(
        [t.shape[bdims.index(i)] if i in bdims else 1 for i in range(len(shape))]
    ).expand(shape),
    "full": lambda shape, fill, dtype: torch.full(shape, fill, dtype=_torch_dtype(dtype)),
    # nvFuser's (seed, offset) streams read as the torch lowering's: the same numbers iff the
    # lowering passes the seed, offset, shape and dtype through
    "uniform": lambda lo, hi, shape, rng_seed, rng_offset, dtype: (
        lo
        + (hi - lo)
        * random_ops.uniform_p.impl(
            rng_seed, shape=tuple(shape), dtype=_torch_dtype(dtype), device=torch.device("cpu"), offset=rng_offset
        )
    ),
    "normal": lambda mean, std, shape, rng_seed, rng_offset, dtype: (
        mean
        + std
        * random_ops.normal_p.impl(
            rng_seed, shape=tuple(shape), dtype=_torch_dtype(dtype), device=torch.device("cpu"), offset=rng_offset
        )
    ),
    "iota": lambda n, start=0, step=1, dtype=None: (
        torch.arange(n, dtype=torch.int64 if dtype is None else _torch_dtype(dtype)) * step + start
    ),
}


class FakeOps:
    """``fd.ops`` with each nvFuser op read as the torch op it stands for. Scalar operands of
    tensor ops become 0-d tensors (torch's scalar type promotion)."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        op = _TENSOR_OPS[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            raw = [[_un(a) for a in arg] if isinstance(arg, list) else _un(arg) for arg in args]
            if name in _SCALAR_OPS and not any(isinstance(a, torch.Tensor) for a in raw):
                return _SCALAR_OPS[name](*raw)
            if name in _ELEMENTWISE:
                raw = [torch.tensor(a) if isinstance(a, (int, float, bool)) else a for a in raw]
            result = op(*raw, **kwargs)
            if isinstance(result, tuple):
                return tuple(FakeTensorView(r) for r in result)
            return FakeTensorView(result)

        return call

    @staticmethod
    def size(t: FakeTensorView, dim: int) -> int:
        return t.t.shape[dim]


_ELEMENTWISE = {
    "add",
    "sub",
    "mul",
    "div",
    "truediv",
    "pow",
    "atan2",
    "remainder",
    "maximum",
    "minimum",
    "where",
    "lerp",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
}


class FakeFusionDefinition:
    """The part of a FusionDefinition the lowerings use: ``ops`` and constant scalars."""

    ops = FakeOps()

    @staticmethod
    def define_scalar(value: Any = None, dtype: Any = None) -> Any:
        assert value is not None, "a lowering asked for a new fusion input"
        return value


def run_through_lowerings(trace: Trace, inputs: Sequence[Any]) -> tuple[Any, ...]:
    """Evaluate ``trace`` as the nvFuser backend would, with torch ops for nvFuser's: fusible
    equations through their lowering (static params translated as the backend does, sizes
    as ints, the result cast to the trace's dtype), the rest through their torch impl."""
    fd = FakeFusionDefinition()
    env: dict[Any, Any] = dict(zip(trace.inputs, inputs))
    for eqn in dce(trace).eqns:
        args = [env[a] if is_var(a) else a for a in eqn.args]
        if not nb.is_fusible(eqn):
            result = eqn.prim.impl(*args, **eqn.params)
            results = result if eqn.prim.multiple_results else (result,)
        else:
            wrapped = [FakeTensorView(a) if isinstance(a, torch.Tensor) else a for a in args]
            result = NVFUSER_LOWERINGS[eqn.prim].lower(fd, *wrapped, **_fake_params(eqn))
            results = result if eqn.prim.multiple_results else (result,)
            results = tuple(_un(r).to(o.dtype) for r, o in zip(results, eqn.outs))
        env.update(zip(eqn.outs, results))
    return tuple(env[o] if is_var(o) else o for o in trace.outputs)


def _fake_params(eqn: Eqn) -> dict[str, Any]:
    params = {}
    for key, value in eqn.params.items():
        if key in eqn.prim.size_params:
            value = list(nb._resolved_shape(eqn, key, value))
        elif isinstance(value, torch.dtype):
            value = nb.nvfuser_dtype(value)
        params[key] = value
    return params


def _random_input(v: Any) -> Any:
    if isinstance(v, ScalarVar):
        return {float: P, int: 3, bool: True}[v.dtype]
    if v.dtype == torch.bool:
        return torch.rand(v.shape) > 0.5
    if not v.dtype.is_floating_point:
        return torch.randint(-3, 4, v.shape, dtype=v.dtype)
    return torch.randn(v.shape, dtype=v.dtype)


def _check_lowered_arithmetic(trace: Trace) -> None:
    inputs = [_random_input(v) for v in trace.inputs]
    expected = symscalar.eval_trace(trace, *inputs)
    got = run_through_lowerings(trace, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if isinstance(e, torch.Tensor):
            assert g.dtype == e.dtype and g.shape == e.shape
            torch.testing.assert_close(g, e, equal_nan=True, atol=1e-5, rtol=1e-4)
        else:
            assert g == e


@needs_nvfuser
@pytest.mark.parametrize("name", CASE_IDS)
def test_lowering_arithmetic_matches_torch_forward_and_backward(name: str) -> None:
    torch.manual_seed(0)
    trace = _case_trace(name)
    traces = [trace]
    if any(isinstance(v, TensorVar) and v.dtype.is_floating_point for v in trace.inputs) and any(
        isinstance(o, TensorVar) and o.dtype.is_floating_point for o in trace.outputs
    ):
        traces.extend(grad_traces(trace))
    for t in traces:
        _check_lowered_arithmetic(t)


def inf_rows_fn(a: torch.Tensor) -> Any:
    return torch.logsumexp(a, 1), torch.softmax(a, 1), torch.log_softmax(a, 1)


def test_lowering_arithmetic_with_infinities() -> None:
    a = torch.tensor([[float("-inf")] * 3, [float("inf"), 0.0, 1.0], [1.0, 2.0, 3.0]])
    trace = trace_of(inf_rows_fn, a)
    for g, e in zip(run_through_lowerings(trace, [a]), symscalar.eval_trace(trace, a)):
        torch.testing.assert_close(g, e, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_lowering_arithmetic_low_precision(dtype: torch.dtype) -> None:
    for name in ("softmax", "mean", "var_mean", "logsumexp", "gelu", "log_softmax"):
        fn, args, _ = LOWERED_CASES[name]
        low = tuple(a.to(dtype) if isinstance(a, torch.Tensor) else a for a in args)
        trace = trace_of(fn, *low)
        inputs = [_random_input(v) for v in trace.inputs]
        for g, e in zip(run_through_lowerings(trace, inputs), symscalar.eval_trace(trace, *inputs)):
            assert g.dtype == e.dtype == dtype
            torch.testing.assert_close(g, e, atol=1e-2, rtol=1e-2)


# ----------------------------------------------------------------------------------------
# The hazard functions: forward and backward each ONE fusion, no torch step, no
# dynamic value in a reduction axis, each dynamic scalar a fusion input, reused fusions


def softmax_scale_fn(a: torch.Tensor, s: DynamicFloat, d: StaticInt) -> Any:
    return torch.softmax(a * s, d)


def sum_d_fn(a: torch.Tensor, d: StaticInt) -> Any:
    return a.sum(d)


def mean_d_fn(a: torch.Tensor, d: StaticInt) -> Any:
    return a.mean(d)


def scale_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a * s


def abs_pow_fn(a: torch.Tensor, p: DynamicFloat) -> Any:
    return a.abs() ** p


def layer_norm_fn(a: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: DynamicFloat) -> Any:
    return F.layer_norm(a, (a.shape[-1],), w, b, eps)


def scale_bias_gelu_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return F.gelu(a * s + b)


def _hazard_args(batch: int, dtype: torch.dtype) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    a, v = torch.randn(batch, 8, dtype=dtype), torch.randn(8, dtype=dtype)
    return {
        "softmax(a*s, d)": (softmax_scale_fn, (a, S, 1)),
        "a.sum(d)": (sum_d_fn, (a, 1)),
        "a.mean(d)": (mean_d_fn, (a, 0)),
        "a*s": (scale_fn, (a, S)),
        "a.abs()**p": (abs_pow_fn, (a, P)),
        "layer_norm(eps)": (layer_norm_fn, (a, v, v, EPS)),
        "gelu(a*s+b)": (scale_bias_gelu_fn, (a, v, S)),
    }


HAZARD_IDS = list(_hazard_args(4, torch.float32))


def _hazard_traces(name: str, batch: int = 4, dtype: torch.dtype = torch.float32) -> tuple[Trace, Trace, Trace]:
    fn, args = _hazard_args(batch, dtype)[name]
    trace = trace_of(fn, *args)
    return (trace, *grad_traces(trace))


@needs_nvfuser
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("name", HAZARD_IDS)
def test_hazard_forward_and_backward_are_one_fusion(name: str, dtype: torch.dtype) -> None:
    _, forward, backward = _hazard_traces(name, dtype=dtype)
    for trace in (forward, backward):
        plan = lower_trace(trace)
        assert kinds(plan) == ["fusion"], f"{trace.name}: {kinds(plan)}\n{plan}"
        (region,) = plan.regions
        (fd,) = plan.fusions
        text = repr(fd)
        for dims in re.findall(r"fd\.ops\.\w+\([^)]*dims=(\[[^\]]*\])", text):
            assert re.fullmatch(r"\[\d+(, \d+)*\]", dims), f"reduction axis not a constant: {dims}"
        assert text.count(DOUBLE_INPUT) == float_scalar_inputs(region)
        # each dynamic scalar is a fusion input, or feeds host arithmetic whose result is one
        host = [e for k, e in plan.steps if k == "host"]
        host_outs = {o for e in host for o in e.outs}
        scalars_in = [v for v in region.inputs if isinstance(v, ScalarVar)]
        assert all(v in trace.inputs or v in host_outs for v in scalars_in)
        for v in trace.inputs:
            if isinstance(v, ScalarVar):
                assert v in region.inputs or any(v in e.args for e in host), f"{v} is not an input"
        for value in (S, P, EPS):
            assert repr(value) not in text


@needs_nvfuser
@pytest.mark.parametrize("name", HAZARD_IDS)
def test_hazard_new_dynamic_value_reuses_fusions(name: str) -> None:
    fn, args = _hazard_args(4, torch.float32)[name]
    first = [lower_trace(t).fusions for t in _hazard_traces(name)[1:]]
    new_args = tuple(a * 3.0 if isinstance(a, float) else a for a in args)
    trace = trace_of(fn, *new_args)
    again = [lower_trace(t).fusions for t in grad_traces(trace)]
    for old, new in zip(first, again):
        assert [id(fd) for fd in old] == [id(fd) for fd in new]


@needs_nvfuser
@pytest.mark.parametrize("name", HAZARD_IDS)
def test_hazard_lowered_arithmetic_matches_torch(name: str) -> None:
    torch.manual_seed(0)
    for trace in _hazard_traces(name):
        _check_lowered_arithmetic(trace)


# ----------------------------------------------------------------------------------------
# Execution on a GPU, against the torch backend (forward and backward)


def norm_chain_fn(a: torch.Tensor, w: torch.Tensor, b: torch.Tensor, s: DynamicFloat, eps: DynamicFloat) -> Any:
    h = F.gelu(F.layer_norm(a * s, (a.shape[-1],), w, b, eps), approximate="tanh")
    return torch.log_softmax(h, -1) + torch.logsumexp(h, -1, keepdim=True)


def moments_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    v, m = torch.var_mean(a * s, 1, keepdim=True)
    return (a - m) * torch.rsqrt(v + s) + a.amax(0) - a.amin(1, keepdim=True) + a.std(0)


def shapes_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    left, right = torch.split(torch.cat([a, b], 1), [3, 5], 1)
    return (left.flip(1) * s).permute(1, 0) @ right[:, 1:4] + torch.clamp(right, -s, s).sum()


def elementwise_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    return (
        torch.lerp(a, b, s)
        + torch.addcmul(a, a, b, value=s)
        + torch.where(a > s, torch.sigmoid(b), F.silu(a))
        + a.abs() ** s
    )


EXEC_CASES = {
    "norm_chain": (norm_chain_fn, lambda n: (torch.randn(n, 8), torch.randn(8), torch.randn(8)), (0.5, 1e-5)),
    "moments": (moments_fn, lambda n: (torch.randn(n, 6),), (1.5,)),
    "shapes": (shapes_fn, lambda n: (torch.randn(n, 3), torch.randn(n, 5)), (0.75,)),
    "elementwise": (elementwise_fn, lambda n: (torch.randn(n, 4), torch.randn(n, 4)), (0.25,)),
}


@cuda
@needs_cuda
@pytest.mark.parametrize("name", list(EXEC_CASES))
def test_execution_matches_torch_backend(name: str) -> None:
    fn, make, extra = EXEC_CASES[name]
    f_nv = symscalar.jit(fn, backend="nvfuser")
    f_torch = symscalar.jit(fn, backend="torch")
    for n, scale in ((4, 1.0), (4, 2.0), (7, 1.0)):
        tensors = [t.cuda().requires_grad_() for t in make(n)]
        ref_tensors = [t.detach().clone().requires_grad_() for t in tensors]
        args = tuple(v * scale for v in extra)
        out = f_nv(*tensors, *args)
        ref = f_torch(*ref_tensors, *args)
        torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-4)
        ct = torch.randn_like(ref)
        grads = torch.autograd.grad(out, tensors, ct)
        ref_grads = torch.autograd.grad(ref, ref_tensors, ct)
        for g, r in zip(grads, ref_grads):
            torch.testing.assert_close(g, r, atol=1e-4, rtol=1e-4)
        assert len(f_nv.last_fusion()) >= 1
