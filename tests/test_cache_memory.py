"""A function that keeps tracing (a new shape per call) under ``max_entries`` holds bounded
memory: evicted entries, explain() records and remembered metas are not kept (issue 22)."""

from __future__ import annotations

import gc
import tracemalloc
import warnings

import pytest
import torch

import symscalar
from symscalar import explain


@pytest.mark.slow
def test_memory_is_flat_over_1000_traces_with_max_entries_16() -> None:
    f = symscalar.jit(lambda x: x + 1, max_entries=16)
    sizes = iter(range(1, 10_000))

    def trace(n: int) -> int:
        for _ in range(n):
            size = next(sizes)
            x = torch.full((size,), 0.5)
            torch.testing.assert_close(f(x), x + 1)
        gc.collect()
        return tracemalloc.get_traced_memory()[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", explain.TraceLimitWarning)
        tracemalloc.start()
        try:
            # past the bounded caches' sizes (256 metas per primitive, the explain history), also in
            # a worker that traced many other functions before
            warm = trace(600)
            grown = trace(1000) - warm
        finally:
            tracemalloc.stop()
    info = f.cache_info()
    assert info.entries == 16 and info.misses == 1600 and info.evictions == 1600 - 16
    # unbounded, each trace kept ~4 KB (facts, explain records, metas); bounded, it is noise
    assert grown < 100 * 1000, f"{grown} bytes over 1000 traces"
    explanation = f.explain()
    assert len(explanation) == explain.HISTORY and explanation.total == 1600
    assert explanation[-1].number == 1600
    assert str(explanation).startswith(f"({1600 - explain.HISTORY} earlier traces not kept)")
