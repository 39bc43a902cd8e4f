"""Declared dynamic dims for the mypy plugin: the sizes of ``Dims``-annotated tensors.

A parameter annotated ``x: Annotated[torch.Tensor, Dims("B", "T", 64)]`` has dynamic dims in
a ``symscalar.jit`` function: at run time ``x.shape[1]`` and ``x.size(1)`` are ``DynamicInt``
**size symbols**, ``x.shape[2]`` is the static ``64``. A size symbol goes where a size goes
(view/reshape/expand targets, zeros/ones/full/empty sizes, arange bounds, slice bounds,
narrow's start and length) and nowhere else among the static parameters (reduction, softmax,
cat and transpose dims, chunk counts): ``check_trace`` refuses it there, and refuses a
dynamic value that is not a size in a size slot. This module gives the plugin the same
verdict: the type of a declared dim's size (``DynamicInt`` for a named dim, ``int`` for a
static one) and whether an argument is a size expression. A comparison of sizes is a Python
bool at run time (decided by the declared ranges or recorded as a size guard) and refused
where the guard would leave a declared dim one value (``symscalar.size_guards``): the plugin's
verdict on it (``size_comparison``) is computed with that module's own functions, at the
sizes of the dim's range where the answer can change.

mypy drops ``Annotated`` metadata before a plugin sees a type (``Dims(...)`` becomes a bare
expression type without its arguments), so the declarations are read from the module's
source with ``ast``, once per file version: the annotation on the parameter, or a
module-level alias (``X = Annotated[torch.Tensor, Dims("B", "T")]``). Only mypy nodes, the
standard library and symscalar's torch-free ``sizes``/``size_guards`` are imported (the
plugin's rule: never torch).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import operator
import os
from collections.abc import Callable
from typing import Any

from mypy.checker import TypeChecker
from mypy.nodes import (
    AssignmentStmt,
    Block,
    CallExpr,
    ComparisonExpr,
    Expression,
    FuncItem,
    IndexExpr,
    IntExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    Statement,
    TupleExpr,
    TypeAlias,
    UnaryExpr,
    Var,
)
from mypy.plugin import CheckerPluginInterface
from mypy.types import CallableType, Instance, Type, UnboundType, get_proper_type

from symscalar import size_guards, sizes

__all__ = [
    "SIZE_PARAMS",
    "DimDecl",
    "SizeComparison",
    "declared_dims",
    "dim_decl",
    "dim_entry",
    "size_kind",
    "size_comparison",
    "first_pin",
    "pin_message",
    "is_size_param",
]

DYNAMIC_INT = "symscalar.types.DynamicInt"
# The static parameters of the torch spellings that are size-like (sizes of declared dims
# allowed): the spellings whose primitives ops/dynamic_shapes.py registers size parameters
# for (``torch.Tensor.__getitem__``: indices and slice bounds).
SIZE_PARAMS: dict[str, tuple[str, ...]] = {
    "torch.Tensor.view": ("size",),
    "torch.Tensor.reshape": ("shape",),
    "torch.reshape": ("shape",),
    "torch.Tensor.expand": ("size",),
    "torch.zeros": ("size",),
    "torch.ones": ("size",),
    "torch.empty": ("size",),
    "torch.full": ("size",),
    "torch.arange": ("start", "end"),
    "torch.Tensor.narrow": ("start", "length"),
    "torch.narrow": ("start", "length"),
    "torch.Tensor.__getitem__": ("indices",),
}

# An entry of Dims(...): a name (dynamic), or None for a static dim (an int or None there).
Entry = str | None


@dataclasses.dataclass(frozen=True)
class DimDecl:
    """One entry of ``Dims(...)`` as written: a dynamic dim's name and range
    (``Dim("T", min=2, max=8, specialize=True)``; ``Dim``'s defaults where not written as
    literals), or a static dim (``name`` None) with its declared size (None: any size)."""

    name: str | None
    size: int | None = None
    min: int = 1
    max: int | None = None
    specialize: bool = False


def is_size_param(op: str, param: str) -> bool:
    return param in SIZE_PARAMS.get(op, ())


def _literal_value(node: ast.expr | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None


def _decl(node: ast.expr, aliases: dict[str, ast.expr]) -> DimDecl:
    if isinstance(node, ast.Name) and isinstance(aliases.get(node.id), ast.Call):
        node = aliases[node.id]  # T = Dim("T", max=8) at module level
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return DimDecl(node.value)
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = node.args[0].value
        if not isinstance(name, str):
            return DimDecl(None)
        given = dict(zip(("min", "max", "specialize"), node.args[1:]))
        given.update((k.arg, k.value) for k in node.keywords if k.arg is not None)
        lo, hi, specialize = (_literal_value(given.get(k)) for k in ("min", "max", "specialize"))
        return DimDecl(
            name,
            min=lo if type(lo) is int else 1,
            max=hi if type(hi) is int else None,
            specialize=specialize is True,
        )
    size = node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
    return DimDecl(None, size=size)


def _dims_of(annotation: ast.expr | None, aliases: dict[str, ast.expr]) -> tuple[DimDecl, ...] | None:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Name) and annotation.id in aliases:
        annotation = aliases[annotation.id]
    if not isinstance(annotation, ast.Subscript) or not isinstance(annotation.slice, ast.Tuple):
        return None
    for meta in annotation.slice.elts[1:]:
        if isinstance(meta, ast.Call) and ast.unparse(meta.func).rpartition(".")[2] == "Dims":
            return tuple(_decl(e, aliases) for e in meta.args)
    return None


@functools.lru_cache(maxsize=128)
def _module_dims(path: str, stamp: tuple[int, int]) -> dict[tuple[str, int], dict[str, tuple[DimDecl, ...]]]:
    """(function name, ``def`` line) -> {parameter: its Dims entries} in the file at ``path``
    (``stamp``: its modification time and size, so an edited file is read again)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return {}
    aliases = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    out: dict[tuple[str, int], dict[str, tuple[DimDecl, ...]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = {
                p.arg: dims
                for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]
                if (dims := _dims_of(p.annotation, aliases)) is not None
            }
            if params:
                out[(node.name, node.lineno)] = params
    return out


def declared_dims(function: FuncItem, api: CheckerPluginInterface) -> dict[str, tuple[DimDecl, ...]]:
    """The Dims declarations of ``function``'s parameters (empty when it has none)."""
    assert isinstance(api, TypeChecker)
    name = getattr(function, "name", "")
    try:
        st = os.stat(api.path)
    except OSError:
        return {}
    return _module_dims(api.path, (st.st_mtime_ns, st.st_size)).get((name, function.line), {})


def _declared_param(expr: Expression, api: CheckerPluginInterface) -> tuple[DimDecl, ...] | None:
    """The Dims of ``expr`` if it names a declared parameter of the function being checked."""
    assert isinstance(api, TypeChecker)
    function = api.scope.current_function()
    if function is None or not isinstance(expr, NameExpr) or not isinstance(expr.node, Var):
        return None
    index = next((i for i, arg in enumerate(function.arguments) if arg.variable is expr.node), None)
    if index is None or not _may_declare(function, index, api):
        return None
    return declared_dims(function, api).get(expr.name)


def _may_declare(function: FuncItem, index: int, api: TypeChecker) -> bool:
    """Whether the parameter's annotation, as written, may hold ``Dims``: ``Annotated[...]``
    or a module-level type alias (so that the source of modules annotated with ``Tensor``
    only, such as torch's own, is never read)."""
    written = function.unanalyzed_type
    if not isinstance(written, CallableType) or index >= len(written.arg_types):
        return False
    t = written.arg_types[index]
    if not isinstance(t, UnboundType):
        return False
    if t.name.rpartition(".")[2] == "Annotated":
        return True
    node = api.tree.names.get(t.name)
    return node is not None and isinstance(node.node, TypeAlias)


def _literal(expr: Expression) -> int | None:
    if isinstance(expr, IntExpr):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return -expr.expr.value
    return None


def dim_decl(expr: Expression, api: CheckerPluginInterface) -> DimDecl | None:
    """The declaration of the dim whose size ``expr`` reads (``x.shape[i]``, ``x.size(i)``
    with a literal ``i >= 0`` within the declaration), None if it reads none. A negative
    index is not read: the declaration gives the leading dims only."""
    owner: Expression | None = None
    index: int | None = None
    if isinstance(expr, IndexExpr) and isinstance(expr.base, MemberExpr) and expr.base.name == "shape":
        owner, index = expr.base.expr, _literal(expr.index)
    elif (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, MemberExpr)
        and expr.callee.name == "size"
        and len(expr.args) == 1
    ):
        owner, index = expr.callee.expr, _literal(expr.args[0])
    if owner is None or index is None or index < 0:
        return None
    dims = _declared_param(owner, api)
    if dims is None or index >= len(dims):
        return None
    return dims[index]


