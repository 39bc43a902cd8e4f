"""Declared dynamic dims for the mypy plugin: the sizes of ``Dims``-annotated tensors.

A parameter annotated ``x: Annotated[torch.Tensor, Dims("B", "T", 64)]`` has dynamic dims in
a ``symscalar.jit`` function: at run time ``x.shape[1]`` and ``x.size(1)`` are ``DynamicInt``
**size symbols**, ``x.shape[2]`` is the static ``64``. A size symbol goes where a size goes
(view/reshape/expand targets, zeros/ones/full/empty sizes, arange bounds, slice bounds,
narrow's start and length) and nowhere else among the static parameters (reduction, softmax,
cat and transpose dims, chunk counts): ``check_trace`` refuses it there, and refuses a
dynamic value that is not a size in a size slot. This module gives the plugin the same
verdict: the type of a declared dim's size (``DynamicInt`` for a named dim, ``int`` for a
static one) and whether an argument is a size expression.

mypy drops ``Annotated`` metadata before a plugin sees a type (``Dims(...)`` becomes a bare
expression type without its arguments), so the declarations are read from the module's
source with ``ast``, once per file version: the annotation on the parameter, or a
module-level alias (``X = Annotated[torch.Tensor, Dims("B", "T")]``). Only mypy nodes and the
standard library are imported (the plugin's rule: never torch).
"""

from __future__ import annotations

import ast
import functools
import os

from mypy.checker import TypeChecker
from mypy.nodes import (
    AssignmentStmt,
    Block,
    CallExpr,
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

__all__ = ["SIZE_PARAMS", "declared_dims", "dim_entry", "size_kind", "is_size_param"]

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


def is_size_param(op: str, param: str) -> bool:
    return param in SIZE_PARAMS.get(op, ())


def _entry(node: ast.expr) -> Entry:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = node.args[0].value
        return name if isinstance(name, str) else None
    return None  # an int (a static size) or None


def _dims_of(annotation: ast.expr | None, aliases: dict[str, ast.expr]) -> tuple[Entry, ...] | None:
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
            return tuple(_entry(e) for e in meta.args)
    return None


@functools.lru_cache(maxsize=128)
def _module_dims(path: str, stamp: tuple[int, int]) -> dict[tuple[str, int], dict[str, tuple[Entry, ...]]]:
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
    out: dict[tuple[str, int], dict[str, tuple[Entry, ...]]] = {}
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


def declared_dims(function: FuncItem, api: CheckerPluginInterface) -> dict[str, tuple[Entry, ...]]:
    """The Dims declarations of ``function``'s parameters (empty when it has none)."""
    assert isinstance(api, TypeChecker)
    name = getattr(function, "name", "")
    try:
        st = os.stat(api.path)
    except OSError:
        return {}
    return _module_dims(api.path, (st.st_mtime_ns, st.st_size)).get((name, function.line), {})


def _declared_param(expr: Expression, api: CheckerPluginInterface) -> tuple[Entry, ...] | None:
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


def dim_entry(expr: Expression, api: CheckerPluginInterface) -> tuple[bool, Entry]:
    """Whether ``expr`` reads a declared dim's size (``x.shape[i]``, ``x.size(i)`` with a
    literal ``i >= 0`` within the declaration), and that dim's entry (its name if dynamic).
    A negative index is not read: the declaration gives the leading dims only."""
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
        return False, None
    dims = _declared_param(owner, api)
    if dims is None or index >= len(dims):
        return False, None
    return True, dims[index]


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
