"""Adversarial pass over declared dynamic dims (second round): each case is a class of
program where a trace made at one size could give another size's call a result that differs
from eager's with no error. Every case runs at several sizes in one process, a trace made at
one size reused at the others, and must equal eager (values, dtypes, shapes, gradients) or
raise where eager raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import symscalar
from symscalar import Dim


def _outcome(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except RuntimeError as e:
        return e


def _check_like_eager(fn: Callable[..., Any], jitted: Any, args: tuple[Any, ...]) -> None:
    want, got = _outcome(fn, *args), _outcome(jitted, *args)
    if isinstance(want, Exception):
        assert isinstance(got, Exception), (args[0].shape, "eager raised", want, "jit returned", got)
        return
    assert not isinstance(got, Exception), got
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    torch.testing.assert_close(got, want)


ZERO_SIZES = [(2, 3), (2, 0), (1, 1), (3, 0), (3, 5)]


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.reshape(-1, x.shape[1] * 3),
        lambda x: x.view(x.shape[0], -1, x.shape[1]),
        lambda x: x.flatten(0, 1).unflatten(0, (-1, x.shape[1])),
    ],
    ids=["reshape(-1, T * 3)", "view(B, -1, T)", "unflatten(0, (-1, T))"],
)
def test_reshape_minus_one_next_to_a_size_that_may_be_zero(fn):
    # eager refuses a -1 next to a 0; the normal form cancels s_T (s_B * s_T * 3 // (s_T * 3)
    # is s_B), so a program traced at T=3 answered [2, 0] at T=0 where eager raises
    jitted = symscalar.jit(fn, dynamic_dims={"x": ("B", Dim("T", min=0, max=8))})
    for b, t in ZERO_SIZES:
        _check_like_eager(fn, jitted, (torch.randn(b, t, 3),))


def test_a_range_with_a_float_bound_next_to_a_size_is_refused_clearly():
    # it raised a TypeError from inside the shape rule ('Size' - 'float')
    jitted = symscalar.jit(lambda x: torch.arange(0.5, x.shape[1]), dynamic_dims={"x": ("B", "T")})
    with pytest.raises(symscalar.errors.DynamicValueError, match=r"bound 0\.5 .*torch\.arange\(T\) \+ 0\.5"):
        jitted(torch.randn(2, 3))


_SEEN: list[Any] = []
_COUNTS: dict[str, int] = {}


def _appends(x: torch.Tensor) -> torch.Tensor:
    _SEEN.append(x.shape[0])
    return x * len(_SEEN)


def _counts(x: torch.Tensor) -> torch.Tensor:
    _COUNTS["calls"] = _COUNTS.get("calls", 0) + 1
    return x * _COUNTS["calls"]


@pytest.mark.parametrize("fn", [_appends, _counts], ids=["a global list appended", "a global dict counter"])
def test_a_python_side_effect_on_a_container_is_not_silent(fn):
    # the Python runs once, at trace time: eager's x * 1, x * 2, ... becomes x * 1 on every
    # call (with a size symbol left in the list); the trace says so instead of staying silent
    _SEEN.clear()
    _COUNTS.clear()
    jitted = symscalar.jit(fn, dynamic_dims={"x": ("B",)})
    with pytest.warns(symscalar.state.watch.PythonSideEffectWarning, match="runs the function's Python once"):
        jitted(torch.ones(2))


def test_no_side_effect_warning_for_reading_containers(recwarn):
    table = {"scale": 2.0}
    sizes = [3]
    jitted = symscalar.jit(lambda x: x * table["scale"] + sizes[0], dynamic_dims={"x": ("B",)})
    for b in (2, 1, 3):
        x = torch.randn(b)
        torch.testing.assert_close(jitted(x), x * 2.0 + 3)
    assert not [w for w in recwarn if issubclass(w.category, symscalar.state.watch.PythonSideEffectWarning)]
