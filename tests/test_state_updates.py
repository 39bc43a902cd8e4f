"""KV cache tensors a jitted call updates in place (``symscalar/_jit/state_updates.py``): the
program runs the update on the caller's tensor instead of copying the whole cache back, and the
cache after each call equals eager's; where the update could be seen through another tensor the
call is refused."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import symscalar

transformers = pytest.importorskip("transformers")
from transformers import StaticCache  # noqa: E402


def _config() -> Any:
    return transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=101,
        max_position_embeddings=64,
    )


class _Ops(TorchDispatchMode):
    """The aten ops run, with the storage each one's first operand lives in."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[tuple[str, int]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        self.ops.append((str(func.overloadpacket), first.untyped_storage().data_ptr() if first is not None else 0))
        return func(*args, **(kwargs or {}))


def _same_cache(eager: Any, jitted: Any) -> None:
    """Every attribute of every layer equal: tensors to float rounding (integers exactly)."""
    for e, j in zip(eager.layers, jitted.layers):
        assert vars(e).keys() == vars(j).keys()
        for name, value in vars(e).items():
            if isinstance(value, torch.Tensor):
                torch.testing.assert_close(vars(j)[name], value, rtol=1e-5, atol=1e-6, msg=name)
            else:
                assert type(value) is type(vars(j)[name]) and value == vars(j)[name], name


def _steps(model: Any, n: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return [torch.randint(3, 101, (1, 4 if i == 0 else 1), generator=g) for i in range(n)]


@pytest.mark.slow
def test_a_static_cache_decode_step_updates_the_cache_in_place() -> None:
    """At a cache hit the decode program writes each layer's new position into the caller's
    tensor (``scatter_``) and copies no cache tensor: no out-of-place scatter, no ``copy_``
    into the cache; the cache equals eager's after every step."""
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_config()).eval()
    forward = symscalar.jit(model.forward)
    eager_cache = StaticCache(config=model.config, max_cache_len=16)
    cache = StaticCache(config=model.config, max_cache_len=16)
    position = 0
    with torch.no_grad():
        for i, ids in enumerate(_steps(model, 5)):
            positions = torch.arange(position, position + ids.shape[1])[None]
            expected = model(input_ids=ids, position_ids=positions, cache=eager_cache).logits
            tensors = {
                t.untyped_storage().data_ptr()
                for layer in cache.layers
                for t in vars(layer).values()
                if isinstance(t, torch.Tensor)
            }
            with _Ops() as ops:
                got = forward(input_ids=ids, position_ids=positions, cache=cache).logits
            position += ids.shape[1]
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
            _same_cache(eager_cache, cache)
            if i >= 2:  # the decode program, at a cache hit
                names = [name for name, _ in ops.ops]
                assert names.count("aten.scatter_") == 2 * model.config.num_hidden_layers
                assert "aten.scatter" not in names
                into_cache = [n for n, ptr in ops.ops if n == "aten.copy_" and ptr in tensors]
                assert into_cache == ["aten.copy_"] * model.config.num_hidden_layers  # cumulative_length only
    assert forward.cache_info().misses == 2


def _update(cache: Any, k: torch.Tensor, v: torch.Tensor, read_before: bool) -> torch.Tensor:
    layer = cache.layers[0]
    before = layer.keys.sum() if read_before and layer.is_initialized else 0.0
    keys, values = cache.update(k, v, 0)
    return keys.sum() * 2 + values.mean() + before


@pytest.mark.parametrize("read_before", [False, True])
def test_a_cache_update_equals_eager_whether_or_not_its_old_values_are_read(read_before: bool) -> None:
    """An update whose input is also read elsewhere (``keys.sum()`` before it) is copied back
    as before; one read only by the update runs in place. Both leave eager's cache."""
    config = _config()
    jitted = symscalar.jit(_update)
    eager_cache, cache = (StaticCache(config=config, max_cache_len=8) for _ in range(2))
    g = torch.Generator().manual_seed(1)
    for i in range(4):
        k, v = torch.randn(1, 2, 1, 8, generator=g), torch.randn(1, 2, 1, 8, generator=g)
        expected = _update(eager_cache, k, v, read_before)
        with _Ops() as ops:
            torch.testing.assert_close(jitted(cache, k, v, read_before), expected, rtol=1e-5, atol=1e-6)
        _same_cache(eager_cache, cache)
        if i >= 1:  # the program for an initialized layer: in place unless the old keys are read
            names = [name for name, _ in ops.ops]
            assert names.count("aten.scatter_") == (1 if read_before else 2)
            assert names.count("aten.scatter") == (1 if read_before else 0)
    assert jitted.cache_info().misses == 2  # the layer's first update (its initialization), then the rest