def dim_entry(expr: Expression, api: CheckerPluginInterface) -> tuple[bool, Entry]:
    """Whether ``expr`` reads a declared dim's size (see ``dim_decl``), and that dim's entry
    (its name if dynamic)."""
    decl = dim_decl(expr, api)
    return (False, None) if decl is None else (True, decl.name)


def _assigned(var: Var, body: list[Statement]) -> list[Expression | None]:
    """What ``body`` (nested blocks included) assigns to ``var``: the value of ``v = e``, the
    item of ``a, v = e1, e2``; None for an assignment whose value is not an expression of
    the source (``a, v = pair``, ``v = w = e``)."""
    out: list[Expression | None] = []
    for stmt in body:
        if isinstance(stmt, AssignmentStmt):
            for lv in stmt.lvalues:
                if isinstance(lv, NameExpr) and lv.node is var:
                    out.append(stmt.rvalue if len(stmt.lvalues) == 1 else None)
                elif isinstance(lv, TupleExpr) and any(isinstance(i, NameExpr) and i.node is var for i in lv.items):
                    items = stmt.rvalue.items if isinstance(stmt.rvalue, TupleExpr) else None
                    if items is None or len(items) != len(lv.items) or len(stmt.lvalues) != 1:
                        out.append(None)
                    else:
                        out += [e for i, e in zip(lv.items, items) if isinstance(i, NameExpr) and i.node is var]
        for name in ("body", "else_body", "finally_body", "handlers"):
            blocks = getattr(stmt, name, None)
            for block in blocks if isinstance(blocks, list) else [blocks]:
                if isinstance(block, Block):
                    out += _assigned(var, block.body)
    return out


