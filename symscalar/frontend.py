"""The torch frontend table: which torch callables symscalar traces, and what it knows of the rest.

``TORCH_FUNCTIONS`` maps each torch callable (``torch.sum``, ``torch.Tensor.sum``, an operator)
to its handler, registered next to its op in ``ops/`` (``ops/define.py``); ``OPS`` holds the
static/dynamic contract of every op and torch spelling. The other tables sort the torch
callables without a handler: random ones, metadata reads, those that read their data as
Python values, those whose output shape depends on values (refused with a fix).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable
from typing import Any

import torch

from symscalar.errors import RegistrationError, UnsupportedOperationError
from symscalar.trace import Registry

__all__ = [
    "OPS",
    "OpSignature",
    "TORCH_FUNCTIONS",
    "data_dependent_shape_error",
    "public_name",
    "register_fallback",
    "supported_torch_functions",
]

# Eager returns the input tensor itself from these under conditions that may depend on a
# dynamic value (dropout with p == 0), where the trace computes a new value.
_MAY_RETURN_INPUT = frozenset(
    {
        torch.dropout,
        torch.nn.functional.dropout,
        torch.nn.functional.alpha_dropout,
        torch.nn.functional.feature_alpha_dropout,
        torch.nn.functional.dropout1d,
        torch.nn.functional.dropout2d,
        torch.nn.functional.dropout3d,
        torch.alpha_dropout,
        torch.feature_dropout,
        torch.feature_alpha_dropout,
    }
)


def _random_functions() -> frozenset[Any]:
    F = torch.nn.functional
    names = "rand randn randint rand_like randn_like randint_like randperm bernoulli normal poisson multinomial"
    tensor_methods = "uniform_ normal_ bernoulli bernoulli_ random_ exponential_ geometric_ log_normal_ cauchy_"
    return frozenset(
        [getattr(torch, n) for n in names.split()]
        + [getattr(torch.Tensor, n) for n in tensor_methods.split()]
        + [
            F.dropout,
            torch.dropout,
            F.dropout1d,
            F.dropout2d,
            F.dropout3d,
            F.alpha_dropout,
            F.feature_alpha_dropout,
            F.gumbel_softmax,
            F.rrelu,
        ]
    )


_RANDOM_FUNCTIONS = _random_functions()


# Functions that read their data argument as Python values: a dynamic number there would be
# concretized, a traced tensor copied outside autograd.
_TENSOR_FROM_DATA = frozenset(
    [torch.tensor, torch.as_tensor, torch.asarray, torch.scalar_tensor, torch.Tensor.new_tensor]
)


def _tensor_property_getters() -> dict[Any, str]:
    getters = {}
    for name in dir(torch.Tensor):
        attr = inspect.getattr_static(torch.Tensor, name, None)
        if name.startswith("__") or not hasattr(attr, "__set__") or callable(attr):
            continue
        if hasattr(getattr(torch.Tensor, name), "__get__"):
            getters[getattr(torch.Tensor, name).__get__] = name
    return getters


# Tensor.shape.__get__ -> "shape": how a TorchFunctionMode sees an attribute read.
_PROPERTY_GETTERS = _tensor_property_getters()

# Reads of a real tensor's metadata (static, guarded by jit) run eagerly: they must not make
# the tensor an input of the program.
_METADATA_READS = frozenset(
    [
        getattr(torch.Tensor, n).__get__
        for n in (
            "shape dtype device ndim layout is_cuda is_cpu is_meta is_sparse is_sparse_csr "
            "is_nested is_quantized is_mkldnn itemsize nbytes names requires_grad is_leaf"
        ).split()
    ]
    + [
        getattr(torch.Tensor, n)
        for n in (
            "size dim ndimension numel nelement element_size is_floating_point is_complex is_signed get_device __len__"
        ).split()
    ]
    + [torch.is_floating_point, torch.is_complex, torch.numel]
)


def public_name(func: Any) -> str:
    """How the user spells a torch callable: ``torch.sum``, ``torch.Tensor.add_``,
    ``torch._weight_norm`` (torch's resolver does not know every private builtin).
    Remembered per callable: torch's resolver installs a warnings filter on every call, a
    third of the cost of tracing an elementwise op."""
    try:
        return _PUBLIC_NAMES[func]
    except KeyError:
        name = _PUBLIC_NAMES[func] = _resolve_public_name(func)
        return name
    except TypeError:  # an unhashable callable
        return _resolve_public_name(func)


_PUBLIC_NAMES: dict[Any, str] = {}


def _resolve_public_name(func: Any) -> str:
    name = torch.overrides.resolve_name(func)
    if isinstance(name, str):
        return name
    short = getattr(func, "__name__", "")
    if short and getattr(torch, short, None) is func:
        return f"torch.{short}"
    qualname = getattr(func, "__qualname__", None)
    return qualname if isinstance(qualname, str) else repr(func)


def _functional_form(short: str) -> bool:
    """Whether the in-place method ``short`` (``add_``, ``masked_fill_``...) has an
    out-of-place form symscalar traces (``zero_``/``fill_``/``copy_`` are built from others)."""
    if short in ("zero_", "fill_", "copy_"):
        return True
    if not short.endswith("_") or short.endswith("__"):
        return False
    return getattr(torch.Tensor, short[:-1], None) in TORCH_FUNCTIONS


# ----------------------------------------------------------------------------------------
# Ops and the frontend table


@dataclasses.dataclass(frozen=True)
class OpSignature:
    """The static/dynamic contract of a user-facing op or torch spelling."""

    name: str  # "symscalar.ops.sum", "torch.sum", "torch.Tensor.sum"
    params: tuple[str, ...]  # parameter names in order
    static: tuple[str, ...]  # those that must be static
    positional: int  # how many of params can be passed positionally


# Every user-facing op and every torch spelling, by name: the single source of truth of which
# parameters are static (exported for the mypy plugin by ``python -m symscalar export-static-params``).
OPS: Registry[str, OpSignature] = Registry("op")
# torch callable -> handler, consulted by __torch_function__.
TORCH_FUNCTIONS: Registry[Any, Callable[..., Any]] = Registry(
    "the symscalar handler of", lambda func: public_name(func)
)


def supported_torch_functions() -> list[str]:
    """Names of the torch functions, methods and operators symscalar can trace."""
    return sorted({public_name(f) for f in TORCH_FUNCTIONS})


_MOE_FIX = (
    " For mixture-of-experts routing, compute the experts for every token-expert pair by "
    "gathering each token's expert weights (transformers: model.set_experts_implementation("
    "'batched_mm')) instead of grouping tokens by expert."
)


def data_dependent_shape_error(name: str, what: str) -> UnsupportedOperationError:
    """The refusal of an op whose output *shape* depends on tensor values (``nonzero``,
    ``x[mask]``, one-argument ``torch.where``): a trace has one shape per value, and
    symscalar does not specialize on data."""
    return UnsupportedOperationError(
        f"{name} on traced values: its output's shape depends on {what}, which is not known "
        "while tracing (a trace never depends on tensor values). Write it with a fixed shape: "
        "torch.where(mask, x, other), masked_fill, or multiplying by the mask instead of "
        "selecting, scatter/index_add with every index instead of the selected ones; or run "
        "this part outside the jitted function." + _MOE_FIX
    )


_DATA_DEPENDENT: dict[Any, str] = {
    **dict.fromkeys(
        [torch.nonzero, torch.Tensor.nonzero, torch.argwhere, torch.Tensor.argwhere], "how many elements are nonzero"
    ),
    **dict.fromkeys([torch.masked_select, torch.Tensor.masked_select], "how many mask elements are True"),
    **dict.fromkeys(
        [
            torch.unique,
            torch.functional.unique,
            torch.Tensor.unique,
            torch.unique_consecutive,
            torch.functional.unique_consecutive,
            torch.Tensor.unique_consecutive,
        ],
        "how many distinct values there are",
    ),
    **dict.fromkeys([torch.bincount, torch.Tensor.bincount], "the largest value"),
}


def _unsupported(func: Any) -> UnsupportedOperationError:
    name = public_name(func)
    if func in _DATA_DEPENDENT:
        return data_dependent_shape_error(name, _DATA_DEPENDENT[func])
    if func in (torch.histc, torch.Tensor.histc):  # transformers' grouped_mm MoE sizes its groups with it
        return UnsupportedOperationError(f"{name} is not supported on traced values by symscalar." + _MOE_FIX)
    supported = sorted({public_name(f) for f in TORCH_FUNCTIONS})
    short = name.rsplit(".", 1)[-1]
    by_short = {s.rsplit(".", 1)[-1]: s for s in supported}
    close = difflib.get_close_matches(short, list(by_short), n=3, cutoff=0.5)
    hint = (
        "the nearest supported: " + ", ".join(by_short[c] for c in close)
        if close
        else f"see symscalar.supported_torch_functions() for the {len(supported)} supported ones"
    )
    return UnsupportedOperationError(
        f"{name} is not supported on traced values by symscalar ({hint}). It was not run "
        "eagerly: running it would bake its trace-time result into the compiled program."
    )


# The handler of torch callables that have none of their own (ops/opaque.py: the opaque torch
# call), registered once: ``fallback(func, args, kwargs)`` traces the call or raises why not.
_FALLBACK: list[Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = []


def register_fallback(fallback: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]) -> None:
    """Register the handler of every torch callable without one (once)."""
    if _FALLBACK:
        raise RegistrationError(f"the fallback handler is already registered (as {_FALLBACK[0]!r})")
    _FALLBACK.append(fallback)


def _fallback(func: Any) -> Callable[..., Any]:
    """The fallback's handler of ``func``, or the unsupported-operation error (data-dependent
    ops keep theirs)."""
    if not _FALLBACK or func in _DATA_DEPENDENT or func in (torch.histc, torch.Tensor.histc):
        raise _unsupported(func)
    fallback = _FALLBACK[0]
    return lambda *args, **kwargs: fallback(func, args, kwargs)
