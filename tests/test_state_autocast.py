"""Autocast, at call time and inside the jitted function: the trace records the casts eager
autocast makes, the cache key holds the call-time autocast state, and the program runs with
autocast off so torch does not cast twice. Eager and jitted run side by side over several
calls with the autocast state changing between them; outputs (values and dtypes) and every
gradient (values, dtypes, None-ness) must agree."""

import contextlib
import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar

LOW = [torch.bfloat16, torch.float16]


def _autocast(dtype):
    return contextlib.nullcontext() if dtype is None else torch.autocast("cpu", dtype)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = self.norm(F.gelu(self.fc1(x)))
        return torch.softmax(self.fc2(h), -1) + h.sum(-1, keepdim=True).exp() * 0.0


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(2, 5, 3, 8).unbind(2)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) @ self.qkv.weight[:8]


MODULES = {"linear": lambda: nn.Linear(8, 4), "mlp": MLP, "attention": Attention}


def _grads(module):
    return {n: None if p.grad is None else p.grad.clone() for n, p in module.named_parameters()}


# Eager itself is not bit-reproducible in low precision: a fused addmm rounds once where
# matmul + add rounds twice, and CPU gemm kernels accumulate differently for transposed
# operands. Values that went through a bfloat16/float16 computation are compared to a
# couple of units in the last place of that dtype, relative to the tensor's magnitude;
# dtypes and None-ness are compared exactly.
_ULP = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}


def _close(got, expected, low, where):
    assert got.dtype == expected.dtype, where
    if low is None:
        torch.testing.assert_close(got, expected, msg=where)
        return
    tol = 4 * _ULP[low]
    scale = expected.detach().abs().max().float().item() or 1.0
    diff = (got.detach().double() - expected.detach().double()).abs().max().item()
    assert diff <= tol * scale, f"{where}: max difference {diff} > {tol * scale}"


def _compare(out_j, out_e, mod_j, mod_e, where, low=None):
    _close(out_j, out_e, low, where)
    ge, gj = _grads(mod_e), _grads(mod_j)
    for name in ge:
        assert (ge[name] is None) == (gj[name] is None), (where, name)
        if ge[name] is not None:
            _close(gj[name], ge[name], low, f"{where}: grad of {name}")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_call_time_autocast_changes_between_calls(name):
    torch.manual_seed(0)
    eager = MODULES[name]()
    jitted_module = copy.deepcopy(eager)
    jitted = symscalar.jit(jitted_module)
    states = [torch.bfloat16, None, torch.float16, torch.bfloat16, None]
    for step, dtype in enumerate(states):
        x = torch.randn(2, 5, 8) if name == "attention" else torch.randn(3, 8)
        eager.zero_grad()
        jitted_module.zero_grad()
        with _autocast(dtype):
            out_e = eager(x)
            out_j = jitted(x)
        out_e.float().square().sum().backward()
        out_j.float().square().sum().backward()
        _compare(out_j, out_e, jitted_module, eager, f"call {step} autocast={dtype}", dtype)
    assert jitted.cache_info().entries == 3  # off, bfloat16, float16


def _pairs(fn, dtype=torch.float32):
    torch.manual_seed(1)
    x = torch.randn(4, 6, dtype=dtype)
    w = torch.randn(6, 3, dtype=dtype)
    x2 = torch.randn(4, 3, dtype=dtype)
    return x, w, x2


def inside_autocast(x, w, x2):
    with torch.autocast("cpu", torch.bfloat16):
        y = x @ w
        z = torch.cat([y, x2])
    return y.float().exp() + z[:4] * 2


def disabled_inside_autocast(x, w, x2):
    with torch.autocast("cpu", torch.bfloat16):
        a = x @ w
        with torch.autocast("cpu", enabled=False):
            b = x @ w
    return a + b + x2


def mixed_promotion(x, w, x2):
    y = torch.mm(x, w)
    return torch.stack([y, x2]).sum(0) + y.tanh() * x2


FUNCTIONS = {f.__name__: f for f in (inside_autocast, disabled_inside_autocast, mixed_promotion)}


