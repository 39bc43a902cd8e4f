"""Sample calls for every registered torch spelling, from lightning-thunder's OpInfos.

The conformance test (``tests/test_opinfo_conformance.py``) and the op-table generator
(``scripts/gen_op_table.py``) need, for each torch callable in ``symscalar.TORCH_FUNCTIONS``,
real calls of that callable with valid arguments. thunder's ``OpInfo`` sample inputs follow
thunder's signatures, so each OpInfo is first mapped to the torch call it stands for (its
``torch_reference``, unwrapped, or an explicit adapter below); the call is then re-spelled for
every registered spelling of the same op (``torch.add`` samples also drive
``torch.Tensor.add``, ``Tensor.__add__`` and ``Tensor.__radd__``).

A call is a ``Call(func, args, kwargs)`` in torch's own calling convention: run it eagerly for
the expected result, or inside ``symscalar.jit`` (see ``jitted``) with its tensors as jit
inputs, its numbers static, and optionally some numbers as dynamic parameters.

Everything that is not exercised is reported with a reason (``Skip``); the reasons are the
declared out-of-scope features (complex numbers, tensor-valued indices, data-dependent
shapes, ops not in symscalar yet), never a hidden failure. Ops thunder has no OpInfo for get
a few hand-written samples (``HAND_SAMPLES``) or another op's samples (``STEM_ALIASES``).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import types as pytypes
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

import symscalar
from symscalar.frontend import OPS, TORCH_FUNCTIONS, public_name
from symscalar.types import (
    BoolLike,
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    FloatLike,
    IntLike,
    NumberLike,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from thunder.core import dtypes as thunder_dtypes
    from thunder.tests import opinfos as thunder_opinfos

__all__ = [
    "Call",
    "Skip",
    "Dyn",
    "MAX_SAMPLES",
    "SAMPLE_DTYPES",
    "opinfos",
    "spelling_name",
    "registered_spellings",
    "dynamic_params",
    "static_params",
    "calls_for",
    "opinfo_callable",
    "jitted",
    "run_static",
    "fill",
    "bind_call",
    "invoke",
    "leaves",
    "RANDOM_SPELLINGS",
    "UNINITIALIZED_SPELLINGS",
    "FILLS_IN_PLACE",
    "assert_same_metadata",
    "EXCLUSIVE_PARAMS",
    "op_stem",
    "hint_name",
    "accepts_dynamic",
    "dynamic_positions",
    "substitute",
]

# Samples run per (spelling, source OpInfo): enough variety, small runtime.
MAX_SAMPLES = 8
# The dtypes samples are drawn in, round-robin, where the OpInfo supports them.
SAMPLE_DTYPES = (thunder_dtypes.float32, thunder_dtypes.float64, thunder_dtypes.int64, thunder_dtypes.bool8)
# At most this many numbers of one call become dynamic parameters of the jitted function.
MAX_DYNAMIC = 4


@dataclasses.dataclass(frozen=True)
class Call:
    """A torch call: ``func(*args, **kwargs)``; ``source`` says which OpInfo sample it came from."""

    func: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    source: str

    def run(self) -> Any:
        """Run the call eagerly with torch."""
        return invoke(self.func, self.args, self.kwargs)


def invoke(func: Any, args: Any, kwargs: Any) -> Any:
    """Call a spelling the way a user writes it: ``torch.Tensor.X`` (methods and operators)
    as ``args[0].X(*args[1:])``, so that Python's own dispatch (``2 + x`` -> ``x.__radd__(2)``)
    reaches a traced tensor; anything else as ``func(*args, **kwargs)``."""
    name = spelling_name(func)
    if name in FILLS_IN_PLACE:  # into a tensor of its own, as code fills a fresh buffer
        args = (args[0].clone(), *args[1:])
    if name.startswith("torch.Tensor."):
        return getattr(args[0], name.rsplit(".", 1)[-1])(*args[1:], **kwargs)
    return func(*args, **kwargs)


@dataclasses.dataclass(frozen=True)
class Skip:
    """A sample that is not run, and why (a declared out-of-scope feature)."""

    reason: str
    source: str


@dataclasses.dataclass(frozen=True)
class Dyn:
    """Placeholder in a call template for the ``index``-th dynamic parameter."""

    index: int


@dataclasses.dataclass(frozen=True)
class _TensorSlot:
    index: int


def opinfos() -> list[Any]:
    """thunder's OpInfos (imported once, at module import)."""
    return list(thunder_opinfos.opinfos)


