"""What a first call costs: metas are memoized by signature (tracing, check_trace of the
trace, its forward-with-residuals and its backward do not re-run them), and neither
``import symscalar`` nor a first jitted call with grad imports ``torch._dynamo`` or sympy
(torch's Python meta path does, ~900 modules). No timing here: see benchmarks/trace_time.py."""

import subprocess
import sys

import torch

import symscalar
from symscalar.ops.common import torch_meta
from symscalar.trace import PRIMITIVES, Primitive, ScalarVar, TensorVar, check_trace

CPU = torch.device("cpu")


def test_meta_runs_once_per_signature_through_trace_check_and_backward():
    calls = []
    inner = torch_meta(torch.sin)

    def counting_meta(*atoms, **params):
        calls.append(atoms)
        return inner(*atoms, **params)

    sin_p = PRIMITIVES["sin"]
    memo = sin_p.meta
    try:
        sin_p.meta = symscalar.trace.memoized_meta(counting_meta)
        f = symscalar.jit(lambda x: torch.sin(torch.sin(x)) * 2)
        x = torch.randn(3, 5, requires_grad=True)
        f(x).sum().backward()
        check_trace(f.last_trace())
        torch.testing.assert_close(x.grad, torch.cos(torch.sin(x)) * torch.cos(x) * 2)
        assert len(calls) == 1  # two sin equations, one signature, checked three times
        f(torch.randn(4, 5, dtype=torch.float64))  # a new signature: one more evaluation
        assert len(calls) == 2
    finally:
        sin_p.meta = memo


def test_memo_tells_literals_and_ambient_state_apart():
    mul = PRIMITIVES["mul"].meta
    xi = TensorVar((2,), torch.int64, CPU)
    assert mul(xi, 2).dtype == torch.int64
    assert mul(xi, 2.0).dtype == torch.float32
    assert mul(xi, True).dtype == torch.int64
    assert mul(xi, ScalarVar(float)).dtype == torch.float32
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        assert mul(xi, 2.0).dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)
    assert mul(xi, 2.0).dtype == torch.float32
    a, b = mul(xi, 2), mul(xi, 2)
    assert a is not b  # fresh variables every time


def test_memo_does_not_remember_errors():
    add = PRIMITIVES["add"].meta
    a, b = TensorVar((2, 3), torch.float32, CPU), TensorVar((4,), torch.float32, CPU)
    for _ in range(2):
        try:
            add(a, b)
        except RuntimeError as e:
            assert "broadcast" in str(e)  # torch's own message
        else:
            raise AssertionError("broadcasting (2, 3) with (4,) must fail")


def test_unregistered_primitive_meta_is_memoized_too():
    prim = Primitive("test_trace_cost_identity", lambda x: x, lambda x: TensorVar(x.shape, x.dtype, x.device))
    try:
        v = TensorVar((2,), torch.float32, CPU)
        assert prim.meta(v).shape == (2,) and prim.meta(v) is not prim.meta(v)
    finally:
        del PRIMITIVES["test_trace_cost_identity"]


FIRST_CALL = """
import sys
import torch
import symscalar
assert "torch._dynamo" not in sys.modules and "sympy" not in sys.modules, "import symscalar"

@symscalar.jit
def f(x, w, b, s: symscalar.DynamicFloat):
    h = torch.softmax(torch.cat([x, x * s], 1) @ w, -1) + b
    return (h.mean((0,)) - h.amax(1).sum() + h.var(0).sum() + h.logsumexp(1).sum() + h.flip(0)[0]).sum()

x = torch.randn(4, 3, requires_grad=True)
w = torch.randn(6, 5, requires_grad=True)
b = torch.randn(5, requires_grad=True)
f(x, w, b, 0.5).backward()
f(x.detach(), w.detach(), b.detach(), 2.0)
print(sorted(m for m in ("torch._dynamo", "sympy") if m in sys.modules))
"""


def test_first_call_imports_neither_dynamo_nor_sympy():
    result = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout
