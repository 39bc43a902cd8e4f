"""nvFuser lowering of declared dynamic dims: ``-1`` extents and size scalars, one fusion for
every size, checked without a GPU.

Each fusion is built by nvFuser itself (``repr(fd)`` is its definition) and evaluated by the
reference interpreter (``tests/nvfuser_interpreter.py``), outputs and gradients compared with
eager torch at every size; the process-wide fusion cache shows that no size builds a new
fusion (size 1 of a dynamic dim included: it is not a broadcast dim).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import nvfuser_backend as nb
from tests.test_nvfuser_numerics import interpreted_nvfuser

pytestmark = pytest.mark.skipif(not nb.nvfuser_available(), reason="nvfuser_direct does not import")

SIZES = [(1, 1), (2, 7), (3, 4), (1, 5)]


def _attention_mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    B, T, C = x.shape
    h = F.layer_norm(x, (C,)) @ w
    att = torch.softmax(h @ h.transpose(1, 2) * T**-0.5, dim=-1)
    y = (att @ h).reshape(B * T, -1)
    return F.gelu(y).sum(0) / math.sqrt(C) / T


def _check_sweep(fn, declaration, make, sizes, *, grad: bool = True):  # type: ignore[no-untyped-def]
    with interpreted_nvfuser() as observed:
        jitted = symscalar.jit(fn, backend="nvfuser", dynamic_dims=declaration)
        built = []
        for size in sizes:
            args = make(*size)
            out, ref = jitted(*args), fn(*args)
            torch.testing.assert_close(out, ref)
            if grad:
                wrt = [a for a in args if a.requires_grad]
                for g, r in zip(torch.autograd.grad(out.sum(), wrt), torch.autograd.grad(ref.sum(), wrt)):
                    torch.testing.assert_close(g, r)
            built.append(nb.fusion_cache_info().misses)
        assert jitted.cache_info().misses == 1
        assert len(set(built)) == 1, f"fusions built per size: {built}"  # the first size built them all
        assert observed.fusions
    return jitted


@pytest.mark.slow  # forward and backward at four sizes, interpreted
def test_dynamic_dims_are_minus_one_and_sizes_scalar_inputs() -> None:
    w = torch.randn(8, 6, dtype=torch.float64, requires_grad=True)
    jitted = _check_sweep(
        _attention_mlp,
        {"x": ("B", "T")},
        lambda b, t: (torch.randn(b, t, 8, dtype=torch.float64, requires_grad=True), w),
        SIZES,
    )
    plan = jitted._symscalar_state.last_entry().backend.plans[0]
    source = str(plan)
    assert "s_B = t0.shape[0]" in source and "s_B * s_T" in source  # sizes bound, passed to a fusion
    definitions = "\n".join(repr(fd) for fd in jitted.last_fusion())
    assert "shape=[-1, -1, -1]" in definitions  # the declared dims (and every non-1 dim) are symbolic
    assert "define_scalar(None, dtype=DataType.Int)" in definitions  # a size as a fusion input
    for fd in jitted.last_fusion():
        fd.fusion.print_math()  # nvFuser's own IR of the definition builds


@pytest.mark.slow  # forward and backward at four sizes, interpreted
def test_size_like_params_other_than_shapes_run_in_torch() -> None:
    """A slice bound, an arange end and a padding holding a size run as torch steps; the
    elementwise work around them still fuses."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        mask = torch.tril(torch.ones(T, T, dtype=x.dtype))
        pos = torch.arange(T, dtype=x.dtype)
        y = (mask @ x) * pos[:, None] + F.pad(x, (0, 0, 1, 0))[:, :T].exp()
        return y.tanh()

    jitted = _check_sweep(
        fn,
        {"x": ("B", "T")},
        lambda b, t: (torch.randn(b, t, 3, dtype=torch.float64, requires_grad=True),),
        SIZES,
    )
    steps = jitted._symscalar_state.last_entry().backend.plans[0].steps
    torch_steps = [eqn.prim.name for kind, eqn in steps if kind == "torch"]
    assert {"arange", "slice"} <= set(torch_steps), torch_steps  # an end and a bound holding s_T


@pytest.mark.slow  # forward and backward at four sizes, interpreted
def test_slices_with_a_size_bound() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        return (x[:, 1:] * 2).sum(1) + x[:, : T - 1].exp().mean(1)

    jitted = _check_sweep(
        fn,
        {"x": ("B", symscalar.Dim("T", min=2))},
        lambda b, t: (torch.randn(b, t + 1, 3, dtype=torch.float64, requires_grad=True),),
        SIZES,
    )
    steps = [kind for kind, _ in jitted._symscalar_state.last_entry().backend.plans[0].steps]
    assert "torch" in steps and "fusion" in steps


def test_lower_builds_fusions_for_a_symbolic_trace_without_running() -> None:
    jitted = symscalar.jit(_attention_mlp, dynamic_dims={"x": ("B", "T")})
    w = torch.randn(8, 6)
    jitted(torch.randn(2, 3, 8), w)
    trace = jitted.last_trace()
    plan = nb.lower(trace, [torch.randn(1, 9, 8), w])  # another size, the same definitions
    assert plan.fusions and all("-1" in repr(fd) for fd in plan.fusions)


def test_auto_picks_torch_for_dynamic_dims() -> None:
    jitted = symscalar.jit(lambda x: x * 2, dynamic_dims={"x": ("B",)})
    assert jitted._symscalar_state.backend == "torch"


def test_two_dims_equal_under_a_guard_share_one_fusion() -> None:
    """x's B meets y's S (the guard s_B == s_S): both are -1 extents of one fusion at every size."""
    jitted = _check_sweep(
        lambda x, y: torch.tanh(x * y + x) @ y.mT,
        {"x": ("B", None), "y": ("S", None)},
        lambda b, t: (
            torch.randn(b + t, 4, dtype=torch.float64, requires_grad=True),
            torch.randn(b + t, 4, dtype=torch.float64, requires_grad=True),
        ),
        SIZES,
    )
    assert [g.condition() for g in jitted.explain().guards] == ["s_B == s_S"]
