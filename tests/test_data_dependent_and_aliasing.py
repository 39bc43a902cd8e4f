"""Refusals and in-place rules that real models reach, on plain functions: ops whose output
shape depends on tensor data are refused by name with the fix; in-place updates of computed
values are functionalized, or refused where eager would alias; and
``torch.compiler.is_compiling()`` is True while symscalar traces (transformers reads it to
decide how to build masks), in the tracing thread only, and restored afterwards.

The real models that reach these paths train side by side with eager in
tests/test_models_masks.py (marked slow)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar

# ----------------------------------------------------------------------------------------
# torch.compiler.is_compiling() while tracing


def test_is_compiling_is_true_only_inside_the_trace_and_only_in_its_thread() -> None:
    seen: dict[str, bool] = {}
    tracing_started, other_checked = threading.Event(), threading.Event()

    def other_thread() -> None:
        tracing_started.wait(timeout=30)
        seen["other thread, during the trace"] = torch.compiler.is_compiling()
        other_checked.set()

    def f(x: torch.Tensor) -> torch.Tensor:
        seen["inside the trace"] = torch.compiler.is_compiling()
        tracing_started.set()
        other_checked.wait(timeout=30)
        return x * 2

    original = torch.compiler.is_compiling
    thread = threading.Thread(target=other_thread)
    thread.start()
    symscalar.jit(f)(torch.ones(2))
    thread.join()
    assert seen == {"inside the trace": True, "other thread, during the trace": False}
    assert torch.compiler.is_compiling is original and not torch.compiler.is_compiling()
    assert not torch.compiler.is_exporting()


def test_is_compiling_is_restored_when_tracing_fails() -> None:
    original = torch.compiler.is_compiling

    def f(x: torch.Tensor) -> torch.Tensor:
        return x.nonzero()

    with pytest.raises(symscalar.UnsupportedOperationError):
        symscalar.jit(f)(torch.ones(2))
    assert torch.compiler.is_compiling is original


# ----------------------------------------------------------------------------------------
# Ops whose output shape depends on tensor data: refused by name, with the fix


DATA_DEPENDENT: dict[str, Callable[[torch.Tensor], Any]] = {
    "torch.nonzero": lambda x: torch.nonzero(x > 0),
    "torch.Tensor.nonzero": lambda x: (x > 0).nonzero(as_tuple=True)[0],
    "torch.argwhere": lambda x: torch.argwhere(x),
    r"torch.where\(condition\)": lambda x: torch.where(x > 0)[0],
    "torch.masked_select": lambda x: torch.masked_select(x, x > 0),
    "torch.Tensor.masked_select": lambda x: x.masked_select(x > 0),
    "unique": lambda x: torch.unique(x),
    "torch.Tensor.unique_consecutive": lambda x: x.unique_consecutive(),
    "torch.bincount": lambda x: torch.bincount((x > 0).long().flatten()),
}


@pytest.mark.parametrize("name", list(DATA_DEPENDENT))
def test_data_dependent_shapes_are_refused_by_name(name: str) -> None:
    x = torch.randn(2, 3)
    DATA_DEPENDENT[name](x)  # eager runs it
    with pytest.raises(symscalar.UnsupportedOperationError, match=rf"(?s){name}.*shape depends on.*torch.where"):
        symscalar.jit(DATA_DEPENDENT[name])(x)


# ----------------------------------------------------------------------------------------
# In-place updates of computed values: functionalized, or refused where eager would alias


def test_inplace_after_a_read_matches_eager_values_and_grads() -> None:
    """The MoE router's ``top /= top.sum(-1, keepdim=True)``, over several calls."""

    def router(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        top, index = torch.topk(torch.softmax(logits, -1), 2, dim=-1)
        total = top.sum(-1, keepdim=True)
        top /= total
        top.mul_(2.0)
        return top, index

    f = symscalar.jit(router)
    for step in range(3):
        base = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(step))
        a, b = base.clone().requires_grad_(), base.clone().requires_grad_()
        (top_e, idx_e), (top_m, idx_m) = router(a), f(b)
        torch.testing.assert_close(top_m, top_e)
        assert torch.equal(idx_m, idx_e)
        cot = torch.randn_like(top_e)
        (ga,), (gb,) = torch.autograd.grad(top_e, a, cot), torch.autograd.grad(top_m, b, cot)
        torch.testing.assert_close(gb, ga)
    assert f.cache_info().misses == 1
    torch.autograd.gradcheck(f, torch.randn(3, 4, dtype=torch.float64, requires_grad=True))


ALIASING: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "index": lambda x: x[0],
    "slice": lambda x: x[:, 1:],
    "view": lambda x: x.view(6),
    "reshape": lambda x: x.reshape(6),
    "flatten": lambda x: x.flatten(),
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x.squeeze(),
    "expand": lambda x: x[:1].expand(2, 3),
    "to": lambda x: x.to(torch.float32),
    "float": lambda x: x.float(),
    "type_as": lambda x: x.type_as(x),
    "contiguous": lambda x: x.contiguous(),
    "detach": lambda x: x.detach(),
    "split": lambda x: x.split(1)[0],
    "chunk": lambda x: x.chunk(2, 1)[0],
    "unbind": lambda x: x.unbind(0)[1],
    "narrow": lambda x: x.narrow(1, 0, 2),
    "select": lambda x: x.select(1, 1),
    "ellipsis": lambda x: x[...],
    "none": lambda x: x[None],
    "view_as": lambda x: x.view_as(x),
    "permute": lambda x: x.permute(1, 0),
    "real": lambda x: x.real,
    "same": lambda x: x,
    "clone": lambda x: x.clone(),
    "mul": lambda x: x * 1,
    "roundtrip": lambda x: x.double().float(),
    # eager returns the input itself (dropout with p == 0 or not training) or a copy (pad)
    "dropout_p0": lambda x: F.dropout(x, 0.0, training=True),
    "dropout_eval": lambda x: F.dropout(x, 0.5, False),
    "identity": lambda x: nn.Identity()(x),
    "pad_nothing": lambda x: F.pad(x, (0, 0)),
    "pad_crop": lambda x: F.pad(x, (-1, 0)),
    "pad": lambda x: F.pad(x, (1, 0)),
}


def _update_the_view(view: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., Any]:
    def f(a: torch.Tensor) -> Any:
        x = a * 2
        v = view(x)
        s = x.sum()
        v.add_(1)
        return x, v, s

    return f


def _update_the_base(view: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., Any]:
    def f(a: torch.Tensor) -> Any:
        x = a * 2
        v = view(x)
        x.mul_(3)
        return x, v

    return f


@pytest.mark.parametrize("make", [_update_the_view, _update_the_base])
@pytest.mark.parametrize("name", list(ALIASING))
def test_inplace_through_an_alias_is_eager_or_refused(name: str, make: Any) -> None:
    f = make(ALIASING[name])
    a = torch.arange(6.0).reshape(2, 3)
    try:
        expected = f(a)
    except RuntimeError:  # eager refuses (an in-place op on an expanded view)
        with pytest.raises((RuntimeError, symscalar.UnsupportedOperationError)):
            symscalar.jit(f)(a)
        return
    try:
        got = symscalar.jit(f)(a)
    except symscalar.UnsupportedOperationError as e:
        assert "in-place" in str(e)
        return
    for g, e in zip(got, expected, strict=True):
        assert torch.equal(g, e)
