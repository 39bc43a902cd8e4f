"""An argument of a jitted call against its parameter's kind: checked on a miss (a
``TypeError`` saying what to pass; nothing is converted silently, since the Python type of a
number decides torch's type promotion), and turned into its traced stand-in while tracing."""

from __future__ import annotations

from typing import Any

import torch

from symscalar import messages
from symscalar._jit import dims, tree
from symscalar._jit.params import DYNAMIC_TYPES, NUMPY_SCALARS, Kind
from symscalar.errors import StaticValueRequiredError
from symscalar.proxy import TensorProxy
from symscalar.trace import TensorVar
from symscalar.tracer import TraceBuilder, check_tensor_class
from symscalar.types import NumberProxy

__all__ = ["check_argument", "check_dynamic_value", "check_inlined_argument", "proxy"]


def check_argument(kind: Kind, value: Any, where: str) -> tree.Walked | None:
    """Raise a TypeError saying what to pass when ``value`` cannot be a ``kind`` argument. A
    static or unannotated value is checked by walking it (``tree.walk``): the walk is
    returned, for the rest of the miss path to read (see ``record.py``)."""
    if kind is Kind.TENSOR:
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{where} is annotated torch.Tensor but got {type(value).__name__}")
    elif kind.dynamic:
        check_dynamic_value(kind, value, where)
    else:
        try:
            walked = tree.walk(value, static=kind is Kind.STATIC)
        except tree.StaticTensorError as e:
            raise TypeError(_static_tensor_message(where, e)) from None
        try:
            hash(walked.key)
        except TypeError:
            raise TypeError(
                f"{where} is static, so its value is part of the cache key and must be "
                f"hashable; got {type(value).__name__}. Pass a tuple instead of a list, make a "
                "dataclass frozen=True, or declare the parameter dynamic."
            ) from None
        return walked
    return None


def _static_tensor_message(where: str, error: tree.StaticTensorError) -> str:
    if error.container is not None:
        name = type(error.container).__name__
        return (
            f"{where} holds a tensor inside a {name}, which torch's pytree does not know, so "
            f"the tensor would be baked into the program. Register {name} as a pytree node "
            f"(torch.utils._pytree.register_dataclass({name}) for a dataclass, "
            "register_pytree_node otherwise) so that its tensors are traced, or pass the tensor "
            "as an argument of its own."
        )
    return (
        f"{where} is static (its value is part of the cache key), so it cannot be a tensor "
        f"(got a {tuple(error.tensor.shape)} {error.tensor.dtype} tensor). Annotate it "
        "torch.Tensor (or leave it unannotated) to pass a tensor, or pass a Python number "
        "(t.item()) for a static value."
    )


def check_dynamic_value(kind: Kind, value: Any, where: str) -> None:
    if type(value) in DYNAMIC_TYPES[kind]:
        return
    raise TypeError(f"{where} is {kind} but got {type(value).__name__} {value!r}: {dynamic_fix(kind, value)}")


def dynamic_fix(kind: Kind, value: Any) -> str:
    """What to pass instead of ``value`` for a ``kind`` parameter."""
    if isinstance(value, torch.Tensor):
        return (
            "a tensor is not a number. Pass a Python number (t.item()) to keep it a runtime "
            "scalar, or annotate the parameter torch.Tensor to keep the tensor (its dtype, "
            "device and gradient)."
        )
    if isinstance(value, NUMPY_SCALARS):
        return (
            "numpy scalars are not converted silently (torch promotes them unlike Python "
            "numbers: numpy.bool_ like a float). Pass int(v), float(v) or bool(v)."
        )
    if isinstance(value, bool):
        return (
            "in torch a bool promotes as a bool (a bool tensor + True stays bool), not as a "
            "number. Pass int(v) or float(v), or annotate the parameter DynamicBool or NumberLike."
        )
    expected = " or ".join(t.__name__ for t in DYNAMIC_TYPES[kind])
    for base in (int, float):
        if isinstance(value, base):
            if type(value) is not base:
                return (
                    f"{type(value).__name__} (a subclass of {base.__name__}) is not converted "
                    f"silently; pass {base.__name__}(v)."
                )
            return (
                f"it takes {expected}, which keeps the program's types; pass {expected}, or "
                "annotate the parameter NumberLike (any number, each type its own program)."
            )
    return f"pass a Python {expected}, or declare the parameter static."


def check_inlined_argument(kind: Kind, where: str, value: Any) -> Any:
    """An argument of a jitted function called while another one traces: traced values
    pass through (the call becomes part of that trace) when their kind fits."""
    if kind is Kind.TENSOR:
        if not isinstance(value, (torch.Tensor, TensorProxy)):
            raise TypeError(f"{where} is annotated torch.Tensor but got {type(value).__name__}")
    elif kind.dynamic:
        if value is None:
            pass  # `DynamicFloat | None` (a None for a plain DynamicFloat fails in the op)
        elif not isinstance(value, NumberProxy):
            check_dynamic_value(kind, value, where)
        elif value._python_type not in DYNAMIC_TYPES[kind]:
            raise TypeError(
                f"{where} is {kind} but got {type(value).__name__} {value._name} "
                f"({value._origin}): {dynamic_fix(kind, value._python_type())}"
            )
    elif kind is Kind.STATIC:
        traced = [v for v in tree.leaves(value) if isinstance(v, (NumberProxy, TensorProxy))]
        if traced:
            what = ", ".join(repr(v) for v in traced)
            raise StaticValueRequiredError(
                f"{where} is static (a compile-time constant), but got the traced value {what} of the "
                "outer jitted function" + messages.two_fixes()
            )
    return value


def _tensor_input(builder: TraceBuilder, t: torch.Tensor, where: str, leaf: int | None = None) -> TensorProxy:
    check_tensor_class(t, where)
    shape = dims.declared_shape(t, where, leaf)
    proxy = builder.tensor_input(TensorVar(shape, t.dtype, t.device), t.requires_grad, type(t))
    proxy._attributes = dict.fromkeys(t.__dict__, where)
    return proxy


def proxy(builder: TraceBuilder, kind: Kind, where: str, value: Any) -> Any:
    """The traced stand-in of an argument: tensors and dynamic numbers become proxies,
    static values stay themselves (in containers: their tensor leaves become proxies)."""
    if kind is Kind.TENSOR:
        return _tensor_input(builder, value, where)
    if kind.dynamic:  # None only reaches here for `DynamicFloat | None`
        return None if value is None else builder.scalar_input(type(value), value, where)
    if kind is Kind.AUTO:
        leaves, spec = tree.flatten(value)
        return tree.unflatten([_auto_leaf(builder, where, leaf, i) for i, leaf in enumerate(leaves)], spec)
    return value


def _auto_leaf(builder: TraceBuilder, where: str, leaf: Any, index: int) -> Any:
    """Leaf number ``index`` of an unannotated argument while tracing: tensors and torch's
    ``DynamicInt`` are program inputs (in ``tree.tree_key``'s order), anything else is static."""
    if isinstance(leaf, torch.Tensor):
        return _tensor_input(builder, leaf, where, index)
    if isinstance(leaf, int) and tree.is_torch_dynamic_int(leaf):
        return builder.scalar_input(int, int(leaf), where)
    return leaf
