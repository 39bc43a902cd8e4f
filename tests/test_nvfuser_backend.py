"""The nvFuser backend: lowering (runs on the CPU: FusionDefinitions build without a GPU),
the static contract at the boundary, partitioning, the fusion cache, backend selection, and
execution against the torch backend (CUDA only)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, DynamicInt, StaticInt
from symscalar import nvfuser_backend as nb
from symscalar.errors import BackendUnavailableError, StaticValueRequiredError
from symscalar.grad import autograd_runner, vjp_traces
from symscalar.ops.common import torch_meta
from symscalar.ops.reductions import sum_p
from symscalar.trace import Eqn, Primitive, ScalarVar, TensorVar, Trace
from tests.tracing_support import trace_of

HAS_NVFUSER = nb.nvfuser_available()
needs_nvfuser = pytest.mark.skipif(
    not HAS_NVFUSER,
    reason="nvfuser_direct does not import here (not installed, or the wheel does not match "
    "this torch/CUDA); lowering tests need it",
)
cuda = pytest.mark.cuda
needs_cuda = pytest.mark.skipif(
    not (torch.cuda.is_available() and HAS_NVFUSER),
    reason="execution needs a CUDA GPU and an nvfuser_direct wheel matching this torch/CUDA "
    f"(cuda available: {torch.cuda.is_available()}, nvfuser_direct imports: {HAS_NVFUSER})",
)

# A primitive with no nvFuser lowering: it must run in torch, between fusion regions.
_unlowered_p = Primitive("test_nvfuser_unlowered_relu", torch.relu, torch_meta(torch.relu))


def fusions_of(trace: symscalar.Trace, *inputs: Any) -> list[Any]:
    return list(nb.lower(trace, list(inputs)).fusions)


def scalar_inputs(fd: Any) -> list[Any]:
    return [v for v in fd.fusion.inputs() if not v.is_tensor()]


def tensor_inputs(fd: Any) -> list[Any]:
    return [v for v in fd.fusion.inputs() if v.is_tensor()]


def reduction_dims(fd: Any) -> list[str]:
    return re.findall(r"fd\.ops\.sum\([^)]*dims=(\[[^\]]*\])", repr(fd))


@pytest.mark.slow
def test_import_symscalar_does_not_import_nvfuser() -> None:
    code = "import sys, symscalar; assert 'nvfuser_direct' not in sys.modules, 'imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------------------
# One fusion per op: the right nvFuser op, dynamic scalars as inputs, static values constant


def mul_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a * s


def add_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a + s


def sub_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a - s


def div_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a / s


OP_CASES = [
    (mul_fn, "mul"),
    (add_fn, "add"),
    (sub_fn, "sub"),
    (div_fn, "div"),
]


@needs_nvfuser
@pytest.mark.parametrize(("fn", "nv_op"), OP_CASES, ids=[c[1] for c in OP_CASES])
def test_binary_with_dynamic_scalar(fn: Callable[..., Any], nv_op: str) -> None:
    trace = trace_of(fn, torch.randn(4, 3), 2.75)
    (fd,) = fusions_of(trace, torch.randn(4, 3), 2.75)
    text = repr(fd)
    assert f"fd.ops.{nv_op}(" in text
    assert len(scalar_inputs(fd)) == 1 and "define_scalar(None, dtype=DataType.Double)" in text
    assert "2.75" not in text, "a dynamic value was baked into the fusion"
    assert "shape=[-1, -1]" in text


def neg_fn(a: torch.Tensor) -> Any:
    return -a


def exp_fn(a: torch.Tensor) -> Any:
    return torch.exp(a)


def mul_static_fn(a: torch.Tensor) -> Any:
    return a * 3.5


@needs_nvfuser
@pytest.mark.parametrize(
    ("fn", "nv_op"),
    [(neg_fn, "neg"), (exp_fn, "exp"), (mul_static_fn, "mul")],
    ids=["neg", "exp", "mul_static"],
)
def test_unary_and_static_literal(fn: Callable[..., Any], nv_op: str) -> None:
    trace = trace_of(fn, torch.randn(2, 5))
    (fd,) = fusions_of(trace, None)
    text = repr(fd)
    assert f"fd.ops.{nv_op}(" in text
    assert scalar_inputs(fd) == []
    if nv_op == "mul":
        assert "3.5" in text, "a static literal must be a constant of the fusion"


@needs_nvfuser
@pytest.mark.parametrize("dim", [0, 1, -1, (0, 2)])
def test_sum_static_dims_are_constants(dim: Any) -> None:
    def f(a: torch.Tensor, d: StaticInt) -> Any:
        return a.sum(d)

    trace = trace_of(f, torch.randn(2, 3, 4), dim)
    (fd,) = fusions_of(trace, None)
    expected = sorted(d % 3 for d in (dim if isinstance(dim, tuple) else (dim,)))
    assert reduction_dims(fd) == [str(expected)]
    assert scalar_inputs(fd) == []
    ir = fd.fusion.print_math()
    assert "op = add" in ir  # a sum reduction
    out_domains = re.search(r"Outputs:\n\s+T\d+_g_float\[([^\]]*)\]", ir)
    assert out_domains is not None
    reduced = [i for i, d in enumerate(out_domains.group(1).split(", ")) if d.startswith("rS")]
    assert reduced == expected


@needs_nvfuser
def test_reshape_expand_full_convert() -> None:
    def f(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
        x = a.reshape(3, 4).expand(2, 3, 4)
        y = torch.full((2, 3, 4), s, dtype=torch.float32)
        return (x + y).to(torch.float16) + b.to(torch.float16)

    trace = trace_of(f, torch.randn(12), torch.randn(4), 0.5)
    (fd,) = fusions_of(trace, None, None, 0.5)
    text = repr(fd)
    for op in ("reshape", "expand", "full", "cast"):
        assert f"fd.ops.{op}(" in text, op
    assert "DataType.Half" in text
    assert "0.5" not in text
    # one dynamic fill value; sizes other than 1 are size inputs (3, 4 of reshape;
    # 2, 3, 4 of expand and of full; 4 of b's expand for the broadcasting add)
    scalars = scalar_inputs(fd)
    assert len(scalars) == 1 + nb.lower(trace, [None, None, 0.5]).regions[0].sizes.__len__()


def half_scale_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a * s


@needs_nvfuser
def test_trace_dtype_is_the_contract() -> None:
    # nvFuser promotes f16 * double to f32, torch keeps f16: the backend casts to the trace's dtype.
    trace = trace_of(half_scale_fn, torch.randn(3, dtype=torch.float16), 2.0)
    assert trace.outputs[0].dtype == torch.float16  # type: ignore[union-attr]
    (fd,) = fusions_of(trace, None, 2.0)
    assert re.search(r"fd\.ops\.cast\(tv\d+, dtype=DataType\.Half\)", repr(fd))
    assert fd.fusion.outputs()[0].dtype() == nb.nvfuser_dtype(torch.float16)


def dead_code_fn(a: torch.Tensor) -> Any:
    torch.exp(a)
    return a * 2.0


@needs_nvfuser
def test_dead_equations_are_not_lowered() -> None:
    (fd,) = fusions_of(trace_of(dead_code_fn, torch.randn(3)), None)
    assert "fd.ops.exp" not in repr(fd)


@needs_nvfuser
def test_size_one_dims_are_broadcast_constants() -> None:
    def f(a: torch.Tensor, b: torch.Tensor) -> Any:
        return a + b

    trace = trace_of(f, torch.randn(4, 1), torch.randn(4, 3))
    (fd,) = fusions_of(trace, None, None)
    text = repr(fd)
    assert "shape=[-1, 1]" in text and "shape=[-1, -1]" in text


@needs_nvfuser
def test_contiguity_and_stride_order_from_strides() -> None:
    trace = trace_of(exp_fn, torch.randn(3, 4))
    (contiguous,) = fusions_of(trace, torch.randn(3, 4))
    (transposed,) = fusions_of(trace, torch.randn(4, 3).t())
    assert contiguous is not transposed
    assert "stride_order=[0, 1]" in repr(transposed)
    (sliced,) = fusions_of(trace, torch.randn(3, 8)[:, ::2])
    assert "contiguity=[True, False]" in repr(sliced) or "contiguity=[False, False]" in repr(sliced)


# ----------------------------------------------------------------------------------------
# The hazard functions: forward and backward, no dynamic value in a reduction axis


def scale_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return a * s


def sum_d_fn(a: torch.Tensor, d: StaticInt) -> Any:
    return a.sum(d)


def exp_sum_scale_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return torch.exp(a.sum(0) * s)


HAZARDS = [(scale_fn, (2.5,)), (sum_d_fn, (1,)), (exp_sum_scale_fn, (0.75,))]


def _hazard_traces(fn: Callable[..., Any], extra: tuple[Any, ...], batch: int) -> tuple[Trace, Trace]:
    trace = trace_of(fn, torch.randn(batch, 3), *extra)
    forward, backward, _ = vjp_traces(trace, [0])
    return forward, backward


def _lower_all(trace: Trace) -> list[Any]:
    return fusions_of(trace, *[None if isinstance(v, TensorVar) else 1.0 for v in trace.inputs])


@needs_nvfuser
@pytest.mark.parametrize(("fn", "extra"), HAZARDS, ids=["a*s", "a.sum(d)", "exp(a.sum(0)*s)"])
def test_hazards_forward_and_backward_lower(fn: Callable[..., Any], extra: tuple[Any, ...]) -> None:
    forward, backward = _hazard_traces(fn, extra, 4)
    for trace in (forward, backward):
        fds = _lower_all(trace)
        assert len(fds) == 1, f"{trace.name} split into {len(fds)} fusions"
        (fd,) = fds
        text = repr(fd)
        for dims in reduction_dims(fd):
            assert re.fullmatch(r"\[\d+(, \d+)*\]", dims), dims
        dynamic = [v for v in trace.inputs if isinstance(v, ScalarVar)]
        assert text.count("define_scalar(None, dtype=DataType.Double)") == len(dynamic)
        for value in extra:
            if isinstance(value, float):
                assert str(value) not in text


@needs_nvfuser
@pytest.mark.parametrize(("fn", "extra"), HAZARDS, ids=["a*s", "a.sum(d)", "exp(a.sum(0)*s)"])
def test_new_dynamic_value_or_batch_reuses_fusions(fn: Callable[..., Any], extra: tuple[Any, ...]) -> None:
    first = [_lower_all(t) for t in _hazard_traces(fn, extra, 4)]
    before = nb.fusion_cache_info()
    new_value = tuple(v * 3.0 if isinstance(v, float) else v for v in extra)
    again = [_lower_all(t) for t in _hazard_traces(fn, new_value, 4)]
    new_batch = [_lower_all(t) for t in _hazard_traces(fn, extra, 9)]
    after = nb.fusion_cache_info()
    for fds in (again, new_batch):
        for old, new in zip(first, fds):
            assert [id(fd) for fd in old] == [id(fd) for fd in new]
    assert after.misses == before.misses
    assert after.hits >= before.hits + 4


def mul_zero_fn(a: torch.Tensor, z: float) -> Any:
    return a * z


def test_static_literals_key_by_value_and_type() -> None:
    def key(z: Any) -> Any:
        (region,) = [r for k, r in nb.partition(trace_of(mul_zero_fn, torch.randn(3), z)) if k == "fusion"]
        return region.structure

    assert key(0.0) != key(-0.0)  # equal as floats, different constants
    assert key(1.0) != key(1) != key(True)
    assert key(2.5) == key(2.5)


@needs_nvfuser
def test_new_static_value_is_a_new_fusion() -> None:
    (d0,) = fusions_of(trace_of(sum_d_fn, torch.randn(4, 3), 0), None)
    (d1,) = fusions_of(trace_of(sum_d_fn, torch.randn(4, 3), 1), None)
    assert d0 is not d1
    assert reduction_dims(d0) == ["[0]"] and reduction_dims(d1) == ["[1]"]


# ----------------------------------------------------------------------------------------
# The static contract at the boundary


def _trace_with_dynamic_dims() -> Trace:
    a = TensorVar((4, 3), torch.float32, torch.device("cpu"))
    d = ScalarVar(int)
    out = TensorVar((3,), torch.float32, torch.device("cpu"))
    eqn = Eqn(sum_p, (a,), {"dims": (d,), "keepdim": False, "dtype": None}, (out,))
    return Trace((a, d), (eqn,), (out,), "bad")


@needs_nvfuser
def test_dynamic_value_in_static_slot_is_rejected_before_nvfuser() -> None:
    trace = _trace_with_dynamic_dims()
    with pytest.raises(StaticValueRequiredError, match=r"sum.*'dims'"):
        nb.lower(trace, [None, 1])
    with pytest.raises(StaticValueRequiredError, match=r"sum.*'dims'"):
        nb.compile_trace(trace)


@needs_nvfuser
def test_lowering_never_receives_a_dynamic_static_param() -> None:
    # Bypass check_trace: the region builder itself refuses, naming the op.
    region = nb.Region(_trace_with_dynamic_dims().eqns, set())
    with pytest.raises(StaticValueRequiredError, match=r"nvFuser lowering of sum: static parameter 'dims'"):
        nb.build_fusion(region, [((True, True), (1, 0))])


def test_dynamic_axis_is_rejected_at_trace_time() -> None:
    def f(a: torch.Tensor, d: DynamicInt) -> Any:
        return a.sum(d)

    with pytest.raises(StaticValueRequiredError):
        symscalar.jit(f, backend="torch")(torch.randn(2, 3), 1)


# ----------------------------------------------------------------------------------------
# Partitioning


@needs_nvfuser
def test_host_scalars_feed_one_fusion() -> None:
    def f(a: torch.Tensor, s: DynamicFloat) -> Any:
        t = s * 2.0 + 1.0
        symscalar.check(s > 0.0, "s must be positive")
        return torch.exp(a * t) - t

    trace = trace_of(f, torch.randn(3, 2), 0.5)
    plan = nb.lower(trace, [None, 0.5])
    kinds = [k for k, _ in plan.steps]
    assert kinds == ["host"] * (len(kinds) - 1) + ["fusion"]
    (fd,) = plan.fusions
    assert len(scalar_inputs(fd)) == 1  # the host-computed t, not s
    assert "_prim_scalar_mul(" in str(plan) and "_fusion0(" in str(plan)


@needs_nvfuser
def test_unlowered_and_unsupported_dtype_run_in_torch() -> None:
    def f(a: torch.Tensor, s: DynamicFloat) -> Any:
        x = torch.exp(a * s)
        y = _unlowered_p.bind(x)
        z = (y * 2.0).to(torch.int8).to(torch.float32)
        return z + x

    trace = trace_of(f, torch.randn(3, 2), 0.5)
    plan = nb.lower(trace, [None, 0.5])
    kinds = [k for k, _ in plan.steps]
    assert kinds == ["fusion", "torch", "fusion", "torch", "torch", "fusion"]
    assert len(plan.fusions) == 3
    assert [v.dtype for v in plan.regions[-1].inputs] == [torch.float32, torch.float32]


def test_partition_needs_no_nvfuser() -> None:
    trace = trace_of(exp_sum_scale_fn, torch.randn(4, 3), 0.5)
    steps = nb.partition(trace)
    assert [k for k, _ in steps] == ["fusion"]
    region = steps[0][1]
    assert [type(v) for v in region.inputs] == [TensorVar, ScalarVar]
    assert region.outputs == tuple(trace.outputs)


def test_region_key_ignores_sizes_and_dynamic_values() -> None:
    small, _ = _hazard_traces(exp_sum_scale_fn, (0.5,), 4)
    large, _ = _hazard_traces(exp_sum_scale_fn, (0.5,), 16)
    _, back_small = _hazard_traces(sum_d_fn, (1,), 4)
    _, back_large = _hazard_traces(sum_d_fn, (1,), 16)
    key = lambda t: nb.partition(t)[-1][1].structure  # noqa: E731
    assert key(small) == key(large)
    assert key(back_small) == key(back_large)
    assert nb.partition(back_large)[-1][1].sizes == (16, 16, 3)  # reshape (16, 1), expand (16, 3)


# ----------------------------------------------------------------------------------------
# Backend selection


def test_nvfuser_backend_rejects_cpu_tensors() -> None:
    f = symscalar.jit(scale_fn, backend="nvfuser")
    with pytest.raises(BackendUnavailableError, match=r"CUDA tensors only.*cpu.*backend='torch'"):
        f(torch.randn(2, 2), 1.0)


def test_missing_nvfuser_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    nb._import_nvfuser.cache_clear()
    monkeypatch.setitem(sys.modules, "nvfuser_direct", None)
    try:
        with pytest.raises(BackendUnavailableError, match=r"nvfuser_direct.*failed to import.*pip install"):
            nb.import_nvfuser()
        assert not nb.nvfuser_available()
        cuda_trace = Trace((TensorVar((2,), torch.float32, torch.device("cuda")),), (), (), "g")
        assert not nb.usable_for(cuda_trace)
        with pytest.raises(BackendUnavailableError, match="failed to import"):
            nb.check_available(cuda_trace)
    finally:
        monkeypatch.undo()
        nb._import_nvfuser.cache_clear()


def test_auto_uses_torch_for_cpu_tensors() -> None:
    f = symscalar.jit(exp_sum_scale_fn)
    a = torch.randn(4, 3, requires_grad=True)
    out = f(a, 0.5)
    torch.testing.assert_close(out, torch.exp(a.sum(0) * 0.5))
    assert list(f.last_fusion()) == []


def test_auto_picks_nvfuser_only_for_cuda_inputs() -> None:
    cpu = Trace((TensorVar((2,), torch.float32, torch.device("cpu")),), (), (), "g")
    cuda_trace = Trace((TensorVar((2,), torch.float32, torch.device("cuda")),), (), (), "g")
    assert not nb.usable_for(cpu)
    assert nb.usable_for(cuda_trace) == HAS_NVFUSER


# ----------------------------------------------------------------------------------------
# Execution on a GPU, against the torch backend


def layer_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    x = torch.exp(a * s + b)
    return x / x.sum(-1, keepdim=True)


EXEC_CASES = [
    (scale_fn, lambda n: (torch.randn(n, 3),), (1.5,)),
    (sum_d_fn, lambda n: (torch.randn(n, 3),), (1,)),
    (exp_sum_scale_fn, lambda n: (torch.randn(n, 3),), (0.25,)),
    (layer_fn, lambda n: (torch.randn(n, 8), torch.randn(8)), (0.5,)),
]


@cuda
@needs_cuda
@pytest.mark.parametrize(("fn", "make", "extra"), EXEC_CASES, ids=["a*s", "a.sum(d)", "exp_sum", "softmax_like"])
def test_execution_matches_torch_backend(fn: Callable[..., Any], make: Any, extra: tuple[Any, ...]) -> None:
    f_nv = symscalar.jit(fn, backend="nvfuser")
    f_torch = symscalar.jit(fn, backend="torch")
    for n, scale in ((4, 1.0), (4, 3.0), (7, 1.0)):
        tensors = [t.cuda().requires_grad_() for t in make(n)]
        ref_tensors = [t.detach().clone().requires_grad_() for t in tensors]
        args = tuple(v * scale if isinstance(v, float) else v for v in extra)
        out = f_nv(*tensors, *args)
        ref = f_torch(*ref_tensors, *args)
        torch.testing.assert_close(out, ref)
        ct = torch.randn_like(ref)
        grads = torch.autograd.grad(out, tensors, ct)
        ref_grads = torch.autograd.grad(ref, ref_tensors, ct)
        for g, r in zip(grads, ref_grads):
            torch.testing.assert_close(g, r)
        assert len(f_nv.last_fusion()) >= 1
        assert "FusionDefinition" in str(f_nv.last_fusion())
    assert f_nv.cache_info().misses == 2  # batch 4, batch 7; the new value was a hit


@cuda
@needs_cuda
def test_execution_reuses_fusions_for_new_batch() -> None:
    f = symscalar.jit(exp_sum_scale_fn, backend="nvfuser")
    with torch.no_grad():
        f(torch.randn(4, 3, device="cuda"), 0.5)
        first = list(f.last_fusion())
        out = f(torch.randn(9, 3, device="cuda"), 2.0)
    assert [id(x) for x in f.last_fusion()] == [id(x) for x in first]
    assert out.shape == (3,)


# ----------------------------------------------------------------------------------------
# The plan's dataflow, on the CPU: regions run through the torch lowerings of their equations


def _run_region_in_torch(region: nb.Region, *args: Any) -> list[Any]:
    sub = Trace(region.inputs, region.eqns, region.outputs, "region")
    assert args[len(region.inputs) :] == region.sizes  # the plan passes the sizes after the inputs
    return list(symscalar.eval_trace(sub, *args[: len(region.inputs)]))


def mixed_fn(a: torch.Tensor, b: torch.Tensor, s: DynamicFloat) -> Any:
    t = s * 2.0 + 1.0
    x = torch.exp(a * t)
    y = _unlowered_p.bind(x - b)
    z = (y * s).to(torch.int8).to(torch.float32)
    return (z + x).sum(0) / t, t


@needs_nvfuser
def test_plan_dataflow_matches_torch_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nb.Region, "__call__", _run_region_in_torch)
    a, b = torch.randn(5, 3), torch.randn(3)
    trace = trace_of(mixed_fn, a, b, 0.7)
    forward, backward, _ = vjp_traces(trace, [0, 1])
    for t in (trace, forward, backward):
        inputs = [torch.randn(v.shape) if isinstance(v, TensorVar) else 0.3 for v in t.inputs]
        plan = nb.build_plan(t)
        assert any(k == "fusion" for k, _ in plan.steps)
        expected = symscalar.eval_trace(t, *inputs)
        got = plan.run(*inputs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)


def torch_only_fn(a: torch.Tensor, s: DynamicFloat) -> Any:
    return _unlowered_p.bind(a).to(torch.int8), s * 2.0 + 1.0


@needs_nvfuser
def test_plan_without_fusions_runs_on_cpu() -> None:
    a = torch.randn(4, 2) * 10
    trace = trace_of(torch_only_fn, a, 1.5)
    run = nb.compile_trace(trace)
    assert run.plan.regions == ()
    out, scalar = run(a, 1.5)
    torch.testing.assert_close(out, torch.relu(a).to(torch.int8))
    assert scalar == 4.0


@needs_nvfuser
def test_autograd_runner_lowers_forward_and_backward() -> None:
    # The path jit takes with backend="nvfuser", up to execution (which needs CUDA).
    trace = trace_of(exp_sum_scale_fn, torch.randn(4, 3), 0.5)
    backend = nb.NvFuserBackend()
    _, _backward = autograd_runner(trace, lambda names: names[0], (), backend, [True, False])
    # the plain program (calls under no_grad) is compiled on its first use
    assert [p.trace.name for p in backend.plans] == ["exp_sum_scale_fn_forward", "exp_sum_scale_fn_backward"]
    assert backend.last_fusions() == []  # nothing has run yet
    for plan in backend.plans[:2]:
        (region,) = plan.regions
        region.fusion_for(
            [nb.TensorMeta.contiguous(v.shape, v.dtype) for v in region.inputs if isinstance(v, TensorVar)]
        )
    fusions = backend.last_fusions()
    assert len(fusions) == 2
    assert str(fusions).count("def nvfuser_fusion") == 2
    assert "fd.ops.sum" in repr(fusions[0]) and "fd.ops.expand" in repr(fusions[1])
