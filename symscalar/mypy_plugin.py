"""The symscalar mypy plugin: static/dynamic misuse found before the code runs.

Enable it with ``plugins = ["symscalar.mypy_plugin"]`` in ``[tool.mypy]`` (or run
``python -m symscalar check PATH...``). It reads the op contract from
``symscalar._static_params`` (generated from ``symscalar.tracing.OPS``, so the plugin never
imports torch) and gives the verdict the tracer gives at run time:

* a dynamic value passed to a static parameter of an op, in every spelling (``ops.sum(x, n)``,
  ``torch.sum(x, n)``, ``x.sum(n)``, ``torch.Tensor.sum(x, n)``, ``x.sum(**opts)``,
  ``functools.partial(torch.sum, dim=n)``, ``x[n]``, ``x[:, :n]``)
  (``[symscalar-static-required]``, the static twin of ``StaticValueRequiredError``);
* dynamic numbers let through where an op allows them, although torch's stubs only accept
  Python numbers there (``x * s``, ``torch.mul(x, s)``);
* a comparison or logical operation on dynamic values used as a condition (``if d > 0:``,
  ``if flag and d > 0:``) (``[symscalar-dynamic-condition]``; plain names are caught by mypy's
  ``truthy-bool``);
* a dynamic value turned into a Python value: ``int(d)``, ``bool(d)``, ``range(d)``,
  ``d in (1, 2)``, ``any(v > d ...)``, ``sorted([d, 2])``, ``match d:``
  (``[symscalar-concretization]``, the static twin of ``DynamicValueError``);
* ``isinstance(v, int | float | numbers.Number)`` on a value that may be dynamic
  (``[symscalar-number-isinstance]``);
* a ``symscalar.jit`` function's ``DynamicInt``/``DynamicFloat``/``DynamicBool`` parameters
  accept Python numbers from callers (bare ``@jit`` and ``@jit(...)`` with options).
* ``x.shape[i]`` / ``x.size(i)`` of a dim declared dynamic (``x: Annotated[Tensor, Dims("B",
  "T")]``) is a ``DynamicInt`` size: accepted in the size-like static parameters (view,
  reshape, zeros, arange bounds, indices, narrow's start and length), refused in the others
  (``symscalar.mypy_dims``); a comparison of such sizes is a ``bool`` (a size guard at run
  time), reported where its guard would pin a dim (``[symscalar-size-guard]``).

Like mypy's own ``proper_plugin``: one ``Plugin`` subclass dispatching on fully qualified
names, module-level callbacks. The only state is ``ConditionIndex``, a per-module memo of
which expressions are conditions (rebuilt when mypy hands it another tree).

Beyond the public plugin API (``mypy.plugin``, ``mypy.nodes``, ``mypy.types``) the plugin
uses these mypy internals, each checked against the pinned mypy by
``tests/test_mypy_internals.py``:

* ``TypeChecker.expr_checker.accept``, ``msg.filter_errors`` and ``local_type_map``: infer an
  argument again without the widened type context (what a comprehension really holds);
* ``TypeChecker.scope.current_function()`` and ``TypeChecker.tree``: the function whose
  conditions are indexed;
* ``Errors._watchers``: report from inside mypy's speculative operator checks
  (``fail_unfiltered``);
* ``mypy.plugins.default.DefaultPlugin``: ``functools.partial`` keeps mypy's own typing while
  the plugin checks the bound arguments;
* ``mypy.server.subexpr.get_subexpressions``: every expression of a function, once.
* ``TypeChecker.path``: the file ``mypy_dims`` reads ``Dims(...)`` annotations from (mypy
  drops ``Annotated`` metadata before a plugin sees it).
"""

from __future__ import annotations

import functools
import hashlib
import re
import string
from collections.abc import Callable, Iterator, Sequence

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_STAR,
    ARG_STAR2,
    ArgKind,
    AssertStmt,
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    ComparisonExpr,
    ConditionalExpr,
    Context,
    Decorator,
    DictExpr,
    DictionaryComprehension,
    Expression,
    FloatExpr,
    ForStmt,
    FuncDef,
    GeneratorExpr,
    IfStmt,
    IndexExpr,
    IntExpr,
    ListExpr,
    MatchStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OpExpr,
    RefExpr,
    SetComprehension,
    SetExpr,
    SliceExpr,
    StarExpr,
    Statement,
    StrExpr,
    TryStmt,
    TupleExpr,
    TypeInfo,
    UnaryExpr,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.options import Options
from mypy.plugin import (
    CheckerPluginInterface,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.plugins.default import DefaultPlugin
from mypy.server.subexpr import get_subexpressions
from mypy.subtypes import is_subtype
from mypy.types import (
    AnyType,
    CallableType,
    FunctionLike,
    Instance,
    Parameters,
    ProperType,
    TupleType,
    Type,
    TypeOfAny,
    TypeType,
    TypeVarType,
    UnionType,
    get_proper_type,
)

from symscalar import messages, mypy_dims
from symscalar._static_params import STATIC_PARAMS

__all__ = ["SymscalarPlugin", "plugin", "__version__"]

# Bump when the plugin's behaviour changes: mypy keys its cache on it.
__version__ = "2.3"

STATIC_REQUIRED = ErrorCode(
    "symscalar-static-required",
    "A dynamic value is passed where an op requires a compile-time constant",
    "symscalar",
)
DYNAMIC_CONDITION = ErrorCode(
    "symscalar-dynamic-condition",
    "A dynamic comparison or logical operation drives Python control flow",
    "symscalar",
)
CONCRETIZATION = ErrorCode(
    "symscalar-concretization",
    "A dynamic value is turned into a Python value (int(), bool(), range(), in, match, sorted)",
    "symscalar",
)
JIT_OPTION = ErrorCode(
    "symscalar-jit-option",
    "jit(static=..., dynamic=...) contradicts a parameter's annotation or names no parameter",
    "symscalar",
)
SIZE_GUARD = ErrorCode(
    "symscalar-size-guard",
    "A comparison of declared sizes needs a size guard that pins a declared dim to one value",
    "symscalar",
)
NUMBER_ISINSTANCE = ErrorCode(
    "symscalar-number-isinstance",
    "isinstance(v, int/float/numbers.Number) is false for a dynamic number",
    "symscalar",
)

# Static parameters that the registry types ``Any`` because the op checks them item by item at
# run time (ops/shape.py ``_check_index_item``: every index and slice bound must be static).
EXTRA_STATIC = {
    "torch.Tensor.__getitem__": ("indices",),
    "symscalar.ops.getitem": ("indices",),
}


def config_data(table: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]]) -> dict[str, str]:
    """What the plugin's answers depend on besides the code: its version and a digest of the
    op table. mypy stores it with each cached module and rechecks the module when it changes."""
    digest = hashlib.sha256(repr(sorted(table.items())).encode()).hexdigest()
    return {"version": __version__, "ops": digest}


CONFIG_DATA = config_data(STATIC_PARAMS)

