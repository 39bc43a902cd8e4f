"""Shape hazards with dynamic dims: each case equals eager torch at every size with at most one
trace, or is refused with a clear symscalar error at its first call (never a wrong result).

The sizes include 1 for every dynamic dim: size 1 is a value like any other (no broadcasting,
no squeezing, no special program).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import Dim

SIZES = [(1, 1), (2, 5), (3, 1), (1, 6), (4, 8)]
DIMS = {"x": ("B", Dim("T", max=8))}


def _x(b, t):
    return torch.randn(b, t, 3, dtype=torch.float64)


# (name, function of x, grad?) that must match eager with one trace
EQUAL = [
    ("size-1 broadcasting against a static 1", lambda x: x + torch.ones(1, 1, 3, dtype=x.dtype), True),
    ("bias over the static dim", lambda x: x * torch.arange(3.0, dtype=x.dtype), True),
    ("same dim broadcasts with itself", lambda x: x * x[:, :, :1], True),
    ("squeeze of a static dim", lambda x: x[:, :, :1].squeeze(2), True),
    ("diff along T with its first element prepended", lambda x: torch.diff(x, dim=1, prepend=x[:, :1] - 1), True),
    ("diff along the static dim", lambda x: x.diff(dim=-1), True),
    ("unsqueeze then expand to a size symbol", lambda x: x.sum(1).unsqueeze(1).expand(-1, x.shape[1], -1), True),
    ("1/numel in the backward of mean", lambda x: x.mean(), True),
    ("mean over a dynamic dim", lambda x: x.mean(1), True),
    ("reshape with -1", lambda x: x.reshape(-1) * 2, True),
    ("view arithmetic", lambda x: x.view(x.shape[0] * x.shape[1], 3).view(x.shape[0], -1), True),
    ("flatten a dynamic and a static dim", lambda x: x.flatten(1), True),
    ("causal mask from T", lambda x: torch.tril(torch.ones(x.shape[1], x.shape[1], dtype=x.dtype)) @ x, True),
    ("arange(T) is an int64 tensor", lambda x: torch.arange(x.shape[1]) + x.shape[0], False),
    ("positions from arange(T)", lambda x: x * torch.arange(x.shape[1], dtype=x.dtype)[:, None], True),
    ("padding along a dynamic dim", lambda x: F.pad(x, (0, 0, 2, 1)), True),
    ("slice with a size symbol", lambda x: x[:, : x.shape[1] - 1] * 2, True),
    ("slice from 1 and the last element", lambda x: x[:, 1:].sum(1) + x[:, -1], True),
    ("numel as a divisor", lambda x: x.sum() / x.numel(), True),
    ("cat along a dynamic dim", lambda x: torch.cat([x, x * 2], 1), True),
    (
        "cat a static piece onto a dynamic dim",
        lambda x: torch.cat([x, torch.zeros(x.shape[0], 2, 3, dtype=x.dtype)], 1),
        True,
    ),
    ("attention scores [B, T, T]", lambda x: torch.softmax(x @ x.transpose(1, 2), -1) @ x, True),
    ("a size as a runtime scalar", lambda x: x * x.shape[1] + x.shape[0] ** 2, True),
    ("full from sizes", lambda x: x + torch.full((x.shape[0], x.shape[1], 1), 0.5, dtype=x.dtype), True),
    ("layer_norm over the static dim", lambda x: F.layer_norm(x, (3,)), True),
    ("masked_fill with a mask from T", lambda x: x.masked_fill(torch.arange(x.shape[1])[None, :, None] > 0, 0.0), True),
    ("permute dynamic dims", lambda x: x.permute(2, 1, 0).contiguous() * 2, True),
]


@pytest.mark.parametrize("name, fn, with_grad", EQUAL, ids=[n for n, _, _ in EQUAL])
def test_equal_to_eager_with_one_trace(name, fn, with_grad):
    jf = symscalar.jit(fn, dynamic_dims=DIMS)
    for B, T in SIZES:
        x = _x(B, T)
        if with_grad:
            x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
            y1, y2 = jf(x1), fn(x2)
            torch.testing.assert_close(y1, y2)
            ct = torch.randn_like(y2)
            torch.testing.assert_close(*(torch.autograd.grad(y, xi, ct)[0] for y, xi in ((y1, x1), (y2, x2))))
        else:
            torch.testing.assert_close(jf(x), fn(x))
    assert jf.cache_info().misses == 1, name


# A dynamic dim meeting another size never broadcasts: equal to a dynamic dim under a size
# guard (s_B == s_T), pinned by a static size (refused), and where eager raises (the sizes
# differ, neither is 1) the call raises eager's error.
MEETS = [
    ("a dynamic dim meets a static size", lambda x: x + torch.ones(1, 5, 1, dtype=x.dtype), 0),
    ("two different dynamic dims meet", lambda x: x[:, :, 0] * x[:, :, 0].T, 1),
    ("matmul of two different dynamic dims", lambda x: x[:, :, 0] @ x[:, :, 0], 1),
]


@pytest.mark.parametrize("name, fn, programs", MEETS, ids=[n for n, _, _ in MEETS])
def test_meeting_sizes_are_guarded_or_raise_as_eager(name, fn, programs):
    jf = symscalar.jit(fn, dynamic_dims=DIMS)
    for B, T in [*SIZES, (5, 5), (2, 2)]:
        x = _x(B, T)
        try:
            expected = fn(x)
        except RuntimeError:
            with pytest.raises(RuntimeError) as raised:
                jf(x)
            assert not isinstance(raised.value, symscalar.SymscalarError)
            continue
        try:
            got = jf(x)
        except symscalar.DynamicValueError as e:  # eager broadcasts a size 1, or meets a static 5
            assert "pins the declared dim" in str(e)
            continue
        torch.testing.assert_close(got, expected)
        assert B == T
    assert jf.cache_info().misses == programs  # every B == T call: one program, guard s_B == s_T
    assert [g.condition() for g in jf.explain().guards] == ["s_B == s_T"] * programs


# (name, function, message fragment): eager's result depends on a size in a way the program
# cannot guard without pinning a dim to one value, so the call is refused (a squeeze of a
# dynamic dim, a branch on a size: guarded, tests/test_size_guards.py)
REFUSED = [
    ("split count along a dynamic dim", lambda x: x.split(2, 1)[0], "number of pieces"),
    ("chunk count along a dynamic dim", lambda x: x.chunk(2, 1)[0], "number of pieces"),
    ("unbind along a dynamic dim", lambda x: x.unbind(1)[0], "number of pieces"),
    ("a view the element count does not prove", lambda x: x.view(x.shape[0], 2, -1), "does not provably hold"),
    ("a static slice bound past a dynamic size", lambda x: x[:, :2], "ranges declared do not decide"),
    ("a dim parameter from a size", lambda x: x.sum(x.shape[1] - 1), "structure stays static"),
]


@pytest.mark.parametrize("name, fn, match", REFUSED, ids=[n for n, _, _ in REFUSED])
def test_refused_clearly(name, fn, match):
    jf = symscalar.jit(fn, dynamic_dims=DIMS)
    with pytest.raises(symscalar.SymscalarError, match=match):
        jf(_x(2, 3))
    assert jf.cache_info().entries == 0


def test_refused_also_at_size_1():
    """At size 1 a squeeze of a dynamic dim would pin it (at other sizes it is a guard, see
    tests/test_size_guards.py): refused."""
    jf = symscalar.jit(lambda x: x.squeeze(), dynamic_dims=DIMS)
    with pytest.raises(symscalar.SymscalarError, match="squeeze"):
        jf(_x(1, 1))


def test_declared_min_decides_squeeze():
    fn = lambda x: x.squeeze()  # noqa: E731
    jf = symscalar.jit(fn, dynamic_dims={"x": (Dim("B", min=2), None)})
    for B in (2, 5):
        x = torch.randn(B, 1, 3)
        torch.testing.assert_close(jf(x), fn(x))
    assert jf.cache_info().misses == 1
