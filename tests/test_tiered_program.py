"""A long trace runs interpreted on its first call and as generated code from its second
(torch_backend's tiering): both give eager's results, forward and backward, and the
interpreter frees each tensor after its last use as the generated code does."""

import weakref

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, torch_backend
from symscalar.grad import vjp_traces
from symscalar.ops.elementwise import sin_p

N = torch_backend.INTERPRET_FIRST_CALL_ABOVE + 40


def chain(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    for i in range(N):
        x = torch.sin(x) * s if i % 2 else torch.cos(x) + s
    return x


def test_long_trace_is_tiered_and_first_and_later_calls_match_eager():
    f = symscalar.jit(chain)
    x = torch.randn(4, 3, dtype=torch.float64)
    for s in (0.5, -1.25, 2.0):  # interpreted, then compiled, then a cache hit
        torch.testing.assert_close(f(x, s), chain(x, s))
    program = torch_backend.compile_trace(f.last_trace())
    assert "del t" in program.__source__
    first = program(x, 0.75)  # interpreted
    second = program(x, 0.75)  # generated code
    torch.testing.assert_close(first, second, rtol=0, atol=0)


def test_long_trace_gradients_match_autograd_on_every_call():
    f = symscalar.jit(chain)
    x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    for s in (0.5, 1.5, -0.5):
        x.grad = x_ref.grad = None
        f(x, s).sum().backward()
        chain(x_ref, s).sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad)
    _, backward, _ = vjp_traces(f.last_trace(), [0])
    assert len(backward.eqns) > torch_backend.INTERPRET_FIRST_CALL_ABOVE


def test_interpreter_frees_each_temporary(monkeypatch: pytest.MonkeyPatch):
    results: list[weakref.ref[torch.Tensor]] = []
    peak = [0]

    def recording_sin(x: torch.Tensor) -> torch.Tensor:
        out = torch.sin(x)
        results.append(weakref.ref(out))
        peak[0] = max(peak[0], sum(r() is not None for r in results))
        return out

    f = symscalar.jit(lambda x: chain_of_sines(x))
    x = torch.randn(8)
    f(x)
    monkeypatch.setattr(sin_p, "impl", recording_sin)
    program = torch_backend.compile_trace(f.last_trace())
    out = program(x)[0]  # the first call: interpreted
    torch.testing.assert_close(out, chain_of_sines(x))
    assert len(results) == N
    assert peak[0] <= 2  # the argument of the current sin and its result


def chain_of_sines(x: torch.Tensor) -> torch.Tensor:
    for _ in range(N):
        x = torch.sin(x)
    return x
