"""How well symscalar's nvFuser backend fuses common chains, forward and backward.

With a CUDA GPU: times fused forward + backward of scale+bias+gelu, softmax and layer_norm
chains for eager torch, thunder.jit (its nvFuser executor), symscalar.jit(backend="nvfuser")
(with an nvfuser_direct wheel matching torch/CUDA) and symscalar's Inductor backend (Triton
kernels: ``InductorBackend(compile_after=0)``, compiled before timing), with each column's
first call (compile included) in seconds. A column that cannot run says why and the others go on.

Without one: lowers the same functions' forward and backward traces for CPU-side metadata and
prints, per trace, the number of fusion regions (and torch/host steps) and the time to lower
each fusion (median of 7 builds) and of a whole ``lower()`` call whose fusions come from the
cache (check_trace, partition, code generation).

The chains use the real ops: ``F.gelu`` (erf form) after a dynamic scale and a bias,
``torch.softmax`` of a dynamically scaled input, and ``F.layer_norm`` with a dynamic ``eps``.
Each should lower to one fusion forward and one backward (``regions`` 1, ``torch`` 0).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/nvfuser.py``
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat
from symscalar import nvfuser_backend as nb
from symscalar.grad import vjp_traces
from symscalar.inductor_backend import InductorBackend
from symscalar.trace import TensorVar, Trace

BATCH, HIDDEN = 2048, 1024


def scale_bias_gelu(x: torch.Tensor, bias: torch.Tensor, scale: DynamicFloat) -> Any:
    return F.gelu(x * scale + bias)


def softmax(x: torch.Tensor, scale: DynamicFloat) -> Any:
    return torch.softmax(x * scale, -1)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: DynamicFloat) -> Any:
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def _inputs(name: str, device: str) -> tuple[list[torch.Tensor], float]:
    x = torch.randn(BATCH, HIDDEN, device=device)
    if name == "scale_bias_gelu":
        return [x, torch.randn(HIDDEN, device=device)], 0.5
    if name == "softmax":
        return [x], 0.125
    return [x, torch.randn(HIDDEN, device=device), torch.randn(HIDDEN, device=device)], 1e-5


CASES: list[tuple[str, Callable[..., Any]]] = [
    ("scale_bias_gelu", scale_bias_gelu),
    ("softmax", softmax),
    ("layer_norm", layer_norm),
]


def _trace(fn: Callable[..., Any], tensors: list[torch.Tensor], scalar: float) -> Trace:
    f = symscalar.jit(fn, backend="torch")
    with torch.no_grad():
        f(*tensors, scalar)
    trace = f.last_trace()
    assert trace is not None
    return trace


def _lower_stats(trace: Trace) -> dict[str, Any]:
    metas = [None if isinstance(v, TensorVar) else 1.0 for v in trace.inputs]
    plan = nb.lower(trace, metas)
    builds = []
    for region in plan.regions:
        layouts = next(iter(region.fusions))
        for _ in range(7):
            t0 = time.perf_counter()
            nb.build_fusion(region, layouts)
            builds.append(time.perf_counter() - t0)
    built = statistics.median(builds) if builds else 0.0
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        nb.lower(trace, metas)
    cached = (time.perf_counter() - t0) / reps
    kinds = [k for k, _ in plan.steps]
    return {
        "eqns": len(trace.eqns),
        "regions": len(plan.regions),
        "torch": kinds.count("torch"),
        "host": kinds.count("host"),
        "scalar_inputs": sum(sum(1 for v in fd.fusion.inputs() if not v.is_tensor()) for fd in plan.fusions),
        "build_ms": 1e3 * built,
        "cached_ms": 1e3 * cached,
    }


def lowering_table() -> None:
    """The CPU-side report: fusion regions and lowering time, forward and backward."""
    header = (
        f"{'function':<24}{'pass':<10}{'eqns':>5}{'regions':>8}{'torch':>6}{'host':>5}"
        f"{'scalar in':>10}{'build ms/fusion':>16}{'lower() ms, cached':>20}"
    )
    print(
        f"nvFuser lowering without a GPU (batch {BATCH}, hidden {HIDDEN}; 'scalar in' counts "
        "dynamic scalars and size inputs)"
    )
    print(header)
    print("-" * len(header))
    for name, fn in CASES:
        tensors, scalar = _inputs(name, "cpu")
        trace = _trace(fn, tensors, scalar)
        forward, backward, _ = vjp_traces(trace, list(range(len(tensors))))
        for label, t in (("forward", forward), ("backward", backward)):
            s = _lower_stats(t)
            print(
                f"{name:<24}{label:<10}{s['eqns']:>5}{s['regions']:>8}{s['torch']:>6}"
                f"{s['host']:>5}{s['scalar_inputs']:>10}{s['build_ms']:>16.2f}{s['cached_ms']:>20.3f}"
            )


def _time_cuda(step: Callable[[], Any], iters: int = 50, warmup: int = 10) -> float:
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _fwd_bwd(f: Callable[..., Any], tensors: list[torch.Tensor], scalar: float) -> Callable[[], Any]:
    def step() -> Any:
        for t in tensors:
            t.grad = None
        out = f(*tensors, scalar)
        out.backward(torch.ones_like(out))
        return out

    return step


def _first_and_median(step: Callable[[], Any]) -> tuple[float, float]:
    """The first call's seconds (compile included) and the median ms of the following calls."""
    start = time.perf_counter()
    step()
    torch.cuda.synchronize()
    return time.perf_counter() - start, _time_cuda(step)


