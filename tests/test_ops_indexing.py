"""Indexing ops through symscalar.jit (embedding, index_select, gather, scatter, index_add,
index_put, advanced indexing, cumsum, sort, argsort, topk, one_hot): values and every
gradient against torch eager and torch.autograd, finite differences in float64, several calls
of one trace with new data, and the static contract of dims, k, padding_idx, num_classes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import StaticValueRequiredError, UnsupportedOperationError


def jit(fn: Callable[..., Any], **kwargs: Any) -> Any:
    fn.__name__ = fn.__qualname__ = "f"
    return symscalar.jit(fn, **kwargs)


def idx(high: int, *shape: int, seed: int) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


def rnd(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def perm_index(n: int, *shape: int, dim: int, seed: int) -> torch.Tensor:
    """Distinct indices along ``dim`` (scatter's result is then well defined)."""
    g = torch.Generator().manual_seed(seed)
    full = torch.rand(shape[:dim] + (n,) + shape[dim + 1 :], generator=g).argsort(dim)
    return full.narrow(dim, 0, shape[dim])


# (id, fn, make(seed) -> args). Float64 tensors are differentiated; integer ones are indices.
CASES: list[tuple[str, Callable[..., Any], Callable[[int], tuple[Any, ...]]]] = [
    ("embedding", lambda i, w: F.embedding(i, w), lambda s: (idx(7, 2, 3, seed=s), rnd(7, 4, seed=s))),
    (
        "embedding_padding",
        lambda i, w: F.embedding(i, w, padding_idx=1) * 2,
        lambda s: (torch.tensor([[1, 2, 1], [0, 6, 2]]), rnd(7, 4, seed=s)),
    ),
    (
        "embedding_negative_padding",
        lambda i, w: F.embedding(i, w, padding_idx=-1).exp(),
        lambda s: (torch.tensor([6, 2, 6, 0]), rnd(7, 3, seed=s)),
    ),
    (
        "embedding_freq",
        lambda i, w: F.embedding(i, w, scale_grad_by_freq=True).sin(),
        lambda s: (torch.tensor([[1, 2, 1], [1, 6, 2]]), rnd(7, 4, seed=s)),
    ),
    ("embedding_int32", lambda i, w: F.embedding(i, w), lambda s: (idx(5, 6, seed=s).int(), rnd(5, 2, seed=s))),
    (
        "nn_embedding_like",
        lambda i, w: torch.nn.functional.embedding(i, w, 0, None, 2.0, False, False),
        lambda s: (idx(4, 3, seed=s), rnd(4, 5, seed=s)),
    ),
    ("index_select", lambda x, i: torch.index_select(x, 1, i), lambda s: (rnd(3, 5, seed=s), idx(5, 7, seed=s))),
    (
        "index_select_method",
        lambda x, i: x.index_select(-1, i).cos(),
        lambda s: (rnd(2, 3, 4, seed=s), idx(4, 2, seed=s)),
    ),
    ("index_select_0d", lambda x, i: x.index_select(0, i), lambda s: (rnd(3, 2, seed=s), torch.tensor(2))),
    (
        "index_add",
        lambda x, i, v: torch.index_add(x, 0, i, v),
        lambda s: (rnd(5, 3, seed=s), idx(5, 6, seed=s), rnd(6, 3, seed=s + 1)),
    ),
    (
        "index_add_alpha",
        lambda x, i, v: x.index_add(1, i, v, alpha=-2.5),
        lambda s: (rnd(2, 4, seed=s), idx(4, 3, seed=s), rnd(2, 3, seed=s + 1)),
    ),
    ("gather", lambda x, i: torch.gather(x, 1, i), lambda s: (rnd(3, 5, seed=s), idx(5, 3, 4, seed=s))),
    ("gather_dim0", lambda x, i: x.gather(0, i) ** 2, lambda s: (rnd(4, 3, seed=s), idx(4, 6, 2, seed=s))),
    (
        "scatter_add",
        lambda x, i, v: torch.scatter_add(x, 1, i, v),
        lambda s: (rnd(3, 4, seed=s), idx(4, 3, 5, seed=s), rnd(3, 5, seed=s + 1)),
    ),
    (
        "scatter",
        lambda x, i, v: torch.scatter(x, 1, i, v),
        lambda s: (rnd(3, 5, seed=s), perm_index(5, 3, 2, dim=1, seed=s), rnd(3, 2, seed=s + 1)),
    ),
    (
        "scatter_value",
        lambda x, i: x.scatter(0, i, -1.5),
        lambda s: (rnd(4, 3, seed=s), perm_index(4, 2, 3, dim=0, seed=s)),
    ),
    (
        "scatter_value_kw",
        lambda x, i: torch.scatter(x, 1, i, value=2.0),
        lambda s: (rnd(2, 4, seed=s), perm_index(4, 2, 2, dim=1, seed=s)),
    ),
    ("take_along_dim", lambda x, i: torch.take_along_dim(x, i, 1), lambda s: (rnd(3, 5, seed=s), idx(5, 3, 2, seed=s))),
    (
        "take_along_dim_broadcast",
        lambda x, i: x.take_along_dim(i, dim=-1),
        lambda s: (rnd(2, 3, 5, seed=s), idx(5, 1, 3, 4, seed=s)),
    ),
    (
        "take_along_dim_broadcast_input",
        lambda x, i: torch.take_along_dim(x, i, 1),
        lambda s: (rnd(1, 5, seed=s), idx(5, 3, 2, seed=s)),
    ),
    (
        "take_along_dim_broadcast_both",
        lambda x, i: x.take_along_dim(i, dim=-1),
        lambda s: (rnd(2, 1, 5, seed=s), idx(5, 1, 3, 4, seed=s)),
    ),
    ("max_all", lambda x: torch.max(torch.cat([x, x])), lambda s: (rnd(3, 4, seed=s),)),
    ("min_all_method", lambda x: x.min() * x, lambda s: (rnd(3, 4, seed=s),)),
    ("max_dim_ties", lambda x: tuple(torch.max(torch.cat([x, x], 1), 1)), lambda s: (rnd(3, 4, seed=s),)),
    (
        "min_dim_keepdim_ties",
        lambda x: tuple(torch.cat([x, x]).min(dim=0, keepdim=True)),
        lambda s: (rnd(3, 4, seed=s),),
    ),
    ("max_dim_values", lambda x: x.max(-1).values.exp(), lambda s: (rnd(2, 3, 4, seed=s),)),
    ("max_dim_0d", lambda x: tuple(torch.max(x.sum(), 0)), lambda s: (rnd(3, seed=s),)),
    ("max_pairwise", lambda x, y: torch.max(x, y), lambda s: (rnd(3, 4, seed=s), rnd(4, seed=s + 1))),
    ("min_pairwise_kw", lambda x, y: x.min(other=y), lambda s: (rnd(3, 4, seed=s), rnd(3, 4, seed=s + 1))),
    ("take_along_dim_flat", lambda x, i: torch.take_along_dim(x, i), lambda s: (rnd(3, 4, seed=s), idx(12, 5, seed=s))),
    ("argsort_gather", lambda x: x.gather(-1, x.argsort(-1)), lambda s: (rnd(3, 6, seed=s),)),
    (
        "index_put",
        lambda x, i, v: torch.index_put(x, (i,), v),
        lambda s: (rnd(5, 3, seed=s), perm_index(5, 2, dim=0, seed=s), rnd(2, 3, seed=s + 1)),
    ),
    (
        "index_put_accumulate",
        lambda x, i, v: x.index_put((i,), v, accumulate=True),
        lambda s: (rnd(5, 3, seed=s), idx(5, 6, seed=s), rnd(6, 3, seed=s + 1)),
    ),
    (
        "index_put_broadcast",
        lambda x, i, j, v: x.index_put((i, j), v, True),
        lambda s: (rnd(4, 3, 2, seed=s), idx(4, 5, seed=s), idx(3, 5, seed=s + 1), rnd(2, seed=s + 2)),
    ),
    ("getitem_tensor", lambda x, i: x[i], lambda s: (rnd(4, 3, seed=s), idx(4, 2, 5, seed=s))),
    ("getitem_tensor_middle", lambda x, i: x[:, i] * 2, lambda s: (rnd(2, 4, 3, seed=s), idx(4, 5, seed=s))),
    ("getitem_int_and_tensor", lambda x, i: x[:, i, :, 0], lambda s: (rnd(2, 3, 4, 5, seed=s), idx(3, 7, seed=s))),
    (
        "getitem_separated_tensors",
        lambda x, i, j: x[i, :, j],
        lambda s: (rnd(3, 2, 4, seed=s), idx(3, 5, seed=s), idx(4, 5, seed=s + 1)),
    ),
    (
        "getitem_adjacent_tensors",
        lambda x, i, j: x[:, i, j],
        lambda s: (rnd(2, 3, 4, seed=s), idx(3, 2, 1, seed=s), idx(4, 3, seed=s + 1)),
    ),
    ("getitem_0d_tensor", lambda x, i: x[:, i[0], 1:3], lambda s: (rnd(2, 3, 4, seed=s), idx(3, 2, seed=s))),
    ("getitem_list", lambda x: x[1:, [0, 2]], lambda s: (rnd(3, 4, 2, seed=s),)),
    ("getitem_ellipsis", lambda x, i: x[..., i], lambda s: (rnd(2, 3, 4, seed=s), idx(4, 2, 2, seed=s))),
    ("cumsum", lambda x: torch.cumsum(x, 1), lambda s: (rnd(3, 5, seed=s),)),
    ("cumsum_method", lambda x: x.cumsum(-1) * x, lambda s: (rnd(2, 3, 4, seed=s),)),
    ("cumsum_dtype", lambda x: x.cumsum(0, dtype=torch.float64), lambda s: (rnd(4, 2, seed=s).float().double(),)),
    ("sort", lambda x: tuple(torch.sort(x, 1)), lambda s: (rnd(3, 5, seed=s),)),
    ("sort_descending", lambda x: x.sort(0, descending=True)[0] * 3, lambda s: (rnd(4, 3, seed=s),)),
    (
        "sort_stable_kw",
        lambda x: torch.sort(x, stable=True, dim=-1, descending=True).values,
        lambda s: (rnd(2, 5, seed=s),),
    ),
    ("argsort", lambda x: torch.argsort(x, 1, descending=True), lambda s: (rnd(3, 5, seed=s),)),
    ("topk", lambda x: tuple(torch.topk(x, 2)), lambda s: (rnd(3, 5, seed=s),)),
    ("topk_smallest", lambda x: x.topk(3, dim=0, largest=False).values.exp(), lambda s: (rnd(4, 3, seed=s),)),
    ("topk_indices", lambda x: torch.topk(x, 2, 1)[1], lambda s: (rnd(3, 5, seed=s),)),
    ("one_hot", lambda i: F.one_hot(i, 6), lambda s: (idx(6, 3, 4, seed=s),)),
    ("one_hot_float", lambda i, w: F.one_hot(i, 4).to(w.dtype) @ w, lambda s: (idx(4, 5, seed=s), rnd(4, 2, seed=s))),
]
IDS = [c[0] for c in CASES]


def _grads(out: Any, inputs: list[torch.Tensor]) -> list[torch.Tensor | None]:
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.is_floating_point]
    if not outs or not inputs:
        return []
    total = sum((o * torch.linspace(-1, 1, o.numel(), dtype=o.dtype).reshape(o.shape)).sum() for o in outs)
    return list(torch.autograd.grad(total, inputs, allow_unused=True))


