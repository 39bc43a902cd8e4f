"""A learning-rate schedule through a compiled step: how often each compiler traces again.

One run, same step for everyone: ``w - lr * tanh(x @ w)`` on a 16x16 float32 CPU tensor, with
``lr`` a Python float from a cosine schedule that changes every step. Prints a table of traces
(compilations), total time of the loop and what each system said about it:

- symscalar.jit with ``lr`` unannotated (static: a trace per value, the budget warning at 8,
  the one-time "annotate it DynamicFloat" warning after 2 retraces, ``explain()``), then
  annotated ``DynamicFloat`` (one trace);
- torch.compile (default settings: floats are specialized, recompile limit 8);
- thunder.jit (default cache) and with ``cache="symbolic values"``.

Usage: ``.venv/bin/python benchmarks/retrace.py [--steps 40] [--no-compile]``
"""

from __future__ import annotations

import argparse
import math
import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

import symscalar
from symscalar import DynamicFloat


def step_unannotated(x: torch.Tensor, w: torch.Tensor, lr):  # type: ignore[no-untyped-def]
    return w - lr * torch.tanh(x @ w)


def step_annotated(x: torch.Tensor, w: torch.Tensor, lr: DynamicFloat) -> torch.Tensor:
    return w - lr * torch.tanh(x @ w)


def schedule(steps: int) -> list[float]:
    return [0.05 * 0.5 * (1 + math.cos(math.pi * i / steps)) for i in range(steps)]


def run(fn: Callable[..., Any], lrs: list[float], traces: Callable[[], int]) -> tuple[float, int, list[str]]:
    """Total ms of the loop, traces it caused, and the warnings it raised (first lines)."""
    torch.manual_seed(0)
    x, w = torch.randn(16, 16), torch.randn(16, 16) * 0.1
    before = traces()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        for lr in lrs:
            w = fn(x, w, lr)
        ms = (time.perf_counter() - start) * 1e3
    torch.manual_seed(0)
    x, expected = torch.randn(16, 16), torch.randn(16, 16) * 0.1
    for lr in lrs:
        expected = step_unannotated(x, expected, lr)
    torch.testing.assert_close(w, expected, rtol=1e-4, atol=1e-5)
    said = list(
        dict.fromkeys(
            f"{w.category.__name__}: {str(w.message).splitlines()[0][:110]}"
            for w in caught
            if w.category.__name__ in ("TraceLimitWarning", "UnannotatedNumberWarning", "UserWarning")
        )
    )
    return ms, traces() - before, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (slow to build)")
    args = parser.parse_args()
    lrs = schedule(args.steps)
    rows: list[tuple[str, float, int, list[str]]] = []

    ms, n, said = run(step_unannotated, lrs, lambda: 0)
    rows.append(("eager", ms, 0, said))

    f = symscalar.jit(step_unannotated)
    ms, n, said = run(f, lrs, lambda: f.cache_info().misses)
    rows.append(("symscalar.jit, lr unannotated (static)", ms, n, said))
    explanation = str(f.explain()).splitlines()
    g = symscalar.jit(step_annotated)
    ms, n, said = run(g, lrs, lambda: g.cache_info().misses)
    rows.append(("symscalar.jit, lr: DynamicFloat", ms, n, said))

    if not args.no_compile:
        torch._dynamo.reset()
        counters = torch._dynamo.utils.counters
        c = torch.compile(step_unannotated)
        ms, n, said = run(c, lrs, lambda: int(counters["stats"]["unique_graphs"]))
        rows.append(("torch.compile (default)", ms, n, said))

    try:
        import thunder
    except ImportError:
        thunder = None
    if thunder is not None:
        for label, kwargs in (("thunder.jit", {}), ("thunder.jit symbolic values", {"cache": "symbolic values"})):
            try:
                t = thunder.jit(step_unannotated, **kwargs)
                ms, n, said = run(t, lrs, lambda: thunder.cache_misses(t))
                rows.append((label, ms, n, said))
            except Exception as e:  # noqa: BLE001 - report, do not hide
                print(f"{label}: failed: {type(e).__name__}: {str(e).splitlines()[0]}")

    print(
        f"{args.steps} steps of w - lr * tanh(x @ w), lr from a cosine schedule; torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}"
    )
    print()
    print("| | traces | loop (ms) | what it said |")
    print("|---|---:|---:|---|")
    for name, ms, n, said in rows:
        print(f"| {name} | {n} | {ms:.0f} | {'<br>'.join(said) or '—'} |")
    print("\nsymscalar explain(), lr unannotated (first 4 lines):")
    for line in explanation[:4]:
        print("   ", line)


if __name__ == "__main__":
    main()
