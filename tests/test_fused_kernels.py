"""The fused primitives the torch backend runs as eager does: ``linear`` (addmm with the bias,
the weight gradient contiguous as eager's), ``gelu_backward`` (torch's fused kernel as
gelu's vjp), ``native_layer_norm`` (eager's one-kernel forward, its mean and 1/std saved
for the backward) and CPU attention (eager's flash kernels each way, the output and log-sum-exp
rows saved instead of the attention weights). Compared with eager torch and torch.autograd over several calls with the
parameters changing in between, and with finite differences (gradcheck, gradgradcheck) in
float64."""

import functools

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar import DynamicFloat
from symscalar.ops.composites import linear_p, sdpa_flash_cpu_backward_p, sdpa_flash_cpu_p
from symscalar.ops.elementwise import erf_p, exp_p, gelu_backward_p
from symscalar.ops.norms import native_layer_norm_p

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
    # a 1-D input with a matching bias takes eager's addmm path (input flattened to one row)
    assert any(e.prim is linear_p for e in f.last_trace().eqns) == (name == "1-D input")
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


@pytest.mark.parametrize("param_dtype", [torch.float32, torch.bfloat16])
def test_layer_norm_in_16_bit_runs_eagers_kernels_bit_for_bit(param_dtype: torch.dtype):
    # float32 parameters on bfloat16 activations: autocast's mixed case (float32 statistics)
    x = torch.randn(2, 3, 4, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(4, dtype=param_dtype, requires_grad=True)
    f = symscalar.jit(layer_norm)
    out, ref = f(x, w, None, 1e-5, (4,)), layer_norm(x, w, None, 1e-5, (4,))
    assert out.dtype == ref.dtype and torch.equal(out, ref)
    assert any(e.prim is native_layer_norm_p for e in f.last_trace().eqns)
    ct = torch.randn_like(ref)
    for g, r in zip(torch.autograd.grad(out, (x, w), ct), torch.autograd.grad(ref, (x, w), ct)):
        assert g.dtype == r.dtype and torch.equal(g, r)


# ---- attention: eager's CPU flash kernels
def _qkv(b, h, hkv, q_len, kv_len, e, dtype, *, transposed=False):
    def make(heads, length):
        if transposed:  # head dim not contiguous: eager takes its math path instead
            return torch.randn(b, heads, e, length, dtype=dtype).transpose(-1, -2).requires_grad_(True)
        return torch.randn(b, heads, length, e, dtype=dtype, requires_grad=True)

    return make(h, q_len), make(hkv, kv_len), make(hkv, kv_len)


def _attention(q, k, v, scale: DynamicFloat, is_causal: bool, gqa: bool):
    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale, enable_gqa=gqa)