def _is_dynamic_int(typ: Type) -> bool:
    t = get_proper_type(typ)
    return isinstance(t, Instance) and t.type.fullname == DYNAMIC_INT


def size_kind(expr: Expression, api: CheckerPluginInterface, depth: int = 0) -> str:
    """``"size"`` for an expression of declared dims' sizes and static ints (``x.shape[1]``,
    ``T - 1``, ``B * T``, ``T // 2``, a local assigned once from one), ``"static"`` for a
    static number, ``"other"`` for any other dynamic value (a parameter, ``T + n``...)."""
    if isinstance(expr, IntExpr):
        return "static"
    found, entry = dim_entry(expr, api)
    if found:
        return "size" if entry is not None else "static"
    typ = api.get_expression_type(expr)
    if not _is_dynamic_int(typ):
        t = get_proper_type(typ)
        static = isinstance(t, Instance) and t.type.fullname in ("builtins.int", "builtins.bool")
        return "static" if static else "other"
    if isinstance(expr, OpExpr) and expr.op in ("+", "-", "*", "//", "%"):
        left, right = size_kind(expr.left, api, depth), size_kind(expr.right, api, depth)
        if expr.op in ("//", "%") and right != "static":
            return "other"
        if "other" in (left, right):
            return "other"
        return "size" if "size" in (left, right) else "static"
    if isinstance(expr, NameExpr) and isinstance(expr.node, Var) and depth < 8:
        assert isinstance(api, TypeChecker)
        function = api.scope.current_function()
        if function is None or any(arg.variable is expr.node for arg in function.arguments):
            return "other"
        assigned = _assigned(expr.node, function.body.body)
        if len(assigned) == 1 and assigned[0] is not None:
            return size_kind(assigned[0], api, depth + 1)
    return "other"


# ---- comparisons of sizes: the run time's size guards


