"""Every keyword of a torch factory spelling is honoured or refused, never dropped (issue 22):
each spelling is called with each keyword symscalar does not model, side by side with eager."""

from __future__ import annotations

import pytest
import torch

import symscalar
from symscalar.errors import UnsupportedOperationError

# (name, call(x, **keywords)): every factory spelling a traced function may use
SPELLINGS = {
    "torch.zeros": lambda x, **kw: torch.zeros(2, 3, **kw) + x.sum(),
    "torch.ones": lambda x, **kw: torch.ones((2, 3), **kw) + x.sum(),
    "torch.full": lambda x, **kw: torch.full((2, 3), 1.5, **kw) + x.sum(),
    "torch.arange": lambda x, **kw: torch.arange(6, **kw) + x.sum(),
    "torch.zeros_like": lambda x, **kw: torch.zeros_like(x, **kw),
    "torch.ones_like": lambda x, **kw: torch.ones_like(x, **kw),
    "torch.full_like": lambda x, **kw: torch.full_like(x, 2.0, **kw),
    "torch.rand": lambda x, **kw: torch.rand(2, 3, **kw) * 0 + x.sum(),
    "torch.randn": lambda x, **kw: torch.randn(2, 3, **kw) * 0 + x.sum(),
    "torch.rand_like": lambda x, **kw: torch.rand_like(x, **kw) * 0,
    "torch.randn_like": lambda x, **kw: torch.randn_like(x, **kw) * 0,
    "Tensor.new_zeros": lambda x, **kw: x.new_zeros((2, 3), **kw),
    "Tensor.new_ones": lambda x, **kw: x.new_ones(2, 3, **kw),
    "Tensor.new_full": lambda x, **kw: x.new_full((2, 3), 3.0, **kw),
    # uninitialized memory: any values are eager's, so only what the result says about itself counts
    "torch.empty": lambda x, **kw: torch.empty(2, 3, **kw) + x.sum(),
    "torch.empty_like": lambda x, **kw: torch.empty_like(x, **kw),
    "Tensor.new_empty": lambda x, **kw: x.new_empty((2, 3), **kw),
}
LIKE = {
    "torch.zeros_like",
    "torch.ones_like",
    "torch.full_like",
    "torch.rand_like",
    "torch.randn_like",
    "torch.empty_like",
}
UNINITIALIZED = {"torch.empty", "torch.empty_like", "Tensor.new_empty"}
KEYWORDS = [
    {"requires_grad": True},
    {"requires_grad": False},
    {"layout": torch.sparse_coo},
    {"layout": torch.strided},
    {"pin_memory": False},
    {"memory_format": torch.channels_last},
    {"memory_format": torch.preserve_format},
]


def _accepts(name: str, keywords: dict) -> bool:
    """Whether torch's own signature of the spelling takes the keyword."""
    key = next(iter(keywords))
    if key == "memory_format":
        return name in LIKE
    if key == "pin_memory":
        return name not in {"torch.rand_like", "torch.randn_like", "torch.empty_like"}
    return True


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_factory_keywords_are_honoured_or_refused(name: str) -> None:
    call = SPELLINGS[name]
    x = torch.ones(2, 3)
    x4 = torch.ones(1, 2, 3, 3)  # channels_last needs 4 dims
    for keywords in KEYWORDS:
        if not _accepts(name, keywords):
            continue
        arg = x4 if keywords.get("memory_format") is torch.channels_last else x
        try:
            eager = call(arg, **keywords)
        except (RuntimeError, TypeError, NotImplementedError):
            continue  # torch refuses this combination itself
        jitted = symscalar.jit(lambda t: call(t, **keywords))
        try:
            mine = jitted(arg)
        except UnsupportedOperationError as e:
            assert next(iter(keywords)) in str(e), (name, keywords, e)
            continue
        # honoured: everything eager's result says about itself matches
        assert mine.requires_grad == eager.requires_grad, (name, keywords)
        assert mine.layout == eager.layout, (name, keywords)
        assert mine.dtype == eager.dtype and mine.shape == eager.shape, (name, keywords)
        assert mine.stride() == eager.stride(), (name, keywords)
        if not name.startswith(("torch.rand", "torch.randn")) and name not in UNINITIALIZED:
            torch.testing.assert_close(mine, eager)
