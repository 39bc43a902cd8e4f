"""Inputs and outputs are pytrees (torch.utils._pytree): NamedTuples, dicts with any keys and
registered dataclasses go in and come out with the structure and types eager gives.

transformers' ModelOutput, and a module's forward(input_ids, attention_mask=None, **kwargs)
written as transformers writes it, are in tests/test_pytree_model_output.py (marked slow: it
imports transformers)."""

import collections
import dataclasses
import enum
import typing

import numpy as np
import pytest
import torch
import torch.utils._pytree as pytree
from hypothesis import given, settings
from hypothesis import strategies as st

import symscalar
from symscalar import DynamicFloat
from symscalar._jit import tree


class Batch(typing.NamedTuple):
    x: torch.Tensor
    w: torch.Tensor
    scale: float


Stats = collections.namedtuple("Stats", "mean total count")


@dataclasses.dataclass
class Registered:
    h: torch.Tensor
    n: int


pytree.register_dataclass(Registered)


class Mode(enum.Enum):
    FAST = "fast"


def assert_same_tree(out, ref):
    """Same pytree structure and node types, tensor leaves equal in value, dtype and grad."""
    out_leaves, out_spec = pytree.tree_flatten(out)
    ref_leaves, ref_spec = pytree.tree_flatten(ref)
    assert type(out) is type(ref)
    assert out_spec == ref_spec, (out_spec, ref_spec)
    for a, b in zip(out_leaves, ref_leaves):
        assert type(a) is type(b)
        if isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype and a.requires_grad == b.requires_grad
            torch.testing.assert_close(a, b)
        else:
            assert a == b


def test_namedtuple_in_and_out_with_gradients():
    def fn(batch: Batch):
        y = batch.x @ batch.w * batch.scale
        return Stats(y.mean(), y.sum(), y.shape[0])

    f = symscalar.jit(fn)
    torch.manual_seed(0)
    w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    for scale in (0.5, 0.5, 2.0):
        x = torch.randn(4, 3, dtype=torch.float64)
        out, ref = f(Batch(x, w, scale)), fn(Batch(x, w, scale))
        assert_same_tree(out, ref)
        (g,) = torch.autograd.grad(out.total + out.mean, w)
        (g_ref,) = torch.autograd.grad(ref.total + ref.mean, w)
        torch.testing.assert_close(g, g_ref)
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)  # scale is static
    Other = collections.namedtuple("Other", "x w scale")  # same leaves, another node type
    assert_same_tree(f(Other(x, w, 2.0)), fn(Other(x, w, 2.0)))
    assert f.cache_info().entries == 3


def test_dict_outputs_with_any_keys_keep_keys_order_and_types():
    def fn(x):
        return {
            2: x,
            1.5: x * 2,
            (1, "a"): x + 1,
            True: x.sum(),
            None: 3,
            torch.float32: x.dtype,
            Mode.FAST: [x, Mode.FAST],
            "s": "text",
        }

    f = symscalar.jit(fn)
    x = torch.randn(3)
    for _ in range(2):
        out, ref = f(x), fn(x)
        assert list(out) == list(ref) and [type(k) for k in out] == [type(k) for k in ref]
        assert_same_tree(out, ref)
    assert f.cache_info().misses == 1


def test_returned_containers_are_fresh_on_every_call():
    f = symscalar.jit(lambda x: {"xs": [x, 1], "meta": {"n": 2}})
    first = f(torch.ones(1))
    first["xs"].append("mutated")
    first["meta"]["n"] = 99
    second = f(torch.ones(1))
    assert second["xs"][1:] == [1] and second["meta"] == {"n": 2}
    g = symscalar.jit(lambda x: Stats(x, [x], {"k": 1}))  # the tree_unflatten path
    g(torch.ones(1)).total.append(0)
    assert len(g(torch.ones(1)).total) == 1


def test_registered_dataclass_in_and_out():
    def fn(r: Registered, s: DynamicFloat):
        return Registered(r.h * s + r.n, r.n + 1)

    f = symscalar.jit(fn)
    h = torch.randn(2, requires_grad=True)
    for s in (1.0, 3.0):
        out, ref = f(Registered(h, 2), s), fn(Registered(h, 2), s)
        assert type(out) is Registered and out.n == ref.n == 3
        torch.testing.assert_close(out.h, ref.h)
        torch.testing.assert_close(torch.autograd.grad(out.h.sum(), h)[0], torch.autograd.grad(ref.h.sum(), h)[0])
    f(Registered(h, 5), 1.0)
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)  # n is static


