"""``model.generate`` with a jitted forward (HF's torch.compile convention,
``model.forward = symscalar.jit(model.forward)``) against eager, on tiny random-init configs:
the tokens, the number of programs, and the KV cache the calls leave behind."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import symscalar

transformers = pytest.importorskip("transformers")
from transformers import DynamicCache, StaticCache  # noqa: E402
from transformers.utils.deprecation import deprecate_kwarg  # noqa: E402

from symscalar.explain import RetraceWarning  # noqa: E402
from symscalar.integrations.transformers import dynamic_dims_for_generate, jit_for_generate  # noqa: E402

VOCAB = 101
PAD = 0


def _gpt2() -> Any:
    config = transformers.GPT2Config(
        n_embd=32, n_layer=2, n_head=2, vocab_size=VOCAB, n_positions=64, bos_token_id=1, eos_token_id=2
    )
    return transformers.GPT2LMHeadModel(config)


def _llama() -> Any:  # grouped-query attention: 4 query heads share 2 key/value heads
    config = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
    )
    return transformers.LlamaForCausalLM(config)


def _qwen3() -> Any:
    config = transformers.Qwen3Config(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
    )
    return transformers.Qwen3ForCausalLM(config)


def _mistral() -> Any:  # without a sliding window (see test_a_sliding_window_layer_warns)
    config = transformers.MistralConfig(
        sliding_window=None,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
    )
    return transformers.MistralForCausalLM(config)


MODELS: dict[str, Callable[[], Any]] = {"gpt2": _gpt2, "llama": _llama, "qwen3": _qwen3, "mistral": _mistral}


def _model(name: str) -> Any:
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    model.generation_config.pad_token_id = PAD
    model.generation_config.eos_token_id = None  # always 16 new tokens
    return model


def _prompt(batch: int) -> dict[str, torch.Tensor]:
    """A batch of token ids; with batch 2 the first row is left-padded by two tokens."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(3, VOCAB, (batch, 6), generator=generator)
    mask = torch.ones_like(ids)
    if batch == 2:
        ids[0, :2] = PAD
        mask[0, :2] = 0
    return {"input_ids": ids, "attention_mask": mask}


def _cache_options(cache: str) -> dict[str, Any]:
    return {"dynamic": {}, "static": {"cache_implementation": "static"}, "none": {"use_cache": False}}[cache]


def _generate(model: Any, prompt: dict[str, torch.Tensor], cache: str, **options: Any) -> torch.Tensor:
    options.setdefault("do_sample", False)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RetraceWarning)
        out: torch.Tensor = model.generate(**prompt, max_new_tokens=16, **_cache_options(cache), **options)
    return out


def _jitted(model: Any) -> Any:
    model.forward = symscalar.jit(model.forward)
    return model.forward


def _check_generate(name: str, cache: str, batch: int) -> Any:
    model = _model(name)
    prompt = _prompt(batch)
    expected = _generate(model, prompt, cache)
    forward = _jitted(model)
    got = _generate(model, prompt, cache)
    assert got.shape == (batch, 6 + 16)
    assert torch.equal(got, expected), f"{name}, {cache} cache, batch {batch}: tokens differ from eager"
    return forward


CASES = [(name, cache, batch) for name in MODELS for cache in ("dynamic", "static", "none") for batch in (1, 2)]
FAST = {("llama", "static", 2)}  # the rest take seconds each (the uncached and dynamic ones trace per token)


@pytest.mark.parametrize(
    ("name", "cache", "batch"), [c if c in FAST else pytest.param(*c, marks=pytest.mark.slow) for c in CASES]
)
def test_generate_equals_eager(name: str, cache: str, batch: int) -> None:
    """Greedy tokens equal eager's; with the static cache, one prefill and one decode program
    for the 16 new tokens."""
    forward = _check_generate(name, cache, batch)
    if cache == "static":
        assert forward.cache_info().misses == 2


