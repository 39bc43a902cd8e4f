"""Dynamic dims side by side: symscalar (static, declared) vs torch.compile and thunder.

A nanoGPT block (the one of tests/test_dynamic_shapes.py), forward and backward:

1. a **length sweep** (B = 2, T in 1, 2, 7, 16, 33, 64) under symscalar.jit with static shapes and
   with ``dynamic_dims``, ``torch.compile`` (backend "eager", so that compile counts and dynamo's
   own time are measured, not Inductor's minutes) by default, with ``dynamic=True`` and with
   ``torch._dynamo.mark_dynamic(x, 1)``, and lightning-thunder's ``thunder.jit`` with its default
   cache and ``cache="symbolic values"`` (``--thunder``: its default cache traces every shape,
   seconds each): traces or compiles, the first call and the whole sweep, and whether every
   output equals eager's;
2. the **batch x length sweep** (B in 1, 2, 3, 8 x T in 1, 7, 33, 64) for symscalar;
3. the per-call overhead at a cache hit on a tiny function (static key vs declared dims).

Runs in under 2 minutes on a laptop CPU with the defaults (``--no-compile`` and without
``--thunder``: seconds).
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


def per_call_us(fn: Callable[..., Any], x: torch.Tensor, n: int = 3000, repeats: int = 5) -> float:
    fn(x)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn(x)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


LENGTHS = [(2, t) for t in (1, 2, 7, 16, 33, 64)]
_AT = [(0, 0)]  # the shape run_sweep is at (for a failure's message)


def _failure(e: Exception) -> str:
    b, t = _AT[0]
    return f"fails at B={b}, T={t}: {type(e).__name__}: {str(e).strip().splitlines()[0][:70]}"


def run_sweep(
    fn: Callable[..., Any], block: torch.nn.Module, shapes: list[tuple[int, int]], mark: bool = False
) -> tuple[float, float, bool]:
    """(first call seconds, sweep seconds, every output equal to eager's) over ``shapes``."""
    torch.manual_seed(0)
    start = time.perf_counter()
    first, same = 0.0, True
    for i, (b, t) in enumerate(shapes):
        _AT[0] = (b, t)
        x = torch.randn(b, t, 16, requires_grad=True)
        if mark:
            torch._dynamo.mark_dynamic(x, 1)
        out = fn(x)
        out.sum().backward()
        if i == 0:
            first = time.perf_counter() - start
        with torch.no_grad():
            same = same and torch.allclose(out.detach(), block(x), atol=1e-5, rtol=1e-4)
    return first, time.perf_counter() - start, same


def compiled_rows(block: torch.nn.Module) -> list[tuple[str, Any, float, float, str]]:
    testing = importlib.import_module("torch._dynamo.testing")
    rows = []
    for label, options, mark in (
        ("torch.compile default", {}, False),
        ("torch.compile dynamic=True", {"dynamic": True}, False),
        ("torch.compile mark_dynamic(x, 1)", {}, True),
    ):
        torch._dynamo.reset()
        counter = testing.CompileCounter()
        compiled = torch.compile(block, backend=counter, **options)
        try:
            first, total, same = run_sweep(compiled, block, LENGTHS, mark)
        except Exception as e:  # noqa: BLE001 - reported in the table
            rows.append((label, counter.frame_count, 0.0, 0.0, _failure(e)))
            continue
        rows.append((label, counter.frame_count, first, total, "equal" if same else "DIFFERS"))
    torch._dynamo.reset()
    return rows


def thunder_rows(block: torch.nn.Module) -> list[tuple[str, Any, float, float, str]]:
    try:
        thunder = importlib.import_module("thunder")
    except Exception as e:  # noqa: BLE001 - an optional comparison
        return [("thunder.jit", "-", 0.0, 0.0, f"does not import: {type(e).__name__}")]
    rows: list[tuple[str, Any, float, float, str]] = []
    for label, options in (("thunder.jit", {}), ('thunder.jit cache="symbolic values"', {"cache": "symbolic values"})):
        jitted = thunder.jit(block, **options)
        try:
            first, total, same = run_sweep(jitted, block, LENGTHS)
        except Exception as e:  # noqa: BLE001 - reported in the table
            rows.append((label, "-", 0.0, 0.0, _failure(e)))
            continue
        rows.append((label, thunder.cache_misses(jitted), first, total, "equal" if same else "DIFFERS"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--thunder", action="store_true", help="also lightning-thunder (minutes: a trace per shape)")
    args = parser.parse_args()
    block = Block()
    declared = {"x": (Dim("B", max=64), Dim("T", max=64))}
    rows: list[tuple[str, Any, float, float, str]] = []
    for label, options in (
        ("symscalar.jit static shapes", {}),
        ("symscalar.jit dynamic_dims B, T", {"dynamic_dims": declared}),
    ):
        jitted = symscalar.jit(block, **options)
        first, total, same = run_sweep(jitted, block, LENGTHS)
        rows.append((label, jitted.cache_info().misses, first, total, "equal" if same else "DIFFERS"))
    if not args.no_compile:
        rows += compiled_rows(block)
    if args.thunder:
        rows += thunder_rows(block)
    lengths = ", ".join(str(t) for _, t in LENGTHS)
    print(f"nanoGPT block, forward+backward, B=2, T in {lengths} ({len(LENGTHS)} shapes)")
    print(f"| {'':36} | traces/compiles | first call ms | sweep s | outputs vs eager |")
    print(f"|{'-' * 38}|----------------:|--------------:|--------:|------------------|")
    for label, traces, first, total, note in rows:
        print(f"| {label:36} | {traces!s:>15} | {first * 1e3:>13.1f} | {total:>7.2f} | {note} |")

    rows = []
    for label, options in (
        ("symscalar.jit static shapes", {}),
        ("symscalar.jit dynamic_dims B, T", {"dynamic_dims": declared}),
    ):
        jitted = symscalar.jit(block, **options)
        first, total, same = run_sweep(jitted, block, SWEEP)
        rows.append((label, jitted.cache_info().misses, first, total, "equal" if same else "DIFFERS"))
    print(f"\nnanoGPT block, forward+backward over {len(SWEEP)} shapes (B in 1,2,3,8 x T in 1,7,33,64)")
    for label, traces, first, total, note in rows:
        print(f"| {label:36} | {traces!s:>15} | {first * 1e3:>13.1f} | {total:>7.2f} | {note} |")

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
