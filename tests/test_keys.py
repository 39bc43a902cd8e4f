"""Cache keys and argument conversion: the Python type of every argument decides torch's type
promotion exactly as in eager, static keys compare type and value all the way down, and a
value jit cannot honour is refused with a TypeError saying what to pass."""

import collections
import copy
import dataclasses
import enum
import math
import pickle

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, NumberLike, StaticInt


class Color(enum.IntEnum):
    RED = 3


# -- the property: every argument type x every parameter kind x every tensor dtype ---------

KINDS = ("DynamicInt", "DynamicFloat", "DynamicBool", "NumberLike", "static", "auto")
ANNOTATION = {
    "DynamicInt": DynamicInt,
    "DynamicFloat": DynamicFloat,
    "DynamicBool": DynamicBool,
    "NumberLike": NumberLike,
}
# the exact types each dynamic kind takes (anything else is refused before tracing)
DYNAMIC_TYPES = {
    "DynamicInt": (int,),
    "DynamicFloat": (int, float),
    "DynamicBool": (bool,),
    "NumberLike": (bool, int, float),
}
DTYPES = (
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.bool,
)
OPS = {
    "mul": lambda x, s: x * s,
    "add": lambda x, s: x + s,
    "radd": lambda x, s: s + x,
    "div": lambda x, s: x / s,
}

python_numbers = st.one_of(
    st.integers(-300, 300),
    st.sampled_from([200, 0, -1, 2**40]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 200.0, float("nan")]),
    st.booleans(),
)
numpy_scalars = st.sampled_from(
    [np.float64(2.5), np.float64(-0.0), np.float32(1.5), np.int64(200), np.int32(-3), np.bool_(True)]
)
zero_d_tensors = st.builds(
    lambda dtype, value, grad: torch.tensor(value, dtype=dtype).requires_grad_(grad and dtype.is_floating_point),
    st.sampled_from(DTYPES),
    st.integers(-3, 3),
    st.booleans(),
)
n_d_tensors = st.builds(lambda dtype: torch.arange(3).to(dtype), st.sampled_from(DTYPES))
argument = st.one_of(python_numbers, numpy_scalars, st.just(Color.RED), st.just(2 + 1j), zero_d_tensors, n_d_tensors)
tensor_x = st.builds(
    lambda dtype, shape: (torch.arange(6).reshape(2, 3) - 2).to(dtype)[(0,) * (2 - len(shape))],
    st.sampled_from(DTYPES),
    st.sampled_from([(), (3,), (2, 3)]),
)


def _make(kind, op):
    body = OPS[op]
    if kind in ANNOTATION:

        def fn(x: torch.Tensor, s: ANNOTATION[kind]):  # type: ignore[valid-type]
            return body(x, s)

        return symscalar.jit(fn)
    if kind == "static":
        return symscalar.jit(lambda x, s: body(x, s), static=["s"])
    return symscalar.jit(lambda x, s: body(x, s))


def _refused(kind, s):
    """Refused before tracing (a TypeError saying what to pass; no hit, no miss)."""
    if kind in DYNAMIC_TYPES:
        return type(s) not in DYNAMIC_TYPES[kind]
    return kind == "static" and isinstance(s, torch.Tensor)