def test_a_new_static_cache_of_the_same_shape_reuses_the_programs() -> None:
    """Caches are keyed by structure and tensor metadata, not identity: a second generate
    (a fresh StaticCache, or the reset one) runs the programs of the first."""
    model = _model("llama")
    prompt = _prompt(1)
    expected = _generate(model, prompt, "static")
    forward = _jitted(model)
    for _ in range(2):
        assert torch.equal(_generate(model, prompt, "static"), expected)
    assert forward.cache_info().misses <= 3


def test_seeded_sampling_equals_eager() -> None:
    model = _model("llama")
    prompt = _prompt(2)
    torch.manual_seed(7)
    expected = _generate(model, prompt, "static", do_sample=True, top_k=0)
    _jitted(model)
    torch.manual_seed(7)
    got = _generate(model, prompt, "static", do_sample=True, top_k=0)
    assert torch.equal(got, expected)


def test_jit_for_generate_two_programs() -> None:
    model = _model("qwen3")
    prompt = _prompt(2)
    expected = _generate(model, prompt, "static")
    jit_for_generate(model)
    got = _generate(model, prompt, "dynamic")  # no cache option: the helper chose the static cache
    assert torch.equal(got, expected)
    assert model.forward.cache_info().misses == 2


def _generate_length(model: Any, length: int, batch: int) -> torch.Tensor:
    """Greedy generate from a prompt of ``length`` tokens (batch 2: the first row left-padded)."""
    generator = torch.Generator().manual_seed(length)
    ids = torch.randint(3, VOCAB, (batch, length), generator=generator)
    mask = torch.ones_like(ids)
    if batch == 2:
        ids[0, :2], mask[0, :2] = PAD, 0
    return _generate(model, {"input_ids": ids, "attention_mask": mask}, "dynamic")


@pytest.mark.slow
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_jit_for_generate_dynamic_cache_two_programs(name: str, batch: int) -> None:
    """With the default DynamicCache and its dims declared (``cache="dynamic"``): one prefill and
    one decode program for 16 new tokens and for every prompt length, tokens equal to eager's,
    and no RetraceWarning (the growing cache keys alike on every step)."""
    model = _model(name)
    expected = {length: _generate_length(model, length, batch) for length in (6, 9, 3)}
    jit_for_generate(model, cache="dynamic")
    assert model.generation_config.cache_implementation is None  # the default dynamic cache
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetraceWarning)
        for length, tokens in expected.items():
            got = _generate_length(model, length, batch)
            assert torch.equal(got, tokens), f"{name}, batch {batch}, prompt {length}: tokens differ from eager"
    info = model.forward.cache_info()
    assert info.misses == 2 and info.hits == 3 * 16 - 2, info


@pytest.mark.slow
def test_jit_for_generate_dynamic_cache_seeded_sampling() -> None:
    """Sampling with a seeded generator over the declared dynamic cache equals eager; without a
    cache (``use_cache=False``) the mask length S and the token count T, declared apart, are
    equal only by value: the mask's broadcast is equal under a size guard ``s_S == s_T`` and the
    tokens are eager's."""
    model = _model("llama")
    prompt = _prompt(2)
    torch.manual_seed(7)
    expected = _generate(model, prompt, "dynamic", do_sample=True, top_k=0)
    expected_without_cache = _generate(model, prompt, "none")
    jit_for_generate(model, cache="dynamic")
    torch.manual_seed(7)
    assert torch.equal(_generate(model, prompt, "dynamic", do_sample=True, top_k=0), expected)
    assert model.forward.cache_info().misses == 2
    assert torch.equal(_generate(model, prompt, "none"), expected_without_cache)


