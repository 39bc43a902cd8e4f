"""Concurrent calls from several threads: right results, a consistent cache."""

import threading

import torch

import symscalar
from symscalar import DynamicFloat, StaticInt


def test_threaded_calls_with_different_dynamic_and_static_values():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat, d: StaticInt) -> torch.Tensor:
        return torch.exp(torch.sum(x * s, d) / 4)

    x = torch.randn(6, 5, dtype=torch.float64)
    n_threads, n_calls = 8, 60
    errors: list[str] = []
    barrier = threading.Barrier(n_threads)

    def worker(tid: int) -> None:
        barrier.wait()
        for i in range(n_calls):
            s = tid + i / 10
            d = (tid + i) % 2
            out = f(x, s, d)
            ref = torch.exp(torch.sum(x * s, d) / 4)
            if not torch.allclose(out, ref):
                errors.append(f"thread {tid} call {i}: wrong result")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    info = f.cache_info()
    assert info.misses == 2 and info.entries == 2  # one trace per static dim, none repeated
    assert info.hits + info.misses == n_threads * n_calls


def test_threaded_calls_with_specialize_guards():
    @symscalar.jit
    def f(x: torch.Tensor, n: symscalar.DynamicInt) -> torch.Tensor:
        return torch.sum(x, symscalar.specialize(n % 3) % 2) * n

    x = torch.randn(4, 4)
    errors: list[str] = []

    def worker(tid: int) -> None:
        for i in range(40):
            n = tid * 40 + i
            if not torch.allclose(f(x, n), torch.sum(x, (n % 3) % 2) * n):
                errors.append(f"{tid}/{i}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert f.cache_info().misses == 3  # one per guard value 0, 1, 2