_COMPARISONS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod}
# How many sizes next to each end of a dim's range (and next to each root of a linear
# comparison) are tried as the traced size.
_NEAR = 16
# A static int of unknown value (an int parameter, a dim declared None) stands for a value
# well inside the dim's range: the typical value code compares a size with.
_TYPICAL = 1000


@dataclasses.dataclass(frozen=True)
class SizeComparison:
    """The run time's verdict on a comparison of declared sizes (``T == 1``, ``B * T > 64``):
    a Python bool, decided by the ranges or recorded as a size guard, except at ``pin`` (the
    traced size of the dim it pins and the guard), where ``size_guards`` refuses it."""

    pin: tuple[str, int, str] | None  # (dim, size, guard)
    assumed: bool = False  # the size is where a static int of unknown value is taken to be
    asked_by: str = ""  # the comparison as the code spells it


def size_comparison(expr: Expression, api: CheckerPluginInterface) -> SizeComparison | None:
    """The verdict on ``a <op> b`` (or a chain ``a < b < c``: each pair) where the operands
    are sizes of declared dims and static ints (a size in each pair that is not all static);
    None for any other comparison (a dynamic value that is not a size: a ``DynamicBool``, as
    the tracer records it). Each comparison is judged alone (a second guard that pins a dim
    only together with an earlier one is found at run time)."""
    if not isinstance(expr, ComparisonExpr) or any(o not in _COMPARISONS for o in expr.operators):
        return None
    kinds = [size_kind(e, api) for e in expr.operands]
    if "other" in kinds or "size" not in kinds:
        return None
    verdict = SizeComparison(None)
    for i, operator_ in enumerate(expr.operators):
        if "size" not in kinds[i : i + 2]:
            continue  # two static ints
        pair = _pair_verdict(expr.operands[i], operator_, expr.operands[i + 1], api)
        if pair is None:
            return None
        if verdict.pin is None:
            verdict = pair
    return verdict