def _run(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, list[Any]]:
    args = tuple(a.detach().clone().requires_grad_(a.dtype.is_floating_point) for a in args)
    out = fn(*args)
    return out, _grads(out, [a for a in args if a.requires_grad])


@pytest.mark.parametrize("name, fn, make", CASES, ids=IDS)
def test_values_and_gradients_match_eager_over_calls(name: str, fn: Any, make: Any) -> None:
    f = jit(fn)
    for seed in range(3):  # one trace, new data on every call
        args = make(seed)
        expected, expected_grads = _run(fn, args)
        got, got_grads = _run(f, args)
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)
        assert len(got_grads) == len(expected_grads)
        for g, e in zip(got_grads, expected_grads):
            assert (g is None) == (e is None)
            if e is not None:
                torch.testing.assert_close(g, e, rtol=0, atol=1e-12)
    assert f.cache_info().misses == 1


# padding_idx and scale_grad_by_freq change the gradient on purpose (torch's rule, not the
# derivative), so finite differences do not apply to them.
DIFFERENTIABLE = [
    c
    for c in CASES
    if any(a.dtype.is_floating_point for a in c[2](0))
    and "padding" not in c[0]
    and "freq" not in c[0]
    and c[0] != "nn_embedding_like"
]


@pytest.mark.parametrize("name, fn, make", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_gradcheck(name: str, fn: Any, make: Any) -> None:
    f = jit(fn)
    args = make(0)

    def floats_only(*floats: torch.Tensor) -> Any:
        it = iter(floats)
        full = [next(it) if a.dtype.is_floating_point else a for a in args]
        out = f(*full)
        return tuple(o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.is_floating_point)

    floats = [a.detach().clone().requires_grad_() for a in args if a.dtype.is_floating_point]
    assert torch.autograd.gradcheck(floats_only, floats)


def test_scatter_add_with_a_larger_source_tensor() -> None:
    # only src[:index.shape] is read; the rest gets a zero gradient (eager torch's own backward
    # raises a shape error here, so finite differences are the reference)
    x, i, v = rnd(4, 3, seed=0), idx(4, 2, 2, seed=0), rnd(3, 3, seed=1)
    f = jit(lambda x, i, v: x.scatter_add(0, i, v))
    torch.testing.assert_close(f(x, i, v), x.scatter_add(0, i, v), rtol=0, atol=1e-12)
    xg, vg = x.clone().requires_grad_(), v.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: f(a, i, b), (xg, vg))
    f(xg, i, vg).sum().backward()
    assert torch.equal(vg.grad[2], torch.zeros(3, dtype=torch.float64))


