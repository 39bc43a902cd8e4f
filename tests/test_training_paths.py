"""The pieces real training code needs, without models (the models: tests/test_models_hf_training.py).

- ``requires_grad_()`` / ``.requires_grad = ...`` on traced values, with eager autograd's rules;
- submodule forward hooks that only call ``requires_grad_`` traced through, every other refused;
- ``if cond: raise`` / ``assert cond`` / ``torch._assert`` on a traced tensor as runtime checks;
- ``F.ctc_loss`` (torch's kernel and derivative) and ``associative_scan`` (a sequential scan);
- numpy's and Python's global generators refused while tracing.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar

# the module (its package re-exports the function under the module's name)
scan_module = importlib.import_module("torch._higher_order_ops.associative_scan")
# ----------------------------------------------------------------------------------------
# requires_grad_ on traced values


@pytest.mark.parametrize("spelling", ["method", "attribute"])
def test_requires_grad_on_a_computed_value_makes_a_leaf_as_in_eager(spelling: str) -> None:
    w = torch.randn(3, dtype=torch.float64, requires_grad=True)

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x[:, None] * 2  # computed from an input that does not require grad: a leaf
        if spelling == "method":
            assert y.requires_grad_() is y
        else:
            y.requires_grad = True
        facts = torch.tensor([y.requires_grad, y.is_leaf, y.grad_fn is None, y.grad is None])
        return (y * w).sum(), facts

    x = torch.randn(4, dtype=torch.float64)
    (got, got_facts), (expected, expected_facts) = symscalar.jit(f)(x), f(x)
    assert torch.equal(got_facts, expected_facts) and bool(expected_facts.all())
    assert got.requires_grad and expected.requires_grad
    (g_got,) = torch.autograd.grad(got, w)
    (g_expected,) = torch.autograd.grad(expected, w)
    torch.testing.assert_close(g_got, g_expected)


def test_requires_grad_true_on_a_value_that_requires_grad_is_a_no_op() -> None:
    w = torch.randn(3, requires_grad=True)
    f = symscalar.jit(lambda x: (x * w).requires_grad_(True).sum())
    (g,) = torch.autograd.grad(f(torch.ones(3)), w)
    torch.testing.assert_close(g, torch.ones(3))


@pytest.mark.parametrize(
    "body, error, match",
    [  # eager's own errors, word for word
        (lambda x, w: setattr(x * w, "requires_grad", True), RuntimeError, "only change requires_grad flags of leaf"),
        (lambda x, w: (x * w).requires_grad_(False), RuntimeError, "var_no_grad = var.detach"),
        (lambda x, w: (x > 0).requires_grad_(), RuntimeError, "only Tensors of floating point dtype"),
        (lambda x, w: (x * 2).requires_grad_(1), TypeError, "must be bool, not int"),
        (lambda x, w: (x * 2).requires_grad_().add_(1), RuntimeError, "leaf Variable that requires grad"),
    ],
)
def test_requires_grad_errors_are_eagers(body, error, match) -> None:
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    with pytest.raises(error, match=match):
        body(x, w)
    with pytest.raises(error, match=match):
        symscalar.jit(lambda x: body(x, w))(x)


def test_requires_grad_on_an_argument_or_an_output_only_through_a_leaf_is_refused() -> None:
    x = torch.randn(3)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"requires_grad_ on t0 \(f32\[3\], input\)"):
        symscalar.jit(lambda x: x.requires_grad_() * 2)(x)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"requires grad only because.*requires_grad_\(\)"):
        symscalar.jit(lambda x: (x * 2).requires_grad_() * 3)(x)
    f = symscalar.jit(lambda x: (x * 2).requires_grad_(False) + x.requires_grad_(False))  # no-ops: traced
    torch.testing.assert_close(f(x), x * 3)


def test_requires_grad_under_no_grad_matches_eager() -> None:
    w = torch.randn(3, requires_grad=True)

    def f(x: torch.Tensor) -> torch.Tensor:
        return (x * 2).requires_grad_() * w

    with torch.no_grad():
        got, expected = symscalar.jit(f)(torch.ones(3)), f(torch.ones(3))
    assert got.requires_grad is expected.requires_grad is False
    torch.testing.assert_close(got, expected)


# ----------------------------------------------------------------------------------------
# Submodule forward hooks


def _make_inputs_require_grads(module: nn.Module, input: object, output: torch.Tensor) -> None:
    output.requires_grad_(True)


def test_a_hook_that_only_calls_requires_grad_is_traced_through() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2))
    model[0].weight.requires_grad_(False)
    model[0].register_forward_hook(_make_inputs_require_grads)
    ids = torch.tensor([[1, 2, 3]])
    jitted = symscalar.jit(lambda ids: model(ids).sum())
    got, expected = jitted(ids), model(ids).sum()
    torch.testing.assert_close(got, expected)
    grads = torch.autograd.grad(got, list(model[1].parameters()))
    expected_grads = torch.autograd.grad(expected, list(model[1].parameters()))
    for g, e in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(g, e)


def test_other_submodule_hooks_stay_refused() -> None:
    seen: list[object] = []
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    model[0].register_forward_hook(lambda m, i, o: seen.append(o))  # Python state: would run once
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"submodule Linear '0' has a forward hook"):
        symscalar.jit(model)(torch.randn(1, 4))
    assert not seen


# ----------------------------------------------------------------------------------------
# Checks on tensor values


# Compiled from source: pytest rewrites the `assert` statements of test modules into code that
# formats an explanation, where a library's assert is the plain statement.
_VALIDATED = """
def validated(x, labels):
    if labels is not None and labels.max() >= 5:
        raise ValueError(f"labels must be < {5}")
    assert (x > -100).all(), "x too small"
    torch._assert(x.sum() < 1000, "x too large")
    return x * 2
