"""Randomness as a program input: dropout, rand, randn, bernoulli inside traces.

Each call of a jitted function draws fresh samples (the RNG seed is a dynamic input drawn from
torch's default generator), ``torch.manual_seed`` makes runs reproducible, a backward reuses
its own forward's mask, and no sample is ever a constant of the program.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar import DynamicFloat
from symscalar.errors import CheckFailedError, UnsupportedOperationError
from symscalar.trace import ScalarVar


def dropout_fn(x: torch.Tensor, p: DynamicFloat) -> Any:
    return F.dropout(x, p, training=True)


def test_dropout_fresh_mask_each_call_one_trace() -> None:
    f = symscalar.jit(dropout_fn)
    x = torch.randn(64, 32)
    outs = [f(x, 0.5) for _ in range(3)]
    assert not torch.equal(outs[0], outs[1]) and not torch.equal(outs[1], outs[2])
    for out in outs:  # each element is dropped or scaled by 1/(1-p), exactly as eager's
        kept = out != 0
        torch.testing.assert_close(out[kept], x[kept] * 2.0, rtol=0, atol=0)
    assert f.cache_info().misses == 1
    trace = f.last_trace()
    assert trace is not None
    assert sum(isinstance(v, ScalarVar) and v.dtype is int for v in trace.inputs) == 1  # the seed
    assert "uniform" in str(trace)


def test_dropout_reproducible_under_manual_seed() -> None:
    f = symscalar.jit(dropout_fn)
    x = torch.randn(16, 16)
    torch.manual_seed(123)
    first = [f(x, 0.3) for _ in range(2)]
    torch.manual_seed(123)
    second = [f(x, 0.3) for _ in range(2)]
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    torch.manual_seed(124)
    assert not torch.equal(f(x, 0.3), first[0])


def test_dropout_dynamic_p_keep_rate_and_edges() -> None:
    f = symscalar.jit(dropout_fn)
    x = torch.ones(200, 200)
    torch.manual_seed(0)
    for p in (0.1, 0.5, 0.9):
        out = f(x, p)
        assert abs((out != 0).double().mean().item() - (1 - p)) < 0.01
        torch.testing.assert_close(out[out != 0], torch.full_like(out[out != 0], 1 / (1 - p)))
    assert torch.equal(f(x, 0.0), x)
    assert torch.equal(f(x, 1.0), torch.zeros_like(x))  # no 0/0
    assert f.cache_info().misses == 1
    with pytest.raises(CheckFailedError, match="between 0 and 1"):
        f(x, 1.5)


def test_dropout_static_p_out_of_range_raises_at_trace_time() -> None:
    f = symscalar.jit(lambda x: F.dropout(x, 1.5))
    with pytest.raises(ValueError, match="between 0 and 1"):
        f(torch.ones(3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_backward_reuses_its_forward_mask(dtype: torch.dtype) -> None:
    f = symscalar.jit(dropout_fn)
    x = torch.randn(32, 32, dtype=dtype, requires_grad=True)
    out1 = f(x, 0.25)
    out2 = f(x, 0.25)  # another call in between: a fresh mask, which the first backward must not see
    assert not torch.equal(out1, out2)
    (g1,) = torch.autograd.grad(out1.sum(), x)
    mask1 = (out1 != 0).to(dtype) / 0.75
    torch.testing.assert_close(g1, mask1)
    (g2,) = torch.autograd.grad((out2 * 3).sum(), x)
    torch.testing.assert_close(g2, 3 * (out2 != 0).to(dtype) / 0.75)


def test_gradcheck_float64_under_fixed_seed() -> None:
    f = symscalar.jit(lambda x, p: torch.tanh(F.dropout(x * 2, p)) + torch.rand_like(x), dynamic=["p"])

    def seeded(x: torch.Tensor) -> torch.Tensor:
        torch.manual_seed(7)
        return f(x, 0.4)

    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(seeded, (x,))


def test_dropout_matches_eager_given_the_same_mask() -> None:
    # The jitted program's mask cannot be eager's (other stream); given the mask it draws,
    # out and grads are exactly eager's formula input * bernoulli(1-p) / (1-p).
    f = symscalar.jit(dropout_fn)
    x = torch.randn(50, dtype=torch.float32, requires_grad=True)
    out = f(x, 0.3)
    keep = (out != 0) | (x == 0)
    expected = x * keep.float().div_(1 - 0.3)
    assert torch.equal(out, expected)


def test_dropout_eval_and_module_modes() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
    x = torch.randn(4, 8)
    model.eval()
    f_eval = symscalar.jit(model)
    assert torch.equal(f_eval(x), model(x))
    assert "uniform" not in str(f_eval.last_trace())
    model.train()
    f_train = symscalar.jit(model)
    a, b = f_train(x), f_train(x)
    assert not torch.equal(a, b)
    dense = model[0](x)
    for out in (a, b):
        kept = out != 0
        torch.testing.assert_close(out[kept], dense[kept] * 2)


@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_zero_in_training_is_eager_identity_and_draws_nothing(inplace: bool) -> None:
    # Eager's dropout with p == 0 returns its input and draws no sample; the jitted module
    # must give the same values and gradients, sample no mask, and leave torch's generator
    # where eager leaves it (so random ops after the call see eager's stream).
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.0, inplace=inplace), nn.Tanh())
    jitted = symscalar.jit(model)
    x = torch.randn(4, 8)
    for _ in range(2):
        grads = []
        states = []
        outs = []
        for fn in (model, jitted):
            model.zero_grad(set_to_none=True)
            torch.manual_seed(7)
            out = fn(x)
            states.append(torch.get_rng_state())
            out.sum().backward()
            outs.append(out)
            grads.append([p.grad for p in model.parameters()])
        assert torch.equal(outs[0], outs[1])
        assert torch.equal(states[0], states[1])
        for g_eager, g_jit in zip(*grads):
            assert g_eager is not None and g_jit is not None
            torch.testing.assert_close(g_jit, g_eager)
    assert "uniform" not in str(jitted.last_trace())
    assert "uniform" not in str(jitted.last_backward_trace())


def test_nn_dropout_inplace_is_refused() -> None:
    f = symscalar.jit(nn.Dropout(0.5, inplace=True))
    with pytest.raises(NotImplementedError, match="inplace=True"):
        f(torch.ones(3))


def factories_fn(x: torch.Tensor) -> Any:
    return (
        torch.rand(3, 4),
        torch.randn((3, 4), dtype=torch.float64),
        torch.rand_like(x),
        torch.randn_like(x),
        torch.bernoulli(torch.full_like(x, 0.5) + 0 * x),
        x.bernoulli(0.25),
    )


def test_factories_shapes_dtypes_ranges_fresh_each_call() -> None:
    f = symscalar.jit(factories_fn)
    x = torch.randn(100, 50)
    first, second = f(x), f(x)
    shapes = [(3, 4), (3, 4), (100, 50), (100, 50), (100, 50), (100, 50)]
    dtypes = [torch.float32, torch.float64] + [torch.float32] * 4
    for a, b, shape, dtype in zip(first, second, shapes, dtypes):
        assert a.shape == shape and a.dtype == dtype
        assert not torch.equal(a, b)
    u = first[2]
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean().item() - 0.5) < 0.02
    n = first[3]
    assert abs(n.mean().item()) < 0.03 and abs(n.std().item() - 1) < 0.03
    for sample, p in ((first[4], 0.5), (first[5], 0.25)):
        assert set(sample.unique().tolist()) <= {0.0, 1.0}
        assert abs(sample.mean().item() - p) < 0.02
    # two random ops of one call draw independent streams
    assert not torch.equal(first[2], torch.rand_like(x)) and not torch.equal(first[2], first[3])
    assert f.cache_info().misses == 1


def test_generator_argument_and_unsupported_random_ops_are_refused() -> None:
    g = torch.Generator().manual_seed(0)
    with pytest.raises(UnsupportedOperationError, match="generator"):
        symscalar.jit(lambda x: x + torch.rand(3, generator=g))(torch.ones(3))
    with pytest.raises(UnsupportedOperationError, match="randperm"):
        symscalar.jit(lambda x: x + torch.randperm(3))(torch.ones(3))


def test_sdpa_dropout_draws_fresh_weights() -> None:
    f = symscalar.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    q, k, v = (torch.randn(2, 3, 8, 4) for _ in range(3))
    a, b = f(q, k, v), f(q, k, v)
    assert a.shape == (2, 3, 8, 4) and not torch.equal(a, b)
    no_drop = F.scaled_dot_product_attention(q, k, v)
    assert not torch.allclose(a, no_drop)


def test_eager_ops_outside_a_trace_use_the_default_generator() -> None:
    torch.manual_seed(3)
    a = symscalar.ops.rand((4,))
    torch.manual_seed(3)
    assert torch.equal(a, symscalar.ops.rand((4,)))
    assert not torch.equal(a, symscalar.ops.rand((4,)))


# ---- in-place random fills (ops/random.py): drawn from the program's RNG seed


def _drop_path(x: torch.Tensor, drop_prob: float = 0.2) -> torch.Tensor:
    """timm's drop_path, as timm writes it."""
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    random_tensor.div_(keep_prob)
    return x * random_tensor


