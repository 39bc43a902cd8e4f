"""Running a test's worker on several gloo ranks on localhost: spawned processes, bounded and
self-terminating, their tracebacks reported by the test (tests/test_distributed*.py)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_ranks(worker: Callable[[int, int, Any], None], world: int, timeout: float = 240) -> None:
    """Run ``worker(rank, port, errors)`` in ``world`` spawned processes; a worker puts its
    traceback into ``errors`` before re-raising. Kills what is still running after
    ``timeout`` seconds; fails with every rank's traceback, or a nonzero exit code."""
    ctx = mp.get_context("spawn")
    errors = ctx.SimpleQueue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(rank, port, errors), daemon=True) for rank in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=timeout)
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert not found, "\n".join(found)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
