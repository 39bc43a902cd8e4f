"""matmul (with its vjp) and the composite layers, against torch eager and autograd."""

import copy

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import FloatLike, StaticValueRequiredError


def D(*shape):  # noqa: N802 - reads like the math it tests
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((3, 4), (2, 4, 5)),
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul_forward_and_gradcheck(sa, sb):
    f = symscalar.jit(lambda a, b: a @ b)
    a, b = D(*sa), D(*sb)
    torch.testing.assert_close(f(a, b), torch.matmul(a, b))
    assert torch.autograd.gradcheck(f, (a, b))


@pytest.mark.parametrize(
    "spelling",
    [
        lambda a, b: torch.mm(a, b),
        lambda a, b: a.mm(b),
        lambda a, b: torch.matmul(a, b),
        lambda a, b: a.matmul(b),
        lambda a, b: b.__rmatmul__(a),
    ],
)
def test_matmul_spellings(spelling):
    a, b = D(2, 3), D(3, 4)
    torch.testing.assert_close(symscalar.jit(spelling)(a, b), a @ b)
    x, y = D(2, 2, 3), D(2, 3, 4)
    torch.testing.assert_close(symscalar.jit(lambda a, b: torch.bmm(a, b))(x, y), torch.bmm(x, y))


@pytest.mark.parametrize("bias", [True, False])
def test_linear(bias):
    x, w = D(5, 3), D(4, 3)
    b = D(4) if bias else None
    f = symscalar.jit(lambda x, w, b: F.linear(x, w, b))
    torch.testing.assert_close(f(x, w, b), F.linear(x, w, b))
    args = (x, w, b) if bias else (x, w)
    assert torch.autograd.gradcheck(lambda *a: f(*a, *(() if bias else (None,))), args)


@pytest.mark.slow  # three gradchecks: seconds; tests/test_fused_kernels.py checks a changing eps against eager
def test_layer_norm_dynamic_eps_one_trace_and_gradcheck():
    def fn(x, w, b, eps: FloatLike):
        return F.layer_norm(x, (3, 4), w, b, eps)

    f = symscalar.jit(fn)
    x, w, b = D(2, 3, 4), D(3, 4), D(3, 4)
    for eps in (1e-5, 0.1, 2.0):
        torch.testing.assert_close(f(x, w, b, eps), F.layer_norm(x, (3, 4), w, b, eps))
        assert torch.autograd.gradcheck(lambda x, w, b: f(x, w, b, eps), (x, w, b))
    assert f.cache_info().misses == 1


def test_layer_norm_float32_and_no_affine():
    x = torch.randn(4, 8)
    f = symscalar.jit(lambda x: F.layer_norm(x, (8,)))
    torch.testing.assert_close(f(x), F.layer_norm(x, (8,)))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        symscalar.jit(lambda x: F.layer_norm(x, (5,)))(x)


def test_rms_norm_dynamic_eps():
    def fn(x, w, eps: FloatLike):
        return F.rms_norm(x, (4,), w, eps)

    f = symscalar.jit(fn)
    x, w = D(3, 4), D(4)
    for eps in (1e-6, 0.5):
        torch.testing.assert_close(f(x, w, eps), F.rms_norm(x, (4,), w, eps))
    assert torch.autograd.gradcheck(lambda x, w: f(x, w, 0.5), (x, w))
    torch.testing.assert_close(symscalar.jit(lambda x: F.rms_norm(x, (4,)))(x), F.rms_norm(x, (4,)))


