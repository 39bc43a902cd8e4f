"""A jitted function behaves like eager torch under torch.autograd: double backward and
create_graph (gradcheck/gradgradcheck in float64, a gradient-penalty training loop), None
gradients for inputs no differentiable path reaches, retain_graph and the error of a second
backward, views and aliases of inputs, outputs that do not require grad, partial cotangents,
cotangents with a graph and mixed dtypes. Every case runs eager and jitted side by side."""

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat

F64 = torch.float64


def leaves(*shapes: tuple[int, ...], dtype: torch.dtype = F64, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, dtype=dtype, generator=gen).requires_grad_() for s in shapes]


def twins(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Independent leaves with the same values and requires_grad."""
    return [t.detach().clone().requires_grad_(t.requires_grad) for t in tensors]


def assert_same(a: Any, b: Any) -> None:
    """Values, dtypes, requires_grad and None-ness equal."""
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
        return
    assert a.dtype == b.dtype and a.requires_grad == b.requires_grad, (a, b)
    torch.testing.assert_close(a, b)


# ----------------------------------------------------------------------------------------
# Double backward: finite differences on several op families


def _elementwise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * torch.exp(y / 3) + torch.sin(x * y) / (1.5 + torch.sigmoid(y))


def _reductions(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x * y, 1) * x.mean(0, keepdim=True) + x.var(1, keepdim=True) + torch.log_softmax(y, 0)


def _matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x @ y.t()).relu() @ y + x.sum()


def _shapes(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.cat([x.permute(1, 0), y.t() * 2], 0).reshape(4, 6)
    return z.unsqueeze(0).squeeze(0)[1:3] ** 2


def _norms(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x * y, (3,)) * F.gelu(y)


FAMILIES = [_elementwise, _reductions, _matmul, _shapes, _norms]


@pytest.mark.parametrize("fn", FAMILIES, ids=lambda f: f.__name__.strip("_"))
def test_gradcheck_and_gradgradcheck(fn: Callable[..., Any]) -> None:
    jf = symscalar.jit(fn)
    x, y = leaves((4, 3), (4, 3))
    assert torch.autograd.gradcheck(jf, (x, y))
    assert torch.autograd.gradgradcheck(jf, (x, y))
    # and the same values as eager, gradient of the gradient included
    (xe, ye), (xj, yj) = twins([x, y]), twins([x, y])
    for f, a, b in ((fn, xe, ye), (jf, xj, yj)):
        out = f(a, b)
        (ga,) = torch.autograd.grad((out**2).sum(), (a,), create_graph=True)
        assert ga.requires_grad and ga.grad_fn is not None
        (ga.sin().sum() + out.sum()).backward()
    assert_same([xe.grad, ye.grad], [xj.grad, yj.grad])


def test_gradgradcheck_complex() -> None:
    jf = symscalar.jit(lambda x, w: (torch.exp(x * w) * x).abs().sum())
    gen = torch.Generator().manual_seed(3)
    x, w = (torch.randn(3, dtype=torch.complex128, generator=gen).requires_grad_() for _ in range(2))
    assert torch.autograd.gradcheck(jf, (x, w))
    assert torch.autograd.gradgradcheck(jf, (x, w))


def test_hessian_vector_product_and_third_derivative() -> None:
    def fn(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return (torch.exp(x * s) * x).sum()

    jf = symscalar.jit(fn)
    for s in (0.5, -1.25):  # a dynamic scalar: one trace
        results = []
        for f in (fn, jf):
            (x,) = leaves((5,))
            v = torch.linspace(-1, 1, 5, dtype=F64)
            (g,) = torch.autograd.grad(f(x, s), x, create_graph=True)
            (hv,) = torch.autograd.grad(g, x, v, create_graph=True)
            (third,) = torch.autograd.grad(hv.sum(), x)
            results.append((g, hv, third))
        assert_same(results[0][2], results[1][2])
        for a, b in zip(*results):
            torch.testing.assert_close(a, b)
    assert jf.cache_info().misses == 1


def test_gradient_penalty_training_matches_eager_every_step() -> None:
    """WGAN-GP style: loss + lambda * (|d loss / d x| - 1)^2, AdamW over several steps; every
    parameter's .grad compared, including None for a parameter that does not reach the loss
    and one that reaches it only through a comparison (no gradient path)."""

    def net(
        x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, unused: torch.Tensor, gate: torch.Tensor
    ) -> torch.Tensor:
        h = torch.tanh(x @ w1 + b1) * (gate > 0).to(x.dtype)
        return (h @ w2).squeeze(1)

    jnet = symscalar.jit(net)
    params = leaves((3, 8), (8,), (8, 1), (4,), (8,), seed=1)
    sides = []
    for f in (net, jnet):
        ps = twins(params)
        sides.append((f, ps, torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1)))
    gen = torch.Generator().manual_seed(2)
    for _ in range(4):
        x0 = torch.randn(6, 3, dtype=F64, generator=gen)
        target = torch.randn(6, dtype=F64, generator=gen)
        seen = []
        for f, ps, opt in sides:
            opt.zero_grad()
            x = x0.clone().requires_grad_()
            out = f(x, *ps)
            (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
            loss = ((out - target) ** 2).mean() + 10 * ((gx.norm(dim=1) - 1) ** 2).mean()
            loss.backward()
            seen.append((out.detach(), loss.detach(), [p.grad for p in ps]))
            opt.step()
        assert_same(seen[0][:2], seen[1][:2])
        assert_same(seen[0][2], seen[1][2])
        assert seen[1][2][3] is None  # `unused` keeps grad None, so AdamW does not decay it
        assert seen[1][2][4] is None  # `gate` only reaches the output through a comparison
    for pe, pj in zip(sides[0][1], sides[1][1]):
        torch.testing.assert_close(pe, pj)


# ----------------------------------------------------------------------------------------
# None-ness, outputs, aliases, views


def run_both(fn: Callable[..., Any], tensors: list[torch.Tensor], use: Callable[..., Any]) -> None:
    """Run eager and jitted on twin leaves, call ``use(outputs)`` (returns what to compare,
    may call backward), and compare that and every leaf's .grad."""
    jf = symscalar.jit(fn)
    results = []
    for f in (fn, jf):
        ts = twins(tensors)
        outs = f(*ts)
        results.append((use(outs, ts), [t.grad for t in ts]))
    assert_same(results[0], results[1])


def test_unused_and_non_differentiable_inputs_get_none() -> None:
    def fn(x, w, unused, mask_src, idx_src):
        mask = (mask_src > 0).to(x.dtype)
        idx = torch.argmax(idx_src, 0).to(x.dtype)
        return (x * w).sum() + (mask * x).sum() + idx * 2

    run_both(fn, leaves((3,), (3,), (2,), (3,), (3,)), lambda out, ts: out.backward())


def test_zero_gradient_paths_give_zeros_like_eager() -> None:
    # floor / round have a gradient formula (zeros): eager's .grad is zeros, not None
    def fn(x, w):
        return (torch.floor(w * 3) * x).sum() + torch.round(w).sum()

    run_both(fn, leaves((3,), (3,)), lambda out, ts: out.backward())


def test_outputs_that_do_not_require_grad() -> None:
    def fn(x, w):
        return x * 2, x * w, torch.ones_like(w) + 1

    x, w = leaves((3,), (3,))
    x.requires_grad_(False)

    def use(outs, ts):
        a, b, c = outs
        assert not a.requires_grad and a.grad_fn is None and not c.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            a.sum().backward()
        b.sum().backward()
        return outs

    run_both(fn, [x, w], use)


def test_only_some_outputs_get_cotangents() -> None:
    def fn(x, w):
        return torch.sin(x), w.exp(), (x * w).sum()

    def use(outs, ts):
        outs[0].sum().backward()  # w has no path to this output: None, as in eager
        return outs[0]

    run_both(fn, leaves((3,), (3,)), use)

    def use_grad(outs, ts):
        return torch.autograd.grad(outs[1].sum() + outs[2], ts, allow_unused=True)

    run_both(fn, leaves((3,), (3,)), use_grad)


def test_non_differentiable_outputs() -> None:
    def fn(x):
        return x * 3, (x > 0), torch.argmax(x, 0), x.sum() * 2

    def use(outs, ts):
        assert not outs[1].requires_grad and not outs[2].requires_grad
        (outs[0].sum() + outs[3]).backward()
        return outs

    run_both(fn, leaves((4,)), use)


def test_outputs_that_alias_inputs_are_the_inputs() -> None:
    def fn(x, y):
        return x, x * y, y

    jf = symscalar.jit(fn)
    x, y = leaves((3,), (3,))
    a, b, c = jf(x, y)
    assert a is x and c is y  # eager returns the same objects
    assert b.grad_fn is not None
    run_both(fn, [x, y], lambda outs, ts: (outs[0].sum() + outs[1].sum() * 2 + outs[2].sum()).backward())


def test_views_of_leaves_passed_in() -> None:
    def fn(row, wt):
        return (row @ wt).tanh().sum()

    (x, w) = leaves((3, 4), (5, 4))
    jf = symscalar.jit(fn)
    for f in (fn, jf):
        f(x[0], w.t()).backward()
        f(x[1] * 2, w.t()).backward()
    grads_jit = [x.grad.clone(), w.grad.clone()]
    x.grad = w.grad = None
    for _ in range(2):
        fn(x[0], w.t()).backward()
        fn(x[1] * 2, w.t()).backward()
    torch.testing.assert_close(grads_jit, [x.grad, w.grad])


def test_backward_twice_retain_graph_and_the_eager_error() -> None:
    def fn(x, w):
        return torch.exp(x * w).sum()

    def twice(out, ts):
        out.backward(retain_graph=True)
        out.backward()
        return out

    run_both(fn, leaves((3,), (3,)), twice)

    def without_retain(out, ts):
        out.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            out.backward()
        return out

    run_both(fn, leaves((3,), (3,)), without_retain)


def test_grad_outputs_that_require_grad() -> None:
    # a cotangent with a graph: the gradient is differentiable in it too
    def fn(x):
        return torch.sin(x) * x

    def use(out, ts):
        v = ts[0].detach().clone().requires_grad_()
        (g,) = torch.autograd.grad(out, ts[0], v * 2, create_graph=True)
        (gv,) = torch.autograd.grad(g.sum(), v)
        return g, gv

    run_both(fn, leaves((4,)), use)


def test_mixed_dtypes_gradient_has_the_input_dtype() -> None:
    def fn(x16, w):
        return (x16 * w).sum() + (x16.to(torch.float32) ** 2).sum()

    x = torch.randn(4, dtype=torch.float16).requires_grad_()
    (w,) = leaves((4,), dtype=torch.float32)
    run_both(fn, [x, w], lambda out, ts: out.backward())