FILLS = {
    "drop_path": (_drop_path, 1.0, (0.2 * 0.8) ** 0.5 / 0.8),
    "uniform_": (lambda x: torch.empty_like(x).uniform_(-1.0, 3.0), 1.0, 4 / 12**0.5),
    "normal_": (lambda x: x.new_empty(x.shape).normal_(2.0, 3.0), 2.0, 3.0),
    "exponential_": (lambda x: torch.empty_like(x).exponential_(2.0), 0.5, 0.5),
    "bernoulli_tensor_p": (lambda x: torch.zeros_like(x).add(1).bernoulli_(x * 0 + 0.25), 0.25, 0.1875**0.5),
}


@pytest.mark.parametrize("name", list(FILLS))
def test_inplace_random_fill_distribution_and_determinism(name: str) -> None:
    fn, mean, std = FILLS[name]
    f = symscalar.jit(fn)
    x = torch.ones(40000, 2)
    torch.manual_seed(3)
    a, b = f(x), f(x)
    torch.manual_seed(3)
    again = f(x)
    assert torch.equal(a, again) and not torch.equal(a, b)  # per seed, fresh per call
    assert abs(a.mean().item() - mean) < 0.02 * max(1.0, std) * 2 and abs(a.std().item() - std) < 0.03 * max(1.0, std)
    eager = fn(x)
    assert (a.shape, a.dtype) == (eager.shape, eager.dtype)
    assert abs(eager.mean().item() - mean) < 0.04 * max(1.0, std)  # the distribution is eager's