TYPES_MODULE = "symscalar.types"
NUMBER_PROXY = "symscalar.types.NumberProxy"
DYNAMIC_INT = "symscalar.types.DynamicInt"
DYNAMIC_FLOAT = "symscalar.types.DynamicFloat"
DYNAMIC_BOOL = "symscalar.types.DynamicBool"
DYNAMIC_CLASSES = (DYNAMIC_INT, DYNAMIC_FLOAT, DYNAMIC_BOOL)
JIT = "symscalar.jit.jit"
JIT_CALL = "symscalar.jit.JitFunction.__call__"
ISINSTANCE = "builtins.isinstance"
PARTIAL = "functools.partial"
# Python number classes that a dynamic number is not an instance of.
LEGACY_NUMBER_CLASSES = (
    "builtins.int",
    "builtins.float",
    "builtins.bool",
    "numbers.Number",
    "numbers.Real",
    "numbers.Integral",
    "numbers.Complex",
)
# Methods of the dynamic classes whose result is a DynamicBool.
BOOL_METHODS = (
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__eq__",
    "__ne__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__invert__",
)
# Where a stub takes a Python number, the dynamic numbers Python's own promotions allow.
WIDENED = {
    "builtins.int": (DYNAMIC_INT, DYNAMIC_BOOL),
    "builtins.float": (DYNAMIC_FLOAT, DYNAMIC_INT, DYNAMIC_BOOL),
    "builtins.bool": (DYNAMIC_BOOL,),
}
# What a caller of a jitted function may pass for each dynamic parameter.
PYTHON_NUMBER = {DYNAMIC_INT: "builtins.int", DYNAMIC_FLOAT: "builtins.float", DYNAMIC_BOOL: "builtins.bool"}
# Builtins that need the Python value of their arguments (DynamicValueError at run time), and
# whether typeshed already rejects a dynamic argument (then the signature is relaxed so that
# the symscalar message replaces mypy's generic one).
CONCRETIZING = {
    "builtins.int": ("int()", True),
    "builtins.float": ("float()", True),
    "builtins.complex": ("complex()", True),
    "builtins.range": ("range()", True),
    "builtins.sorted": ("sorted()", True),
    "builtins.min": ("min()", True),
    "builtins.max": ("max()", True),
    "builtins.bool": ("bool()", False),
    "builtins.any": ("any()", False),
    "builtins.all": ("all()", False),
}

# Builtins that format or hash a value (``str(n)``, ``print(n)``, ``hash(n)``): the proxy's
# ``__str__``/``__format__``/``__hash__`` raise DynamicValueError. Formatting a container
# shows its items' repr (allowed), so only a dynamic value itself is reported there.
FORMATTING = {
    "builtins.str": "str()",
    "builtins.format": "format()",
    "builtins.print": "print()",
}
HASHING = {"builtins.hash": "hash()"}
STR_FORMAT = "builtins.str.format"  # also every f-string: mypy reads f"{n}" as "{}".format(n)
# Methods that hash their first argument (a key or an item).
HASHED_KEY_METHODS = {
    "builtins.dict": ("__getitem__", "get", "__setitem__", "__delitem__", "pop", "setdefault"),
    "builtins.set": ("add", "discard", "remove"),
}

# Where mypy sees the torch spellings that symscalar.tracing.OPS names torch.X/torch.Tensor.X.
TORCH_PREFIXES = {
    "torch._C._VariableFunctions.": "torch.",
    "torch.functional.": "torch.",
    "torch._tensor.Tensor.": "torch.Tensor.",
    "torch._C.TensorBase.": "torch.Tensor.",
    "torch._C._nn.": "torch.nn.functional.",
}
SYMSCALAR_OPS = "symscalar.ops."
# Where mypy reads a dim's size: typed DynamicInt for a dim declared dynamic (mypy_dims).
DECLARED_SIZES = ("torch._C.Size.__getitem__", "torch._C.TensorBase.size", "torch._tensor.Tensor.size")
TENSOR = "torch._tensor.Tensor"
TENSOR_BASE = "torch._C.TensorBase"


def op_name(fullname: str) -> str | None:
    """The name ``STATIC_PARAMS`` uses for what mypy calls ``fullname``, if it is an op."""
    if fullname in STATIC_PARAMS:
        return fullname
    for prefix, public in TORCH_PREFIXES.items():
        if fullname.startswith(prefix):
            name = public + fullname[len(prefix) :]
            return name if name in STATIC_PARAMS else None
    if fullname.startswith(SYMSCALAR_OPS):
        # symscalar.ops.reductions.sum is exported as symscalar.ops.sum
        name = SYMSCALAR_OPS + fullname.rsplit(".", 1)[1]
        return name if name in STATIC_PARAMS else None
    return None


def static_params(op: str) -> tuple[str, ...]:
    """The op's static parameters: the registry's, plus ``EXTRA_STATIC``."""
    return STATIC_PARAMS[op][1] + EXTRA_STATIC.get(op, ())


# ---- types


def is_dynamic(typ: Type) -> bool:
    """Whether a value of this type is, or contains, a dynamic number."""
    t = get_proper_type(typ)
    if isinstance(t, Instance):
        return t.type.has_base(NUMBER_PROXY) or any(is_dynamic(a) for a in t.args)
    if isinstance(t, (UnionType, TupleType)):
        return any(is_dynamic(item) for item in t.items)
    if isinstance(t, TypeVarType):  # T bound to IntLike may be a DynamicInt
        return is_dynamic(t.upper_bound) or any(is_dynamic(v) for v in t.values)
    return False


def may_be_dynamic(typ: Type) -> bool:
    """Whether the type admits a dynamic number (a dynamic class or a union with one)."""
    t = get_proper_type(typ)
    if isinstance(t, Instance):
        return t.type.has_base(NUMBER_PROXY)
    if isinstance(t, UnionType):
        return any(may_be_dynamic(item) for item in t.items)
    if isinstance(t, TypeVarType):
        return may_be_dynamic(t.upper_bound) or any(may_be_dynamic(v) for v in t.values)
    return False


def only_dynamic(typ: Type) -> bool:
    """Whether every value of the type is a dynamic number (``DynamicInt``, not ``IntLike``
    or ``DynamicInt | None``): mypy's ``truthy-bool`` already flags such a condition."""
    t = get_proper_type(typ)
    if isinstance(t, UnionType):
        return all(only_dynamic(item) for item in t.items)
    return isinstance(t, Instance) and t.type.has_base(NUMBER_PROXY)


def type_name(typ: Type) -> str:
    """A type as messages show it: the public symscalar names, unqualified."""
    return re.sub(r"\bsymscalar\.types\.", "", str(typ))


Lookup = Callable[[str], Instance | None]


def class_lookup(plugin: Plugin) -> Lookup:
    """``fullname -> Instance`` through the plugin's public lookup (None if not loaded)."""

    def lookup(fullname: str) -> Instance | None:
        node = plugin.lookup_fully_qualified(fullname)
        if node is None or not isinstance(node.node, TypeInfo):
            return None
        return Instance(node.node, [])

    return lookup


def widen(typ: Type, lookup: Lookup, api: CheckerPluginInterface) -> Type:
    """``typ`` where every Python number also accepts the dynamic numbers it may stand for:
    ``int`` becomes ``int | DynamicInt | DynamicBool``; ``tuple[int, ...]`` also accepts
    ``tuple[int | DynamicInt | DynamicBool, ...]`` and ``list[int]`` also
    ``Sequence[int | ...]`` (a list literal mixing ints and dynamic ints must match it)."""
    t = get_proper_type(typ)
    if isinstance(t, Instance):
        if t.type.fullname in WIDENED:
            extra = [lookup(name) for name in WIDENED[t.type.fullname]]
            return UnionType([typ, *(e for e in extra if e is not None)])
        if not t.args:
            return typ
        args = [widen(a, lookup, api) for a in t.args]
        if all(a is b for a, b in zip(args, t.args)):
            return typ
        if t.type.fullname == "builtins.list":
            return UnionType([typ, api.named_generic_type("typing.Sequence", args)])
        return UnionType([typ, t.copy_modified(args=args)])
    if isinstance(t, UnionType):
        items = [widen(item, lookup, api) for item in t.items]
        if all(a is b for a, b in zip(items, t.items)):
            return typ
        return UnionType(items)
    if isinstance(t, TupleType):
        items = [widen(item, lookup, api) for item in t.items]
        if all(a is b for a, b in zip(items, t.items)):
            return typ
        return UnionType([typ, t.copy_modified(items=items)])
    return typ


