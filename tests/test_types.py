"""The scalar types: dynamic numbers are not Python numbers, record arithmetic, never fold,
and refuse implicit concretization with a message that names the value and the fixes."""

import numbers

import pytest
import torch

import symscalar
from symscalar import (
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    DynamicValueError,
    NumberClasses,
    is_dynamic,
    is_static,
)
from symscalar.tracer import TraceBuilder, tracing


@pytest.fixture
def builder():
    b = TraceBuilder("f")
    with tracing(b):
        yield b


def dyn_int(b, value=3, name="n"):
    return b.scalar_input(int, value, f"parameter '{name}' of f")


def dyn_float(b, value=0.5, name="s"):
    return b.scalar_input(float, value, f"parameter '{name}' of f")


def test_dynamic_numbers_are_not_python_numbers(builder):
    n, s = dyn_int(builder), dyn_float(builder)
    b = n > 1
    for value, cls in ((n, int), (s, float), (b, bool)):
        assert not isinstance(value, cls)
        assert not isinstance(value, numbers.Number)
        assert isinstance(value, NumberClasses)
        assert is_dynamic(value) and not is_static(value)
    assert isinstance(b, DynamicBool)
    assert is_static(3) and is_static(2.5) and not is_dynamic(3)


@pytest.mark.parametrize(
    "expr, cls, prim",
    [
        (lambda n, s: n + 1, DynamicInt, "scalar_add"),
        (lambda n, s: 1 + n, DynamicInt, "scalar_add"),
        (lambda n, s: n * 2, DynamicInt, "scalar_mul"),
        (lambda n, s: n - 2.5, DynamicFloat, "scalar_sub"),
        (lambda n, s: n / 2, DynamicFloat, "scalar_truediv"),
        (lambda n, s: n // 2, DynamicInt, "scalar_floordiv"),
        (lambda n, s: n % 2, DynamicInt, "scalar_mod"),
        (lambda n, s: 2**n, DynamicInt, "scalar_pow"),
        (lambda n, s: s * n, DynamicFloat, "scalar_mul"),
        (lambda n, s: -s, DynamicFloat, "scalar_neg"),
        (lambda n, s: abs(n), DynamicInt, "scalar_abs"),
        (lambda n, s: n < 3, DynamicBool, "scalar_lt"),
        (lambda n, s: 3 <= n, DynamicBool, "scalar_ge"),
        (lambda n, s: n == 3, DynamicBool, "scalar_eq"),
        (lambda n, s: (n > 1) & (s < 1.0), DynamicBool, "scalar_and"),
        (lambda n, s: (n > 1) ^ True, DynamicBool, "scalar_xor"),
        (lambda n, s: ~n, DynamicInt, "scalar_invert"),
    ],
)
def test_arithmetic_records_and_never_folds(builder, expr, cls, prim):
    n, s = dyn_int(builder), dyn_float(builder)
    out = expr(n, s)
    assert type(out) is cls
    assert builder.eqns[-1].prim.name == prim


def test_static_arithmetic_stays_python():
    assert type(2 + 3) is int  # trivially Python; no tracer involved, nothing recorded


@pytest.mark.parametrize(
    "action, what",
    [
        (bool, "bool()"),
        (int, "int()"),
        (float, "float()"),
        (lambda d: range(d), "__index__()"),
        (lambda d: [1, 2, 3, 4][d], "__index__()"),
        (lambda d: 1 if d > 0 else 0, "bool()"),
        (lambda d: d > 0 and True, "bool()"),
        (lambda d: not d, "bool()"),
    ],
)
def test_implicit_concretization_raises_with_both_fixes(builder, action, what):
    n = dyn_int(builder)
    with pytest.raises(DynamicValueError) as info:
        action(n)
    message = str(info.value)
    assert what in message
    assert "parameter 'n' of f" in message
    assert "StaticInt" in message and "specialize" in message


def test_specialize_returns_value_and_records_guard(builder):
    n = dyn_int(builder, 4)
    m = n * 2 + 1
    assert symscalar.specialize(m) == 9
    assert builder.guards and builder.guards[-1][1] == 9
    assert symscalar.specialize(7) == 7


def test_check_on_static_bool():
    symscalar.check(True, "fine")
    with pytest.raises(symscalar.CheckFailedError, match="nope"):
        symscalar.check(False, "nope")


def test_proxy_used_outside_trace_is_an_error():
    b = TraceBuilder("f")
    with tracing(b):
        n = dyn_int(b)
    with pytest.raises(DynamicValueError, match="outside the trace"):
        n + 1


def test_dynamic_numbers_reach_torch_functions(builder):
    s = dyn_float(builder)
    x = builder.tensor_input(symscalar.trace.TensorVar((2, 3), torch.float32, torch.device("cpu")))
    y = torch.mul(x, s)
    assert builder.eqns[-1].prim.name == "mul"
    assert tuple(y.shape) == (2, 3)