def gpu_table() -> None:
    """Median fwd+bwd time per call (ms) for eager torch, thunder.jit, symscalar+nvFuser and
    symscalar+Inductor; the compiling columns' first calls in seconds."""
    thunder: Any = None
    try:
        import thunder
    except Exception as e:  # noqa: BLE001
        print(f"thunder unavailable: {e}")
    columns: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {}
    if thunder is not None:
        columns["thunder"] = thunder.jit
    if nb.nvfuser_available():
        columns["symscalar nvfuser"] = lambda fn: symscalar.jit(fn, backend="nvfuser")
    else:
        print("nvfuser_direct does not import: no symscalar nvfuser column")
    columns["symscalar inductor"] = lambda fn: symscalar.jit(fn, backend=InductorBackend(compile_after=0))
    print(
        f"fused forward + backward on {torch.cuda.get_device_name()} (batch {BATCH}, hidden {HIDDEN}): "
        "median ms (first call s)"
    )
    print(f"| function | eager | {' | '.join(columns)} |")
    print("|---|---:|" + "---:|" * len(columns))
    for name, fn in CASES:
        tensors, scalar = _inputs(name, "cuda")
        tensors = [t.requires_grad_() for t in tensors]
        cells = [f"{_time_cuda(_fwd_bwd(fn, tensors, scalar)):.3f}"]
        for label, wrap in columns.items():
            try:
                f = wrap(fn)
                first, median = _first_and_median(_fwd_bwd(f, tensors, scalar))
                fusions = f", {len(f.last_fusion())} fusions" if label == "symscalar nvfuser" else ""
                cells.append(f"{median:.3f} ({first:.1f} s{fusions})")
            except Exception as e:  # noqa: BLE001 - report and go on
                cells.append(f"fails ({type(e).__name__})")
                print(f"{label} failed on {name}: {e}")
        print(f"| {name} | {' | '.join(cells)} |", flush=True)


def main() -> None:
    if torch.cuda.is_available():
        gpu_table()
        print()
    else:
        print("(no CUDA device: printing the lowering report instead of timings)\n")
    if nb.nvfuser_available():
        lowering_table()
    else:
        print("nvfuser_direct is not importable: nothing to lower")


if __name__ == "__main__":
    main()