def test_unregistered_dataclass_output_is_refused_clearly():
    @dataclasses.dataclass
    class Plain:
        y: torch.Tensor

    with pytest.raises(
        TypeError, match=r"returned a value of type Plain, which torch's pytree does not know.*register_dataclass"
    ):
        symscalar.jit(lambda x: Plain(x + 1))(torch.ones(1))


def test_static_leaves_of_any_immutable_kind_come_back_as_themselves():
    class Level(enum.IntEnum):
        HIGH = 2

    def fn(x):
        return x * 2, Level.HIGH, np.int64(3), np.float64(-0.0), torch.float16, 1.5j, b"raw", x.shape

    f = symscalar.jit(fn)
    for _ in range(2):
        out, ref = f(torch.ones(2)), fn(torch.ones(2))
        assert [type(v) for v in out] == [type(v) for v in ref]
        torch.testing.assert_close(out[0], ref[0])
        assert out[1:] == ref[1:] and str(out[3]) == "-0.0"


def test_a_size_argument_stays_a_size():
    def fn(x, shape):
        return x.reshape(shape) * shape.numel(), type(shape).__name__

    f = symscalar.jit(fn)
    x = torch.arange(6.0)
    for shape in (torch.Size([2, 3]), torch.Size([3, 2]), torch.Size([2, 3])):
        out, ref = f(x, shape), fn(x, shape)
        torch.testing.assert_close(out[0], ref[0])
        assert out[1] == ref[1] == "Size"
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)


def test_guarded_entries_with_pytree_outputs():
    def fn(x, n):
        return Stats(x.sum(symscalar.specialize(n % 2)), n * 2, None)

    f = symscalar.jit(fn, dynamic=["n"])
    x = torch.randn(2, 3)
    for n in (0, 1, 2, 3, 4):
        out, ref = f(x, n), Stats(x.sum(n % 2), n * 2, None)
        assert type(out) is Stats and out.mean.shape == ref.mean.shape
        torch.testing.assert_close(out.mean, ref.mean)
        assert out.total == ref.total and type(out.total) is int
    assert f.cache_info() == symscalar.CacheInfo(hits=3, misses=2, entries=2)


# -- one pytree: keys, program inputs and outputs walk the same structure -------------------


class Pair(typing.NamedTuple):
    first: typing.Any
    second: typing.Any


def _trees() -> st.SearchStrategy[typing.Any]:
    tensors = st.builds(lambda n, s: torch.full((n,), float(s)), st.integers(1, 3), st.integers(-3, 3))
    leaves = st.one_of(tensors, st.integers(-2, 2), st.floats(-2, 2), st.none(), st.just(torch.Size([2, 1])))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(st.sampled_from(["a", "b", 1]), inner, max_size=3),
            st.builds(Pair, inner, inner),
            st.builds(Stats, inner, inner, inner),
        ),
        max_leaves=8,
    )


@settings(max_examples=60, deadline=None)
@given(_trees())
def test_key_inputs_are_the_tensor_leaves_in_flatten_order(value):
    key, inputs = tree.auto_key(value)
    flat = [v for v in tree.leaves(value) if isinstance(v, torch.Tensor)]
    assert len(inputs) == len(flat) and all(a is b for a, b in zip(inputs, flat))
    hash(key)
    assert tree.auto_key(tree.map_leaves(lambda v: v, value))[0] == key  # rebuilt: same key


@settings(max_examples=25, deadline=None)
@given(_trees())
def test_any_tree_of_namedtuples_round_trips_through_jit_like_eager(value):
    def fn(x, t):
        # hasattr, not isinstance: a traced tensor is no torch.Tensor instance (reported)
        doubled = pytree.tree_map(lambda v: v * x.sum() if hasattr(v, "dtype") else v, t)
        return Pair(doubled, x + 1)

    f = symscalar.jit(fn)
    x = torch.ones(2)
    for _ in range(2):
        out, ref = f(x, value), fn(x, value)
        assert pytree.tree_structure(out) == pytree.tree_structure(ref)
        for a, b in zip(tree.leaves(out), tree.leaves(ref)):
            assert type(a) is type(b)
            if isinstance(a, torch.Tensor):
                torch.testing.assert_close(a, b)
            else:
                assert a == b or (a != a and b != b)
    assert f.cache_info().misses == 1


