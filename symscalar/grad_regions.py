"""Grad regions of a traced function: which values require grad, and where the gradient stops.

The traced function may change the grad mode inside itself (``with torch.no_grad():``, an
``enable_grad()`` region in a function called without grad). ``GradRegions`` follows eager
autograd through them, for the ``tracer.TraceBuilder`` it serves: it records whether each
value requires grad, inserts ``stop_gradient`` (``detach``) where a region without grad computes
from values that require grad, and notes when the program must run with autograd
(``grad_inside``) because a region built a graph eager torch would build.
"""

from __future__ import annotations

from typing import Any

import torch

from symscalar.errors import UnsupportedOperationError
from symscalar.nvfuser_lowering import register_nvfuser
from symscalar.recorder import Recorder
from symscalar.trace import Atom, Eqn, Primitive, TensorVar, Var, register_vjp

__all__ = ["GradRegions", "stop_gradient_p", "check_leaf_outputs"]


# ---- stop_gradient: the value, without a gradient. The tracer inserts it where the traced
# function computes with grad disabled (``with torch.no_grad():``), and ``detach`` is it.
def _stop_gradient_meta(x: TensorVar) -> TensorVar:
    return TensorVar(x.shape, x.dtype, x.device)


stop_gradient_p = Primitive(
    "stop_gradient",
    torch.Tensor.detach,
    _stop_gradient_meta,
    may_alias=True,  # detach() shares storage
)
register_vjp(stop_gradient_p, lambda ct, out, x: (None,))
register_nvfuser(stop_gradient_p, lambda fd, x: fd.ops.set(x))


