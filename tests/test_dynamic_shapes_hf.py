"""HF GPT-2 / Llama / Qwen2 / BERT from token ids with one ``dynamic_dims`` declaration each.

Forward and backward equal eager (float64 over a sweep, float32 at two shapes) with one
program for every B, T >= 2 and at most two size guards, all listed in ``explain()`` with
transformers' file:line. Size 1 is where transformers' own code branches on sizes
(``masking_utils``: ``batch_size != position_ids.shape[0]`` without a mask; ``sdpa_attention``:
``q_length == 1`` / ``q_length > 1``): those guards would pin B or T to 1, so a B=1 or T=1
call is refused with the fixes unless the dim opts in with ``Dim(..., specialize=True)``,
which gives each such size its own program (tested too). Tiny random-init configs.
"""

from __future__ import annotations

import itertools

import pytest
import torch

import symscalar
from symscalar import Dim, DynamicValueError

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.slow
VOCAB = 50


def _gpt2() -> torch.nn.Module:
    cfg = transformers.GPT2Config(
        n_layer=1, n_head=2, n_embd=16, vocab_size=VOCAB, n_positions=256, attn_pdrop=0, resid_pdrop=0, embd_pdrop=0
    )
    return transformers.GPT2LMHeadModel(cfg)


def _llama() -> torch.nn.Module:
    cfg = transformers.LlamaConfig(
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        hidden_size=16,
        intermediate_size=32,
        vocab_size=VOCAB,
        max_position_embeddings=256,
    )
    return transformers.LlamaForCausalLM(cfg)


def _qwen2() -> torch.nn.Module:
    cfg = transformers.Qwen2Config(
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        hidden_size=16,
        intermediate_size=32,
        vocab_size=VOCAB,
        max_position_embeddings=256,
    )
    return transformers.Qwen2ForCausalLM(cfg)