def test_namedtuples_in_every_role():
    class Config(typing.NamedTuple):
        n: int
        shape: torch.Size

    @symscalar.jit
    def inner(x: torch.Tensor, c: Config, p):
        return x.reshape(c.shape) * c.n + p.first

    @symscalar.jit
    def outer(x, p, *rest, **named):
        return inner(x, Config(2, torch.Size([2, 2])), p) + rest[0].second + named["q"].first

    g = symscalar.jit(inner.__wrapped__, static=["c"])
    x = torch.arange(4.0)
    for k in (1.0, 2.0, 1.0):
        p = Pair(torch.full((2, 2), k), None)
        ref = x.reshape(2, 2) * 2 + p.first + k + p.first
        torch.testing.assert_close(outer(x, p, Pair(0, k), q=p), ref)
        cfg = Config(int(k), torch.Size([2, 2]))
        torch.testing.assert_close(g(x, cfg, p), x.reshape(2, 2) * int(k) + p.first)
    assert outer.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)  # k in Pair(0, k) is static
    assert g.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)
    reasons = [str(m) for m in g.explain()]
    assert "Config(n=1, shape=torch.Size([2, 2])) → Config(n=2, shape=torch.Size([2, 2]))" in reasons[1]
    assert not g.would_trace(x, Config(2, torch.Size([2, 2])), p)
    assert g.would_trace(x, Config(2, (2, 2)), p)  # a tuple is not a Size
    with pytest.raises(TypeError, match=r"parameter 'c' of .* is static .*cannot be a tensor"):
        g(x, Config(torch.ones(1), torch.Size([2, 2])), p)
    _, grads = symscalar.value_and_grad(lambda w, p: (w * p.first).sum())(torch.ones(2, 2), Pair(x.reshape(2, 2), 1))
    torch.testing.assert_close(grads, x.reshape(2, 2))


class _Holder:
    """A plain object: passed inside an argument, it is keyed by identity (state)."""


@settings(max_examples=60, deadline=None)
@given(_trees(), st.sampled_from([_Holder(), _Holder()]), st.booleans())
def test_the_miss_path_walk_agrees_with_the_key_the_display_and_the_state_objects(value, holder, nest):
    value = (value, frozenset({holder})) if nest else (holder, value)
    walked = tree.walk(value, static=False)
    assert walked.key == tree.auto_key(value)[0]
    shown = tree.map_leaves(lambda v: tree.TensorMeta(v) if isinstance(v, torch.Tensor) else v, value)
    assert repr(walked.shown) == repr(shown)
    assert [id(o) for o in walked.objects] == [id(o) for o in tree.state_objects(value)]
    tensors = [v for v in tree.leaves(value) if isinstance(v, torch.Tensor)]
    if tensors:
        with pytest.raises(tree.StaticTensorError):
            tree.walk(value, static=True)
    else:
        assert tree.walk(value, static=True).key == walked.key


class _Box:
    """A pytree node whose flattening is counted: each count is one walk of an argument."""

    flattens = 0

    def __init__(self, t: torch.Tensor, n: int) -> None:
        self.t, self.n = t, n


def _flatten_box(box: _Box) -> tuple[list[typing.Any], None]:
    _Box.flattens += 1
    return [box.t, box.n], None


pytree.register_pytree_node(_Box, _flatten_box, lambda values, context: _Box(*values))


def test_a_miss_walks_the_arguments_once():
    @symscalar.jit
    def f(x: torch.Tensor, box):
        return x * box.t + box.n

    x = torch.ones(3)

    def flattens(box: _Box) -> int:
        _Box.flattens = 0
        f(x, box)
        return _Box.flattens

    miss = flattens(_Box(torch.ones(3), 2))
    hit = flattens(_Box(torch.full((3,), 2.0), 2))
    retrace = flattens(_Box(torch.ones(3), 3))
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)
    # a hit builds the key once; a miss besides that: the key again with the program inputs
    # (the generated key_and_args), the one walk that checks the call and records it (facts,
    # state objects, numbers) and the tracing (tensors become program inputs)
    assert hit == 1
    assert miss == retrace == hit + 3
    assert "parameter 'box'" in " ".join(r for m in f.explain() for r in m.reasons)
