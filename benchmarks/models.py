"""Training-step time of real models: eager, symscalar.jit, thunder.jit, torch.compile and
symscalar's Inductor backend.

For each model of tests/test_models.py and tests/test_models_masks.py (small random-init
configs; the latter with a padding attention mask, and mixture-of-experts models) and each
executor: the first call (tracing/compiling included) of a forward+backward step, and the
median of the following steps, taken interleaved across the executors. One run, printed as a
markdown table; an executor that cannot run a model says why in a word. ``symscalar.jit inductor`` is
``symscalar.jit(backend=InductorBackend(compile_after=0))``: its first call compiles the
forward and the backward with Inductor, so its first-call seconds compare with torch.compile's.
Inductor's once-per-process costs (importing it, probing the CPU's vector ISA) are paid by a
warm-up compile before the table, not by the first row.
Run: ``.venv/bin/python benchmarks/models.py [--steps N] [--models a,b] [--executors a,b]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

import symscalar
from symscalar.inductor_backend import InductorBackend
from tests.test_models import MODELS as UNMASKED
from tests.test_models_masks import MASKED_MODELS, masked_batch

warnings.filterwarnings("ignore")

MODELS: dict[str, tuple[Callable[[], Any], Callable[[int], tuple[torch.Tensor, ...]], Callable[..., Any]]] = {
    **{name: entry[:3] for name, entry in UNMASKED.items()},
    **{f"{name}+mask": (make, masked_batch, loss_of) for name, (make, loss_of) in MASKED_MODELS.items()},
}
DEFAULT = [n for n in MODELS if n != "nanogpt_manual" and not (n.endswith("+mask") and n[:-5] in MODELS)]


def executors() -> dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]]:
    found: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
        "eager": lambda fn: fn,
        "symscalar.jit": symscalar.jit,
    }
    try:
        import thunder

        found["thunder.jit"] = thunder.jit
    except Exception:  # noqa: BLE001 - reported as a missing column
        pass
    found["torch.compile"] = torch.compile
    found["symscalar.jit inductor"] = lambda fn: symscalar.jit(fn, backend=InductorBackend(compile_after=0))
    return found


def make_step(name: str, executor: Callable[..., Any]) -> Callable[[], None]:
    """One fwd+bwd step of a fresh copy of model ``name`` (same seed: same weights) under ``executor``."""
    make, batch_of, loss_of = MODELS[name]
    torch.manual_seed(0)
    model = copy.deepcopy(make()).train()
    params = [p for p in model.parameters() if p.requires_grad]
    inputs, targets = batch_of(0)

    def loss_fn(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return loss_of(model, inputs, targets)

    compiled = executor(loss_fn)

    def step() -> None:
        torch.autograd.grad(compiled(inputs, targets), params, allow_unused=True)

    return step


def measure(name: str, chosen: dict[str, Callable[..., Any]], steps: int) -> list[str]:
    """Each executor's cell for model ``name``: the median step and the first call. The steps
    after the first calls are interleaved (one step of each executor in turn), so that a load
    from other processes slows every column alike and the ratios hold."""
    runners: dict[str, Callable[[], None]] = {}
    firsts: dict[str, float] = {}
    cells: dict[str, str] = {}
    for label, executor in chosen.items():
        step = make_step(name, executor)
        try:
            start = time.perf_counter()
            step()
            firsts[label] = time.perf_counter() - start
            step()  # a second call: a lazily compiling executor is settled after it
            runners[label] = step
        except Exception as e:  # noqa: BLE001 - the table says which executor failed
            cells[label] = f"fails ({type(e).__name__})"
    times: dict[str, list[float]] = {label: [] for label in runners}
    for _ in range(steps):
        for label, step in runners.items():
            start = time.perf_counter()
            step()
            times[label].append(time.perf_counter() - start)
    for label, samples in times.items():
        cells[label] = f"{1e3 * statistics.median(samples):.1f} ms / {firsts[label]:.2f} s"
    return [cells[label] for label in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--models", default=",".join(DEFAULT))
    parser.add_argument("--executors", default=None, help="comma-separated subset")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    chosen = executors()
    if args.executors:
        chosen = {k: v for k, v in chosen.items() if k in args.executors.split(",")}
    print(
        f"fwd+bwd step: median of {args.steps} interleaved steps / first call (trace or compile included); "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if {"torch.compile", "symscalar.jit inductor"} & set(chosen):
        torch.compile(lambda t: torch.sin(t) + 1)(torch.randn(4))  # Inductor's per-process costs
    print("| model | " + " | ".join(chosen) + " |")
    print("|---|" + "---|" * len(chosen))
    for name in args.models.split(","):
        cells = measure(name, chosen, args.steps)
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
