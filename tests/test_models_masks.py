"""Real models with padding masks and mixture-of-experts routing, eager and jitted side by side.

transformers decides whether to build an attention mask from the mask's values in eager mode
(``padding_mask.all()``); while symscalar traces, ``torch.compiler.is_compiling()`` is True
(symscalar/compiling.py), so the library takes its torch.compile branch and always builds the
mask. These tests check that this never changes a result: over several optimizer steps with a
different mask each step (right padding, left padding with fully masked query rows, no
padding, holes) and a train/eval switch, the loss, every parameter's gradient (None-ness
included) and every parameter after the step agree with eager, with one trace per mode.

Mixture-of-experts models run when their experts gather per-token weights (transformers'
``batched_mm``); routing that groups tokens by expert has data-dependent shapes and is
refused with an error naming the op and that fix. Small random-init configs, no downloads.

The same refusals and in-place rules on plain functions, and ``is_compiling()`` itself, are
tested without models in tests/test_data_dependent_and_aliasing.py (part of `make test-fast`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

import symscalar
from tests.test_models import VOCAB, backward_and_step_like_eager, hf_bert, hf_gpt2, hf_llama, litgpt_config

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # trains real models: left out by `make test-fast`

SEQ = 10
TOLERANCE = {torch.float32: {"atol": 3e-5, "rtol": 3e-4}, torch.float64: {"atol": 1e-10, "rtol": 1e-9}}


def _decoder_config(**extra: Any) -> dict[str, Any]:
    return dict(
        vocab_size=VOCAB,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16,
        **extra,
    )


def hf_qwen2() -> nn.Module:
    return transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**_decoder_config()))


def hf_mistral_sliding() -> nn.Module:
    return transformers.MistralForCausalLM(transformers.MistralConfig(**_decoder_config(sliding_window=4)))


def hf_mixtral(experts: str = "batched_mm") -> nn.Module:
    config = transformers.MixtralConfig(**_decoder_config(num_local_experts=4, num_experts_per_tok=2))
    model = transformers.MixtralForCausalLM(config)
    model.set_experts_implementation(experts)
    return model


def hf_qwen2_moe(experts: str = "batched_mm") -> nn.Module:
    config = transformers.Qwen2MoeConfig(
        **_decoder_config(
            num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8, shared_expert_intermediate_size=16
        )
    )
    model = transformers.Qwen2MoeForCausalLM(config)
    model.set_experts_implementation(experts)
    return model


def causal_lm_loss(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    labels = ids.masked_fill(mask == 0, -100)
    return model(input_ids=ids, attention_mask=mask, labels=labels).loss


def encoder_loss(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    out = model(input_ids=ids, attention_mask=mask, token_type_ids=ids % 2)
    kept = mask.unsqueeze(-1).to(out.last_hidden_state.dtype)
    return (out.last_hidden_state * kept).pow(2).sum() / kept.sum() + out.pooler_output.sum()


MASKED_MODELS: dict[str, tuple[Callable[[], nn.Module], Callable[..., torch.Tensor]]] = {
    "hf_gpt2": (hf_gpt2, causal_lm_loss),
    "hf_llama": (hf_llama, causal_lm_loss),
    "hf_qwen2": (hf_qwen2, causal_lm_loss),
    "hf_mistral_sliding_window": (hf_mistral_sliding, causal_lm_loss),
    "hf_bert": (hf_bert, encoder_loss),
    "hf_mixtral_moe": (hf_mixtral, causal_lm_loss),
    "hf_qwen2_moe": (hf_qwen2_moe, causal_lm_loss),
}


def masked_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and a padding mask that changes kind every step."""
    g = torch.Generator().manual_seed(400 + step)
    ids = torch.randint(0, VOCAB, (3, SEQ), generator=g)
    mask = torch.ones(3, SEQ, dtype=torch.long)
    kind = step % 4
    if kind == 0:  # right padding
        mask[0, -3:] = 0
        mask[2, -1:] = 0
    elif kind == 1:  # left padding: the first queries of row 1 attend to nothing (causal models)
        mask[1, :4] = 0
    elif kind == 3:  # holes
        mask = (torch.rand(3, SEQ, generator=g) > 0.3).long()
        mask[:, 0] = 1
    return ids, mask  # kind 2: no padding, where eager skips building the mask