def _bert() -> torch.nn.Module:
    cfg = transformers.BertConfig(
        num_hidden_layers=1,
        num_attention_heads=2,
        hidden_size=16,
        intermediate_size=32,
        vocab_size=VOCAB,
        max_position_embeddings=256,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return transformers.BertModel(cfg)


MODELS = {"gpt2": _gpt2, "llama": _llama, "qwen2": _qwen2, "bert": _bert}


def _forward(model: torch.nn.Module, masked: bool):
    """The function jitted: the model from token ids (and a padding mask), one output tensor
    (the logits, or BERT's hidden states plus its pooler output)."""
    decoder = not isinstance(model, transformers.BertModel)

    def run(input_ids, attention_mask):
        kwargs = {"attention_mask": attention_mask} if masked else {}
        if decoder:
            return model(input_ids=input_ids, use_cache=False, **kwargs).logits
        out = model(input_ids=input_ids, **kwargs)
        return out.last_hidden_state + out.pooler_output[:, None, :]

    if masked:
        return run
    return lambda input_ids: run(input_ids, None)


def _inputs(b: int, t: int, masked: bool, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    inputs = {"input_ids": torch.randint(0, VOCAB, (b, t), generator=g)}
    if masked:
        mask = torch.ones(b, t, dtype=torch.long)
        mask[0, : t // 2] = 0  # left padding in the first row
        inputs["attention_mask"] = mask
    return inputs


def _check_equal(jitted, eager, model, inputs, tol) -> None:
    params = list(model.parameters())
    out = jitted(**inputs)
    expected = eager(**inputs)
    torch.testing.assert_close(out, expected, **tol)
    got = torch.autograd.grad(out.square().sum(), params, allow_unused=True)
    want = torch.autograd.grad(expected.square().sum(), params, allow_unused=True)
    for g, w in zip(got, want):
        if w is None:
            assert g is None or not g.any()
        else:
            torch.testing.assert_close(g, w, **tol)


F64 = {"atol": 1e-10, "rtol": 1e-9}
F32 = {"atol": 2e-5, "rtol": 2e-4}
SWEEP = [(2, 7), (3, 64), (8, 128), (3, 2)]


# T's range is the models' position table (a slice of BERT's position_ids buffer needs it)
T_RANGE = Dim("T", max=256)


def _declare(masked: bool, b: str | Dim = "B", t: Dim = T_RANGE) -> dict[str, tuple]:
    return {"input_ids": (b, t), "attention_mask": (b, t)} if masked else {"input_ids": (b, t)}


def _model(name: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    return MODELS[name]().to(dtype).train()


def _assert_guards_shown(jitted) -> None:
    info, explanation = jitted.cache_info(), jitted.explain()
    assert info.guards == len(explanation.guards)
    text = str(explanation)
    for guard in explanation.guards:
        assert str(guard) in text
        assert guard.where is not None and "transformers" in guard.where  # the line that asked


@pytest.mark.parametrize("masked", [False, True], ids=["ids", "ids+mask"])
@pytest.mark.parametrize("name", list(MODELS))
def test_one_program_for_every_size(name, masked):
    model = _model(name, torch.float64)
    eager = _forward(model, masked)
    jitted = symscalar.jit(eager, dynamic_dims=_declare(masked))
    for i, (B, T) in enumerate(SWEEP):
        _check_equal(jitted, eager, model, _inputs(B, T, masked, i), F64)
    info = jitted.cache_info()
    assert info.misses == 1, jitted.explain()
    assert info.guards <= 2, jitted.explain()
    _assert_guards_shown(jitted)
    # float32: a second program (dtype is part of the key), equal to eager too
    model32 = _model(name, torch.float32)
    eager32 = _forward(model32, masked)
    jitted32 = symscalar.jit(eager32, dynamic_dims=_declare(masked))
    for i, (B, T) in enumerate([(3, 64), (2, 7)]):
        _check_equal(jitted32, eager32, model32, _inputs(B, T, masked, i), F32)
    assert jitted32.cache_info().misses == 1


@pytest.mark.parametrize("name", list(MODELS))
def test_size_1_is_refused_or_opted_in(name):
    """T=1 hits transformers' size branches: refused with the fix unless T opts in, then one
    more program per pinned size, each guard listed; every program equal to eager."""
    model = _model(name, torch.float64)
    eager = _forward(model, True)
    jitted = symscalar.jit(eager, dynamic_dims=_declare(True))
    _check_equal(jitted, eager, model, _inputs(2, 7, True, 0), F64)
    with pytest.raises(DynamicValueError, match=r"(?s)pins the declared dim T to the one value 1.*specialize=True"):
        jitted(**_inputs(2, 1, True, 1))  # transformers' sdpa_attention branches on q_length
    declared = _declare(False, Dim("B", specialize=True), Dim("T", max=256, specialize=True))
    opted = symscalar.jit(_forward(model, False), dynamic_dims=declared)
    plain = _forward(model, False)
    sizes = list(itertools.product((1, 3), (1, 64)))
    for i, (B, T) in enumerate(sizes):
        _check_equal(opted, plain, model, _inputs(B, T, False, i), F64)
    info = opted.cache_info()
    # one program per answer of the size-1 branches: B == 1 or not, T == 1 or not
    assert info.misses <= 4, opted.explain()
    assert info.guards <= 2 * info.entries
    _assert_guards_shown(opted)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_ranges_that_decide_every_branch_need_no_guard(name):
    model = _model(name, torch.float64)
    eager = _forward(model, False)
    jitted = symscalar.jit(eager, dynamic_dims=_declare(False, Dim("B", min=2), Dim("T", min=2, max=256)))
    for i, (b, t) in enumerate([(2, 2), (3, 64)]):
        _check_equal(jitted, eager, model, _inputs(b, t, False, i), F64)
    info = jitted.cache_info()
    assert (info.misses, info.guards) == (1, 0)