def spelling_name(func: Any) -> str:
    """``torch.sum``, ``torch.Tensor.__radd__``, ``torch.nn.functional.softmax``..."""
    return public_name(func)


def registered_spellings() -> list[Any]:
    """Every torch callable symscalar traces, sorted by name."""
    return sorted(TORCH_FUNCTIONS, key=spelling_name)


# ----------------------------------------------------------------------------------------
# Which parameters are static, which accept dynamic numbers (from the handlers' annotations)

_DYNAMIC_HINTS = (NumberLike, FloatLike, IntLike, BoolLike, DynamicInt, DynamicFloat, DynamicBool)


def accepts_dynamic(hint: Any) -> bool:
    """Whether an annotation admits a dynamic number."""
    if any(hint is h for h in _DYNAMIC_HINTS):
        return True
    if typing.get_origin(hint) in (typing.Union, pytypes.UnionType):
        return any(accepts_dynamic(h) for h in typing.get_args(hint))
    return False


def hint_name(hint: Any) -> str:
    """``NumberLike``, ``FloatLike``...: the dynamic-capable part of an annotation."""
    if any(hint is h for h in _DYNAMIC_HINTS):
        return str(hint.__name__)
    names = [hint_name(h) for h in typing.get_args(hint) if accepts_dynamic(h)]
    return " | ".join(names)


def dynamic_params(func: Any) -> dict[str, str]:
    """Parameters of ``func``'s handler that accept a dynamic number, with their type name."""
    handler = inspect.unwrap(TORCH_FUNCTIONS[func])
    hints = typing.get_type_hints(handler)
    static = set(OPS[spelling_name(func)].static)
    names = list(inspect.signature(handler).parameters)
    if spelling_name(func).startswith("torch.Tensor."):
        names = names[1:]  # a method's self is the tensor it is called on, never a number
    return {
        name: hint_name(hints[name])
        for name in names
        if name in hints and name not in static and accepts_dynamic(hints[name])
    }


def static_params(func: Any) -> tuple[str, ...]:
    """Parameters of ``func``'s handler that must be static (``OPS[...].static``)."""
    return OPS[spelling_name(func)].static


def bind_call(call: Call) -> inspect.BoundArguments | None:
    """``call``'s arguments bound to the symscalar handler's signature (None if they do not bind)."""
    sig = inspect.signature(inspect.unwrap(TORCH_FUNCTIONS[call.func]))
    try:
        return sig.bind(*call.args, **call.kwargs)
    except TypeError:
        return None


# ----------------------------------------------------------------------------------------
# OpInfo -> the torch call it stands for


def _unsqueeze_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    a, dims = args
    if isinstance(dims, int):
        return (a, dims), {}
    if len(dims) == 1:
        return (a, dims[0]), {}
    return None  # thunder's multi-dim unsqueeze has no single torch call


def _squeeze_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    a, dims = args
    return ((a,) if dims is None else (a, dims)), {}


def _permute_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    a, *dims = args
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = list(dims[0])
    return (a, tuple(dims)), {}


# OpInfos whose torch_reference is not a torch callable: (the torch callable, an adapter from
# thunder's sample (args, kwargs) to torch's, returning None where there is no torch equivalent).
OPINFO_CALLS: dict[str, tuple[Any, Callable[..., tuple[Any, ...] | None]]] = {
    "cat_wrapper": (torch.cat, lambda args, kwargs: ((list(args),), dict(kwargs))),
    "stack_wrapper": (torch.stack, lambda args, kwargs: ((list(args),), dict(kwargs))),
    "squeeze": (torch.squeeze, _squeeze_call),
    "squeeze_torch": (torch.squeeze, _squeeze_call),
    "unsqueeze": (torch.unsqueeze, _unsqueeze_call),
    "permute": (torch.permute, _permute_call),
    "t": (torch.Tensor.t, lambda args, kwargs: (args, kwargs)),
    "getitem": (torch.Tensor.__getitem__, lambda args, kwargs: (args, kwargs)),
    "take": (torch.index_select, lambda args, kwargs: ((args[0], args[2], args[1]), dict(kwargs))),
}