SDPA_CASES = {
    "causal": {"is_causal": True, "shape": (2, 3, 3, 16, 16, 8)},
    "causal, fewer queries than keys": {"is_causal": True, "shape": (2, 3, 3, 5, 9, 8)},
    "full": {"is_causal": False, "shape": (2, 3, 3, 7, 11, 4)},
    "grouped-query": {"is_causal": True, "shape": (2, 4, 2, 6, 6, 8)},
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_cpu_attention_is_eagers_flash_kernel_bit_for_bit(case: str, dtype: torch.dtype):
    spec = SDPA_CASES[case]
    b, h, hkv, q_len, kv_len, e = spec["shape"]
    f = symscalar.jit(_attention, static=("is_causal", "gqa"))
    for scale in (0.3, 0.7, 1 / e**0.5):  # a dynamic scale: one program
        q, k, v = _qkv(b, h, hkv, q_len, kv_len, e, dtype)
        args = (scale, spec["is_causal"], h != hkv)
        ct = torch.randn(b, h, q_len, e, dtype=dtype)
        # grouped-query: the trace repeats the key/value heads and sums their gradients back,
        # eager's kernel maps heads itself: equal to rounding, not bit for bit
        exact = {"rtol": 0, "atol": 0} if h == hkv else {}
        out, expected = f(q, k, v, *args), _attention(q, k, v, *args)
        torch.testing.assert_close(out, expected, **exact)
        grads = torch.autograd.grad(out, (q, k, v), ct)
        for g, ge in zip(grads, torch.autograd.grad(expected, (q, k, v), ct)):
            torch.testing.assert_close(g, ge, **exact)
    assert f.cache_info().misses == 1
    assert sdpa_flash_cpu_p in {e.prim for e in f.last_trace().eqns}
    assert sdpa_flash_cpu_backward_p in {e.prim for e in f.last_backward_trace().eqns}


def test_cpu_attention_saves_no_attention_weights():
    # the backward reads the output and one log-sum-exp per query, as eager's flash backward;
    # the composition saved the L x S attention weights (memory quadratic in the sequence)
    q, k, v = _qkv(2, 2, 2, 32, 48, 8, torch.float32)
    f = symscalar.jit(_attention, static=("is_causal", "gqa"))
    f(q, k, v, 0.5, False, False).sum().backward()
    saved = [tuple(x.shape) for x in f.last_backward_trace().inputs if hasattr(x, "shape")]
    assert (2, 2, 32) in saved and not any(s[-2:] == (32, 48) for s in saved)


def test_cpu_attention_with_a_transposed_head_dim_matches_eager():
    q, k, v = _qkv(2, 2, 2, 6, 6, 4, torch.float64, transposed=True)
    f = symscalar.jit(_attention, static=("is_causal", "gqa"))
    out = f(q, k, v, 0.5, True, False)
    torch.testing.assert_close(out, _attention(q, k, v, 0.5, True, False))
    assert torch.autograd.gradcheck(lambda *t: f(*t, 0.5, True, False), (q, k, v))


def test_cpu_attention_gradcheck():
    q, k, v = _qkv(1, 2, 2, 4, 5, 3, torch.float64)
    f = symscalar.jit(_attention, static=("is_causal", "gqa"))
    for causal in (False, True):
        assert torch.autograd.gradcheck(lambda *t: f(*t, 0.4, causal, False), (q, k, v))


def test_cpu_attention_double_backward_raises_when_it_runs_as_eagers():
    # eager's flash backward has no derivative: create_graph=True works, the second backward
    # raises; the jitted program raises at the same point, with eager's message and a fix
    q, k, v = _qkv(1, 2, 2, 4, 4, 3, torch.float64)
    f = symscalar.jit(_attention, static=("is_causal", "gqa"))
    for fn in (f, _attention):
        (g,) = torch.autograd.grad(fn(q, k, v, 0.5, True, False).sum(), q, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::_scaled_dot_product_flash_attention_for_cpu"):
            g.sum().backward()


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("shapes", [((2, 2, 5, 4), (2, 2, 0, 4)), ((2, 2, 5, 0), (2, 2, 6, 0)), ((5, 0), (0, 0))])
def test_attention_with_no_keys_or_an_empty_head_dim_matches_eager(shapes, is_causal: bool):
    # outside the kernel's form (a zero-size dim): no keys gave an amax over nothing, an empty
    # head dim 1 / sqrt(0) while tracing; eager gives zeros / an empty output and zero gradients
    (q_shape, kv_shape) = shapes
    fn = functools.partial(F.scaled_dot_product_attention, is_causal=is_causal)
    f = symscalar.jit(lambda q, k, v: fn(q, k, v))
    for _ in range(2):
        q, k, v = (torch.randn(s, dtype=torch.float64, requires_grad=True) for s in (q_shape, kv_shape, kv_shape))
        out, expected = f(q, k, v), fn(q, k, v)
        torch.testing.assert_close(out, expected, rtol=0, atol=0)
        ct = torch.randn_like(expected)
        for g, ge in zip(torch.autograd.grad(out, (q, k, v), ct), torch.autograd.grad(expected, (q, k, v), ct)):
            torch.testing.assert_close(g, ge, rtol=0, atol=0)


def test_attention_of_mixed_dtypes_raises_eagers_error_while_tracing():
    # it raised at run time from inside the generated program ("expected scalar type Double")
    q, k, v = torch.randn(1, 2, 4, 3, dtype=torch.float64), torch.randn(1, 2, 4, 3), torch.randn(1, 2, 4, 3)
    f = symscalar.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v))
    for fn in (f, F.scaled_dot_product_attention):
        with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
            fn(q, k, v)
    assert f.cache_info().misses == 0  # refused while tracing: no program


@pytest.mark.slow  # float64 gradgradcheck
@pytest.mark.parametrize("variant", ["3-d bool mask", "3-d float mask", "5-d"])
def test_attention_outside_the_kernels_form_is_composed_and_differentiable_twice(variant: str):
    # (eager's kernel takes 2-d and 4-d masks only: a 3-d one goes to its math path)
    q, k, v = _qkv(1, 2, 2, 4, 5, 3, torch.float64)
    mask = torch.rand(1, 4, 5) > 0.3
    if variant == "3-d float mask":
        mask = torch.randn(1, 4, 5, dtype=torch.float64)
    if variant == "5-d":
        q, k, v = (t.detach().unsqueeze(0).requires_grad_(True) for t in (q, k, v))
        mask = None

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    f = symscalar.jit(fn)
    torch.testing.assert_close(f(q, k, v), fn(q, k, v))
    assert sdpa_flash_cpu_p not in {e.prim for e in f.last_trace().eqns}
    assert torch.autograd.gradgradcheck(f, (q, k, v))