def test_embedding_padding_row_gets_no_gradient_but_is_read() -> None:
    w = rnd(5, 3, seed=0).requires_grad_()
    i = torch.tensor([0, 2, 0])
    f = jit(lambda i, w: F.embedding(i, w, padding_idx=0))
    out = f(i, w)
    torch.testing.assert_close(out[0], w[0].detach())  # the forward reads the row
    out.sum().backward()
    assert torch.equal(w.grad[0], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(w.grad[2], torch.ones(3, dtype=torch.float64))


def test_nn_embedding_module_trains_like_eager() -> None:
    torch.manual_seed(0)
    eager = torch.nn.Embedding(11, 4, padding_idx=3).double()
    jitted_module = torch.nn.Embedding(11, 4, padding_idx=3).double()
    jitted_module.load_state_dict(eager.state_dict())
    f = symscalar.jit(jitted_module)
    opts = [torch.optim.SGD(m.parameters(), lr=0.5) for m in (eager, jitted_module)]
    for step in range(3):
        i = idx(11, 2, 5, seed=step)
        for run, opt in zip((eager, f), opts):
            opt.zero_grad()
            run(i).tanh().sum().backward()
            opt.step()
        torch.testing.assert_close(jitted_module.weight, eager.weight, rtol=0, atol=1e-12)


def test_out_of_range_index_raises_as_in_eager() -> None:
    f = jit(lambda i, w: F.embedding(i, w))
    w = rnd(4, 2, seed=0)
    f(torch.tensor([0, 3]), w)
    with pytest.raises(IndexError):
        f(torch.tensor([0, 4]), w)
    g = jit(lambda i: F.one_hot(i, 3))
    g(torch.tensor([0, 2]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        g(torch.tensor([0, 3]))


def test_index_add_alpha_is_dynamic() -> None:
    f = jit(lambda x, i, v, a: x.index_add(0, i, v, alpha=a), dynamic=["a"])
    x, i, v = rnd(4, 2, seed=0), idx(4, 3, seed=0), rnd(3, 2, seed=1)
    for a in (0.5, -3.0, 2.0):
        torch.testing.assert_close(f(x, i, v, a), x.index_add(0, i, v, alpha=a))
    assert f.cache_info().misses == 1


def test_scatter_value_is_dynamic() -> None:
    f = jit(lambda x, i, s: x.scatter(1, i, s), dynamic=["s"])
    x, i = rnd(3, 4, seed=0), perm_index(4, 3, 2, dim=1, seed=0)
    for s in (0.5, -3.0):
        torch.testing.assert_close(f(x, i, s), x.scatter(1, i, s))
    assert f.cache_info().misses == 1


def test_index_put_value_is_dynamic() -> None:
    x, i = rnd(5, 2, seed=0), idx(5, 4, seed=0)
    g = jit(lambda x, i, s: symscalar.ops.index_put(x, (i,), s, accumulate=True), dynamic=["s"])
    for s in (0.5, -3.0):
        torch.testing.assert_close(g(x, i, s), torch.index_put(x, (i,), torch.tensor(s, dtype=torch.float64), True))
    assert g.cache_info().misses == 1


STATIC_CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...], str]] = [
    ("index_select_dim", lambda x, i, d: torch.index_select(x, d, i), (rnd(3, 4, seed=0), idx(3, 2, seed=0), 0), "dim"),
    ("gather_dim", lambda x, i, d: x.gather(d, i), (rnd(3, 4, seed=0), idx(3, 2, 2, seed=0), 0), "dim"),
    ("scatter_add_dim", lambda x, i, d: x.scatter_add(d, i, x), (rnd(3, 4, seed=0), idx(3, 3, 4, seed=0), 0), "dim"),
    (
        "embedding_padding_idx",
        lambda i, w, d: F.embedding(i, w, padding_idx=d),
        (idx(4, 3, seed=0), rnd(4, 2, seed=0), 1),
        "padding_idx",
    ),
    ("cumsum_dim", lambda x, i, d: torch.cumsum(x, d), (rnd(3, 4, seed=0), idx(3, 2, seed=0), 1), "dim"),
    ("topk_k", lambda x, i, d: torch.topk(x, d)[0], (rnd(3, 4, seed=0), idx(3, 2, seed=0), 2), "k"),
    ("sort_dim", lambda x, i, d: torch.sort(x, d)[1], (rnd(3, 4, seed=0), idx(3, 2, seed=0), 0), "dim"),
    ("one_hot_num_classes", lambda x, i, d: F.one_hot(i, d), (rnd(3, 4, seed=0), idx(3, 2, seed=0), 3), "num_classes"),
]


