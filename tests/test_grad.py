"""The grad transform and its torch.autograd wiring, on the core op set."""

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, StaticInt
from symscalar.grad import vjp_traces
from symscalar.ops.common import torch_meta
from symscalar.trace import PRIMITIVES, VJPS, Primitive, ScalarVar, TensorVar, Trace, check_trace, dce
from symscalar.tracer import TraceBuilder, tracing


def f_ref(x, b, s, d):
    return torch.exp(torch.sum(x * s / b - b, d) / 4)


@symscalar.jit
def f(x: torch.Tensor, b: torch.Tensor, s: DynamicFloat, d: StaticInt) -> torch.Tensor:
    return f_ref(x, b, s, d)


def test_gradcheck_float64():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = (torch.rand(4, dtype=torch.float64) + 1).requires_grad_()
    for s in (0.5, -2.0):
        assert torch.autograd.gradcheck(lambda x, b: f(x, b, s, 1), (x, b))
        assert torch.autograd.gradcheck(lambda x, b: f(x, b, s, 0), (x, b))


def test_grads_match_autograd_and_scale_is_a_backward_input():
    x0, b0 = torch.randn(3, 4), torch.rand(4) + 1
    f.cache_clear()
    for s in (0.25, 4.0, -1.0):
        x, b = x0.clone().requires_grad_(), b0.clone().requires_grad_()
        xr, br = x0.clone().requires_grad_(), b0.clone().requires_grad_()
        f(x, b, s, 0).sum().backward()
        f_ref(xr, br, s, 0).sum().backward()
        torch.testing.assert_close(x.grad, xr.grad)
        torch.testing.assert_close(b.grad, br.grad)
    assert f.cache_info().misses == 1
    backward = f.last_backward_trace()
    assert any(isinstance(v, ScalarVar) for v in backward.inputs)
    assert "-1.0" not in str(backward) and "4.0" not in str(backward)


def test_only_inputs_that_require_grad_get_gradients():
    x = torch.randn(3, 4, requires_grad=True)
    b = torch.rand(4) + 1
    f(x, b, 2.0, 1).sum().backward()
    assert x.grad is not None and b.grad is None
    assert len(f.last_backward_trace().outputs) == 1


def test_vjp_traces_residuals_and_structure():
    f(torch.randn(2, 3), torch.rand(3) + 1, 1.0, 0)
    trace = f.last_trace()
    forward, backward, constants = vjp_traces(trace, [0, 1])
    assert constants == ()
    check_trace(forward)
    check_trace(backward)
    n_res = len(forward.outputs) - len(trace.outputs)
    assert len(backward.inputs) == 1 + n_res  # one cotangent, then residuals
    assert len(backward.outputs) == 2


def test_unused_input_gets_zero_gradient():
    g = symscalar.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))
    gx, gy = g(torch.ones(3), torch.ones(2))
    torch.testing.assert_close(gx, torch.full((3,), 2.0))
    torch.testing.assert_close(gy, torch.zeros(2))


def test_value_and_grad_and_errors():
    vg = symscalar.value_and_grad(lambda w, s: (w * s).exp().sum(), dynamic=["s"])
    w = torch.randn(4, dtype=torch.float64)
    for s in (0.5, 1.5):
        value, g = vg(w, s)
        torch.testing.assert_close(value, (w * s).exp().sum())
        torch.testing.assert_close(g, s * (w * s).exp())
        assert not value.requires_grad
    assert vg.cache_info().misses == 1
    with pytest.raises(TypeError, match="one element"):
        symscalar.grad(lambda w: w * 2)(torch.ones(3))
    with pytest.raises(TypeError, match="floating-point tensor"):
        symscalar.grad(lambda w: w.sum())(torch.ones(3, dtype=torch.int64))


def test_multiple_and_non_differentiable_outputs():
    @symscalar.jit
    def g(x: torch.Tensor, s: DynamicFloat):
        y = x * s
        return y, y + 1, x.to(torch.int64)

    x = torch.randn(3, requires_grad=True)
    y1, y2, yi = g(x, 3.0)
    assert not yi.requires_grad
    (y1.sum() + 2 * y2.sum()).backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 9.0))


def test_missing_vjp_is_a_clear_error():
    name = "test_no_vjp_square"
    prim = PRIMITIVES.get(name) or Primitive(name, torch.square, torch_meta(torch.square))
    fn = symscalar.jit(lambda x: prim.bind(x).sum())
    with pytest.raises(NotImplementedError, match="no gradient rule"):
        fn(torch.ones(2, requires_grad=True))
    torch.testing.assert_close(fn(torch.ones(2)), torch.tensor(2.0))


def test_backward_trace_says_what_was_saved():
    f(torch.randn(2, 3, requires_grad=True), torch.rand(3) + 1, 1.5, 0)
    header = str(f.last_backward_trace()).splitlines()[5]
    assert header.startswith("    # cotangents: t0; saved for backward: ")
    assert "s0" in header  # the dynamic scale is saved from the forward, not baked in


