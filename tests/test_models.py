"""Real models, trained side by side: eager and ``symscalar.jit`` from the same weights, over
several optimizer steps. At every step the loss and every parameter's gradient (None-ness
included) and, after the step, every parameter and buffer must agree (float32 to rounding,
float64 tightly), and the jitted step must never retrace.

The models: small random-init versions of nanoGPT and a llama2.c-style GPT (written here,
modeled on the originals), ``nn.TransformerEncoderLayer``, a ResNet-style conv/batch-norm
network (running statistics written back), and — when installed — ``transformers``'
GPT2LMHeadModel, LlamaForCausalLM (grouped-query attention) and BertModel from small configs,
and litgpt's GPT and a grouped-query Block. No downloads.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar

pytestmark = pytest.mark.slow  # trains real models: left out by `make test-fast`

VOCAB, SEQ = 50, 12


# ----------------------------------------------------------------------------------------
# nanoGPT (karpathy/nanoGPT model.py, abridged)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float, flash: bool) -> None:
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout, self.resid_dropout = nn.Dropout(dropout), nn.Dropout(dropout)
        self.n_head, self.n_embd, self.dropout, self.flash = n_head, n_embd, dropout, flash
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class NanoBlock(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float, flash: bool) -> None:
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout, flash)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    def __init__(
        self,
        vocab: int = VOCAB,
        block_size: int = 16,
        n_layer: int = 2,
        n_head: int = 2,
        n_embd: int = 16,
        dropout: float = 0.0,
        flash: bool = True,
    ) -> None:
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(
            dict(  # noqa: C408 - nanoGPT's code as written
                wte=nn.Embedding(vocab, n_embd),
                wpe=nn.Embedding(block_size, n_embd),
                drop=nn.Dropout(dropout),
                h=nn.ModuleList([NanoBlock(n_embd, n_head, block_size, dropout, flash) for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd),
            )
        )
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> Any:
        _, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = (
            F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            if targets is not None
            else None
        )
        return logits, loss


# ----------------------------------------------------------------------------------------
# llama2.c (karpathy/llama2.c model.py, abridged)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    freqs = torch.outer(torch.arange(end, device=freqs.device), freqs).float()
    return torch.cos(freqs), torch.sin(freqs)


def apply_rotary_emb(
    xq: torch.Tensor, xk: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
    xk_r, xk_i = xk.float().reshape(xk.shape[:-1] + (-1, 2)).unbind(-1)
    shape = [1, xq_r.shape[1], 1, xq_r.shape[-1]]
    cos, sin = cos.view(shape), sin.view(shape)
    xq_out = torch.stack([xq_r * cos - xq_i * sin, xq_r * sin + xq_i * cos], dim=-1).flatten(3)
    xk_out = torch.stack([xk_r * cos - xk_i * sin, xk_r * sin + xk_i * cos], dim=-1).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


class LlamaAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, dropout: float) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim, self.dropout = n_heads, n_kv_heads, dim // n_heads, dropout
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, cos, sin)
        rep = self.n_heads // self.n_kv_heads
        xq, xk, xv = xq.transpose(1, 2), repeat_kv(xk, rep).transpose(1, 2), repeat_kv(xv, rep).transpose(1, 2)
        out = F.scaled_dot_product_attention(
            xq, xk, xv, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        return self.resid_dropout(self.wo(out.transpose(1, 2).contiguous().view(bsz, seqlen, -1)))


class LlamaBlock(nn.Module):
    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.attention = LlamaAttention(dim, n_heads, n_kv_heads, dropout)
        self.w1, self.w2, self.w3 = (
            nn.Linear(dim, hidden, bias=False),
            nn.Linear(hidden, dim, bias=False),
            nn.Linear(dim, hidden, bias=False),
        )
        self.attention_norm, self.ffn_norm, self.drop = RMSNorm(dim), RMSNorm(dim), nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x), cos, sin)
        ff = self.ffn_norm(h)
        return h + self.drop(self.w2(F.silu(self.w1(ff)) * self.w3(ff)))


class Llama2c(nn.Module):
    def __init__(
        self,
        vocab: int = VOCAB,
        dim: int = 16,
        n_layers: int = 2,
        n_heads: int = 4,
        n_kv_heads: int = 2,
        max_seq_len: int = 16,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.tok_embeddings, self.dropout = nn.Embedding(vocab, dim), nn.Dropout(dropout)
        self.layers = nn.ModuleList([LlamaBlock(dim, n_heads, n_kv_heads, 32, dropout) for _ in range(n_layers)])
        self.norm, self.output = RMSNorm(dim), nn.Linear(dim, vocab, bias=False)
        self.tok_embeddings.weight = self.output.weight
        cos, sin = precompute_freqs_cis(dim // n_heads, max_seq_len)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        seqlen = tokens.shape[1]
        h = self.dropout(self.tok_embeddings(tokens))
        cos, sin = self.freqs_cos[:seqlen], self.freqs_sin[:seqlen]
        for layer in self.layers:
            h = layer(h, cos, sin)
        logits = self.output(self.norm(h))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


# ----------------------------------------------------------------------------------------
# torch.nn blocks


class EncoderLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, activation="gelu")
        self.head = nn.Linear(16, VOCAB)

    def forward(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1])
        logits = self.head(self.layer(self.emb(ids), src_mask=mask, is_causal=True))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), label_smoothing=0.1)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNetLike(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        self.block = BasicBlock(8, 16, 2)
        self.pool, self.fc = nn.AdaptiveAvgPool2d((1, 1)), nn.Linear(16, 10)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.fc(torch.flatten(self.pool(self.block(self.stem(x))), 1)), targets)


# ----------------------------------------------------------------------------------------
# Installed model libraries

try:
    import transformers as _transformers
except ImportError:  # pragma: no cover - the dev lock installs it
    _transformers = None
try:
    import litgpt as _litgpt
    from litgpt.model import build_rope_cache as _build_rope_cache
except ImportError:  # pragma: no cover
    _litgpt = None

needs_transformers = pytest.mark.skipif(_transformers is None, reason="transformers is not installed")
needs_litgpt = pytest.mark.skipif(_litgpt is None, reason="litgpt is not installed")


def hf_gpt2() -> nn.Module:
    cfg = _transformers.GPT2Config(
        vocab_size=VOCAB,
        n_positions=16,
        n_embd=16,
        n_layer=2,
        n_head=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=0,
        eos_token_id=0,
    )
    return _transformers.GPT2LMHeadModel(cfg)


def hf_llama() -> nn.Module:
    cfg = _transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16,
    )
    return _transformers.LlamaForCausalLM(cfg)


def hf_bert() -> nn.Module:
    cfg = _transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return _transformers.BertModel(cfg)


def litgpt_config() -> Any:
    return _litgpt.Config(
        n_layer=2,
        n_head=4,
        n_query_groups=2,
        n_embd=16,
        block_size=16,
        vocab_size=VOCAB,
        padded_vocab_size=VOCAB,
        rotary_percentage=1.0,
        bias=False,
        norm_class_name="RMSNorm",
        mlp_class_name="LLaMAMLP",
        intermediate_size=32,
    )


class LitGQABlock(nn.Module):
    """litgpt's transformer Block with grouped-query attention (4 heads, 2 key/value groups)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = _litgpt.model.Block(litgpt_config(), block_idx=0)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cos, sin = _build_rope_cache(x.shape[1], n_elem=self.block.config.rope_n_elem)
        logits = self.head(self.block(x, cos.unsqueeze(0), sin.unsqueeze(0)))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


