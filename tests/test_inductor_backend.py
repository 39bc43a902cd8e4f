"""backend="inductor": traces lowered to aten FX graphs and compiled by Inductor.

Compiling costs seconds of gcc per graph, so the tests that compile share one jitted function
(a forward and a backward graph, compiled once per session, in a temporary Inductor cache) and
are marked slow; the lowering and the lazy-compile rule are checked without compiling.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat, DynamicInt, inductor_backend
from symscalar.inductor_backend import InductorBackend

RTOL, ATOL = 1.3e-6, 1e-5  # float32 rounding: Inductor reorders reductions (module docstring)


@pytest.fixture(scope="module", autouse=True)
def inductor_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Inductor's caches in a temporary directory, not the user's."""
    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("inductor"))
    yield
    if before is None:
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
    else:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = before


def block(x: torch.Tensor, w: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
    h = torch.tanh(x @ w) * s + n
    h = F.dropout(h, 0.25)  # a random op: the program's RNG stream
    return F.layer_norm(h, (8,), eps=1e-5).pow(2).sum(-1) * s - torch.clamp(h, -s, s).mean()


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 8, generator=generator, requires_grad=True)
    w = torch.randn(8, 8, generator=generator, requires_grad=True)
    return x, w


def run(f: Any, seed: int, s: float, n: int) -> tuple[torch.Tensor, ...]:
    x, w = inputs()
    torch.manual_seed(seed)
    out = f(x, w, s, n)
    grads = torch.autograd.grad(out.sum(), (x, w))
    return (out.detach(), *grads)


@pytest.fixture(scope="module")
def compiled() -> Any:
    f = symscalar.jit(block, backend=InductorBackend(compile_after=0))
    run(f, 0, 0.5, 1)  # compiles the forward and the backward
    return f


REFERENCE = symscalar.jit(block, backend="torch")
VALUES = [(0.5, 1), (-2.0, 0), (0.0, 3), (1e-3, -7), (3.25, 2)]


@pytest.mark.slow
@pytest.mark.parametrize(("s", "n"), VALUES)
def test_forward_and_backward_equal_the_torch_backend(compiled: Any, s: float, n: int) -> None:
    for got, want in zip(run(compiled, 7, s, n), run(REFERENCE, 7, s, n)):
        torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)
    records = compiled.explain().compiles
    assert [r.program for r in records] == ["block_forward", "block_backward"], records
    assert all(not r.fallback and r.seconds > 0 for r in records), records


@pytest.mark.slow
def test_a_new_dynamic_value_never_recompiles(compiled: Any) -> None:
    before = compiled.cache_info()
    for k in range(20):
        s, n = 0.37 * k - 3.0, k - 10
        for got, want in zip(run(compiled, k, s, n), run(REFERENCE, k, s, n)):
            torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)
    after = compiled.cache_info()
    assert after.misses == before.misses and after.entries == 1
    # one Inductor compile per program (forward, backward), never one per value
    assert [r.program for r in compiled.explain().compiles] == ["block_forward", "block_backward"]


@pytest.mark.slow
def test_random_ops_keep_their_stream(compiled: Any) -> None:
    first = run(compiled, 3, 1.0, 0)
    second = run(compiled, 4, 1.0, 0)  # another seed: another mask
    again = run(compiled, 3, 1.0, 0)
    reference = run(REFERENCE, 3, 1.0, 0)
    for a, b, r in zip(first, again, reference):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
        torch.testing.assert_close(a, r, rtol=RTOL, atol=ATOL)
    assert not torch.equal(first[0], second[0])


@pytest.mark.slow
def test_other_strides_run_the_torch_program(compiled: Any) -> None:
    x, w = inputs()
    x_t = x.detach().t().contiguous().t().requires_grad_()  # the same values, column-major
    w_t = w.detach().t().contiguous().t().requires_grad_()
    assert x_t.stride() != x.stride()
    torch.manual_seed(5)
    got = compiled(x_t, w_t, 0.75, 2)
    got_grads = torch.autograd.grad(got.sum(), (x_t, w_t))
    for a, b in zip((got.detach(), *got_grads), run(REFERENCE, 5, 0.75, 2)):
        torch.testing.assert_close(a, b, rtol=RTOL, atol=ATOL)
    assert compiled.cache_info().entries == 1  # the key does not hold strides: the same entry


