"""Training paths of real models that need more than a forward, eager and jitted side by side.

transformers' Qwen2, Qwen3 and Llama with ``gradient_checkpointing_enable()`` (torch.utils.checkpoint
traced through; the ``enable_input_require_grads`` forward hook on the embeddings, whose
``output.requires_grad_(True)`` makes a frozen embedding's output a leaf of the graph), Whisper
called with ``input_features`` and ``labels`` only (``torch.diff`` on the shifted labels' positions),
wav2vec2 with a CTC head (``hidden_states.requires_grad = True`` on a computed tensor, the
``labels.max() >= vocab_size`` check as a runtime check, ``F.ctc_loss``), a peft DoRA adapter
(``torch.linalg.norm`` of the weights), Mamba (``F.softplus``, torch's associative scan traced as a
sequential scan) and ``nn.LSTM``. Each runs train -> eval -> train in float64 with AdamW on both
sides; every step compares the loss, every gradient (None-ness included) and every parameter and
buffer after the step (``backward_and_step_like_eager``), with one trace per module mode.
Small random-init configs, CPU, no downloads. What stays refused is checked to be refused by name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from tests.test_models import backward_and_step_like_eager

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # trains real models: left out by `make test-fast`

VOCAB = 50
FLOAT64 = {"atol": 1e-10, "rtol": 1e-9}
# the decoders compute RMSNorm and rotary tables in float32 inside a float64 model, where eager and
# the trace round differently (see tests/test_models_masks.py)
FLOAT32_INSIDE = {"atol": 2e-5, "rtol": 2e-5}


def side_by_side(
    make: Callable[[], nn.Module],
    loss_of: Callable[..., torch.Tensor],
    batch_of: Callable[[int], tuple[Any, ...]],
    tol: dict[str, float],
    modes: tuple[bool, ...] = (True, False, True),
) -> Any:
    """Train ``make()`` (in float64) and a copy of it with the jitted loss side by side through
    ``modes`` (module.training per step), an AdamW step after each; return the jitted loss."""
    torch.manual_seed(0)
    eager = make().double()
    mine = copy.deepcopy(eager)
    step = symscalar.jit(lambda *batch: loss_of(mine, *batch))
    opt_e = torch.optim.AdamW([p for p in eager.parameters() if p.requires_grad], lr=1e-2)
    opt_m = torch.optim.AdamW([p for p in mine.parameters() if p.requires_grad], lr=1e-2)
    name = type(eager).__name__
    for i, training in enumerate(modes):
        eager.train(training)
        mine.train(training)
        batch = batch_of(i)
        loss_e = loss_of(eager, *batch)
        loss_m = step(*batch)
        assert (loss_m.dtype, loss_m.shape, loss_m.requires_grad) == (loss_e.dtype, loss_e.shape, loss_e.requires_grad)
        torch.testing.assert_close(loss_m, loss_e, **tol, msg=f"{name} loss, step {i}")
        backward_and_step_like_eager(name, i, (eager, loss_e, opt_e), (mine, loss_m, opt_m), tol)
    assert step.cache_info().misses == len(set(modes)), f"{name}: {step.cache_info()}"
    return step


def token_batch(step: int) -> tuple[torch.Tensor]:
    return (torch.randint(0, VOCAB, (2, 10), generator=torch.Generator().manual_seed(step)),)


def causal_lm_loss(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return model(input_ids=ids, labels=ids, use_cache=False).loss


# ----------------------------------------------------------------------------------------
# Gradient checkpointing


def _decoder(cls: str, config: str, **extra: Any) -> nn.Module:
    kwargs = dict(
        vocab_size=VOCAB,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
        **extra,
    )
    return getattr(transformers, cls)(getattr(transformers, config)(**kwargs))


DECODERS = {
    "qwen2": lambda: _decoder("Qwen2ForCausalLM", "Qwen2Config"),
    "qwen3": lambda: _decoder("Qwen3ForCausalLM", "Qwen3Config", head_dim=4),
    "llama": lambda: _decoder("LlamaForCausalLM", "LlamaConfig"),
}


def checkpointed(name: str, frozen_embeddings: bool = False) -> Callable[[], nn.Module]:
    def make() -> nn.Module:
        model = DECODERS[name]()
        if frozen_embeddings:  # as with adapters: only the hook makes the layers' inputs require grad
            model.get_input_embeddings().weight.requires_grad_(False)
        model.gradient_checkpointing_enable()
        assert model.get_input_embeddings()._forward_hooks, "transformers' enable_input_require_grads hook"
        return model

    return make


@pytest.mark.filterwarnings("ignore:`gradient_checkpointing_enable` is deprecated:FutureWarning")
@pytest.mark.parametrize("name, frozen_embeddings", [("qwen2", True), ("qwen3", False), ("llama", False)])
def test_gradient_checkpointing_trains_like_eager(name: str, frozen_embeddings: bool) -> None:
    """Checkpointed layers in training, plain ones in eval. With frozen embeddings (as with
    adapters), the hook's ``requires_grad_(True)`` on their output makes it a leaf of the graph, as
    in eager: the embedding gets no gradient, every layer does."""
    side_by_side(checkpointed(name, frozen_embeddings), causal_lm_loss, token_batch, FLOAT32_INSIDE)


# ----------------------------------------------------------------------------------------
# Whisper from labels only


def whisper() -> nn.Module:
    config = transformers.WhisperConfig(
        vocab_size=VOCAB,
        num_mel_bins=8,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=16,
        decoder_ffn_dim=16,
        d_model=8,
        max_source_positions=10,
        max_target_positions=16,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
        suppress_tokens=None,
        begin_suppress_tokens=None,
    )
    return transformers.WhisperForConditionalGeneration(config)


def audio_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(step)
    labels = torch.randint(3, VOCAB, (2, 6), generator=g)
    labels[1, -2:] = -100
    return torch.randn(2, 8, 20, generator=g, dtype=torch.float64), labels


def test_whisper_from_input_features_and_labels_only_trains_like_eager() -> None:
    """No decoder inputs nor decoder_attention_mask: Whisper shifts the labels into its decoder
    inputs (in place, on a computed tensor) and builds the decoder's causal mask itself."""
    side_by_side(whisper, lambda m, feats, labels: m(input_features=feats, labels=labels).loss, audio_batch, FLOAT64)


