"""A call of a jitted function as its miss path reads it, walked once.

On a cache miss the arguments are checked against their kinds, compared with earlier calls
(``explain``'s facts), searched for state-holding objects (the roots of the entry's state
guard) and for unannotated numbers (the one-time warning after repeated retraces). Those
readers used to walk the arguments one after the other; ``record_call`` walks them once
(``tree.walk`` for each static or unannotated value) into a ``CallRecord`` they all read.
The per-call path of a hit does none of this: its key is built by the generated dispatcher.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import torch

from symscalar._jit import arguments, tree
from symscalar._jit.params import Kind

__all__ = ["Argument", "CallRecord", "record_call", "tensor_facts"]

# One value of a call: (parameter, keyword, description for messages, value); ``*args`` and
# ``**kwargs`` give one per value (see ``FunctionState._arguments``).
Argument = tuple[inspect.Parameter, str, str, Any]


@dataclasses.dataclass(frozen=True)
class CallRecord:
    """What the miss path knows about one call, from one walk of its arguments.

    Attributes:
        facts: the arguments' explain facts, ``{label: (display, comparable)}``; a static or
            unannotated value compares by its key (``tree.Walked.key``), a tensor by its
            metadata, a dynamic value by its type.
        objects: the state-holding objects among the static and unannotated arguments, with
            where each was passed; each once, first place first.
        auto_numbers: labels of the unannotated number parameters (not torch's ``DynamicInt``,
            not a parameter whose annotation could not be resolved).
        fixes: the fix to show next to a reason, by fact label.
    """

    facts: Mapping[str, tuple[str, Any]]
    objects: tuple[tuple[str, Any], ...]
    auto_numbers: tuple[str, ...]
    fixes: Mapping[str, str]


def record_call(
    items: Sequence[Argument],
    values: Mapping[str, Any],
    kinds: Mapping[str, Kind],
    optional: Collection[str],
    unresolved: Mapping[str, str],
    declared_at: str | None,
    suffix: str,
) -> CallRecord:
    """Check each value of a call against its parameter's kind (a ``TypeError`` saying what to
    pass) and record it. ``items``: the call's values (``Argument``); ``values``: the value
    of each parameter by name; ``suffix``: what the descriptions end with (`` of f``), left
    out of the fact labels."""
    facts: dict[str, tuple[str, Any]] = {}
    objects: dict[int, tuple[str, Any]] = {}
    for p, _, where, value in items:
        kind = kinds[p.name]
        walked = None
        if not (value is None and p.name in optional):
            walked = arguments.check_argument(kind, value, where)
        if walked is not None:
            for obj in walked.objects:
                objects.setdefault(id(obj), (where, obj))
        label = where.removesuffix(suffix)
        if isinstance(value, torch.Tensor) and kind in (Kind.TENSOR, Kind.AUTO):
            facts.update(tensor_facts(label.replace("parameter", "tensor", 1), value))
        elif walked is not None:
            facts[label] = (_shown(walked.shown), walked.key)
        else:
            facts[f"{label} type"] = (type(value).__name__, type(value))
    auto_numbers, fixes = _numbers_and_fixes(values, kinds, unresolved, declared_at)
    return CallRecord(facts, tuple(objects.values()), auto_numbers, fixes)


def _numbers_and_fixes(
    values: Mapping[str, Any], kinds: Mapping[str, Kind], unresolved: Mapping[str, str], declared_at: str | None
) -> tuple[tuple[str, ...], dict[str, str]]:
    numbers = []
    fixes = {}
    at = f", declared at {declared_at}" if declared_at else ""
    for name, value in values.items():
        kind = kinds[name]
        label = f"parameter '{name}'"
        auto_number = kind is Kind.AUTO and _is_plain_number(value) and not tree.is_torch_dynamic_int(value)
        if name in unresolved:
            fixes[label] = (
                f"its annotation {unresolved[name]} could not be resolved, so it is static; "
                "import the name at module level, or pass jit(..., dynamic=[...])"
            )
        elif kind is Kind.STATIC:  # declared static on purpose: each value is its own program
            fixes[label] = f"static{at}"
        elif auto_number:
            annotation = _dynamic_annotation(value)
            fixes[label] = f"unannotated, so static{at}: annotate it {annotation} to make it a runtime input"
        if auto_number and name not in unresolved:
            numbers.append(label)
    return tuple(numbers), fixes


def tensor_facts(label: str, t: torch.Tensor) -> dict[str, tuple[str, Any]]:
    return {
        f"{label} shape": (str(tuple(t.shape)), tuple(t.shape)),
        f"{label} dtype": (str(t.dtype), t.dtype),
        f"{label} device": (str(t.device), t.device),
        f"{label} requires_grad": (str(t.requires_grad), t.requires_grad),
        f"{label} class": (type(t).__qualname__, type(t)),
    }


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_plain_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, torch.Tensor)


def _dynamic_annotation(value: Any) -> str:
    if isinstance(value, bool):
        return "DynamicBool"
    return "DynamicInt" if isinstance(value, int) else "DynamicFloat"
