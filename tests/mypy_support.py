"""Helpers shared by the mypy test modules: run an expensive checker once per pytest session."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable

import pytest


def session_once(factory: pytest.TempPathFactory, name: str, compute: Callable[[], str]) -> str:
    """``compute()`` once per pytest session: xdist workers share one result through a file in
    the session's temporary root, written under a lock by whichever worker comes first."""
    root = factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        root = root.parent  # the workers' folders sit side by side in the session's root
    result, lock = root / f"{name}.out", root / f"{name}.lock"
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if not result.exists():
            result.write_text(compute())
    return result.read_text()
