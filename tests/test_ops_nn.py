"""Layers and losses through symscalar.jit (masked_fill, tril/triu, addmm, type_as/type,
repeat_interleave, grouped-query SDPA, einsum, nll_loss, cross_entropy): values and every
gradient against torch eager and torch.autograd, finite differences in float64, one trace
for several values of each dynamic parameter, and StaticValueRequiredError for the static ones."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import CheckFailedError, StaticValueRequiredError, UnsupportedOperationError


def jit(fn: Callable[..., Any], **kwargs: Any) -> Any:
    fn.__name__ = fn.__qualname__ = "f"
    return symscalar.jit(fn, **kwargs)


def rnd(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def labels(high: int, *shape: int, seed: int, ignore: int | None = None) -> torch.Tensor:
    t = torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))
    if ignore is not None:
        t.view(-1)[::3] = ignore
    return t


def mask(*shape: int, seed: int) -> torch.Tensor:
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) > 0.5


W5 = torch.rand(5, generator=torch.Generator().manual_seed(9), dtype=torch.float64) + 0.5

CASES: list[tuple[str, Callable[..., Any], Callable[[int], tuple[Any, ...]]]] = [
    ("masked_fill", lambda x, m: x.masked_fill(m, -2.5), lambda s: (rnd(3, 4, seed=s), mask(3, 4, seed=s))),
    (
        "masked_fill_broadcast_inf",
        lambda x, m: torch.softmax(torch.masked_fill(x, m, float("-inf")), -1),
        lambda s: (rnd(2, 3, 4, seed=s), torch.ones(4, 4, dtype=torch.bool).tril()[:3]),
    ),
    (
        "masked_fill_mask_broadcasts_input",
        lambda x, m: x.masked_fill(m, 1.5),
        lambda s: (rnd(1, 3, 4, seed=s), mask(2, 1, 4, seed=s)),
    ),
    (
        "masked_fill_tensor_value",
        lambda x, m, v: x.masked_fill(m, v),
        lambda s: (rnd(3, 4, seed=s), mask(3, 4, seed=s), rnd(seed=s + 1)),
    ),
    ("tril", lambda x: torch.tril(x), lambda s: (rnd(4, 5, seed=s),)),
    ("tril_diagonal", lambda x: x.tril(-1) * 3, lambda s: (rnd(2, 4, 3, seed=s),)),
    ("triu", lambda x: torch.triu(x, 1), lambda s: (rnd(4, 4, seed=s),)),
    ("triu_method", lambda x: x.triu(-2).exp(), lambda s: (rnd(3, 5, seed=s),)),
    (
        "addmm",
        lambda b, x, w: torch.addmm(b, x, w),
        lambda s: (rnd(5, seed=s), rnd(3, 4, seed=s + 1), rnd(4, 5, seed=s + 2)),
    ),
    (
        "addmm_coefficients",
        lambda b, x, w: b.addmm(x, w, beta=0.5, alpha=-2),
        lambda s: (rnd(3, 5, seed=s), rnd(3, 4, seed=s + 1), rnd(4, 5, seed=s + 2)),
    ),
    (
        "addmm_beta_zero",
        lambda b, x, w: torch.addmm(b, x, w, beta=0),
        lambda s: (rnd(1, 5, seed=s), rnd(3, 4, seed=s + 1), rnd(4, 5, seed=s + 2)),
    ),
    (
        "gpt2_conv1d",
        lambda x, w, b: torch.addmm(b, x.view(-1, x.size(-1)), w).view(x.size()[:-1] + (5,)),
        lambda s: (rnd(2, 3, 4, seed=s), rnd(4, 5, seed=s + 1), rnd(5, seed=s + 2)),
    ),
    ("type_as", lambda x, y: x.type_as(y) * y, lambda s: (rnd(3, seed=s).float(), rnd(3, seed=s + 1))),
    ("type_dtype", lambda x: x.type(torch.float32).type(torch.float64), lambda s: (rnd(3, seed=s),)),
    ("type_name", lambda x: x.float().type("torch.DoubleTensor"), lambda s: (rnd(3, seed=s),)),
    ("repeat_interleave", lambda x: x.repeat_interleave(2, dim=1), lambda s: (rnd(2, 3, 4, seed=s),)),
    ("repeat_interleave_flat", lambda x: torch.repeat_interleave(x, 3), lambda s: (rnd(2, 3, seed=s),)),
    (
        "litgpt_gqa",
        lambda q, k: (q @ k.repeat_interleave(3, dim=1).mT).softmax(-1),
        lambda s: (rnd(2, 6, 4, 8, seed=s), rnd(2, 2, 4, 8, seed=s + 1)),
    ),
    (
        "sdpa_gqa",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        lambda s: (rnd(2, 6, 4, 8, seed=s), rnd(2, 2, 4, 8, seed=s + 1), rnd(2, 2, 4, 8, seed=s + 2)),
    ),
    (
        "einsum_attention",
        lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k),
        lambda s: (rnd(2, 3, 4, 5, seed=s), rnd(2, 3, 6, 5, seed=s + 1)),
    ),
    ("einsum_implicit", lambda a, b: torch.einsum("ij,jk", a, b), lambda s: (rnd(3, 4, seed=s), rnd(4, 2, seed=s + 1))),
    (
        "einsum_ellipsis",
        lambda a, b: torch.einsum("...ij,...jk->...ik", a, b),
        lambda s: (rnd(2, 3, 4, seed=s), rnd(4, 5, seed=s + 1)),
    ),
    (
        "einsum_three",
        lambda a, b, c: torch.einsum("bn,anm,bm->ba", [a, b, c]),
        lambda s: (rnd(2, 3, seed=s), rnd(4, 3, 5, seed=s + 1), rnd(2, 5, seed=s + 2)),
    ),
    ("einsum_outer_sum", lambda a, b: torch.einsum("i,j->", a, b), lambda s: (rnd(3, seed=s), rnd(4, seed=s + 1))),
    (
        "einsum_broadcast",
        lambda a, b: torch.einsum("bi,bi->b", a, b),
        lambda s: (rnd(2, 3, seed=s), rnd(1, 3, seed=s + 1)),
    ),
    (
        "einsum_moe",
        lambda x, w: torch.einsum("te,tec->tc", x, w),
        lambda s: (rnd(3, 2, seed=s), rnd(3, 2, 4, seed=s + 1)),
    ),
    ("nll_loss", lambda x, t: F.nll_loss(x.log_softmax(1), t), lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s))),
    (
        "nll_loss_weight_ignore",
        lambda x, t: F.nll_loss(x, t, W5, ignore_index=-1),
        lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s, ignore=-1)),
    ),
    (
        "nll_loss_none_2d",
        lambda x, t: F.nll_loss(x, t, reduction="none"),
        lambda s: (rnd(2, 5, 3, seed=s), labels(5, 2, 3, seed=s)),
    ),
    ("nll_loss_1d", lambda x, t: F.nll_loss(x, t, reduction="sum"), lambda s: (rnd(5, seed=s), labels(5, seed=s))),
    ("cross_entropy", lambda x, t: F.cross_entropy(x, t), lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s))),
    (
        "cross_entropy_nanogpt",
        lambda x, t: F.cross_entropy(x.view(-1, x.size(-1)), t.view(-1), ignore_index=-1),
        lambda s: (rnd(2, 3, 5, seed=s), labels(5, 2, 3, seed=s, ignore=-1)),
    ),
    (
        "cross_entropy_sum_ignore",
        lambda x, t: F.cross_entropy(x, t, reduction="sum"),
        lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s, ignore=-100)),
    ),
    (
        "cross_entropy_none",
        lambda x, t: F.cross_entropy(x, t, reduction="none"),
        lambda s: (rnd(2, 5, 3, seed=s), labels(5, 2, 3, seed=s)),
    ),
    (
        "cross_entropy_weight",
        lambda x, t: F.cross_entropy(x, t, weight=W5),
        lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s, ignore=-100)),
    ),
    (
        "cross_entropy_smoothing",
        lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s, ignore=-100)),
    ),
    (
        "cross_entropy_smoothing_weight",
        lambda x, t: F.cross_entropy(x, t, W5, label_smoothing=0.2),
        lambda s: (rnd(6, 5, seed=s), labels(5, 6, seed=s, ignore=-100)),
    ),
    (
        "cross_entropy_smoothing_none",
        lambda x, t: F.cross_entropy(x, t, reduction="none", label_smoothing=0.3),
        lambda s: (rnd(2, 5, 3, seed=s), labels(5, 2, 3, seed=s)),
    ),
    (
        "cross_entropy_probabilities",
        lambda x, p: F.cross_entropy(x, p.softmax(1)),
        lambda s: (rnd(6, 5, seed=s), rnd(6, 5, seed=s + 1)),
    ),
    (
        "cross_entropy_probabilities_smoothing_weight",
        lambda x, p: F.cross_entropy(x, p.softmax(1), W5, label_smoothing=0.1, reduction="sum"),
        lambda s: (rnd(6, 5, seed=s), rnd(6, 5, seed=s + 1)),
    ),
]


def _grads(out: Any, inputs: list[torch.Tensor]) -> list[Any]:
    if not out.dtype.is_floating_point or not inputs:
        return []
    total = (out * torch.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)).sum()
    return list(torch.autograd.grad(total, inputs, allow_unused=True))


def _run(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, list[Any]]:
    args = tuple(a.detach().clone().requires_grad_(a.dtype.is_floating_point) for a in args)
    out = fn(*args)
    return out, _grads(out, [a for a in args if a.requires_grad])


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_eager_over_calls(name: str, fn: Any, make: Any) -> None:
    f = jit(fn)
    for seed in range(3):
        args = make(seed)
        expected, expected_grads = _run(fn, args)
        got, got_grads = _run(f, args)
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
        for g, e in zip(got_grads, expected_grads, strict=True):
            assert (g is None) == (e is None)
            if e is not None:
                torch.testing.assert_close(g, e, rtol=1e-12, atol=1e-12)
    assert f.cache_info().misses == 1


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
@pytest.mark.slow
def test_gradcheck(name: str, fn: Any, make: Any) -> None:
    args = make(0)
    if not any(a.dtype == torch.float64 for a in args) or name in (
        "masked_fill_broadcast_inf",
        "type_dtype",
        "type_name",
    ):
        pytest.skip("no float64 path to differentiate (float32 inside, or -inf)")
    f = jit(fn)

    def floats_only(*floats: torch.Tensor) -> Any:
        it = iter(floats)
        return f(*(next(it) if a.dtype == torch.float64 else a for a in args))

    floats = [a.detach().clone().requires_grad_() for a in args if a.dtype == torch.float64]
    assert torch.autograd.gradcheck(floats_only, floats)


# ---- dynamic parameters: one trace for several values, each equal to eager

DYNAMIC_CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[Any, ...], tuple[float, ...]]] = [
    (
        "masked_fill_value",
        lambda x, m, v: x.masked_fill(m, v),
        lambda x, m, v: x.masked_fill(m, v),
        (rnd(3, 4, seed=0), mask(3, 4, seed=0)),
        (-1e9, 0.0, float("-inf"), 2.5),
    ),
    (
        "addmm_beta",
        lambda b, x, w, v: torch.addmm(b, x, w, beta=v),
        lambda b, x, w, v: torch.addmm(b, x, w, beta=v),
        (torch.full((3, 5), float("nan"), dtype=torch.float64), rnd(3, 4, seed=1), rnd(4, 5, seed=2)),
        (0.0, 0.0),
    ),
    (
        "addmm_beta_finite",
        lambda b, x, w, v: torch.addmm(b, x, w, beta=v),
        lambda b, x, w, v: torch.addmm(b, x, w, beta=v),
        (rnd(3, 5, seed=0), rnd(3, 4, seed=1), rnd(4, 5, seed=2)),
        (1.0, 0.0, -0.5),
    ),
    (
        "addmm_alpha",
        lambda b, x, w, v: torch.addmm(b, x, w, alpha=v),
        lambda b, x, w, v: torch.addmm(b, x, w, alpha=v),
        (rnd(3, 5, seed=0), rnd(3, 4, seed=1), rnd(4, 5, seed=2)),
        (1.0, 0.0, 3.0),
    ),
    (
        "label_smoothing",
        lambda x, t, v: F.cross_entropy(x, t, label_smoothing=v),
        lambda x, t, v: F.cross_entropy(x, t, label_smoothing=v),
        (rnd(6, 5, seed=0), labels(5, 6, seed=0, ignore=-100)),
        (0.0, 0.1, 0.5, 1.0, -0.5),
    ),
    (
        "label_smoothing_inf_logit",
        lambda x, t, v: F.cross_entropy(x, t, label_smoothing=v),
        lambda x, t, v: F.cross_entropy(x, t, label_smoothing=v),
        (torch.tensor([[0.0, float("-inf"), 1.0]], dtype=torch.float64), torch.tensor([0])),
        (0.0, 0.2),
    ),
    (
        "label_smoothing_probabilities",
        lambda x, p, v: F.cross_entropy(x, p, label_smoothing=v),
        lambda x, p, v: F.cross_entropy(x, p, label_smoothing=v),
        (rnd(6, 5, seed=0), rnd(6, 5, seed=1).softmax(1)),
        (0.0, 0.3, -0.25),
    ),
    (
        "index_add_alpha",
        lambda x, i, v: x.index_add(0, i, x, alpha=v),
        lambda x, i, v: x.index_add(0, i, x, alpha=v),
        (rnd(3, 2, seed=0), torch.tensor([2, 0, 0])),
        (0.5, -1.0),
    ),
]


@pytest.mark.parametrize("name, fn, ref, args, values", DYNAMIC_CASES, ids=[c[0] for c in DYNAMIC_CASES])
def test_dynamic_parameter_one_trace(name: str, fn: Any, ref: Any, args: Any, values: Any) -> None:
    f = jit(fn, dynamic=["v"])
    for v in values:
        torch.testing.assert_close(f(*args, v), ref(*args, v), rtol=1e-12, atol=1e-12, equal_nan=True)
    assert f.cache_info().misses == 1


def test_label_smoothing_out_of_range_is_checked_on_every_call() -> None:
    f = jit(lambda x, t, v: F.cross_entropy(x, t, label_smoothing=v), dynamic=["v"])
    x, t = rnd(4, 3, seed=0), labels(3, 4, seed=0)
    f(x, t, 0.5)
    with pytest.raises(CheckFailedError, match="label_smoothing"):
        f(x, t, 1.5)
    with pytest.raises(RuntimeError, match="label_smoothing"):
        jit(lambda x, t: F.cross_entropy(x, t, label_smoothing=1.1))(x, t)
    torch.testing.assert_close(f(x, t, -0.5), F.cross_entropy(x, t, label_smoothing=-0.5))  # torch: no smoothing


STATIC_CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...], Any, str]] = [
    ("tril_diagonal", lambda x, t, d: torch.tril(x, d), (rnd(3, 3, seed=0), labels(3, 3, seed=0)), 1, "diagonal"),
    ("triu_diagonal", lambda x, t, d: x.triu(d), (rnd(3, 3, seed=0), labels(3, 3, seed=0)), 1, "diagonal"),
    (
        "repeat_interleave_repeats",
        lambda x, t, d: x.repeat_interleave(d, 0),
        (rnd(3, 3, seed=0), labels(3, 3, seed=0)),
        2,
        "repeats",
    ),
    (
        "cross_entropy_ignore_index",
        lambda x, t, d: F.cross_entropy(x, t, ignore_index=d),
        (rnd(3, 3, seed=0), labels(3, 3, seed=0)),
        1,
        "ignore_index",
    ),
    (
        "nll_loss_ignore_index",
        lambda x, t, d: F.nll_loss(x, t, ignore_index=d),
        (rnd(3, 3, seed=0), labels(3, 3, seed=0)),
        1,
        "ignore_index",
    ),
]


@pytest.mark.parametrize("name, fn, args, value, param", STATIC_CASES, ids=[c[0] for c in STATIC_CASES])
def test_static_parameters_refuse_dynamic_values(name: str, fn: Any, args: Any, value: Any, param: str) -> None:
    jit(fn)(*args, value)
    f = jit(fn, dynamic=[list(inspect.signature(fn).parameters)[-1]])
    with pytest.raises(StaticValueRequiredError, match=f'"{param}" must be static'):
        f(*args, value)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda x: x.masked_fill(x > 0, torch.ones(2, dtype=torch.float64)), RuntimeError, "0-dimensional value"),
        (lambda x: torch.einsum("ii->i", x), UnsupportedOperationError, "diagonal"),
        (
            lambda x: F.scaled_dot_product_attention(
                x.expand(1, 3, 4, 3), x.expand(1, 2, 4, 3), x.expand(1, 2, 4, 3), enable_gqa=True
            ),
            RuntimeError,
            "multiple of the key/value heads",
        ),
        (lambda x: x.type("torch.cuda.DoubleTensor"), UnsupportedOperationError, "another device"),
    ],
)
def test_invalid_calls_raise_clearly(call: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        jit(call)(rnd(4, 3, seed=0) if "einsum" not in inspect.getsource(call) else rnd(3, 3, seed=0))


def test_type_without_arguments_names_the_type() -> None:
    names = []
    jit(lambda x: names.append(x.type()) or x)(rnd(2, seed=0).float())
    assert names == [torch.randn(1).type()]


@pytest.mark.cuda
@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_cuda_matches_eager_cuda(name: str, fn: Any, make: Any) -> None:
    # every backend the machine has ("auto": nvFuser where it imports), against eager on CUDA
    args = tuple(a.cuda() for a in make(0))
    expected, expected_grads = _run(fn, args)
    got, got_grads = _run(jit(fn), args)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)
    for g, e in zip(got_grads, expected_grads, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-10)


@pytest.mark.cuda
@pytest.mark.parametrize("beta, alpha", [(0.0, 1.0), (1.0, 0.0)])
def test_cuda_addmm_zero_coefficient_drops_nan_as_eager(beta: float, alpha: float) -> None:
    nan = torch.full((3, 4), float("nan"), device="cuda", dtype=torch.float64)
    b, x, w = (
        (nan[:, :1], rnd(3, 2, seed=0).cuda(), rnd(2, 4, seed=1).cuda())
        if beta == 0
        else (rnd(3, 4, seed=0).cuda(), nan[:, :2], rnd(2, 4, seed=1).cuda())
    )
    f = jit(lambda b, x, w, v, u: torch.addmm(b, x, w, beta=v, alpha=u), dynamic=["v", "u"])
    torch.testing.assert_close(f(b, x, w, beta, alpha), torch.addmm(b, x, w, beta=beta, alpha=alpha), equal_nan=True)
