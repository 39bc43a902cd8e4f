"""Integer and categorical samples (``Tensor.random_``, ``torch.randint``/``randint_like``,
``torch.multinomial``) and random fills of constants (torchvision's ``StochasticDepth``, a
``drop_path`` over ``torch.empty``) inside jitted functions.

Each draws from the program's RNG seed (ops/random.py): fresh samples on every call, the same
ones for the same ``torch.manual_seed``, eager's distribution (torch's own samplers run on the
stream's generator), eager's argument checks, one program for every call, and no sample baked
into the program as a constant.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar import DynamicInt

torchvision_ops = pytest.importorskip("torchvision.ops")


def _frequencies(values: torch.Tensor, k: int) -> torch.Tensor:
    return torch.bincount(values.flatten().long(), minlength=k).double() / values.numel()


def _per_seed_and_fresh(f: Any, *args: Any) -> tuple[Any, Any]:
    """Two calls after seeding 5 and one after seeding 5 again: equal to the first, not the second."""
    torch.manual_seed(5)
    first, second = f(*args), f(*args)
    torch.manual_seed(5)
    again = f(*args)
    for a, b, c in zip(first, second, again):
        assert torch.equal(a, c), "not reproducible under torch.manual_seed"
        assert not torch.equal(a, b), "the same sample on two calls"
    return first, second


def integer_samples(x: torch.Tensor) -> Any:
    return (
        torch.randint(0, 6, (20000,)),
        torch.randint(6, x.shape),
        torch.randint_like(x, 2, 8),
        x.long().random_(6),
        x.clone().random_(-3, 3),
        x.to(torch.uint8).random_(),
    )


def test_integer_samples_eager_distribution_per_seed_fresh_one_program() -> None:
    f = symscalar.jit(integer_samples)
    x = torch.zeros(200, 100)
    first, _ = _per_seed_and_fresh(f, x)
    eager = integer_samples(x)
    ranges = [(0, 6), (0, 6), (2, 8), (0, 6), (-3, 3), (0, 256)]
    for got, want, (low, high) in zip(first, eager, ranges):
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
        got, want = got.long(), want.long()
        assert got.min() == low and got.max() == high - 1
        k = high - low
        freq, eager_freq = _frequencies(got - low, k), _frequencies(want - low, k)
        sd = (1 / k / got.numel()) ** 0.5  # of one frequency
        assert (freq - 1 / k).abs().max() < 5 * sd  # uniform on [low, high), as eager's
        assert (freq - eager_freq).abs().max() < 7 * sd
    assert f.cache_info().misses == 1
    trace = str(f.last_trace())
    assert trace.count("prims.random_int(") == 6


def test_random_fill_without_bounds_covers_the_dtypes_range() -> None:
    # random_() on float32: integers in [0, 2**24]; on int64: [0, 2**63 - 1], as eager's
    f = symscalar.jit(lambda x: (x.clone().random_(), x.double().random_(), x.long().random_()))
    x = torch.zeros(20000)
    for got, top in zip(f(x), (2**24, 2**53, 2**63)):
        want = torch.zeros(20000, dtype=got.dtype).random_()
        assert got.dtype == want.dtype and bool((got == got.round()).all())
        mean, eager_mean = got.double().mean() / top, want.double().mean() / top
        assert abs(mean - 0.5) < 0.02 and abs(eager_mean - 0.5) < 0.02


def test_dynamic_bound_is_a_runtime_input() -> None:
    f = symscalar.jit(lambda x, n: x + torch.randint(0, n, x.shape), dynamic=["n"])
    x = torch.zeros(1000, dtype=torch.int64)
    for n in (2, 7, 50):
        out = f(x, n)
        assert out.min() == 0 and out.max() == n - 1
    assert f.cache_info().misses == 1
    with pytest.raises(RuntimeError, match=r"from.*less than.*to"):  # torch's own check, when it runs
        f(x, 0)


def test_multinomial_eager_distribution_and_checks() -> None:
    probs = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])

    def draw(p: torch.Tensor) -> Any:
        return torch.multinomial(p.repeat(2000, 1), 1), p.multinomial(4), torch.multinomial(p[0], 5000, True)

    f = symscalar.jit(draw)
    first, _ = _per_seed_and_fresh(f, probs)
    single, permutation, many = first
    assert single.shape == (4000, 1) and single.dtype == torch.int64
    for row in range(2):
        freq = _frequencies(single.view(2000, 2)[:, row], 4)
        torch.testing.assert_close(freq, probs[row].double(), atol=0.04, rtol=0)
    assert bool((permutation.sort(dim=1).values == torch.arange(4)).all())  # without replacement: distinct
    torch.testing.assert_close(_frequencies(many, 4), probs[0].double(), atol=0.03, rtol=0)
    eager = _frequencies(torch.multinomial(probs[0], 5000, True), 4)
    torch.testing.assert_close(eager, probs[0].double(), atol=0.03, rtol=0)
    with pytest.raises(RuntimeError, match="without replacement"):  # eager's check, at trace time
        symscalar.jit(lambda p: torch.multinomial(p, 5))(probs)
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(probs, 5)


def test_random_ops_on_dynamic_dims_one_program() -> None:
    def fn(x: torch.Tensor) -> Any:
        return torch.rand(x.shape), torch.randn_like(x), torch.randint(0, 3, x.shape), torch.multinomial(x.abs() + 1, 2)

    f = symscalar.jit(fn, dynamic_dims={"x": ("B", None)})
    for batch in (3, 7):
        outs = f(torch.randn(batch, 5))
        assert [tuple(o.shape) for o in outs] == [(batch, 5)] * 3 + [(batch, 2)]
    assert f.cache_info().misses == 1


def test_one_seed_per_call_whatever_the_number_of_random_ops() -> None:
    # The global generator advances by the program's one seed draw per call, as for dropout:
    # the random ops themselves never read it.
    many = symscalar.jit(integer_samples)
    one = symscalar.jit(lambda x: F.dropout(x, 0.5))
    x = torch.zeros(4, 3)
    states = []
    for f in (many, one):
        f(x)  # trace first
        torch.manual_seed(11)
        f(x)
        states.append(torch.get_rng_state())
    assert torch.equal(states[0], states[1])


def test_gradient_through_an_integer_mask() -> None:
    f = symscalar.jit(lambda x: x * torch.randint_like(x, 0, 2))
    x = torch.randn(30, 20, dtype=torch.float64, requires_grad=True)
    out = f(x)
    mask = (out != 0).to(x.dtype)
    assert set(mask.unique().tolist()) == {0.0, 1.0}
    (grad,) = torch.autograd.grad(out.sum(), x)
    torch.testing.assert_close(grad, mask)


def test_random_fill_of_an_argument_and_a_generator_are_refused() -> None:
    with pytest.raises(symscalar.UnsupportedOperationError, match="random_"):
        symscalar.jit(lambda y: y.random_(5))(torch.ones(3))
    g = torch.Generator().manual_seed(0)
    with pytest.raises(symscalar.UnsupportedOperationError, match="generator"):
        symscalar.jit(lambda x: x + torch.randint(0, 5, (3,), generator=g))(torch.ones(3))
    with pytest.raises(symscalar.UnsupportedOperationError, match="generator"):
        symscalar.jit(lambda x: torch.multinomial(x, 1, generator=g))(torch.ones(3))


# ---- random fills of tensors built from Python values alone (torch.empty with no tensor input)


def drop_path(x: torch.Tensor, drop_prob: float = 0.25, training: bool = True) -> torch.Tensor:
    """drop_path written over ``torch.empty`` (no tensor input), as torchvision and older timm write it."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = torch.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(keep_prob)
    random_tensor.div_(keep_prob)
    return x * random_tensor