def _key(kind, x, s):
    """What the entry of a call must depend on: x's metadata and s's type and value (static),
    type (dynamic) or metadata (a tensor)."""
    meta = (tuple(x.shape), x.dtype)
    if isinstance(s, torch.Tensor):
        return meta, tuple(s.shape), s.dtype, s.requires_grad
    if kind in DYNAMIC_TYPES:
        return meta, type(s)
    exact = s.tobytes() if isinstance(s, np.generic) and not isinstance(s, float) else repr(s)
    return meta, type(s), exact


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    op=st.sampled_from(list(OPS)),
    calls=st.lists(st.tuples(tensor_x, argument), min_size=1, max_size=6),
)
@pytest.mark.slow
def test_every_argument_type_matches_eager_or_is_refused(kind, op, calls):
    f = _make(kind, op)
    seen: set = set()
    hits = misses = 0
    for x, s in calls + calls[:2]:  # the repeats must be hits
        try:
            expected = OPS[op](x, s)
        except (RuntimeError, TypeError, ZeroDivisionError):
            expected = None  # eager itself refuses (e.g. a complex into a bool tensor op)
        if _refused(kind, s):
            with pytest.raises(TypeError, match=r"parameter 's' of .*(pass|Pass|Annotate)"):
                f(x, s)
            continue
        key = _key(kind, x, s)
        new = key not in seen
        try:
            out = f(x, s)
        except TypeError as e:
            # static numpy scalars that are not Python numbers reach an op as operands; the
            # tracer may refuse them (clearly), eager takes them
            assert kind in ("static", "auto") and isinstance(s, np.generic), (kind, s, e)
            assert new, "a refused trace must not leave an entry behind"
            misses += 1
            continue
        except (RuntimeError, symscalar.UnsupportedOperationError):
            # as eager; the failure may come while tracing (no entry) or running (an entry)
            assert expected is None, (kind, op, x.dtype, s)
            hits, misses, entries = f.cache_info()[:3]
            if entries > len(seen):
                seen.add(key)
            continue
        assert expected is not None, f"eager refuses {op}({x.dtype}, {s!r}) but jit did not"
        assert out.dtype == expected.dtype, (kind, op, x.dtype, s)
        assert out.shape == expected.shape
        assert out.requires_grad == expected.requires_grad
        torch.testing.assert_close(out.detach(), expected.detach(), rtol=0, atol=0, equal_nan=True)
        hits += not new
        misses += new
        seen.add(key)
    assert f.cache_info() == symscalar.CacheInfo(hits, misses, len(seen))


# -- the reproductions -------------------------------------------------------------


def test_int_for_dynamic_float_promotes_as_an_int():
    f = symscalar.jit(lambda x, s: x * s, dynamic=["s"])

    @symscalar.jit
    def g(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return x * s

    x = torch.tensor([1, 2, -3], dtype=torch.int8)
    for jitted in (f, g):
        out = jitted(x, 200)
        assert out.dtype == torch.int8 and torch.equal(out, x * 200)  # -56, -112, -88 as eager
        assert torch.equal(jitted(x, 300), x * 300)  # the int entry is a hit for a new int
        assert jitted(x, 200.0).dtype == torch.float32  # a float is its own entry
        assert jitted.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)
    assert "s0: int" in str(g.last_trace()) or "s0: float" in str(g.last_trace())


def test_bool_for_dynamic_int_is_refused_and_numberlike_keeps_bool():
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return x + n

    @symscalar.jit
    def g(x: torch.Tensor, n: NumberLike) -> torch.Tensor:
        return x + n

    b = torch.tensor([True, False])
    with pytest.raises(
        TypeError,
        match=r"parameter 'n' of .*f is DynamicInt but got bool True: "
        r"in torch a bool promotes as a bool.*Pass int\(v\)",
    ):
        f(b, True)
    assert f(b, 1).dtype == torch.int64
    out = g(b, True)
    assert out.dtype == torch.bool and torch.equal(out, b + True)
    assert g(b, 1).dtype == torch.int64
    assert g.cache_info().entries == 2


def test_a_refused_type_never_opens_the_key_to_anything():
    """Before: after an np.float64 call the key of the argument was None, and from then on a
    0-d tensor or 2.7 for a DynamicInt hit that entry and was converted."""

    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat, n: DynamicInt) -> torch.Tensor:
        return x * s + n

    x = torch.ones(2)
    for s, n in ((np.float64(2.0), 1), (2.0, Color.RED), (2.0, np.int64(1))):
        with pytest.raises(TypeError, match=r"(numpy scalars|\(a subclass of int\)) .*not converted silently"):
            f(x, s, n)
    w = torch.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match=r"a tensor is not a number.*annotate the parameter torch.Tensor"):
        f(x, w, 1)
    with pytest.raises(TypeError, match=r"parameter 'n' of .*f is DynamicInt but got float 2\.7"):
        f(x, 2.0, 2.7)
    torch.testing.assert_close(f(x, 2.0, 1), x * 2.0 + 1)
    with pytest.raises(TypeError, match="a tensor is not a number"):
        f(x, w, 1)  # still refused with an entry in the cache
    assert f.cache_info() == symscalar.CacheInfo(hits=0, misses=1, entries=1)


