"""``model.generate`` side by side: eager, ``symscalar.jit`` and ``torch.compile``, static KV cache.

A tiny random-init Llama (GQA) generates greedily with HF's static-cache recipe
(``cache_implementation="static"``, ``model.forward`` replaced by the compiled one) for each
way of running forward. Printed per way: the first generate call's seconds (tracing or
compiling included), the number of programs it made, the warm first-token latency (a
``max_new_tokens=1`` generate: the prefill) and the warm decode speed in tokens/s
(``(N - 1) / (t(N) - t(1))`` over ``--new-tokens`` N), with the tokens checked equal to eager's.
``--compile`` adds ``torch.compile`` (HF's recipe: ``fullgraph=True``, Inductor; its first call
compiles for minutes on a CPU; ``--compile-backend eager`` times Dynamo alone). Runs in under 2
minutes on a laptop CPU with the defaults.
"""

from __future__ import annotations

import argparse
import copy
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
import transformers

from symscalar.integrations.transformers import jit_for_generate


def tiny_llama(hidden: int, layers: int) -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=512,
        max_position_embeddings=512,
        bos_token_id=1,
        eos_token_id=None,
        pad_token_id=0,
    )
    return transformers.LlamaForCausalLM(config).eval()


CLOCK = time.perf_counter  # --clock cpu: time.process_time


def generate(model: Any, ids: torch.Tensor, new_tokens: int) -> tuple[torch.Tensor, float]:
    start = CLOCK()
    with torch.no_grad():
        out = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            cache_implementation="static",
        )
    return out, CLOCK() - start


def with_torch_compile(backend: str) -> Callable[[Any], Any]:
    def prepare(model: Any) -> Any:
        model.forward = torch.compile(model.forward, backend=backend, fullgraph=True)
        return model

    return prepare


def measure(model: Any, ids: torch.Tensor, new_tokens: int, repeat: int) -> dict[str, Any]:
    tokens, first = generate(model, ids, new_tokens)
    info = getattr(model.forward, "cache_info", None)
    programs = info().misses if info is not None else None
    prefill = min(generate(model, ids, 1)[1] for _ in range(repeat))
    full = min(generate(model, ids, new_tokens)[1] for _ in range(repeat))
    return {
        "tokens": tokens,
        "first": first,
        "programs": programs,
        "prefill_ms": prefill * 1e3,
        "tokens_s": (new_tokens - 1) / max(full - prefill, 1e-9),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compile-backend", default="inductor")
    parser.add_argument("--compile", action="store_true", help="add torch.compile (minutes of compiling)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: steadier on a shared CPU)")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: latency; cpu: this process's CPU time (with one thread the work done, steadier on a busy machine)",
    )
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore")
    base = tiny_llama(args.hidden, args.layers)
    ids = torch.randint(3, 512, (args.batch, args.prompt), generator=torch.Generator().manual_seed(1))
    ways: list[tuple[str, Callable[[Any], Any]]] = [("eager", lambda m: m), ("symscalar.jit", jit_for_generate)]
    if args.compile:
        ways.append((f"torch.compile ({args.compile_backend})", with_torch_compile(args.compile_backend)))
    print(
        f"Llama hidden={args.hidden} layers={args.layers} batch={args.batch} prompt={args.prompt} "
        f"new tokens={args.new_tokens}, static cache, torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{args.clock} clock"
    )
    print(f"{'forward':<26} {'first call s':>12} {'programs':>8} {'first token ms':>14} {'tokens/s':>9} {'tokens':>7}")
    expected = None
    for label, prepare in ways:
        model = prepare(copy.deepcopy(base))
        r = measure(model, ids, args.new_tokens, args.repeat)
        expected = r["tokens"] if expected is None else expected
        same = "equal" if torch.equal(r["tokens"], expected) else "DIFFER"
        programs = "-" if r["programs"] is None else str(r["programs"])
        print(f"{label:<26} {r['first']:>12.2f} {programs:>8} {r['prefill_ms']:>14.1f} {r['tokens_s']:>9.0f} {same:>7}")


if __name__ == "__main__":
    main()
