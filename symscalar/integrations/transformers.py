"""``model.generate`` with a jitted forward, in one call.

HF's recipe for torch.compile is ``model.forward = torch.compile(model.forward)`` with a static
cache; ``jit_for_generate`` is that recipe for ``symscalar.jit``. A static cache has the same
shapes on every decode step, so ``generate`` runs one prefill program (per batch size and prompt
length) and one decode program for any number of new tokens. The default dynamic cache grows by
one position per token: every step has new shapes, hence a new program (``RetraceWarning``
says so), until its length can be declared dynamic (``dynamic_dims`` on paths into the cache).
"""

from __future__ import annotations

from typing import Any

import transformers

from symscalar.jit import jit

__all__ = ["jit_for_generate"]


def jit_for_generate(model: transformers.PreTrainedModel, **jit_options: Any) -> transformers.PreTrainedModel:
    """Replace ``model.forward`` by ``symscalar.jit(model.forward, **jit_options)`` and make
    ``model.generate`` use a static KV cache unless the generation config names a cache already.
    Returns ``model``. The tokens are eager's (greedy and seeded sampling); the cache passed to
    each call is updated as eager updates it."""
    if not isinstance(model, transformers.PreTrainedModel):
        raise TypeError(f"jit_for_generate takes a transformers PreTrainedModel, got {type(model).__name__}")
    model.forward = jit(model.forward, **jit_options)
    config = model.generation_config
    if config.cache_implementation is None:
        config.cache_implementation = "static"
    return model