def opinfo_callable(info: Any) -> Any:
    """The torch callable an OpInfo's samples are valid for, or None."""
    if info.name in OPINFO_CALLS:
        return OPINFO_CALLS[info.name][0]
    ref = info.torch_reference
    if ref is None:
        return None
    ref = inspect.unwrap(ref)
    if torch.overrides.resolve_name(ref) is not None:
        return ref
    if getattr(ref, "__module__", "") == "torch._refs":  # torch._refs.pow & co: torch.pow's samples
        return getattr(torch, ref.__name__, None)
    return None


# Dunder spellings and the op whose samples they take (reflected ones swap at call time).
_OPERATOR_STEMS = {
    "add": "add",
    "radd": "add",
    "sub": "sub",
    "rsub": "sub",
    "mul": "mul",
    "rmul": "mul",
    "truediv": "div",
    "rtruediv": "div",
    "floordiv": "floor_divide",
    "rfloordiv": "floor_divide",
    "mod": "remainder",
    "rmod": "remainder",
    "pow": "pow",
    "rpow": "pow",
    "matmul": "matmul",
    "rmatmul": "matmul",
    "neg": "neg",
    "pos": "positive",
    "abs": "abs",
    "invert": "bitwise_not",
    "and": "bitwise_and",
    "rand": "bitwise_and",
    "or": "bitwise_or",
    "ror": "bitwise_or",
    "xor": "bitwise_xor",
    "rxor": "bitwise_xor",
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "eq": "eq",
    "ne": "ne",
    "getitem": "getitem",
}
# Spellings that also take another op's samples (the same torch semantics on those samples):
# torch's aliases, and ops whose OpInfo is missing but whose arguments another op's fit.
STEM_ALIASES: dict[str, tuple[str, ...]] = {
    "absolute": ("abs",),
    "arctan2": ("atan2",),
    "clip": ("clamp",),
    "divide": ("div",),
    "true_divide": ("div",),
    "greater": ("gt",),
    "greater_equal": ("ge",),
    "less": ("lt",),
    "less_equal": ("le",),
    "not_equal": ("ne",),
    "sign": ("sgn",),
    "swapaxes": ("transpose",),
    "swapdims": ("transpose",),
    "concat": ("cat",),
    "concatenate": ("cat",),
    "expit": ("sigmoid",),
    "std_mean": ("var_mean",),
    "empty": ("zeros",),
    "empty_like": ("zeros_like",),
    "ones_like": ("zeros_like",),
    "reshape_as": ("view_as",),
    "contiguous": ("clone",),
    "view": ("reshape",),
    "broadcast_to": ("expand",),
    "float": ("to",),
    "double": ("to",),
    "min": ("max",),
}


