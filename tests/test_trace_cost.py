"""What a first call costs: metas are memoized by signature (tracing, check_trace of the
trace, its forward-with-residuals and its backward do not re-run them), and neither
``import symscalar`` nor a first jitted call with grad imports ``torch._dynamo`` or sympy
(torch's Python meta path does, ~900 modules). No timing here: see benchmarks/trace_time.py."""

import subprocess
import sys

import pytest
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
        PRIMITIVES.unregister("test_trace_cost_identity")


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


@pytest.mark.slow
def test_first_call_imports_neither_dynamo_nor_sympy():
    result = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.uint8,
    torch.bool,
    torch.complex64,
]
SHAPE_PAIRS = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((4,), ()), ((0, 3), (1, 3)), ((2, 3), (4,)), ((), ())]


def _outcome(meta, *atoms, **params):
    try:
        result = meta(*atoms, **params)
    except Exception:  # noqa: BLE001 - both sides must refuse the same calls
        return "error"
    results = result if isinstance(result, tuple) else (result,)
    return [(r.shape, r.dtype, r.device) for r in results]


def _agree(prim, *atoms, **params):
    fast = _outcome(prim.meta.__wrapped__, *atoms, **params)
    reference = _outcome(torch_meta(prim.impl), *atoms, **params)
    assert fast == reference, (prim.name, atoms, params, fast, reference)


@pytest.mark.slow
def test_shape_rule_metas_agree_with_torch_meta_tensors():
    """The metas computed from shape rules and small CPU runs give torch's meta-tensor answer
    (shape, dtype, device, or an error) over dtypes, broadcasting, 0-d and empty tensors."""
    P = PRIMITIVES
    for dt_a in DTYPES:
        for dt_b in (torch.float32, torch.int64, torch.bool, torch.float16):
            for sa, sb in SHAPE_PAIRS:
                a, b = TensorVar(sa, dt_a, CPU), TensorVar(sb, dt_b, CPU)
                for name in ("add", "mul", "div", "pow", "maximum", "eq", "logical_and", "atan2", "remainder"):
                    _agree(P[name], a, b)
                _agree(P["div"], a, b, rounding_mode="floor")
                for lit in (2, 2.5, True, ScalarVar(float), ScalarVar(int)):
                    _agree(P["mul"], a, lit)
                    _agree(P["where"], TensorVar(sb, torch.bool, CPU), a, lit)
        for shape in ((3, 4), (), (2, 0, 3), (5,)):
            x = TensorVar(shape, dt_a, CPU)
            for name in ("exp", "sin", "abs", "neg", "sqrt", "sigmoid", "relu", "floor", "isnan", "logical_not"):
                _agree(P[name], x)
            for dims in ((), (0,), tuple(range(len(shape)))):
                dims = tuple(d for d in dims if d < max(len(shape), 1)) if shape else ()
                for keepdim in (False, True):
                    for name in ("sum", "mean", "amax", "prod", "logsumexp"):
                        _agree(P[name], x, dims=dims, keepdim=keepdim)
                    _agree(P["sum"], x, dims=dims, keepdim=keepdim, dtype=torch.float64)
                    for correction in (0, 1, 2.5):
                        _agree(P["var"], x, dims=dims, keepdim=keepdim, correction=correction)
                        _agree(P["std_mean"], x, dims=dims, keepdim=keepdim, correction=correction)
            for dim in (None, 0, -1):
                _agree(P["argmax"], x, dim=dim, keepdim=False)
                _agree(P["argmax"], x, dim=dim, keepdim=True)
            for dim in (0, -1):
                _agree(P["softmax"], x, dim=dim, dtype=None)
                _agree(P["log_softmax"], x, dim=dim, dtype=torch.float64)
            _agree(P["flip"], x, dims=(0,))
            _agree(P["cat"], x, x, dim=0)
            _agree(P["cat"], x, TensorVar((1, *shape[1:]), torch.float64, CPU), dim=0)
            _agree(P["cat"], x, TensorVar((2, 2), dt_a, CPU), dim=0)
    for sa, sb in (((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 5)), ((3, 4), (5, 6)), ((3, 4), (2, 4, 5))):
        for dt in (torch.float32, torch.float64, torch.int64, torch.bfloat16):
            _agree(P["matmul"], TensorVar(sa, dt, CPU), TensorVar(sb, dt, CPU))
        _agree(P["matmul"], TensorVar(sa, torch.float32, CPU), TensorVar(sb, torch.float64, CPU))