class Block(nn.Module):
    """A residual block with stochastic depth on its branch."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.linear = nn.Linear(6, 6)
        self.drop = torchvision_ops.StochasticDepth(p, mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(torch.tanh(self.linear(x)))


@pytest.mark.parametrize("mode", ["row", "batch"])
def test_stochastic_depth_side_by_side_with_eager(mode: str) -> None:
    torch.manual_seed(0)
    block = Block(0.4, mode).double().train()
    f = symscalar.jit(block)
    x = torch.randn(64, 6, dtype=torch.float64)
    outs = []
    for _ in range(6):
        block.zero_grad(set_to_none=True)
        out = f(x)
        branch = torch.tanh(block.linear(x))
        kept = ((out - x).abs().sum(1) > 0).to(x.dtype).unsqueeze(1)  # the mask this call drew
        if mode == "batch":
            assert kept.min() == kept.max()
        expected = x + branch * kept / 0.6  # eager's formula with that mask
        torch.testing.assert_close(out, expected)
        out.pow(2).sum().backward()
        got = [p.grad.clone() for p in block.parameters()]
        block.zero_grad(set_to_none=True)
        expected.pow(2).sum().backward()
        for g, e in zip(got, [p.grad for p in block.parameters()]):
            torch.testing.assert_close(g, e)
        outs.append(kept)
    assert len({tuple(k.flatten().tolist()) for k in outs}) > 1  # a fresh mask per call
    assert f.cache_info().misses == 1 and "uniform" in str(f.last_trace())
    torch.manual_seed(3)
    a = f(x)
    torch.manual_seed(3)
    assert torch.equal(a, f(x))  # the mask is determined by the seed
    block.eval()
    torch.testing.assert_close(f(x), block(x))  # eval: identity, as eager's
    assert "uniform" not in str(f.last_trace())


def test_stochastic_depth_keep_rate_matches_eager() -> None:
    sd = torchvision_ops.StochasticDepth(0.3, "row").train()
    f = symscalar.jit(sd)
    x = torch.ones(20000, 2)
    got = f(x)
    want = sd(x)
    for out in (got, want):
        assert set(out.unique().tolist()) <= {0.0, torch.tensor(1 / 0.7).item()}
        assert abs((out[:, 0] != 0).double().mean().item() - 0.7) < 0.015
        assert bool((out[:, 0] == out[:, 1]).all())  # one draw per row


def test_drop_path_over_torch_empty() -> None:
    f = symscalar.jit(drop_path)
    x = torch.randn(4000, 3, dtype=torch.float64, requires_grad=True)
    first, _ = _per_seed_and_fresh(lambda x: (f(x),), x)
    out = first[0]
    kept = (out[:, :1] != 0).to(x.dtype)
    assert abs(kept.mean().item() - 0.75) < 0.03
    torch.testing.assert_close(out, x * kept / 0.75)
    (grad,) = torch.autograd.grad(out.sum(), x)
    torch.testing.assert_close(grad, (kept / 0.75).expand_as(x))
    trace = str(f.last_trace())
    assert "uniform" in trace and f.cache_info().misses == 1
    g = symscalar.jit(lambda x: drop_path(x, training=False))
    assert torch.equal(g(x), x)


def test_fill_of_a_constant_a_view_or_traced_op_saw_is_refused() -> None:
    def viewed(x: torch.Tensor) -> torch.Tensor:
        noise = torch.empty(4, 1)
        view = noise.view(4)
        noise.bernoulli_(0.5)
        return x * view

    def read_first(x: torch.Tensor) -> torch.Tensor:
        noise = torch.zeros(4)
        y = x + noise
        noise.uniform_()
        return y + noise

    for fn in (viewed, read_first):
        with pytest.raises(symscalar.UnsupportedOperationError, match="built from Python values alone"):
            symscalar.jit(fn)(torch.ones(4))


def test_filled_constant_returned_as_it_is() -> None:
    def fn(x: torch.Tensor) -> Any:
        noise = torch.zeros(1000)
        noise.uniform_()
        noise.mul_(2)
        return x + noise, noise

    f = symscalar.jit(fn)
    (a, na), (_, nb) = f(torch.ones(1000)), f(torch.ones(1000))
    torch.testing.assert_close(a, 1 + na)
    assert not torch.equal(na, nb) and 0 <= na.min() and na.max() < 2 and abs(na.mean().item() - 1) < 0.05


def test_dynamic_int_bound_annotation() -> None:
    def fn(x: torch.Tensor, high: DynamicInt) -> torch.Tensor:
        return torch.randint_like(x, high)

    f = symscalar.jit(fn)
    x = torch.zeros(5000)
    assert f(x, 3).max() == 2 and f(x, 9).max() == 8
    assert f.cache_info().misses == 1