def _hand_samples() -> dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]]:
    """Samples for ops thunder has no OpInfo for (by op stem), in torch's calling convention."""
    g = torch.Generator().manual_seed(0)

    def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        if dtype.is_floating_point:
            return torch.randn(shape, generator=g, dtype=dtype)
        return torch.randint(-5, 5, shape, generator=g, dtype=dtype)

    i64, f64 = torch.int64, torch.float64
    mm = [
        ((t(3, 4), t(4, 5)), {}),
        ((t(1, 3, dtype=f64), t(3, 2, dtype=f64)), {}),
        ((t(2, 3, dtype=i64), t(3, 1, dtype=i64)), {}),
    ]
    bmm = [((t(2, 3, 4), t(2, 4, 5)), {}), ((t(1, 2, 3, dtype=f64), t(1, 3, 2, dtype=f64)), {})]
    new_sized = [((t(2, 3), (4, 5)), {}), ((t(2, 3), 4, 5), {}), ((t(2, 3, dtype=i64), (2,)), {"dtype": f64})]
    clamp_one = [((t(4, 5), -0.5), {}), ((t(4, 5), t(5)), {}), ((t(3, dtype=i64), 0), {}), ((t(3, dtype=f64), 1), {})]
    return {
        "mm": mm,
        "spmm": mm,
        "bmm": bmm,
        "narrow": [((t(4, 5), 0, 1, 2), {}), ((t(4, 5), -1, 0, 5), {}), ((t(3, 4, 5, dtype=f64), 1, 2, 2), {})],
        "split_with_sizes": [
            ((t(6, 4), [2, 4]), {}),
            ((t(3, 5), [1, 1, 3], 1), {}),
            ((t(3, 5, dtype=i64), [2, 3]), {"dim": -1}),
        ],
        "new_zeros": new_sized,
        "new_ones": new_sized,
        "new_empty": new_sized,
        "new_full": [
            ((t(2, 3), (4, 5), 1.5), {}),
            ((t(2, 3, dtype=i64), (3,), 7), {}),
            ((t(2), (2, 2), -2.0), {"dtype": f64}),
        ],
        "clamp_min": clamp_one,
        "clamp_max": clamp_one,
        # deterministic forms only: training=False, or p=0 (random masks are the program's own
        # stream, not eager's: tests/test_random.py)
        # conversions; outer; deterministic bernoulli (probabilities 0 and 1)
        **{
            name: [((t(2, 3),), {}), ((t(3, dtype=f64),), {})]
            for name in ("long", "int", "short", "char", "byte", "bool", "half", "bfloat16")
        },
        "multi_head_attention_forward": [
            ((t(5, 2, 8), t(4, 2, 8), t(4, 2, 8), 8, 2, t(24, 8), t(24), None, None, False, 0.0, t(8, 8), t(8)), {}),
            (
                (
                    t(3, 1, 4, dtype=f64),
                    t(3, 1, 4, dtype=f64),
                    t(3, 1, 4, dtype=f64),
                    4,
                    1,
                    t(12, 4, dtype=f64),
                    None,
                    None,
                    None,
                    False,
                    0.0,
                    t(4, 4, dtype=f64),
                    None,
                ),
                {"need_weights": False},
            ),
        ],
        "max_pool2d_with_indices": [
            ((t(1, 2, 5, 5), 2), {}),
            ((t(2, 3, 6, 6, dtype=f64), 3, 2, 1), {"ceil_mode": True}),
        ],
        "ger": [((t(3), t(4)), {}), ((t(2, dtype=f64), t(5, dtype=f64)), {})],
        "bernoulli": [
            ((torch.zeros(3),), {}),
            ((torch.ones(2, 2, dtype=f64),), {}),
            ((t(2, 3), 0.0), {}),
            ((t(4), 1.0), {}),
        ],
        # random samples: compared by their metadata only (RANDOM_SPELLINGS)
        "rand": [((2, 3), {}), (((4,),), {"dtype": f64})],
        "randn": [((2, 3), {}), (((4,),), {"dtype": f64})],
        "rand_like": [((t(2, 3),), {}), ((t(3),), {"dtype": f64})],
        "randn_like": [((t(2, 3),), {}), ((t(3),), {"dtype": f64})],
        # in-place fills, on a copy of the operand (FILLS_IN_PLACE); the numbers leave room for
        # test_dynamic_parameter's probes (p in [0, 1], low <= high, std >= 0, lambd > 0).
        # Their degenerate deterministic forms are compared in full in tests/test_random.py.
        "bernoulli_": [((t(2, 3), 0.25), {}), ((t(3, dtype=f64),), {"p": 0.5}), ((t(4, dtype=i64), 0.25), {})],
        "uniform_": [((t(2, 3), 2.0, 5.0), {}), ((t(3, dtype=f64), -1.0, 4.0), {}), ((t(4),), {})],
        "normal_": [((t(2, 3), 2.0, 3.0), {}), ((t(3, dtype=f64),), {"mean": -1.0, "std": 2.0}), ((t(4),), {})],
        "exponential_": [((t(2, 3), 2.0), {}), ((t(3, dtype=f64),), {"lambd": 3.0}), ((t(4),), {})],
        "random_": [((t(2, 3), 3, 9), {}), ((t(3, dtype=f64), 7), {}), ((t(4, dtype=i64),), {})],
        "randint": [((0, 5, (2, 3)), {}), ((7, (4,)), {"dtype": f64})],
        "randint_like": [((t(2, 3), 4), {}), ((t(3, dtype=f64), 1, 6), {})],
        "multinomial": [((t(2, 4).abs() + 0.1, 2), {}), ((t(5, dtype=f64).abs() + 0.1, 7, True), {})],
        "dropout": [
            ((t(4, 5), 0.5), {"training": False}),
            ((t(3, dtype=f64), 0.0), {}),
            ((t(2, 3),), {"p": 0.25, "training": False}),
            ((t(2, 3), 1.0), {}),  # training, everything dropped: random ops, deterministic result
        ],
        # complex samples are out of scope here (tests/test_numerics_eager.py covers them)
        "conj": [((t(2, 3),), {}), ((t(3, dtype=i64),), {}), ((t(),), {})],
        "conj_physical": [((t(2, 3),), {}), ((t(3, dtype=f64),), {})],
        "addmm": [
            ((t(5), t(3, 4), t(4, 5)), {}),
            ((t(3, 5, dtype=f64), t(3, 2, dtype=f64), t(2, 5, dtype=f64)), {"beta": 0.5, "alpha": -2.0}),
            ((t(1, 5), t(3, 4), t(4, 5)), {"beta": 0}),
            ((t(3, 1, dtype=i64), t(3, 2, dtype=i64), t(2, 4, dtype=i64)), {"alpha": 3}),
        ],
        "unsqueeze": [((t(2, 3), 0), {}), ((t(2, 3), -1), {}), ((t(2, 3, dtype=i64), 2), {}), ((t(), 0), {})],
        "detach": [((t(2, 3),), {}), ((t(3, dtype=f64),), {}), ((t(2, dtype=i64),), {}), ((t(),), {})],
        "roll": [
            ((t(4, 5), 2, 1), {}),
            ((t(2, 3, 4, dtype=f64), (1, -5), (0, 2)), {}),
            ((t(3, 2, dtype=i64), -1), {}),
            ((t(2, 3), (1, 1)), {"dims": (1, 1)}),
        ],
        # x[i] = v writes into the tensor passed in: refused on an argument of the jitted
        # function (eager would update the caller's tensor); on a computed value it is traced
        # (tests/test_ops_indexing.py, test_setitem_*)
        "setitem": [((t(3, 4), 1, t(4)), {}), ((t(3, 4, dtype=f64), (slice(None), 0), 2.0), {})],
        # requires_grad_ on an argument changes the caller's tensor: refused unless a no-op;
        # on computed values it is traced (tests/test_models_hf_training.py)
        "requires_grad_": [((t(2, 3), False), {}), ((t(3, dtype=i64), False), {})],
        # log-probabilities (T, N, C), padded or concatenated targets in [1, C), lengths
        "ctc_loss": [
            ((t(6, 2, 4).log_softmax(-1), torch.tensor([[1, 2, 3], [3, 1, 0]]), (6, 5), (3, 2)), {}),
            (
                (
                    t(5, 2, 3, dtype=f64).log_softmax(-1),
                    torch.tensor([1, 2, 2]),
                    torch.tensor([5, 4]),
                    torch.tensor([2, 1]),
                ),
                {"reduction": "sum"},
            ),
            ((t(4, 3).log_softmax(-1), torch.tensor([1, 2]), (4,), (2,)), {"reduction": "none", "blank": 0}),
        ],
        # a runtime check of a one-element tensor (symscalar/ops/checks.py)
        "_assert": [((torch.tensor(True), "checked"), {}), ((torch.tensor([1.5]), "checked"), {})],
        # weight-norm parametrizations: v, g with size 1 in every dim but `dim` (all for -1)
        "_weight_norm": [
            ((t(4, 3), t(4, 1)), {}),
            ((t(4, 3, dtype=f64), t(1, 3, dtype=f64), 1), {}),
            ((t(2, 3, 4), t(1, 1, 4)), {"dim": 2}),
            ((t(3, 2), t(1, 1), -1), {}),
        ],
    }