@pytest.mark.slow
@pytest.mark.parametrize("causal, mask", [(False, None), (False, "bool"), (False, "float"), (True, None)])
def test_sdpa_with_dynamic_scale(causal, mask):
    q, k, v = D(1, 2, 3, 2), D(1, 2, 4, 2), D(1, 2, 4, 2)
    m = None
    if mask == "bool":
        m = torch.rand(3, 4) > 0.3
        m[:, 0] = True  # keep a key for every query
    elif mask == "float":
        m = torch.randn(3, 4, dtype=torch.float64)

    def fn(q, k, v, m, scale: FloatLike):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, scale=scale)

    f = symscalar.jit(fn)
    for scale in (0.5, 0.125):
        torch.testing.assert_close(f(q, k, v, m, scale), fn(q, k, v, m, scale))
    assert f.cache_info().misses == 1
    assert torch.autograd.gradcheck(lambda q, k, v: f(q, k, v, m, 0.3), (q, k, v))
    default = symscalar.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    torch.testing.assert_close(default(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def test_static_parameters_of_composites_reject_dynamic_values():
    x = torch.randn(2, 4)
    f = symscalar.jit(lambda x, n: F.layer_norm(x, (n,)), dynamic=["n"])
    with pytest.raises(StaticValueRequiredError, match="normalized_shape"):
        f(x, 4)
    g = symscalar.jit(lambda q, c: F.scaled_dot_product_attention(q, q, q, is_causal=c), dynamic=["c"])
    with pytest.raises(StaticValueRequiredError, match="is_causal"):
        g(torch.randn(1, 2, 3), True)
    h = symscalar.jit(lambda q, p: F.scaled_dot_product_attention(q, q, q, dropout_p=p), dynamic=["p"])
    with pytest.raises(StaticValueRequiredError, match="dropout_p"):
        h(torch.randn(1, 2, 3), 0.1)


@pytest.mark.parametrize("groups, affine", [(3, True), (1, True), (6, False), (2, False)])
def test_group_norm_forward_grads_and_gradcheck(groups, affine):
    x, w, b = D(2, 6, 3, 4), D(6), D(6)
    f = symscalar.jit(lambda x, w, b: F.group_norm(x, groups, w, b))
    args = (x, w, b) if affine else (x, None, None)
    torch.testing.assert_close(f(*args), F.group_norm(x, groups, *args[1:]), rtol=0, atol=1e-14)
    assert torch.autograd.gradcheck(lambda *a: f(*a, *(None,) * (3 - len(a))), args[: 3 if affine else 1])


def test_group_norm_dynamic_eps_one_trace_half_precision_and_errors():
    def fn(x, eps: FloatLike):
        return F.group_norm(x, 2, None, None, eps)

    f = symscalar.jit(fn)
    x = D(2, 4, 5)
    for eps in (1e-5, 0.5):
        torch.testing.assert_close(f(x, eps), F.group_norm(x, 2, eps=eps))
    assert f.cache_info().misses == 1
    xb, wb = torch.randn(2, 4, 3, dtype=torch.bfloat16), torch.randn(4)  # float32 weight: as autocast's
    g = symscalar.jit(lambda x, w: F.group_norm(x, 4, w))
    torch.testing.assert_close(g(xb, wb), F.group_norm(xb, 4, wb), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        symscalar.jit(lambda x: F.group_norm(x, 3))(x)
    with pytest.raises(StaticValueRequiredError, match="num_groups"):
        symscalar.jit(lambda x, g: F.group_norm(x, g), dynamic=["g"])(x, 2)


def test_group_norm_module_trains_like_eager():
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.GroupNorm(4, 8), torch.nn.SiLU()).double()
    mine = copy.deepcopy(eager)
    f = symscalar.jit(mine)
    opt_e, opt_m = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, mine))
    for step in range(3):
        x = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(step))
        out_e, out_m = eager(x), f(x)
        torch.testing.assert_close(out_m, out_e)
        out_e.pow(2).sum().backward()
        out_m.pow(2).sum().backward()
        for pe, pm in zip(eager.parameters(), mine.parameters()):
            torch.testing.assert_close(pm.grad, pe.grad)
        for opt in (opt_e, opt_m):
            opt.step()
            opt.zero_grad()
    assert f.cache_info().misses == 1
