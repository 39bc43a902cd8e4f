"""Which operands of the equation a vjp rule is running for get a gradient: grad.py sets it
around each rule (``wanting``), and a rule asks (``gradient_wanted``) before it reads an operand
only to order another's gradient as eager does (the 2-d products' backward reads the input's
strides only where the input is saved anyway for the weight's gradient)."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

__all__ = ["gradient_wanted", "wanting"]

# Which positional arguments of the equation a vjp rule is running for get a gradient (grad.py
# sets it around each rule; None outside one). A rule may read an operand to compute another's
# gradient only where that operand is saved anyway: see ``gradient_wanted``.
_WANTED: contextvars.ContextVar[tuple[bool, ...] | None] = contextvars.ContextVar("vjp_wanted", default=None)


@contextlib.contextmanager
def wanting(wanted: tuple[bool, ...]) -> Iterator[None]:
    """Run a vjp rule knowing which of its arguments get a gradient."""
    token = _WANTED.set(wanted)
    try:
        yield
    finally:
        _WANTED.reset(token)


def gradient_wanted(i: int) -> bool:
    """Whether the vjp rule now running computes a gradient for its argument ``i`` (True when
    unknown: a rule called outside grad.py)."""
    wanted = _WANTED.get()
    return True if wanted is None or i >= len(wanted) else wanted[i]