@pytest.mark.parametrize("name, fn, args, param", STATIC_CASES, ids=[c[0] for c in STATIC_CASES])
def test_static_parameters_refuse_dynamic_values(name: str, fn: Any, args: Any, param: str) -> None:
    jit(fn)(*args)  # static: fine
    f = jit(fn, dynamic=[list(inspect.signature(fn).parameters)[-1]])
    with pytest.raises(StaticValueRequiredError, match=f'"{param}" must be static'):
        f(*args)


def test_specialized_static_parameter_is_guarded() -> None:
    f = jit(lambda x, k: torch.topk(x, symscalar.specialize(k)).values, dynamic=["k"])
    x = rnd(3, 5, seed=0)
    for k in (2, 3, 2):
        torch.testing.assert_close(f(x, k), torch.topk(x, k).values)
    assert f.cache_info().misses == 2


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda i, w: F.embedding(i, w, max_norm=1.0), "max_norm"),
        (lambda i, w: F.embedding(i, w, sparse=True), "sparse=True"),
        (lambda i, w: F.one_hot(i), "num_classes=-1"),
        (lambda i, w: w[i > 0], "boolean mask"),
        (lambda i, w: torch.repeat_interleave(w, i, dim=0), "tensor of repeats"),
        (lambda i, w: torch.scatter(w, 0, i.unsqueeze(-1).expand(-1, 2), w, reduce="add"), "reduce='add'"),
    ],
)
def test_unsupported_forms_raise_clearly(call: Any, match: str) -> None:
    f = jit(call)
    with pytest.raises(UnsupportedOperationError, match=match):
        f(idx(4, 3, seed=0), rnd(4, 2, seed=0))


