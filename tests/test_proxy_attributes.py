"""A traced tensor answers every public ``torch.Tensor`` attribute like the real tensor it
stands for, or raises an error that names the attribute: nothing is left to a default.

The walk covers every name of ``dir(torch.Tensor)`` (except Python object machinery) on an
input, a computed value and a captured tensor, each with and without requires_grad."""

import builtins
import copy
import functools
import sys
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
import torch

import symscalar
from symscalar.errors import DynamicValueError, SymscalarError, UnsupportedOperationError
from symscalar.proxy import PYTHON_OBJECT_NAMES, TensorProxy
from symscalar.trace import TensorVar
from symscalar.tracer import TraceBuilder, tracing

builtins_isinstance = builtins.isinstance  # the builtin itself: no trace runs at import
NAMES = sorted(set(dir(torch.Tensor)) - PYTHON_OBJECT_NAMES)


def _proxy_of(kind, real, builder):
    """A proxy standing for ``real``: an input, a captured tensor or a computed value."""
    if kind == "input":
        return builder.tensor_input(TensorVar(tuple(real.shape), real.dtype, real.device), real.requires_grad)
    if kind == "captured":
        return builder.capture(real)
    source = builder.tensor_input(TensorVar(tuple(real.shape), real.dtype, real.device), real.requires_grad)
    return source * 1  # computed: requires grad exactly when the source does


def _real(kind, dtype, requires_grad):
    leaf = torch.randn(2, 3, dtype=dtype).requires_grad_(requires_grad)
    return leaf * 1 if kind == "computed" else leaf


def _answer(obj, name):
    try:
        return ("value", getattr(obj, name))
    except Exception as e:  # noqa: BLE001 - the test compares what each side raises
        return ("error", e)


def _names_the_attribute(error, name):
    text = str(error)
    return name in text or name.strip("_") in text


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", ["input", "computed", "captured"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_every_tensor_attribute_is_truthful_or_a_named_error(kind, requires_grad, dtype):
    real = _real(kind, dtype, requires_grad)
    expected_answers = {name: _answer(real, name) for name in NAMES}  # eager, outside the trace
    builder = TraceBuilder("f")
    with tracing(builder):
        proxy = _proxy_of(kind, real, builder)
        for name in NAMES:
            got = _answer(proxy, name)
            expected = expected_answers[name]
            where = f"{kind} requires_grad={requires_grad}: {name}"
            if got[0] == "error":
                error = got[1]
                if expected[0] == "error":
                    continue  # eager raises too
                assert isinstance(error, (SymscalarError, AttributeError)), (where, error)
                assert _names_the_attribute(error, name), (where, error)
                continue
            value, real_value = got[1], expected[1]
            assert not isinstance(value, functools.partial), where
            if callable(real_value) and not isinstance(real_value, torch.Tensor):
                assert callable(value), where
            elif isinstance(real_value, torch.Tensor):
                assert isinstance(value, TensorProxy), where
                assert (value.shape, value.dtype) == (real_value.shape, real_value.dtype), where
            else:
                assert type(value) is type(real_value) and value == real_value, (where, value, real_value)


def test_requires_grad_follows_inputs_captured_tensors_and_grad_mode():
    w = torch.nn.Parameter(torch.randn(3))
    frozen = torch.randn(3)
    seen = {}

    def f(x, y):
        seen["x"], seen["y"] = x.requires_grad, y.requires_grad
        seen["x*w"] = (x * w).requires_grad
        seen["y*frozen"] = (y * frozen).requires_grad
        seen["y*w"] = (y * w).requires_grad
        seen["comparison"] = ((x * w) > 0).requires_grad
        with torch.no_grad():
            seen["no_grad"] = (x * w).requires_grad
        seen["detach"] = (x * w).detach().requires_grad
        return x * w

    f(torch.randn(3, requires_grad=True), torch.randn(3))
    expected = dict(seen)
    seen.clear()
    builder = TraceBuilder("f")
    with tracing(builder):
        px = builder.tensor_input(TensorVar((3,), torch.float32, torch.device("cpu")), True)
        py = builder.tensor_input(TensorVar((3,), torch.float32, torch.device("cpu")), False)
        f(px, py)
    assert seen == expected
    assert expected["x*w"] and not expected["no_grad"]  # the cases differ, so the test can fail