def _pair_verdict(
    left: Expression, spelled: str, right: Expression, api: CheckerPluginInterface
) -> SizeComparison | None:
    """``size_comparison`` of one pair: ``left <spelled> right``."""
    op = _COMPARISONS[spelled]
    decls: dict[str, DimDecl] = {}
    used: dict[str, int] = {}
    if _size_value(left, api, {}, decls, used) is None or _size_value(right, api, {}, decls, used) is None:
        return None
    if len(decls) != 1:
        return SizeComparison(None)  # a guard over two dims or more never pins one (size_guards.pinned)
    (decl,) = decls.values()
    assert decl.name is not None
    unknown = {"typical": (decl.min + decl.max) // 2 if decl.max is not None else decl.min + _TYPICAL}

    def sides(size: object) -> tuple[Any, Any]:
        env = {decl.name: size} if decl.name is not None else {}
        return _size_value(left, api, env, {}, unknown), _size_value(right, api, env, {}, unknown)

    asked_by = describe_comparison(left, spelled, right)
    pin = first_pin(op, sides, decl, asked_by)
    return SizeComparison(None if pin is None else (decl.name, *pin), "used" in used, asked_by)


def first_pin(
    op: str, sides: Callable[[object], tuple[Any, Any]], decl: DimDecl, asked_by: str
) -> tuple[int, str] | None:
    """The first traced size of the dim ``decl`` (and the guard) at which the comparison
    ``a <op> b``, ``(a, b) = sides(the dim's size)``, needs a size guard that pins the dim, as
    ``size_guards.decide_or_guard`` finds it at that size; None if it needs none at any size
    of the range. Tried: the sizes next to each end of the range and, for a linear
    comparison, next to its root (exact for linear comparisons; the end of an unbounded range
    is taken ``2 * _TYPICAL`` past its minimum)."""
    assert decl.name is not None
    hi = decl.max if decl.max is not None else decl.min + 2 * _TYPICAL
    candidates = {*range(decl.min, decl.min + _NEAR), *range(hi - _NEAR, hi + 1)}
    tried: set[int] = set()
    while candidates - tried:
        hint = min(candidates - tried)
        tried.add(hint)
        if hint < decl.min or (decl.max is not None and hint > decl.max):
            continue
        symbol = sizes.Symbol(decl.name, decl.min, decl.max, hint, decl.specialize)
        a, b = sides(sizes.Size.of(symbol))
        guard = size_guards.guard_at_hints(op, a, b, asked_by, None)
        if guard is None:
            return None  # decided by the range: no guard at any size
        if size_guards.pinned(guard) is not None:
            return hint, guard.condition()
        form = size_guards.linear(guard)
        if form is not None and hint == decl.min:
            _, c1, c0 = form
            root = -c0 // c1
            candidates |= set(range(root - 2, root + 3))
    return None


def _size_value(
    expr: Expression,
    api: CheckerPluginInterface,
    env: dict[str, Any],
    decls: dict[str, DimDecl],
    unknown: dict[str, int],
    depth: int = 0,
) -> Any:
    """``expr`` as the tracer computes it, with ``env``'s sizes for the declared dims (a
    ``sizes.Size``, or an int): None if it is not an expression of sizes and static ints.
    Collects the dynamic dims it reads in ``decls``; a static int of unknown value is
    ``unknown["typical"]`` (1 when absent)."""
    if isinstance(expr, IntExpr):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op == "-":
        inner = _size_value(expr.expr, api, env, decls, unknown, depth)
        return None if inner is None else -inner
    decl = dim_decl(expr, api)
    if decl is not None:
        if decl.name is None:
            if decl.size is not None:
                return decl.size
            unknown["used"] = 1
            return unknown.get("typical", 1)
        decls.setdefault(decl.name, decl)
        return env.get(decl.name, decl.min)
    if isinstance(expr, OpExpr) and expr.op in _ARITHMETIC:
        a = _size_value(expr.left, api, env, decls, unknown, depth)
        b = _size_value(expr.right, api, env, decls, unknown, depth)
        if a is None or b is None:
            return None
        if expr.op in ("//", "%") and not (type(b) is int and b > 0):
            return None
        return _ARITHMETIC[expr.op](a, b)
    if isinstance(expr, NameExpr) and isinstance(expr.node, Var) and depth < 8:
        assert isinstance(api, TypeChecker)
        function = api.scope.current_function()
        if function is not None and not any(arg.variable is expr.node for arg in function.arguments):
            assigned = _assigned(expr.node, function.body.body)
            if len(assigned) == 1 and assigned[0] is not None:
                return _size_value(assigned[0], api, env, decls, unknown, depth + 1)
    t = get_proper_type(api.get_expression_type(expr))
    if isinstance(t, Instance) and t.type.fullname == "builtins.int":
        unknown["used"] = 1
        return unknown.get("typical", 1)  # a static int whose value the source does not say
    return None


def describe_comparison(left: Expression, spelled: str, right: Expression) -> str:
    return f"the comparison `{_source(left)} {spelled} {_source(right)}`"


def _source(expr: Expression) -> str:
    if isinstance(expr, IntExpr):
        return str(expr.value)
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, IndexExpr) and isinstance(expr.base, MemberExpr) and isinstance(expr.base.expr, NameExpr):
        return f"{expr.base.expr.name}.{expr.base.name}[{_source(expr.index)}]"
    if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr) and isinstance(expr.callee.expr, NameExpr):
        return f"{expr.callee.expr.name}.{expr.callee.name}({', '.join(map(_source, expr.args))})"
    if isinstance(expr, OpExpr):
        return f"{_source(expr.left)} {expr.op} {_source(expr.right)}"
    if isinstance(expr, UnaryExpr):
        return f"{expr.op}{_source(expr.expr)}"
    return "..."


def pin_message(verdict: SizeComparison) -> str:
    """The static twin of the run time's pinning error (``size_guards``)."""
    assert verdict.pin is not None
    name, size, guard = verdict.pin
    where = f"`{guard}` when {name} = {size}"
    if verdict.assumed:
        where = f"when {name} is the static value it is compared with"
    return (
        f"{verdict.asked_by} needs the size guard {where}, which pins the "
        f"declared dim {name} to that one value (the run time refuses it); declare a range that decides it "
        f'(Dim("{name}", min=..., max=...)), allow it (Dim("{name}", specialize=True): each such size is '
        f"its own program), or declare the dim static"
    )
