"""First-call cost of symscalar.jit: trace time against trace length, and a cold first call.

1. Trace time vs length: a fresh ``jit`` of an elementwise chain of N ops (sin, mul, add,
   cos, ...) on a 16x16 float32 CPU tensor; the first call traces, checks, compiles and runs.
   Without grad (forward only) and with grad (the input requires grad: forward, backward
   trace, forward-with-residuals, all checked; then one ``backward()``). Best of a few runs.
2. Cold first call: a fresh interpreter imports torch, then symscalar, then makes one jitted
   call with grad (``exp(sum(x * s, 0) + 1) @ relu(w)``, then ``backward()``); prints the
   time beyond ``import torch`` and whether ``torch._dynamo`` / sympy got imported (torch's
   Python meta path imports them: ~900 modules).

Targets (issue 13): cold first call <= 0.5 s beyond ``import torch``; first call of a
1000-op chain with grad <= 0.2 s. Times are printed as wall time and CPU time of the
process: on a shared machine the wall time of a single-threaded first call grows with the load.

Usage: ``python benchmarks/trace_time.py``. The cold run imports symscalar from the current
directory, so ``cd <other checkout> && python <this file>`` measures another version.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import torch

import symscalar

COLD = r"""
import json, sys, time
start = time.perf_counter()
import torch
after_torch, cpu_after_torch = time.perf_counter(), time.process_time()
import symscalar
after_import = time.perf_counter()
f = symscalar.jit(lambda x, w, s: torch.exp(torch.sum(x * s, 0) + 1) @ w.relu(), dynamic=["s"])
x = torch.randn(8, 8, requires_grad=True)
w = torch.randn(8, 4, requires_grad=True)
f(x, w, 0.5).sum().backward()
done, cpu_done = time.perf_counter(), time.process_time()
print(json.dumps({
    "cpu beyond torch": cpu_done - cpu_after_torch,
    "import torch": after_torch - start,
    "import symscalar": after_import - after_torch,
    "first call": done - after_import,
    "torch._dynamo": "torch._dynamo" in sys.modules,
    "sympy": "sympy" in sys.modules,
}))
"""


def chain(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(n):
        k = i % 4
        x = torch.sin(x) if k == 0 else x * 1.5 if k == 1 else x + 0.25 if k == 2 else torch.cos(x)
    return x


def first_call_s(n: int, grad: bool, repeats: int) -> tuple[float, float]:
    """Best wall time and best CPU time of this process (what a loaded machine inflates
    least: other processes' time is not counted)."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeats):
        f = symscalar.jit(lambda x: chain(x, n))
        x = torch.randn(16, 16, requires_grad=grad)
        start, start_cpu = time.perf_counter(), time.process_time()
        out = f(x)
        if grad:
            out.sum().backward()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    return best, best_cpu


def cold(repeats: int) -> dict[str, float]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    runs = []
    for _ in range(repeats):
        result = subprocess.run([sys.executable, "-c", COLD], env=env, capture_output=True, text=True, check=True)
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda r: r["import symscalar"] + r["first call"])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="*", default=[10, 100, 1000, 5000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        "first call of a fresh jit of an N-op elementwise chain (16x16 float32, CPU), seconds: "
        f"wall / CPU time of this process; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'N':>6} {'forward':>15} {'with grad':>15}")
    for n in args.n:
        repeats = args.repeats if n <= 1000 else 1
        (fw, fc), (gw, gc) = first_call_s(n, False, repeats), first_call_s(n, True, repeats)
        print(f"{n:>6} {fw:>7.3f} / {fc:<5.3f} {gw:>7.3f} / {gc:<5.3f}")
    r = cold(args.repeats)
    beyond = r["import symscalar"] + r["first call"]
    print()
    print(
        f"cold process: import torch {r['import torch']:.2f} s, import symscalar "
        f"{r['import symscalar']:.2f} s, first call with grad {r['first call']:.2f} s "
        f"-> {beyond:.2f} s beyond import torch (CPU time {r['cpu beyond torch']:.2f} s; target <= 0.5 s); "
        f"torch._dynamo imported: {r['torch._dynamo']}, sympy imported: {r['sympy']}"
    )


if __name__ == "__main__":
    main()
