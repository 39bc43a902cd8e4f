"""Dynamic dims: traces, first call and per-call overhead, static shapes against declared ones.

A nanoGPT block (the one of tests/test_dynamic_shapes.py) over a sweep of batch sizes and
sequence lengths, forward and backward, with ``symscalar.jit`` without and with
``dynamic_dims``, and optionally ``torch.compile`` (``--compile``: the eager backend, default
and ``dynamic=True``). Prints the number of traces (compiles), the total and first-call time,
and the per-call overhead at a cache hit on a tiny function (static key vs declared dims).
Runs in well under 2 minutes on a laptop CPU without ``--compile``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import symscalar
from symscalar import Dim

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_dynamic_shapes import Block

SWEEP = [(b, t) for b in (1, 2, 3, 8) for t in (1, 7, 33, 64)]


def sweep(fn: Callable[..., Any], block: torch.nn.Module) -> tuple[float, float]:
    """(first call seconds, whole sweep seconds), forward and backward at every shape."""
    torch.manual_seed(0)
    start = time.perf_counter()
    first = 0.0
    for i, (b, t) in enumerate(SWEEP):
        x = torch.randn(b, t, 16, requires_grad=True)
        fn(x).sum().backward()
        if i == 0:
            first = time.perf_counter() - start
    return first, time.perf_counter() - start


def per_call_us(fn: Callable[..., Any], x: torch.Tensor, n: int = 3000, repeats: int = 5) -> float:
    fn(x)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn(x)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", action="store_true", help="also torch.compile (eager backend; slower)")
    args = parser.parse_args()
    block = Block()
    rows = []
    static = symscalar.jit(block)
    first, total = sweep(static, block)
    rows.append(("symscalar.jit (static shapes)", static.cache_info().misses, first, total))
    dynamic = symscalar.jit(block, dynamic_dims={"x": (Dim("B", max=64), Dim("T", max=64))})
    first, total = sweep(dynamic, block)
    rows.append(("symscalar.jit dynamic_dims B, T", dynamic.cache_info().misses, first, total))
    if args.compile:
        testing = importlib.import_module("torch._dynamo.testing")  # only with --compile (slow to import)
        for label, options in (("torch.compile (eager)", {}), ("torch.compile dynamic=True", {"dynamic": True})):
            torch._dynamo.reset()
            counter = testing.CompileCounter()
            compiled = torch.compile(block, backend=counter, **options)
            first, total = sweep(compiled, block)
            rows.append((label, counter.frame_count, first, total))
    print(f"nanoGPT block, forward+backward over {len(SWEEP)} shapes (B in 1,2,3,8 x T in 1,7,33,64)")
    print(f"{'':34} {'traces':>7} {'first call ms':>14} {'sweep s':>8}")
    for label, traces, first, total in rows:
        print(f"{label:34} {traces:>7} {first * 1e3:>14.1f} {total:>8.2f}")

    def tiny(x: torch.Tensor) -> torch.Tensor:
        return torch.exp(torch.sum(x * 2.0, 0) + 1)

    x = torch.randn(8, 8)
    eager = per_call_us(tiny, x)
    plain = per_call_us(symscalar.jit(tiny), x)
    dims = per_call_us(symscalar.jit(tiny, dynamic_dims={"x": ("B", "T")}), x)
    print(
        f"per call at a cache hit (8x8): eager {eager:.1f} us, static key {plain:.1f} us, declared dims {dims:.1f} us"
    )


if __name__ == "__main__":
    main()