"""
_namespace: dict[str, object] = {"torch": torch}
exec(compile(_VALIDATED, "validated.py", "exec"), _namespace)  # noqa: S102 - a fixed source
_validated: Any = _namespace["validated"]


@pytest.mark.parametrize(
    "args, match",
    [
        ((torch.zeros(3), torch.tensor([7, 1])), r"validated.py:3 failed"),
        ((torch.full((3,), -200.0), torch.tensor([1, 1])), r"validated.py:\d+ failed"),
        ((torch.full((3,), 500.0), torch.tensor([1, 1])), r"^x too large$"),
    ],
)
def test_a_branch_that_only_raises_is_a_runtime_check(args, match) -> None:
    f = symscalar.jit(_validated)
    x, labels = torch.randn(3), torch.tensor([1, 2])
    torch.testing.assert_close(f(x, labels), x * 2)
    with pytest.raises((ValueError, AssertionError)):
        _validated(*args)  # eager raises here
    with pytest.raises(symscalar.CheckFailedError, match=match):
        f(*args)
    assert f.cache_info().misses == 1  # one program: the checks run on every call
    assert sum(e.prim.name == "tensor_check" for e in f.last_trace().eqns) == 3


def test_other_branches_on_tensor_values_stay_refused() -> None:
    def branch(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x
        return -x

    def several(x: torch.Tensor) -> torch.Tensor:
        if x > 0:  # more than one element: not a check (eager raises too)
            raise ValueError
        return x

    with pytest.raises(symscalar.DynamicValueError, match=r"bool\(\) of traced tensor"):
        symscalar.jit(branch)(torch.randn(3))
    with pytest.raises(symscalar.DynamicValueError, match=r"bool\(\) of traced tensor"):
        symscalar.jit(several)(torch.randn(3))
    with pytest.raises(symscalar.DynamicValueError):
        symscalar.jit(lambda x: bool(x.sum() > 0))(torch.randn(3))


# ----------------------------------------------------------------------------------------
# ctc_loss, associative_scan


@pytest.mark.slow  # gradcheck
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_matches_eager_and_gradcheck(reduction: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 2, 4, generator=g, dtype=torch.float64, requires_grad=True)
    targets = torch.tensor([[1, 2, 3], [3, 1, 0]])
    lengths = (torch.tensor([8, 6]), torch.tensor([3, 2]))

    def f(x: torch.Tensor) -> torch.Tensor:
        return F.ctc_loss(x.log_softmax(-1), targets, *lengths, reduction=reduction)

    jitted = symscalar.jit(f)
    got, expected = jitted(x), f(x)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(torch.autograd.grad(got.sum(), x)[0], torch.autograd.grad(expected.sum(), x)[0])
    assert torch.autograd.gradcheck(lambda x: jitted(x), (x,))


def _linear_recurrence(left: tuple[torch.Tensor, ...], right: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    (a_left, b_left), (a_right, b_right) = left, right
    return a_left * a_right, a_right * b_left + b_right


@pytest.mark.parametrize("dim, reverse", [(1, False), (-1, False), (0, True)])
def test_associative_scan_is_traced_as_a_sequential_scan(dim: int, reverse: bool) -> None:
    g = torch.Generator().manual_seed(1)
    a = torch.rand(3, 5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 5, 4, generator=g, dtype=torch.float64, requires_grad=True)

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # called through its module, as transformers' Mamba does: a name bound before tracing is torch's own
        _, states = scan_module.associative_scan(
            _linear_recurrence, (a, b), dim, reverse=reverse, combine_mode="generic"
        )
        return states

    got, expected = symscalar.jit(f)(a, b), f(a, b)
    torch.testing.assert_close(got, expected)
    ct = torch.randn_like(got)
    for gg, ge in zip(torch.autograd.grad(got, (a, b), ct), torch.autograd.grad(expected, (a, b), ct), strict=True):
        torch.testing.assert_close(gg, ge)


# ----------------------------------------------------------------------------------------
# Host random number generators


@pytest.mark.parametrize("draw", [lambda: np.random.rand(), lambda: np.random.choice(4), lambda: random.random()])
def test_numpy_and_python_generators_are_refused_while_tracing(draw) -> None:
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"random\.\w+\(\) inside a traced function.*baked"):
        symscalar.jit(lambda x: x * float(draw()))(torch.ones(2))
    assert 0 <= float(draw()) < 4  # untouched outside a trace


class _BufferThenCheck(torch.nn.Module):
    def __init__(self, check_first: bool) -> None:
        super().__init__()
        self.register_buffer("b", torch.zeros(3))
        self.check_first = check_first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.check_first and x.sum() > 0:
            raise ValueError("positive")
        self.b.add_(1)
        if not self.check_first and x.sum() > 0:
            raise ValueError("positive")
        return x * 2


def test_a_raising_check_after_an_in_place_state_update_is_refused() -> None:
    """When the check fails eager has already updated the buffer; the program writes state back
    only after it ran, so the buffer would fall one update behind eager's for good."""
    with pytest.raises(symscalar.UnsupportedOperationError, match="updated state in place"):
        symscalar.jit(_BufferThenCheck(check_first=False))(-torch.ones(3))
    eager, jitted = _BufferThenCheck(check_first=True), _BufferThenCheck(check_first=True)
    f = symscalar.jit(jitted)
    for x in (-torch.ones(3), torch.ones(3), -torch.ones(3)):
        outcomes = []
        for call in (eager, f):
            try:
                outcomes.append(call(x))
            except (ValueError, symscalar.CheckFailedError):
                outcomes.append(None)
        assert (outcomes[0] is None) == (outcomes[1] is None)
        assert torch.equal(eager.b, jitted.b)