def train_masked_side_by_side(name: str, dtype: torch.dtype, steps: int = 8) -> None:
    make, loss_of = MASKED_MODELS[name]
    torch.manual_seed(0)
    eager = make().to(dtype).train()
    mine = copy.deepcopy(eager)
    step_fn = symscalar.jit(lambda ids, mask: loss_of(mine, ids, mask))
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05, momentum=0.9)
    opt_m = torch.optim.SGD(mine.parameters(), lr=0.05, momentum=0.9)
    tol = TOLERANCE[dtype]
    for step in range(steps):
        training = step < steps // 2 or step == steps - 1  # train, eval, then train again
        eager.train(training)
        mine.train(training)
        ids, mask = masked_batch(step)
        loss_e = loss_of(eager, ids, mask)
        loss_m = step_fn(ids, mask)
        assert loss_m.dtype == loss_e.dtype
        torch.testing.assert_close(loss_m, loss_e, **tol, msg=f"{name} loss, step {step}")
        backward_and_step_like_eager(name, step, (eager, loss_e, opt_e), (mine, loss_m, opt_m), tol)
    # one trace per module mode (train, eval): a new mask is a new value, never a retrace
    assert step_fn.cache_info().misses == 2, f"{name}: {step_fn.cache_info()}"


@pytest.mark.parametrize("name", list(MASKED_MODELS))
def test_padding_masks_train_like_eager_float32(name: str) -> None:
    train_masked_side_by_side(name, torch.float32)


# The decoders compute in float32 inside a float64 model (RMSNorm and rotary embeddings cast to
# float32; eager and jitted differ there at float32 rounding), so only BERT runs in float64.
@pytest.mark.parametrize("name", ["hf_bert"])
def test_padding_masks_train_like_eager_float64(name: str) -> None:
    train_masked_side_by_side(name, torch.float64, steps=4)


def test_mask_none_and_mask_given_are_separate_traces_matching_eager() -> None:
    torch.manual_seed(0)
    model = hf_llama()
    f = symscalar.jit(lambda ids, mask=None: model(input_ids=ids, attention_mask=mask).logits)
    ids, mask = masked_batch(1)
    for m in (None, mask, None, torch.ones_like(mask)):
        torch.testing.assert_close(f(ids, m), model(input_ids=ids, attention_mask=m).logits, **TOLERANCE[torch.float32])
    assert f.cache_info().misses == 2


# ----------------------------------------------------------------------------------------
# Mixture of experts: routing with data-dependent shapes is refused, by name and with the fix


@pytest.mark.parametrize(
    "make, experts, op",
    [
        (hf_mixtral, "eager", "nonzero"),
        (hf_mixtral, "grouped_mm", "histc"),
        (hf_qwen2_moe, "eager", "nonzero"),
    ],
)
def test_moe_grouping_tokens_by_expert_is_refused_with_the_fix(make: Any, experts: str, op: str) -> None:
    torch.manual_seed(0)
    model = make(experts)
    ids, mask = masked_batch(0)
    with pytest.raises(symscalar.UnsupportedOperationError, match=rf"(?s){op}.*batched_mm"):
        symscalar.jit(lambda ids, mask: causal_lm_loss(model, ids, mask))(ids, mask)


def test_litgpt_moe_is_refused_at_its_one_argument_where() -> None:
    litgpt = pytest.importorskip("litgpt")
    config = litgpt_config()
    config.mlp_class_name, config.n_expert, config.n_expert_per_token = "LLaMAMoE", 4, 2
    model = litgpt.GPT(config)
    ids, _ = masked_batch(0)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"torch.where\(condition\).*shape depends"):
        symscalar.jit(lambda ids: model(ids))(ids)


@pytest.mark.parametrize("factory", [hf_gpt2], ids=["hf_gpt2"])
def test_decoder_called_with_input_ids_only_trains_like_eager(factory: Callable[[], nn.Module]) -> None:
    """The most basic training call, ``model(input_ids=ids, labels=ids, use_cache=False)`` with
    no attention mask: transformers 5 then looks for packed sequences with ``torch.diff`` on
    the position ids (masking_utils.find_packed_sequence_indices), an op without a hand-written
    primitive that runs as an opaque torch call. float64, values and every gradient, three
    optimizer steps, train -> eval -> train. (Tolerance: float64 sums in another order.)"""
    torch.manual_seed(0)
    eager = factory().double()
    mine = copy.deepcopy(eager)
    opt_e = torch.optim.AdamW(eager.parameters(), lr=1e-2)
    opt_m = torch.optim.AdamW(mine.parameters(), lr=1e-2)
    step = symscalar.jit(lambda ids: mine(input_ids=ids, labels=ids, use_cache=False).loss)
    tol = {"atol": 1e-8, "rtol": 1e-7}
    for i, training in enumerate([True, False, True]):
        eager.train(training)
        mine.train(training)
        ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(i))
        loss_e = eager(input_ids=ids, labels=ids, use_cache=False).loss
        loss_m = step(ids)
        torch.testing.assert_close(loss_m, loss_e, **tol)
        if training:
            backward_and_step_like_eager(factory.__name__, i, (eager, loss_e, opt_e), (mine, loss_m, opt_m), tol)
    assert any("torch.diff" in str(e.params.get("call", "")) for e in step.last_trace().eqns)