def test_inplace_random_fill_of_an_argument_is_refused() -> None:
    with pytest.raises(symscalar.UnsupportedOperationError, match="uniform_"):
        symscalar.jit(lambda y: y.uniform_())(torch.ones(3))


# Parameters that leave a fill no randomness: its values are eager's exactly (the conformance
# test compares the random forms by shape, dtype, device and requires_grad only).
DEGENERATE_FILLS = {
    "bernoulli_p0": lambda x: x.clone().bernoulli_(0.0),
    "bernoulli_p1": lambda x: x.clone().bernoulli_(1.0),
    "bernoulli_p1_int64": lambda x: x.long().bernoulli_(1.0),
    "bernoulli_tensor_p01": lambda x: x.clone().bernoulli_((x > 0).to(x.dtype)),
    "uniform_low_eq_high": lambda x: x.clone().uniform_(-1.5, -1.5),
    "normal_std0": lambda x: x.clone().normal_(2.5, 0.0),
}


@pytest.mark.parametrize("name", list(DEGENERATE_FILLS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_inplace_random_fill_degenerate_parameters_match_eager(name: str, dtype: torch.dtype) -> None:
    fn = DEGENERATE_FILLS[name]
    x = torch.randn(5, 3, dtype=dtype)
    got, expected = symscalar.jit(fn)(x), fn(x)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    assert torch.equal(got, expected), name


def test_uniform_fill_takes_torchs_from_and_to_keywords():
    f = symscalar.jit(lambda x: torch.zeros_like(x).uniform_(**{"from": 2.0, "to": 3.0}))
    g = symscalar.jit(lambda x: torch.zeros_like(x).uniform_(2.0, to=3.0))
    for fn in (f, g):
        out = fn(torch.ones(1000))
        assert bool(((out >= 2.0) & (out < 3.0)).all()) and out.std() > 0.1
    with pytest.raises(TypeError):  # eager refuses `low=` too
        torch.zeros(3).uniform_(low=1.0)
    with pytest.raises(TypeError, match="uniform_"):
        symscalar.jit(lambda x: torch.zeros_like(x).uniform_(low=1.0))(torch.ones(3))
