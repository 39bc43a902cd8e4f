"""Adversarial cases for state passed to a jitted function (KV caches, containers), each against
eager: what eager changes in the caller's objects, the jitted call changes too, or it is refused.
Found by the adversarial pass over generation; each test is one class of silent difference."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symscalar
from symscalar.compiling import eager_branch_in

transformers = pytest.importorskip("transformers")
from transformers import DynamicCache, StaticCache  # noqa: E402

from symscalar.integrations.transformers import jit_for_generate  # noqa: E402


def _dynamic_cache() -> Any:
    torch.manual_seed(3)
    cache = DynamicCache()
    cache.update(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), 0)
    return cache


def _static_cache() -> Any:
    config = transformers.LlamaConfig(
        hidden_size=8, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1, max_position_embeddings=16
    )
    cache = StaticCache(config=config, max_cache_len=6)
    torch.manual_seed(3)
    cache.update(torch.randn(1, 2, 2, 4), torch.randn(1, 2, 2, 4), 0)
    return cache


def _append(items: list[Any], x: torch.Tensor) -> torch.Tensor:
    items.append(x * 2)
    return x + 1


def _set_item(items: dict[str, Any], x: torch.Tensor) -> torch.Tensor:
    items["new"] = x * 2
    return x + 1


def _replace_item(items: list[Any], x: torch.Tensor) -> torch.Tensor:
    items[0] = items[0] + x
    return items[0].sum()


def _pop(items: list[Any], x: torch.Tensor) -> torch.Tensor:
    items.pop()
    return x.sum()


@pytest.mark.parametrize(
    ("fn", "container"),
    [(_append, list), (_set_item, dict), (_replace_item, list), (_pop, list)],
    ids=["append", "setitem", "replace", "pop"],
)
def test_a_container_changed_in_place_is_refused(fn: Any, container: type) -> None:
    """Eager's change of the caller's list or dict was lost: the function traced a copy."""
    items: Any = [torch.zeros(3)] if container is list else {"a": torch.zeros(3)}
    eager_items: Any = [torch.zeros(3)] if container is list else {"a": torch.zeros(3)}
    fn(eager_items, torch.ones(3))
    assert len(eager_items) != 1 or not torch.equal(eager_items[0], items[0])  # eager changed it
    with pytest.raises(symscalar.UnsupportedOperationError, match=f"changes the {container.__name__} passed as"):
        symscalar.jit(fn)(items, torch.ones(3))


def test_a_container_read_only_still_traces() -> None:
    def read(items: list[Any], x: torch.Tensor) -> torch.Tensor:
        return items[0] * x + len(items)

    items = [torch.arange(3.0), torch.zeros(1)]
    torch.testing.assert_close(symscalar.jit(read)(items, torch.ones(3)), read(items, torch.ones(3)))


def _update_then_read(cache: Any, other: Any, x: torch.Tensor) -> torch.Tensor:
    cache.update(x, x, 0)
    layer = other.layers[0] if isinstance(other, DynamicCache) else other
    return layer.keys.sum()


@pytest.mark.filterwarnings("ignore::symscalar.explain.RetraceWarning")  # the layer grows: not the point here
@pytest.mark.parametrize("second", ["layer", "cache"])
def test_one_state_object_reached_twice_is_refused(second: str) -> None:
    """A cache and its own layer (or the cache twice): each got a stand-in of its own, so the
    update through one was not seen through the other (eager: 11.4, the program: 3.4)."""
    cache, eager = _dynamic_cache(), _dynamic_cache()
    x = torch.ones(1, 2, 1, 4)
    eager_result = _update_then_read(eager, eager.layers[0] if second == "layer" else eager, x)
    assert eager_result != _update_then_read(_dynamic_cache(), _dynamic_cache(), x)  # the alias matters
    with pytest.raises(symscalar.UnsupportedOperationError, match="reaches one DynamicLayer twice"):
        symscalar.jit(_update_then_read)(cache, cache.layers[0] if second == "layer" else cache, x)


def _update_and_read(cache: Any, keys: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    cache.update(x, x, 0)
    return keys.sum()


@pytest.mark.parametrize("view", [False, True])
def test_a_tensor_sharing_memory_with_an_updated_state_tensor_is_refused(view: bool) -> None:
    """A static layer's keys passed again as an argument (or a view of them): eager's in-place
    update is seen through the argument, the program's was not."""
    x = torch.ones(1, 2, 1, 4)
    forward = symscalar.jit(_update_and_read)
    fresh = _static_cache()
    torch.testing.assert_close(forward(fresh, torch.zeros(1), x), _update_and_read(_static_cache(), torch.zeros(1), x))
    cache = _static_cache()
    keys = cache.layers[0].keys[:, :1] if view else cache.layers[0].keys
    with pytest.raises(
        symscalar.UnsupportedOperationError, match=r"state object.*shares? memory|shares? memory.*state object"
    ):
        forward(cache, keys, x)


