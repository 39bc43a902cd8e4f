"""``model.generate`` with a jitted forward, in one call.

HF's recipe for torch.compile is ``model.forward = torch.compile(model.forward)`` with a static
cache; ``jit_for_generate`` is that recipe for ``symscalar.jit``. A static cache has the same
shapes on every decode step, so ``generate`` runs one prefill program (per batch size and prompt
length) and one decode program for any number of new tokens. The default dynamic cache grows by
one position per token; ``cache="dynamic"`` declares its length, the prompt length and the mask
length dynamic (``dynamic_dims`` on paths into the cache, ``dynamic_dims_for_generate``), so that
``generate`` runs one prefill and one decode program for any prompt length and any number of new
tokens (the decode step's one new token is pinned by a size guard, ``Dim("T", specialize=True)``).
"""

from __future__ import annotations

import inspect
from typing import Any

import transformers

from symscalar.jit import jit
from symscalar.sizes import Dim

__all__ = ["jit_for_generate", "dynamic_dims_for_generate"]

_CACHES = ("static", "dynamic")


def jit_for_generate(
    model: transformers.PreTrainedModel, *, cache: str = "static", **jit_options: Any
) -> transformers.PreTrainedModel:
    """Replace ``model.forward`` by ``symscalar.jit(model.forward, **jit_options)`` for
    ``model.generate``. Returns ``model``. The tokens are eager's (greedy and seeded sampling);
    the cache passed to each call is updated as eager updates it.

    ``cache="static"`` (the default) makes ``generate`` use a static KV cache unless the
    generation config names a cache already. ``cache="dynamic"`` keeps the default dynamic cache
    and declares its dims dynamic (``dynamic_dims_for_generate``; a ``dynamic_dims=`` of your own
    is refused with it)."""
    if not isinstance(model, transformers.PreTrainedModel):
        raise TypeError(f"jit_for_generate takes a transformers PreTrainedModel, got {type(model).__name__}")
    if cache not in _CACHES:
        raise ValueError(f"jit_for_generate(cache={cache!r}): expected one of {', '.join(map(repr, _CACHES))}")
    if cache == "dynamic":
        if "dynamic_dims" in jit_options:
            raise ValueError(
                "jit_for_generate(cache='dynamic') declares dynamic_dims itself; pass either, not both "
                "(dynamic_dims_for_generate(model) gives its declaration, to extend)"
            )
        jit_options["dynamic_dims"] = dynamic_dims_for_generate(model)
    config = model.generation_config
    if cache == "dynamic" and config.cache_implementation not in (None, "dynamic"):
        raise ValueError(
            f"jit_for_generate(cache='dynamic'): the model's generation config asks for the "
            f"{config.cache_implementation!r} cache; set model.generation_config.cache_implementation = None, "
            "or use cache='static'"
        )
    model.forward = jit(model.forward, **jit_options)
    if cache == "static" and config.cache_implementation is None:
        config.cache_implementation = "static"
    return model


def dynamic_dims_for_generate(model: transformers.PreTrainedModel) -> dict[str, Any]:
    """The ``dynamic_dims`` of ``model.forward`` for ``generate`` with a ``DynamicCache``: the
    new tokens ``T`` of ``input_ids`` and ``position_ids`` (``T == 1``, the decode step, may be
    pinned by a size guard: its own program), the mask length ``S`` of a 2D ``attention_mask``,
    and the cached length ``P`` of every layer's keys and values. The batch stays static."""
    params = inspect.signature(model.forward).parameters
    cache = next((name for name in ("cache", "past_key_values") if name in params), None)
    if cache is None or "input_ids" not in params:
        raise ValueError(
            f"jit_for_generate(cache='dynamic'): {type(model).__name__}.forward takes no input_ids and cache "
            f"(or past_key_values) parameters (it takes {list(params)}); use cache='static'"
        )
    new, mask, cached = Dim("T", specialize=True), Dim("S"), Dim("P")
    declared: dict[str, Any] = {"input_ids": (None, new)}
    if "attention_mask" in params:
        declared["attention_mask"] = (None, mask)
    if "position_ids" in params:
        declared["position_ids"] = (None, new)
    for tensor in ("keys", "values"):
        declared[f"{cache}.layers.*.{tensor}"] = (None, None, cached, None)
    return declared
