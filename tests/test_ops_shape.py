"""Shape ops through symscalar.jit: values against torch eager, gradients against
torch.autograd and finite differences, and the static contract of every dim/shape parameter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import symscalar
from symscalar import DynamicInt, StaticValueRequiredError, UnsupportedOperationError


def jit(fn: Callable[..., Any]) -> Any:
    """symscalar.jit of a lambda (the jit names the compiled program after the function, so a
    lambda is given a proper name first)."""
    fn.__name__ = fn.__qualname__ = "f"
    return symscalar.jit(fn)


# (id, function of tensors, input shapes)
CASES: list[tuple[str, Callable[..., Any], tuple[tuple[int, ...], ...]]] = [
    ("reshape_varargs", lambda x: x.reshape(4, 6), ((2, 3, 4),)),
    ("reshape_tuple", lambda x: x.reshape((3, -1)), ((2, 3, 4),)),
    ("reshape_list", lambda x: x.reshape([-1]), ((2, 3),)),
    ("torch_reshape", lambda x: torch.reshape(x, (2, 2, -1)), ((4, 3),)),
    ("view", lambda x: x.view(-1, 2), ((3, 4),)),
    ("view_tuple", lambda x: x.view((2, 6)), ((3, 4),)),
    ("reshape_0d", lambda x: x.reshape(1, 1), ((),)),
    ("reshape_as", lambda x, y: x.reshape_as(y) + y, ((2, 3), (3, 2))),
    ("view_as", lambda x, y: x.view_as(y) * y, ((6,), (2, 3))),
    ("flatten", lambda x: x.flatten(), ((2, 3, 4),)),
    ("flatten_range", lambda x: torch.flatten(x, 1, 2), ((2, 3, 4, 2),)),
    ("flatten_negative", lambda x: x.flatten(-3, -2), ((2, 3, 4, 2),)),
    ("flatten_0d", lambda x: x.flatten(), ((),)),
    ("permute_varargs", lambda x: x.permute(2, 0, 1), ((2, 3, 4),)),
    ("permute_tuple", lambda x: x.permute((1, 2, 0)), ((2, 3, 4),)),
    ("permute_negative", lambda x: torch.permute(x, (-1, -3, -2)), ((2, 3, 4),)),
    ("transpose", lambda x: x.transpose(0, 2), ((2, 3, 4),)),
    ("transpose_negative", lambda x: torch.transpose(x, -1, -2), ((2, 3, 4),)),
    ("swapaxes", lambda x: torch.swapaxes(x, 0, 1), ((2, 3),)),
    ("swapdims", lambda x: x.swapdims(0, -1), ((2, 3, 4),)),
    ("t", lambda x: x.t(), ((2, 3),)),
    ("T", lambda x: x.T, ((2, 3),)),
    ("mT", lambda x: x.mT, ((2, 3, 4),)),
    ("unsqueeze", lambda x: x.unsqueeze(1), ((2, 3),)),
    ("unsqueeze_end", lambda x: torch.unsqueeze(x, -1), ((2, 3),)),
    ("unsqueeze_front_negative", lambda x: x.unsqueeze(-3), ((2, 3),)),
    ("squeeze_all", lambda x: x.squeeze(), ((1, 3, 1, 2),)),
    ("squeeze_dim", lambda x: torch.squeeze(x, -2), ((1, 3, 1, 2),)),
    ("squeeze_not_one", lambda x: x.squeeze(1), ((1, 3, 1, 2),)),
    ("squeeze_tuple", lambda x: x.squeeze((0, 2)), ((1, 3, 1, 2),)),
    ("expand", lambda x: x.expand(2, 3, 4), ((3, 1),)),
    ("expand_tuple_minus_one", lambda x: x.expand((4, -1, 2)), ((3, 1),)),
    ("expand_as", lambda x, y: x.expand_as(y) * y, ((1, 4), (3, 4))),
    ("broadcast_to", lambda x: torch.broadcast_to(x, (2, 3, 4)), ((4,),)),
    ("broadcast_in_dim", lambda x: symscalar.ops.broadcast_in_dim(x, (2, 3, 4), (0, 2)), ((2, 1),)),
    ("cat", lambda x, y: torch.cat([x, y]), ((2, 3), (4, 3))),
    ("cat_dim", lambda x, y: torch.cat((x, y), dim=-1), ((2, 3), (2, 1))),
    ("cat_three", lambda x, y: torch.cat([x, y, x], 1), ((2, 3), (2, 2))),
    ("concat", lambda x, y: torch.concat([x, y], 0), ((1, 3), (2, 3))),
    ("stack", lambda x, y: torch.stack([x, y]), ((2, 3), (2, 3))),
    ("stack_negative", lambda x, y: torch.stack((x, y, x), -1), ((2, 3), (2, 3))),
    ("stack_middle", lambda x, y: torch.stack([x, y], dim=1), ((2, 3), (2, 3))),
    ("split_size", lambda x: torch.split(x, 2), ((5, 3),)),
    ("split_sections", lambda x: x.split([1, 3], dim=-1), ((2, 4),)),
    ("split_with_sizes", lambda x: x.split_with_sizes([2, 1], 0), ((3, 2),)),
    ("split_unused_outputs", lambda x: x.split(2, 1)[1] * 3, ((2, 6),)),
    ("chunk", lambda x: torch.chunk(x, 3, 1), ((2, 7),)),
    ("chunk_fewer", lambda x: x.chunk(4), ((6, 2),)),
    ("chunk_one_used", lambda x: x.chunk(2, -1)[0].exp(), ((2, 4),)),
    ("unbind", lambda x: torch.unbind(x, 1), ((2, 3),)),
    ("unbind_one_used", lambda x: x.unbind()[1], ((3, 2),)),
    ("narrow", lambda x: x.narrow(1, 1, 2), ((2, 4),)),
    ("narrow_negative", lambda x: torch.narrow(x, -1, -3, 2), ((2, 4),)),
    ("select", lambda x: x.select(1, -1), ((2, 4, 3),)),
    ("torch_select", lambda x: torch.select(x, -3, 1), ((2, 4, 3),)),
    ("flip", lambda x: torch.flip(x, (0, -1)), ((2, 3, 4),)),
    ("flip_varargs", lambda x: x.flip(1), ((2, 3),)),
    ("clone", lambda x: x.clone() * 2, ((2, 3),)),
    ("contiguous", lambda x: x.mT.contiguous() + 1, ((2, 3),)),
    ("getitem_int", lambda x: x[1], ((3, 4),)),
    ("getitem_negative_int", lambda x: x[-1, -2], ((3, 4),)),
    ("getitem_slice", lambda x: x[1:], ((3, 4),)),
    ("getitem_step", lambda x: x[::2, 1::3], ((5, 7),)),
    ("getitem_negative_bounds", lambda x: x[-2:, :-1], ((3, 4),)),
    ("getitem_out_of_range", lambda x: x[1:100, -100:2], ((3, 4),)),
    ("getitem_empty", lambda x: x[3:1].sum() + x[:, 5:].sum() + x.sum(), ((3, 4),)),
    ("getitem_none", lambda x: x[None, :, None], ((3, 4),)),
    ("getitem_ellipsis", lambda x: x[..., 1], ((2, 3, 4),)),
    ("getitem_ellipsis_middle", lambda x: x[0, ..., 1:3], ((2, 3, 4),)),
    ("getitem_mixed", lambda x: x[1, None, ::2, ..., -1], ((3, 5, 2, 4),)),
    ("getitem_all", lambda x: x[...], ((2, 3),)),
    ("getitem_two_ellipses", lambda x: x[..., 0, ...] + x[0, ..., None, ...].sum(), ((3, 4, 3),)),
    ("getitem_0d", lambda x: x[None], ((),)),
]


def _inputs(shapes: tuple[tuple[int, ...], ...], dtype: torch.dtype = torch.float64) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(s, dtype=dtype, generator=gen).requires_grad_() for s in shapes]


def _leaves(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("fn,shapes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_eager_and_autograd(fn: Callable[..., Any], shapes: Any) -> None:
    xs = _inputs(shapes)
    jf = jit(fn)
    got, want = _leaves(jf(*xs)), _leaves(fn(*xs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)
    weights = [torch.randn(w.shape, dtype=w.dtype, generator=torch.Generator().manual_seed(1)) for w in want]
    got_grads = torch.autograd.grad(sum((g * c).sum() for g, c in zip(got, weights)), xs)
    want_grads = torch.autograd.grad(sum((w * c).sum() for w, c in zip(want, weights)), xs)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w)
    backward = jf.last_backward_trace()
    assert backward is not None
    symscalar.check_trace(backward)


@pytest.mark.parametrize("fn,shapes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradcheck(fn: Callable[..., Any], shapes: Any) -> None:
    assert torch.autograd.gradcheck(jit(fn), tuple(_inputs(shapes)))


def test_float32_and_int_inputs() -> None:
    x = torch.arange(24, dtype=torch.int64).reshape(2, 3, 4)
    f = jit(lambda x: (x.permute(2, 0, 1)[1:, None, ..., ::2], torch.cat([x, x], -1).chunk(3, 1)))
    got, want = f(x), (x.permute(2, 0, 1)[1:, None, ..., ::2], torch.cat([x, x], -1).chunk(3, 1))
    torch.testing.assert_close(got[0], want[0])
    for g, w in zip(got[1], want[1]):
        torch.testing.assert_close(g, w)


def test_cat_promotes_dtypes_and_grads_keep_them() -> None:
    a = torch.randn(2, 3, dtype=torch.float32, requires_grad=True)
    b = torch.randn(1, 3, dtype=torch.float64, requires_grad=True)
    f = jit(lambda a, b: torch.cat([a, b]))
    out = f(a, b)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, torch.cat([a, b]))
    ga, gb = torch.autograd.grad(out.sum(), (a, b))
    assert ga.dtype == torch.float32 and gb.dtype == torch.float64


def test_backward_uses_static_permutation() -> None:
    x = torch.randn(2, 3, 4, requires_grad=True)
    f = jit(lambda x: x.permute(1, 2, 0))
    f(x).sum().backward()
    backward = f.last_backward_trace()
    assert backward is not None
    permutes = [e for e in backward.eqns if e.prim.name == "permute"]
    assert [dict(e.params)["dims"] for e in permutes] == [(2, 0, 1)]


def test_trace_round_trips_through_printing() -> None:
    x = torch.randn(3, 4, requires_grad=True)
    f = jit(lambda x: x[1:, None, ::2].flip(0).transpose(0, 2))
    f(x).sum().backward()
    for trace in (f.last_trace(), f.last_backward_trace()):
        assert trace is not None
        namespace: dict[str, Any] = {}
        exec(str(trace), namespace)  # noqa: S102
        inputs = [torch.randn(v.shape) for v in trace.inputs]
        fn = namespace[trace.name]
        got = fn(*inputs)
        want = symscalar.eval_trace(trace, *inputs)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)


# ---- the static contract


def _n_only(fn: Callable[[torch.Tensor, Any], Any]) -> Callable[..., Any]:
    def f(x: torch.Tensor, n: DynamicInt) -> Any:
        return fn(x, n)

    return jit(f)


DYNAMIC_CASES: list[tuple[str, str, Callable[[torch.Tensor, Any], Any]]] = [
    ("torch.Tensor.reshape", "shape", lambda x, n: x.reshape(n, -1)),
    ("torch.Tensor.reshape", "shape", lambda x, n: x.reshape((n, -1))),
    ("torch.Tensor.view", "size", lambda x, n: x.view(-1, n)),
    ("torch.reshape", "shape", lambda x, n: torch.reshape(x, (n, 4))),
    ("symscalar.ops.reshape", "shape", lambda x, n: symscalar.ops.reshape(x, (n, 4))),
    ("torch.flatten", "start_dim", lambda x, n: torch.flatten(x, n)),
    ("torch.Tensor.flatten", "end_dim", lambda x, n: x.flatten(0, n)),
    ("symscalar.ops.flatten", "start_dim", lambda x, n: symscalar.ops.flatten(x, n)),
    ("torch.permute", "dims", lambda x, n: torch.permute(x, (n, 0))),
    ("torch.Tensor.permute", "dims", lambda x, n: x.permute(n, 0)),
    ("torch.Tensor.permute", "dims", lambda x, n: x.permute((1, n))),
    ("symscalar.ops.permute", "dims", lambda x, n: symscalar.ops.permute(x, (n, 0))),
    ("torch.Tensor.transpose", "dim0", lambda x, n: x.transpose(n, 0)),
    ("torch.transpose", "dim1", lambda x, n: torch.transpose(x, 0, n)),
    ("torch.swapaxes", "axis0", lambda x, n: torch.swapaxes(x, n, 1)),
    ("torch.Tensor.swapdims", "dim1", lambda x, n: x.swapdims(0, n)),
    ("symscalar.ops.transpose", "dim0", lambda x, n: symscalar.ops.transpose(x, n, 0)),
    ("torch.Tensor.unsqueeze", "dim", lambda x, n: x.unsqueeze(n)),
    ("torch.unsqueeze", "dim", lambda x, n: torch.unsqueeze(x, dim=n)),
    ("symscalar.ops.unsqueeze", "dim", lambda x, n: symscalar.ops.unsqueeze(x, n)),
    ("torch.Tensor.squeeze", "dim", lambda x, n: x.squeeze(n)),
    ("torch.squeeze", "dim", lambda x, n: torch.squeeze(x, (0, n))),
    ("symscalar.ops.squeeze", "dim", lambda x, n: symscalar.ops.squeeze(x, n)),
    ("torch.Tensor.expand", "size", lambda x, n: x.expand(n, 3, 4)),
    ("torch.Tensor.expand", "size", lambda x, n: x.expand((2, n, 4))),
    ("torch.broadcast_to", "size", lambda x, n: torch.broadcast_to(x, (n, 3, 4))),
    ("symscalar.ops.expand", "shape", lambda x, n: symscalar.ops.expand(x, (n, 3, 4))),
    ("symscalar.ops.broadcast_in_dim", "shape", lambda x, n: symscalar.ops.broadcast_in_dim(x, (n, 3, 4), (1, 2))),
    (
        "symscalar.ops.broadcast_in_dim",
        "broadcast_dims",
        lambda x, n: symscalar.ops.broadcast_in_dim(x, (2, 3, 4), (n, 2)),
    ),
    ("torch.cat", "dim", lambda x, n: torch.cat([x, x], n)),
    ("torch.concat", "dim", lambda x, n: torch.concat([x, x], dim=n)),
    ("symscalar.ops.cat", "dim", lambda x, n: symscalar.ops.cat([x, x], n)),
    ("torch.stack", "dim", lambda x, n: torch.stack([x, x], n)),
    ("symscalar.ops.stack", "dim", lambda x, n: symscalar.ops.stack([x, x], n)),
    ("torch.functional.split", "split_size_or_sections", lambda x, n: torch.split(x, n)),
    ("torch.Tensor.split", "split_size_or_sections", lambda x, n: x.split([1, n])),
    ("torch.Tensor.split", "dim", lambda x, n: x.split(1, n)),
    ("torch.Tensor.split_with_sizes", "split_sizes", lambda x, n: x.split_with_sizes([n, 2])),
    ("symscalar.ops.split", "split_size_or_sections", lambda x, n: symscalar.ops.split(x, n)),
    ("torch.chunk", "chunks", lambda x, n: torch.chunk(x, n)),
    ("torch.Tensor.chunk", "dim", lambda x, n: x.chunk(2, n)),
    ("symscalar.ops.chunk", "chunks", lambda x, n: symscalar.ops.chunk(x, n)),
    ("torch.Tensor.unbind", "dim", lambda x, n: x.unbind(n)),
    ("symscalar.ops.unbind", "dim", lambda x, n: symscalar.ops.unbind(x, n)),
    ("torch.Tensor.narrow", "dim", lambda x, n: x.narrow(n, 0, 1)),
    ("torch.narrow", "start", lambda x, n: torch.narrow(x, 0, n, 1)),
    ("torch.Tensor.narrow", "length", lambda x, n: x.narrow(0, 0, n)),
    ("symscalar.ops.narrow", "start", lambda x, n: symscalar.ops.narrow(x, 0, n, 1)),
    ("torch.Tensor.select", "dim", lambda x, n: x.select(n, 0)),
    ("torch.select", "index", lambda x, n: torch.select(x, 0, n)),
    ("symscalar.ops.select", "index", lambda x, n: symscalar.ops.select(x, 0, n)),
    ("torch.flip", "dims", lambda x, n: torch.flip(x, (n,))),
    ("torch.Tensor.flip", "dims", lambda x, n: x.flip(n)),
    ("symscalar.ops.flip", "dims", lambda x, n: symscalar.ops.flip(x, [n])),
    ("torch.Tensor.__getitem__", "indices", lambda x, n: x[n]),
    ("torch.Tensor.__getitem__", "indices", lambda x, n: x[:n]),
    ("torch.Tensor.__getitem__", "indices", lambda x, n: x[0, n:]),
    ("torch.Tensor.__getitem__", "indices", lambda x, n: x[..., ::n]),
    ("symscalar.ops.getitem", "indices", lambda x, n: symscalar.ops.getitem(x, (None, n))),
]


@pytest.mark.parametrize(
    "spelling,param,fn", DYNAMIC_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(DYNAMIC_CASES)]
)
def test_dynamic_value_in_static_parameter_raises(spelling: str, param: str, fn: Any) -> None:
    x = torch.randn(2, 3, 4) if "expand" in spelling or "broadcast" in spelling else torch.randn(2, 4)
    if "expand" in spelling or "broadcast_to" in spelling:
        x = torch.randn(3, 4)
    if "broadcast_in_dim" in spelling:
        x = torch.randn(3, 4)
    with pytest.raises(StaticValueRequiredError) as info:
        _n_only(fn)(x, 1)
    message = str(info.value)
    assert message.startswith(f'{spelling}: parameter "{param}" must be static'), message
    assert "parameter 'n' of f" in message


def test_specialized_value_is_allowed_and_guarded() -> None:
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return x.unsqueeze(symscalar.specialize(n)).reshape(symscalar.specialize(n) + 1, -1)

    jf = jit(f)
    x = torch.randn(2, 3)
    torch.testing.assert_close(jf(x, 1), x.unsqueeze(1).reshape(2, -1))
    torch.testing.assert_close(jf(x, 0), x.unsqueeze(0).reshape(1, -1))
    assert jf.cache_info().misses == 2


def test_boolean_mask_index_is_unsupported() -> None:
    # integer tensor indices are supported (tests/test_ops_indexing.py); a mask's result has a
    # data-dependent shape
    f = jit(lambda x, m: x[m])
    with pytest.raises(UnsupportedOperationError, match="boolean mask"):
        f(torch.randn(3, 4), torch.tensor([True, False, True]))
    with pytest.raises(UnsupportedOperationError, match="boolean mask"):
        jit(lambda x: x[x > 0])(torch.randn(3, 4))


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (lambda x: x[3], IndexError, "out of bounds"),
        (lambda x: x[0, 0, 0], IndexError, "too many indices"),
        (lambda x: x[::-1], ValueError, "step must be greater than zero"),
        (lambda x: x.reshape(5, -1), RuntimeError, "invalid for input of size 12"),
        (lambda x: x.reshape(-1, -1), RuntimeError, "only one dimension"),
        (lambda x: x.permute(0, 0), RuntimeError, "duplicate"),
        (lambda x: x.permute(0), RuntimeError, "number of dims"),
        (lambda x: x.unsqueeze(3), IndexError, "Dimension out of range"),
        (lambda x: x.transpose(0, 2), IndexError, "Dimension out of range"),
        (lambda x: x.narrow(0, 2, 2), RuntimeError, "exceeds dimension size"),
        (lambda x: x.select(1, 4), IndexError, "out of range"),
        (lambda x: torch.stack([x, x.T]), RuntimeError, "equal size"),
        (lambda x: x.expand(4), RuntimeError, "must be greater or equal"),
    ],
)
def test_bad_input_raises_clear_error(fn: Any, error: type[Exception], match: str) -> None:
    x = torch.randn(3, 4)
    with pytest.raises(error, match=match):
        jit(fn)(x)
    with pytest.raises(error):
        fn(x)


def test_view_as_dtype_is_unsupported() -> None:
    with pytest.raises(UnsupportedOperationError, match=r"Tensor\.to"):
        jit(lambda x: x.view(torch.int32))(torch.randn(3, 4))


# ---- random basic indexing against eager (slice/zero_pad and their vjps)

_bound = st.none() | st.integers(-7, 7)


@st.composite
def _shape_and_index(draw: Any) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    index: list[Any] = []
    for size in shape[: draw(st.integers(0, len(shape)))]:
        if size > 0 and draw(st.booleans()):
            index.append(draw(st.integers(-size, size - 1)))
        else:
            index.append(slice(draw(_bound), draw(_bound), draw(st.none() | st.integers(1, 3))))
        if draw(st.integers(0, 4)) == 0:
            index.append(draw(st.sampled_from([None, Ellipsis])))
    return shape, tuple(index)


@settings(max_examples=40, deadline=None)
@given(_shape_and_index())
def test_random_basic_indexing(case: tuple[tuple[int, ...], tuple[Any, ...]]) -> None:
    shape, index = case
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    f = jit(lambda x: x[index])
    try:
        want = x[index]
    except IndexError:  # e.g. an int index that lands on a size-0 dim after an Ellipsis
        with pytest.raises(IndexError):
            f(x)
        return
    got = f(x)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)
    weight = torch.randn(want.shape, dtype=torch.float64)
    (g,) = torch.autograd.grad((got * weight).sum(), x)
    (w,) = torch.autograd.grad((want * weight).sum(), x)
    torch.testing.assert_close(g, w)


# ---- lightning-thunder's OpInfo samples, each mapped to the torch call it stands for


def _squeeze_dims(x: Any, dim: Any) -> Any:
    if dim is None:
        return torch.squeeze(x)
    return x.squeeze(tuple(dim)) if isinstance(dim, (tuple, list)) else x.squeeze(dim)


# thunder OpInfo name -> torch spelling called as f(first_arg, *rest, **kwargs)
THUNDER_REFERENCES: dict[str, Callable[..., Any]] = {
    "reshape": lambda x, *a: torch.reshape(x, *a),
    "permute": lambda x, *a: x.permute(*a),
    "transpose": lambda x, *a: x.permute(*a),
    "torch_transpose": lambda x, *a: torch.transpose(x, *a),
    "squeeze_torch": _squeeze_dims,
    "cat_wrapper": lambda xs, **k: torch.cat(xs, **k),
    "stack_wrapper": lambda xs, **k: torch.stack(xs, **k),
    "split": lambda x, *a: torch.split(x, *a),
    "chunk": lambda x, *a: torch.chunk(x, *a),
    "flip": lambda x, *a: torch.flip(x, *a),
    "getitem": lambda x, index: x[index],
    "expand": lambda x, *a: x.expand(*a),
    "flatten": lambda x, *a: torch.flatten(x, *a),
    "unbind": lambda x, *a: torch.unbind(x, *a),
    "select": lambda x, *a: torch.select(x, *a),
    "t": lambda x: x.t(),
    "matrix_transpose": lambda x: x.mT,
    "reverse_dims_T": lambda x: x.permute(tuple(reversed(range(x.ndim)))),
}


def _refused_index(index: Any) -> str | None:
    """What symscalar says about an index it refuses (boolean masks: data-dependent shapes;
    None among tensor indices), or None for an index it supports."""
    items = index if isinstance(index, tuple) else (index,)
    tensors = [i for i in items if isinstance(i, (torch.Tensor, list, tuple))]
    if not tensors:
        return None
    if any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in tensors):
        return "boolean mask"
    if any(i is None for i in items) or sum(1 for i in items if i is Ellipsis) > 1:
        return "None or several"
    return None


@pytest.mark.slow  # lightning-thunder's samples: left out by `make test-fast`
@pytest.mark.parametrize("name", sorted(THUNDER_REFERENCES))
def test_thunder_samples(name: str, thunder_opinfos: Any) -> None:
    ref = THUNDER_REFERENCES[name]
    checked = 0
    for sample in thunder_opinfos.get_opinfo(name).sample_inputs("cpu", torch.float64):
        if checked == 30:
            break  # enough to cover each op's sample kinds; keeps the file fast
        tensors = sample.args if name in ("cat_wrapper", "stack_wrapper") else sample.args[:1]
        if sum(t.numel() for t in tensors) > 4096:
            continue
        if name in ("cat_wrapper", "stack_wrapper"):
            first, rest = [a.detach().requires_grad_() for a in sample.args], ()
        else:
            first, rest = sample.args[0].detach().requires_grad_(), sample.args[1:]
        if name == "matrix_transpose" and first.ndim == 0:
            continue  # torch: deprecated identity on 0-d tensors
        f = jit(lambda x: ref(x, *rest, **sample.kwargs))
        refused = _refused_index(rest[0]) if name == "getitem" else None
        if refused is not None:
            with pytest.raises(UnsupportedOperationError, match=refused):
                f(first)
            continue
        got, want = _leaves(f(first)), _leaves(ref(first, *rest, **sample.kwargs))
        inputs = first if isinstance(first, list) else [first]
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            torch.testing.assert_close(g, w)
        weights = [torch.randn(w.shape, dtype=w.dtype) for w in want]
        got_grads = torch.autograd.grad(sum((g * c).sum() for g, c in zip(got, weights)), inputs)
        want_grads = torch.autograd.grad(sum((w * c).sum() for w, c in zip(want, weights)), inputs)
        for g, w in zip(got_grads, want_grads):
            torch.testing.assert_close(g, w)
        checked += 1
    assert checked > 0


KEYWORD_CASES: list[tuple[str, Callable[..., Any], tuple[tuple[int, ...], ...]]] = [
    ("reshape_keyword", lambda x: x.reshape(shape=(3, 2)), ((2, 3),)),
    ("view_keyword", lambda x: x.view(size=(6,)), ((2, 3),)),
    ("permute_keyword", lambda x: x.permute(dims=(1, 0)), ((2, 3),)),
    ("expand_keyword", lambda x: x.expand(size=(2, 4, 3)), ((4, 1),)),
    ("flip_keyword", lambda x: x.flip(dims=(0,)), ((2, 3),)),
    ("squeeze_varargs", lambda x: x.squeeze(0, 2), ((1, 3, 1),)),
    ("squeeze_keyword", lambda x: x.squeeze(dim=2), ((1, 3, 1),)),
    ("cat_keywords", lambda x, y: torch.cat(tensors=[x, y], dim=1), ((2, 3), (2, 1))),
    ("transpose_keywords", lambda x: x.transpose(dim0=0, dim1=1), ((2, 3),)),
    ("narrow_keywords", lambda x: torch.narrow(x, dim=1, start=1, length=2), ((2, 3),)),
    ("unsqueeze_keyword", lambda x: x.unsqueeze(dim=0), ((2, 3),)),
    ("flatten_keyword", lambda x: x.flatten(start_dim=1), ((2, 3, 2),)),
]


@pytest.mark.parametrize("fn,shapes", [c[1:] for c in KEYWORD_CASES], ids=[c[0] for c in KEYWORD_CASES])
def test_keyword_forms(fn: Callable[..., Any], shapes: Any) -> None:
    test_matches_eager_and_autograd(fn, shapes)


@pytest.mark.parametrize(
    "spelling,param,fn",
    [
        ("torch.Tensor.reshape", "shape", lambda x, n: x.reshape(shape=(n, -1))),
        ("torch.Tensor.view", "size", lambda x, n: x.view(size=(n, -1))),
        ("torch.Tensor.permute", "dims", lambda x, n: x.permute(dims=(n, 0))),
        ("torch.Tensor.expand", "size", lambda x, n: x.expand(size=(n, 2, 4))),
        ("torch.Tensor.flip", "dims", lambda x, n: x.flip(dims=(n,))),
        ("torch.Tensor.squeeze", "dim", lambda x, n: x.squeeze(0, n)),
        ("torch.Tensor.squeeze", "dim", lambda x, n: x.squeeze(dim=n)),
    ],
)
def test_dynamic_value_in_keyword_form_raises(spelling: str, param: str, fn: Any) -> None:
    test_dynamic_value_in_static_parameter_raises(spelling, param, fn)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_values_devices_and_grads() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> Any:
        a = torch.cat([x[1:, None, ::2], y.unsqueeze(1)], 0).permute(2, 0, 1).flip(0)
        parts = a.split(1, 0)
        return torch.stack(parts[::-1], -1).flatten()

    x = torch.randn(3, 4, device="cuda", dtype=torch.float64, requires_grad=True)
    y = torch.randn(1, 2, device="cuda", dtype=torch.float64, requires_grad=True)
    jf = jit(f)
    got, want = jf(x, y), f(x, y)
    assert got.device == want.device
    torch.testing.assert_close(got, want)
    w = torch.randn_like(want)
    for g, r in zip(torch.autograd.grad((got * w).sum(), (x, y)), torch.autograd.grad((want * w).sum(), (x, y))):
        assert g.device == r.device
        torch.testing.assert_close(g, r)
    assert torch.autograd.gradcheck(jf, (x, y))


ROLLS = [(2, 1), ((1, -2), (0, 2)), (3,), (-7, 1), (0, 1), ((5,), (1,)), (4, -1), ((1, 1), (1, 1))]


@pytest.mark.parametrize("args", ROLLS, ids=str)
def test_roll_matches_eager_bit_for_bit_with_gradcheck(args):
    x = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    for spelling in (lambda x: torch.roll(x, *args), lambda x: x.roll(*args)):
        f = symscalar.jit(spelling)
        assert torch.equal(f(x), spelling(x))
        assert torch.autograd.gradcheck(f, (x,))
    out = symscalar.jit(lambda x: torch.roll(x, 0, 1))(x)
    assert out.requires_grad  # a new tensor, as eager's (never the input itself)


def test_roll_shift_is_static_and_mismatched_dims_raise_as_eager():
    def f(x, s: symscalar.DynamicInt):
        return torch.roll(x, s, 0)

    with pytest.raises(symscalar.StaticValueRequiredError, match="shifts"):
        symscalar.jit(f)(torch.ones(3), 1)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        symscalar.jit(lambda x: torch.roll(x, (1, 2), 0))(torch.ones(3))