# ----------------------------------------------------------------------------------------
# wav2vec2 with a CTC head


def wav2vec2_ctc(mask_time_prob: float = 0.0, **extra: Any) -> nn.Module:
    config = transformers.Wav2Vec2Config(
        vocab_size=12,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        conv_dim=(8, 8),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=4,
        num_conv_pos_embedding_groups=2,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        feat_proj_dropout=0.0,
        final_dropout=0.0,
        layerdrop=0.0,
        mask_time_prob=mask_time_prob,  # SpecAugment: numpy's generator (refused, below)
        pad_token_id=0,
        **extra,
    )
    return transformers.Wav2Vec2ForCTC(config)


def ctc_loss_padded(
    logits: torch.Tensor,
    labels: torch.Tensor,
    logit_lengths: torch.Tensor,
    blank_token_id: int,
    reduction: str = "mean",
    zero_infinity: bool = False,
    ignore_index: int = -100,
    **kwargs: Any,
) -> torch.Tensor:
    """transformers' ``ForCTCLoss`` with padded targets: each row's kept labels moved to its front
    (a stable sort of the mask) instead of ``masked_select``'s concatenation, whose length is a
    value. ``F.ctc_loss`` reads ``target_lengths`` of each row: the same loss (docs/limitations.md)."""
    mask = (labels != ignore_index) & (labels != blank_token_id)
    order = torch.argsort((~mask).to(torch.int8), dim=-1, stable=True)
    targets = labels.masked_fill(~mask, blank_token_id).gather(-1, order)
    log_probs = F.log_softmax(logits, dim=-1, dtype=torch.float32).transpose(0, 1)
    return F.ctc_loss(
        log_probs,
        targets,
        logit_lengths,
        mask.sum(-1),
        blank=blank_token_id,
        reduction=reduction,
        zero_infinity=zero_infinity,
    )


def speech_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(step)
    labels = torch.randint(1, 12, (2, 5), generator=g)
    labels[1, -2:] = -100  # padding
    labels[0, 1] = 0  # a blank inside a row: dropped from the targets
    return torch.randn(2, 400, generator=g, dtype=torch.float64), labels


def ctc_loss_of(model: nn.Module, audio: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return model(input_values=audio, labels=labels).loss


def test_ctc_loss_padded_equals_transformers_loss() -> None:
    torch.manual_seed(0)
    model = wav2vec2_ctc().double().eval()
    audio, labels = speech_batch(0)
    expected = ctc_loss_of(model, audio, labels)
    model.loss_function = ctc_loss_padded
    torch.testing.assert_close(ctc_loss_of(model, audio, labels), expected, atol=0, rtol=0)


def test_wav2vec2_ctc_with_labels_trains_like_eager() -> None:
    """The feature encoder sets ``requires_grad = True`` on the (computed) input view in
    training; ``labels.max() >= vocab_size`` raises in eager and is a runtime check here."""

    def make() -> nn.Module:
        model = wav2vec2_ctc()
        model.loss_function = ctc_loss_padded
        return model

    step = side_by_side(make, ctc_loss_of, speech_batch, FLOAT32_INSIDE)  # log_softmax in float32
    audio, labels = speech_batch(5)
    labels[0, 0] = 12  # out of the vocabulary: eager raises ValueError, the program its check
    with pytest.raises(symscalar.CheckFailedError, match=r"modeling_wav2vec2.py:\d+"):
        step(audio, labels)
    assert step.cache_info().misses == 2  # the same program: the check runs on every call


def test_wav2vec2_default_ctc_loss_is_refused_at_masked_select_and_spec_augment_at_numpy() -> None:
    torch.manual_seed(0)
    model = wav2vec2_ctc().double()
    audio, labels = speech_batch(0)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"masked_select.*fixed shape"):
        symscalar.jit(ctc_loss_of)(model, audio, labels)
    masked = wav2vec2_ctc(mask_time_prob=0.5, mask_time_length=2).double().train()
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"numpy\.random\.\w+\(\).*baked"):
        symscalar.jit(lambda x: masked(input_values=x).logits)(audio)


