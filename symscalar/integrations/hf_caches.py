"""transformers' KV caches as state of a jitted call (see ``symscalar/_jit/mutable.py``).

``model.generate`` passes a ``DynamicCache`` or ``StaticCache`` to ``forward`` on every step,
and forward updates it: a dynamic layer grows by ``torch.cat``, a static layer is written in
place with ``index_copy_`` at ``cumulative_length``, and a layer initializes itself on its first
update. Registered as state classes, these caches are keyed by structure (a new cache of the same
shape finds the same programs) and the call's changes are written back into the caller's cache,
so that after every call the cache equals eager's, tensor for tensor. Other caches (quantized,
offloaded, linear-attention, encoder-decoder) are refused with the fix.

``register(cache_utils)`` takes the ``transformers.cache_utils`` module, so that this module
does not import transformers: ``symscalar.jit`` calls it when transformers is loaded.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import torch

from symscalar._jit.mutable import STATE_CLASSES, refuse_state_objects, register_state_class
from symscalar.proxy import TensorProxy
from symscalar.types import current_tracer

__all__ = ["register", "SUPPORTED"]

# the classes of transformers.cache_utils modelled as state
SUPPORTED = (
    "Cache",
    "DynamicCache",
    "StaticCache",
    "DynamicLayer",
    "StaticLayer",
    "DynamicSlidingWindowLayer",
    "StaticSlidingWindowLayer",
)
_FIX = (
    "Fix: generate with the default cache or cache_implementation='static' (a DynamicCache or StaticCache "
    "without offloading), or call the model without symscalar.jit."
)
_ENCODER_DECODER_FIX = (
    "An encoder-decoder model (T5, BART...) generates with an EncoderDecoderCache whatever the cache_implementation. "
    "Fix: generate with use_cache=False, or call the model without symscalar.jit."
)
_registered: set[int] = set()


def register(cache_utils: types.ModuleType) -> None:
    """Register the caches of ``cache_utils`` (idempotent; cheap after the first call)."""
    if id(cache_utils) in _registered:
        return
    for name in SUPPORTED:
        cls: Any = getattr(cache_utils, name, None)
        if isinstance(cls, type) and cls not in STATE_CLASSES:
            register_state_class(cls, _FIX)
            own = cls.__dict__.get("lazy_initialization")
            if name.startswith("Static") and callable(own) and not hasattr(own, "_symscalar_original"):
                setattr(cls, "lazy_initialization", _traced_initialization(own))  # noqa: B010
    encoder_decoder = getattr(cache_utils, "EncoderDecoderCache", None)
    if isinstance(encoder_decoder, type):  # before Cache: the default and the static cache of such a model
        refuse_state_objects((encoder_decoder,), _ENCODER_DECODER_FIX)
    bases = tuple(
        cls for cls in (getattr(cache_utils, "Cache", None), getattr(cache_utils, "CacheLayerMixin", None)) if cls
    )
    if bases:
        refuse_state_objects(bases, _FIX)
    _registered.add(id(cache_utils))


def _traced_initialization(original: Callable[..., Any]) -> Callable[..., Any]:
    """A static layer's ``lazy_initialization`` (its first ``update``, in the prefill), whose zero
    tensors are built from the traced key and value states while tracing: built from Python values
    (``torch.zeros``) they would be constants of the program, which ``index_copy_`` cannot update.
    The same zeros (shape, dtype, device); outside a trace the original runs alone."""

    @functools.wraps(original)
    def lazy_initialization(self: Any, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> None:
        original(self, key_states, value_states, *args, **kwargs)
        if torch.compiler.is_dynamo_compiling() or current_tracer.get() is None:  # Dynamo cannot read a ContextVar
            return
        for name, like in (("keys", key_states), ("values", value_states)):
            built = self.__dict__.get(name)
            if isinstance(like, TensorProxy) and isinstance(built, torch.Tensor) and not built.any():
                self.__dict__[name] = like.new_zeros(built.shape, dtype=built.dtype)

    lazy_initialization._symscalar_original = original  # type: ignore[attr-defined]
    return lazy_initialization