@pytest.mark.parametrize("outer", [None, *LOW])
@pytest.mark.parametrize("input_dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_autocast_inside_and_around_the_function(name, input_dtype, outer):
    fn = FUNCTIONS[name]
    jitted = symscalar.jit(fn)
    for step in range(3):
        x, w, x2 = (t.requires_grad_(True) for t in _pairs(fn, input_dtype))
        xj, wj, x2j = (t.detach().clone().requires_grad_(True) for t in (x, w, x2))
        with _autocast(outer):
            out_e = fn(x, w, x2)
            out_j = jitted(xj, wj, x2j)
        where = f"{name} call {step} inputs {input_dtype} outer autocast {outer}"
        low = None if input_dtype == torch.float64 else torch.bfloat16  # the widest low dtype used
        _close(out_j, out_e, low, where)
        out_e.float().sum().backward()
        out_j.float().sum().backward()
        for a, b in ((x, xj), (w, wj), (x2, x2j)):
            assert (a.grad is None) == (b.grad is None), where
            if a.grad is not None:
                _close(b.grad, a.grad, low, where)


def test_backward_called_inside_the_autocast_region():
    torch.manual_seed(2)
    eager = nn.Linear(6, 3)
    jitted_module = copy.deepcopy(eager)
    jitted = symscalar.jit(jitted_module)
    x = torch.randn(4, 6)
    with torch.autocast("cpu", torch.bfloat16):
        eager(x).float().sum().backward()
        jitted(x).float().sum().backward()
    _compare(jitted(x), eager(x), jitted_module, eager, "backward under autocast", torch.bfloat16)


def test_the_casts_are_in_the_trace():
    jitted = symscalar.jit(nn.Linear(6, 3))
    with torch.autocast("cpu", torch.bfloat16):
        jitted(torch.randn(2, 6))
    casts = [e for e in jitted.last_trace().eqns if e.prim.name == "convert_element_type"]
    assert {e.params["dtype"] for e in casts} == {torch.bfloat16}
    assert len(casts) == 3  # input, weight, bias, as aten::linear under autocast


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_einsum_rearrangement_under_autocast_matches_eager_and_products_are_refused(dtype):
    """DiT's unpatchify ``einsum("nhwpqc->nchpwq", x)`` runs no arithmetic, so autocast has
    nothing to cast: equal to eager, dtype and gradient included. An einsum that multiplies
    (eager autocasts the bmm inside it) stays refused."""
    x = torch.randn(2, 2, 3, 2, 2, 4, dtype=dtype, requires_grad=True)
    rearrange = lambda x: torch.einsum("nhwpqc->nchpwq", x)  # noqa: E731
    with torch.autocast("cpu", torch.bfloat16):
        got, expected = symscalar.jit(rearrange)(x), rearrange(x)
        assert got.dtype == expected.dtype == dtype and got.shape == expected.shape
        assert torch.equal(got, expected)
        with pytest.raises(symscalar.UnsupportedOperationError, match=r"einsum under torch\.autocast"):
            symscalar.jit(lambda a: torch.einsum("ij,jk->ik", a, a))(torch.randn(3, 3))
        with pytest.raises(symscalar.UnsupportedOperationError, match=r"einsum under torch\.autocast"):
            symscalar.jit(lambda a: torch.einsum("ij->i", a))(torch.randn(3, 3))  # a sum
    w = torch.linspace(-1, 1, got.numel()).reshape(got.shape)
    (g,) = torch.autograd.grad((got.float() * w).sum(), x)
    (e,) = torch.autograd.grad((expected.float() * w).sum(), x)
    assert torch.equal(g, e)


def test_half_precision_layer_norm_is_contiguous_as_eager():
    """Eager's layer-norm kernel reads a contiguous copy, so its result is contiguous; a
    bfloat16 matmul after it rounds by layout (DiT's patch embedding ``flatten(2).transpose(1, 2)``
    feeds a LayerNorm then q/k/v projections): the composed bfloat16 layer norm is contiguous
    too, and the projection equal to eager's."""
    x = torch.randn(2, 8, 16, dtype=torch.bfloat16).transpose(1, 2)
    w = torch.randn(24, 8)

    def f(x, w):
        y = F.layer_norm(x, (8,), eps=1e-6)
        return y, F.linear(y, w)

    for autocast, weight in ((False, w.bfloat16()), (True, w)):
        with torch.autocast("cpu", torch.bfloat16, enabled=autocast):
            got, expected = symscalar.jit(f)(x, weight), f(x, weight)
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == e.dtype and g.stride() == e.stride()
            assert torch.equal(g, e)