@pytest.mark.slow  # make_fx imports dynamo: seconds
def test_lowering_keeps_dynamic_scalars_as_graph_inputs() -> None:
    f = symscalar.jit(block, backend="torch")
    x, w = inputs()
    with torch.no_grad():
        f(x, w, 0.625, 3)
    trace = f.last_trace()
    assert trace is not None
    seed = torch.tensor(0, dtype=torch.int64)  # the trace's last input: the RNG seed
    lowered = inductor_backend.lower(trace, [x.detach(), w.detach(), 0.625, 3, int(seed)])
    code = lowered.graph.code
    # the scalars are 0-d tensor inputs read with .item(), never constants of the graph
    # (and -s, computed on the host from s, is one more)
    assert lowered.graph_inputs[:5] == trace.inputs and [v.dtype for v in lowered.host_vars] == [float]
    assert code.count("torch.ops.aten._local_scalar_dense.default(") == 3 and "0.625" not in code
    assert "torch.ops.symscalar.uniform" in code  # the random op: an opaque extern call
    assert "torch.ops.aten.tanh" in code and "torch.ops.aten.mm" in code


def test_compiles_lazily_after_compile_after_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    lowered: list[str] = []

    def no_lowering(trace: Any, args: Any) -> Any:
        lowered.append(trace.name)
        raise inductor_backend._LoweringError("refused by the test")

    monkeypatch.setattr(inductor_backend, "lower", no_lowering)
    f = symscalar.jit(lambda x, s: torch.sin(x) * s, dynamic=["s"], backend=InductorBackend(compile_after=2))
    x = torch.randn(3)
    for k in range(2):
        torch.testing.assert_close(f(x, float(k)), torch.sin(x) * k)
    assert lowered == [] and f.explain().compiles == []
    for k in range(3):  # the third call compiles; a trace that cannot be lowered stays on torch
        torch.testing.assert_close(f(x, k + 0.5), torch.sin(x) * (k + 0.5))
    assert len(lowered) == 1
    (record,) = f.explain().compiles
    assert "torch backend" in str(record) and "refused by the test" in record.fallback


def test_a_trace_without_tensor_work_stays_on_the_torch_backend() -> None:
    f = symscalar.jit(lambda x, s: (x, s * 2.0), dynamic=["s"], backend=InductorBackend(compile_after=0))
    x = torch.randn(2)
    for s in (0.5, -3.0):
        got_x, got_s = f(x, s)
        assert got_x is x and got_s == s * 2.0
    (record,) = f.explain().compiles
    assert "no tensor is computed" in record.fallback
    assert "runs on the torch backend" in str(f.explain())


def test_bad_backend_object_is_refused() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        symscalar.jit(lambda x: x, backend=object())  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="compile_after must be an int"):
        InductorBackend(compile_after=-1)
    with pytest.raises(ValueError, match="variants must be an int >= 1"):
        InductorBackend(variants=0)


def test_cpu_programs_compile_with_the_cpp_wrapper_unless_the_user_says_otherwise() -> None:
    cpu, meta = torch.ones(2), torch.ones(2, device="meta")  # meta: a device that is not the CPU
    patches = inductor_backend._config_patches
    assert patches({}, [cpu, 0.5]) == dict(inductor_backend.CPU_OPTIONS)
    assert patches({"cpp_wrapper": False, "max_autotune": False}, [cpu]) == {
        "cpp_wrapper": False,
        "max_autotune": False,
    }
    assert patches({}, [cpu, meta]) == {}  # any tensor off the CPU: Inductor's defaults
    assert patches({"max_autotune": False}, [meta]) == {"max_autotune": False}


# ---- dynamic dims: one Inductor compile (forward, backward) with symbolic sizes for every size


def attention_like(x: torch.Tensor, w: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    T = x.shape[1]
    h = torch.tanh(x @ w) * T  # a size read as a scalar: a SymInt of the graph
    h = F.dropout(h, 0.25)  # random: the program's stream at every size
    mask = torch.tril(torch.ones(T, T))  # a tensor built from sizes
    scores = (h @ h.transpose(1, 2)) * (T**-0.5) * s  # T ** -0.5: a host scalar
    return (scores.masked_fill(mask == 0, -1e9).softmax(-1) @ h).reshape(x.shape[0] * T, 8).sum(0)


DIMS = {"x": (symscalar.Dim("B", max=16), symscalar.Dim("T", max=64))}
SIZES = [(2, 3), (1, 1), (4, 5), (3, 1), (1, 6)]  # size 1 is a value like any other


@pytest.fixture(scope="module")
def calls() -> dict[str, int]:
    return {"compiled": 0, "torch": 0}


@pytest.fixture(scope="module")
def dynamic(calls: dict[str, int]) -> Any:
    """A function with dynamic dims whose compiled programs count which code ran each call."""
    runner = inductor_backend._runner

    def counting(*args: Any) -> Any:
        *head, compiled, example, torch_run, guard = args

        def run_compiled(*a: Any) -> Any:
            calls["compiled"] += 1
            return compiled(*a)

        def run_torch(*a: Any) -> Any:
            calls["torch"] += 1
            return torch_run(*a)

        return runner(*head, run_compiled, example, run_torch, guard)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inductor_backend, "_runner", counting)
        f = symscalar.jit(attention_like, dynamic_dims=DIMS, backend=InductorBackend(compile_after=0))
        run_dynamic(f, 0, 2, 3, 0.5)  # compiles the forward and the backward
    return f


