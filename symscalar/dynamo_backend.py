"""symscalar as a ``torch.compile`` backend: ``torch.compile(model, backend="symscalar")``.

Why: dynamo captures graphs from arbitrary Python (graph breaks included); symscalar gives
each graph typed static/dynamic scalars, its own grad and its backends. This module is the
bridge: each graph dynamo hands over is run through ``symscalar.jit``.

How each FX graph's inputs are typed:

- tensors (parameters and buffers included: dynamo lifts them to inputs) are tensors;
- a float that dynamo made dynamic arrives as a 0-d float64 tensor read with ``.item()``
  (dynamo's ``specialize_float=False`` rule): the ``.item()`` is removed and the input is a
  ``DynamicFloat`` of the jitted function, so a new value is a cache hit for symscalar too;
- any other number (a ``SymInt`` dynamo made dynamic) is static: symscalar traces once per
  value (correct, never baked wrongly; dynamic sizes are symscalar's own ``dynamic_dims``).

Registered under the name ``"symscalar"`` with ``torch._dynamo.register_backend`` when this
module is imported, and through the ``torch_dynamo_backends`` entry point (pyproject.toml)
where symscalar is installed, so ``torch.compile(m, backend="symscalar")`` finds it without
an import. ``import symscalar`` does not import this module: importing dynamo costs seconds.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.backends import registry

from symscalar.jit import jit
from symscalar.types import DynamicFloat

__all__ = ["symscalar_backend", "dynamic_float_inputs"]


def _is_item(node: torch.fx.Node) -> bool:
    if node.op == "call_method" and node.target == "item":
        return True
    return node.op == "call_function" and node.target in (
        torch.ops.aten._local_scalar_dense.default,
        operator.methodcaller("item"),
    )


def dynamic_float_inputs(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> list[int]:
    """The positions of the inputs that stand for dynamic floats (0-d floating tensors used
    only through ``.item()``); their ``.item()`` nodes are replaced by the input itself."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    found: list[int] = []
    for i, (node, example) in enumerate(zip(placeholders, example_inputs)):
        if not (isinstance(example, torch.Tensor) and example.ndim == 0 and example.dtype.is_floating_point):
            continue
        users = list(node.users)
        if not users or not all(_is_item(u) for u in users):
            continue
        for user in users:
            user.replace_all_uses_with(node)
            gm.graph.erase_node(user)
        found.append(i)
    if found:
        gm.graph.lint()  # type: ignore[no-untyped-call]
    return found


def symscalar_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], **options: Any) -> Callable[..., Any]:
    """A dynamo backend: ``gm`` run by ``symscalar.jit(..., **options)`` (``backend=...``
    and the other jit options pass through ``torch.compile(options=...)``)."""
    floats = dynamic_float_inputs(gm, example_inputs)
    gm.recompile()
    _ = gm.code  # compiles dynamo's lazy GraphModule now, not inside the trace (a state write)
    n = len(example_inputs)
    names = [f"a{i}" for i in range(n)]
    annotations = {
        names[i]: DynamicFloat if i in floats else torch.Tensor if isinstance(v, torch.Tensor) else int
        for i, v in enumerate(example_inputs)
    }
    namespace: dict[str, Any] = {"gm": gm}
    exec(f"def dynamo_graph({', '.join(names)}):\n    return gm.forward({', '.join(names)})\n", namespace)  # noqa: S102
    program = namespace["dynamo_graph"]
    program.__annotations__ = annotations
    jitted: Callable[..., Any] = jit(program, **options)
    if not floats:
        return jitted
    float_positions = frozenset(floats)

    def run(*args: Any) -> Any:
        return jitted(*(float(a) if i in float_positions else a for i, a in enumerate(args)))

    run.jitted = jitted  # type: ignore[attr-defined]
    return run


# Found through the entry point, dynamo registers what it loads itself: register only where
# dynamo has not seen the name yet (an import of this module before any lookup).
if "symscalar" not in registry._BACKENDS:
    torch._dynamo.register_backend(symscalar_backend, name="symscalar")