def test_topk_k_bound_checked_at_trace_time() -> None:
    with pytest.raises(RuntimeError, match="k \\(6\\) must be in"):
        jit(lambda x: torch.topk(x, 6))(rnd(3, 5, seed=0))


def test_dynamic_scalars_reach_indexing_ops_unbaked() -> None:
    # a dynamic scale before gather/cumsum/topk: one trace for several values
    f = jit(lambda x, i, s: torch.gather(x * s, 1, i).cumsum(1).topk(1).values, dynamic=["s"])
    x, i = rnd(3, 5, seed=0), idx(5, 3, 4, seed=0)
    for s in (1.5, -2.0, 0.25):
        torch.testing.assert_close(f(x, i, s), torch.gather(x * s, 1, i).cumsum(1).topk(1).values)
    assert f.cache_info().misses == 1


@pytest.mark.cuda
@pytest.mark.parametrize("name, fn, make", CASES, ids=IDS)
def test_cuda_matches_eager_cuda(name: str, fn: Any, make: Any) -> None:
    args = tuple(a.cuda() for a in make(0))
    expected, expected_grads = _run(fn, args)
    got, got_grads = _run(jit(fn), args)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)
    for g, e in zip(got_grads, expected_grads, strict=True):
        assert (g is None) == (e is None)
        if e is not None:
            torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "reduce",
    [torch.max, torch.min, lambda x: x.max(), lambda x: x.min()],
    ids=["max", "min", "method_max", "method_min"],
)
def test_full_max_min_gradient_goes_to_the_nans_as_eager(reduce: Any) -> None:
    # torch.max(x)/torch.min(x) share the gradient among the NaNs when the result is NaN
    # (amax/amin's own gradient is NaN there)
    f = jit(lambda x: reduce(x) * 3)
    nan = float("nan")
    for values in ([1.0, nan, 2.0], [nan, 5.0, nan, nan], [2.0, -1.0, 2.0]):
        x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        expected = reduce(x) * 3
        (expected_grad,) = torch.autograd.grad(expected, x)
        got = f(x)
        (got_grad,) = torch.autograd.grad(got, x)
        torch.testing.assert_close(got, expected, equal_nan=True)
        torch.testing.assert_close(got_grad, expected_grad, rtol=0, atol=0)