def test_zero_d_tensor_with_grad_stays_a_tensor():
    f = symscalar.jit(lambda x, s: (x * s).sum())
    x = torch.randn(3, dtype=torch.float64)
    s = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(f(x, s), s)
    s_ref = s.detach().clone().requires_grad_()
    (g_ref,) = torch.autograd.grad((x * s_ref).sum(), s_ref)
    torch.testing.assert_close(g, g_ref)


@dataclasses.dataclass(frozen=True)
class Cfg:
    scale: float
    dims: tuple = (0,)


class Pair(collections.namedtuple("Pair", "a b")):
    pass


@pytest.mark.parametrize(
    "first, second",
    [
        (Cfg(200), Cfg(200.0)),
        ((200,), (200.0,)),
        ((0.0,), (-0.0,)),
        ([1], [True]),
        (Pair(200, 1), Pair(200.0, 1)),
        ({"k": 200}, {"k": 200.0}),
        ({1: 2}, {1.0: 2}),
        ({True: 2}, {1: 2}),
        (Color.RED, 3),
        (np.float64(0.0), np.float64(-0.0)),
        (frozenset({1}), frozenset({1.0})),
    ],
)
@pytest.mark.parametrize("static", [True, False])
def test_static_keys_compare_type_and_value_all_the_way_down(first, second, static):
    def fn(x, c):
        # a function whose result depends on the exact types and values, as eager's does
        if isinstance(c, Cfg):
            numbers = [c.scale]
        elif isinstance(c, (dict, frozenset)):
            numbers = list(c) + list(c.values() if isinstance(c, dict) else ())
        else:
            numbers = torch.utils._pytree.tree_leaves(c)
        out = x
        for v in numbers:
            if not isinstance(v, str):
                out = out * v
        return out, 1 / out  # the reciprocal tells 0.0 from -0.0

    f = symscalar.jit(fn, static=["c"] if static else ())
    x = torch.tensor([1, 2], dtype=torch.int8)
    for c in (first, second, first, second):
        for out, ref in zip(f(x, c), fn(x, c)):
            assert out.dtype == ref.dtype
            torch.testing.assert_close(out, ref, rtol=0, atol=0, equal_nan=True)
    assert f.cache_info() == symscalar.CacheInfo(hits=2, misses=2, entries=2)


@pytest.mark.parametrize("static", [True, False])
def test_nan_static_values_find_their_entry(static):
    f = symscalar.jit(lambda x, c: x * c[0] + c[1], static=["c"] if static else ())
    x = torch.ones(2)
    for _ in range(3):
        f(x, (float("nan"), 1))
    g = symscalar.jit(lambda x, c: x * c, static=["c"] if static else ())
    for _ in range(3):
        g(x, float("nan"))
    assert f.cache_info().misses == 1 and g.cache_info().misses == 1


def test_specialize_guards_compare_type_and_value():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return x / symscalar.specialize(s)

    x = torch.ones(1)
    assert f(x, 0.0).item() == math.inf
    assert f(x, -0.0).item() == -math.inf  # the 0.0 entry's guard does not hold for -0.0
    assert f(x, 0.0).item() == math.inf
    for _ in range(3):
        assert math.isnan(f(x, float("nan")).item())
    assert f.cache_info() == symscalar.CacheInfo(hits=3, misses=3, entries=3)


def test_static_int_parameter_refuses_a_tensor():
    @symscalar.jit
    def f(x: torch.Tensor, d: StaticInt) -> torch.Tensor:
        return x.sum(d)

    with pytest.raises(
        TypeError,
        match=r"parameter 'd' of .*f is static .*cannot be a tensor.*"
        r"Annotate it torch.Tensor.*t.item\(\)",
    ):
        f(torch.ones(2, 2), torch.tensor(0))
    assert f(torch.ones(2, 2), Color.RED - 3).shape == (2,)  # an IntEnum arithmetic result: int


