"""Ambient state in the key: ``module.training`` of every module the trace read, grad mode
(``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``), the default dtype and
active torch function modes. Each flip gives eager's result, values and gradients."""

from __future__ import annotations

import pytest
import torch
from state_support import Twin, assert_same, default_dtype, inputs
from torch import nn

import symscalar

DTYPES = [torch.float32, torch.float64]


class Branchy(nn.Module):
    """Branches on its own flag and on a child's, without randomness."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.child = nn.Sequential(nn.Linear(3, 3), nn.Tanh())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.child(x)
        h = h * self.w if self.training else h + self.w
        return h * 2 if self.child[0].training else h.exp()


@pytest.mark.parametrize("dtype", DTYPES)
def test_train_eval_switching(dtype):
    twin = Twin(Branchy, dtype)
    x = inputs(4, 3, dtype=dtype)
    for flip in (None, "eval", "train", "child-eval", "train", "eval"):
        if flip == "eval":
            twin.both(lambda m: m.eval())
        elif flip == "train":
            twin.both(lambda m: m.train())
        elif flip == "child-eval":
            twin.both(lambda m: m.child.eval())
        twin.call(x)
        twin.step()
    assert twin.jitted.cache_info().misses == 3  # train, eval, child in eval


def test_a_function_closing_over_a_module_keys_its_training_flag():
    model = Branchy()
    f = symscalar.jit(lambda x: model(x).sum())
    x = inputs(4, 3)
    for training in (True, False, True):
        model.train(training)
        assert_same(f(x), model(x).sum())


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_modes(dtype):
    twin = Twin(Branchy, dtype)
    x = inputs(4, 3, dtype=dtype, requires_grad=True)
    modes = [
        torch.no_grad,
        torch.enable_grad,
        torch.inference_mode,
        lambda: torch.set_grad_enabled(False),
        lambda: torch.set_grad_enabled(True),
    ]
    for mode in modes + modes[::-1]:
        twin.call(x, mode=mode)
        twin.step()


def test_output_requires_grad_follows_grad_mode_of_the_call():
    f = symscalar.jit(lambda x: (x * 2).sum())
    x = inputs(3, requires_grad=True)
    with torch.no_grad():
        assert not f(x).requires_grad
    assert f(x).requires_grad
    with torch.inference_mode():
        y = f(x)
        assert torch.is_inference(y) and not y.requires_grad
    with torch.no_grad():
        assert not torch.is_inference(f(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_dtype(dtype):
    def fn(x):
        return x.sum() + torch.arange(3).sum() * 0 + torch.ones(3) * 0.5 + torch.tensor(1.5)

    f = symscalar.jit(fn)
    x = inputs(3, dtype=torch.float32)
    for d in (dtype, torch.float32, torch.float64, dtype):
        with default_dtype(d):
            assert_same(f(x), fn(x))


def test_a_torch_function_mode_is_keyed():
    f = symscalar.jit(lambda x: x + torch.zeros(3))
    x = inputs(3)
    f(x)
    with torch.device("cpu"):
        assert_same(f(x), x + torch.zeros(3))
    assert f.cache_info().misses == 2
    f(x)
    assert f.cache_info().misses == 2
