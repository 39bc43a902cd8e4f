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