def _update_and_ignore(cache: Any, keys: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    cache.update(x, x, 0)
    return x.sum()


def _read_update_and_read(cache: Any, keys: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    before = cache.layers[0].keys.sum()  # the old values read: the update runs out of place, written back
    cache.update(x, x, 0)
    return before + keys.sum()


def _read_update_and_ignore(cache: Any, keys: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    before = cache.layers[0].keys.sum()
    cache.update(x, x, 0)
    return before + x.sum()


def _cache_state(cache: Any) -> list[torch.Tensor]:
    return [t.clone() for layer in cache.layers for t in (layer.keys, layer.values, layer.cumulative_length)]


@pytest.mark.parametrize(
    "fn",
    [_update_and_read, _update_and_ignore, _read_update_and_read, _read_update_and_ignore],
    ids=["in-place-read", "in-place-not-read", "written-back-read", "written-back-not-read"],
)
@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("hit", [False, True], ids=["miss", "hit"])
def test_a_state_tensor_passed_again_is_refused_before_any_change_or_is_eagers(fn: Any, view: bool, hit: bool) -> None:
    """A static layer's keys (or a view of them) passed as another argument too, which the
    function reads or not, updated in place by the program or written back after it, on the
    call that traces or on a cache hit: the call is refused before it changed the cache, or it
    returns eager's result and leaves eager's cache. (Written back, eager's read of the argument
    after the update sees it, the program's would not.)"""
    x = torch.ones(1, 2, 1, 4)
    forward = symscalar.jit(fn)
    if hit:  # the same shapes, unshared: the call below finds this entry
        unshared = _static_cache()
        forward(unshared, torch.zeros_like(unshared.layers[0].keys[:, :1] if view else unshared.layers[0].keys), x)
    eager, cache = _static_cache(), _static_cache()
    expected = fn(eager, eager.layers[0].keys[:, :1] if view else eager.layers[0].keys, x)
    before = _cache_state(cache)
    try:
        got = forward(cache, cache.layers[0].keys[:, :1] if view else cache.layers[0].keys, x)
    except symscalar.UnsupportedOperationError as e:
        assert "memory" in str(e)
        for now, then in zip(_cache_state(cache), before, strict=True):  # refused before any change
            assert torch.equal(now, then)
        return
    torch.testing.assert_close(got, expected)
    for now, then in zip(_cache_state(cache), _cache_state(eager), strict=True):
        assert torch.equal(now, then)


def _update_and_return(cache: Any, x: torch.Tensor) -> torch.Tensor:
    keys, _ = cache.update(x, x, 0)
    return keys


def test_a_returned_state_tensor_updated_in_place_is_the_callers() -> None:
    """A static layer's update returns its keys, updated in place: eager returns the cache's tensor,
    so the next call's update is seen through what the first returned."""
    forward = symscalar.jit(_update_and_return)
    eager, cache = _static_cache(), _static_cache()
    x = torch.ones(1, 2, 1, 4)
    expected, got = _update_and_return(eager, x), forward(cache, x)
    assert got is cache.layers[0].keys and expected is eager.layers[0].keys
    _update_and_return(eager, 2 * x)
    forward(cache, 2 * x)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(cache.layers[0].keys, eager.layers[0].keys)


def _llama() -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        vocab_size=31,
        max_position_embeddings=32,
    )
    return transformers.LlamaForCausalLM(config).eval()


def test_under_inference_mode() -> None:
    """Tensors made under ``torch.inference_mode()`` (the arguments, a cache's tensors) have no
    version counter: the trace's check of state read from outside raised torch's internal error."""
    double = symscalar.jit(lambda x: x * 2)
    with torch.inference_mode():
        torch.testing.assert_close(double(torch.arange(3.0)), torch.arange(3.0) * 2)
    model = _llama()
    forward = symscalar.jit(model.forward)
    ids = torch.tensor([[3, 4, 5, 6]])
    with torch.inference_mode():
        eager, cache = (StaticCache(config=model.config, max_cache_len=8) for _ in range(2))
        for step in range(2):
            expected = model(input_ids=ids, past_key_values=eager).logits
            got = forward(input_ids=ids, past_key_values=cache).logits
            torch.testing.assert_close(got, expected)
            torch.testing.assert_close(cache.layers[0].keys, eager.layers[0].keys)
            assert cache.get_seq_length() == eager.get_seq_length() == 4 + step
            ids = expected[:, -1:].argmax(-1)


@pytest.mark.slow  # uncached generate: a trace per length
def test_an_encoder_decoder_cache_is_refused_with_a_fix_that_works() -> None:
    """T5 and BART generate with an EncoderDecoderCache under every cache_implementation: the
    refusal named those as the fix. Uncached generation is eager's tokens."""
    torch.manual_seed(0)
    config = transformers.T5Config(
        d_model=16, d_ff=32, num_layers=1, num_heads=2, d_kv=8, vocab_size=31, decoder_start_token_id=0
    )
    model = transformers.T5ForConditionalGeneration(config).eval()
    ids = torch.tensor([[3, 4, 5, 6, 1]])
    options = {"max_new_tokens": 3, "do_sample": False}
    with torch.no_grad():
        expected = model.generate(ids, use_cache=False, **options)
        model.forward = symscalar.jit(model.forward)
        with pytest.raises(symscalar.UnsupportedOperationError, match=r"EncoderDecoderCache.*use_cache=False"):
            model.generate(ids, **options)
        assert torch.equal(model.generate(ids, use_cache=False, **options), expected)


class _Counter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
        self.total.add_(x)
        return seen.sum()


@pytest.mark.parametrize("view", [False, True])
def test_an_argument_sharing_memory_with_a_buffer_updated_in_place_is_refused(view: bool) -> None:
    """A buffer updated in place and passed as an argument too: eager's ``seen`` is the updated
    buffer (3.0), the program read it unchanged (0.0)."""
    eager, module = _Counter(), _Counter()
    forward = symscalar.jit(module)
    x = torch.ones(3)
    assert float(eager(x, eager.total[:2] if view else eager.total)) == (2.0 if view else 3.0)
    torch.testing.assert_close(forward(x, torch.zeros(3)), torch.tensor(0.0))  # unshared: traced and run
    torch.testing.assert_close(module.total, eager.total)
    with pytest.raises(symscalar.UnsupportedOperationError, match="shares memory with a tensor the function updates"):
        forward(x, module.total[:2] if view else module.total)
    torch.testing.assert_close(module.total, eager.total)  # refused before the write-back


class _Views(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        base = torch.zeros(3)
        self.register_buffer("total", base)
        self.register_buffer("head", base[:2])  # a view of the first buffer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total.add_(x)
        return self.head.sum()


def test_a_buffer_read_through_a_view_of_one_updated_in_place_is_refused() -> None:
    """Eager's ``head`` sees ``total``'s update (2.0); the program read it unchanged (0.0)."""
    eager = _Views()
    assert float(eager(torch.ones(3))) == 2.0
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"in place \(total\).*shares its memory \(head"):
        symscalar.jit(_Views())(torch.ones(3))


def _scores_options(**options: Any) -> dict[str, Any]:
    return {"max_new_tokens": 3, "do_sample": False, "return_dict_in_generate": True, "output_scores": True, **options}


def _assert_same_generation(expected: Any, got: Any) -> None:
    """The tokens, every step's scores bit for bit, and the cache the call leaves."""
    assert torch.equal(got.sequences, expected.sequences)
    for step, (want, have) in enumerate(zip(expected.scores, got.scores, strict=True)):
        assert torch.equal(have, want), f"step {step}: scores {float((have - want).abs().max()):.3g} from eager's"
    for i, (want, have) in enumerate(zip(expected.past_key_values.layers, got.past_key_values.layers, strict=True)):
        assert torch.equal(have.keys, want.keys) and torch.equal(have.values, want.values), f"layer {i}"


def _gqa_llama(layers: int = 2) -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention: 2 query heads per key/value head
        vocab_size=97,
        max_position_embeddings=64,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = None
    return model


def _padded_prompt() -> dict[str, torch.Tensor]:
    ids = torch.randint(3, 97, (2, 5), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    ids[0, :2], mask[0, :2] = 0, 0
    return {"input_ids": ids, "attention_mask": mask}


@pytest.mark.parametrize("cache", ["static", "dynamic"])
def test_grouped_query_decode_scores_are_eagers_bit_for_bit(cache: str) -> None:
    """A one-token decode step with grouped key/value heads and a mask: eager's attention packs
    each group's query heads into rows (transformers' ``pack_gqa``), its torch.compile branch,
    which the trace took, repeats the key/value heads. With a declared dynamic cache the padded
    prefill's mask had symbolic sizes and the attention left eager's flash kernel for the
    composition. Either way the tokens were eager's but every step's scores were 1 ulp off (the
    second layer's keys too), a difference greedy argmax and sampling can turn into other tokens."""
    model = _gqa_llama()
    prompt = _padded_prompt()
    options = _scores_options(**({"cache_implementation": "static"} if cache == "static" else {}))
    with torch.no_grad():
        expected = model.generate(**prompt, **options)
        jit_for_generate(model, cache=cache)
        got = model.generate(**prompt, **options)
    _assert_same_generation(expected, got)
    assert model.forward.cache_info().misses == 2


@pytest.mark.filterwarnings("ignore::FutureWarning")  # past_key_values=, renamed cache= (eager says so)
def test_a_parameter_dtype_change_between_calls_with_a_cache() -> None:
    """``model.to(torch.bfloat16)`` between two calls passing a cache: the first program's guard
    (the parameters' dtypes) failed under the same key, and the program traced next found the
    cache it had to write back into gone (an internal RuntimeError), also for every call after."""
    eager, model = _gqa_llama(layers=1), _gqa_llama(layers=1)
    forward = symscalar.jit(model.forward)
    ids = torch.tensor([[3, 4, 5, 6]])
    with torch.no_grad():
        for dtype in (torch.float32, torch.bfloat16, torch.float32):
            eager.to(dtype), model.to(dtype)
            expected_cache, cache = (StaticCache(config=eager.config, max_cache_len=8) for _ in range(2))
            expected = eager(input_ids=ids, past_key_values=expected_cache).logits
            got = forward(input_ids=ids, past_key_values=cache).logits
            assert got.dtype == dtype and torch.equal(got, expected)
            assert torch.equal(cache.layers[0].keys, expected_cache.layers[0].keys)
    assert forward.cache_info().misses == 2


def test_eager_branch_in_answers_is_compiling_as_eager_for_its_function_only() -> None:
    """A registered function (and the forwarders it asks through) sees torch's own answer of
    ``is_compiling()`` while tracing; every other caller still sees True."""

    def forwarder() -> bool:
        return torch.compiler.is_compiling()

    def eager_branch(x: torch.Tensor) -> torch.Tensor:
        return x * 2 if forwarder() else x * 3

    def compile_branch(x: torch.Tensor) -> torch.Tensor:
        return x * 2 if forwarder() else x * 3

    eager_branch_in(eager_branch, forwarders=(forwarder,))
    x = torch.arange(3.0)
    torch.testing.assert_close(symscalar.jit(lambda t: eager_branch(t) + compile_branch(t))(x), x * 3 + x * 2)


def test_output_hidden_states_and_attentions_are_eagers() -> None:
    """transformers records hidden states and attention weights with forward hooks that the
    model's forward installs the first time they are asked for: that install (an attribute
    write) was refused, and the hooks it left made every later call of the model refused too."""
    model = _gqa_llama()
    model.set_attn_implementation("eager")  # sdpa returns no attention weights
    prompt = _padded_prompt()
    options = _scores_options(cache_implementation="static", max_new_tokens=2)
    outputs = {"output_hidden_states": True, "output_attentions": True}
    with torch.no_grad():
        expected = [model.generate(**prompt, **options, **outputs), model.generate(**prompt, **options)]
        jit_for_generate(model)
        got = [model.generate(**prompt, **options, **outputs), model.generate(**prompt, **options)]
    for want, have in zip(expected, got):
        _assert_same_generation(want, have)
    for name in ("hidden_states", "attentions"):
        for step, (want, have) in enumerate(zip(expected[0][name], got[0][name], strict=True)):
            assert len(want) == len(have) and all(map(torch.equal, want, have)), f"{name} of step {step}"
