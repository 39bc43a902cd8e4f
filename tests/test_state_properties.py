"""Property-based: random small modules (Linear / LayerNorm / activation stacks, a forward that
branches on ``self.training``) and random sequences of {call, optimizer step, train/eval,
no_grad call, inference_mode call, autocast call, freeze/unfreeze a parameter, replace a
parameter} give eager's outputs, dtypes and every parameter's gradient (None-ness included)
at every step."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from state_support import Twin, assert_same_state, inputs
from torch import nn

pytestmark = pytest.mark.slow  # property-based: left out by `make test-fast`

WIDTH = 4
LAYERS = {
    "linear": lambda: nn.Linear(WIDTH, WIDTH),
    "linear-no-bias": lambda: nn.Linear(WIDTH, WIDTH, bias=False),
    "layer_norm": lambda: nn.LayerNorm(WIDTH),
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "scale": lambda: Scale(),
}


class Scale(nn.Module):
    """A parameter used differently in training and eval."""

    def __init__(self) -> None:
        super().__init__()
        self.s = nn.Parameter(torch.rand(WIDTH) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.s if self.training else x + self.s


ACTIONS = [
    "call",
    "call",
    "step",
    "train",
    "eval",
    "no_grad",
    "inference",
    "autocast",
    "freeze",
    "unfreeze",
    "replace",
]


def autocast_call(twin: Twin, x: torch.Tensor) -> None:
    """A bfloat16 autocast call (a mixed-precision validation pass): eager's dtype exactly,
    values within bfloat16 rounding (eager's fused addmm rounds once, matmul + add twice), and
    no state changed (compared exactly)."""
    with torch.autocast("cpu", torch.bfloat16):
        expected = twin.eager(x.clone())
        out = twin.jitted(x.clone())
    assert out.dtype == expected.dtype and out.requires_grad == expected.requires_grad
    torch.testing.assert_close(out.float(), expected.float(), rtol=3e-2, atol=3e-2)
    assert_same_state(twin.module, twin.eager)


def act(twin: Twin, action: str, index: int, dtype: torch.dtype) -> None:
    params = [name for name, _ in twin.eager.named_parameters()]
    name = params[index % len(params)] if params else None
    if action == "call":
        twin.call(inputs(3, WIDTH, dtype=dtype, requires_grad=index % 2 == 0))
    elif action == "no_grad":
        twin.call(inputs(3, WIDTH, dtype=dtype), mode=torch.no_grad)
    elif action == "inference":
        twin.call(inputs(3, WIDTH, dtype=dtype), mode=torch.inference_mode)
    elif action == "autocast":
        autocast_call(twin, inputs(3, WIDTH, dtype=dtype))
    elif action == "step":
        twin.step()
    elif action in ("train", "eval"):
        twin.both(lambda m: m.train(action == "train"))
    elif name is not None and action in ("freeze", "unfreeze"):
        twin.both(lambda m: m.get_parameter(name).requires_grad_(action == "unfreeze"))
    elif name is not None and action == "replace":
        value = torch.randn_like(twin.eager.get_parameter(name))
        for m in (twin.eager, twin.module):
            owner, _, attr = name.rpartition(".")
            setattr(m.get_submodule(owner), attr, nn.Parameter(value.clone()))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layers=st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=4),
    actions=st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 7)), min_size=1, max_size=10),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_random_modules_and_state_changes_match_eager(layers, actions, dtype):
    twin = Twin(lambda: nn.Sequential(*(LAYERS[name]() for name in layers)), dtype)
    for action, index in actions + [("call", 0)]:
        act(twin, action, index, dtype)
