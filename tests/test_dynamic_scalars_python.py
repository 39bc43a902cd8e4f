"""Dynamic numbers in plain Python: each dunder is traced with Python's exact semantics (value
*and* type equal to Python's on every call, several values through one compiled program) or
raises an error that names the value, its origin and the fixes."""

import math

import pytest
import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, DynamicValueError

INT_PAIRS = [(7, 2), (-7, 2), (7, -3), (0, 5), (12, 1), (-1, 4)]
FLOAT_PAIRS = [(2.5, 1.5), (-2.5, 0.75), (3.5, -2.0), (0.5, 4.0), (-0.5, 1.0)]

INT_OPS = {
    "round": lambda n, m: round(n),
    "round_ndigits": lambda n, m: round(n, 1),
    "round_negative_ndigits": lambda n, m: round(n, -1),
    "floor": lambda n, m: math.floor(n),
    "ceil": lambda n, m: math.ceil(n),
    "trunc": lambda n, m: math.trunc(n),
    "divmod": lambda n, m: divmod(n, m),
    "rdivmod": lambda n, m: divmod(17, m),
    "and": lambda n, m: n & m,
    "or": lambda n, m: n | m,
    "xor": lambda n, m: n ^ m,
    "rand": lambda n, m: 6 & n,
    "lshift": lambda n, m: n << 2,
    "rshift": lambda n, m: n >> 1,
    "rlshift": lambda n, m: 1 << abs(m),
    "invert": lambda n, m: ~n,
    "abs": lambda n, m: abs(n),
    "neg": lambda n, m: -n,
    "pow_negative_static": lambda n, m: (abs(n) + 1) ** -1,
    "pow_negative_static_2": lambda n, m: (n + 10) ** -2,
    "pow": lambda n, m: n**2,
    "and_bool": lambda n, m: n & True,
    "compare_chain": lambda n, m: (n < m) ^ (m > 0),
}

FLOAT_OPS = {
    "round_half_even": lambda s, t: round(s),
    "round_ndigits": lambda s, t: round(s, 1),
    "floor": lambda s, t: math.floor(s),
    "ceil": lambda s, t: math.ceil(s),
    "trunc": lambda s, t: math.trunc(s),
    "divmod": lambda s, t: divmod(s, t),
    "rdivmod": lambda s, t: divmod(7.25, t),
    "abs": lambda s, t: abs(s),
    "pow_negative": lambda s, t: abs(s) ** -1,
}


def _same(got, expected):
    if isinstance(expected, tuple):
        return isinstance(got, tuple) and len(got) == len(expected) and all(map(_same, got, expected))
    return type(got) is type(expected) and got == expected


@pytest.mark.parametrize("name", sorted(INT_OPS))
def test_int_operations_equal_python(name):
    op = INT_OPS[name]

    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt, m: DynamicInt):
        return op(n, m)

    x = torch.ones(1)
    for n, m in INT_PAIRS:
        expected = op(n, m)
        got = f(x, n, m)
        assert _same(got, expected), (name, n, m, got, expected)
    assert f.cache_info().misses == 1  # one program for every value


@pytest.mark.parametrize("name", sorted(FLOAT_OPS))
def test_float_operations_equal_python(name):
    op = FLOAT_OPS[name]

    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat, t: DynamicFloat):
        return op(s, t)

    x = torch.ones(1)
    for s, t in FLOAT_PAIRS:
        expected = op(s, t)
        got = f(x, s, t)
        assert _same(got, expected), (name, s, t, got, expected)
    assert f.cache_info().misses == 1


@pytest.mark.parametrize(
    "op",
    [
        lambda b, c: b & c,
        lambda b, c: b | c,
        lambda b, c: b ^ c,
        lambda b, c: b ^ True,
        lambda b, c: b & 3,
        lambda b, c: 5 | b,
    ],
)
def test_bool_bitwise_equal_python(op):
    @symscalar.jit
    def f(x: torch.Tensor, b: DynamicBool, c: DynamicBool):
        return op(b, c)

    x = torch.ones(1)
    for b in (False, True):
        for c in (False, True):
            assert _same(f(x, b, c), op(b, c))


def _traced_error(body, kind=DynamicInt):
    @symscalar.jit
    def f(x: torch.Tensor, n: kind):  # type: ignore[valid-type]
        return body(n) * x

    return f


@pytest.mark.parametrize(
    "body, what",
    [
        (lambda n: 1 if n in {1, 2} else 0, "hash()"),
        (lambda n: {1: 1, 2: 2}.get(n, 0), "hash()"),
        (lambda n: len(str(n)), "str()"),
        (lambda n: len(f"{n}"), "format()"),
        (lambda n: len(f"{n:d}"), "format()"),
        (lambda n: len(f"{n}"), "format()"),
        (lambda n: 1 if n in [1, 2] else 0, "bool()"),
    ],
)
def test_hashing_and_formatting_raise_with_origin_and_fixes(body, what):
    f = _traced_error(body)
    with pytest.raises(DynamicValueError) as info:
        f(torch.ones(2), 1)
    message = str(info.value)
    assert what in message
    assert "parameter 'n' of " in message
    assert "static" in message and "specialize" in message


def test_dynamic_value_as_right_operand_of_in_is_a_type_error_like_python():
    f = _traced_error(lambda n: 1 if 1 in n else 0)
    with pytest.raises(TypeError, match="argument of type 'DynamicInt' is not iterable"):
        f(torch.ones(2), 1)
    with pytest.raises(TypeError, match="argument of type 'int' is not iterable"):
        1 in 5  # type: ignore[operator]  # noqa: B015 - Python's own message, for comparison


def test_invert_of_dynamic_bool_is_refused_with_the_fix():
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt):
        return x * ~(n > 1)

    with pytest.raises(TypeError, match=r"~True is -2.*b \^ True"):
        f(torch.ones(2), 3)


def test_round_with_dynamic_ndigits_is_refused():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat, n: DynamicInt):
        return x * round(s, n)  # type: ignore[call-overload]

    with pytest.raises(TypeError, match="ndigits must be a static int"):
        f(torch.ones(2), 1.5, 1)


def test_negative_dynamic_exponent_of_an_int_raises_at_run_time():
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt, m: DynamicInt):
        return x * n**m

    assert torch.equal(f(torch.ones(2), 2, 3), torch.full((2,), 8.0))
    with pytest.raises(ValueError, match="negative exponent"):
        f(torch.ones(2), 2, -1)


@pytest.mark.parametrize(
    "make", [lambda s: torch.tensor(s), lambda s: torch.tensor([s, 1.0]), lambda s: torch.as_tensor(s)]
)
def test_torch_tensor_of_a_dynamic_value_points_to_full(make):
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat):
        return x * make(s)

    with pytest.raises(DynamicValueError, match=r"torch\.full\(\(\), s"):
        f(torch.ones(2), 1.5)


def test_full_is_the_dynamic_spelling_of_tensor():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat):
        return x * torch.full((), s)

    for s in (1.5, -2.0):
        assert torch.equal(f(torch.ones(2), s), torch.ones(2) * torch.tensor(s))
    assert f.cache_info().misses == 1
