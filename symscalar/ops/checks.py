"""Checks on tensor values inside a traced function, recorded as runtime checks.

Libraries validate their inputs with a Python branch on tensor values, ``if labels.max() >=
vocab_size: raise ValueError(...)`` (transformers' wav2vec2 and HuBERT), ``assert (x >= 0).all()``
or ``torch._assert(cond, msg)``. The value is unknown while tracing, so a plain ``bool()`` of a
traced tensor is refused. These three forms need no value: one branch only raises, so the trace
follows the other and records the condition as a check that runs on every call and raises
``CheckFailedError`` where eager would raise (``symscalar.check``'s semantics for a tensor).

- ``if cond: raise ...`` / ``assert cond``: found from the bytecode of the frame that asks for
  ``bool()`` (``assumed_branch``): the jump that called it and the block it skips, which must
  only build the exception and raise it. Any other use of ``bool()`` keeps the refusal.
- ``torch._assert(cond, msg)`` on a traced tensor: the same check, with ``msg``.
"""

from __future__ import annotations

import dis
import math
import types
from typing import Any

import torch

from symscalar.errors import CheckFailedError
from symscalar.ops.define import (
    TensorProxy,
    TensorVar,
    TraceBuilder,
    UnsupportedOperationError,
    current_tracer,
    implements,
)
from symscalar.proxy import register_bool_check
from symscalar.trace import Primitive

__all__ = ["tensor_check_p", "assumed_branch"]


def _tensor_check_impl(pred: Any, *, message: str, raises_if: bool) -> None:
    if bool(pred) is raises_if:
        raise CheckFailedError(message)


def _tensor_check_meta(pred: TensorVar, *, message: str, raises_if: bool) -> None:
    if not isinstance(pred, TensorVar) or math.prod(pred.shape) != 1:
        raise TypeError("tensor_check takes a tensor of one element")


# A runtime check of a one-element tensor recorded for a branch that only raises: raises
# ``CheckFailedError(message)`` when ``bool(pred)`` is ``raises_if``. No outputs, no gradient.
tensor_check_p: Primitive[None] = Primitive("tensor_check", _tensor_check_impl, _tensor_check_meta)

# What the block that raises may do before ``RAISE_VARARGS``: load values, build the exception
# (a call: it runs only when eager raises, where the program raises too) and its message.
_RAISE_BLOCK = frozenset(
    "CACHE NOP PUSH_NULL LOAD_GLOBAL LOAD_CONST LOAD_FAST LOAD_FAST_CHECK LOAD_FAST_LOAD_FAST LOAD_DEREF "
    "LOAD_ATTR LOAD_METHOD LOAD_ASSERTION_ERROR FORMAT_VALUE FORMAT_SIMPLE FORMAT_WITH_SPEC CONVERT_VALUE "
    "BUILD_STRING BUILD_TUPLE KW_NAMES PRECALL CALL CALL_KW BINARY_OP COPY SWAP".split()
)
# the conditional jumps that ask for bool() (3.11's forward jumps; 3.13 asks at TO_BOOL, before one)
_JUMPS = {
    "POP_JUMP_IF_FALSE": False,
    "POP_JUMP_IF_TRUE": True,
    "POP_JUMP_FORWARD_IF_FALSE": False,
    "POP_JUMP_FORWARD_IF_TRUE": True,
}


def _raising_block(instructions: list[dis.Instruction], start: int) -> bool:
    for ins in instructions[start:]:
        if ins.opname == "RAISE_VARARGS":
            return ins.arg == 1  # `raise E(...)`, not a bare re-raise
        if ins.opname not in _RAISE_BLOCK:
            return False
    return False


def assumed_branch(frame: types.FrameType | None) -> tuple[bool, str] | None:
    """Where ``frame`` is deciding a conditional jump whose fall-through block only raises:
    the value of the condition under which it does not raise, and the line; else None."""
    if frame is None:
        return None
    instructions = list(dis.get_instructions(frame.f_code))
    at = next((i for i, ins in enumerate(instructions) if ins.offset == frame.f_lasti), None)
    if at is not None and instructions[at].opname == "TO_BOOL" and at + 1 < len(instructions):
        at += 1
    if at is None or instructions[at].opname not in _JUMPS:
        return None
    if not _raising_block(instructions, at + 1):
        return None
    positions = instructions[at].positions
    line = positions.lineno if positions is not None and positions.lineno is not None else frame.f_lineno
    # POP_JUMP_IF_FALSE falls through (into the raise) when the condition is true
    return _JUMPS[instructions[at].opname], f"{frame.f_code.co_filename}:{line}"


def _record(proxy: TensorProxy, raises_if: bool, message: str) -> None:
    tracer = current_tracer.get()
    if isinstance(tracer, TraceBuilder) and (tracer.inplace.write_backs or tracer.inplace.state_changed()):
        # eager has updated the state when it raises; the program writes state back after it
        # ran, so a failed check would leave the state one update behind eager's
        raise UnsupportedOperationError(
            "a check of a tensor that raises (`if cond: raise`, `assert`, `torch._assert`) after the "
            "function updated state in place (a buffer, a parameter, a KV cache or other state object passed to it): "
            "when it fails, eager has applied the update and the program has not. Fix: check before the "
            "update, or use symscalar.check"
        )
    pred: Any = proxy if proxy.dtype is torch.bool else torch.ne(proxy, 0)  # type: ignore[call-overload]
    tensor_check_p.bind(pred, message=message, raises_if=raises_if)


def _bool_check(proxy: TensorProxy, frame: types.FrameType | None) -> bool | None:
    """``bool(proxy)`` in ``if cond: raise`` or ``assert cond``: recorded as a runtime check,
    returning the branch that does not raise; None (refused) anywhere else."""
    if math.prod(proxy.shape) != 1:
        return None
    found = assumed_branch(frame)
    if found is None:
        return None
    raises_when_false, where = found
    _record(
        proxy,
        not raises_when_false,
        f"a check on tensor values at {where} failed: the branch there raises in eager torch (symscalar.jit "
        "traced the branch that does not raise and checks the condition on every call)",
    )
    return raises_when_false


register_bool_check(_bool_check)


@implements(torch._assert)
def _torch_assert(condition: Any, message: str) -> None:
    if not isinstance(condition, TensorProxy):
        assert condition, message
        return
    if math.prod(condition.shape) != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    _record(condition, False, str(message))
