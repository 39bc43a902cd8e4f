"""Shared test set-up: the `cuda` marker skips with a reason where there is no CUDA device."""

import pytest
import torch


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; this machine has none")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
