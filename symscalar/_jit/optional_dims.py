"""The generated cache-hit key of a contract whose declared tensors may be ``None``.

A declared tensor parameter whose default is ``None`` (``attention_mask=None``; every input
of an HF model's ``forward``) is keyed as a path to itself (``dim_paths``), so that ``None``
is a program of its own. The path walk is general (pytrees, state objects) and costs several
microseconds per call; for the common case, tensors and ``None`` only, this module generates
the key as straight-line code, as ``ShapeContract.key`` is for required tensors: one ``is
None`` branch per optional parameter, the checks inline (ranges, equal names, static sizes,
rank), and the same key and program inputs the walk gives. Anything else (a tensor subclass,
a container, a failed check) goes to the walk, which keys it or says what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from symscalar._jit import tree
from symscalar.generated import exec_generated

__all__ = ["generated_flat_key", "tensor_checks"]


def tensor_checks(
    lines: list[str],
    i: int,
    arg: str,
    p: Any,
    dims: Any,
    first: dict[str, str],
    fail: str,
    pad: str = "    ",
    maybe: set[str] | frozenset[str] = frozenset(),
) -> str:
    """Append to ``lines`` the generated checks of declared tensor ``arg``'s shape (``s{i}``:
    its rank, static sizes, ranges, and a name's size equal to where ``first`` has it, or to
    the local ``n_<name>`` for a name in ``maybe``), each returning ``fail`` when it fails;
    give the key's expression of that shape (dynamic dims as None)."""
    lines.append(f"{pad}s{i} = {arg}.shape")
    lines.append(f"{pad}if len(s{i}) < {p.rank}: return {fail}")
    for d, size in p.fixed:
        lines.append(f"{pad}if s{i}[{d}] != {size}: return {fail}")
    for d, name in p.dynamic:
        dim = dims[name]
        v = f"s{i}[{d}]"
        bound = f" or {v} > {dim.max}" if dim.max is not None else ""
        lines.append(f"{pad}if {v} < {dim.min}{bound}: return {fail}")
        if name in first:
            lines.append(f"{pad}if {v} != {first[name]}: return {fail}")
        elif name in maybe:
            lines.append(f"{pad}if n_{name} is None: n_{name} = {v}")
            lines.append(f"{pad}elif {v} != n_{name}: return {fail}")
        else:
            first[name] = v
    dynamic = dict(p.dynamic)
    entries = "".join(("None" if d in dynamic else f"s{i}[{d}]") + ", " for d in range(p.rank))
    return f"({entries}) + tuple(s{i}[{p.rank}:])"


def generated_flat_key(contract: Any) -> Callable[..., Any] | None:
    """``contract.nested_key`` as generated code where every parameter with paths is an
    optional tensor (one path, the parameter itself), flat: ``key(*tops, *values)`` gives
    ``(top, key0, inputs0, key1, inputs1, ...)``; None where some path goes inside one."""
    optional = []
    for n in contract.nested:
        if len(n.decls) != 1 or n.decls[0][0].segments != ():
            return None
        optional.append(n.decls[0][1])
    params = [*contract.params, *optional]
    names = [f"t{i}" for i in range(len(contract.params))] + [f"o{j}" for j in range(len(optional))]
    lines: list[str] = []
    first: dict[str, str] = {}  # name -> the expression of its size, where it is always present
    maybe: set[str] = set()  # names first seen in an optional tensor: a local, None until seen
    always = {n for p in contract.params for _, n in p.dynamic}
    for name in sorted({n for p in optional for _, n in p.dynamic} - always):
        lines.append(f"    n_{name} = None")
        maybe.add(name)
    parts: list[str] = []
    for i, (p, arg) in enumerate(zip(params, names, strict=True)):
        is_optional = i >= len(contract.params)
        pad = "        " if is_optional else "    "
        if is_optional:
            lines.append(f"    if {arg} is None:")
            lines.append(f"        k{i}, a{i} = NONE_KEY, ()")
            lines.append("    else:")
            lines.append(f"        if type({arg}) is not Tensor: return walk(tops, values)")
        shape = tensor_checks(lines, i, arg, p, contract.dims, first, "walk(tops, values)", pad, maybe)
        if is_optional:  # dim_paths._tensor_key's key
            lines.append(f"{pad}k{i}, a{i} = ({shape}, {arg}.dtype, {arg}.device, {arg}.requires_grad), ({arg},)")
        else:  # ShapeContract.key's part
            parts.append(shape)
    tops = "".join(f"t{i}, " for i in range(len(contract.params)))
    values = "".join(f"o{j}, " for j in range(len(optional)))
    nested = "".join(f"k{i}, a{i}, " for i in range(len(contract.params), len(params)))
    source = (
        f"def flat_key({tops}{values}):\n    tops, values = ({tops}), ({values})\n"
        + "\n".join(lines)
        + f"\n    return ({''.join(part + ', ' for part in parts)}), {nested}\n"
    )

    def walk(tops: tuple[Any, ...], values: tuple[Any, ...]) -> tuple[Any, ...]:
        top, nested = contract.nested_key(tops, values)
        return (top, *(part for key_and_inputs in nested for part in key_and_inputs))

    namespace: dict[str, Any] = {
        "walk": walk,
        "Tensor": torch.Tensor,
        "NONE_KEY": tree.tree_key(None, []),
    }
    exec_generated(source, f"dynamic_dims key of {contract.fn_name}", namespace)
    key: Callable[..., Any] = namespace["flat_key"]
    key.__source__ = source  # type: ignore[attr-defined]
    return key