def spread_types(call: Context, api: CheckerPluginInterface) -> list[Type]:
    """The dynamic value types of a call's ``*args``/``**kwargs`` arguments: the element of
    ``*xs`` and the value of ``**opts``, which may reach any parameter."""
    if not isinstance(call, CallExpr):
        return []
    out = []
    for arg, kind in zip(call.args, call.arg_kinds):
        if kind not in (ARG_STAR, ARG_STAR2):
            continue
        t = get_proper_type(api.get_expression_type(arg))
        if isinstance(t, Instance) and t.args and is_dynamic(t.args[-1]):
            out.append(t.args[-1])
    return out


def widened_signature(sig: CallableType, context: Context, lookup: Lookup, api: CheckerPluginInterface) -> CallableType:
    """``sig`` with dynamic numbers accepted wherever it takes a Python number (and where a
    ``*``/``**`` argument's dynamic values may land: the call hook reports them)."""
    if lookup(NUMBER_PROXY) is None:  # nothing imports symscalar: no dynamic values exist
        return sig
    spread = spread_types(context, api)
    return sig.copy_modified(
        arg_types=[
            UnionType([widen(t, lookup, api), *spread]) if spread else widen(t, lookup, api) for t in sig.arg_types
        ]
    )


def describe(expr: Expression) -> str:
    """A short source-like rendering of an argument, for messages."""
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        return f"{describe(expr.expr)}.{expr.name}"
    if isinstance(expr, (TupleExpr, ListExpr)):
        inner = ", ".join(describe(item) for item in expr.items)
        return (
            f"({inner},)"
            if isinstance(expr, TupleExpr) and len(expr.items) == 1
            else (f"({inner})" if isinstance(expr, TupleExpr) else f"[{inner}]")
        )
    if isinstance(expr, (IntExpr, FloatExpr)):
        return str(expr.value)
    if isinstance(expr, ComparisonExpr):
        parts = [describe(expr.operands[0])]
        for op, operand in zip(expr.operators, expr.operands[1:]):
            parts += [op, describe(operand)]
        return " ".join(parts)
    if isinstance(expr, OpExpr):
        return f"{describe(expr.left)} {expr.op} {describe(expr.right)}"
    if isinstance(expr, CallExpr) and not (len(expr.args) == 1 and isinstance(expr.args[0], IntExpr)):
        return f"{describe(expr.callee)}(...)"
    if isinstance(expr, SliceExpr):
        bounds = [expr.begin_index, expr.end_index, expr.stride]
        text = ":".join("" if b is None else describe(b) for b in bounds)
        return text.rstrip(":") if expr.stride is None else text
    if isinstance(expr, StarExpr):
        return f"*{describe(expr.expr)}"
    if isinstance(expr, GeneratorExpr):
        return f"{describe(expr.left_expr)} for ..."
    if isinstance(expr, IndexExpr):
        return f"{describe(expr.base)}[{describe(expr.index)}]"
    if isinstance(expr, CallExpr) and len(expr.args) == 1 and isinstance(expr.args[0], IntExpr):
        return f"{describe(expr.callee)}({expr.args[0].value})"
    return "<expression>"


def context_free_type(expr: Expression, typ: Type, api: CheckerPluginInterface) -> Type:
    """The type of ``expr`` inferred without the widened parameter as type context.

    mypy infers a comprehension or a generic call from its context: ``[n * g for n in sizes]``
    or ``tuple(x.shape)`` passed to a widened ``list[int | DynamicInt]`` is inferred
    ``list[int | DynamicInt]`` although it holds static ints. Inferred without context
    (speculatively, as mypy itself does: errors and types discarded) it is ``list[int]``. The
    context-free type is used when it fits the contextual one (read covariantly)."""
    assert isinstance(api, TypeChecker)
    with api.msg.filter_errors(), api.local_type_map:
        free = api.expr_checker.accept(expr, type_context=None)
    return free if fits(free, typ) else typ


def fits(free: Type, typ: Type) -> bool:
    """``free`` is a subtype of ``typ``, reading type arguments covariantly."""
    if is_subtype(free, typ):
        return True
    f, t = get_proper_type(free), get_proper_type(typ)
    return (
        isinstance(f, Instance)
        and isinstance(t, Instance)
        and f.type == t.type
        and len(f.args) == len(t.args)
        and all(fits(a, b) for a, b in zip(f.args, t.args))
    )


def dynamic_parts(expr: Expression, typ: Type | None, api: CheckerPluginInterface) -> list[str]:
    """Names and types of the dynamic values in an argument, e.g. ``"n" (DynamicInt)``.
    Displays (``(0, n)``, ``[n, 2]``, ``x[:, :n]``) are read item by item, so that a mix of
    static and dynamic numbers (which mypy joins to ``object``) names the dynamic one."""
    if isinstance(expr, (TupleExpr, ListExpr, SetExpr)):
        return [p for item in expr.items for p in dynamic_parts(item, None, api)]
    if isinstance(expr, SliceExpr):
        bounds = (expr.begin_index, expr.end_index, expr.stride)
        return [p for b in bounds if b is not None for p in dynamic_parts(b, None, api)]
    if isinstance(expr, StarExpr):
        return dynamic_parts(expr.expr, None, api)
    if typ is None:
        typ = api.get_expression_type(expr)
    if not is_dynamic(typ):
        return []
    if not isinstance(expr, (NameExpr, MemberExpr)):
        typ = context_free_type(expr, typ, api)
        if not is_dynamic(typ):
            return []
    return [f'"{describe(expr)}" ({type_name(typ)})']


# ---- ops: the signature hooks widen, the call hooks report static parameters


def widen_function_signature(lookup: Lookup, ctx: FunctionSigContext) -> FunctionLike:
    """Signature hook of an op's function spelling: numbers also accept dynamic ones."""
    return widened_signature(ctx.default_signature, ctx.context, lookup, ctx.api)


def widen_method_signature(lookup: Lookup, ctx: MethodSigContext) -> FunctionLike:
    """Signature hook of an op's method and operator spellings (``x.sum``, ``x * s``)."""
    return widened_signature(ctx.default_signature, ctx.context, lookup, ctx.api)


def static_parameter_of(op: str, formal: int, name: str | None, offset: int) -> str | None:
    """The op's static parameter that the stub's formal parameter stands for, if any.
    ``offset`` is 1 for a bound method (the op's first parameter is ``self``)."""
    params, _, positional = STATIC_PARAMS[op]
    static = static_params(op)
    if name in params:
        return name if name in static else None
    index = formal + offset
    if index < positional and params[index] in static:
        return params[index]
    return None


def check_static_arguments(
    op: str,
    offset: int,
    callee_arg_names: Sequence[str | None],
    arg_types: list[list[Type]],
    arg_kinds: list[list[ArgKind]],
    args: list[list[Expression]],
    api: CheckerPluginInterface,
) -> None:
    """Report each dynamic value passed to a static parameter of ``op``, at the argument."""
    spread: dict[int, tuple[Expression, str]] = {}
    for formal, (types, kinds, exprs) in enumerate(zip(arg_types, arg_kinds, args)):
        name = callee_arg_names[formal] if formal < len(callee_arg_names) else None
        param = static_parameter_of(op, formal, name, offset)
        for typ, kind, expr in zip(types, kinds, exprs):
            if kind in (ARG_STAR, ARG_STAR2):
                if is_dynamic(typ):
                    stars = "*" if kind == ARG_STAR else "**"
                    spread[id(expr)] = (expr, f'"{stars}{describe(expr)}" ({type_name(typ)})')
                continue
            if param is not None and mypy_dims.is_size_param(op, param):
                parts = non_size_parts(expr, typ, api)
            else:
                parts = dynamic_parts(expr, typ, api) if param is not None else []
                if param is not None and not parts and isinstance(expr, NameExpr):
                    parts = assigned_display_parts(expr, api)
            if param is not None and parts:
                api.fail(static_message(op, [param], parts), expr, code=STATIC_REQUIRED)
    # `*xs`/`**opts` may land in any parameter, whichever overload mypy matches them to; and
    # mypy tries overloads with errors filtered when several may take them: report past the
    # filters, or the error would only make mypy try (and accept) another overload.
    for expr, part in spread.values():
        fail_unfiltered(api, static_message(op, list(static_params(op)), [part]), expr, code=STATIC_REQUIRED)


