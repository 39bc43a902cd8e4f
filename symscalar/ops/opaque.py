"""The opaque torch call: any torch function without a hand-written op, run by torch itself.

Hand-writing every op of torch's surface will never close the gap, so a torch function or
``Tensor`` method that has no handler is recorded as one equation calling it::

    t1, = prims.torch_call(t0, call=('call', 'torch.diff', (Ellipsis,), (('dim', 0),)), expect=(...))

``call`` is a *recipe*, a static value that prints as Python: the torch callable's name, its
arguments with ``Ellipsis`` where the equation's operands go (tensors and dynamic numbers),
and its keywords. ``expect`` holds each result's shape, dtype and device, found while tracing
by running the call on meta tensors (torch's meta and fake kernels: exact shapes, dtypes and
validation); the lowering checks every result against it, so a result that differs (a meta
kernel wrong about its op) raises instead of running on with a wrong shape.

- **vjp**: torch's own derivative. The cotangents are computed by a second opaque call whose
  recipe is ``('vjp', inner, n_cotangents, differentiable_positions)``: it runs the inner
  recipe under ``torch.enable_grad()`` and ``torch.autograd.grad``. It is itself an opaque
  call with a vjp of the same kind (``('vjp', ('vjp', ...))``), so double backward works;
  where grad mode is on when it runs, it builds a graph (``create_graph``) instead of
  detaching its operands.
- **contract**: from the op's schema (``aten::<name>``) or, for a Python function, its
  annotations: a dynamic number in an ``int``/``int[]``/``bool``/... parameter raises
  ``StaticValueRequiredError``; in a ``Scalar``/``float`` one it is a runtime input, after
  checking that the result's shape and dtype do not depend on its value.
- **refused**, with the reason: random ops (``nondeterministic_seeded``), calls that write
  into an operand (in-place), data-dependent output shapes (``dynamic_output_shape``, or a
  meta kernel that reads values), non-tensor results, arguments that do not print as Python
  (generators, callables), ops with no meta kernel. Results that are views of an operand go
  through ``torch_view_call``, which may alias (no in-place update is traced on them).
- **backends**: the torch backend calls it; nvFuser has no lowering for it, so it is a torch
  step between fusions.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from symscalar.errors import StaticValueRequiredError, UnsupportedOperationError
from symscalar.frontend import data_dependent_shape_error, public_name, register_fallback
from symscalar.ops.common import Tensor
from symscalar.ops.define import TensorProxy, TraceBuilder, static_message
from symscalar.size_ops import size_of
from symscalar.sizes import hint, is_symbolic_shape, register_shape_rule, register_size_params
from symscalar.trace import DISCONNECTED, Atom, Primitive, TensorVar, register_vjp
from symscalar.types import NumberProxy, current_tracer

__all__ = ["torch_call_p", "torch_view_call_p", "opaque_handler", "run_recipe", "register_opaque_shape_rule"]

# An example value of each dynamic number type, and a second one (shape invariance check).
_EXAMPLE: dict[type, tuple[Any, Any]] = {int: (2, 3), float: (2.0, 0.75), bool: (True, False)}
_STATIC_KINDS = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    torch.dtype,
    torch.device,
    torch.layout,
    torch.memory_format,
)
# schema types where a dynamic number is a runtime value (``Scalar`` prints as ``number``)
_DYNAMIC_SCHEMA_TYPES = frozenset(
    ["number", "float", "complex", "Optional[number]", "Optional[float]", "Optional[complex]", "List[float]"]
)
_DYNAMIC_ANNOTATIONS = frozenset(
    ["float", "Optional[float]", "float | None", "Number", "Optional[Number]", "complex"]
    + ["Optional[list[float]]", "Optional[List[float]]", "list[float]", "List[float]"]
)

# Torch callables whose CPU kernel depends on grad mode: eager's torch.lstm takes another kernel
# under no_grad (1 ulp off at batch 1), and a program's forward runs without grad mode; their
# opaque call runs in the grad mode eager had (on detached operands: no graph is built).
_GRAD_MODE_KERNELS = frozenset(["torch.lstm", "torch.gru", "torch.rnn_tanh", "torch.rnn_relu"])

# Torch callables an opaque call must not stand for, with the reason.
_REFUSED: dict[str, str] = {
    "as_strided": "its result depends on the memory layout of its operand, which the backend chooses",
    "set_": "it replaces a tensor's storage",
    "stride": "the memory layout of traced values is chosen by the backend",
    "data_ptr": "traced values have no storage while tracing",
    "tolist": "it reads tensor values",
    "item": "it reads tensor values",
    "equal": "its result is a Python bool computed from tensor values",
    "is_nonzero": "its result is a Python bool computed from tensor values",
    "allclose": "its result is a Python bool computed from tensor values",
    "get_rng_state": "it reads the global RNG state",
    "set_rng_state": "it writes the global RNG state",
    "segment_reduce": "torch.segment_reduce and torch._segment_reduce share a name but not a signature",
    "_segment_reduce": "torch.segment_reduce and torch._segment_reduce share a name but not a signature",
}


# ----------------------------------------------------------------------------------------
# Recipes: what an opaque call runs


@functools.cache
def _resolve(name: str) -> Any:
    """The torch callable of a public name (``torch.diff``, ``torch.Tensor.diff``)."""
    target: Any = torch
    for part in name.split(".")[1:]:
        target = getattr(target, part)
    return target


def _fill(template: Any, values: Sequence[Any], position: list[int]) -> Any:
    if template is Ellipsis:
        value = values[position[0]]
        position[0] += 1
        return value
    if type(template) in (tuple, list):
        return type(template)(_fill(t, values, position) for t in template)
    return template


def _placeholders(template: Any) -> int:
    if template is Ellipsis:
        return 1
    if type(template) in (tuple, list):
        return sum(_placeholders(t) for t in template)
    return 0


def _call_parts(recipe: tuple[Any, ...]) -> tuple[str, tuple[Any, ...], tuple[tuple[str, Any], ...]]:
    _, name, args, kwargs, *_ = recipe  # (then ("grad", positions): _GRAD_MODE_KERNELS)
    return name, args, kwargs


def _arity(recipe: tuple[Any, ...]) -> int:
    """How many operands (equation arguments) ``recipe`` takes."""
    if recipe[0] == "call":
        _, args, kwargs = _call_parts(recipe)
        return _placeholders(args) + _placeholders(tuple(v for _, v in kwargs))
    return int(recipe[2]) + _arity(recipe[1]) + len(_seeded(recipe))


def _seeded(recipe: tuple[Any, ...]) -> tuple[int, ...]:
    """The positions of a ``vjp`` recipe whose gradients start from a seed operand (see ``_run_vjp``)."""
    return tuple(recipe[4]) if len(recipe) > 4 else ()


def _repeated(recipe: tuple[Any, ...]) -> tuple[tuple[int, int], ...]:
    """``(position, first)`` pairs of a ``vjp`` recipe: the operand at ``position`` is the one at
    ``first`` (one tensor passed twice), and shares its leaf (see ``_run_vjp``)."""
    return tuple(recipe[5]) if len(recipe) > 5 else ()


def run_recipe(recipe: tuple[Any, ...], values: Sequence[Any]) -> tuple[Any, ...]:
    """Run ``recipe`` on ``values`` (its operands): the flat tuple of its results."""
    if recipe[0] == "call":
        name, args, kwargs = _call_parts(recipe)
        if recipe[4:] and not torch.is_grad_enabled():  # eager's kernel in eager's grad mode (_GRAD_MODE_KERNELS)
            return _run_as_with_grad(recipe, values)
        position = [0]
        call_args = _fill(args, values, position)
        call_kwargs = {k: _fill(v, values, position) for k, v in kwargs}
        return tuple(pytree.tree_leaves(_resolve(name)(*call_args, **call_kwargs)))
    return _run_vjp(recipe, values)


def _run_as_with_grad(recipe: tuple[Any, ...], values: Sequence[Any]) -> tuple[Any, ...]:
    """``recipe`` (``('call', ..., ('grad', positions))``) as eager ran it: in grad mode, the
    operands at ``positions`` requiring grad (fresh leaves: the graph is dropped)."""
    positions = recipe[4][1]
    leaves = [
        v.detach().requires_grad_(i in positions) if isinstance(v, torch.Tensor) else v for i, v in enumerate(values)
    ]
    with torch.enable_grad():
        results = run_recipe(recipe[:4], leaves)
    return tuple(r.detach() if isinstance(r, torch.Tensor) else r for r in results)


def _run_vjp(recipe: tuple[Any, ...], values: Sequence[Any]) -> tuple[Any, ...]:
    """``('vjp', inner, n_cts, positions[, seeded])``: the gradients of ``inner``'s differentiable
    results (with the given cotangents; None: no cotangent) w.r.t. its operands at
    ``positions``, by torch.autograd. With grad mode on (a vjp of this vjp is being taken, or
    the caller differentiates), operands that require grad are used as they are and the
    gradients carry a graph; otherwise the operands are detached leaves.

    The operands end with one seed per position of ``seeded``: the cotangent that operand
    accumulated from later ops. A view of the operand made after the call carries it, so it
    reaches the operand's buffer first and torch adds the call's uses onto it one by one, in
    eager's order (``SEEDED_VJPS`` in trace.py). An operand passed at several positions is one
    leaf (``_repeated``): torch adds its uses in the call to one buffer, interleaved, as eager's
    autograd does for ``F.cosine_similarity(x, x)``; its total comes back at its first position."""
    _, inner, n_cts, positions = recipe[:4]
    seeded = _seeded(recipe)
    n_args = len(values) - n_cts - len(seeded)
    cts, args = list(values[:n_cts]), list(values[n_cts : n_cts + n_args])
    seeds = list(values[n_cts + n_args :])
    graph = torch.is_grad_enabled()
    with torch.enable_grad():
        wrt = []
        for i in positions:
            a = args[i]
            if not (graph and a.requires_grad):
                a = args[i] = a.detach().requires_grad_(True)
            wrt.append(a)
        for position, first in _repeated(recipe):
            args[position] = args[first]
        outs = [o for o in run_recipe(inner, args) if _differentiable(o)]
        pairs = [(o, ct) for o, ct in zip(outs, cts) if ct is not None and o.requires_grad]
        pairs += [(args[i].view_as(args[i]), seed) for i, seed in zip(seeded, seeds)]
        if not pairs:
            return tuple(torch.zeros_like(a) for a in wrt)
        grads = torch.autograd.grad(
            [o for o, _ in pairs], wrt, [ct for _, ct in pairs], allow_unused=True, create_graph=graph
        )
    return tuple(g if g is not None else torch.zeros_like(a) for g, a in zip(grads, wrt))


def _differentiable(v: Any) -> bool:
    return isinstance(v, torch.Tensor) and (v.dtype.is_floating_point or v.dtype.is_complex)


# ----------------------------------------------------------------------------------------
# The primitives


def _impl(*values: Any, call: tuple[Any, ...], expect: tuple[Any, ...]) -> tuple[Any, ...]:
    results = run_recipe(call, values)
    if len(results) != len(expect) or any(
        not isinstance(r, torch.Tensor) or tuple(r.shape) != e[0] or r.dtype != e[1] for r, e in zip(results, expect)
    ):
        raise UnsupportedOperationError(
            f"symscalar: the opaque call {_describe(call)} returned {_types(results)} where tracing (torch's meta "
            f"kernel) said {[(list(e[0]), e[1]) for e in expect]}; the op's result depends on more than "
            "its operands' shapes and dtypes. Run it outside the jitted function."
        )
    return results


def _types(results: Sequence[Any]) -> list[Any]:
    return [(list(r.shape), r.dtype) if isinstance(r, torch.Tensor) else type(r).__name__ for r in results]


def _meta(*atoms: Atom, call: tuple[Any, ...], expect: tuple[Any, ...]) -> tuple[TensorVar, ...]:
    """The results ``expect`` declares (the handler found them by running the call on meta
    tensors; the lowering checks them at run time)."""
    if len(atoms) != _arity(call):
        raise TypeError(f"{_describe(call)} takes {_arity(call)} operands, got {len(atoms)}")
    return tuple(TensorVar(tuple(shape), dtype, torch.device(device)) for shape, dtype, device in expect)


torch_call_p: Primitive[tuple[Tensor, ...]] = Primitive("torch_call", _impl, _meta, multiple_results=True)
torch_view_call_p: Primitive[tuple[Tensor, ...]] = Primitive(
    "torch_view_call", _impl, _meta, multiple_results=True, may_alias=True
)


def _describe(call: tuple[Any, ...]) -> str:
    if call[0] == "call":
        return str(call[1])
    return f"the gradient of {_describe(call[1])}"


def _opaque_vjp(
    cts: tuple[Any, ...], outs: tuple[Any, ...], *args: Any, call: Any, expect: Any, seeds: Any = None
) -> list[Any]:
    """torch's own derivative, as an opaque call of the ``vjp`` recipe (see ``_run_vjp``); the
    gradients at the positions of ``seeds`` are totals, the seed added first (``SEEDED_VJPS``)."""
    diff_cts = tuple(ct for ct, out in zip(cts, outs) if _differentiable_proxy(out))
    candidates = tuple(i for i, a in enumerate(args) if _differentiable_proxy(a))
    connected = _connected(call, diff_cts, args, candidates)
    positions = tuple(i for i in candidates if i in connected)
    result: list[Any] = [DISCONNECTED if i in candidates else None for i in range(len(args))]
    if not positions:
        return result
    # one tensor at several positions: one leaf, its total at the first (eager's one buffer)
    first = {i: next(j for j in positions if args[j] is args[i]) for i in positions}
    repeated = tuple((i, j) for i, j in first.items() if i != j)
    positions = tuple(i for i in positions if first[i] == i)
    seeded = tuple(i for i in positions if seeds and i in seeds)
    recipe: tuple[Any, ...] = ("vjp", call, len(diff_cts), positions)
    if seeded or repeated:
        recipe += (seeded, repeated) if repeated else (seeded,)
    grads_expect = tuple((tuple(args[i].shape), args[i].dtype, args[i].device) for i in positions)
    grads = torch_call_p.bind(*diff_cts, *args, *(seeds[i] for i in seeded), call=recipe, expect=grads_expect)
    for i, g in zip(positions, grads):
        result[i] = g
    for i, _ in repeated:  # its uses are in the first position's total
        result[i] = None
    return result


def _differentiable_proxy(v: Any) -> bool:
    return isinstance(v, TensorProxy) and (v.dtype.is_floating_point or v.dtype.is_complex)


def _connected(call: tuple[Any, ...], cts: Sequence[Any], args: Sequence[Any], candidates: Sequence[int]) -> set[int]:
    """The positions among ``candidates`` that torch's autograd graph joins to the results
    (the others get no gradient, eager's None), found by running torch's derivative on meta
    tensors once: a missing derivative raises here, at trace time, naming the op."""
    try:
        try:
            grads = _derivative_graph(call, cts, args, candidates)
        except RuntimeError as e:
            if _NOT_DIFFERENTIABLE not in str(e):
                raise
            # an operand torch has no derivative for (soft_margin_loss's target, batch norm's
            # running statistics): it did not require grad in the forward (where torch raises
            # this too), so it gets none; the others are asked one at a time
            grads = [_derivative_graph(call, cts, args, (i,), skip=True)[0] for i in candidates]
    except Exception as e:  # noqa: BLE001 - any failure of torch's derivative
        raise UnsupportedOperationError(
            f"{_describe(call)} (an opaque torch call) cannot be differentiated by symscalar: torch's derivative "
            f"raised {type(e).__name__}: {str(e).splitlines()[0][:200]}. Detach its inputs, or compute "
            "it under torch.no_grad()."
        ) from None
    return {i for i, g in zip(candidates, grads) if g is not None}


# At most this many elements in the operands of a derivative probed on CPU zeros.
_CPU_PROBE_LIMIT = 2**20


_NOT_DIFFERENTIABLE = "is not differentiable with respect to argument"


def _derivative_graph(
    call: tuple[Any, ...], cts: Sequence[Any], args: Sequence[Any], candidates: Sequence[int], skip: bool = False
) -> Sequence[Any]:
    """torch's gradients of ``call`` w.r.t. the operands at ``candidates`` (None where the
    graph does not join them, or with ``skip``, where torch has no derivative for them), run
    on meta tensors or, for a derivative torch has no meta kernel for (soft_margin_loss,
    index_fill), on zeros on the CPU where the operands are small enough."""
    try:
        return _derivative_on(call, cts, args, candidates, "meta")
    except NotImplementedError:
        if sum(a.numel() for a in (*args, *cts) if isinstance(a, TensorProxy)) > _CPU_PROBE_LIMIT:
            raise
    except RuntimeError as e:
        if skip and _NOT_DIFFERENTIABLE in str(e):
            return [None] * len(candidates)
        raise
    try:
        return _derivative_on(call, cts, args, candidates, "cpu")
    except RuntimeError as e:
        if skip and _NOT_DIFFERENTIABLE in str(e):
            return [None] * len(candidates)
        raise


def _derivative_on(
    call: tuple[Any, ...], cts: Sequence[Any], args: Sequence[Any], candidates: Sequence[int], device: str
) -> Sequence[Any]:
    values = [_meta_value(v, 0, device=device) for v in args]
    with torch.enable_grad():
        for i in candidates:
            values[i] = values[i].requires_grad_(True)
        outs = [o for o in run_recipe(call, values) if _differentiable(o)]
        # probe cotangents shaped as these results (a size operand of the backward is a plain number
        # here: the results' shapes follow its example value, not the cotangents')
        pairs = [(o, torch.zeros_like(o)) for o, c in zip(outs, cts) if c is not None and o.requires_grad]
        if not pairs:
            return [None] * len(candidates)
        return torch.autograd.grad(
            [o for o, _ in pairs], [values[i] for i in candidates], [c for _, c in pairs], allow_unused=True
        )


register_vjp(torch_call_p, _opaque_vjp, seeded=True)
register_vjp(torch_view_call_p, _opaque_vjp, seeded=True)
# On dynamic dims (a call with a registered shape rule, ``register_opaque_shape_rule``), the
# shapes ``expect`` holds are sizes: the lowering checks the results against them at each call.
register_size_params(torch_call_p, "expect")  # (torch_view_call_p shares the meta: the key)
register_shape_rule(torch_call_p, lambda *atoms, call, expect: [tuple(e[0]) for e in expect])
# No nvFuser lowering: an opaque call is a torch step between fusions.


# ----------------------------------------------------------------------------------------
# The frontend fallback


class _Recorder(TorchDispatchMode):
    """Records the aten ops a call runs on meta tensors: their tags, and whether one writes
    into an operand of the call."""

    def __init__(self, operands: set[int]) -> None:
        super().__init__()
        self.operands = operands  # ids of the storages of the call's tensor operands
        self.random: str | None = None
        self.data_dependent: str | None = None
        self.mutates: str | None = None

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        tags = getattr(func, "tags", ())
        if torch.Tag.nondeterministic_seeded in tags and self.random is None:
            self.random = str(func)
        if (torch.Tag.dynamic_output_shape in tags or torch.Tag.data_dependent_output in tags) and (
            self.data_dependent is None
        ):
            self.data_dependent = str(func)
        schema = getattr(func, "_schema", None)
        if schema is not None and self.mutates is None:
            flat = dict(zip([a.name for a in schema.arguments], list(args) + [None] * len(schema.arguments)))
            flat.update(kwargs)
            for a in schema.arguments:
                value = flat.get(a.name)
                if a.alias_info is not None and a.alias_info.is_write and isinstance(value, torch.Tensor):
                    if _storage_id(value) in self.operands:
                        self.mutates = str(func)
        return func(*args, **kwargs)


def _storage_id(t: torch.Tensor) -> int:
    return int(t.untyped_storage()._cdata)


def _meta_value(v: Any, which: int, requires_grad: bool = False, device: str = "meta") -> Any:
    if isinstance(v, TensorProxy):
        shape = hint(tuple(v._var.shape))  # (dynamic dims: at the traced sizes)
        t = (torch.empty if device == "meta" else torch.zeros)(shape, dtype=v.dtype, device=device)
        return t.requires_grad_(True) if requires_grad and _differentiable(t) else t
    if isinstance(v, NumberProxy):
        size = size_of(v)
        if size is not None:  # a size symbol: its value at the traced sizes (shapes follow it)
            return hint(size)
        known = _known_value(v)
        if which == 0 and known is not None:
            return known
        first, second = _EXAMPLE[v._python_type]
        if which == 0:
            return first
        return second if known is None or known != second else first
    return v


def _known_value(v: NumberProxy) -> Any:
    tracer = v._tracer
    return tracer.scalar_values.get(v._var) if isinstance(tracer, TraceBuilder) else None


def _template(value: Any, operands: list[Any], name: str) -> Any:
    """``value`` with each traced operand replaced by Ellipsis (appended to ``operands``)."""
    if isinstance(value, (TensorProxy, NumberProxy)):
        operands.append(value)
        return Ellipsis
    if isinstance(value, torch.Size):
        return tuple(value)
    if type(value) in (tuple, list):
        return type(value)(_template(v, operands, name) for v in value)
    if isinstance(value, _STATIC_KINDS):
        return value
    raise UnsupportedOperationError(
        f"{name} on traced values: its argument {value!r} ({type(value).__name__}) is neither a tensor, a number "
        "nor a value symscalar can record in the program (dtypes, devices, strings, tuples of those). Run it "
        "outside the jitted function."
    )


def _dynamic_leaves(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[int | str, NumberProxy]]:
    found: list[tuple[int | str, NumberProxy]] = []
    places: list[tuple[int | str, Any]] = [*enumerate(args), *kwargs.items()]
    for where, value in places:
        for leaf in pytree.tree_leaves(value):
            if isinstance(leaf, NumberProxy):
                found.append((where, leaf))
    return found


def _op_name(func: Any) -> str:
    """``public_name``, or for an operator of ``torch.ops`` (``torch.ops.aten.slice.Tensor``,
    an overload packet ``torch.ops.aten._safe_softmax``) the path that resolves to it."""
    if isinstance(func, torch._ops.OpOverload):
        namespace, op = func._schema.name.split("::")
        return f"torch.ops.{namespace}.{op}.{func._overloadname}"
    if isinstance(func, torch._ops.OpOverloadPacket):
        namespace, op = func._qualified_op_name.split("::")
        return f"torch.ops.{namespace}.{op}"
    return public_name(func)


def _aten_name(name: str) -> str:
    parts = name.split(".")
    if parts[1] == "ops":  # torch.ops.<namespace>.<op>[.<overload>]
        return f"{parts[2]}::{parts[3]}"
    if parts[1] in ("special", "linalg", "fft") and len(parts) == 3:
        return f"{parts[1]}_{parts[2]}"
    return parts[-1]


@functools.cache
def _schemas(aten: str) -> tuple[Any, ...]:
    return tuple(
        s
        for s in torch._C._jit_get_schemas_for_operator(aten if "::" in aten else f"aten::{aten}")
        if not any(a.alias_info is not None and a.alias_info.is_write for a in s.arguments)
    )


def _param(func: Any, name: str, where: int | str, n_args: int, kwargs: dict[str, Any]) -> tuple[str, bool]:
    """The parameter name at ``where`` and whether a dynamic number is allowed there."""
    names: list[str] = []
    for schema in _schemas(_aten_name(name)):
        params = [a for a in schema.arguments if not a.kwarg_only]
        if n_args > len(params):
            continue
        by_name = {a.name: a for a in schema.arguments}
        if any(k not in by_name for k in kwargs):
            continue
        arg = by_name[where] if isinstance(where, str) else (params[where] if where < len(params) else None)
        if arg is None:
            continue
        names.append(arg.name)
        if str(arg.type) in _DYNAMIC_SCHEMA_TYPES:
            return arg.name, True
    if names:
        return names[0], False
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return f"argument {where}", False
    params_list = list(signature.parameters.values())
    if isinstance(where, int):
        if where >= len(params_list) or params_list[where].kind is inspect.Parameter.VAR_POSITIONAL:
            return f"argument {where}", False
        param = params_list[where]
    elif where in signature.parameters:
        param = signature.parameters[where]
    else:
        return where, False
    annotation = param.annotation
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    text = str(text).replace("typing.", "")
    return param.name, text in _DYNAMIC_ANNOTATIONS


def _signature_of(results: Sequence[Any]) -> list[Any]:
    return [(tuple(r.shape), r.dtype) if isinstance(r, torch.Tensor) else type(r) for r in results]


def _run_meta(
    func: Any, template: tuple[Any, Any], operands: list[Any], which: int, requires_grad: list[bool]
) -> tuple[Any, _Recorder, list[torch.Tensor]]:
    values = [_meta_value(v, which, rg) for v, rg in zip(operands, requires_grad)]
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    recorder = _Recorder({_storage_id(t) for t in tensors})
    position = [0]
    args = _fill(template[0], values, position)
    kwargs = {k: _fill(v, values, position) for k, v in template[1]}
    if kwargs.get("device") is not None:
        kwargs["device"] = "meta"
    with torch.enable_grad(), recorder:
        result = func(*args, **kwargs)
    return result, recorder, tensors


def _no_meta(name: str, error: Exception) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        f"{name} on traced values is not supported by symscalar: it has no hand-written op, and torch has no meta "
        f"kernel to find its result's shape ({type(error).__name__}: {str(error).splitlines()[0][:160]}). It was "
        "not run eagerly: running it would bake its trace-time result into the compiled program."
    )


# torch function name -> the same function written with symscalar's ops, used where an operand
# has dynamic dims (an opaque call's meta sees one call's sizes); see ops/dynamic_shapes.py.
_SYMBOLIC_FORMS: dict[str, Callable[..., Any]] = {}
# Torch callables whose opaque call takes dynamic dims, with the shape rule of their results.
_OPAQUE_SHAPE_RULES: dict[str, Callable[..., Any]] = {}


def register_symbolic_form(name: str, form: Callable[..., Any]) -> None:
    """Trace ``name`` (``"torch.diff"``) as ``form`` when an operand has dynamic dims."""
    _SYMBOLIC_FORMS[name] = form


def register_opaque_shape_rule(name: str, rule: Callable[..., Any]) -> None:
    """Let the opaque call of ``name`` (``"torch.nn.functional.mse_loss"``) take operands with
    dynamic dims: ``rule(*args, **kwargs)``, called with the call's own arguments (tensors'
    shapes are sizes), gives the shape of each result (a list, in pytree order). The call still
    runs eager's kernels forward and backward, so eager's bits; the rule is checked against
    torch's meta kernel at the traced sizes, and every result against it at each call."""
    if name in _OPAQUE_SHAPE_RULES:
        raise ValueError(f"{name} has an opaque shape rule already")
    _OPAQUE_SHAPE_RULES[name] = rule


