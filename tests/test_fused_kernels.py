"""The fused primitives the torch backend runs as eager does: ``linear`` (addmm with the bias,
the weight gradient contiguous as eager's), ``gelu_backward`` (torch's fused kernel as
gelu's vjp) and ``native_layer_norm`` (eager's one-kernel forward, its mean and 1/std saved
for the backward). Compared with eager torch and torch.autograd over several calls with the
parameters changing in between, and with finite differences (gradcheck, gradgradcheck) in
float64."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar.ops.composites import linear_p, native_layer_norm_p
from symscalar.ops.elementwise import erf_p, exp_p, gelu_backward_p

APPROXIMATIONS = ["none", "tanh"]


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.linear(x, w, b)


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_gelu_gradient_is_torchs_kernel_bit_for_bit(approximate: str):
    fn = lambda x: F.gelu(x * 2, approximate=approximate)  # noqa: E731
    f = symscalar.jit(fn)
    for step in range(3):
        x = torch.randn(6, 5, requires_grad=True) * (step + 1)
        x.retain_grad()
        xe = x.detach().clone().requires_grad_(True)
        ct = torch.randn(6, 5)
        (g,) = torch.autograd.grad(f(x), x, ct)
        (ge,) = torch.autograd.grad(fn(xe), xe, ct)
        torch.testing.assert_close(g, ge, rtol=0, atol=0)
    prims = {e.prim for e in f.last_backward_trace().eqns}
    assert gelu_backward_p in prims and not prims & {erf_p, exp_p}


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_gelu_backward_gradcheck_and_double_backward(approximate: str):
    f = symscalar.jit(lambda x: F.gelu(x, approximate=approximate))
    x = (torch.randn(4, 3, dtype=torch.float64) * 3).requires_grad_(True)
    assert torch.autograd.gradcheck(f, (x,))
    assert torch.autograd.gradgradcheck(f, (x,))
    # second derivatives against eager's
    xe = x.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    (ge,) = torch.autograd.grad(F.gelu(xe, approximate=approximate).sum(), xe, create_graph=True)
    torch.testing.assert_close(torch.autograd.grad(g.sum(), x)[0], torch.autograd.grad(ge.sum(), xe)[0])


LINEAR_CASES = {
    "2-D, bias": ((7, 4), True),
    "3-D, bias": ((2, 5, 4), True),
    "2-D, no bias": ((7, 4), False),
    "4-D, no bias": ((2, 3, 2, 4), False),
}


@pytest.mark.parametrize("name", list(LINEAR_CASES))
def test_linear_matches_eager_and_weight_grads_keep_eagers_layout(name: str):
    shape, bias = LINEAR_CASES[name]
    eager_model = nn.Sequential(nn.Linear(4, 6, bias=bias), nn.Tanh(), nn.Linear(6, 3, bias=bias))
    model = nn.Sequential(nn.Linear(4, 6, bias=bias), nn.Tanh(), nn.Linear(6, 3, bias=bias))
    model.load_state_dict(eager_model.state_dict())
    f = symscalar.jit(model)
    for _ in range(3):
        x = torch.randn(shape)
        for m in (model, eager_model):
            m.zero_grad(set_to_none=True)
        out, ref = f(x), eager_model(x)
        torch.testing.assert_close(out, ref)
        out.square().sum().backward()
        ref.square().sum().backward()
        for p, pe in zip(model.parameters(), eager_model.parameters()):
            torch.testing.assert_close(p.grad, pe.grad)
            assert p.grad.stride() == pe.grad.stride()
        with torch.no_grad():  # the parameters change between calls
            for p, pe in zip(model.parameters(), eager_model.parameters()):
                p.sub_(0.1 * p.grad)
                pe.sub_(0.1 * pe.grad)
    assert sum(e.prim is linear_p for e in f.last_trace().eqns) == 2


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_linear_gradcheck_and_double_backward(dtype: torch.dtype):
    f = symscalar.jit(linear)
    x = torch.randn(2, 3, 4, dtype=dtype, requires_grad=True)
    w = torch.randn(5, 4, dtype=dtype, requires_grad=True)
    b = torch.randn(5, dtype=dtype, requires_grad=True)
    assert torch.autograd.gradcheck(f, (x, w, b))
    assert torch.autograd.gradgradcheck(f, (x, w, b))
    assert torch.autograd.gradcheck(symscalar.jit(lambda x, w: F.linear(x, w)), (x, w))


def test_linear_gradients_where_only_some_inputs_require_grad():
    f = symscalar.jit(linear)
    x, w, b = torch.randn(3, 4), torch.randn(5, 4, requires_grad=True), torch.randn(5)
    (gw,) = torch.autograd.grad(f(x, w, b).sum(), (w,))
    (ge,) = torch.autograd.grad(F.linear(x, w, b).sum(), (w,))
    torch.testing.assert_close(gw, ge)
    x.requires_grad_(True)
    gx, gw2 = torch.autograd.grad(f(x, w, b).sum(), (x, w))
    gxe, gwe = torch.autograd.grad(F.linear(x, w, b).sum(), (x, w))
    torch.testing.assert_close((gx, gw2), (gxe, gwe))


FALLBACK_CASES = {
    "1-D input": lambda: (torch.randn(4), torch.randn(3, 4), torch.randn(3)),
    "1-D weight": lambda: (torch.randn(3, 2, 4), torch.randn(4), torch.randn(())),
    "bias of the output's shape": lambda: (torch.randn(2, 4), torch.randn(3, 4), torch.randn(2, 3)),
    "broadcast bias": lambda: (torch.randn(2, 4), torch.randn(3, 4), torch.randn(1)),
}


@pytest.mark.parametrize("name", list(FALLBACK_CASES))
def test_linear_outside_the_primitives_form_is_composed_and_matches_eager(name: str):
    args = [a.double().requires_grad_(True) for a in FALLBACK_CASES[name]()]
    f = symscalar.jit(linear)
    out, ref = f(*args), F.linear(*args)
    torch.testing.assert_close(out, ref)
    assert not any(e.prim is linear_p for e in f.last_trace().eqns)
    grads = torch.autograd.grad(out.sum(), args)
    refs = torch.autograd.grad(ref.sum(), args)
    for g, r in zip(grads, refs):
        torch.testing.assert_close(g, r)


def test_linear_of_a_matrix_and_a_vector_with_bias_raises_like_eager():
    x, w, b = torch.randn(2, 4), torch.randn(4), torch.randn(())
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        F.linear(x, w, b)
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        symscalar.jit(linear)(x, w, b)


def test_linear_dtype_mismatch_raises_like_eager():
    x, w = torch.randn(2, 4), torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(RuntimeError) as eager:
        F.linear(x, w)
    with pytest.raises(RuntimeError) as traced:
        symscalar.jit(lambda x, w: F.linear(x, w))(x, w)
    assert "dtype" in str(eager.value) and "dtype" in str(traced.value)


NORM_CASES = {
    "weight and bias": (True, True, (4,)),
    "weight only": (True, False, (4,)),
    "bias only": (False, True, (4,)),
    "neither": (False, False, (4,)),
    "two normalized dims": (True, True, (3, 4)),
    "every dim": (True, True, (2, 3, 4)),
}


def _norm_args(case: str, dtype: torch.dtype) -> list[torch.Tensor | None]:
    with_weight, with_bias, shape = NORM_CASES[case]
    x = torch.randn(2, 3, 4, dtype=dtype) * 3 + 1
    w = torch.randn(shape, dtype=dtype) if with_weight else None
    b = torch.randn(shape, dtype=dtype) if with_bias else None
    return [t.requires_grad_(True) if t is not None else None for t in (x, w, b)]


def layer_norm(
    x: torch.Tensor,
    w: torch.Tensor | None,
    b: torch.Tensor | None,
    eps: symscalar.DynamicFloat,
    shape: symscalar.StaticShape,
) -> torch.Tensor:
    return torch.tanh(F.layer_norm(x, shape, w, b, eps))


@pytest.mark.parametrize("case", list(NORM_CASES))
def test_native_layer_norm_matches_eager_with_a_changing_eps(case: str):
    f = symscalar.jit(layer_norm)
    shape = NORM_CASES[case][2]
    for eps in (1e-5, 0.5, 3.0):  # one trace: eps is dynamic
        args = _norm_args(case, torch.float32)
        twins = [t.detach().clone().requires_grad_(True) if t is not None else None for t in args]
        out, ref = f(*args, eps, shape), layer_norm(*twins, eps, shape)
        torch.testing.assert_close(out, ref)
        ct = torch.randn_like(ref)
        leaves = [t for t in args if t is not None]
        eager_leaves = [t for t in twins if t is not None]
        for g, r in zip(torch.autograd.grad(out, leaves, ct), torch.autograd.grad(ref, eager_leaves, ct)):
            torch.testing.assert_close(g, r)
    assert f.cache_info().misses == 1
    assert any(e.prim is native_layer_norm_p for e in f.last_trace().eqns)


@pytest.mark.slow  # gradcheck and gradgradcheck in float64: seconds; the fast tier compares with eager above
@pytest.mark.parametrize("case", ["weight and bias", "neither", "two normalized dims"])
def test_native_layer_norm_gradcheck_and_double_backward(case: str):
    x, w, b = _norm_args(case, torch.float64)
    shape = NORM_CASES[case][2]
    f = symscalar.jit(layer_norm)
    leaves = tuple(t for t in (x, w, b) if t is not None)

    def call(*leaves: torch.Tensor) -> torch.Tensor:
        it = iter(leaves)
        return f(next(it), next(it) if w is not None else None, next(it) if b is not None else None, 0.1, shape)

    assert torch.autograd.gradcheck(call, leaves)
    assert torch.autograd.gradgradcheck(call, leaves)


def test_layer_norm_outside_the_native_form_is_composed_and_matches_eager():
    x = torch.randn(2, 3, 4, dtype=torch.bfloat16)
    w = torch.randn(4)  # float32 parameters on bfloat16 activations: autocast's mixed case
    f = symscalar.jit(layer_norm)
    torch.testing.assert_close(f(x, w, None, 1e-5, (4,)), layer_norm(x, w, None, 1e-5, (4,)))
    assert not any(e.prim is native_layer_norm_p for e in f.last_trace().eqns)
