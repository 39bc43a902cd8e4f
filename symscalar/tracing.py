"""The tracer's compatibility surface: the names ``symscalar.tracing`` held before the split.

``tracing.py`` used to hold the recorder, the torch frontend table, ``TensorProxy`` and the
op-definition API in one module. They now live in ``tracer`` (``TraceBuilder``, ``tracing``),
``frontend`` (``TORCH_FUNCTIONS``, ``OPS``, ``public_name``), ``proxy`` (``TensorProxy``) and
``ops/define`` (``defop``, ``implements``: the one import of an op module). Library modules
import from those; this module re-exports the public names, so code written against the old
layout (scripts, conformance, other branches) keeps importing.
"""

from __future__ import annotations

from symscalar.frontend import (
    OPS,
    TORCH_FUNCTIONS,
    OpSignature,
    data_dependent_shape_error,
    public_name,
    supported_torch_functions,
)
from symscalar.grad_regions import stop_gradient_p
from symscalar.ops.define import defop, implements, is_static_annotation, maybe_in_place, static_message
from symscalar.proxy import PYTHON_OBJECT_NAMES, TensorProxy
from symscalar.tracer import TraceBuilder, check_tensor_class, is_trace_constant, tracing

__all__ = [
    "OPS",
    "PYTHON_OBJECT_NAMES",
    "TORCH_FUNCTIONS",
    "OpSignature",
    "TensorProxy",
    "TraceBuilder",
    "check_tensor_class",
    "data_dependent_shape_error",
    "defop",
    "implements",
    "is_static_annotation",
    "is_trace_constant",
    "maybe_in_place",
    "public_name",
    "static_message",
    "stop_gradient_p",
    "supported_torch_functions",
    "tracing",
]