def test_isinstance_answers_as_for_a_tensor_outside_symscalar():
    # user and library code branching on isinstance(x, torch.Tensor) must take eager's branch;
    # symscalar's own modules still see the builtin's answer (how they tell proxies apart)
    builder = TraceBuilder("f")
    with tracing(builder):
        x = builder.tensor_input(TensorVar((2,), torch.float32, torch.device("cpu")))
        assert isinstance(x, torch.Tensor)
        assert isinstance(x, (int, torch.Tensor))
        assert isinstance(x, int | torch.Tensor)
        assert torch.is_tensor(x)
        assert not isinstance(x, torch.nn.Parameter)  # a computed value is not a Parameter
        assert not isinstance(x, int)
        assert isinstance(x, TensorProxy)
        in_symscalar = vars(sys.modules["symscalar.proxy"])
        assert not eval("isinstance(x, torch.Tensor)", in_symscalar, {"x": x})  # noqa: S307 - our own expression
    assert not isinstance(x, torch.Tensor)  # outside a trace: the builtin again
    assert isinstance.__module__ == "builtins"


@typing.runtime_checkable
class _HasWeights(typing.Protocol):
    weights: Any  # a data protocol: issubclass() refuses it


@typing.runtime_checkable
class _HasShape(typing.Protocol):
    shape: Any


def test_isinstance_of_a_proxy_against_other_classes_is_the_builtins_answer_everywhere():
    # the wrapper decides by class before it looks at the caller (symscalar's own walks ask
    # about (tuple, list) and Mapping on the hot path): where torch.Tensor is not a subclass of
    # the class, user code and symscalar both get the builtin's answer
    builder = TraceBuilder("f")
    in_symscalar = vars(sys.modules["symscalar.trace"])
    with tracing(builder):
        x = builder.tensor_input(TensorVar((2,), torch.float32, torch.device("cpu")))
        for classinfo in ((tuple, list), Mapping, Sequence, int, _HasWeights, _HasShape, (_HasWeights, dict)):
            expected = builtins_isinstance(x, classinfo)
            assert isinstance(x, classinfo) == expected, classinfo
            assert eval("isinstance(x, c)", in_symscalar, {"x": x, "c": classinfo}) == expected  # noqa: S307
        assert isinstance(x, _HasShape)  # the builtin's answer: a proxy has a shape
        assert not isinstance(x, (tuple, list, Mapping, _HasWeights))
        for classinfo in (torch.Tensor, (dict, torch.Tensor)):  # a Tensor's answer: for user code only
            assert isinstance(x, classinfo)
            assert not eval("isinstance(x, c)", in_symscalar, {"x": x, "c": classinfo})  # noqa: S307
    assert not isinstance(x, torch.Tensor)


def test_user_code_branching_on_isinstance_matches_eager():
    def f(x, scale):
        if isinstance(x, torch.Tensor):
            x = x * 2
        if torch.is_tensor(scale):
            x = x * scale
        return x + 1

    jf = symscalar.jit(f)
    for _ in range(2):
        x, s = torch.randn(3), torch.randn(3)
        torch.testing.assert_close(jf(x, s), f(x, s))


class _MyParameter(torch.nn.Parameter):  # overrides nothing: behaves as a Parameter
    pass


def _branch_on_parameter(x, others):
    # library code (an optimizer helper, a weight-init routine) branching on the argument's class
    scale = 2.0 if isinstance(x, torch.nn.Parameter) else 3.0
    if isinstance(x, _MyParameter):
        scale += 10.0
    return x * scale + sum(o * (5.0 if isinstance(o, torch.nn.Parameter) else 7.0) for o in others)


@pytest.mark.parametrize("annotated", [True, False])
def test_isinstance_of_a_parameter_argument_answers_its_class(annotated):
    # A Parameter passed as an argument is a Parameter to user code, as in eager; its class is
    # part of the cache key, so a plain tensor in the same position gets its own program.
    if annotated:

        def f(x: torch.Tensor, others: list[torch.Tensor]) -> torch.Tensor:
            return _branch_on_parameter(x, others)
    else:

        def f(x, others):
            return _branch_on_parameter(x, others)

    jf = symscalar.jit(f)
    plain, param, mine = torch.ones(2), torch.nn.Parameter(torch.ones(2)), _MyParameter(torch.ones(2))
    calls = [(param, [plain]), (plain, [param]), (mine, [mine, plain]), (param, [plain]), (plain, [plain])]
    for x, others in calls * 2:
        torch.testing.assert_close(jf(x, others), f(x, others))
    assert jf.cache_info().misses == 4
    assert "class Tensor → Parameter" in str(jf.explain()) or "class Parameter → Tensor" in str(jf.explain())


def _loss_branching_on_parameter(x, y):
    return _branch_on_parameter(x, [y]).pow(2).sum()