def test_the_declared_dynamic_cache_after_each_call_equals_eagers() -> None:
    """Direct calls with a DynamicCache and ``dynamic_dims_for_generate``: a prefill (the layers
    hold None until their first update) and decode steps whose cache grows, two programs, the
    caller's cache equal to eager's after every call."""
    model = _model("llama")
    eager_cache, jitted_cache = DynamicCache(config=model.config), DynamicCache(config=model.config)
    declared = dynamic_dims_for_generate(model)
    forward = symscalar.jit(model.forward, dynamic_dims=declared)
    # the paths start at the parameter's name (`cache` in transformers 5.2x, which renames a
    # `past_key_values=` keyword in a wrapper: a cache passed so is keyed, and traced, per length)
    name = next(path.split(".")[0] for path in declared if ".layers." in path)
    ids = _prompt(2)["input_ids"]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", RetraceWarning)
        for step in range(4):
            positions = torch.arange(ids.shape[1]).expand(ids.shape[0], -1) + (6 if step else 0) + max(step - 1, 0)
            expected = model(input_ids=ids, position_ids=positions, past_key_values=eager_cache)
            got = forward(input_ids=ids, position_ids=positions, **{name: jitted_cache})
            assert got.past_key_values is jitted_cache
            torch.testing.assert_close(got.logits, expected.logits, rtol=1e-5, atol=1e-5)
            _assert_same_cache(eager_cache, jitted_cache)
            ids = expected.logits[:, -1:].argmax(-1)
    assert jitted_cache.get_seq_length() == 6 + 3
    assert forward.cache_info().misses == 2


def test_jit_for_generate_options_are_checked() -> None:
    model = _model("llama")
    with pytest.raises(ValueError, match="expected one of 'static', 'dynamic'"):
        jit_for_generate(model, cache="paged")
    with pytest.raises(ValueError, match="declares dynamic_dims itself"):
        jit_for_generate(model, cache="dynamic", dynamic_dims={"input_ids": (None, "T")})
    model.generation_config.cache_implementation = "static"
    with pytest.raises(ValueError, match="asks for the 'static' cache"):
        jit_for_generate(model, cache="dynamic")


def _assert_same_cache(eager: Any, jitted: Any) -> None:
    """Every attribute of every layer equal: tensors to float rounding (integers exactly),
    Python values exactly."""
    assert type(eager) is type(jitted) and len(eager.layers) == len(jitted.layers)
    for i, (a, b) in enumerate(zip(eager.layers, jitted.layers)):
        assert vars(a).keys() == vars(b).keys(), f"layer {i}"
        for name, value in vars(a).items():
            other = vars(b)[name]
            if isinstance(value, torch.Tensor):
                assert isinstance(other, torch.Tensor) and other.shape == value.shape and other.dtype == value.dtype
                torch.testing.assert_close(other, value, rtol=1e-5, atol=1e-6, msg=f"layer {i}.{name}")
            else:
                assert type(other) is type(value) and other == value, f"layer {i}.{name}: {other!r} != {value!r}"


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_the_cache_after_each_call_equals_eagers(kind: str) -> None:
    model = _model("llama")
    config = model.config

    def new_cache() -> Any:
        return DynamicCache(config=config) if kind == "dynamic" else StaticCache(config=config, max_cache_len=16)

    eager_cache, jitted_cache = new_cache(), new_cache()
    jitted_forward = symscalar.jit(model.forward)
    ids = _prompt(2)["input_ids"]
    static_tensors = [layer.cumulative_length for layer in jitted_cache.layers] if kind == "static" else []
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RetraceWarning)
        for _ in range(3):
            expected = model(input_ids=ids, past_key_values=eager_cache)
            got = jitted_forward(input_ids=ids, past_key_values=jitted_cache)
            assert got.past_key_values is jitted_cache  # the caller's cache, as eager returns it
            torch.testing.assert_close(got.logits, expected.logits, rtol=1e-5, atol=1e-5)
            _assert_same_cache(eager_cache, jitted_cache)
            ids = expected.logits[:, -1:].argmax(-1)
    if kind == "static":  # updated in place, as eager's add_ and index_copy_: the same tensors
        assert all(layer.cumulative_length is t for layer, t in zip(jitted_cache.layers, static_tensors))
        assert jitted_forward.cache_info().misses == 2


