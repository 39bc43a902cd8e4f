"""A ``torch.jit.script``'ed helper called inside a jitted function (issue 22): a scripted
function is traced through its Python function (values and every gradient are eager's); a
scripted function that reads ``torch.jit.is_scripting()`` and a scripted module are refused,
naming torch.jit.script and the fix."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import symscalar
from symscalar.errors import UnsupportedOperationError

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def _gelu_scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.nn.functional.gelu(x) * scale + x.sum(dim=-1, keepdim=True)


def _inner(x: torch.Tensor) -> torch.Tensor:
    return x * 2 if torch.jit.is_scripting() else x * 3


def _outer(x: torch.Tensor) -> torch.Tensor:
    return _inner(x) + 1


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x))


SCRIPTED = torch.jit.script(_gelu_scaled)


def _calls_scripted(x: torch.Tensor, w: torch.Tensor, scale: float) -> torch.Tensor:
    return SCRIPTED(x @ w, scale=scale).tanh()


def test_a_scripted_function_inside_is_traced_through_like_eager() -> None:
    jitted = symscalar.jit(_calls_scripted)
    w_e = torch.randn(3, 4, requires_grad=True)
    w_m = w_e.detach().clone().requires_grad_()
    for call, scale in enumerate((2.0, 0.5, 2.0)):
        x = torch.randn(2, 3, generator=torch.Generator().manual_seed(call))
        expected, got = _calls_scripted(x, w_e, scale), jitted(x, w_m, scale)
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got, expected)
        expected.sum().backward()
        got.sum().backward()
        torch.testing.assert_close(w_m.grad, w_e.grad)
    assert jitted.cache_info().misses == 2  # one trace per static scale


def test_a_scripted_function_outside_a_trace_still_runs_torchscript() -> None:
    x = torch.randn(2, 3)
    symscalar.jit(_calls_scripted)(x, torch.randn(3, 4), 1.0)  # patches installed and removed
    assert type(SCRIPTED).__call__ is torch.jit.ScriptFunction.__call__
    torch.testing.assert_close(SCRIPTED(x, 2.0), _gelu_scaled(x, 2.0))
    assert torch.equal(torch.jit.script(_outer)(x), x * 2 + 1)  # TorchScript's own branch


def test_a_scripted_function_that_reads_is_scripting_is_refused() -> None:
    scripted = torch.jit.script(_outer)
    refusal = r"torch\.jit\.script'ed function.*is_scripting.*Fix: call the Python function"
    with pytest.raises(UnsupportedOperationError, match=refusal):
        symscalar.jit(lambda x: scripted(x))(torch.randn(2))


def test_a_scripted_module_inside_is_refused_naming_the_fix() -> None:
    scripted = torch.jit.script(_Block())
    refusal = r"torch\.jit\.script'ed module \(_Block\).*Fix: call the Python module"
    with pytest.raises(UnsupportedOperationError, match=refusal):
        symscalar.jit(lambda x: scripted(x) + 1)(torch.randn(2, 3))

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = torch.jit.script(_Block())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(x) * 2

    with pytest.raises(UnsupportedOperationError, match=r"torch\.jit\.script'ed module \(_Block 'block'\)"):
        symscalar.jit(Outer())(torch.randn(2, 3))
