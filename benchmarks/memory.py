"""Peak memory of an elementwise chain and of causal attention: eager torch against
symscalar.jit (torch backend, CPU).

``chain(x)`` applies N elementwise ops (sin, mul, add, cos, ...) to a 4 MiB float32 tensor.
Eager code rebinds ``x`` at each step, so only a couple of temporaries are alive at once; a
generated program that keeps every intermediate in a local until it returns holds N of them.

``attention`` is ``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` with q, k, v of
2 x 4 x L x 64 float32 (N is L): eager's CPU flash kernels keep O(L) per head for the backward
(the output and log-sum-exp rows), a composition of matmul and softmax keeps the L x L weights.

How it is measured: CPU tensors have no allocator statistics (``torch.cuda.max_memory_allocated``
is CUDA-only and tracemalloc does not see torch's allocations), so each measurement runs in a
fresh subprocess with glibc's mmap threshold pinned at 128 KiB (``MALLOC_MMAP_THRESHOLD_``):
every tensor buffer is then its own mmap, returned to the OS when freed, and the process's
resident set follows the live tensor bytes. The subprocess warms up (the jitted function
traces), resets the peak (``/proc/self/clear_refs``), makes one call and reports
``VmHWM - VmRSS`` before the call, in MiB. Linux only.

Modes: ``forward`` (under no_grad) and ``fwd+bwd`` (input requires grad; forward, then
``out.sum().backward()``).

Usage: ``python benchmarks/memory.py``. The workers import symscalar from the current
directory, so ``cd <other checkout> && python <this file>`` measures another version (e.g. the
one before generated code freed its temporaries).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ELEMENTS = 1 << 20  # 4 MiB of float32

WORKER = r"""
import json, sys
import torch
import symscalar

def chain(x, n):
    for i in range(n):
        k = i % 4
        if k == 0:
            x = torch.sin(x)
        elif k == 1:
            x = x * 1.5
        elif k == 2:
            x = x + 0.25
        else:
            x = torch.cos(x)
    return x

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)

which, case, n, mode, elements = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
grad = mode == "fwd+bwd"
if case == "chain":
    body = lambda x: chain(x, n)
    inputs = [torch.randn(elements, requires_grad=grad)]
else:
    body = lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    inputs = [torch.randn(2, 4, n, 64, requires_grad=grad) for _ in range(3)]
fn = body if which == "eager" else symscalar.jit(body)

def step():
    if mode == "forward":
        with torch.no_grad():
            out = fn(*inputs)
    else:
        out = fn(*inputs)
        out.sum().backward()
    return out

for _ in range(2):
    step()
for x in inputs:
    x.grad = None
torch.zeros(1)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
out = step()
print(json.dumps((status("VmHWM") - before) / 2**20))
"""


def measure(which: str, case: str, n: int, mode: str) -> float:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072", "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-c", WORKER, which, case, str(n), mode, str(ELEMENTS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(result.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="*", default=[10, 100])
    parser.add_argument("--seq", type=int, nargs="*", default=[1024], help="attention sequence lengths")
    args = parser.parse_args()
    mib = ELEMENTS * 4 / 2**20
    print(
        f"peak memory above the inputs, MiB (chain: N elementwise ops on a {mib:g} MiB tensor; "
        "attention: causal SDPA, 2 x 4 x N x 64 float32)"
    )
    print(f"{'case':<10} {'mode':<9} {'N':>5} {'eager':>8} {'symscalar':>10} {'ratio':>6}")
    rows = [("chain", n) for n in args.n] + [("attention", n) for n in args.seq]
    for mode in ("forward", "fwd+bwd"):
        for case, n in rows:
            eager = measure("eager", case, n, mode)
            jitted = measure("symscalar", case, n, mode)
            ratio = jitted / max(eager, 1e-9)
            print(f"{case:<10} {mode:<9} {n:>5} {eager:>8.1f} {jitted:>10.1f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