DYNAMIC_REFERENCE = symscalar.jit(attention_like, dynamic_dims=DIMS, backend="torch")


def run_dynamic(f: Any, seed: int, b: int, t: int, s: float) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(b * 100 + t)
    x = torch.randn(b, t, 8, generator=generator, requires_grad=True)
    w = torch.randn(8, 8, generator=generator, requires_grad=True)
    torch.manual_seed(seed)
    out = f(x, w, s)
    grads = torch.autograd.grad((out * torch.linspace(-1.0, 1.0, 8)).sum(), (x, w))
    return (out.detach(), *grads)


@pytest.mark.slow
def test_dynamic_dims_compile_once_and_equal_the_torch_backend_at_every_size(
    dynamic: Any, calls: dict[str, int]
) -> None:
    before = dict(calls)
    for k, (b, t) in enumerate(SIZES):
        s = 0.25 * k - 1
        for got, want in zip(run_dynamic(dynamic, k, b, t, s), run_dynamic(DYNAMIC_REFERENCE, k, b, t, s)):
            # a softmax over T and two matmuls, each reduction reordered by Inductor
            torch.testing.assert_close(got, want, rtol=1e-5, atol=5e-5)
    compiled, on_torch = calls["compiled"] - before["compiled"], calls["torch"] - before["torch"]
    # each call ran the compiled code or (sizes outside Inductor's guards) the torch program;
    # B = 1 runs the compiled code (torch's matmul decomposition guards T != 1 only)
    assert compiled + on_torch == 2 * len(SIZES) and compiled >= 2 * sum(t > 1 for _, t in SIZES)
    assert dynamic.cache_info().misses == 1 and dynamic.cache_info().entries == 1
    records = dynamic.explain().compiles
    assert [r.program for r in records] == ["attention_like_forward", "attention_like_backward"], records
    assert all(not r.fallback and r.assumes for r in records), records
    assert ("other sizes run on the torch backend" in str(dynamic.explain())) == (on_torch > 0)
    assert "s_B != 1" not in str(dynamic.explain())


@pytest.mark.slow
def test_dynamic_dims_with_other_strides_run_the_torch_program(dynamic: Any, calls: dict[str, int]) -> None:
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(8, 3, 2, generator=generator).permute(2, 1, 0).requires_grad_()  # not contiguous
    w = torch.randn(8, 8, generator=generator, requires_grad=True)
    before = calls["torch"]
    torch.manual_seed(2)
    got = dynamic(x, w, 0.5)
    torch.manual_seed(2)
    want = DYNAMIC_REFERENCE(x, w, 0.5)
    torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)
    assert calls["torch"] == before + 1 and dynamic.cache_info().misses == 1


def test_a_layout_read_at_one_size_gives_the_strides_at_every_size() -> None:
    def views(b: int, t: int) -> list[torch.Tensor]:
        qkv = torch.empty(b, t, 3 * 16)
        q = qkv.view(b, t, 4, 12).split(4, dim=-1)[0].transpose(1, 2)  # a slice of a fused projection
        return [torch.empty(b, t, 8), torch.empty(b, 8, t).transpose(1, 2), torch.empty(b, 1, 8).expand(b, t, 8), q]

    dynamic = [[True, True, False], [True, True, False], [True, True, False], [True, False, True, False]]
    layouts = [inductor_backend._Layout.of(v, d) for v, d in zip(views(2, 3), dynamic)]
    # (at T = 1 torch's expand keeps the stride 8 of the size-1 dim: a call with it fails the
    # program's stride check and runs the torch program)
    for b, t in [(1, 4), (5, 7), (3, 2)]:
        for layout, view in zip(layouts, views(b, t)):
            assert layout is not None and layout.strides(view.shape) == view.stride(), (layout, view.stride())
    assert inductor_backend._Layout.of(torch.empty(4, 6)[:, :5], [True, True]) is None  # 6 is no size


@pytest.mark.slow
def test_a_call_outside_the_compiled_layouts_compiles_another_variant_up_to_the_limit() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) * x.shape[1]

    jitted = symscalar.jit(f, dynamic_dims={"x": ("B", "T")}, backend=InductorBackend(compile_after=0, variants=2))
    base = torch.randn(6, 5)
    layouts = [base, base.t().contiguous().t(), base[:, ::2]]  # contiguous, column-major, strided
    with torch.no_grad():
        for x in [*layouts, *layouts]:
            torch.testing.assert_close(jitted(x), torch.sin(x) * x.shape[1], rtol=RTOL, atol=ATOL)
    records = jitted.explain().compiles
    # one program per layout up to 2; the third layout (stride 2: no multiple of the sizes) runs on torch
    assert [bool(r.fallback) for r in records] == [False, False], records
    assert jitted.cache_info().misses == 1