def opaque_handler(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Trace ``func(*args, **kwargs)`` (a torch callable without a handler) as an opaque
    torch call, or raise the reason it cannot be (see the module docstring)."""
    name = _op_name(func)
    short = name.split(".")[3] if name.startswith("torch.ops.") else name.rsplit(".", 1)[-1]
    if short in _REFUSED:
        raise UnsupportedOperationError(f"{name} is not supported on traced values by symscalar: {_REFUSED[short]}.")
    if not name.startswith("torch.") or _safe_resolve(name) is not func:
        raise UnsupportedOperationError(
            f"{name} is not supported on traced values by symscalar (it has no hand-written op, and it is not a "
            "torch function an opaque torch call can name). It was not run eagerly."
        )
    operands: list[Any] = []
    arg_template = tuple(_template(a, operands, name) for a in args)
    kwarg_template = tuple((k, _template(v, operands, name)) for k, v in kwargs.items())
    symbolic: list[Any] = [v for v in operands if isinstance(v, TensorProxy) and is_symbolic_shape(v._var.shape)]
    if name in _OPAQUE_SHAPE_RULES:  # a size symbol in an int parameter (torch.linspace(0, 1, T)): the rule's
        symbolic += [v for v in operands if isinstance(v, NumberProxy) and size_of(v) is not None]
    if symbolic and name in _SYMBOLIC_FORMS:  # written with ops that have shape rules
        return _SYMBOLIC_FORMS[name](*args, **kwargs)
    if symbolic and name not in _OPAQUE_SHAPE_RULES:  # torch's meta kernels see one call's sizes
        raise UnsupportedOperationError(
            f"{name} on a tensor with declared dynamic dims ({symbolic[0]!r}) is not supported by symscalar: it "
            "runs as an opaque torch call, whose result shape is known only for one call's sizes, so the "
            "program would be specialized to them. Declare those dims static (leave them out of "
            "dynamic_dims), or compute this part outside the jitted function."
        )
    for where, proxy in _dynamic_leaves(args, kwargs):
        param, allowed = _param(func, name, where, len(args), kwargs)
        if not allowed and not (symbolic and size_of(proxy) is not None):  # (a size: the shape rule's)
            raise StaticValueRequiredError(static_message(name, param, proxy))
    tracer = current_tracer.get()
    requires_grad = [
        isinstance(v, TensorProxy) and isinstance(tracer, TraceBuilder) and bool(v.requires_grad) for v in operands
    ]
    template = (arg_template, kwarg_template)
    try:
        result, recorder, meta_inputs = _run_meta(func, template, operands, 0, requires_grad)
    except (NotImplementedError, RuntimeError) as e:
        text = str(e)
        if "item() cannot be called on meta" in text:
            raise UnsupportedOperationError(
                f"{name} on traced values reads tensor values while tracing (a Python branch or check on values, "
                "or an output shape computed from them), which a trace cannot depend on. Run it outside the "
                "jitted function, or write the computation with tensor ops (torch.where instead of `if`)."
            ) from None
        if "data-dependent" in text or "data dependent" in text:
            raise data_dependent_shape_error(name, "tensor values") from None
        if isinstance(e, NotImplementedError) or "meta" in text.lower():
            raise _no_meta(name, e) from None
        raise
    if recorder.random is not None:
        raise UnsupportedOperationError(
            f"{name} inside a traced function is not supported: it draws random numbers ({recorder.random}), which "
            "would come from torch's global generator instead of the program's RNG input. Draw random tensors "
            "outside the jitted function and pass them in."
        )
    if recorder.data_dependent is not None:
        raise data_dependent_shape_error(name, f"tensor values ({recorder.data_dependent})")
    if recorder.mutates is not None:
        raise UnsupportedOperationError(
            f"{name} on traced values writes into one of its operands ({recorder.mutates}); symscalar traces "
            "in-place updates only through the ops it implements. Use the out-of-place form of the operation."
        )
    flat, spec = pytree.tree_flatten(result)
    if not flat or not all(isinstance(r, torch.Tensor) for r in flat):
        raise UnsupportedOperationError(
            f"{name} on traced values returns {type(result).__name__}, not tensors: a Python value computed from "
            "traced tensors would be baked into the compiled program. Keep the computation in tensors, or run it "
            "outside the jitted function."
        )
    if not symbolic and any(proxy is not None for _, proxy in _dynamic_leaves(args, kwargs)):
        _check_invariant(name, func, template, operands, requires_grad, flat, args, kwargs)
    if torch._C._is_any_autocast_enabled():
        _check_autocast(name, func, template, operands, requires_grad, flat)
    view = any(_storage_id(r) in recorder.operands for r in flat)
    device = _device(operands, kwargs)
    expect = tuple((tuple(r.shape), r.dtype, device) for r in flat)
    if symbolic:
        expect = _symbolic_expect(name, _OPAQUE_SHAPE_RULES[name](*args, **kwargs), expect)
    call: tuple[Any, ...] = ("call", name, arg_template, kwarg_template)
    if name in _GRAD_MODE_KERNELS and torch.is_grad_enabled():
        call = (*call, ("grad", tuple(i for i, wanted in enumerate(requires_grad) if wanted)))
    prim = torch_view_call_p if view else torch_call_p
    outs = list(prim.bind(*operands, call=call, expect=expect))
    for i, (out, meta) in enumerate(zip(outs, flat)):
        if out.requires_grad and not meta.requires_grad:  # torch marks this result non-differentiable
            outs[i] = out.detach()
    del meta_inputs
    return pytree.tree_unflatten(outs, spec)


def _symbolic_expect(name: str, shapes: Sequence[Any], expect: tuple[Any, ...]) -> tuple[Any, ...]:
    """``expect`` with the shapes of the call's shape rule, which must agree with torch's meta
    kernel at the traced sizes."""
    shapes = [tuple(shape) for shape in shapes]
    if len(shapes) != len(expect) or any(hint(s) != e[0] for s, e in zip(shapes, expect)):
        raise UnsupportedOperationError(
            f"{name} on dynamic dims: its shape rule gives {shapes} (at the traced sizes {hint(shapes)}) but "
            f"torch's meta kernel gives {[list(e[0]) for e in expect]}. Declare the dims static."
        )
    return tuple((shape, *rest) for shape, (_, *rest) in zip(shapes, expect))


def _check_invariant(
    name: str,
    func: Any,
    template: tuple[Any, Any],
    operands: list[Any],
    requires_grad: list[bool],
    flat: list[Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """A dynamic number is a runtime input only if the result's shape and dtype do not depend
    on its value (``F.interpolate``'s ``scale_factor`` does): checked with a second value."""
    try:
        other, _, _ = _run_meta(func, template, operands, 1, requires_grad)
        same = _signature_of(pytree.tree_leaves(other)) == _signature_of(flat)
    except Exception:  # noqa: BLE001 - a value the op rejects: no proof the shape does not depend on it
        same = False
    if not same:
        where, proxy = _dynamic_leaves(args, kwargs)[0]
        param, _ = _param(func, name, where, len(args), kwargs)
        raise StaticValueRequiredError(
            static_message(name, param, proxy).replace(
                "must be static (a compile-time constant)",
                "must be static (the shape or dtype of the result depends on its value)",
                1,
            )
        )


def _check_autocast(
    name: str, func: Any, template: tuple[Any, Any], operands: list[Any], requires_grad: list[bool], flat: list[Any]
) -> None:
    """Under autocast, an op whose result dtype autocast changes is refused: the program's
    casts are its own equations, and the opaque call runs with whatever autocast state the
    program (or its backward) runs under."""
    enabled = [d for d in ("cpu", "cuda") if torch.is_autocast_enabled(d)]
    for device in enabled:
        torch.set_autocast_enabled(device, False)
    try:
        plain, _, _ = _run_meta(func, template, operands, 0, requires_grad)
    finally:
        for device in enabled:
            torch.set_autocast_enabled(device, True)
    if _signature_of(pytree.tree_leaves(plain)) != _signature_of(flat):
        raise UnsupportedOperationError(
            f"{name} under autocast: autocast changes its result's dtype, and symscalar runs it as an opaque torch "
            "call, outside autocast's control. Cast its inputs to the dtype you want (x.to(torch.bfloat16)) and call "
            "it with autocast disabled (torch.autocast(..., enabled=False)), or call it outside the jitted function."
        )


def _device(operands: list[Any], kwargs: dict[str, Any]) -> torch.device:
    if kwargs.get("device") is not None:
        return torch.device(kwargs["device"])
    tensors = [v for v in operands if isinstance(v, TensorProxy)]
    for t in tensors:
        if t.ndim > 0:
            return t.device
    return tensors[0].device if tensors else torch.device("cpu")


def _safe_resolve(name: str) -> Any:
    try:
        return _resolve(name)
    except AttributeError:
        return None


register_fallback(opaque_handler)