def assigned_display_parts(name: NameExpr, api: CheckerPluginInterface) -> list[str]:
    """The dynamic values of the displays assigned to a local variable: mypy joins
    ``shape = (*x.shape[:-1], n, -1)`` to ``tuple[Any, ...]``, losing ``n``; the display,
    read item by item, still has it."""
    assert isinstance(api, TypeChecker)
    function = api.scope.current_function()
    if function is None or not isinstance(name.node, Var):
        return []
    parts = []
    for stmt in walk_statements(function.body.body):
        if isinstance(stmt, AssignmentStmt) and isinstance(stmt.rvalue, (TupleExpr, ListExpr)):
            if any(isinstance(lv, NameExpr) and lv.node is name.node for lv in stmt.lvalues):
                parts += [f'{part} in "{name.name}"' for part in dynamic_parts(stmt.rvalue, None, api)]
    return parts


def non_size_parts(expr: Expression, typ: Type | None, api: CheckerPluginInterface) -> list[str]:
    """The dynamic values of an argument of a size-like parameter that are not sizes of
    declared dims (``mypy_dims.size_kind``), read item by item as ``dynamic_parts`` reads."""
    if isinstance(expr, (TupleExpr, ListExpr)):
        return [p for item in expr.items for p in non_size_parts(item, None, api)]
    if isinstance(expr, StarExpr):
        return non_size_parts(expr.expr, None, api)
    if isinstance(expr, SliceExpr):
        bounds = (expr.begin_index, expr.end_index, expr.stride)
        return [p for b in bounds if b is not None for p in non_size_parts(b, None, api)]
    if isinstance(expr, NameExpr) and isinstance(expr.node, Var) and isinstance(api, TypeChecker):
        function = api.scope.current_function()
        for stmt in walk_statements(function.body.body) if function is not None else []:
            if isinstance(stmt, AssignmentStmt) and isinstance(stmt.rvalue, (TupleExpr, ListExpr)):
                if any(isinstance(lv, NameExpr) and lv.node is expr.node for lv in stmt.lvalues):
                    return [f'{part} in "{expr.name}"' for part in non_size_parts(stmt.rvalue, None, api)]
    if mypy_dims.size_kind(expr, api) != "other":
        return []
    return dynamic_parts(expr, typ, api)


def declared_size(lookup: Lookup, ctx: MethodContext) -> Type:
    """``x.shape[i]`` / ``x.size(i)`` of a dim declared dynamic (``Dims("B", "T")``): a
    ``DynamicInt`` (a size symbol at run time); of a static dim, torch's ``int``."""
    found, entry = mypy_dims.dim_entry(ctx.context, ctx.api) if isinstance(ctx.context, Expression) else (False, None)
    if found and entry is not None:
        dynamic = lookup(DYNAMIC_INT)
        if dynamic is not None:
            return dynamic
    return ctx.default_return_type


def static_message(op: str, params: list[str], parts: list[str]) -> str:
    """The text of a [symscalar-static-required] error."""
    return messages.static_required(op, params, ", ".join(parts), one_line=True)


def check_function_call(op: str, ctx: FunctionContext) -> Type:
    """Call hook of an op's function spelling with static parameters."""
    check_static_arguments(op, 0, ctx.callee_arg_names, ctx.arg_types, ctx.arg_kinds, ctx.args, ctx.api)
    return ctx.default_return_type


def is_unbound(object_type: ProperType) -> bool:
    """``torch.Tensor.sum(x, n)``: a method reached through the class, ``self`` passed."""
    return isinstance(object_type, TypeType) or (isinstance(object_type, CallableType) and object_type.is_type_obj())


def check_method_call(op: str, ctx: MethodContext) -> Type:
    """Call hook of an op's method spelling with static parameters (bound or unbound)."""
    offset = 0 if is_unbound(ctx.type) else 1
    check_static_arguments(op, offset, ctx.callee_arg_names, ctx.arg_types, ctx.arg_kinds, ctx.args, ctx.api)
    return ctx.default_return_type


def callee_op(expr: Expression, plugin: SymscalarPlugin, api: CheckerPluginInterface) -> tuple[str, int] | None:
    """The op a callable expression stands for and the offset of its first argument:
    ``torch.sum`` (0), ``x.sum`` (1: bound), ``torch.Tensor.sum`` (0)."""
    if isinstance(expr, MemberExpr) and not expr.fullname:
        owner = get_proper_type(api.get_expression_type(expr.expr))
        unbound = is_unbound(owner)
        if isinstance(owner, CallableType) and unbound:
            owner = get_proper_type(owner.ret_type)
        if isinstance(owner, TypeType):
            owner = owner.item
        if isinstance(owner, Instance):
            op = plugin.method_op(f"{owner.type.fullname}.{expr.name}")
            if op is not None:
                return op, 0 if unbound else 1
        return None
    if isinstance(expr, (NameExpr, MemberExpr)) and expr.fullname:
        op = op_name(expr.fullname)
        return (op, 0) if op is not None else None
    return None


def check_partial(
    plugin: SymscalarPlugin, default: Callable[[FunctionContext], Type] | None, ctx: FunctionContext
) -> Type:
    """Hook of ``functools.partial(op, ...)``: the bound arguments reach the op's parameters
    as in a call; mypy's own partial typing (``default``) is kept."""
    if len(ctx.args) == 3 and ctx.args[0]:
        found = callee_op(ctx.args[0][0], plugin, ctx.api)
        if found is not None:
            op, offset = found
            params, _, positional = STATIC_PARAMS[op]
            for i, (expr, typ) in enumerate(zip(ctx.args[1], ctx.arg_types[1])):
                index = i + offset
                report_static(op, params[index] if index < positional else None, expr, typ, ctx)
            for name, expr, typ in zip(ctx.arg_names[2], ctx.args[2], ctx.arg_types[2]):
                report_static(op, name, expr, typ, ctx)
            # mypy's partial checks the bound arguments against the callee's stub: show it the
            # widened signature, as a call of the op sees it (`partial(F.dropout, p=p)`)
            callee = get_proper_type(ctx.arg_types[0][0])
            if isinstance(callee, CallableType):
                widened = widened_signature(callee, ctx.context, plugin.lookup, ctx.api)
                ctx = ctx._replace(arg_types=[[widened], *ctx.arg_types[1:]])
    return default(ctx) if default is not None else ctx.default_return_type


def report_static(op: str, param: str | None, expr: Expression, typ: Type, ctx: FunctionContext) -> None:
    """Report ``expr`` if it is dynamic and ``param`` is a static parameter of ``op``."""
    if param is None or param not in static_params(op):
        return
    parts = dynamic_parts(expr, typ, ctx.api)
    if parts:
        ctx.api.fail(static_message(op, [param], parts), expr, code=STATIC_REQUIRED)


# ---- conditions on dynamic values


class ConditionIndex:
    """Which expressions of a function Python turns into a bool: found in one pass over the
    function the first time a hook asks, then looked up (linear in the function's size, not
    one scan per comparison). Entries are keyed by the function's body, which mypy never
    reuses for different code; the memo is dropped when mypy moves to another module tree."""

    def __init__(self) -> None:
        self.tree: MypyFile | None = None
        self.memo: dict[int, tuple[object, frozenset[int]]] = {}

    def is_condition(self, expr: Expression, api: CheckerPluginInterface) -> bool:
        """Whether ``expr`` is used as a condition in the function (or module) being checked."""
        assert isinstance(api, TypeChecker)
        if api.tree is not self.tree:
            self.tree, self.memo = api.tree, {}
        function = api.scope.current_function()
        body: object = function.body if function is not None else api.tree.defs
        entry = self.memo.get(id(body))
        if entry is None or entry[0] is not body:
            scope: Node = function.body if function is not None else api.tree
            statements = function.body.body if function is not None else api.tree.defs
            entry = (body, frozenset(map(id, conditions_of(scope, statements))))
            self.memo[id(body)] = entry
        return id(expr) in entry[1]


