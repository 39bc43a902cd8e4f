"""The IR: printed traces are runnable Python, check_trace rejects malformed traces."""

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, StaticInt
from symscalar.errors import StaticValueRequiredError, TraceCheckError
from symscalar.grad import connected_vars
from symscalar.ops.elementwise import exp_p, mul_p
from symscalar.ops.reductions import sum_p
from symscalar.trace import Eqn, ScalarVar, TensorVar, Trace, check_trace, dce, eval_trace
from symscalar.tracer import TraceBuilder, tracing

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


def test_check_trace_names_the_equation_and_refuses_a_leaked_proxy():
    # check_trace builds a message only when a check fails: each still names its equation
    x = TensorVar((2,), torch.float32, CPU)
    a, b = TensorVar((2,), torch.float32, CPU), TensorVar((2,), torch.float32, CPU)
    late = Trace((x,), (Eqn(exp_p, (x,), {}, (a,)), Eqn(mul_p, (b, 2.0), {}, (a,))), (a,))
    with pytest.raises(TraceCheckError, match=r"equation 1 \(mul\): variable used before it is defined"):
        check_trace(late)
    wrong = TensorVar((3,), torch.float32, CPU)
    with pytest.raises(TraceCheckError, match=r"equation 1 \(mul\): output is .*meta function says"):
        check_trace(Trace((x,), (Eqn(exp_p, (x,), {}, (a,)), Eqn(mul_p, (a, 2.0), {}, (wrong,))), (wrong,)))
    builder = TraceBuilder("f")
    proxy = builder.scalar_input(float, 2.0, "a test value")
    with pytest.raises(TraceCheckError, match=r"equation 0 \(mul\): a tracing proxy .* leaked"):
        check_trace(Trace((x,), (Eqn(mul_p, (x, proxy), {}, (a,)),), (a,)))
    check_trace(Trace((x,), (Eqn(mul_p, (x, 2.0), {}, (a,)),), (a,)))  # a literal operand is fine


def test_names_never_shadow_builtins():
    @symscalar.jit
    def f(sum: torch.Tensor, max: DynamicFloat) -> torch.Tensor:  # noqa: A002
        return sum * max

    f(torch.ones(2), 2.0)
    assert "def f(t0, s0):" in str(f.last_trace())


def _named_in_messages() -> tuple[symscalar.JitFunction, dict[str, str]]:
    """A jitted function that, while it is traced, reads the names of an intermediate tensor
    (repr), of a computed dynamic scalar and of a dynamic parameter (from the message of a
    caught StaticValueRequiredError), in an order other than the order of definition."""
    said: dict[str, str] = {}

    @symscalar.jit
    def f(x: torch.Tensor, a: DynamicFloat, n: symscalar.DynamicInt) -> torch.Tensor:
        y = torch.exp(x * a)
        k = n + 1
        try:
            torch.sum(y, k)
        except StaticValueRequiredError as e:
            said["k"] = str(e).split("dynamic value ", 1)[1].split(" ", 1)[0]
        z = torch.sin(y) + a
        said["z"] = repr(z).removeprefix("TensorProxy(").split(":", 1)[0]
        said["y"] = repr(y).removeprefix("TensorProxy(").split(":", 1)[0]
        return z * 2

    return f, said


def test_a_value_is_called_the_same_in_a_message_and_in_every_printed_trace():
    f, said = _named_in_messages()
    x = torch.randn(3, requires_grad=True)
    f(x, 0.5, 2).sum().backward()
    printed = str(f.last_trace())
    assert f"{said['k']} = prims.scalar_add(" in printed
    assert f"{said['y']} = prims.exp(" in printed
    assert f"{said['z']} = prims.add(" in printed
    generated = symscalar.torch_backend.compile_trace(f.last_trace()).__source__
    assert f"{said['z']} = _prim_add(" in generated
    # names follow the order of definition, also when a message asked for one early
    assert (said["y"], said["k"], said["z"]) == ("t2", "s2", "t4")


def test_names_nobody_asked_for_are_dense_in_definition_order():
    """A backward creates values its trace drops (residuals a rule did not read): printing
    names only what the trace holds, t0, t1, ... in order."""

    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return torch.exp(torch.sum(x * s, 0) + 1)

    f(torch.randn(3, 2, requires_grad=True), 0.5).sum().backward()
    for trace in (f.last_trace(), f.last_backward_trace()):
        names = trace.input_names()
        for line in str(trace).splitlines():
            if " = prims." in line:
                names += [n.strip() for n in line.split(" = ")[0].split(",") if n.strip()]
        for prefix in "ts":
            mine = [n for n in names if n.startswith(prefix)]
            assert mine == [f"{prefix}{i}" for i in range(len(mine))], str(trace)


def test_dce_and_connected_vars_on_a_trace_with_dead_ends_cuts_and_effects():
    """dce keeps what the outputs read and every equation without outputs (a runtime check);
    connected_vars follows floating values from the inputs differentiated, not through a
    stop_gradient (detach) nor into integer results."""
    builder = TraceBuilder("f")
    with tracing(builder):
        x = builder.tensor_input(TensorVar((3,), torch.float32, CPU), True)
        y = builder.tensor_input(TensorVar((3,), torch.float32, CPU))
        s = builder.scalar_input(float, 2.0, "s")
        a = x * s
        dead = torch.exp(a) * 3  # noqa: F841 - two equations nothing reads
        symscalar.check(s > 0, "s must be positive")  # a comparison and a check: kept
        i = a.to(torch.int64)
        d = a.detach() * y
        out = a + d
    trace = builder.build([out, i])
    kept = dce(trace)
    names = [e.prim.name for e in trace.eqns]
    assert names[1:3] == ["exp", "mul"] and "check" in names, names
    assert [e.prim.name for e in kept.eqns] == names[:1] + names[3:]
    check_trace(kept)

    connected = connected_vars(trace, [0])
    by_name = {e.prim.name: e.outs[0] for e in trace.eqns if e.outs}
    a_var, out_var, i_var, d_var = a._var, out._var, i._var, d._var
    assert {a_var, out_var, trace.inputs[0], by_name["exp"]} <= connected
    assert not {i_var, d_var, trace.inputs[1], trace.inputs[2], by_name["stop_gradient"]} & connected
    assert connected_vars(trace, [1]) == {trace.inputs[1], d_var, out_var}