def test_max_with_dim_none_raises_as_eager() -> None:
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match="look up dimensions by name"):
        torch.max(x, dim=None)
    with pytest.raises(RuntimeError, match="look up dimensions by name"):
        jit(lambda x: torch.max(x, dim=None))(x)


# ----------------------------------------------------------------------------------------
# x[indices] = value on a value computed in the function (transformers' shift_tokens_right:
# `shifted[:, 1:] = ids[:, :-1].clone(); shifted[:, 0] = start`): functionalized, eager's
# values and gradients (the overwritten elements get none, the value its slice)

SETITEM: dict[str, Callable[[torch.Tensor, torch.Tensor], Any]] = {
    "int": lambda y, v: y.__setitem__(1, v),
    "slices": lambda y, v: y.__setitem__((slice(None), slice(1, 3)), v[:2]),
    "steps": lambda y, v: y.__setitem__((slice(None, None, 2), slice(None, None, 3)), v.sum()),
    "negative": lambda y, v: y.__setitem__((-1, slice(-2, None)), v[-2:]),
    "ellipsis_none": lambda y, v: y.__setitem__((Ellipsis, None, 0), v[:3, None]),
    "number": lambda y, v: y.__setitem__((0, 0), 7.5),
    "leading_ones": lambda y, v: y.__setitem__(2, v[None, None]),
    "list": lambda y, v: y.__setitem__([0, 2], v),
    "constant_index_tensor": lambda y, v: y.__setitem__((torch.tensor([2, 0, 2]), 1), v[:3]),
    "traced_index_tensor": lambda y, v: y.__setitem__(((v[:3] > 0).long(), 3), v[:3]),
    "traced_mask_number": lambda y, v: y.__setitem__(y > 0, 0.5),
    "traced_mask_row": lambda y, v: y.__setitem__(y.sum(1) > 0, v),
    "traced_mask_value": lambda y, v: y.__setitem__(y > 0, v[0]),
    "constant_mask": lambda y, v: y.__setitem__(torch.tensor([True, False, True]), v),
    "twice_then_add": lambda y, v: (y.__setitem__(1, v), y.__setitem__((slice(None), 0), 0.0), y.add_(1)),
}