def conditions_of(scope: Node, statements: Sequence[Statement]) -> list[Expression]:
    """Every expression in ``scope`` that Python turns into a bool."""
    roots: list[Expression] = []
    statement_conditions(statements, roots)
    expression_conditions(scope, roots)
    out: list[Expression] = []
    while roots:
        expr = roots.pop()
        out.append(expr)
        # `a and b` / `a or b` / `not a` as a condition: each operand is one too.
        if isinstance(expr, OpExpr) and expr.op in ("and", "or"):
            roots += [expr.left, expr.right]
        elif isinstance(expr, UnaryExpr) and expr.op == "not":
            roots.append(expr.expr)
    return out


def statement_conditions(body: Sequence[Statement], out: list[Expression]) -> None:
    """Collect the conditions of ``if``/``while``/``assert`` statements and ``match`` guards
    in ``body``."""
    for stmt in body:
        if isinstance(stmt, IfStmt):
            out.extend(stmt.expr)
        elif isinstance(stmt, (WhileStmt, AssertStmt)):
            out.append(stmt.expr)
        elif isinstance(stmt, MatchStmt):
            out.extend(g for g in stmt.guards if g is not None)
        for block in blocks(stmt):
            statement_conditions(block.body, out)


def blocks(stmt: Statement) -> list[Block]:
    """The blocks nested directly in a statement."""
    if isinstance(stmt, IfStmt):
        return [*stmt.body, *([stmt.else_body] if stmt.else_body else [])]
    if isinstance(stmt, (WhileStmt, ForStmt)):
        return [stmt.body, *([stmt.else_body] if stmt.else_body else [])]
    if isinstance(stmt, WithStmt):
        return [stmt.body]
    if isinstance(stmt, TryStmt):
        optional = [stmt.else_body, stmt.finally_body]
        return [stmt.body, *stmt.handlers, *(b for b in optional if b is not None)]
    if isinstance(stmt, MatchStmt):
        return list(stmt.bodies)
    if isinstance(stmt, Block):
        return [stmt]
    if isinstance(stmt, Decorator):
        return [stmt.func.body]
    if isinstance(stmt, FuncDef):
        return [stmt.body]
    if isinstance(stmt, ClassDef):
        return [stmt.defs]
    return []


def expression_conditions(scope: Node, out: list[Expression]) -> None:
    """Collect what Python turns into a bool inside expressions: ternary conditions,
    operands of ``not``, left operands of ``and``/``or``, comprehension filters."""
    for expr in get_subexpressions(scope):
        if isinstance(expr, ConditionalExpr):
            out.append(expr.cond)
        elif isinstance(expr, UnaryExpr) and expr.op == "not":
            out.append(expr.expr)
        elif isinstance(expr, OpExpr) and expr.op in ("and", "or"):
            out.append(expr.left)
        elif isinstance(expr, (GeneratorExpr, DictionaryComprehension)):
            out.extend(c for conditions in expr.condlists for c in conditions)


def check_dynamic_condition(index: ConditionIndex, ctx: MethodContext) -> Type:
    """Hook of the dynamic classes' comparisons and logical operators: report the result
    when it is used as a condition."""
    if not is_dynamic(ctx.default_return_type):
        return ctx.default_return_type
    expr = ctx.context
    verdict = mypy_dims.size_comparison(expr, ctx.api) if isinstance(expr, Expression) else None
    if verdict is not None and isinstance(expr, ComparisonExpr):
        # sizes of declared dims: a Python bool at run time, decided by the ranges or
        # recorded as a size guard; refused where that guard would pin a dim
        if verdict.pin is not None:
            fail_unfiltered(ctx.api, mypy_dims.pin_message(verdict), expr, code=SIZE_GUARD)
        return ctx.api.named_generic_type("builtins.bool", [])
    if isinstance(expr, (ComparisonExpr, OpExpr, UnaryExpr)) and index.is_condition(expr, ctx.api):
        fail_unfiltered(
            ctx.api,
            messages.dynamic_condition(describe(expr), one_line=True),
            expr,
            code=DYNAMIC_CONDITION,
        )
    return ctx.default_return_type


def fail_unfiltered(api: CheckerPluginInterface, message: str, context: Context, code: ErrorCode) -> None:
    """Report an error from a hook that mypy may run with errors filtered.

    mypy tries ``a.__eq__(b)`` and then ``b.__eq__(a)`` with errors filtered, keeps the first
    that has none and drops the errors of the others, so an error reported by the plugin for
    ``n == 2`` would vanish behind ``int.__eq__(object)``, and change the inferred type. The
    condition check holds whichever method Python ends up calling, so it is reported past
    those filters (mypy removes the duplicate if the expression is checked twice). The same
    holds for overloads tried one by one (``x.sum(**opts)``).
    """
    assert isinstance(api, TypeChecker)
    errors = api.msg.errors
    watchers = errors._watchers
    errors._watchers = []
    try:
        api.fail(message, context, code=code)
    finally:
        errors._watchers = watchers


def dynamic_equality(lookup: Lookup, index: ConditionIndex, ctx: MethodContext) -> Type:
    """``2 == n``: ``int.__eq__`` returns NotImplemented at run time and ``n.__eq__(2)``
    answers, so the result is a ``DynamicBool`` (typeshed says ``bool``)."""
    if not any(is_dynamic(t) for types in ctx.arg_types for t in types):
        return ctx.default_return_type
    result = lookup(DYNAMIC_BOOL)
    if result is None:
        return ctx.default_return_type
    return check_dynamic_condition(index, ctx._replace(default_return_type=result))


# ---- dynamic values turned into Python values


def concretization_message(what: str, value: str) -> str:
    """The text of a [symscalar-concretization] error (DynamicValueError's twin); ``value``
    names the dynamic value and its type."""
    return messages.concretization(what, value, one_line=True)


def dynamic_arguments(
    args: list[list[Expression]], arg_types: list[list[Type]] | None, api: CheckerPluginInterface
) -> Iterator[tuple[Expression, Type]]:
    """Each argument that is or holds a dynamic value, with that value's type. Displays are
    read item by item (``[n, 2]`` is ``list[object]`` to mypy); other arguments by their type
    (``arg_types``, or inferred when the call is not checked yet)."""
    for formal, exprs in enumerate(args):
        for i, expr in enumerate(exprs):
            if isinstance(expr, (ListExpr, TupleExpr, SetExpr)):
                items = [(item, api.get_expression_type(item)) for item in expr.items]
            else:
                typ = arg_types[formal][i] if arg_types is not None else None
                typ = typ if typ is not None else api.get_expression_type(expr)
                if not is_dynamic(typ) and not isinstance(expr, (NameExpr, MemberExpr)):
                    # any(v > n for ...) is Generator[object] in typeshed's Iterable[object]
                    # context; without it, Generator[DynamicBool]
                    typ = context_free_type(expr, typ, api)
                items = [(expr, typ)]
            for item, typ in items:
                if is_dynamic(typ):
                    yield item, typ
                    break


def relax_when_dynamic(ctx: FunctionSigContext) -> FunctionLike:
    """Signature hook of a builtin that typeshed types against dynamic numbers (``int(n)``,
    ``sorted([n, 2])``): with a dynamic argument, accept anything, so that the call hook's
    symscalar message replaces mypy's generic one."""
    if not any(True for _ in dynamic_arguments(ctx.args, None, ctx.api)):
        return ctx.default_signature
    sig = ctx.default_signature
    anything = AnyType(TypeOfAny.special_form)
    return sig.copy_modified(
        arg_types=[anything] * len(sig.arg_types),
        variables=[],
        ret_type=sig.ret_type if not sig.variables else anything,
    )


