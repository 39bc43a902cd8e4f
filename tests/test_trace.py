"""The IR: printed traces are runnable Python, check_trace rejects malformed traces."""

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, StaticInt
from symscalar.errors import StaticValueRequiredError, TraceCheckError
from symscalar.ops.elementwise import exp_p, mul_p
from symscalar.ops.reductions import sum_p
from symscalar.trace import Eqn, ScalarVar, TensorVar, Trace, check_trace, eval_trace

CPU = torch.device("cpu")


@symscalar.jit
def chain(x: torch.Tensor, y: torch.Tensor, s: DynamicFloat, d: StaticInt) -> torch.Tensor:
    return torch.exp(torch.sum(x * s - y, d) / 2) + s


def test_printed_trace_round_trips():
    x, y = torch.randn(3, 4), torch.randn(4)
    expected = chain(x, y, 0.25, 1)
    source = str(chain.last_trace())
    assert "def chain(t0, t1, s0):" in source
    assert "t4 = prims.sum(t3, dims=(1,), keepdim=False, dtype=None)  # t4: f32[3]" in source
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - the printed trace
    for s in (0.25, -1.5):
        (out,) = namespace["chain"](x, y, s)
        torch.testing.assert_close(out, torch.exp(torch.sum(x * s - y, 1) / 2) + s)
    (out,) = namespace["chain"](x, y, 0.25)
    torch.testing.assert_close(out, expected)


def test_every_line_has_a_type_comment():
    chain(torch.randn(2, 2), torch.randn(2), 1.0, 0)
    body = [line for line in str(chain.last_trace()).splitlines() if " = prims." in line]
    assert body and all("  # t" in line or "  # s" in line for line in body)


def test_eval_trace_matches_jit():
    x, y = torch.randn(5, 2), torch.randn(2)
    out = chain(x, y, 3.0, 0)
    (ref,) = eval_trace(chain.last_trace(), x, y, 3.0)
    torch.testing.assert_close(out, ref)


def _hand_built(dims):
    x = TensorVar((4, 3), torch.float32, CPU)
    s = ScalarVar(int)
    out = TensorVar((3,), torch.float32, CPU)
    return Trace((x, s), (Eqn(sum_p, (x,), {"dims": dims, "keepdim": False}, (out,)),), (out,))


def test_check_trace_rejects_dynamic_reduction_axis():
    trace = _hand_built((0,))
    check_trace(trace)
    s = trace.inputs[1]
    with pytest.raises(StaticValueRequiredError, match="'dims'"):
        check_trace(_hand_built((s,)))
    with pytest.raises(StaticValueRequiredError):
        check_trace(_hand_built(s))


def test_check_trace_rejects_use_before_definition_and_wrong_meta():
    x = TensorVar((2,), torch.float32, CPU)
    a = TensorVar((2,), torch.float32, CPU)
    b = TensorVar((2,), torch.float32, CPU)
    bad_order = Trace((x,), (Eqn(exp_p, (a,), {}, (b,)), Eqn(exp_p, (x,), {}, (a,))), (b,))
    with pytest.raises(TraceCheckError, match="before it is defined"):
        check_trace(bad_order)
    wrong = TensorVar((3,), torch.float32, CPU)
    with pytest.raises(TraceCheckError, match="meta"):
        check_trace(Trace((x,), (Eqn(mul_p, (x, 2.0), {}, (wrong,)),), (wrong,)))
    twice = Trace((x,), (Eqn(exp_p, (x,), {}, (x,)),), (x,))
    with pytest.raises(TraceCheckError, match="defined twice"):
        check_trace(twice)


def test_names_never_shadow_builtins():
    @symscalar.jit
    def f(sum: torch.Tensor, max: DynamicFloat) -> torch.Tensor:  # noqa: A002
        return sum * max

    f(torch.ones(2), 2.0)
    assert "def f(t0, s0):" in str(f.last_trace())
