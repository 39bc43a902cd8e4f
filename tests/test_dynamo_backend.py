"""torch.compile(..., backend="symscalar"): dynamo's graphs run through symscalar.jit.

Dynamo costs seconds per graph to capture, so these few tests are marked slow.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from symscalar import dynamo_backend

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def fresh_dynamo() -> None:
    torch._dynamo.reset()


def test_trains_side_by_side_with_eager() -> None:
    torch.manual_seed(0)
    eager = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 1))
    model = copy.deepcopy(eager)
    compiled = torch.compile(model, backend="symscalar")
    opt_eager = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 8), torch.randn(4, 1)
    for _ in range(3):
        loss = nn.functional.mse_loss(compiled(x), y)
        loss_eager = nn.functional.mse_loss(eager(x), y)
        loss.backward()
        loss_eager.backward()
        torch.testing.assert_close(loss, loss_eager)
        for p, q in zip(model.parameters(), eager.parameters()):
            assert p.grad is not None and q.grad is not None
            torch.testing.assert_close(p.grad, q.grad)
        opt.step()
        opt_eager.step()
        opt.zero_grad()
        opt_eager.zero_grad()
    for p, q in zip(model.parameters(), eager.parameters()):
        torch.testing.assert_close(p, q)


def test_a_float_dynamo_makes_dynamic_is_a_dynamic_float() -> None:
    graphs: list[object] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[object]) -> object:
        run = dynamo_backend.symscalar_backend(gm, example_inputs)
        graphs.append(run)
        return run

    def f(x: torch.Tensor, s: float) -> torch.Tensor:
        return torch.sin(x) * s + s

    compiled = torch.compile(f, backend=backend)
    x = torch.randn(3, 4)
    for s in (0.5, 1.5, -2.0, 3.25):  # dynamo specializes 0.5, then makes s dynamic
        torch.testing.assert_close(compiled(x, s), f(x, s))
    dynamic = [g for g in graphs if hasattr(g, "jitted")]
    assert len(dynamic) == 1, graphs
    jitted = dynamic[0].jitted  # type: ignore[attr-defined]
    # the three values after dynamo's recompile: one symscalar trace, s an input of it
    info = jitted.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    trace = jitted.last_trace()
    assert any(type(v).__name__ == "ScalarVar" and v.dtype is float for v in trace.inputs)