def report_concretization(what: str, ctx: FunctionContext) -> Type:
    """Call hook of ``int()``, ``bool()``, ``range()``, ``any()``, ``sorted()``...: report a
    dynamic argument (its value is needed in Python)."""
    for expr, typ in dynamic_arguments(ctx.args, ctx.arg_types, ctx.api):
        value = f'dynamic value "{describe(expr)}" ({type_name(typ)})'
        ctx.api.fail(concretization_message(what, value), ctx.context, code=CONCRETIZATION)
        break
    return ctx.default_return_type


def report_formatting(what: str, ctx: FunctionContext | MethodContext) -> Type:
    """Call hook of ``str()``, ``format()``, ``print()`` and ``str.format`` (so f-strings):
    report an argument that may be a dynamic value (its ``__str__``/``__format__`` needs the
    value). A container of dynamic values formats their repr, which is allowed, as is a
    ``{n!r}`` field."""
    shown_by_repr = repr_fields(ctx.context)
    for exprs, types, names in zip(ctx.args, ctx.arg_types, ctx.arg_names):
        for i, (expr, typ) in enumerate(zip(exprs, types)):
            key: int | str | None = names[i] if names[i] is not None else i
            if key in shown_by_repr:
                continue
            if may_be_dynamic(typ):
                value = f'dynamic value "{describe(expr)}" ({type_name(typ)})'
                ctx.api.fail(concretization_message(what, value), expr, code=CONCRETIZATION)
                return ctx.default_return_type
    return ctx.default_return_type


def repr_fields(call: Context) -> set[int | str]:
    """The arguments of ``"...".format(...)`` (and so of an f-string) that every field shows
    with ``!r``/``!a`` (their ``repr``, which a dynamic value has)."""
    if not (isinstance(call, CallExpr) and isinstance(call.callee, MemberExpr)):
        return set()
    if not isinstance(call.callee.expr, StrExpr):
        return set()
    try:
        fields = [f for f in string.Formatter().parse(call.callee.expr.value) if f[1] is not None]
    except ValueError:
        return set()
    uses: dict[int | str, set[str | None]] = {}
    auto = 0
    for _, name, _, conversion in fields:
        field = (name or "").split(".")[0].split("[")[0]
        key: int | str
        if field == "":
            key, auto = auto, auto + 1
        else:
            key = int(field) if field.isdigit() else field
        uses.setdefault(key, set()).add(conversion)
    return {key for key, conversions in uses.items() if conversions <= {"r", "a"}}


def report_hashed_key(what: str, ctx: MethodContext) -> Type:
    """Hook of ``dict.get``/``d[k]``/``set.add``...: the key is hashed (also a tuple's items)."""
    if ctx.args and ctx.args[0] and is_dynamic(ctx.arg_types[0][0]):
        expr, typ = ctx.args[0][0], ctx.arg_types[0][0]
        value = f'dynamic value "{describe(expr)}" ({type_name(typ)})'
        ctx.api.fail(concretization_message(what, value), expr, code=CONCRETIZATION)
    return ctx.default_return_type


def check_contains(ctx: MethodContext) -> Type:
    """Hook of ``__contains__`` (``n in (1, 2)``): Python compares the value with each element
    (``==``, or ``hash`` for sets and dicts) and needs a Python bool: a dynamic element or
    container item cannot answer."""
    if not ctx.args or not ctx.args[0]:
        return ctx.default_return_type
    element, items = ctx.arg_types[0][0], compared_items(ctx.type)
    expr = ctx.context
    if not is_dynamic(element) and not is_dynamic(items):
        # `3 in [n, 4]`: mypy joins the display's items to object; read them one by one
        items = next((t for t in display_item_types(expr, ctx.api) if is_dynamic(t)), items)
    if is_dynamic(element) or is_dynamic(items):
        typ = element if is_dynamic(element) else items
        shown = describe(expr) if isinstance(expr, ComparisonExpr) else "in"
        value = f"a dynamic value ({type_name(typ)})"
        fail_unfiltered(ctx.api, concretization_message(f'"{shown}"', value), expr, code=CONCRETIZATION)
    return ctx.default_return_type


def display_item_types(expr: Context, api: CheckerPluginInterface) -> list[Type]:
    """The item types of the list/tuple/set displays on the right of ``in`` in ``expr``."""
    if not isinstance(expr, ComparisonExpr):
        return []
    out = []
    for op, right in zip(expr.operators, expr.operands[1:]):
        if op in ("in", "not in") and isinstance(right, (ListExpr, TupleExpr, SetExpr)):
            out += [api.get_expression_type(item) for item in right.items]
    return out


def compared_items(container: ProperType) -> Type:
    """What ``in`` compares with in a container: a mapping's keys (``"a" in {"a": n}`` never
    looks at ``n``), else the container (its items)."""
    if isinstance(container, Instance) and len(container.args) == 2 and (container.type.has_base("typing.Mapping")):
        return container.args[0]
    return container


def check_match_subjects(function: FuncDef, api: CheckerPluginInterface) -> None:
    """``match n:`` on a dynamic value: each ``case`` compares (``==``) or tests ``isinstance``
    and needs a Python bool. Reported for the subjects that name a dynamic parameter or
    variable (their declared type is known before the body is checked)."""
    for stmt in walk_statements(function.body.body):
        if not isinstance(stmt, MatchStmt):
            continue
        subject = stmt.subject
        if isinstance(subject, NameExpr) and isinstance(subject.node, Var) and subject.node.type:
            typ = subject.node.type
            if is_dynamic(typ):
                value = f'dynamic value "{subject.name}" ({type_name(typ)})'
                fail_unfiltered(api, concretization_message("match", value), subject, code=CONCRETIZATION)


def walk_statements(body: Sequence[Statement]) -> Iterator[Statement]:
    """Every statement in ``body``, nested blocks included."""
    for stmt in body:
        yield stmt
        for block in blocks(stmt):
            yield from walk_statements(block.body)


# ---- isinstance(v, int)


def check_number_isinstance(ctx: FunctionContext) -> Type:
    """Hook of ``isinstance``: report legacy number classes on a maybe-dynamic value."""
    if len(ctx.args) != 2 or not ctx.args[0] or not ctx.args[1]:
        return ctx.default_return_type
    value, classes = ctx.args[0][0], ctx.args[1][0]
    if not may_be_dynamic(ctx.arg_types[0][0]):
        return ctx.default_return_type
    legacy = [c for c in class_refs(classes) if c in LEGACY_NUMBER_CLASSES]
    if legacy:
        names = [name.replace("builtins.", "") for name in legacy]
        shown = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
        ctx.api.fail(
            f'isinstance("{describe(value)}", {shown}) is False for a dynamic number: '
            f'"{describe(value)}" may be {ctx.arg_types[0][0]}, and DynamicInt/DynamicFloat/'
            "DynamicBool are not int/float/numbers.Number; use symscalar.is_static(v), "
            "symscalar.is_dynamic(v) or isinstance(v, symscalar.NumberClasses)",
            ctx.context,
            code=NUMBER_ISINSTANCE,
        )
    return ctx.default_return_type


def class_refs(expr: Expression) -> list[str]:
    """The classes an isinstance class argument names."""
    if isinstance(expr, (NameExpr, MemberExpr)) and expr.fullname:
        return [expr.fullname]
    if isinstance(expr, TupleExpr):
        return [name for item in expr.items for name in class_refs(item)]
    if isinstance(expr, OpExpr) and expr.op == "|":
        return class_refs(expr.left) + class_refs(expr.right)
    return []


# ---- symscalar.jit: the options, the jitted body, and callers passing Python numbers