def test_tensor_inside_an_unregistered_static_container_is_refused():
    @dataclasses.dataclass(frozen=True)
    class Holder:
        t: torch.Tensor

    f = symscalar.jit(lambda x, h: x * h.t)
    with pytest.raises(
        TypeError,
        match=r"parameter 'h' of .* holds a tensor inside a Holder.*"
        r"register_dataclass\(Holder\)",
    ):
        f(torch.ones(2), Holder(torch.ones(2)))
    with pytest.raises(TypeError, match=r"hashable.*frozen=True"):
        f(torch.ones(2), {1, 2})


def test_refused_calls_are_neither_hits_nor_misses():
    f = symscalar.jit(lambda x, s: x * s, dynamic=["s"])
    f(torch.ones(1), 1.0)
    for bad in (np.float64(1.0), torch.tensor(1.0), "a", None):
        with pytest.raises(TypeError):
            f(torch.ones(1), bad)
    f(torch.ones(1), 2.0)
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=1, entries=1)


# -- *args, **kwargs -------------------------------------------------------------------------


def test_var_positional_and_var_keyword_arguments_are_part_of_the_call():
    def fn(x, *xs, **kw):
        out = x
        for v in xs:
            out = out * v
        for name, v in kw.items():
            out = out + v if name != "scale" else out * v
        return out

    f = symscalar.jit(fn)
    x = torch.tensor([1, 2], dtype=torch.int8)
    calls = [
        ((x,), {}),
        ((x, 200), {}),
        ((x, 200.0), {}),  # a static value: its type is in the key
        ((x, x), {"b": x}),
        ((x,), {"scale": 3}),
        ((x,), {"b": 3}),  # another keyword name: another entry
        ((x,), {"scale": 3, "b": 1}),
        ((x,), {"b": 1, "scale": 3}),  # the order changes what the function computes
        ((x, 200), {}),
        ((x,), {"scale": 3}),
    ]
    for args, kwargs in calls:
        out, ref = f(*args, **kwargs), fn(*args, **kwargs)
        assert out.dtype == ref.dtype and torch.equal(out, ref)
    assert f.cache_info() == symscalar.CacheInfo(hits=2, misses=8, entries=8)


def test_annotated_var_arguments_are_dynamic():
    def fn(x: torch.Tensor, *scales: DynamicFloat, **shifts: DynamicFloat) -> torch.Tensor:
        for s in scales:
            x = x * s
        for s in shifts.values():
            x = x + s
        return x

    f = symscalar.jit(fn)
    x = torch.randn(3)
    for i in range(3):
        torch.testing.assert_close(f(x, 1.0 + i, 2.0, a=0.5 * i), fn(x, 1.0 + i, 2.0, a=0.5 * i))
    assert f.cache_info().misses == 1
    with pytest.raises(TypeError, match=r"keyword argument 'a' of .*fn is DynamicFloat but got str"):
        f(x, 1.0, a="no")
    with pytest.raises(TypeError, match=r"argument 0 of \*scales of .*fn is DynamicFloat but got bool"):
        f(x, True)


# -- jitted functions called from a trace ------------------------------------------------------


@symscalar.jit
def scaled(x: torch.Tensor, s: DynamicFloat, d: StaticInt) -> torch.Tensor:
    return (x * s).sum(d)