def test_a_cache_tensor_shared_with_another_input_is_refused() -> None:
    """Eager's in-place update would be seen through the other input (here a view of the keys
    passed as an argument): refused rather than read with the values before the update."""

    def update_and_read(cache: Any, k: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        cache.update(k, k, 0)
        return other.sum()

    config = _config()
    jitted = symscalar.jit(update_and_read)
    cache = StaticCache(config=config, max_cache_len=8)
    k = torch.randn(1, 2, 1, 8)
    jitted(cache, k, torch.ones(3))  # the layer's first update
    jitted(cache, k, torch.ones(3))  # the program that updates it in place
    with pytest.raises(symscalar.UnsupportedOperationError, match="share memory"):
        jitted(cache, k, cache.layers[0].keys[0, 0, 0, :3])
    eager = StaticCache(config=config, max_cache_len=8)
    for _ in range(2):
        update_and_read(eager, k, torch.ones(3))
    _same_cache(eager, cache)  # the refused call changed nothing


def _update_then_check(cache: Any, k: torch.Tensor) -> torch.Tensor:
    keys, _ = cache.update(k, k, 0)
    if keys.abs().max() > 10:
        raise ValueError("a key too large")
    return keys.sum()


def _check_then_update(cache: Any, k: torch.Tensor) -> torch.Tensor:
    if k.abs().max() > 10:
        raise ValueError("a key too large")
    keys, _ = cache.update(k, k, 0)
    return keys.sum()


def test_a_raising_check_after_a_cache_update_is_refused() -> None:
    """When the check fails eager has updated the cache, and the program (whose changes are
    written back after it ran) would not have: refused, on the prefill (the layer initializes
    itself) and on a decode step alike."""
    config = _config()
    jitted = symscalar.jit(_update_then_check)
    with pytest.raises(symscalar.UnsupportedOperationError, match="KV cache or other state object"):
        jitted(StaticCache(config=config, max_cache_len=8), torch.ones(1, 2, 1, 8))
    cache = StaticCache(config=config, max_cache_len=8)
    cache.update(torch.ones(1, 2, 1, 8), torch.ones(1, 2, 1, 8), 0)  # initialized: only tensors change now
    with pytest.raises(symscalar.UnsupportedOperationError, match="KV cache or other state object"):
        jitted(cache, torch.ones(1, 2, 1, 8))


def test_a_raising_check_before_a_cache_update_leaves_eager_cache() -> None:
    """Checked before the update: a failing call raises as eager does and leaves the cache as
    eager's failing call leaves it (not updated); passing calls update it."""
    config = _config()
    jitted = symscalar.jit(_check_then_update)
    eager, cache = (StaticCache(config=config, max_cache_len=8) for _ in range(2))
    for scale in (1.0, 2.0, 100.0, 3.0):
        k = torch.full((1, 2, 1, 8), scale)
        try:
            expected: Any = _check_then_update(eager, k)
        except ValueError as e:
            expected = e
        if isinstance(expected, ValueError):
            with pytest.raises(symscalar.CheckFailedError):
                jitted(cache, k)
        else:
            torch.testing.assert_close(jitted(cache, k), expected)
        _same_cache(eager, cache)


@pytest.mark.parametrize("form", ["alone", "tuple", "dict", "nested"])
def test_the_caller_cache_is_returned_where_the_function_returns_it(form: str) -> None:
    """The result holds the caller's cache object where the traced function returned its
    stand-in: at the top of a tuple or dict (put there directly) or deeper (a tree walk)."""

    def step(cache: Any, k: torch.Tensor) -> Any:
        keys, _ = cache.update(k, k, 0)
        total = keys.sum()
        return {
            "alone": cache,
            "tuple": (total, cache),
            "dict": {"total": total, "cache": cache},
            "nested": [(total, {"cache": cache})],
        }[form]

    def the_cache(result: Any) -> Any:
        return {
            "alone": lambda r: r,
            "tuple": lambda r: r[1],
            "dict": lambda r: r["cache"],
            "nested": lambda r: r[0][1]["cache"],
        }[form](result)

    config = _config()
    jitted = symscalar.jit(step)
    eager, cache = (StaticCache(config=config, max_cache_len=8) for _ in range(2))
    for i in range(3):
        k = torch.full((1, 2, 1, 8), float(i))
        expected, got = step(eager, k), jitted(cache, k)
        assert the_cache(got) is cache and the_cache(expected) is eager
        assert type(got) is type(expected)
        _same_cache(eager, cache)
