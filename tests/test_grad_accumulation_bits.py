"""Gradient accumulation order, bit for bit against eager's autograd engine.

A value used three times or more gets its contributions added in some order, and IEEE addition
is not associative: eager's engine runs nodes by decreasing sequence number (reverse creation
order) and adds each contribution to the input's buffer as it arrives. symscalar's backward visits
equations in reverse and adds as it goes, the same order, as long as one equation adds one use.
An opaque torch call (cosine_similarity, pairwise_distance) is one equation but several eager
nodes: its uses must be added one by one onto what later ops gave (``SEEDED_VJPS``).
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

import symscalar

DTYPES = (torch.float32, torch.bfloat16)

BRANCHES = {
    "exp": lambda x: torch.exp(x) * 0.7,
    "deep": lambda x: torch.sin(torch.tanh(x * 1.1) * 1.3),
    "scale": lambda x: x * 0.3,
    "square": lambda x: x * x,
    "rowsum": lambda x: torch.sigmoid(x).sum(-1, keepdim=True) * x,
    "cosine": lambda x: F.cosine_similarity(x, x.flip(0), dim=-1).unsqueeze(-1) * 1.7,
    "distance": lambda x: F.pairwise_distance(x, x * 0.5).unsqueeze(-1),
}


def _grads(fn, inputs, weight):
    out = fn(*inputs)
    return torch.autograd.grad((out * weight).sum(), inputs)


def _assert_same_grads(fn, *shapes, dtype, seed=0):
    torch.manual_seed(seed)
    inputs = [torch.randn(s, dtype=dtype, requires_grad=True) for s in shapes]
    weight = torch.randn(fn(*inputs).shape, dtype=dtype)
    expected = _grads(fn, inputs, weight)
    got = _grads(symscalar.jit(fn), inputs, weight)
    for i, (e, g) in enumerate(zip(expected, got)):
        assert torch.equal(e, g), f"gradient {i}: max diff {(e.float() - g.float()).abs().max().item()}"


USES = [names for n in (3, 4, 5) for names in itertools.permutations(BRANCHES, n)][::97]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("names", USES, ids="-".join)
def test_uses_in_branches_of_different_depths(names, dtype):
    def f(x):
        return sum(BRANCHES[name](x) for name in names)

    _assert_same_grads(f, (6, 33), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cosine_similarity_then_pairwise_distance(dtype):
    # the brief's case: cosine_similarity's uses of x and y come first, pairwise_distance's last
    def f(x, y):
        return F.cosine_similarity(x, y) + F.pairwise_distance(x, y)

    _assert_same_grads(f, (5, 17), (5, 17), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_opaque_call_between_other_uses(dtype):
    def f(x, y):
        a = x * 1.3
        c = F.cosine_similarity(x, y, dim=-1).unsqueeze(-1)
        return a + c * torch.exp(x) + F.pairwise_distance(y, x).unsqueeze(-1) * x

    _assert_same_grads(f, (7, 19), (7, 19), dtype=dtype)


class _Attention(torch.nn.Module):
    """A pre-norm self-attention block: x feeds q, k, v and the residual."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.heads = heads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        h = self.norm(x)

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, self.heads, d // self.heads).transpose(1, 2)

        a = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)), split(self.v(h)), is_causal=True)
        return x + self.o(a.transpose(1, 2).reshape(b, n, d)) + F.cosine_similarity(x, h, dim=-1).unsqueeze(-1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_block_with_shared_input(dtype):
    torch.manual_seed(0)
    model = _Attention().to(dtype)
    x = torch.randn(2, 8, 16, dtype=dtype, requires_grad=True)
    params = [x, *model.parameters()]
    expected = torch.autograd.grad(model(x).pow(2).sum(), params)
    got = torch.autograd.grad(symscalar.jit(model)(x).pow(2).sum(), params)
    for i, (e, g) in enumerate(zip(expected, got)):
        assert torch.equal(e, g), f"gradient {i}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_shared_across_layers(dtype):
    torch.manual_seed(0)
    layer = torch.nn.Linear(12, 12).to(dtype)

    def f(x):
        h = x
        for _ in range(4):  # the weight and bias are used four times
            h = torch.tanh(layer(h)) + h
        return h

    x = torch.randn(3, 12, dtype=dtype, requires_grad=True)
    params = [x, *layer.parameters()]
    expected = torch.autograd.grad(f(x).sum(), params)
    got = torch.autograd.grad(symscalar.jit(f)(x).sum(), params)
    for i, (e, g) in enumerate(zip(expected, got)):
        assert torch.equal(e, g), f"gradient {i}"


def test_tied_embeddings_tiny_gpt2():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_embd=32, n_layer=2, n_head=2, n_positions=16, vocab_size=50)
    config.attn_implementation = "sdpa"
    model = transformers.GPT2LMHeadModel(config).eval()
    assert model.lm_head.weight is model.transformer.wte.weight
    ids = torch.randint(0, 50, (2, 9))

    def loss_grads(fn):
        model.zero_grad(set_to_none=True)
        fn(input_ids=ids, labels=ids).loss.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters()}

    expected = loss_grads(model)
    got = loss_grads(symscalar.jit(model))
    differ = [n for n in expected if not torch.equal(expected[n], got[n])]
    assert not differ, f"{len(differ)} parameter gradients differ: {differ[:5]}"


def test_seeded_opaque_gradient_is_differentiable():
    # the seed is a cotangent operand of the opaque vjp: a double backward differentiates it too
    def f(x, y):
        return F.cosine_similarity(x, y) + F.pairwise_distance(x, y) + (x * y).sum(-1)

    torch.manual_seed(0)
    x, y = (torch.randn(5, 7, dtype=torch.float64, requires_grad=True) for _ in range(2))
    assert torch.autograd.gradgradcheck(symscalar.jit(f), (x, y))