HAND_SAMPLES = _hand_samples()
# Parameters torch's own Python wrapper branches on before dispatch (``boolean_dispatch``):
# a dynamic value there raises DynamicValueError (bool() of a dynamic value), as clear.
BRANCHED_IN_PYTHON = frozenset({"return_indices"})
# In-place random fills: they write into their first operand, which symscalar refuses for an
# argument of the jitted function (eager would fill the caller's tensor; tests/test_random.py),
# so ``invoke`` calls them on a copy of it, eagerly and in the trace alike.
FILLS_IN_PLACE = frozenset(
    {
        "torch.Tensor.bernoulli_",
        "torch.Tensor.exponential_",
        "torch.Tensor.normal_",
        "torch.Tensor.uniform_",
        "torch.Tensor.random_",
    }
)
# Spellings whose results are random samples: symscalar's stream is not eager's, so their
# conformance is the result's metadata (``assert_same_metadata``; values: tests/test_random.py).
RANDOM_SPELLINGS = frozenset(
    {
        "torch.rand",
        "torch.randn",
        "torch.rand_like",
        "torch.randn_like",
        "torch.randint",
        "torch.randint_like",
        "torch.multinomial",
        "torch.Tensor.multinomial",
        *FILLS_IN_PLACE,
    }
)
# Spellings whose eager results are uninitialized memory: any values are valid (symscalar's
# are zeros, tests/test_ops_factories.py), so their conformance is the result's metadata too.
UNINITIALIZED_SPELLINGS = frozenset({"torch.empty", "torch.empty_like", "torch.Tensor.new_empty"})