def test_a_jitted_function_called_while_tracing_is_inlined():
    @symscalar.jit
    def outer(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return scaled(x, s, 0).exp() + scaled(x, 2, 1).sum()

    scaled.cache_clear()
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    for s in (0.5, 1.5):
        out = outer(x, s)
        ref = ((x * s).sum(0)).exp() + (x * 2).sum(1).sum()
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close(torch.autograd.grad(out.sum(), x)[0], torch.autograd.grad(ref.sum(), x)[0])
    assert outer.cache_info().misses == 1
    assert scaled.cache_info() == symscalar.CacheInfo(0, 0, 0)  # never called on its own
    assert "sum" in str(outer.last_trace())


def test_inlined_calls_check_their_arguments():
    @symscalar.jit
    def int_param(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return x * n

    with pytest.raises(TypeError, match=r"parameter 'n' of .*int_param is DynamicInt but got DynamicFloat s0"):
        symscalar.jit(lambda x, s: int_param(x, s), dynamic=["s"])(torch.ones(2), 1.5)
    with pytest.raises(symscalar.StaticValueRequiredError, match=r"parameter 'd' of scaled is static"):
        symscalar.jit(lambda x, n: scaled(x, 1.0, n), dynamic=["n"])(torch.ones(2, 2), 0)


# -- methods, descriptors, copies ------------------------------------------------------------


class Layer:
    def __init__(self, w: torch.Tensor) -> None:
        self.w = w

    @symscalar.jit
    def apply(self, x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return x * self.w * s

    @symscalar.jit
    @staticmethod
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @symscalar.jit
    @classmethod
    def name_length(cls, x: torch.Tensor) -> torch.Tensor:
        return x + len(cls.__name__)


def test_jit_on_methods_staticmethods_and_classmethods():
    a, b = Layer(torch.full((2,), 2.0)), Layer(torch.full((2,), 3.0))
    x = torch.ones(2)
    torch.testing.assert_close(a.apply(x, 1.5), x * 2.0 * 1.5)
    torch.testing.assert_close(b.apply(x, 1.5), x * 3.0 * 1.5)  # self is part of the key
    torch.testing.assert_close(a.apply(x, 2.5), x * 2.0 * 2.5)
    assert Layer.apply.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)
    for double in (Layer.double, a.double):
        torch.testing.assert_close(double(x), x * 2)
    for name_length in (Layer.name_length, a.name_length):
        torch.testing.assert_close(name_length(x), x + 5)


class Affine(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


def test_deepcopy_and_pickle_of_a_jitted_module_give_fresh_jitted_copies():
    torch.manual_seed(0)
    jm = symscalar.jit(Affine())
    x = torch.randn(4, 3)
    jm(x)
    copied = copy.deepcopy(jm)
    loaded = pickle.loads(pickle.dumps(jm))
    for other in (copied, loaded):
        assert isinstance(other, symscalar.JitModule) and other.cache_info().entries == 0
        with torch.no_grad():
            other.lin.weight.add_(1.0)  # the copy's own parameters
        torch.testing.assert_close(other(x), other._orig_mod(x))
        torch.testing.assert_close(jm(x), jm._orig_mod(x))
        assert not torch.allclose(other(x), jm(x))
    assert [n for n, _ in jm.named_parameters()] == ["_orig_mod.lin.weight", "_orig_mod.lin.bias"]
    assert jm.lin is jm._orig_mod.lin


def test_a_module_level_jitted_function_pickles_by_reference():
    assert pickle.loads(pickle.dumps(scaled)) is scaled
    assert copy.deepcopy(scaled) is scaled  # like any function: its cache has no per-copy state


# -- outputs --------------------------------------------------------------------------------


def test_unsupported_outputs_are_refused_clearly():
    with pytest.raises(TypeError, match=r"returned a value of type object at result\[1\]\['k'\].*register_dataclass"):
        symscalar.jit(lambda x: (x, {"k": object()}))(torch.ones(1))
    captured = torch.ones(1)
    with pytest.raises(TypeError, match=r"returned a tensor at result\[0\] that was not computed from its inputs"):
        symscalar.jit(lambda x: [captured])(torch.ones(1))


def test_tensor_parameter_defaulting_to_none_takes_none_or_a_tensor():
    def fn(x: torch.Tensor, mask: torch.Tensor = None) -> torch.Tensor:  # as real models write
        return x if mask is None else x * mask

    f = symscalar.jit(fn)
    x = torch.randn(3)
    torch.testing.assert_close(f(x), fn(x))
    torch.testing.assert_close(f(x, torch.zeros(3)), fn(x, torch.zeros(3)))
    torch.testing.assert_close(f(x, mask=None), fn(x))
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=2, entries=2)
    with pytest.raises(TypeError, match=r"parameter 'x' of .*fn is annotated torch\.Tensor but got NoneType"):
        f(None)


class Meters(float):
    pass


@pytest.mark.parametrize(
    "kind, value, message",
    [
        (
            DynamicInt,
            2.7,
            r"is DynamicInt but got float 2.7: it takes int, which keeps the program's types; "
            r"pass int, or annotate the parameter NumberLike",
        ),
        (DynamicBool, 1, r"is DynamicBool but got int 1: it takes bool.*pass bool"),
        (
            DynamicFloat,
            Meters(2.0),
            r"is DynamicFloat but got Meters 2.0: Meters \(a subclass of float\) is "
            r"not converted silently; pass float\(v\)",
        ),
        (
            DynamicFloat,
            Color.RED,
            r"is DynamicFloat but got Color <Color.RED: 3>: Color \(a subclass of int\) is "
            r"not converted silently; pass int\(v\)",
        ),
        (
            NumberLike,
            np.bool_(True),
            r"is NumberLike but got bool_ True: numpy scalars are not converted "
            r"silently .*Pass int\(v\), float\(v\) or bool\(v\)",
        ),
        (
            NumberLike,
            "1",
            r"is NumberLike but got str '1': pass a Python bool or int or float, or declare "
            r"the parameter static",
        ),
        (DynamicFloat, 1j, r"is DynamicFloat but got complex 1j: pass a Python float or int"),
        (
            DynamicFloat,
            torch.tensor(1.0),
            r"is DynamicFloat but got Tensor tensor\(1.\): a tensor is not a "
            r"number. Pass a Python number \(t.item\(\)\)",
        ),
    ],
)
def test_refusal_messages_say_what_to_pass(kind, value, message):
    def fn(x: torch.Tensor, s: kind) -> torch.Tensor:  # type: ignore[valid-type]
        return x * s

    with pytest.raises(TypeError, match=r"parameter 's' of .*fn " + message):
        symscalar.jit(fn)(torch.ones(1), value)


def test_a_jitted_submodule_is_inlined_into_the_jitted_model():
    torch.manual_seed(0)
    block = symscalar.jit(Affine())
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), block, torch.nn.Tanh())
    assert "1._orig_mod.lin.weight" in dict(model.named_parameters())
    jitted = symscalar.jit(model)
    x = torch.randn(4, 3, requires_grad=True)
    out, ref = jitted(x), model(x)
    torch.testing.assert_close(out, ref)
    grads = torch.autograd.grad(out.sum(), [x, *model.parameters()])
    refs = torch.autograd.grad(ref.sum(), [x, *model.parameters()])
    for g, r in zip(grads, refs):
        torch.testing.assert_close(g, r)
    assert block.cache_info().misses == 1  # only the eager model(x) call above traced it
    assert jitted.cache_info().misses == 1
    clone = copy.deepcopy(model)
    assert clone[1] is not block and clone[1].lin is not block.lin
    torch.testing.assert_close(clone(x), ref)


@pytest.mark.parametrize("op", ["add", "radd", "mul"])
@pytest.mark.parametrize("s", [np.bool_(True), np.int64(200), np.float32(2.5), np.float64(-0.0)])
def test_static_numpy_scalars_match_eager_on_either_side_or_are_refused(op, s):
    """torch promotes numpy.bool_ like a float (int8 + numpy.True_ is float32): a numpy scalar
    must reach the traced op as itself, never turned into a Python bool by numpy first."""
    f = symscalar.jit(lambda x, s: OPS[op](x, s), static=["s"])
    x = torch.tensor([1, 2], dtype=torch.int8)
    expected = OPS[op](x, s)
    try:
        out = f(x, s)
    except TypeError as e:
        assert "int64" in str(e) or "bool_" in str(e) or "float32" in str(e)
        return
    assert out.dtype == expected.dtype and torch.equal(out, expected)
