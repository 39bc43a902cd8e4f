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
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from tests.test_models import VOCAB, backward_and_step_like_eager, hf_bert, hf_gpt2, hf_llama, litgpt_config

transformers = pytest.importorskip("transformers")

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
# torch.compiler.is_compiling() while tracing


def test_is_compiling_is_true_only_inside_the_trace_and_only_in_its_thread() -> None:
    seen: dict[str, bool] = {}
    tracing_started, other_checked = threading.Event(), threading.Event()

    def other_thread() -> None:
        tracing_started.wait(timeout=30)
        seen["other thread, during the trace"] = torch.compiler.is_compiling()
        other_checked.set()

    def f(x: torch.Tensor) -> torch.Tensor:
        seen["inside the trace"] = torch.compiler.is_compiling()
        tracing_started.set()
        other_checked.wait(timeout=30)
        return x * 2

    original = torch.compiler.is_compiling
    thread = threading.Thread(target=other_thread)
    thread.start()
    symscalar.jit(f)(torch.ones(2))
    thread.join()
    assert seen == {"inside the trace": True, "other thread, during the trace": False}
    assert torch.compiler.is_compiling is original and not torch.compiler.is_compiling()
    assert not torch.compiler.is_exporting()


def test_is_compiling_is_restored_when_tracing_fails() -> None:
    original = torch.compiler.is_compiling

    def f(x: torch.Tensor) -> torch.Tensor:
        return x.nonzero()

    with pytest.raises(symscalar.UnsupportedOperationError):
        symscalar.jit(f)(torch.ones(2))
    assert torch.compiler.is_compiling is original


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


DATA_DEPENDENT: dict[str, Callable[[torch.Tensor], Any]] = {
    "torch.nonzero": lambda x: torch.nonzero(x > 0),
    "torch.Tensor.nonzero": lambda x: (x > 0).nonzero(as_tuple=True)[0],
    "torch.argwhere": lambda x: torch.argwhere(x),
    r"torch.where\(condition\)": lambda x: torch.where(x > 0)[0],
    "torch.masked_select": lambda x: torch.masked_select(x, x > 0),
    "torch.Tensor.masked_select": lambda x: x.masked_select(x > 0),
    "unique": lambda x: torch.unique(x),
    "torch.Tensor.unique_consecutive": lambda x: x.unique_consecutive(),
    "torch.bincount": lambda x: torch.bincount((x > 0).long().flatten()),
}


@pytest.mark.parametrize("name", list(DATA_DEPENDENT))
def test_data_dependent_shapes_are_refused_by_name(name: str) -> None:
    x = torch.randn(2, 3)
    DATA_DEPENDENT[name](x)  # eager runs it
    with pytest.raises(symscalar.UnsupportedOperationError, match=rf"(?s){name}.*shape depends on.*torch.where"):
        symscalar.jit(DATA_DEPENDENT[name])(x)


# ----------------------------------------------------------------------------------------
# In-place updates of computed values: functionalized, or refused where eager would alias


def test_inplace_after_a_read_matches_eager_values_and_grads() -> None:
    """The MoE router's ``top /= top.sum(-1, keepdim=True)``, over several calls."""

    def router(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        top, index = torch.topk(torch.softmax(logits, -1), 2, dim=-1)
        total = top.sum(-1, keepdim=True)
        top /= total
        top.mul_(2.0)
        return top, index

    f = symscalar.jit(router)
    for step in range(3):
        base = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(step))
        a, b = base.clone().requires_grad_(), base.clone().requires_grad_()
        (top_e, idx_e), (top_m, idx_m) = router(a), f(b)
        torch.testing.assert_close(top_m, top_e)
        assert torch.equal(idx_m, idx_e)
        cot = torch.randn_like(top_e)
        (ga,), (gb,) = torch.autograd.grad(top_e, a, cot), torch.autograd.grad(top_m, b, cot)
        torch.testing.assert_close(gb, ga)
    assert f.cache_info().misses == 1
    torch.autograd.gradcheck(f, torch.randn(3, 4, dtype=torch.float64, requires_grad=True))


ALIASING: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "index": lambda x: x[0],
    "slice": lambda x: x[:, 1:],
    "view": lambda x: x.view(6),
    "reshape": lambda x: x.reshape(6),
    "flatten": lambda x: x.flatten(),
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x.squeeze(),
    "expand": lambda x: x[:1].expand(2, 3),
    "to": lambda x: x.to(torch.float32),
    "float": lambda x: x.float(),
    "type_as": lambda x: x.type_as(x),
    "contiguous": lambda x: x.contiguous(),
    "detach": lambda x: x.detach(),
    "split": lambda x: x.split(1)[0],
    "chunk": lambda x: x.chunk(2, 1)[0],
    "unbind": lambda x: x.unbind(0)[1],
    "narrow": lambda x: x.narrow(1, 0, 2),
    "select": lambda x: x.select(1, 1),
    "ellipsis": lambda x: x[...],
    "none": lambda x: x[None],
    "view_as": lambda x: x.view_as(x),
    "permute": lambda x: x.permute(1, 0),
    "real": lambda x: x.real,
    "same": lambda x: x,
    "clone": lambda x: x.clone(),
    "mul": lambda x: x * 1,
    "roundtrip": lambda x: x.double().float(),
    # eager returns the input itself (dropout with p == 0 or not training) or a copy (pad)
    "dropout_p0": lambda x: F.dropout(x, 0.0, training=True),
    "dropout_eval": lambda x: F.dropout(x, 0.5, False),
    "identity": lambda x: nn.Identity()(x),
    "pad_nothing": lambda x: F.pad(x, (0, 0)),
    "pad_crop": lambda x: F.pad(x, (-1, 0)),
    "pad": lambda x: F.pad(x, (1, 0)),
}


def _update_the_view(view: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., Any]:
    def f(a: torch.Tensor) -> Any:
        x = a * 2
        v = view(x)
        s = x.sum()
        v.add_(1)
        return x, v, s

    return f


def _update_the_base(view: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., Any]:
    def f(a: torch.Tensor) -> Any:
        x = a * 2
        v = view(x)
        x.mul_(3)
        return x, v

    return f


@pytest.mark.parametrize("make", [_update_the_view, _update_the_base])
@pytest.mark.parametrize("name", list(ALIASING))
def test_inplace_through_an_alias_is_eager_or_refused(name: str, make: Any) -> None:
    f = make(ALIASING[name])
    a = torch.arange(6.0).reshape(2, 3)
    try:
        expected = f(a)
    except RuntimeError:  # eager refuses (an in-place op on an expanded view)
        with pytest.raises((RuntimeError, symscalar.UnsupportedOperationError)):
            symscalar.jit(f)(a)
        return
    try:
        got = symscalar.jit(f)(a)
    except symscalar.UnsupportedOperationError as e:
        assert "in-place" in str(e)
        return
    for g, e in zip(got, expected, strict=True):
        assert torch.equal(g, e)