def assert_same_metadata(got: Any, expected: torch.Tensor, where: str) -> None:
    """What a result of ``RANDOM_SPELLINGS``/``UNINITIALIZED_SPELLINGS`` must share with
    eager's, its values aside: a tensor of the same shape, dtype, device and requires_grad."""
    assert isinstance(got, torch.Tensor), f"{where}: expected a tensor, got {type(got).__name__}"
    fields = ("shape", "dtype", "device", "requires_grad")
    assert [getattr(got, k) for k in fields] == [getattr(expected, k) for k in fields], (
        f"{where}: got {[getattr(got, k) for k in fields]}, eager gives {[getattr(expected, k) for k in fields]} "
        f"({', '.join(fields)})"
    )


# Spellings whose arguments are in another order than the op whose samples they take.
SPELLING_ADAPTERS: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], tuple[Any, ...]]] = {
    # torch.where(cond, x, y) is spelled x.where(cond, y)
    "torch.Tensor.where": lambda args, kwargs: ((args[1], args[0], *args[2:]), kwargs),
}
# Parameters torch does not accept together: probing one drops the others from the sample.
EXCLUSIVE_PARAMS: dict[str, tuple[str, ...]] = {"unbiased": ("correction",), "correction": ("unbiased",)}


def op_stem(name: str) -> str:
    """The op a spelling belongs to: ``torch.Tensor.__radd__`` -> ``add``."""
    short = name.rsplit(".", 1)[-1]
    if short.startswith("__") and short.endswith("__"):
        return _OPERATOR_STEMS.get(short[2:-2], short[2:-2])
    return short


# ----------------------------------------------------------------------------------------
# Sample calls per spelling


def leaves(value: Any) -> Iterator[Any]:
    """The non-container values in nested tuples, lists, dicts and slices."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, slice):
        yield from (value.start, value.stop, value.step)
    else:
        yield value


def _is_complex(v: Any) -> bool:
    if isinstance(v, torch.Tensor):
        return v.dtype.is_complex
    if isinstance(v, torch.dtype):
        return v.is_complex
    return isinstance(v, complex)


def _out_of_scope(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why a sample needs a feature symscalar declares out of scope, or None."""
    values = list(leaves((args, kwargs)))
    if any(_is_complex(v) for v in values):
        return "complex numbers"
    if func is torch.Tensor.__getitem__ and any(
        isinstance(v, torch.Tensor) and v.dtype in (torch.bool, torch.uint8) for v in values[1:]
    ):
        return "boolean-mask indices (data-dependent shape)"
    if func is torch.Tensor.__getitem__ and any(isinstance(v, torch.Tensor) for v in values[1:]) and None in values[1:]:
        return "None among tensor indices"
    if func is torch.Tensor.view and any(isinstance(v, torch.dtype) for v in args[1:]):
        return "Tensor.view(dtype) bit reinterpretation"
    return None