def test_a_growing_cache_warns_once_with_the_fix() -> None:
    model = _model("llama")
    prompt = _prompt(1)
    _jitted(model)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.generate(**prompt, max_new_tokens=4, do_sample=False)
    retraces = [w for w in caught if issubclass(w.category, RetraceWarning)]
    assert len(retraces) == 1
    assert "cache_implementation='static'" in str(retraces[0].message)
    assert "DynamicLayer.keys" in str(retraces[0].message)


def test_past_key_values_none_binds_as_eager() -> None:
    """transformers renames ``past_key_values=`` to ``cache=`` in a wrapper around forward:
    the jitted forward calls the wrapper as eager does."""
    model = _model("llama")
    ids = _prompt(1)["input_ids"]
    with torch.no_grad():
        expected = model(ids, past_key_values=None, use_cache=False).logits
        forward = symscalar.jit(model.forward)
        torch.testing.assert_close(forward(ids, past_key_values=None, use_cache=False).logits, expected)
        torch.testing.assert_close(forward(ids, None, use_cache=False).logits, expected)


def test_a_cache_that_is_not_modelled_is_refused() -> None:
    class MyCache(DynamicCache):  # a subclass: its update may do anything
        pass

    model = _model("llama")
    forward = symscalar.jit(model.forward)
    with torch.no_grad(), pytest.raises(symscalar.UnsupportedOperationError, match=r"MyCache.*cache_implementation"):
        forward(input_ids=_prompt(1)["input_ids"], past_key_values=MyCache(config=model.config))


def test_an_attribute_that_is_not_modelled_is_refused() -> None:
    model = _model("llama")
    cache = DynamicCache(config=model.config)
    cache.layers[0].note = object()  # neither a tensor nor a static value
    forward = symscalar.jit(model.forward)
    with torch.no_grad(), pytest.raises(symscalar.UnsupportedOperationError, match=r"DynamicLayer\.note holds"):
        forward(input_ids=_prompt(1)["input_ids"], past_key_values=cache)


@pytest.mark.slow
@pytest.mark.parametrize(("window", "cache"), [(32, "static"), (4, "static"), (4, "dynamic")])
def test_a_sliding_window_layer_warns(window: int, cache: str) -> None:
    """A static sliding-window layer counts its tokens in a Python int (its control flow reads
    it), so each decode step is a new program: tokens and the cache equal eager's, and a
    RetraceWarning says why. With a window of 4 the prompt of 6 fills it: each step rolls the
    layer's tensors (``roll``, an update of a copy, ``copy_`` back into the layer); a dynamic
    sliding-window layer crops its grown tensors to the window."""
    torch.manual_seed(0)
    config = transformers.MistralConfig(
        sliding_window=window,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
    )
    model = transformers.MistralForCausalLM(config).eval()
    prompt = _prompt(1)
    options = {"max_new_tokens": 4, "do_sample": False, "pad_token_id": PAD, "return_dict_in_generate": True}
    options.update(_cache_options(cache))
    with torch.no_grad():
        expected = model.generate(**prompt, **options)
        _jitted(model)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = model.generate(**prompt, **options)
    assert torch.equal(got.sequences, expected.sequences)
    _assert_same_cache(expected.past_key_values, got.past_key_values)
    retraces = [str(w.message) for w in caught if issubclass(w.category, RetraceWarning)]
    assert len(retraces) == 1 and ("cumulative_length_int" in retraces[0] or cache == "dynamic")


def test_cache_tensors_that_share_memory_are_refused() -> None:
    model = _model("llama")
    ids = _prompt(1)["input_ids"]
    forward = symscalar.jit(model.forward)
    with torch.no_grad():
        forward(input_ids=ids, past_key_values=StaticCache(config=model.config, max_cache_len=16))
        shared = StaticCache(config=model.config, max_cache_len=16)
        eager_cache = StaticCache(config=model.config, max_cache_len=16)
        model(input_ids=ids, past_key_values=eager_cache)
        for layer, done in zip(shared.layers, eager_cache.layers):  # initialized, like the first cache
            vars(layer).update({k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in vars(done).items()})
        forward(input_ids=ids[:, :1], past_key_values=shared)  # the decode program: a cache hit from now on
        shared.layers[1].keys = shared.layers[0].keys  # one tensor for two layers
        with pytest.raises(symscalar.UnsupportedOperationError, match="share memory"):
            forward(input_ids=ids[:, :1], past_key_values=shared)


