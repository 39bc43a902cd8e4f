"""A traced function's result: its traced leaves are the program's outputs, the rest is
rebuilt around them on every call, with the structure eager returns (see ``tree.py``)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Any

import torch

from symscalar._jit import tree
from symscalar._jit.cache import MISS
from symscalar._jit.params import NUMPY_SCALARS
from symscalar.proxy import TensorProxy
from symscalar.trace import format_static
from symscalar.types import NumberProxy

__all__ = ["Output", "with_state_outputs", "finish_with_state"]

# Static values a jitted function may return besides traced ones (returned as they were at
# trace time, so only immutable ones); those whose repr is Python source are inlined.
_STATIC_OUTPUTS: tuple[type, ...] = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    type(None),
    torch.dtype,
    torch.device,
    torch.layout,
    torch.memory_format,
    enum.Enum,
    torch.Size,
    *NUMPY_SCALARS,
)
_LITERAL_OUTPUTS = frozenset({bool, int, float, str, type(None), torch.dtype, torch.device, torch.Size})
_LITERAL_NODES = frozenset({tuple, list, dict})
_LITERAL_KEYS = frozenset({bool, int, float, str, type(None)})


class Output:
    """The traced function's result as a pytree. A structure of tuples, lists, dicts with
    literal keys and literal leaves is generated as one Python expression (no per-call
    cost); any other registered node (NamedTuple, ModelOutput...) goes through
    ``tree.unflatten``."""

    def __init__(self, result: Any, where: str) -> None:
        values, self.spec = tree.flatten(result)
        self.leaves = [v for v in values if isinstance(v, (TensorProxy, NumberProxy))]
        self.positions = [j for j, v in enumerate(values) if isinstance(v, (TensorProxy, NumberProxy))]
        for j, v in enumerate(values):
            if not isinstance(v, (TensorProxy, NumberProxy, *_STATIC_OUTPUTS)):
                raise TypeError(_output_message(result, j, v, where))
        self.template = [None if isinstance(v, (TensorProxy, NumberProxy)) else v for v in values]
        self.inline = _is_literal(self.spec) and all(type(v) in _LITERAL_OUTPUTS for v in self.template)

    def render(self, names: list[str]) -> str:
        """The returned expression over the output names (see ``compile_trace``)."""
        if not self.inline:
            return "(" + "".join(f"{n}, " for n in names) + ")"
        outs = iter(names)
        traced = set(self.positions)
        texts = iter([next(outs) if j in traced else _literal(v) for j, v in enumerate(self.template)])
        return _render_spec(self.spec, texts)

    def wrap(self, run: Callable[..., Any]) -> Callable[..., Any]:
        if self.inline:
            return run
        template, positions, spec = self.template, self.positions, self.spec

        def run_and_unflatten(*args: Any) -> Any:
            outs = run(*args)
            if outs is MISS:  # an entry whose guards fail
                return outs
            values = template.copy()
            for j, out in zip(positions, outs):
                values[j] = out
            return tree.unflatten(values, spec)

        return run_and_unflatten


def with_state_outputs(render: Callable[[list[str]], str], n: int) -> Callable[[list[str]], str]:
    """The program returns ``(user's result, (state values...))`` when it writes state."""
    return lambda names: f"({render(names[:n])}, ({''.join(x + ', ' for x in names[n:])}))"


def finish_with_state(run: Callable[..., Any], output: Output) -> Callable[..., Any]:
    """Rebuild the user's result of a program that also returns state values."""
    if output.inline:
        return run
    finish = output.wrap(lambda flat: flat)

    def run_with_state(*args: Any) -> Any:
        user, new = run(*args)
        return finish(user), new

    return run_with_state


def _literal(v: Any) -> str:
    return f"torch.Size({list(v)!r})" if type(v) is torch.Size else format_static(v)


def _is_literal(spec: tree.TreeSpec) -> bool:
    if spec.is_leaf():
        return True
    if spec.type not in _LITERAL_NODES:
        return False
    if spec.type is dict and not all(type(k) in _LITERAL_KEYS for k in spec.context):
        return False
    return all(_is_literal(c) for c in spec.children())


def _render_spec(spec: tree.TreeSpec, texts: Iterator[str]) -> str:
    if spec.is_leaf():
        return next(texts)
    parts = [_render_spec(c, texts) for c in spec.children()]
    if spec.type is tuple:
        return "(" + "".join(f"{p}, " for p in parts) + ")"
    if spec.type is list:
        return "[" + ", ".join(parts) + "]"
    return "{" + ", ".join(f"{format_static(k)}: {p}" for k, p in zip(spec.context, parts)) + "}"


def _output_message(result: Any, index: int, value: Any, where: str) -> str:
    path = tree.leaf_path(result, index)
    at = f" at result{path}" if path else ""
    if isinstance(value, torch.Tensor):
        return (
            f"{where} returned a tensor{at} that was not computed from its inputs (a captured "
            "or newly created eager tensor); return traced values only"
        )
    return (
        f"{where} returned a value of type {type(value).__name__}{at}, which torch's pytree does not know as "
        "a container. A jitted function returns tensors and numbers, static values (None, "
        "str, dtype, device, enum members) and containers of those: tuple, list, dict, "
        "NamedTuple, transformers' ModelOutput, or a dataclass registered with "
        "torch.utils._pytree.register_dataclass."
    )