def jitted_function(ctx: FunctionContext, decorators: DecoratorIndex) -> tuple[FuncDef | None, CallableType | None]:
    """The function a ``jit`` call compiles and its signature: ``@jit`` (the hook's context is
    the decorator), ``@jit(...)`` (the call is one of a decorator's), ``jit(fn, ...)``."""
    decorator = ctx.context if isinstance(ctx.context, Decorator) else decorators.find(ctx.context, ctx.api)
    if decorator is not None:
        typ = get_proper_type(decorator.func.type) if decorator.func.type is not None else None
        return decorator.func, typ if isinstance(typ, CallableType) else None
    if ctx.args and ctx.args[0] and ctx.arg_types[0]:
        typ = get_proper_type(ctx.arg_types[0][0])
        expr = ctx.args[0][0]
        node = expr.node if isinstance(expr, RefExpr) else None
        func = node.func if isinstance(node, Decorator) else node
        return (func if isinstance(func, FuncDef) else None), (typ if isinstance(typ, CallableType) else None)
    return None, None


def option_items(expr: Expression) -> list[tuple[Expression, str | int]] | None:
    """The names and positions a ``static=``/``dynamic=`` argument lists, if written out."""
    if isinstance(expr, StrExpr):
        return [(expr, expr.value)]
    if isinstance(expr, IntExpr):
        return [(expr, expr.value)]
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return [(expr, -expr.expr.value)]
    if isinstance(expr, (ListExpr, TupleExpr, SetExpr)):
        items = [option_items(item) for item in expr.items]
        return None if any(i is None for i in items) else [x for i in items if i is not None for x in i]
    return None


def annotation_kind(typ: Type) -> str:
    """What an annotation makes a jitted function's parameter, as the run time reads it
    (``symscalar._jit.params``): "dynamic", "tensor", "undecided" (none, ``Any``, ``object``)
    or "other" (static, or neither)."""
    t = get_proper_type(typ)
    if isinstance(t, TypeVarType):
        return annotation_kind(t.upper_bound)
    if isinstance(t, AnyType) or (isinstance(t, Instance) and t.type.fullname == "builtins.object"):
        return "undecided"
    if may_be_dynamic(t):
        return "dynamic"
    if isinstance(t, Instance) and (t.type.has_base(TENSOR) or t.type.has_base(TENSOR_BASE)):
        return "tensor"
    return "other"


def check_jit_options(ctx: FunctionContext, sig: CallableType) -> None:
    """``jit(fn, static=[...], dynamic=[...])``: the annotation decides, the options decide
    only where it does not (the rule ``symscalar._jit.params.check_option`` applies when
    ``jit`` runs): a contradiction, or a name that is no parameter, is reported here."""
    names = list(sig.arg_names)
    for option in ("static", "dynamic"):
        if option not in ctx.callee_arg_names:
            continue
        for expr in ctx.args[ctx.callee_arg_names.index(option)]:
            for item_expr, item in option_items(expr) or []:
                index = item if isinstance(item, int) else (names.index(item) if item in names else None)
                if index is None or not -len(names) <= index < len(names) or names[index] is None:
                    shown = ", ".join(f'"{n}"' for n in names if n is not None)
                    ctx.api.fail(
                        f"jit(..., {option}=...): {item!r} is not a parameter; the parameters are {shown}",
                        item_expr,
                        code=JIT_OPTION,
                    )
                    continue
                name, kind = names[index], annotation_kind(sig.arg_types[index])
                contradicts = kind in ("dynamic", "tensor") if option == "static" else kind in ("tensor", "other")
                if contradicts:
                    message = jit_option_message(option, str(name), sig.arg_types[index], kind)
                    ctx.api.fail(message, item_expr, code=JIT_OPTION)


def jit_option_message(option: str, name: str, typ: Type, kind: str) -> str:
    """The text of a [symscalar-jit-option] contradiction (``JitOptionError``'s twin)."""
    if option == "static":
        meaning = "a tensor" if kind == "tensor" else "dynamic"
        fix = "annotate it StaticInt/StaticFloat/StaticBool (int, float, bool) to make it static"
    else:
        meaning = "a tensor" if kind == "tensor" else "static"
        fix = "annotate it DynamicInt/DynamicFloat/DynamicBool (or IntLike, FloatLike, NumberLike) to make it dynamic"
    return (
        f'jit(..., {option}=["{name}"]): parameter "{name}" is annotated {type_name(typ)}, which makes it {meaning}; '
        f"the annotation decides (mypy reads it too), and {option}= only applies to parameters whose "
        f'annotation does not: {fix}, or remove "{name}" from {option}='
    )


def check_jitted_body(function: FuncDef, api: CheckerPluginInterface) -> None:
    """What no hook sees in a jitted function, read from the types mypy inferred for its body
    (checked before its decorators): dict/set displays hashing a dynamic key, ``%``-formatting
    a dynamic value, a value that may be dynamic but is not only dynamic as a condition
    (``if d:`` with ``d: DynamicFloat | None``, which ``truthy-bool`` leaves alone), and a
    tensor method on an untyped receiver (``lambda t: t.sum(n)``)."""
    assert isinstance(api, TypeChecker)

    def typ(expr: Expression) -> Type | None:
        # inferred again (speculatively: errors and types discarded), as mypy does not keep
        # the types of a function body; its variables' inferred types are on their nodes
        with api.msg.filter_errors(), api.local_type_map:
            return api.expr_checker.accept(expr)

    def report(what: str, expr: Expression, t: Type) -> None:
        value = f'dynamic value "{describe(expr)}" ({type_name(t)})'
        api.fail(concretization_message(what, value), expr, code=CONCRETIZATION)

    for expr in get_subexpressions(function.body):
        keys: list[Expression] = []
        if isinstance(expr, DictExpr):
            keys = [k for k, _ in expr.items if k is not None]
        elif isinstance(expr, SetExpr):
            keys = list(expr.items)
        elif isinstance(expr, DictionaryComprehension):
            keys = [expr.key] if expr.key is not None else []
        elif isinstance(expr, SetComprehension):
            keys = [expr.generator.left_expr]
        for key in keys:
            t = typ(key)
            if t is not None and is_dynamic(t):
                report("hashing (a dict key or set item)", key, t)
        if isinstance(expr, OpExpr) and expr.op == "%" and isinstance(expr.left, StrExpr):
            values = expr.right.items if isinstance(expr.right, TupleExpr) else [expr.right]
            for value in values:
                t = typ(value)
                if t is not None and is_dynamic(t):
                    report('"%"-formatting', value, t)
                    break
        if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
            check_untyped_receiver(expr, expr.callee, typ, api)
    for cond in conditions_of(function.body, function.body.body):
        if isinstance(cond, (ComparisonExpr, UnaryExpr)) or (isinstance(cond, OpExpr) and cond.op in ("and", "or")):
            continue  # the operator hooks report these (and the operands are conditions too)
        t = typ(cond)
        if t is not None and may_be_dynamic(t) and not only_dynamic(t):
            api.fail(
                f'Dynamic value used as a condition: "{describe(cond)}" may be a dynamic value '
                f"({type_name(t)}), whose truth is only known when the compiled program runs; test "
                f'"{describe(cond)} is not None" for None, use torch.where(...) or symscalar.check(cond, msg), '
                "or make the value static (StaticInt, or symscalar.specialize(...))",
                cond,
                code=DYNAMIC_CONDITION,
            )


def check_untyped_receiver(
    call: CallExpr, callee: MemberExpr, typ: Callable[[Expression], Type | None], api: CheckerPluginInterface
) -> None:
    """``t.sum(n)`` where ``t`` is untyped (``Any``: an unannotated lambda or parameter): mypy
    calls no hook on ``Any``; in a jitted function such a receiver is a tensor when it has a
    tensor method, so the tensor method's static parameters are checked."""
    op = "torch.Tensor." + callee.name
    receiver = typ(callee.expr)
    if op not in STATIC_PARAMS or not static_params(op) or receiver is None:
        return
    if not isinstance(get_proper_type(receiver), AnyType):
        return
    for position, (arg, kind, name) in enumerate(zip(call.args, call.arg_kinds, call.arg_names)):
        if kind in (ARG_STAR, ARG_STAR2):
            return
        param = static_parameter_of(op, position, name, 1) if name is None or name in STATIC_PARAMS[op][0] else None
        t = typ(arg)
        parts = dynamic_parts(arg, t, api) if param is not None and t is not None else []
        if param is not None and parts:
            api.fail(static_message(op, [param], parts), arg, code=STATIC_REQUIRED)


