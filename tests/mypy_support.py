"""Helpers shared by the mypy test modules: run an expensive checker once per pytest session."""

from __future__ import annotations

import fcntl
import os
import pathlib
from collections.abc import Callable

import pytest


def session_root(factory: pytest.TempPathFactory) -> pathlib.Path:
    """The session's temporary root, the same folder in every xdist worker of one session.

    xdist gives each worker the basetemp ``<session basetemp>/popen-<worker id>``; anything else
    (no xdist, or a pytest started by a test inside a worker, which inherits
    ``PYTEST_XDIST_WORKER``) has its own session basetemp."""
    root = factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return root.parent if worker and root.name == f"popen-{worker}" else root


def session_once(factory: pytest.TempPathFactory, name: str, compute: Callable[[], str]) -> str:
    """``compute()`` once per pytest session: xdist workers share one result through a file in
    the session's temporary root, written under a lock by whichever worker comes first (the
    others wait for it). A new session has a new root, so a result never outlives its session."""
    root = session_root(factory)
    result, lock = root / f"{name}.out", root / f"{name}.lock"
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if not result.exists():
            result.write_text(compute())
    return result.read_text()
