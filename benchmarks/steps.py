"""Training-step time of an MLP, a nanoGPT block and a litgpt block: eager against symscalar.jit
(and thunder.jit / torch.compile / symscalar's Inductor backend on request), on CPU.

Unlike ``benchmarks/models.py`` (tiny configs: per-op overhead dominates), the sizes here make
the kernels matter, so the table shows whether the torch backend's lowerings (fused ``addmm``,
native backward kernels, gradients in eager's layout) keep up with eager's.

Each step: ``loss = fn(x, y)``, ``loss.backward()`` (parameters accumulate ``.grad``, which is
reset to None before each step, as ``optimizer.zero_grad()`` does). Executors are timed
interleaved (one step each, in turn) after warm-up; the table gives the median step in ms and
the ratio to eager. With ``--compile`` or ``--inductor`` a second table gives each executor's
first step (tracing and compiling included: ``backend="inductor"`` runs here with
``compile_after=0``, so its first step compiles the forward and the backward).

Targets (issue 13): ≤ 1.05x eager on the MLP, ≤ 1.1x on the nanoGPT and litgpt blocks.

Usage: ``python benchmarks/steps.py [--steps N] [--thunder] [--compile] [--inductor]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar.inductor_backend import InductorBackend
from tests.test_models import NanoBlock

try:  # optional: the litgpt row and the thunder column
    import litgpt
    from litgpt.model import build_rope_cache
except ImportError:
    litgpt = None
try:
    import thunder
except ImportError:
    thunder = None

warnings.filterwarnings("ignore")


class MLP(nn.Module):
    def __init__(self, width: int = 512, hidden: int = 2048) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(width, hidden), nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return ((self.fc2(F.gelu(self.fc1(x))) - y) ** 2).mean()


class NanoGPTBlock(nn.Module):
    def __init__(self, width: int = 256, heads: int = 4, seq: int = 64) -> None:
        super().__init__()
        self.block = NanoBlock(width, heads, seq, 0.0, flash=True)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (self.block(x) - y).pow(2).mean()


class LitGPTBlock(nn.Module):
    def __init__(self, width: int = 256, heads: int = 4, seq: int = 64) -> None:
        super().__init__()
        if litgpt is None:
            raise ImportError("litgpt is not installed", name="litgpt")
        config = litgpt.Config(
            n_layer=1,
            n_head=heads,
            n_query_groups=heads // 2,
            n_embd=width,
            block_size=seq,
            rotary_percentage=1.0,
            bias=False,
            norm_class_name="RMSNorm",
            mlp_class_name="LLaMAMLP",
            intermediate_size=4 * width,
        )
        self.block = litgpt.model.Block(config, block_idx=0)
        cos, sin = build_rope_cache(seq, n_elem=config.rope_n_elem)
        self.register_buffer("cos", cos.unsqueeze(0))
        self.register_buffer("sin", sin.unsqueeze(0))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (self.block(x, self.cos, self.sin) - y).pow(2).mean()


CASES: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "MLP 512-2048-512, batch 256": (MLP, (256, 512)),
    "nanoGPT block, 8x64x256": (NanoGPTBlock, (8, 64, 256)),
    "litgpt block (GQA, RMSNorm, LLaMAMLP), 8x64x256": (LitGPTBlock, (8, 64, 256)),
}


def executors(
    with_thunder: bool, with_compile: bool, with_inductor: bool = False
) -> dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]]:
    found: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
        "eager": lambda fn: fn,
        "symscalar.jit": symscalar.jit,
    }
    if with_inductor:
        found["symscalar.jit inductor"] = lambda fn: symscalar.jit(fn, backend=InductorBackend(compile_after=0))
    if with_thunder and thunder is not None:
        found["thunder.jit"] = thunder.jit
    if with_compile:
        found["torch.compile"] = torch.compile
    return found


def make_step(module: nn.Module, executor: Callable[..., Any], x: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    fn = executor(module)
    params = list(module.parameters())

    def step() -> None:
        for p in params:
            p.grad = None
        fn(x, y).backward()

    return step


def measure(name: str, chosen: dict[str, Any], steps: int, first: dict[str, str] | None = None) -> list[str]:
    """The median step of each executor; ``first`` receives each one's first step."""
    make, shape = CASES[name]
    torch.manual_seed(0)
    try:
        module = make()
    except ImportError as e:
        return [f"skipped ({e.name} missing)"] * len(chosen)
    x, y = torch.randn(shape), torch.randn(shape)
    runners: dict[str, Callable[[], None] | str] = {}
    for label, executor in chosen.items():
        step = make_step(module, executor, x, y)
        try:
            start = time.perf_counter()
            step()
            if first is not None:
                first[label] = f"{time.perf_counter() - start:.2f} s"
            for _ in range(2):
                step()
            runners[label] = step
        except Exception as e:  # noqa: BLE001 - the table says which executor failed
            runners[label] = f"fails ({type(e).__name__})"
    times: dict[str, list[float]] = {k: [] for k, r in runners.items() if callable(r)}
    for _ in range(steps):
        for label in times:
            run = runners[label]
            assert callable(run)
            start = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - start)
    medians = {k: statistics.median(v) for k, v in times.items()}
    eager = medians["eager"]
    return [
        r if isinstance(r, str) else f"{1e3 * medians[k]:.1f} ms ({medians[k] / eager:.2f}x)"
        for k, r in runners.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--thunder", action="store_true")
    parser.add_argument("--compile", action="store_true", help="torch.compile (minutes to build on a small machine)")
    parser.add_argument("--inductor", action="store_true", help='symscalar.jit(backend="inductor") (minutes too)')
    args = parser.parse_args()
    chosen = executors(args.thunder, args.compile, args.inductor)
    print(
        f"fwd+bwd step, median of {args.steps} interleaved steps (ratio to eager); torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, CPU, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    print("| case | " + " | ".join(chosen) + " |")
    print("|---|" + "---:|" * len(chosen))
    if args.compile or args.inductor:
        # Inductor's once-per-process costs (importing it, checking the CPU's vector ISA by
        # compiling and running test programs) are paid here, not by whichever column is first
        torch.compile(lambda t: torch.sin(t) + 1)(torch.randn(4))
    firsts: dict[str, dict[str, str]] = {}
    for name in CASES:
        firsts[name] = {}
        print(f"| {name} | " + " | ".join(measure(name, chosen, args.steps, firsts[name])) + " |", flush=True)
    if args.compile or args.inductor:
        print("\nfirst step (trace + compile + run), seconds")
        print("| case | " + " | ".join(chosen) + " |")
        print("|---|" + "---:|" * len(chosen))
        for name, first in firsts.items():
            print(f"| {name} | " + " | ".join(first.get(label, "-") for label in chosen) + " |")


if __name__ == "__main__":
    main()