@pytest.mark.parametrize("api", ["value_and_grad", "grad"])
def test_value_and_grad_of_a_parameter_sees_a_parameter(api):
    # value_and_grad(fn)(*args) is fn(*args) and its gradient: fn sees each argument's class.
    # Its detached leaf was a plain tensor, so an isinstance(x, Parameter) branch took the
    # other side than fn(*args) (value and gradient silently 3x instead of 2x).
    jf = getattr(symscalar, api)(_loss_branching_on_parameter, argnums=(0, 1))
    for _ in range(3):  # the programs cached for each class, called again
        for x, y in [
            (torch.nn.Parameter(torch.randn(3)), torch.randn(3)),
            (torch.randn(3), _MyParameter(torch.randn(3))),
            (torch.randn(3), torch.randn(3)),
        ]:
            xe, ye = (
                type(t)(t.detach()) if type(t) is not torch.Tensor else t.detach().requires_grad_(True) for t in (x, y)
            )
            value = _loss_branching_on_parameter(xe, ye)
            expected = torch.autograd.grad(value, (xe, ye))
            got = jf(x, y)
            if api == "value_and_grad":
                torch.testing.assert_close(got[0], value.detach())
                got = got[1]
            for g, ge in zip(got, expected):
                torch.testing.assert_close(g, ge)
            assert x.grad is None and y.grad is None  # the arguments themselves are left alone


def test_a_python_attribute_on_an_argument_tensor_is_refused_not_defaulted():
    # eager reads attributes set on the tensor object (`p._no_weight_decay = True`, nn.Buffer's
    # `_is_buffer` behind isinstance(x, nn.Buffer)); the proxy has none, so getattr with a default,
    # hasattr and isinstance(x, nn.Buffer) silently took the other answer
    tagged = torch.ones(2)
    tagged.scale = 3.0

    def with_default(x):
        return x * getattr(x, "scale", 5.0)

    def probed(x):
        return x * (2.0 if hasattr(x, "scale") else 7.0)

    def buffer_branch(x):
        return x * (2.0 if isinstance(x, torch.nn.Buffer) else 3.0)

    match = r"parameter 'x' of .* has '(scale|_is_buffer)', a Python attribute set on its tensor object"
    for fn, arg in [(with_default, tagged), (probed, tagged), (buffer_branch, torch.nn.Buffer(torch.ones(2)))]:
        with pytest.raises(UnsupportedOperationError, match=match):
            symscalar.jit(fn)(arg)
        with pytest.raises(UnsupportedOperationError, match=match):
            symscalar.grad(lambda x: fn(x).sum())(arg)  # its detached leaf keeps the attributes
        # without the attribute: eager's answer; the program holds only while it stays absent
        jf, plain = symscalar.jit(fn), torch.ones(2)
        for _ in range(2):
            torch.testing.assert_close(jf(plain), fn(plain))
            with pytest.raises(UnsupportedOperationError, match=match):  # a cache hit kept the default
                jf(arg)
        assert jf.cache_info().misses == 1