# Primitives without a vjp, each for a reason: their outputs are never differentiable.
NO_VJP = {
    "arange": "no tensor inputs",
    "full": "no tensor inputs (the fill value is a scalar)",
    "sym_size": "no tensor inputs (the value of a dynamic dim's size, an int)",
    "argmax": "integer output",
    "argmin": "integer output",
    "check": "no outputs",
    "eq": "bool output",
    "ne": "bool output",
    "lt": "bool output",
    "le": "bool output",
    "gt": "bool output",
    "ge": "bool output",
    "isnan": "bool output",
    "isfinite": "bool output",
    "logical_and": "bool output",
    "logical_or": "bool output",
    "logical_not": "bool output",
    "one_hot": "integer output",
    "uniform": "no tensor inputs (the RNG seed is an int)",
    "normal": "no tensor inputs (the RNG seed is an int)",
    "random_int": "integer output (randint, random_)",
    "multinomial": "integer output (indices)",
    "tensor_check": "no outputs (a runtime check of a raise-only branch)",
    "batch_norm_stats": "the running statistics of a training step: outside autograd, as eager's update",
    "counted_weight": "the total weight of cross_entropy's counted targets: no derivative (eager's has none)",
    # torch's backward kernels of the vision ops: a second derivative through them raises
    # "no gradient rule" (tests/test_ops_vision.py)
    **dict.fromkeys(
        (
            "convolution_backward",
            "max_pool2d_backward",
            "avg_pool2d_backward",
            "adaptive_avg_pool2d_backward",
            "batch_norm_backward",
            "ctc_loss_backward",
        ),
        "a backward kernel; double backward through it is refused",
    ),
    "sdpa_flash_cpu_double_backward": "raises when it runs (eager's flash backward has no derivative either)",
}


def test_every_differentiable_primitive_has_a_vjp():
    missing = {
        name for name, prim in PRIMITIVES.items() if prim not in VJPS and not name.startswith(("scalar_", "test_"))
    }
    assert missing == set(NO_VJP), "a new primitive needs a vjp, or a reason in NO_VJP"


SCALAR_OPERAND_CASES = [
    ("mul", 1, lambda x, s: x * s),
    ("mul", 0, lambda x, s: s * x),
    ("div", 1, lambda x, s: x / s),
    ("div", 0, lambda x, s: torch.div(s, x)),
    ("sub", 1, lambda x, s: x - s),
    ("sub", 0, lambda x, s: torch.sub(s, x)),
]


# retraces on purpose (filtered here, the xdist controller need not import symscalar to show it)
@pytest.mark.filterwarnings("ignore::symscalar.explain.UnannotatedNumberWarning")
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name, scalar_at, fn", SCALAR_OPERAND_CASES)
def test_scalar_operand_rules_record_only_the_tensor_gradient(name, scalar_at, fn, dynamic):
    """``x * 0.5``, ``x / s``, ``1 - x``: the rule gives the scalar no cotangent and records
    nothing for it (what it recorded would be dropped); every equation it records feeds the
    tensor's gradient, which matches torch.autograd over calls with different scalars."""
    cpu = torch.device("cpu")
    prim = PRIMITIVES[name]
    builder = TraceBuilder("f")
    with tracing(builder):
        ct = builder.tensor_input(TensorVar((2, 3), torch.float32, cpu))
        x = builder.tensor_input(TensorVar((2, 3), torch.float32, cpu), True)
        s = builder.scalar_input(float, 0.5, "s") if dynamic else 0.5
        args = (s, x) if scalar_at == 0 else (x, s)
        out = prim.bind(*args)
        before = len(builder.eqns)
        cts = VJPS[prim](ct, out, *args)
    assert cts[scalar_at] is None
    gradient = cts[1 - scalar_at]
    recorded = tuple(builder.eqns[before:])
    kept = dce(Trace(tuple(builder.inputs), recorded, (gradient._var,)))
    assert len(kept.eqns) == len(recorded), "everything recorded feeds the tensor's gradient"

    jf = symscalar.jit(fn, dynamic=["s"] if dynamic else [])
    for value in (0.5, -2.0, 3.0):
        x0 = torch.randn(2, 3, dtype=torch.float64) + 4
        x, xr = x0.clone().requires_grad_(), x0.clone().requires_grad_()
        jf(x, value).sum().backward()
        fn(xr, value).sum().backward()
        torch.testing.assert_close(x.grad, xr.grad)
    assert jf.cache_info().misses == (1 if dynamic else 3)
    x = (torch.rand(2, 3, dtype=torch.float64) + 1).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: jf(x, 0.75), (x,))


def test_backward_for_each_set_of_output_gradients_matches_autograd():
    """A backward per set of outputs that received a gradient (built lazily, from the forward's
    connected variables, which the program computes once): each matches eager's."""

    def fn(x, w):
        h = torch.sin(x * w)
        return h * 2, torch.cos(h).sum(0), x.detach() * 3

    jf = symscalar.jit(fn)
    x0, w0 = torch.randn(3, 4), torch.randn(4)
    for pick in ((0,), (1,), (0, 1), (1, 0)):
        x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
        xr, wr = x0.clone().requires_grad_(), w0.clone().requires_grad_()
        outs, refs = jf(x, w), fn(xr, wr)
        assert [o.requires_grad for o in outs] == [r.requires_grad for r in refs]
        sum(outs[i].sum() for i in pick).backward()
        sum(refs[i].sum() for i in pick).backward()
        torch.testing.assert_close(x.grad, xr.grad)
        torch.testing.assert_close(w.grad, wr.grad)
