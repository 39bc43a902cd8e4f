"""A litgpt decode loop with its KV cache (``model.set_kv_cache``, ``input_pos``) under
``symscalar.jit``: greedy tokens equal to eager's, with at most two programs.

litgpt's ``KVCache`` writes the new keys and values into its buffers in place
(``self.k[:bs, ...].index_copy_(-2, input_pos, k)``): functionalized as a ``scatter`` whose
result is written back into the buffers after every call, as batch norm's running statistics
are. With static shapes the prompt length and the single-token step are two programs; with the
length declared dynamic (``idx`` dim 1 and ``input_pos`` dim 0, one name) prefill and decode of
any prompt length are one.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

import symscalar
from symscalar import Dim

litgpt = pytest.importorskip("litgpt")

pytestmark = pytest.mark.slow  # imports litgpt (and lightning): seconds

_MAX_SEQ = 32


def _model() -> Any:
    torch.manual_seed(0)
    config = litgpt.Config(
        block_size=64,
        vocab_size=64,
        padded_vocab_size=64,
        n_layer=2,
        n_head=4,
        n_embd=32,
        n_query_groups=2,  # grouped-query attention
        rotary_percentage=1.0,
        parallel_residual=False,
        bias=False,
        norm_class_name="RMSNorm",
        mlp_class_name="LLaMAMLP",
        intermediate_size=64,
    )
    return litgpt.GPT(config).eval()


def _greedy(forward: Any, prompt: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """litgpt's decode loop: prefill at positions 0..T-1, then one token per step."""
    length = prompt.shape[1]
    logits = forward(prompt, input_pos=torch.arange(length))
    token = logits[:, -1].argmax(-1, keepdim=True)
    tokens = [token]
    for step in range(new_tokens - 1):
        logits = forward(token, input_pos=torch.tensor([length + step]))
        token = logits[:, -1].argmax(-1, keepdim=True)
        tokens.append(token)
    return torch.cat(tokens, dim=1)


@pytest.mark.parametrize("batch", [1, 2])
def test_decode_loop_static_shapes_two_programs(batch: int) -> None:
    model = _model()
    eager = copy.deepcopy(model)
    model.set_kv_cache(batch_size=batch, max_seq_length=_MAX_SEQ)
    eager.set_kv_cache(batch_size=batch, max_seq_length=_MAX_SEQ)
    jitted = symscalar.jit(model)
    prompt = torch.randint(0, 64, (batch, 5))
    with torch.no_grad():
        want = _greedy(eager, prompt, 16)
        got = _greedy(jitted, prompt, 16)
    assert torch.equal(got, want)
    for block, ref in zip(model.transformer.h, eager.transformer.h):  # the caches hold eager's keys and values
        torch.testing.assert_close(block.attn.kv_cache.k, ref.attn.kv_cache.k)
        torch.testing.assert_close(block.attn.kv_cache.v, ref.attn.kv_cache.v)
    assert jitted.cache_info().misses == 2  # prefill and decode


def test_decode_loop_dynamic_length_one_program_for_every_prompt() -> None:
    model = _model()
    eager = copy.deepcopy(model)
    model.set_kv_cache(batch_size=1, max_seq_length=_MAX_SEQ)
    eager.set_kv_cache(batch_size=1, max_seq_length=_MAX_SEQ)
    length = Dim("T", max=_MAX_SEQ)  # decides litgpt's `if self.max_seq_length < T: raise`
    jitted = symscalar.jit(model, dynamic_dims={"idx": (None, length), "input_pos": (length,)})
    with torch.no_grad():
        for prompt_length in (5, 3, 9):
            prompt = torch.randint(0, 64, (1, prompt_length))
            assert torch.equal(_greedy(jitted, prompt, 8), _greedy(eager, prompt, 8))
    assert jitted.cache_info().misses == 1  # prefill (T = prompt length) and decode (T = 1) alike
    assert "s_T" in str(jitted.last_trace())
