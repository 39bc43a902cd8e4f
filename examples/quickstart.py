"""symscalar in one screen: static vs dynamic scalars, caching, errors that explain, grads."""

import torch

import symscalar
from symscalar import DynamicFloat, DynamicInt, StaticInt


@symscalar.jit
def scaled_sum(x: torch.Tensor, scale: DynamicFloat, dim: StaticInt) -> torch.Tensor:
    return torch.exp(torch.sum(x * scale, dim) + 1)


x = torch.randn(8, 8)
for scale in (0.5, 1.5, -2.0):  # a new dynamic value is a cache hit, never a retrace
    out = scaled_sum(x, scale, 0)
    assert torch.allclose(out, torch.exp(torch.sum(x * scale, 0) + 1))
scaled_sum(x, 0.5, 1)  # a new static value is a new program
print("cache:", scaled_sum.cache_info())
print("trace of the last call (runnable Python):")
print(scaled_sum.last_trace())


@symscalar.jit
def bad(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.sum(x, n)  # a dynamic value where a constant is required


try:
    bad(x, 1)
except symscalar.StaticValueRequiredError as e:
    print("StaticValueRequiredError:", str(e).splitlines()[0])


@symscalar.jit
def branchy(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    if n > 0:  # Python control flow on a dynamic value
        return x
    return -x


try:
    branchy(x, 1)
except symscalar.DynamicValueError as e:
    print("DynamicValueError:", str(e).splitlines()[0])

# Gradients flow through torch.autograd; the dynamic scale is an input of the backward too.
w = torch.randn(8, 8, requires_grad=True)
for scale in (0.5, 2.0):
    w.grad = None
    scaled_sum(w, scale, 0).sum().backward()
    ref = torch.autograd.grad(torch.exp(torch.sum(w * scale, 0) + 1).sum(), w)[0]
    assert torch.allclose(w.grad, ref)
print("backward trace:")
print(scaled_sum.last_backward_trace())
print("cache after the grad calls:", scaled_sum.cache_info())
