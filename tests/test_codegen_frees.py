"""Generated torch-backend code deletes each tensor after its last use (peak memory follows
eager's), and results stay equal to eager: forward, forward-with-residuals and backward."""

import re

import torch

import symscalar
from symscalar import DynamicFloat, torch_backend
from symscalar.grad import vjp_traces


def chain(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    for i in range(12):
        x = torch.sin(x) * s if i % 2 else torch.cos(x) + s
    return x


def _alive_counts(source: str) -> int:
    """Simulate the generated function: the largest number of tensor locals alive at once."""
    alive: set[str] = set()
    peak = 0
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("def "):
            alive.update(re.findall(r"\bt\d+\b", line))
        elif line.startswith("del "):
            for name in line[4:].split(", "):
                assert name in alive, f"{name} deleted but not alive"
                alive.remove(name)
        elif " = " in line and not line.startswith("#"):
            alive.update(re.findall(r"\bt\d+\b", line.split(" = ")[0]))
        peak = max(peak, len(alive))
    return peak


def test_forward_source_frees_each_temporary_and_matches_eager():
    f = symscalar.jit(chain)
    x = torch.randn(5, 3)
    for s in (0.5, -2.0):
        torch.testing.assert_close(f(x, s), chain(x, s))
    source = torch_backend.compile_trace(f.last_trace()).__source__
    assert "del t" in source
    # 24 tensor equations, but never more than the input, an argument and a result alive
    assert _alive_counts(source) <= 3, source


def test_no_variable_is_used_after_it_is_deleted():
    f = symscalar.jit(lambda x, y: (torch.exp(x) * y, torch.exp(x).sum(0), x.t() @ y))
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    outs = f(x, y)
    source = torch_backend.compile_trace(f.last_trace()).__source__
    deleted: set[str] = set()
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("del "):
            deleted.update(line[4:].split(", "))
        else:
            used = set(re.findall(r"\bt\d+\b", line.split("#")[0]))
            assert not used & deleted, line
    ref = (torch.exp(x) * y, torch.exp(x).sum(0), x.t() @ y)
    for a, b in zip(outs, ref):
        torch.testing.assert_close(a, b)


def test_residual_and_backward_programs_free_and_gradients_match():
    f = symscalar.jit(chain)
    x = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    for s in (0.5, 1.5):
        f(x, s).sum().backward()
        chain(x_ref, s).sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad)
    forward, backward, _ = vjp_traces(f.last_trace(), [0])
    for trace in (forward, backward):
        source = torch_backend.compile_trace(trace).__source__
        assert "del t" in source, source
    # residuals are outputs of the forward-with-residuals program: never deleted
    forward_source = torch_backend.compile_trace(forward).__source__
    returned = set(re.findall(r"\bt\d+\b", forward_source.splitlines()[-1]))
    deleted = {
        n
        for line in forward_source.splitlines()
        if line.strip().startswith("del ")
        for n in line.strip()[4:].split(", ")
    }
    assert not returned & deleted


def test_printed_trace_has_no_dels():
    f = symscalar.jit(chain)
    f(torch.randn(3), 1.0)
    assert "del " not in str(f.last_trace())
