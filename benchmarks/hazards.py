"""The static/dynamic hazard cases, side by side: symscalar.jit vs thunder.jit with
cache="symbolic values" (lightning-thunder 0.2.6), each called several times with changing
values; every call's forward and gradients are compared with eager torch.

Prints a table: per case and compiler, "ok" or what went wrong on which call (wrong forward,
wrong grad, an exception), and the number of traces.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

import symscalar

DEVICE = "cpu"


def T(*shape: int) -> torch.Tensor:  # noqa: N802 - reads like the math it tests
    return torch.rand(*shape, dtype=torch.float64, device=DEVICE) + 0.5


def cases() -> list[tuple[str, Callable[..., Any], list[tuple[Any, ...]], list[str]]]:
    return [
        ("a * s", lambda a, s: a * s, [(T(3, 4), s) for s in (0.5, 2.0, -1.5)], ["s"]),
        ("a.abs() ** p", lambda a, p: a.abs() ** p, [(T(3, 4), p) for p in (2.0, 0.5, 3.0)], ["p"]),
        ("softmax(a, d)", lambda a, d: torch.softmax(a, d), [(T(3, 4), d) for d in (1, 0, 1)], []),
        ("a.sum(d)", lambda a, d: a.sum(d), [(T(3, 4), d) for d in (0, 1, 0)], []),
        ("a.sum((d0, d1))", lambda a, d0, d1: a.sum((d0, d1)), [(T(2, 3, 4), 0, 1), (T(2, 3, 4), 1, 2)], []),
        ("a.mean(d)", lambda a, d: a.mean(d), [(T(3, 4), d) for d in (0, 1, 0)], []),
        ("a.unsqueeze(d) * 2", lambda a, d: a.unsqueeze(d) * 2, [(T(3, 4), d) for d in (0, 1, 2)], []),
        (
            "a.transpose(d0, d1) * 2",
            lambda a, d0, d1: a.transpose(d0, d1) * 2,
            [(T(2, 3, 4), 0, 1), (T(2, 3, 4), 1, 2)],
            [],
        ),
        ("cat([a, b], d)", lambda a, b, d: torch.cat([a, b], d), [(T(2, 3), T(2, 3), d) for d in (0, 1)], []),
        ("a + b, b (2,1) then (2,3)", lambda a, b: a + b, [(T(2, 3), T(2, 1)), (T(2, 3), T(2, 3))], []),
        ("a * a.shape[1]", lambda a: a * a.shape[1], [(T(2, 3),), (T(2, 5),)], []),
        (
            "layer_norm, eps",
            lambda a, w, b, eps: F.layer_norm(a, (4,), w, b, eps=eps),
            [(T(3, 4), T(4), T(4), eps) for eps in (1e-5, 1e-2, 0.5)],
            ["eps"],
        ),
    ]


def check(compiled: Callable[..., Any], fn: Callable[..., Any], calls: list[tuple[Any, ...]]) -> str:
    for i, args in enumerate(calls):
        mine = [a.clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in args]
        ref = [a.clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in args]
        try:
            out = compiled(*mine)
            expected = fn(*ref)
            if out.shape != expected.shape or not torch.allclose(out, expected):
                return f"wrong forward (call {i + 1})"
            ct = torch.ones_like(expected)
            tensors = [a for a in mine if isinstance(a, torch.Tensor)]
            grads = torch.autograd.grad(out, tensors, ct)
            ref_grads = torch.autograd.grad(expected, [a for a in ref if isinstance(a, torch.Tensor)], ct)
            if any(not torch.allclose(g, r) for g, r in zip(grads, ref_grads)):
                return f"wrong grad (call {i + 1})"
        except Exception as e:  # noqa: BLE001 - a crash is a result here
            return f"{type(e).__name__} (call {i + 1})"
    return "ok"


def main() -> None:
    global DEVICE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="e.g. cuda (jit's backend='auto' picks)")
    DEVICE = parser.parse_args().device
    warnings.filterwarnings("ignore")
    try:
        import thunder
    except ImportError:
        thunder = None
    print("| case | symscalar.jit | traces | thunder.jit symbolic values | traces |")
    print("|---|---|---:|---|---:|")
    totals = {"symscalar": 0, "thunder": 0}
    all_cases = cases()
    for name, fn, calls, dynamic in all_cases:
        ours = symscalar.jit(fn, dynamic=dynamic)
        ours_result = check(ours, fn, calls)
        totals["symscalar"] += ours_result == "ok"
        theirs_result, theirs_traces = "not installed", "—"
        if thunder is not None:
            theirs = thunder.jit(fn, cache="symbolic values")
            theirs_result = check(theirs, fn, calls)
            theirs_traces = str(thunder.cache_misses(theirs))
            totals["thunder"] += theirs_result == "ok"
        print(f"| {name} | {ours_result} | {ours.cache_info().misses} | {theirs_result} | {theirs_traces} |")
    thunder_total = f"{totals['thunder']}/{len(all_cases)}" if thunder is not None else "not installed"
    print(
        f"\nall calls right: symscalar {totals['symscalar']}/{len(all_cases)}, thunder symbolic values {thunder_total}"
    )


if __name__ == "__main__":
    main()
