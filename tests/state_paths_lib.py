"""A user Python module for tests/test_state_paths.py: tensors held in its globals, in a
nested plain object, and read by its helper functions (``import state_paths_lib as lib``;
``lib.W``, ``lib.helper(x)``)."""

from __future__ import annotations

import torch

W = torch.ones(3)


class Inner:
    def __init__(self) -> None:
        self.w = torch.ones(3)


class Holder:
    def __init__(self) -> None:
        self.inner = Inner()
        self.items = [torch.ones(3)]


HOLDER = Holder()


def helper(x: torch.Tensor) -> torch.Tensor:
    return x * W


def nested_helper(x: torch.Tensor) -> torch.Tensor:
    return helper(x) + HOLDER.inner.w