class GradRegions:
    """The grad-mode concern of one trace: reads and extends its recorder's ``requires_grad``
    and equations."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        # Grad mode when tracing started: a region of the traced function that runs with grad
        # disabled while it was enabled here (``with torch.no_grad():`` inside the function)
        # gets a ``stop_gradient`` on what it computes from values that require grad.
        self.grad_enabled_at_start = torch.is_grad_enabled()
        self.inference_at_start = torch.is_inference_mode_enabled()
        # Set when a function called without grad computes, in an ``enable_grad()`` region, a
        # value that requires grad: the program then runs with autograd, as eager builds a graph.
        self.grad_inside = False
        # Values computed without grad from ones that require grad (a call without grad), and
        # their stop_gradient where an enable_grad() region or an output of such a call uses them.
        self._no_grad_values: set[TensorVar] = set()
        self._cuts: dict[TensorVar, TensorVar] = {}
        # values computed inside a torch.inference_mode() region the traced function entered:
        # eager returns them as inference tensors (see _jit/compile.py)
        self.inference_values: set[TensorVar] = set()
        # computed values the function made require grad (``y.requires_grad_()``): eager makes
        # each a leaf of the graph, whose gradient reaches no tensor of the caller
        self.leaves: set[TensorVar] = set()

    def start(self) -> None:
        """Tracing starts now: the grad mode of the call is the current one."""
        self.grad_enabled_at_start = torch.is_grad_enabled()
        self.inference_at_start = torch.is_inference_mode_enabled()

    def operands(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        """An equation's operands, cut where grad is on and a value was computed without it."""
        if self._no_grad_values and torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
            atoms = tuple([self.cut(a) for a in atoms])
        return atoms

    def outputs(self, atoms: tuple[Atom, ...]) -> tuple[Atom, ...]:
        """The program's outputs: run with autograd, what was computed without grad carries none."""
        if self.grad_inside:
            atoms = tuple(self.cut(a) for a in atoms)
        return atoms

    def propagate_requires_grad(
        self, prim: Primitive[Any], atoms: tuple[Atom, ...], outs: tuple[Var, ...]
    ) -> tuple[Var, ...]:
        """Record whether each output requires grad, as eager autograd would decide it; in a
        region where the traced function disabled grad, cut the gradient with stop_gradient."""
        if prim is stop_gradient_p:
            return outs
        requires_grad = self._recorder.requires_grad
        from_grad = False
        for a in atoms:
            if isinstance(a, TensorVar) and requires_grad.get(a, False):
                from_grad = True
                break
        if not from_grad and not self._no_grad_values:
            return outs  # nothing to record, whatever the grad mode
        grad_on = torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
        if not grad_on and not self.grad_enabled_at_start:
            # a call without grad: values computed from ones that require grad carry none, which
            # matters only if an enable_grad() region uses them (see ``cut``)
            if from_grad or any(a in self._no_grad_values for a in atoms):
                self._no_grad_values.update(v for v in outs if isinstance(v, TensorVar))
            return outs
        if not from_grad:
            return outs
        if grad_on:
            if not self.grad_enabled_at_start:
                self.enter()
            for v in outs:
                if isinstance(v, TensorVar):
                    requires_grad[v] = v.dtype.is_floating_point or v.dtype.is_complex
            return outs
        return tuple(self.stop_gradient(v) if isinstance(v, TensorVar) else v for v in outs)

    def enter(self) -> None:
        """An op under ``torch.enable_grad()`` (or ``set_grad_enabled(True)``) in a function
        called without grad builds a graph in eager torch: the program is run with autograd
        (``grad_inside``), and values computed without grad are cut where they are used."""
        if self.inference_at_start:
            raise UnsupportedOperationError(
                f"{self._recorder.name} is called under torch.inference_mode() and computes, inside a "
                "torch.inference_mode(False) region, a value that requires grad: eager torch builds "
                "a graph there but refuses to save inference tensors (the arguments) for backward. "
                "Fix: call it under torch.no_grad() instead of inference_mode, or move the region "
                "that needs gradients outside the jitted function."
            )
        self.grad_inside = True

    def cut(self, atom: Atom) -> Atom:
        """``atom`` as a value with grad enabled: a value computed without grad (from one that
        requires grad) carries no gradient, as in eager torch."""
        if not isinstance(atom, TensorVar) or atom not in self._no_grad_values:
            return atom
        cut = self._cuts.get(atom)
        if cut is None:
            cut = self._cuts[atom] = self.stop_gradient(atom)
        return cut

    def stop_gradient(self, var: TensorVar) -> TensorVar:
        recorder = self._recorder
        out = TensorVar(var.shape, var.dtype, var.device)
        recorder.eqns.append(Eqn(stop_gradient_p, (var,), {}, (out,)))
        recorder._created(out)
        recorder.requires_grad[out] = False
        return out

    def set_requires_grad(self, var: TensorVar, value: Any, *, computed: bool, attribute: bool) -> bool:
        """``y.requires_grad_(value)`` (``attribute``: ``y.requires_grad = value``) on the
        traced value ``var``, with eager autograd's rules. A computed value that does not
        require grad is a leaf: it becomes one that requires grad (wav2vec2's feature encoder,
        transformers' ``enable_input_require_grads`` hook); on a value that requires grad only
        ``requires_grad_(True)`` is allowed, a no-op. Returns False where the flag of a tensor
        of the caller would change (``computed`` is False): the caller refuses that."""
        if type(value) is not bool:
            if attribute:
                raise RuntimeError("requires_grad must be a bool")
            raise TypeError(
                f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not {type(value).__name__}"
            )
        requires = self._recorder.requires_grad.get(var, False)
        if not computed:
            return value == requires and not attribute
        if requires and var not in self.leaves:  # a value computed from one that requires grad
            if value and not attribute:
                return True
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables."
                + (
                    ""
                    if value
                    else " If you want to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach()."
                )
            )
        if value and not (var.dtype.is_floating_point or var.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._recorder.requires_grad[var] = value
        if value:
            self.leaves.add(var)
        else:
            self.leaves.discard(var)
        return True


def check_leaf_outputs(recorder: Recorder, leaves: set[TensorVar], outputs: Any, with_grad: set[Any] | None) -> None:
    """Refuse a program whose output requires grad in eager only through a leaf the function
    made (``y.requires_grad_()`` on a value computed from no input that requires grad): the
    compiled program's outputs require grad through its inputs only (``with_grad``: the values
    computed from inputs that require grad, None when it runs without autograd)."""
    if not leaves:
        return
    for out in outputs:
        if isinstance(out, TensorVar) and recorder.requires_grad.get(out, False) and out not in (with_grad or ()):
            raise UnsupportedOperationError(
                f"{recorder.name} returns a value that requires grad only because the function called "
                "requires_grad_() (or set .requires_grad = True) on a tensor it computed from inputs that do "
                "not require grad: eager returns a graph whose gradient reaches no tensor of the caller, which "
                "symscalar.jit does not build. Fix: make an input or parameter the value depends on require "
                "grad, or call requires_grad_() on the jitted function's result."
            )
