"""Per-call overhead of symscalar.jit against eager torch, thunder.jit and torch.compile.

One run, same function and inputs for everyone: ``exp(sum(x * s, 0) + 1)`` on an 8x8 float32
CPU tensor, ``s`` a Python float that changes between calls. Prints a table:

- per-call µs at a cache hit (best of several timed loops),
- first-call ms (trace + compile + run, on a fresh compiled function),
- time and number of retraces for 20 new values of ``s``;
- with ``dynamic_dims={"x": ("B", "T")}`` (a row), and the retraces over 20 new shapes.

Targets (issue 2): symscalar per-call <= 1.3x eager and <= 0.3x thunder; 0 retraces for new
dynamic values; first call <= 10 ms.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

import symscalar
from symscalar import DynamicFloat


def eager_fn(x: torch.Tensor, s: float) -> torch.Tensor:
    return torch.exp(torch.sum(x * s, 0) + 1)


def symscalar_fn(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return torch.exp(torch.sum(x * s, 0) + 1)


def per_call_us(fn: Callable[..., Any], x: torch.Tensor, n: int, repeats: int) -> float:
    for _ in range(50):
        fn(x, 0.5)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn(x, 0.5)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def per_call_us_interleaved(fns: list[Callable[..., Any]], x: torch.Tensor, n: int, repeats: int) -> list[float]:
    """``per_call_us`` of each of ``fns``, their timed loops taken in turn."""
    for fn in fns:
        for _ in range(50):
            fn(x, 0.5)
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(n):
                fn(x, 0.5)
            best[i] = min(best[i], (time.perf_counter() - start) / n)
    return [b * 1e6 for b in best]


def first_call_ms(make: Callable[[], Callable[..., Any]], x: torch.Tensor) -> tuple[float, Callable[..., Any]]:
    fn = make()
    start = time.perf_counter()
    fn(x, 0.5)
    return (time.perf_counter() - start) * 1e3, fn


def new_values(fn: Callable[..., Any], x: torch.Tensor, misses: Callable[[], int]) -> tuple[float, int]:
    before = misses()
    start = time.perf_counter()
    for i in range(20):
        out = fn(x, 1.0 + i / 7)
        torch.testing.assert_close(out, eager_fn(x, 1.0 + i / 7), rtol=1e-4, atol=1e-5)  # fused sums round differently
    return (time.perf_counter() - start) * 1e3, misses() - before


def new_shapes_retraces(fn: Callable[..., Any], shapes: list[tuple[int, int]]) -> int:
    """The traces ``fn`` (a symscalar.jit function) adds over calls at ``shapes``."""
    before = fn.cache_info().misses
    for b, t in shapes:
        x = torch.randn(b, t)
        torch.testing.assert_close(fn(x, 0.5), eager_fn(x, 0.5), rtol=1e-4, atol=1e-5)
    return int(fn.cache_info().misses - before)


def import_seconds(module: str, repeats: int = 5) -> float:
    """Best wall time of a fresh interpreter importing ``module`` (minus an empty one)."""

    def run(code: str) -> float:
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            best = min(best, time.perf_counter() - start)
        return best

    return run(f"import {module}") - run("pass")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (slow to build)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    x = torch.randn(8, 8)
    rows: list[tuple[str, float, float | None, float | None, int | None]] = []

    first, f = first_call_ms(lambda: symscalar.jit(symscalar_fn), x)
    t20, r20 = new_values(f, x, lambda: f.cache_info().misses)
    # declared dynamic dims: the key holds no size, the call is checked against the declaration
    first_d, fd = first_call_ms(lambda: symscalar.jit(symscalar_fn, dynamic_dims={"x": ("B", "T")}), x)
    t20_d, r20_d = new_values(fd, x, lambda: fd.cache_info().misses)
    # eager and both symscalar rows timed in turn, loop by loop: a shared machine's load drifts
    eager_us, static_us, dims_us = per_call_us_interleaved([eager_fn, f, fd], x, args.calls, args.repeats)
    rows.append(("eager torch", eager_us, None, None, None))
    rows.append(("symscalar.jit", static_us, first, t20, r20))
    rows.append(("symscalar.jit, dynamic_dims B, T", dims_us, first_d, t20_d, r20_d))
    shapes = [(b, t) for b in (1, 2, 3, 8) for t in (1, 7, 64, 128, 257)]
    new_shapes = {label: new_shapes_retraces(fn, shapes) for label, fn in (("static", f), ("dynamic_dims", fd))}

    try:
        import thunder
    except ImportError:
        thunder = None
    if thunder is not None:
        for label, kwargs in (("thunder.jit", {}), ("thunder.jit symbolic values", {"cache": "symbolic values"})):
            try:
                first, tf = first_call_ms(lambda: thunder.jit(eager_fn, **kwargs), x)
                t20, r20 = new_values(tf, x, lambda: thunder.cache_misses(tf))
                rows.append((label, per_call_us(tf, x, args.calls // 3, args.repeats), first, t20, r20))
            except Exception as e:  # noqa: BLE001 - report, do not hide
                print(f"{label}: failed: {type(e).__name__}: {str(e).splitlines()[0]}")

    if not args.no_compile:
        torch._dynamo.reset()
        counters = torch._dynamo.utils.counters
        first, cf = first_call_ms(lambda: torch.compile(eager_fn), x)
        t20, r20 = new_values(cf, x, lambda: int(counters["stats"]["unique_graphs"]))
        rows.append(("torch.compile", per_call_us(cf, x, args.calls // 3, args.repeats), first, t20, r20))

    eager = rows[0][1]
    print(
        f"exp(sum(x * s, 0) + 1), x: 8x8 float32 CPU; torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}"
    )
    print()
    print("| | per call (µs) | vs eager | first call (ms) | 20 new s (ms) | retraces for 20 new s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, us, first_ms, t20, r20 in rows:
        fmt = lambda v, spec: "—" if v is None else format(v, spec)  # noqa: E731
        print(
            f"| {name} | {us:.1f} | {us / eager:.2f}x | {fmt(first_ms, '.1f')} | {fmt(t20, '.1f')} | {fmt(r20, 'd')} |"
        )
    print(
        f"\nretraces over {len(shapes)} new shapes (B in 1, 2, 3, 8 x T in 1, 7, 64, 128, 257): "
        + ", ".join(f"{label} {n}" for label, n in new_shapes.items())
    )
    torch_import, sym_import = import_seconds("torch"), import_seconds("symscalar")
    print(
        f"\nimport torch: {torch_import * 1e3:.0f} ms; import symscalar (torch included): "
        f"{sym_import * 1e3:.0f} ms (+{(sym_import - torch_import) * 1e3:.0f} ms)"
    )
    sym, dims = rows[1][1], rows[2][1]
    thunder_rows = [r for r in rows if r[0] == "thunder.jit"]
    if thunder_rows:
        print(
            f"\nsymscalar per-call: {sym / eager:.2f}x eager (target <= 1.3x; {dims / eager:.2f}x with "
            "dynamic_dims), "
            f"{sym / thunder_rows[0][1]:.2f}x thunder.jit (target <= 0.3x)"
        )


if __name__ == "__main__":
    main()
