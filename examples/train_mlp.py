"""Train a small MLP with layer_norm using symscalar: one trace and one backward trace for all
steps, although the learning rate (a cosine schedule) and layer_norm's eps are new dynamic
values at every step."""

import math

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat

torch.manual_seed(0)
IN, HIDDEN, OUT, N, STEPS = 8, 32, 1, 256, 150


def loss_fn(w1, b1, gamma, beta, w2, b2, x, y, eps: DynamicFloat):
    h = F.layer_norm(F.linear(x, w1, b1), (HIDDEN,), gamma, beta, eps=eps)
    pred = F.linear(torch.tanh(h), w2, b2)
    return ((pred - y) ** 2).mean()


def sgd(params, grads, lr: DynamicFloat):
    return [p - lr * g for p, g in zip(params, grads)]


loss_and_grads = symscalar.value_and_grad(loss_fn, argnums=(0, 1, 2, 3, 4, 5))
update = symscalar.jit(sgd)

x = torch.randn(N, IN)
y = torch.sin(x @ torch.randn(IN, OUT)) + 0.1 * torch.randn(N, OUT)
params = [
    torch.randn(HIDDEN, IN) / math.sqrt(IN),
    torch.zeros(HIDDEN),
    torch.ones(HIDDEN),
    torch.zeros(HIDDEN),
    torch.randn(OUT, HIDDEN) / math.sqrt(HIDDEN),
    torch.zeros(OUT),
]

losses = []
for step in range(STEPS):
    lr = 0.02 + 0.18 * (1 + math.cos(math.pi * step / STEPS)) / 2  # cosine schedule
    eps = 1e-5 * (1 + step % 3)  # a changing dynamic eps, to show it never retraces
    loss, grads = loss_and_grads(*params, x, y, eps)
    params = update(params, list(grads), lr)
    losses.append(loss.item())

print(f"loss: step 0 {losses[0]:.4f} -> step {STEPS - 1} {losses[-1]:.4f}")
print("loss+grad traces:", loss_and_grads.cache_info(), "| update traces:", update.cache_info())
assert losses[-1] < 0.5 * losses[0], "training did not reduce the loss"
assert loss_and_grads.cache_info().misses == 1 and update.cache_info().misses == 1
backward = loss_and_grads.last_backward_trace()
print(
    f"backward trace: {len(backward.eqns)} equations, inputs:",
    ", ".join(v.type_str() for v in backward.inputs[:4]),
    "...",
)