@pytest.mark.parametrize("name", list(SETITEM))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_setitem_on_a_computed_value_matches_eager_values_and_grads(name: str, dtype: torch.dtype) -> None:
    write = SETITEM[name]

    def f(x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x * 2
        s = y.sum()  # read before the write: the old value
        write(y, v)
        return y, s

    jf = symscalar.jit(f)
    for step in range(3):
        g = torch.Generator().manual_seed(step)
        x, v = torch.randn(3, 4, dtype=dtype, generator=g), torch.randn(4, dtype=dtype, generator=g)
        xe, ve, xm, vm = (t.clone().requires_grad_() for t in (x, v, x, v))
        (ye, se), (ym, sm) = f(xe, ve), jf(xm, vm)
        assert ym.dtype == ye.dtype
        torch.testing.assert_close(ym, ye, rtol=0, atol=0)
        torch.testing.assert_close(sm, se, rtol=0, atol=0)
        ct = torch.randn(3, 4, dtype=dtype, generator=g)
        expected = torch.autograd.grad((ye * ct).sum() + se, (xe, ve), allow_unused=True)
        got = torch.autograd.grad((ym * ct).sum() + sm, (xm, vm), allow_unused=True)
        for gm, ge in zip(got, expected):
            assert (gm is None) == (ge is None)
            if ge is not None:
                torch.testing.assert_close(gm, ge)
    assert jf.cache_info().misses == 1


def test_setitem_integer_value_into_a_float_casts_and_float_into_int_truncates_as_eager() -> None:
    def f(ids: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shifted = ids.new_zeros(ids.shape)
        shifted[:, 1:] = ids[:, :-1].clone()
        shifted[:, 0] = 2
        shifted.masked_fill_(shifted == -100, 0)
        y = x * 1
        y[0] = ids[0, :3]
        shifted[1] = x[1, 0] * 10
        return shifted, y

    jf = symscalar.jit(f)
    for step in range(3):
        g = torch.Generator().manual_seed(step)
        ids = torch.randint(-100, 50, (2, 3), generator=g)
        x = torch.randn(2, 3, generator=g)
        for got, expected in zip(jf(ids, x), f(ids, x)):
            assert got.dtype == expected.dtype
            assert torch.equal(got, expected)


SETITEM_REFUSED = {
    "argument": lambda x, v: x.__setitem__(0, v),
    # the update through the view traces; reading its base afterwards is refused (eager reads
    # the updated values)
    "through_a_view": lambda x, v: (lambda y: (y[None].__setitem__((0, 1), v), y)[1])(x * 2),
    "view_of_it_taken": lambda x, v: (lambda y: (y[0], y.__setitem__(1, v)))(x * 2),
}


@pytest.mark.parametrize("name", list(SETITEM_REFUSED))
def test_setitem_where_an_alias_would_see_it_is_refused(name: str) -> None:
    with pytest.raises(UnsupportedOperationError, match=r"torch.Tensor.__setitem__"):
        symscalar.jit(SETITEM_REFUSED[name])(torch.randn(3, 4), torch.randn(4))


def test_setitem_with_a_traced_mask_and_one_value_per_selected_row_is_refused_with_the_fix() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y[x[:, 0] > 0] = x[:2]  # the rows eager writes: as many as the mask selects
        return y

    with pytest.raises(UnsupportedOperationError, match=r"one row per True.*torch.where"):
        symscalar.jit(f)(torch.randn(3, 4))


def test_index_copy_out_of_place_and_in_place_with_grad() -> None:
    """``index_copy``/``index_copy_`` (a KV cache's write) as a scatter: values and gradients
    equal to eager, gradcheck in float64, and a source of the wrong shape refused as eager does."""
    index = torch.tensor([3, 0])

    def f(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
        y = (x * 2).index_copy(1, index, rows)
        z = x * 1
        z.index_copy_(-1, index, cols)
        return y * 3 + z

    x = torch.randn(2, 5, 5, dtype=torch.float64, requires_grad=True)
    rows = torch.randn(2, 2, 5, dtype=torch.float64, requires_grad=True)
    cols = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    jitted = symscalar.jit(f)
    torch.testing.assert_close(jitted(x, rows, cols), f(x, rows, cols))
    grads = torch.autograd.grad(jitted(x, rows, cols).sum(), [x, rows, cols])
    want = torch.autograd.grad(f(x, rows, cols).sum(), [x, rows, cols])
    for got, expected in zip(grads, want):
        torch.testing.assert_close(got, expected)
    assert torch.autograd.gradcheck(jitted, (x, rows, cols))
    with pytest.raises(RuntimeError, match="source shape"):
        jitted(x, rows[:, :, :3], cols)


# Eager reads a 0-d integer index tensor as an int: ``y[t]`` is a view of ``y``. The trace
# gathers, so an in-place update of the result or of its base would not reach the other.
ZERO_D_INDEX_UPDATES = {
    "update of the view": lambda x: (lambda y: (y[torch.tensor(0)].add_(1), y)[1])(x * 2),
    "update of the base": lambda x: (lambda y: (lambda v: (y.add_(1), v)[1])(y[torch.tensor(1)]))(x * 2),
    "in a tuple": lambda x: (lambda y: (y[(torch.tensor(0), slice(None))].add_(1), y)[1])(x * 2),
    "after ...": lambda x: (lambda y: (y[..., torch.tensor(0)].add_(1), y)[1])(x * 2),
    "chained": lambda x: (lambda y: (y[torch.tensor(1)][torch.tensor(0)].add_(1), y)[1])(x * 2),
}


@pytest.mark.parametrize("name", list(ZERO_D_INDEX_UPDATES))
def test_in_place_update_through_a_0d_index_tensor_view_is_refused(name: str) -> None:
    with pytest.raises(UnsupportedOperationError, match=r"in-place operation"):
        symscalar.jit(ZERO_D_INDEX_UPDATES[name])(torch.arange(4.0).reshape(2, 2))


def test_0d_index_tensor_read_and_1d_index_update_equal_eager() -> None:
    x = torch.arange(4.0).reshape(2, 2)
    for f in (
        lambda x: (x * 2)[torch.tensor(1)] + 1,
        lambda x: (lambda y: (y[torch.tensor([0])].add_(1), y)[1])(x * 2),  # a copy in eager too
    ):
        assert torch.equal(symscalar.jit(f)(x), f(x))