# ----------------------------------------------------------------------------------------
# The harness


def token_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(100 + step)
    ids = torch.randint(0, VOCAB, (2, SEQ + 1), generator=g)
    targets = ids[:, 1:].clone()
    targets[0, :2] = -1  # ignored positions, as nanoGPT/llama2.c mark them
    return ids[:, :-1].clone(), targets


def image_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(200 + step)
    return torch.randn(4, 3, 12, 12, generator=g) * (1 + step), torch.randint(0, 10, (4,), generator=g)


def hidden_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(300 + step)
    return torch.randn(2, SEQ, 16, generator=g), torch.randint(0, VOCAB, (2, SEQ), generator=g)


def hf_lm_loss(model: nn.Module, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return model(input_ids=ids, labels=ids).loss


def bert_loss(model: nn.Module, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    out = model(input_ids=ids, token_type_ids=(ids % 2))
    return out.last_hidden_state.pow(2).mean() + out.pooler_output.sum()


def call_loss(model: nn.Module, *batch: torch.Tensor) -> torch.Tensor:
    out = model(*batch)
    return out[1] if isinstance(out, tuple) else out


def litgpt_loss(model: nn.Module, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = model(ids)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)


MODELS: dict[
    str,
    tuple[Callable[[], nn.Module], Callable[[int], tuple[torch.Tensor, ...]], Callable[..., torch.Tensor], list[Any]],
] = {
    "nanogpt_flash": (lambda: NanoGPT(flash=True), token_batch, call_loss, []),
    "nanogpt_manual": (lambda: NanoGPT(flash=False), token_batch, call_loss, []),
    "llama2c": (Llama2c, token_batch, call_loss, []),
    "transformer_encoder_layer": (EncoderLM, token_batch, lambda m, i, t: m(i, t.clamp(min=0)), []),
    "resnet_block": (ResNetLike, image_batch, call_loss, []),
    "hf_gpt2": (hf_gpt2, token_batch, hf_lm_loss, [needs_transformers]),
    "hf_llama": (hf_llama, token_batch, hf_lm_loss, [needs_transformers]),
    "hf_bert": (hf_bert, token_batch, bert_loss, [needs_transformers]),
    "litgpt_gpt": (lambda: _litgpt.GPT(litgpt_config()), token_batch, litgpt_loss, [needs_litgpt]),
    "litgpt_gqa_block": (LitGQABlock, hidden_batch, call_loss, [needs_litgpt]),
}

TOLERANCE = {torch.float32: {"atol": 2e-5, "rtol": 2e-4}, torch.float64: {"atol": 1e-10, "rtol": 1e-9}}


def train_side_by_side(name: str, dtype: torch.dtype, steps: int = 3) -> None:
    make, batch_of, loss_of, _ = MODELS[name]
    torch.manual_seed(0)
    eager = make().to(dtype).train()
    mine = copy.deepcopy(eager)
    step_fn = symscalar.jit(lambda inputs, targets: loss_of(mine, inputs, targets))
    # SGD with momentum, not Adam: Adam's first step moves a parameter by lr * sign(grad),
    # which turns rounding noise in a gradient that is zero in exact arithmetic (a key bias)
    # into an lr-sized difference
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05, momentum=0.9)
    opt_m = torch.optim.SGD(mine.parameters(), lr=0.05, momentum=0.9)
    tol = TOLERANCE[dtype]
    for step in range(steps):
        batch = tuple(b.to(dtype) if b.is_floating_point() else b for b in batch_of(step))
        loss_e = loss_of(eager, *batch)
        loss_m = step_fn(*batch)
        torch.testing.assert_close(loss_m, loss_e, **tol, msg=f"{name} loss, step {step}")
        backward_and_step_like_eager(name, step, (eager, loss_e, opt_e), (mine, loss_m, opt_m), tol)
    assert step_fn.cache_info().misses == 1, f"{name}: the training step retraced"


def backward_and_step_like_eager(
    name: str, step: int, eager: tuple[Any, Any, Any], mine: tuple[Any, Any, Any], tol: dict[str, float]
) -> None:
    """Backward both losses, compare every gradient (None-ness included), take both optimizer
    steps, then compare every parameter and buffer: one training step side by side."""
    (model_e, loss_e, opt_e), (model_m, loss_m, opt_m) = eager, mine
    loss_e.backward()
    loss_m.backward()
    for (pname, pe), pm in zip(model_e.named_parameters(), model_m.parameters()):
        assert (pe.grad is None) == (pm.grad is None), f"{name}.{pname}: grad None-ness, step {step}"
        if pe.grad is not None:
            torch.testing.assert_close(pm.grad, pe.grad, **tol, msg=f"{name}.{pname} grad, step {step}")
    opt_e.step()
    opt_m.step()
    opt_e.zero_grad()
    opt_m.zero_grad()
    for (sname, se), sm in zip(model_e.state_dict().items(), model_m.state_dict().values()):
        torch.testing.assert_close(sm, se, **tol, msg=f"{name}.{sname} after step {step}")


@pytest.mark.parametrize("name", [pytest.param(n, marks=m[3]) for n, m in MODELS.items()])
def test_model_trains_like_eager_float32(name: str) -> None:
    train_side_by_side(name, torch.float32)


@pytest.mark.parametrize("name", ["nanogpt_manual", "llama2c", "resnet_block"])
def test_model_trains_like_eager_float64(name: str) -> None:
    train_side_by_side(name, torch.float64)


def test_dropout_training_is_random_per_step_and_reproducible() -> None:
    torch.manual_seed(0)
    model = NanoGPT(dropout=0.2)
    step = symscalar.jit(lambda ids, t: model(ids, t)[1])
    ids, targets = token_batch(0)
    torch.manual_seed(5)
    first = [step(ids, targets) for _ in range(2)]
    assert not torch.equal(first[0], first[1])  # a fresh mask each call
    torch.manual_seed(5)
    again = [step(ids, targets) for _ in range(2)]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    model.eval()  # no dropout: eager's value exactly (the module flag is guarded)
    torch.testing.assert_close(step(ids, targets), model(ids, targets)[1])
