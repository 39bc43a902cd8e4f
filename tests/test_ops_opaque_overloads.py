"""The op-surface classes the OpInfo sweep found refused, each now equal to eager (values and
gradients) or still refused with its reason: ``torch.ops`` operators as opaque calls, torch
derivatives that exist only for some operands or only on the CPU, ``narrow`` at a tensor
start, and in-place fills of a tensor that requires grad.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar


def _same_values_and_grads(fn: Any, *inputs: torch.Tensor) -> symscalar.jit:
    f = symscalar.jit(fn)
    got, want = f(*inputs), fn(*inputs)
    torch.testing.assert_close(got, want)
    assert got.requires_grad == want.requires_grad
    wrt = [t for t in inputs if t.requires_grad]
    ct = torch.linspace(-1, 1, want.numel(), dtype=want.dtype).reshape(want.shape)
    got_grads = torch.autograd.grad(got, wrt, ct, allow_unused=True)
    want_grads = torch.autograd.grad(want, wrt, ct, allow_unused=True)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            torch.testing.assert_close(g, w)
    return f


def test_torch_ops_overload_and_packet_are_opaque_calls() -> None:
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    f = _same_values_and_grads(lambda x: torch.ops.aten._safe_softmax.default(x, 1), x)
    assert "torch.ops.aten._safe_softmax.default" in str(f.last_trace())
    _same_values_and_grads(lambda x: torch.ops.aten.slice.Tensor(x, 1, 1, 4), x)
    grad = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    out = torch.softmax(x, 1).detach()
    _same_values_and_grads(lambda g: torch.ops.aten._softmax_backward_data(g, out, 1, torch.float64), grad)


def test_torch_ops_refusals_keep_their_reason() -> None:
    with pytest.raises(symscalar.UnsupportedOperationError, match="memory layout"):
        symscalar.jit(lambda x: torch.ops.aten.as_strided.default(x, (2,), (1,)))(torch.ones(3))
    with pytest.raises(symscalar.UnsupportedOperationError, match="writes into one of its operands"):
        symscalar.jit(lambda x: torch.ops.aten.add_.Tensor(x * 1, x))(torch.ones(3))


def test_operand_without_a_derivative_gets_none() -> None:
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    target = torch.randn(4, 6, dtype=torch.float64).sign()
    _same_values_and_grads(lambda x, t: F.soft_margin_loss(x, t), x, target)
    # where that operand requires grad, torch refuses the call, traced or not
    target.requires_grad_(True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        F.soft_margin_loss(x, target)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        symscalar.jit(F.soft_margin_loss)(x, target)


def test_derivative_without_a_meta_kernel() -> None:
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 3])
    _same_values_and_grads(lambda x: torch.index_fill(x, 0, index, -1.5), x)
    target = torch.tensor([1, 0, 3, 2, 2])
    _same_values_and_grads(lambda x: F.multi_margin_loss(x, target), x)


def test_narrow_at_a_tensor_start() -> None:
    x = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    for start in (torch.tensor(2), torch.tensor(-3)):
        f = _same_values_and_grads(lambda x, s: x.narrow(0, s, 3), x, start)
    assert f.cache_info().misses == 1  # the start is read when the program runs
    with pytest.raises(IndexError):
        f(x, torch.tensor(5))  # out of range, as eager's raises
    with pytest.raises(RuntimeError):
        x.narrow(0, torch.tensor(5), 3)

    def update_after(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        y = x * 1
        part = y.narrow(0, s, 2)
        y.add_(1)  # eager's `part` is a view and sees this: refused, not diverged
        return part

    with pytest.raises(symscalar.UnsupportedOperationError):
        symscalar.jit(update_after)(x.detach(), torch.tensor(1))


@pytest.mark.parametrize(
    "fill",
    [lambda y: y.zero_(), lambda y: y.fill_(2.5), lambda y: y.uniform_()],
    ids=["zero_", "fill_", "uniform_"],
)
def test_fill_of_a_tensor_that_requires_grad_stays_on_the_graph(fill: Any) -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        fill(y)
        return y

    x = torch.randn(3, 2, requires_grad=True)
    got, want = symscalar.jit(fn)(x), fn(x)
    assert got.requires_grad and want.requires_grad
    (g,) = torch.autograd.grad(got.sum(), x)
    (w,) = torch.autograd.grad(want.sum(), x)
    torch.testing.assert_close(g, w)  # zeros
