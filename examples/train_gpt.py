"""Train a small GPT on characters of Python's own standard library, eagerly and with
symscalar side by side, from the same initial weights and the same seed.

What runs jitted: the loss (token ids in, cross-entropy out; dropout on, its masks drawn from
the program's RNG seed, fresh at every step) and the optimizer update (gradient clipping and
AdamW, with the cosine-scheduled learning rate and Adam's bias corrections as DynamicFloats,
the parameters and moments updated in place and written back). Each is traced once for the
whole run. Eager uses torch.optim.AdamW and clip_grad_norm_. The dropout masks of the two runs
differ (symscalar's stream is not eager's), so the losses track each other statistically, not
bit for bit. ``SYMSCALAR_EXAMPLE_STEPS`` sets the number of steps (default 300).
"""

import copy
import inspect
import math
import os
import textwrap
import time

import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar import DynamicFloat

STEPS = int(os.environ.get("SYMSCALAR_EXAMPLE_STEPS", "300"))
BLOCK, BATCH, EMBD, HEADS, LAYERS, DROPOUT = 32, 16, 48, 4, 2, 0.1
LR, MIN_LR, WARMUP, CLIP, BETAS, EPS, WD = 3e-3, 3e-4, 20, 1.0, (0.9, 0.95), 1e-8, 0.1

# ---- the corpus: the source of a few standard-library modules, as characters
text = "".join(inspect.getsource(m) for m in (textwrap, inspect, copy))
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
split = int(0.9 * len(data))
train_data, val_data = data[:split], data[split:]


def batch(source: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    starts = torch.randint(len(source) - BLOCK - 1, (BATCH,), generator=generator)
    x = torch.stack([source[s : s + BLOCK] for s in starts])
    y = torch.stack([source[s + 1 : s + BLOCK + 1] for s in starts])
    return x, y


# ---- the model: nanoGPT in brief
class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(EMBD), nn.LayerNorm(EMBD)
        self.qkv, self.proj = nn.Linear(EMBD, 3 * EMBD), nn.Linear(EMBD, EMBD)
        self.mlp = nn.Sequential(nn.Linear(EMBD, 4 * EMBD), nn.GELU(), nn.Linear(4 * EMBD, EMBD), nn.Dropout(DROPOUT))
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=DROPOUT if self.training else 0.0, is_causal=True)
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(B, T, C)))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, EMBD), nn.Embedding(BLOCK, EMBD)
        self.drop = nn.Dropout(DROPOUT)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f, self.head = nn.LayerNorm(EMBD), nn.Linear(EMBD, vocab, bias=False)
        self.wte.weight = self.head.weight

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.wte(idx) + self.wpe(torch.arange(idx.shape[1])))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def learning_rate(step: int) -> float:
    """Linear warmup, then a cosine decay to MIN_LR."""
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, STEPS - WARMUP)
    return MIN_LR + 0.5 * (LR - MIN_LR) * (1 + math.cos(math.pi * progress))


torch.manual_seed(0)
eager_model = GPT(len(chars))
jit_model = copy.deepcopy(eager_model)

# ---- eager: torch.optim.AdamW and clip_grad_norm_
eager_opt = torch.optim.AdamW(eager_model.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)

# ---- symscalar: the loss, and the update (clipping + AdamW) as one jitted function each
loss_fn = symscalar.jit(lambda x, y: jit_model(x, y))
params = list(jit_model.parameters())
exp_avg = [torch.zeros_like(p) for p in params]
exp_avg_sq = [torch.zeros_like(p) for p in params]


def clip_and_adamw(
    grads: list[torch.Tensor], lr: DynamicFloat, bias1: DynamicFloat, bias2: DynamicFloat
) -> torch.Tensor:
    """Clip the global gradient norm to CLIP, then AdamW (torch.optim.AdamW's formula). The
    parameters and moments are updated in place: symscalar writes them back after each call."""
    norm = torch.sqrt(sum((g * g).sum() for g in grads))
    scale = torch.clamp(CLIP / (norm + 1e-6), max=1.0)
    for p, g, m, v in zip(params, grads, exp_avg, exp_avg_sq):
        g = g * scale
        m.lerp_(g, 1 - BETAS[0])
        v.mul_(BETAS[1]).addcmul_(g, g, value=1 - BETAS[1])
        p.mul_(1 - lr * WD)
        p.sub_(m / ((v / bias2).sqrt() + EPS) * (lr / bias1))
    return norm


update = symscalar.jit(clip_and_adamw)

print(
    f"corpus: {len(text)} characters of Python's standard library, vocabulary {len(chars)}; "
    f"{sum(p.numel() for p in params)} parameters; {STEPS} steps"
)
print(f"{'step':>5} {'lr':>9} {'eager loss':>11} {'symscalar loss':>15}")
eager_losses, jit_losses, eager_time, jit_time = [], [], 0.0, 0.0
data_gen = torch.Generator().manual_seed(1)
for step in range(STEPS):
    x, y = batch(train_data, data_gen)
    lr = learning_rate(step)

    torch.manual_seed(1000 + step)  # the same seed for both runs' dropout
    start = time.perf_counter()
    loss = eager_model(x, y)
    eager_opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(eager_model.parameters(), CLIP)
    for group in eager_opt.param_groups:
        group["lr"] = lr
    eager_opt.step()
    eager_time += time.perf_counter() - start
    eager_losses.append(loss.item())

    torch.manual_seed(1000 + step)
    start = time.perf_counter()
    loss = loss_fn(x, y)
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():  # an optimizer step writes leaf parameters: outside autograd
        update(list(grads), lr, 1 - BETAS[0] ** (step + 1), math.sqrt(1 - BETAS[1] ** (step + 1)))
    jit_time += time.perf_counter() - start
    jit_losses.append(loss.item())

    if step % max(1, STEPS // 10) == 0 or step == STEPS - 1:
        print(f"{step:>5} {lr:>9.2e} {eager_losses[-1]:>11.4f} {jit_losses[-1]:>15.4f}")

print(
    f"step time: eager {1e3 * eager_time / STEPS:.2f} ms, symscalar {1e3 * jit_time / STEPS:.2f} ms "
    f"(first call included)"
)
print(f"traces: loss {loss_fn.cache_info()}, update {update.cache_info()}")
assert loss_fn.cache_info().misses == 1 and update.cache_info().misses == 1, "a step retraced"

# The runs track each other: the same start, and averaged over the last tenth of the run the
# losses agree within 5% (their dropout masks differ, so single steps do not).
window = max(1, STEPS // 10)
eager_end, jit_end = sum(eager_losses[-window:]) / window, sum(jit_losses[-window:]) / window
print(f"mean loss over the last {window} steps: eager {eager_end:.4f}, symscalar {jit_end:.4f}")
assert abs(eager_losses[0] - jit_losses[0]) < 0.05 * eager_losses[0]
assert abs(eager_end - jit_end) < 0.05 * eager_end, (eager_end, jit_end)
assert jit_end < jit_losses[0] - 0.5, "the model did not learn"