def widen_jit_function(lookup: Lookup, decorators: DecoratorIndex, ctx: FunctionContext) -> Type:
    """Hook of ``symscalar.jit(fn)``: the returned ``JitFunction``'s dynamic parameters
    also accept Python numbers (``reveal_type`` shows it). Also checks the options against
    the annotations, and the jitted body (``match`` statements, ``check_jitted_body``)."""
    function, sig = jitted_function(ctx, decorators)
    if sig is not None:
        check_jit_options(ctx, sig)
    if function is not None:
        check_match_subjects(function, ctx.api)
        check_jitted_body(function, ctx.api)
    ret = get_proper_type(ctx.default_return_type)
    if not isinstance(ret, Instance) or not ret.args:
        return ctx.default_return_type
    params = get_proper_type(ret.args[0])
    if not isinstance(params, Parameters):
        return ctx.default_return_type
    widened = params.copy_modified(arg_types=[accept_python_number(t, lookup) for t in params.arg_types])
    return ret.copy_modified(args=[widened, *ret.args[1:]])


def widen_jit_call(lookup: Lookup, ctx: MethodSigContext) -> FunctionLike:
    """Signature hook of ``JitFunction.__call__``: however the function was jitted (bare
    ``@jit``, ``@jit(backend=...)``, ``jit(fn, static=...)``), callers pass Python numbers
    for its dynamic parameters."""
    sig = ctx.default_signature
    return sig.copy_modified(arg_types=[accept_python_number(t, lookup) for t in sig.arg_types])


def accept_python_number(typ: Type, lookup: Lookup) -> Type:
    """``DynamicFloat`` -> ``float | DynamicFloat`` (unchanged if the number is there)."""
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.type.fullname in PYTHON_NUMBER:
        number = lookup(PYTHON_NUMBER[t.type.fullname])
        return UnionType([number, typ]) if number is not None else typ
    if isinstance(t, UnionType):
        present = {class_name(item) for item in t.items}
        return UnionType(
            [
                item if PYTHON_NUMBER.get(class_name(item)) in present else accept_python_number(item, lookup)
                for item in t.items
            ]
        )
    return typ


def class_name(typ: Type) -> str:
    """The class name of an instance type, else ``""``."""
    t = get_proper_type(typ)
    return t.type.fullname if isinstance(t, Instance) else ""


# ---- the plugin


class DecoratorIndex:
    """Which decorator each ``@jit(...)`` call belongs to, found in one pass over a module's
    tree (mypy gives the hook of ``jit(static=...)`` the call, not the decorated function)."""

    def __init__(self) -> None:
        self.tree: MypyFile | None = None
        self.owner: dict[int, Decorator] = {}

    def find(self, call: Context, api: CheckerPluginInterface) -> Decorator | None:
        assert isinstance(api, TypeChecker)
        if api.tree is not self.tree:
            self.tree, self.owner = api.tree, {}
            for stmt in walk_statements(api.tree.defs):
                if isinstance(stmt, Decorator):
                    self.owner.update((id(d), stmt) for d in stmt.decorators)
        decorator = self.owner.get(id(call))
        return decorator if decorator is not None and any(d is call for d in decorator.decorators) else None


class SymscalarPlugin(Plugin):
    """Dispatches mypy's hooks to the callbacks above by fully qualified name."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self.lookup = class_lookup(self)
        self.conditions = ConditionIndex()
        self.decorators = DecoratorIndex()
        self.default_partial = DefaultPlugin(self.options).get_function_hook(PARTIAL)

    def report_config_data(self, ctx: ReportConfigContext) -> dict[str, str]:
        """Data mypy stores with each cached module (see ``CONFIG_DATA``)."""
        return CONFIG_DATA

    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        """A module that imports torch also loads ``symscalar.types`` (when it is installed),
        so that the widened torch signatures, and with them every message, are the same
        whichever other modules are in the build or in the cache."""
        if file.fullname.startswith(("symscalar", "torch")):
            return []
        imports_torch = any(
            getattr(imp, "id", "").split(".")[0] == "torch"
            or any(mod.split(".")[0] == "torch" for mod, _ in getattr(imp, "ids", []))
            for imp in file.imports
        )
        return [(10, TYPES_MODULE, -1)] if imports_torch else []

    def get_function_signature_hook(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        """Widen the ops' function spellings; relax concretizing builtins' signatures."""
        if op_name(fullname) is not None:
            return functools.partial(widen_function_signature, self.lookup)
        if fullname in CONCRETIZING and CONCRETIZING[fullname][1]:
            return relax_when_dynamic
        return None

    def method_op(self, fullname: str) -> str | None:
        """The op a method stands for: ``torch.Tensor.sum`` also for the methods of
        ``Tensor`` subclasses such as ``torch.nn.Parameter``."""
        op = op_name(fullname)
        if op is not None:
            return op
        cls, _, method = fullname.rpartition(".")
        name = "torch.Tensor." + method
        if name not in STATIC_PARAMS:
            return None
        node = self.lookup_fully_qualified(cls)
        if (
            node is not None
            and isinstance(node.node, TypeInfo)
            and (node.node.has_base(TENSOR) or node.node.has_base(TENSOR_BASE))
        ):
            return name
        return None

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        """Widen the ops' method and operator spellings and jitted functions' calls."""
        if fullname == JIT_CALL:
            return functools.partial(widen_jit_call, self.lookup)
        if self.method_op(fullname) is not None:
            return functools.partial(widen_method_signature, self.lookup)
        return None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        """isinstance, symscalar.jit, functools.partial, concretizing builtins and the ops'
        function spellings."""
        if fullname == ISINSTANCE:
            return check_number_isinstance
        if fullname == JIT:
            return functools.partial(widen_jit_function, self.lookup, self.decorators)
        if fullname == PARTIAL:
            return functools.partial(check_partial, self, self.default_partial)
        if fullname in CONCRETIZING:
            return functools.partial(report_concretization, CONCRETIZING[fullname][0])
        if fullname in FORMATTING:
            return functools.partial(report_formatting, FORMATTING[fullname])
        if fullname in HASHING:
            return functools.partial(report_concretization, HASHING[fullname])
        op = op_name(fullname)
        if op is not None and static_params(op):
            return functools.partial(check_function_call, op)
        return None

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        """Dynamic comparisons, ``2 == n``, ``in`` and the ops' method spellings."""
        cls, _, method = fullname.rpartition(".")
        if fullname in DECLARED_SIZES:
            return functools.partial(declared_size, self.lookup)
        if cls in DYNAMIC_CLASSES and method in BOOL_METHODS:
            return functools.partial(check_dynamic_condition, self.conditions)
        if cls in WIDENED and method in ("__eq__", "__ne__"):
            return functools.partial(dynamic_equality, self.lookup, self.conditions)
        if method == "__contains__":
            return check_contains
        if fullname == STR_FORMAT:
            return functools.partial(report_formatting, "formatting (an f-string or str.format())")
        if method in HASHED_KEY_METHODS.get(cls, ()):
            return functools.partial(report_hashed_key, f"hashing (a {cls.removeprefix('builtins.')} key)")
        op = self.method_op(fullname)
        if op is not None and static_params(op):
            return functools.partial(check_method_call, op)
        return None


def plugin(version: str) -> type[SymscalarPlugin]:
    """mypy's entry point: the plugin class."""
    return SymscalarPlugin
