"""Per-call cost of keeping a cache hit honest about state (issue 9).

A jitted module reads its parameters by path on every call and checks, per parameter, shape,
dtype, device and requires_grad, and per module identity and ``training`` (the state guard);
every call also keys grad mode, the default dtype and torch function modes, and compares the
hook epoch. This script prints per-call µs of eager and ``symscalar.jit`` for MLPs of growing
depth (tiny 8x8 layers, so the overhead dominates) and the state guard's cost per parameter
and module from the slope.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

import symscalar


def per_call_us(fn, x: torch.Tensor, n: int, repeats: int) -> float:
    for _ in range(50):
        fn(x)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn(x)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def mlp(depth: int) -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(8, 8), nn.Tanh()]
    return nn.Sequential(*layers)


def guard_us(jitted, x: torch.Tensor, n: int, repeats: int) -> float:
    """The last entry's state guard alone: its generated code with the program replaced by a
    no-op (reads by path, metadata, identity and training checks, nothing else)."""
    run = jitted._symscalar_state.last_entry().run
    namespace = dict(run.__globals__, _ss_run=lambda *a: None)
    exec(run.__source__, namespace)  # noqa: S102 - the entry's own generated code
    return per_call_us(namespace["_ss_entry"], x, n, repeats)


def key_us(jitted, x: torch.Tensor, n: int, repeats: int) -> float:
    """Building the cache key (arguments and ambient state) alone."""
    return per_call_us(jitted._symscalar_state.key_of, x, n, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(8, 8)
    print("| MLP depth | parameters | modules | eager (µs) | symscalar.jit (µs) | key (µs) | state guard (µs) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for depth in (1, 4, 16):
        model = mlp(depth)
        jitted = symscalar.jit(model)
        with torch.no_grad():
            eager = per_call_us(model, x, args.calls, args.repeats)
            mine = per_call_us(jitted, x, args.calls, args.repeats)
        key = key_us(jitted, x, args.calls * 10, args.repeats)
        guard = guard_us(jitted, x, args.calls * 10, args.repeats)
        n_params, n_modules = len(list(model.parameters())), len(list(model.modules()))
        rows.append((n_params, guard))
        print(f"| {depth} | {n_params} | {n_modules} | {eager:.1f} | {mine:.1f} | {key:.2f} | {guard:.2f} |")
    (p0, g0), (p1, g1) = rows[0], rows[-1]
    print(f"\nstate guard: {(g1 - g0) / (p1 - p0):.3f} µs per parameter (with its module's share)")


if __name__ == "__main__":
    main()
