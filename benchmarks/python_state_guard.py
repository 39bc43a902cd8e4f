"""Per-call cost of checking the plain Python values a trace read (issue 22).

Every cache entry checks that the plain values (None, numbers, bools, strings, tuples of them)
of the modules and objects its state guard reads are still the values it was traced with
(``symscalar/_jit/pystate.py``). This script jits a 12-layer GPT-2 (transformers, tiny width,
random init, eval mode, no_grad) and prints per-call µs of eager and ``symscalar.jit``, the
entry's whole state guard, and how many plain values it checks. Runs in well under a minute.
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

import torch
import transformers

import symscalar


def per_call_us(fn: Any, args: tuple[Any, ...], n: int, repeats: int) -> float:
    for _ in range(10):
        fn(*args)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def gpt2(layers: int) -> torch.nn.Module:
    cfg = transformers.GPT2Config(
        vocab_size=64, n_positions=32, n_embd=16, n_layer=layers, n_head=2, bos_token_id=0, eos_token_id=0
    )
    return transformers.GPT2LMHeadModel(cfg).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = gpt2(12)
    ids = torch.randint(0, 64, (2, 16))

    def loss(ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids, labels=ids).loss

    jitted = symscalar.jit(loss)
    with torch.no_grad():
        eager = per_call_us(loss, (ids,), args.calls, args.repeats)
        mine = per_call_us(jitted, (ids,), args.calls, args.repeats)
        entry = jitted._symscalar_state.last_entry()
        run = entry.run
        namespace = dict(run.__globals__, _ss_run=lambda *a: None)
        exec(run.__source__, namespace)  # noqa: S102 - the entry's own generated code
        _, call_args = jitted._symscalar_state.key_and_args(ids)
        # the same guard with each plain-value check replaced by True, timed alternately
        source, checks = _PLAIN_CHECK.subn("True", run.__source__)
        source, more = _PLAIN_IS.subn("True", source)
        without = dict(namespace)
        exec(source, without)  # noqa: S102
        guard, guard_without = [], []
        for _ in range(args.repeats):
            guard.append(per_call_us(namespace["_ss_entry"], call_args, args.calls * 20, 1))
            guard_without.append(per_call_us(without["_ss_entry"], call_args, args.calls * 20, 1))
    plain = min(guard) - min(guard_without)
    print(
        "| model | eager (µs) | symscalar.jit (µs) | vs eager | state guard (µs) | of which plain values (µs) "
        "| plain values checked |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| GPT-2, 12 layers, width 16 | {eager:.0f} | {mine:.0f} | {mine / eager:.2f}x | {min(guard):.1f} "
        f"| {plain:.1f} ({plain / eager:.1%} of eager) | {checks + more} |"
    )


_PLAIN_CHECK = re.compile(r"\([^()]* is _ss_A\d+ or _ss_same\([^()]*\)\)")
_PLAIN_IS = re.compile(r"_d\d+\[[^\]]+\] is (?:None|True|False)")


if __name__ == "__main__":
    main()
