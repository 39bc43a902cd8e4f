"""Shared test set-up.

- The `cuda` marker skips with a reason where there is no CUDA device.
- `make test-fast` (tests/fast_tier.py has the rules): under `-m`, a module whose module-level
  `pytestmark` already deselects every test it could hold is not imported; each parametrized
  test with more than `SAMPLE` cases marks the cases outside a fixed sample `unsampled`.
  Without `-m` (`make test`, CI) every module is collected and every case runs.
- `thunder_opinfos`: thunder's OpInfo samples, for the sweeps (marked slow) that use them.
- Each xdist worker gives torch its share of the cores, so `-n 2` on two cores does not run
  four busy intra-op threads.

torch is imported inside the hooks, not here: the xdist controller loads this file too and
never runs a test; it imports symscalar (and so torch) once, before the workers start, only so
that the warnings workers report can be unpickled from several threads (`pytest_configure`).
"""

from __future__ import annotations

import os
import pathlib
from collections import defaultdict
from typing import Any

import pytest

from tests.fast_tier import module_marks, never_selected, unsampled


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        import torch  # noqa: PLC0415 - not at the top: the xdist controller needs no torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workerinput["workercount"])))
    elif config.getoption("numprocesses", None):
        # The xdist controller imports the module of a warning a worker reports, in the receiver
        # thread of that worker's gateway: two workers reporting symscalar warnings at once
        # import symscalar in two threads, and the second sees a partially initialized module
        # (seen once in CI: "cannot import name 'Traced' from partially initialized module
        # 'symscalar.types'"). Imported here, before any worker starts, those are lookups.
        import symscalar  # noqa: F401, PLC0415 - the controller's one import, before the workers


def pytest_ignore_collect(collection_path: pathlib.Path, config: pytest.Config) -> bool | None:
    markexpr = config.option.markexpr
    if not markexpr or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    marks = module_marks(collection_path.read_text())
    return True if marks and never_selected(markexpr, marks) else None


@pytest.fixture(scope="session")
def thunder_opinfos() -> Any:
    """lightning-thunder's OpInfo database (``thunder.tests.opinfos``), imported by the first
    test that asks: importing thunder costs a test worker seconds, so only the slow sample
    sweeps use it and modules never import it at the top."""
    return pytest.importorskip("thunder.tests.opinfos", reason="lightning-thunder supplies the samples")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_unsampled(items)
    skip_cuda_without_a_device(items)


def mark_unsampled(items: list[pytest.Item]) -> None:
    cases: defaultdict[tuple[str, str], dict[str, pytest.Function]] = defaultdict(dict)
    for item in items:
        if isinstance(item, pytest.Function) and hasattr(item, "callspec"):
            cases[item.parent.nodeid if item.parent else "", item.originalname][item.callspec.id] = item
    for group in cases.values():
        for case in unsampled(group):
            group[case].add_marker(pytest.mark.unsampled)


def skip_cuda_without_a_device(items: list[pytest.Item]) -> None:
    cuda_items = [item for item in items if "cuda" in item.keywords]
    if not cuda_items:
        return
    import torch  # noqa: PLC0415 - not at the top: the xdist controller needs no torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; this machine has none")
    for item in cuda_items:
        item.add_marker(skip)