# ----------------------------------------------------------------------------------------
# DoRA adapters (peft)


def dora(model: nn.Module, targets: list[str]) -> nn.Module:
    peft = pytest.importorskip("peft")
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=targets, use_dora=True, lora_dropout=0.0)
    adapted = peft.get_peft_model(model, config)
    for name, p in adapted.named_parameters():  # DoRA starts at the base model: move off it
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.1)
    return adapted


def test_dora_adapter_on_llama_trains_like_eager() -> None:
    step = side_by_side(
        lambda: dora(DECODERS["llama"](), ["q_proj", "v_proj"]), causal_lm_loss, token_batch, FLOAT32_INSIDE
    )
    assert any("norm" in str(e.params.get("call", e.prim.name)) for e in step.last_trace().eqns)


def test_dora_adapter_on_an_mlp_trains_like_eager() -> None:
    def make() -> nn.Module:
        return dora(nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3)), ["0", "2"])

    def batch(step: int) -> tuple[torch.Tensor]:
        return (torch.randn(5, 6, generator=torch.Generator().manual_seed(step), dtype=torch.float64),)

    side_by_side(make, lambda m, x: m(x).pow(2).mean(), batch, FLOAT64)


# ----------------------------------------------------------------------------------------
# Mamba, LSTM


def mamba(**extra: Any) -> nn.Module:
    config = transformers.MambaConfig(
        vocab_size=VOCAB, hidden_size=16, state_size=4, num_hidden_layers=2, expand=2, conv_kernel=4, time_step_rank=4
    )
    return transformers.MambaForCausalLM(config)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_mamba_trains_like_eager() -> None:
    """Eager runs the sequential loop; under tracing ``is_compiling()`` selects torch's
    associative scan, traced as a sequential scan: the same recurrence."""
    side_by_side(mamba, causal_lm_loss, token_batch, FLOAT32_INSIDE)  # the scan runs in float32


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_mamba_eval_cache_is_refused_with_the_fix() -> None:
    """In eval, transformers builds Mamba's cache with ``torch.zeros`` and ``copy_``s states
    into it: a tensor built from Python values updated with traced ones, refused (use_cache=False
    trains and evaluates: above)."""
    torch.manual_seed(0)
    model = mamba().double().eval()
    (ids,) = token_batch(0)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"copy_.*built from Python values"):
        symscalar.jit(lambda ids: model(input_ids=ids).logits)(ids)


class Tagger(nn.Module):
    """A two-layer LSTM tagger (``torch.lstm``: an opaque torch call, torch's kernel and derivative)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 6)
        self.lstm = nn.LSTM(6, 5, num_layers=2, batch_first=True)
        self.head = nn.Linear(5, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, (h, c) = self.lstm(self.embed(ids))
        return F.cross_entropy(self.head(out).flatten(0, 1), ids.flatten() % 4) + h.pow(2).mean() + c.pow(2).mean()


def test_lstm_trains_like_eager() -> None:
    side_by_side(Tagger, lambda m, ids: m(ids[:, :4]), token_batch, FLOAT64)


# ----------------------------------------------------------------------------------------
# Still refused


def test_output_hidden_states_is_refused_at_the_capturing_hooks() -> None:
    """transformers collects hidden states with forward hooks it installs on the layers the
    first time it is asked (and keeps installed): inside a jitted function that is not the
    model's forward, the hooks (or, where transformers installs them while tracing, the flag it
    sets) are refused by name. (Jitting the model itself installs them first:
    tests/test_generation_adversarial.py.)"""
    torch.manual_seed(0)
    model = DECODERS["llama"]()
    (ids,) = token_batch(0)
    with pytest.raises(
        symscalar.UnsupportedOperationError,
        match=r"forward hook \(install_output_capuring_hook|_output_capturing_hooks_installed = True",
    ):
        symscalar.jit(lambda ids: model(input_ids=ids, output_hidden_states=True, use_cache=False))(ids)
