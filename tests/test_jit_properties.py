"""Property-based: random chains of ops with random static/dynamic scalars equal torch eager
for several dynamic values, with exactly one trace."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscalar

pytestmark = pytest.mark.slow  # property-based: left out by `make test-fast`

N_DYNAMIC = 3
BINARY = ["add", "sub", "mul", "div", "rsub", "rmul"]


def apply(step, x, scalars):
    op, operand = step
    if op == "neg":
        return -x
    if op == "exp":
        return torch.exp(x / 8)
    if op == "sum":
        return torch.sum(x, operand, keepdim=True)
    value = scalars[operand[1]] if operand[0] == "dyn" else operand[1]
    return {
        "add": lambda: x + value,
        "sub": lambda: x - value,
        "mul": lambda: x * value,
        "div": lambda: x / value,
        "rsub": lambda: value - x,
        "rmul": lambda: value * x,
    }[op]()


scalar_operand = st.one_of(
    st.tuples(st.just("dyn"), st.integers(0, N_DYNAMIC - 1)),
    st.tuples(st.just("static"), st.floats(0.5, 3.0) | st.integers(1, 3)),
)
step = st.one_of(
    st.tuples(st.sampled_from(BINARY), scalar_operand),
    st.tuples(st.sampled_from(["neg", "exp"]), st.none()),
    st.tuples(st.just("sum"), st.integers(-2, 1)),
)
dyn_values = st.lists(st.tuples(*[st.floats(0.5, 2.0) for _ in range(N_DYNAMIC)]), min_size=3, max_size=3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(step, min_size=1, max_size=6), calls=dyn_values)
def test_random_chains_match_eager_with_one_trace(program, calls):
    def fn(x, s0, s1, s2):
        for st_ in program:
            x = apply(st_, x, (s0, s1, s2))
        return x

    f = symscalar.jit(fn, dynamic=["s0", "s1", "s2"])
    x = torch.randn(3, 4, dtype=torch.float64)
    for values in calls:
        torch.testing.assert_close(f(x, *values), fn(x, *values))
    assert f.cache_info().misses == 1
    assert f.cache_info().hits == len(calls) - 1
    symscalar.check_trace(f.last_trace())


@settings(max_examples=25, deadline=None)
@given(program=st.lists(step, min_size=1, max_size=5), calls=dyn_values)
def test_random_chains_grads_match_autograd(program, calls):
    def fn(x, s0, s1, s2):
        for st_ in program:
            x = apply(st_, x, (s0, s1, s2))
        return x

    f = symscalar.jit(fn, dynamic=["s0", "s1", "s2"])
    base = torch.randn(3, 4, dtype=torch.float64)
    for values in calls:
        x = base.clone().requires_grad_()
        (g,) = torch.autograd.grad(f(x, *values).sum(), x)
        x_ref = base.clone().requires_grad_()
        (g_ref,) = torch.autograd.grad(fn(x_ref, *values).sum(), x_ref)
        torch.testing.assert_close(g, g_ref)
    assert f.cache_info().misses == 1
    symscalar.check_trace(f.last_backward_trace())