class _AddsOnMul(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        return out + 100 if func is torch.Tensor.mul else out


class _ParameterAddsOnMul(torch.nn.Parameter):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = torch.Tensor.__torch_function__.__func__(cls, func, types, args, kwargs or {})
        return out + 100 if func is torch.Tensor.mul else out


class _Plain(torch.Tensor):  # eager's results of torch calls on it are _Plain too
    pass


class _Holder(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.register_buffer("w", w)

    def forward(self, x):
        return self.w * x


@pytest.mark.parametrize("cls", [_AddsOnMul, _ParameterAddsOnMul, _Plain])
def test_tensor_subclasses_that_change_torch_calls_are_refused(cls):
    # Their __torch_function__ decides what a call does or returns; a trace of torch's own ops
    # would silently drop that (it did: w * x gave x without the +100), so they are refused
    # wherever they enter: an argument, a tensor inside a container argument, captured state.
    x = torch.randn(3)
    sub = cls(torch.randn(3)) if issubclass(cls, torch.nn.Parameter) else torch.randn(3).as_subclass(cls)
    match = rf"{cls.__qualname__}.*torch\.Tensor subclass.*as_subclass\(torch\.Tensor\)"

    def annotated(t: torch.Tensor) -> torch.Tensor:
        return t * 2

    with pytest.raises(UnsupportedOperationError, match=r"parameter 't' of .*" + match):
        symscalar.jit(annotated)(sub)
    with pytest.raises(UnsupportedOperationError, match=match):
        symscalar.jit(lambda ts: ts[0] * 2)([sub])
    with pytest.raises(UnsupportedOperationError, match=r"read by torch\.Tensor\.mul.*" + match):
        symscalar.jit(_Holder(sub))(x)
    with pytest.raises(UnsupportedOperationError, match=r"argument 0 of .*" + match):  # detach() dropped it
        symscalar.grad(lambda t: (t * 2).sum())(sub)
    plain = symscalar.jit(_Holder(sub.as_subclass(torch.Tensor)))  # the fix the message gives
    torch.testing.assert_close(plain(x), sub.as_subclass(torch.Tensor) * x)


def _trace_raises(body, error, match, *, shape=(2, 3)):
    builder = TraceBuilder("f")
    with tracing(builder):
        x = builder.tensor_input(TensorVar(shape, torch.float32, torch.device("cpu")))
        with pytest.raises(error, match=match):
            body(x)


@pytest.mark.parametrize(
    "body, match",
    [
        (lambda x: x.add_(1), r"torch\.Tensor\.add_.*in-place"),
        (lambda x: x.__iadd__(1), r"add_ on .*in-place.*y = y \+ 1"),
        (lambda x: x.__setitem__(0, 3.0), r"__setitem__.*in-place.*torch\.where"),
        (lambda x: x.requires_grad_(), r"requires_grad_.*in-place"),
        (lambda x: x.zero_(), r"zero_.*in-place"),
        (lambda x: torch.relu_(x), r"relu_.*in-place"),
        (lambda x: torch.add(x, 1, out=x), r"torch\.add\(\.\.\., out=\.\.\.\)"),
        (lambda x: x.data, r"torch\.Tensor\.data.*detach"),
        (lambda x: x.grad, r"torch\.Tensor\.grad"),
        (lambda x: x.stride(), r"torch\.Tensor\.stride.*layout"),
        (lambda x: x.is_contiguous(), r"is_contiguous.*layout"),
        (lambda x: x.data_ptr(), r"data_ptr.*storage"),
        (lambda x: copy.deepcopy(x), r"__deepcopy__"),
    ],
)
def test_unsupported_uses_raise_named_errors(body, match):
    _trace_raises(body, UnsupportedOperationError, match)


def test_augmented_assignment_is_refused_not_rebound():
    def body(x):
        y = x
        y += 1  # eager would update x as well
        return x

    _trace_raises(body, UnsupportedOperationError, r"add_ on .*in-place")


@pytest.mark.parametrize(
    "body, match",
    [
        (lambda x: str(x), r"str\(\)"),
        (lambda x: f"{x}", r"format"),
        (lambda x: x.item(), r"\.item\(\)"),
        (lambda x: x.tolist(), r"\.tolist\(\)"),
        (lambda x: float(x), r"float\(\)"),
        (lambda x: 1.0 in x, r"`in`"),
        (lambda x: bool(x), r"bool\(\)"),
    ],
)
def test_value_reads_raise_dynamic_value_errors(body, match):
    _trace_raises(body, DynamicValueError, match)


def test_iterating_a_0d_tensor_raises_like_eager():
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(torch.tensor(1.0))
    _trace_raises(lambda x: list(x), TypeError, "iteration over a 0-d tensor", shape=())


def test_iterating_a_traced_tensor_unbinds_it():
    f = symscalar.jit(lambda x: [r * 2 for r in x])
    x = torch.randn(3, 2)
    for got, expected in zip(f(x), [r * 2 for r in x]):
        assert torch.equal(got, expected)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(axis=1),
        lambda x: x.sum(dim=1, keepdims=True),
        lambda x: torch.sum(x, axis=0, keepdims=True),
        lambda x: x.amax(axis=-1),
    ],
)
def test_numpy_keyword_aliases_are_accepted_like_eager(fn):
    x = torch.randn(3, 4)
    assert torch.equal(symscalar.jit(fn)(x), fn(x))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(np.int64(1)),
        lambda x: x[np.int64(1)],
        lambda x: x[np.int32(0), np.int64(2)],
        lambda x: x[np.int64(1) : np.int64(3), :: np.int64(2)],
        lambda x: x.unsqueeze(np.int64(0)),
        lambda x: x.transpose(np.int64(0), np.int8(1)),
        lambda x: x * np.float64(2.5),
        lambda x: x + np.int64(3),
    ],
)
def test_numpy_scalars_as_dims_indices_and_operands_like_eager(fn):
    x = torch.randn(3, 4)
    got, expected = symscalar.jit(fn)(x), fn(x)
    assert got.dtype == expected.dtype and torch.equal(got, expected)


def test_clone_returns_a_new_tensor():
    x = torch.randn(3)
    y = symscalar.jit(lambda x: x.clone())(x)
    assert y is not x and torch.equal(y, x)
    y.add_(1)
    assert not torch.equal(y, x)  # mutating the result leaves the input alone, as in eager


def test_contiguous_of_a_transposed_input_is_contiguous_like_eager():
    x = torch.randn(3, 4)
    f = symscalar.jit(lambda x: x.t().contiguous())
    got, expected = f(x), x.t().contiguous()
    assert got.is_contiguous() and torch.equal(got, expected)
    same = symscalar.jit(lambda x: x.contiguous())
    assert (same(x) is x) == (x.contiguous() is x)


def test_detach_has_no_gradient_like_eager():
    def f(x):
        return x.detach() * x

    x1 = torch.randn(3, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_(True)
    f(x1).sum().backward()
    symscalar.jit(f)(x2).sum().backward()
    assert torch.allclose(x1.grad, x2.grad)
