"""Losses with torch's own kernels and no meta kernel: ``ctc_loss``.

torch has no meta kernel for ``aten::_ctc_loss`` (its intermediate ``log_alpha`` is sized by
the longest target, a value), so the opaque torch call cannot find its result's shape. The
result's shape does not depend on values (one loss per batch element, or their reduction), so
it is a primitive here: torch's kernel forward, torch's own derivative backward (run by
``torch.autograd`` on the kernel, as eager's backward runs it). Speech models train with it
(transformers' wav2vec2, HuBERT, Data2VecAudio ``ForCTC`` heads).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from symscalar.ops.define import (
    StaticBool,
    StaticInt,
    Tensor,
    TensorProxy,
    TensorVar,
    autograd_backward,
    defop,
    register_vjp,
)
from symscalar.trace import Primitive

__all__ = ["ctc_loss"]

_REDUCTIONS = ("none", "mean", "sum")


def _ctc_loss_impl(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    *,
    blank: int,
    reduction: str,
    zero_infinity: bool,
) -> Any:
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank=blank, reduction=reduction, zero_infinity=zero_infinity
    )


def _ctc_loss_meta(
    log_probs: TensorVar, targets: TensorVar, input_lengths: TensorVar, target_lengths: TensorVar, **params: Any
) -> TensorVar:
    batch = () if len(log_probs.shape) == 2 else (log_probs.shape[1],)
    return TensorVar(batch if params["reduction"] == "none" else (), log_probs.dtype, log_probs.device)


ctc_loss_p = Primitive("ctc_loss", _ctc_loss_impl, _ctc_loss_meta)
# torch's derivative of _ctc_loss has no derivative itself: double backward raises, as in eager
ctc_loss_backward_p = Primitive("ctc_loss_backward", *autograd_backward(_ctc_loss_impl))
register_vjp(
    ctc_loss_p,
    lambda ct, out, log_probs, *rest, **params: (
        (ctc_loss_backward_p.bind(ct, log_probs, *rest, **params),) + (None,) * len(rest)
    ),
)


@defop(torch=(F.ctc_loss,))
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor,
    target_lengths: Tensor,
    blank: StaticInt = 0,
    reduction: str = "mean",
    zero_infinity: StaticBool = False,
) -> Tensor:
    """The connectionist temporal classification loss, as ``F.ctc_loss`` (torch's kernel and
    derivative). ``input_lengths`` and ``target_lengths`` are tensors or sequences of ints;
    ``targets`` padded ``(N, S)`` or concatenated."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    lengths = [
        v if isinstance(v, (TensorProxy, torch.Tensor)) else torch.tensor(list(v), dtype=torch.long)
        for v in (input_lengths, target_lengths)
    ]
    return ctc_loss_p.bind(log_probs, targets, *lengths, blank=blank, reduction=reduction, zero_infinity=zero_infinity)