def test_caches_the_key_walk_would_note_out_of_order_are_refused() -> None:
    """Paths into the second of two caches key it before the first: its changes would be written
    back into the other cache, so the call is refused; paths into both key them in order."""
    model = _model("llama")

    def two(a: Any, b: Any) -> Any:
        for cache in (a, b):
            layer = cache.layers[0]
            layer.keys, layer.values = layer.keys * 2, layer.values + 1
        return a.layers[0].keys.sum() + b.layers[0].values.sum()

    def caches() -> list[Any]:
        torch.manual_seed(3)
        out = []
        for length in (3, 4):
            cache = DynamicCache(config=model.config)
            cache.update(torch.randn(1, 2, length, 8), torch.randn(1, 2, length, 8), 0)
            out.append(cache)
        return out

    dims = (None, None, "P", None)
    wrong = symscalar.jit(two, dynamic_dims={"b.layers.*.keys": dims})
    with pytest.raises(symscalar.UnsupportedOperationError, match="cannot key them in order"):
        wrong(*caches())
    both = symscalar.jit(two, dynamic_dims={"a.layers.*.keys": dims, "b.layers.*.values": (None, None, "Q", None)})
    eager, jitted = caches(), caches()
    torch.testing.assert_close(both(*jitted), two(*eager))
    for e, j in zip(eager, jitted):
        _assert_same_cache(e, j)


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_past_key_values_keyword_binds_as_cache(kind: str) -> None:
    """A direct call with ``past_key_values=`` (which transformers' ``deprecate_kwarg`` wrapper
    renames to ``cache=``) binds as ``cache=``: the declared dims reach the cache, so decode
    steps with a growing cache hit one program, and the cache equals eager's after each call."""
    model = _model("llama")
    dims = dynamic_dims_for_generate(model) if kind == "dynamic" else None
    forward = symscalar.jit(model.forward, dynamic_dims=dims)

    def new_cache() -> Any:
        if kind == "dynamic":
            return DynamicCache(config=model.config)
        return StaticCache(config=model.config, max_cache_len=16)

    eager, jitted = new_cache(), new_cache()
    ids = _prompt(1)["input_ids"]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # eager's wrapper: past_key_values is deprecated
        for _ in range(5):
            expected = model(input_ids=ids, past_key_values=eager)
            got = forward(input_ids=ids, past_key_values=jitted)
            torch.testing.assert_close(got.logits, expected.logits, rtol=1e-5, atol=1e-6)
            assert got.past_key_values is jitted
            _assert_same_cache(eager, jitted)
            ids = expected.logits[:, -1:].argmax(-1)
    assert forward.cache_info().misses == 2


def test_a_renamed_keyword_binds_to_its_new_parameter() -> None:
    """Any ``deprecate_kwarg(old, new_name=new)`` wrapper: the old keyword is the parameter's
    value (keyed as it, one program with ``new=``); passing both keeps eager's choice."""

    @deprecate_kwarg("scale", "99.0", new_name="factor")
    def scaled(x: torch.Tensor, factor: Any = None, **kwargs: Any) -> torch.Tensor:
        return x * (2.0 if factor is None else factor) + len(kwargs)

    jitted = symscalar.jit(scaled)
    x = torch.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager's deprecation; the static number's retraces
        for kwargs in ({"scale": 3.0}, {"factor": 3.0}, {}, {"factor": 4.0, "scale": 5.0}):
            torch.testing.assert_close(jitted(x, **kwargs), scaled(x, **kwargs))
    assert jitted.cache_info().misses == 3  # scale=3.0 and factor=3.0 are one program