def _as_spelling(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why the spelling ``func`` cannot take a sample's arguments (``2 + x`` has a number
    first: there is no ``Tensor`` method call for it), or None."""
    name = spelling_name(func)
    if name.startswith("torch.Tensor.") and (not args or not isinstance(args[0], torch.Tensor)):
        return "method spelling needs a tensor first argument"
    if name.startswith("torch.Tensor.__") and any(v is not None for v in kwargs.values()):
        return "operator spelling takes no keyword arguments"
    return None


def _sources(func: Any) -> list[Any]:
    stem = op_stem(spelling_name(func))
    stems = (stem, *STEM_ALIASES.get(stem, ()))
    found = []
    for info in opinfos():
        target = opinfo_callable(info)
        if target is not None and op_stem(spelling_name(target)) in stems:
            found.append(info)
    return found


def _samples(info: Any) -> Iterator[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """Up to MAX_SAMPLES samples of ``info``, deterministic: the i-th sample of the i-th dtype
    (round-robin), so that both the sample variety and the dtypes are covered."""
    supported = info.dtypes()
    per_dtype: list[tuple[Any, list[Any]]] = []
    for dtype in SAMPLE_DTYPES:
        if dtype in supported:
            torch.manual_seed(0)
            per_dtype.append((dtype, list(itertools.islice(info.sample_inputs("cpu", dtype), MAX_SAMPLES))))
    for i in range(MAX_SAMPLES):
        for k in range(len(per_dtype)):
            dtype, samples = per_dtype[(i + k) % len(per_dtype)]
            if i < len(samples):
                sample = samples[i]
                yield f"{info.name}[{dtype}]#{i}", tuple(sample.args), dict(sample.kwargs)
                break


@functools.cache
def calls_for(func: Any) -> list[Call | Skip]:
    """Sample calls of the registered spelling ``func``, from every OpInfo of its op."""
    out: list[Call | Skip] = []
    hand = HAND_SAMPLES.get(op_stem(spelling_name(func)), [])
    for i, (args, kwargs) in enumerate(hand):
        reason = _as_spelling(func, args, kwargs)
        if reason is not None:
            out.append(Skip(reason, f"hand-written#{i}"))
        else:
            out.append(Call(func, args, kwargs, f"hand-written#{i}"))
    for info in _sources(func):
        target = opinfo_callable(info)
        for source, args, kwargs in _samples(info):
            if info.name in OPINFO_CALLS:
                converted = OPINFO_CALLS[info.name][1](args, kwargs)
                if converted is None:
                    out.append(Skip("thunder-only signature (no single torch call)", source))
                    continue
                args, kwargs = converted
            adapter = SPELLING_ADAPTERS.get(spelling_name(func))
            if adapter is not None and len(args) >= 2:
                args, kwargs = adapter(args, kwargs)
            reason = _out_of_scope(target, args, kwargs) or _as_spelling(func, args, kwargs)
            if reason is not None:
                out.append(Skip(reason, source))
                continue
            if spelling_name(func).startswith("torch.Tensor.__"):
                kwargs = {}  # only None-valued (torch's defaults) are left: `a / b` passes none
            out.append(Call(func, args, kwargs, source))
    return out


# ----------------------------------------------------------------------------------------
# Running a call inside symscalar.jit


def _template(value: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _TensorSlot(len(tensors) - 1)
    if isinstance(value, (tuple, list)):
        return type(value)(_template(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: _template(v, tensors) for k, v in value.items()}
    return value


def fill(template: Any, tensors: tuple[Any, ...], dynamic: tuple[Any, ...]) -> Any:
    """Put (traced) tensors and dynamic values into a call template."""
    if isinstance(template, _TensorSlot):
        return tensors[template.index]
    if isinstance(template, Dyn):
        return dynamic[template.index]
    if isinstance(template, (tuple, list)):
        return type(template)(fill(v, tensors, dynamic) for v in template)
    if isinstance(template, dict):
        return {k: fill(v, tensors, dynamic) for k, v in template.items()}
    return template


def jitted(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], n_dynamic: int = 0
) -> tuple[Any, tuple[torch.Tensor, ...]]:
    """A jitted function calling ``func`` with ``args``/``kwargs``, and its tensor inputs.

    Tensors in the arguments become jit inputs; numbers stay static literals, except ``Dyn(i)``
    placeholders, which become the dynamic parameters ``d0..d3`` of the jitted function.
    Call it as ``f(tensors, *dynamic_values)``. A call with no tensor and no dynamic value
    calls the registered handler directly (torch would not dispatch it to symscalar).
    """
    if n_dynamic > MAX_DYNAMIC:
        raise ValueError(f"at most {MAX_DYNAMIC} dynamic parameters, got {n_dynamic}")
    tensors: list[torch.Tensor] = []
    template = _template((args, kwargs), tensors)

    # With no traced operand, torch never dispatches to symscalar (``torch.zeros((2, 3))``
    # runs eagerly before any proxy is seen); call the registered handler itself then.
    direct = not tensors and n_dynamic == 0

    def traced(tensors, d0=None, d1=None, d2=None, d3=None):  # type: ignore[no-untyped-def]
        a, k = fill(template, tensors, (d0, d1, d2, d3))
        if direct:
            return TORCH_FUNCTIONS[func](*a, **k)
        return invoke(func, a, k)

    traced.__name__ = "op_" + spelling_name(func).rsplit(".", 1)[-1].strip("_")
    f = symscalar.jit(traced, dynamic=[f"d{i}" for i in range(n_dynamic)])
    return f, tuple(tensors)


_STATIC_RUNS: dict[int, tuple[Any, Any, BaseException | None]] = {}


def run_static(call: Call) -> tuple[Any, Any]:
    """Run ``call`` inside ``symscalar.jit`` with static numbers: ``(jitted function, output)``.

    Memoized per call (the calls of ``calls_for`` are shared), so that the conformance test
    and the op-table generator trace each sample once; an error is re-raised on every use.
    """
    if id(call) not in _STATIC_RUNS:
        f, tensors = jitted(call.func, call.args, call.kwargs)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                _STATIC_RUNS[id(call)] = (f, f(tensors), None)
        except Exception as e:  # noqa: BLE001 - re-raised to each caller
            _STATIC_RUNS[id(call)] = (f, None, e)
    f, out, error = _STATIC_RUNS[id(call)]
    if error is not None:
        raise error
    return f, out


def substitute(call: Call, replacements: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """``call``'s arguments with some parameters (by handler parameter name) replaced, each
    where the call passed it (positionally or by keyword; by keyword if it was not passed),
    so that the call keeps torch's form. None if the call does not bind to the handler."""
    bound = bind_call(call)
    if bound is None:
        return None
    params = bound.signature.parameters
    positional = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    args, kwargs = list(call.args), dict(call.kwargs)
    for name, value in replacements.items():
        if name in kwargs:
            kwargs[name] = value
        elif params[name].kind is inspect.Parameter.VAR_POSITIONAL:
            args = args[: len(positional)] + list(value)
        elif name in positional and positional.index(name) < len(args):
            args[positional.index(name)] = value
        else:
            kwargs[name] = value
    return tuple(args), kwargs


def dynamic_positions(call: Call) -> tuple[tuple[Any, ...], dict[str, Any], list[Any]] | None:
    """The call with every number that sits in a dynamic-capable parameter replaced by a
    ``Dyn`` placeholder: ``(args, kwargs, values)``, or None when there is none."""
    bound = bind_call(call)
    if bound is None:
        return None
    capable = dynamic_params(call.func)
    replacements: dict[str, Any] = {}
    values: list[Any] = []
    for name, value in bound.arguments.items():
        if name in capable and isinstance(value, (int, float)) and len(values) < MAX_DYNAMIC:
            replacements[name] = Dyn(len(values))
            values.append(value)
    if not values:
        return None
    args, kwargs = substitute(call, replacements)  # type: ignore[misc]
    return args, kwargs, values
