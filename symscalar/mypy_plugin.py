"""The symscalar mypy plugin: static/dynamic misuse found before the code runs.

Enable it with ``plugins = ["symscalar.mypy_plugin"]`` in ``[tool.mypy]`` (or run
``python -m symscalar check PATH...``). It reads the op contract from
``symscalar._static_params`` (generated from ``symscalar.tracing.OPS``, so the plugin never
imports torch) and:

* reports a dynamic value passed to a static parameter of an op, in the ``symscalar.ops``
  and the torch spelling (``[symscalar-static-required]``, the static twin of
  ``StaticValueRequiredError``);
* lets dynamic numbers through where an op allows them, although torch's stubs only accept
  Python numbers there (``x * s``, ``torch.mul(x, s)``);
* reports a comparison or logical operation on dynamic values used as a condition
  (``if d > 0:``), which raises ``DynamicValueError`` when traced
  (``[symscalar-dynamic-condition]``; plain names are caught by mypy's ``truthy-bool``);
* reports ``isinstance(v, int | float | numbers.Number)`` on a value that may be dynamic
  (``[symscalar-number-isinstance]``);
* widens a ``symscalar.jit`` function's ``DynamicInt``/``DynamicFloat``/``DynamicBool``
  parameters so that callers may pass Python numbers.

Like mypy's own ``proper_plugin``: one ``Plugin`` subclass dispatching on fully qualified
names, module-level callbacks, no global state (incremental mode and dmypy reuse the process).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.lookup import lookup_fully_qualified
from mypy.nodes import (
    AssertStmt,
    Block,
    ForStmt,
    MatchStmt,
    Statement,
    TryStmt,
    WithStmt,
    ComparisonExpr,
    CallExpr,
    ConditionalExpr,
    FloatExpr,
    IntExpr,
    Context,
    Expression,
    GeneratorExpr,
    IfStmt,
    ListExpr,
    MemberExpr,
    NameExpr,
    Node,
    OpExpr,
    DictionaryComprehension,
    TupleExpr,
    TypeInfo,
    UnaryExpr,
    WhileStmt,
)
from mypy.plugin import (
    CheckerPluginInterface,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.server.subexpr import get_subexpressions
from mypy.subtypes import is_subtype
from mypy.types import (
    CallableType,
    FunctionLike,
    Instance,
    Parameters,
    TupleType,
    Type,
    UnionType,
    get_proper_type,
)

from symscalar._static_params import STATIC_PARAMS

__all__ = ["SymscalarPlugin", "plugin", "__version__"]

# Bump when the plugin's behaviour changes: mypy keys its cache on it.
__version__ = "1.1"

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
NUMBER_ISINSTANCE = ErrorCode(
    "symscalar-number-isinstance",
    "isinstance(v, int/float/numbers.Number) is false for a dynamic number",
    "symscalar",
)

# What the plugin's answers depend on besides the code: mypy stores it with each cached module
# and rechecks the module when it changes (a regenerated op table invalidates the cache).
def config_data(table: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]]) -> dict[str, str]:
    """The plugin's version and a digest of the op table."""
    digest = hashlib.sha256(repr(sorted(table.items())).encode()).hexdigest()
    return {"version": __version__, "ops": digest}


CONFIG_DATA = config_data(STATIC_PARAMS)

NUMBER_PROXY = "symscalar.types.NumberProxy"
DYNAMIC_CLASSES = (
    "symscalar.types.DynamicInt",
    "symscalar.types.DynamicFloat",
    "symscalar.types.DynamicBool",
)
JIT = "symscalar.jit.jit"
ISINSTANCE = "builtins.isinstance"
# Python number classes that a dynamic number is not an instance of.
LEGACY_NUMBER_CLASSES = ("builtins.int", "builtins.float", "builtins.bool", "numbers.Number",
                         "numbers.Real", "numbers.Integral", "numbers.Complex")
# Methods of the dynamic classes whose result is a DynamicBool.
BOOL_METHODS = ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
                "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__invert__")
NUMBER_TYPES = ("builtins.int", "builtins.float", "builtins.bool")

# Where mypy sees the torch spellings that symscalar.tracing.OPS names torch.X/torch.Tensor.X.
TORCH_PREFIXES = {
    "torch._C._VariableFunctions.": "torch.",
    "torch.functional.": "torch.",
    "torch._tensor.Tensor.": "torch.Tensor.",
    "torch._C.TensorBase.": "torch.Tensor.",
    "torch._C._nn.": "torch.nn.functional.",
}
SYMSCALAR_OPS = "symscalar.ops."
TENSOR = "torch._tensor.Tensor"


def op_name(fullname: str) -> str | None:
    """The name ``STATIC_PARAMS`` uses for what mypy calls ``fullname``, if it is an op."""
    if fullname in STATIC_PARAMS:
        return fullname
    for prefix, public in TORCH_PREFIXES.items():
        if fullname.startswith(prefix):
            name = public + fullname[len(prefix):]
            return name if name in STATIC_PARAMS else None
    if fullname.startswith(SYMSCALAR_OPS):
        # symscalar.ops.reductions.sum is exported as symscalar.ops.sum
        name = SYMSCALAR_OPS + fullname.rsplit(".", 1)[1]
        return name if name in STATIC_PARAMS else None
    return None


# ---- types


def is_dynamic(typ: Type) -> bool:
    """Whether a value of this type is, or contains, a dynamic number."""
    t = get_proper_type(typ)
    if isinstance(t, Instance):
        return t.type.has_base(NUMBER_PROXY) or any(is_dynamic(a) for a in t.args)
    if isinstance(t, UnionType):
        return any(is_dynamic(item) for item in t.items)
    if isinstance(t, TupleType):
        return any(is_dynamic(item) for item in t.items)
    return False


def may_be_dynamic(typ: Type) -> bool:
    """Whether the type admits a dynamic number (a dynamic class or a union with one)."""
    t = get_proper_type(typ)
    if isinstance(t, Instance):
        return t.type.has_base(NUMBER_PROXY)
    if isinstance(t, UnionType):
        return any(may_be_dynamic(item) for item in t.items)
    return False


def widen(typ: Type, proxy: Instance, api: CheckerPluginInterface) -> Type:
    """``typ`` where every Python number also accepts a dynamic one: ``int`` becomes
    ``int | NumberProxy``, ``tuple[int, ...]`` also accepts ``tuple[int | NumberProxy, ...]``
    and ``list[int]`` also ``Sequence[int | NumberProxy]`` (a list literal mixing ints and
    dynamic ints must match it)."""
    t = get_proper_type(typ)
    if isinstance(t, Instance):
        if t.type.fullname in NUMBER_TYPES:
            return UnionType([typ, proxy])
        if not t.args:
            return typ
        args = [widen(a, proxy, api) for a in t.args]
        if all(a is b for a, b in zip(args, t.args)):
            return typ
        if t.type.fullname == "builtins.list":
            return UnionType([typ, api.named_generic_type("typing.Sequence", args)])
        return UnionType([typ, t.copy_modified(args=args)])
    if isinstance(t, UnionType):
        items = [widen(item, proxy, api) for item in t.items]
        if all(a is b for a, b in zip(items, t.items)):
            return typ
        return UnionType(items)
    if isinstance(t, TupleType):
        items = [widen(item, proxy, api) for item in t.items]
        if all(a is b for a, b in zip(items, t.items)):
            return typ
        return UnionType([typ, t.copy_modified(items=items)])
    return typ


def named_instance(api: CheckerPluginInterface, fullname: str) -> Instance | None:
    """An instance of the class ``fullname``, or None when its module is not loaded."""
    assert isinstance(api, TypeChecker)
    node = lookup_fully_qualified(fullname, api.modules)
    if node is None or not isinstance(node.node, TypeInfo):
        return None
    return Instance(node.node, [])


def widened_signature(sig: CallableType, api: CheckerPluginInterface) -> CallableType:
    """``sig`` with dynamic numbers accepted wherever it takes a Python number."""
    proxy = named_instance(api, NUMBER_PROXY)
    if proxy is None:  # nothing imports symscalar: no dynamic values can exist
        return sig
    return sig.copy_modified(arg_types=[widen(t, proxy, api) for t in sig.arg_types])


def describe(expr: Expression) -> str:
    """A short source-like rendering of an argument, for messages."""
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        return f"{describe(expr.expr)}.{expr.name}"
    if isinstance(expr, (TupleExpr, ListExpr)):
        inner = ", ".join(describe(item) for item in expr.items)
        return f"({inner},)" if isinstance(expr, TupleExpr) and len(expr.items) == 1 else (
            f"({inner})" if isinstance(expr, TupleExpr) else f"[{inner}]"
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
    if isinstance(expr, CallExpr):
        return f"{describe(expr.callee)}(...)"
    return "<expression>"


def context_free_is_dynamic(expr: CallExpr, typ: Type, api: CheckerPluginInterface) -> bool:
    """Whether a call's result is dynamic without the widened parameter as type context.

    A generic call takes its type variable from the context: ``tuple(x.shape)`` passed to a
    widened ``tuple[int | NumberProxy, ...]`` is inferred ``tuple[int | NumberProxy, ...]``
    although ``x.shape`` holds static ints. Inferred without context (speculatively, as mypy
    itself does: errors and types discarded), such a call is ``tuple[int, ...]``. The result
    counts as static only when that type fits the contextual one (``list[int]`` for
    ``list[int | NumberProxy]``: element-wise) and holds no dynamic number."""
    assert isinstance(api, TypeChecker)
    with api.msg.filter_errors(), api.local_type_map:
        free = api.expr_checker.accept(expr, type_context=None)
    return is_dynamic(free) or not fits(free, typ)


def fits(free: Type, typ: Type) -> bool:
    """``free`` is a subtype of ``typ``, reading type arguments covariantly."""
    if is_subtype(free, typ):
        return True
    f, t = get_proper_type(free), get_proper_type(typ)
    return (
        isinstance(f, Instance) and isinstance(t, Instance) and f.type == t.type
        and len(f.args) == len(t.args) and all(fits(a, b) for a, b in zip(f.args, t.args))
    )


def dynamic_parts(expr: Expression, typ: Type, api: CheckerPluginInterface) -> list[str]:
    """Names and types of the dynamic values in an argument, e.g. ``n (DynamicInt)``."""
    if isinstance(expr, (TupleExpr, ListExpr)):
        parts: list[str] = []
        for item in expr.items:
            item_type = api.get_expression_type(item)
            parts.extend(dynamic_parts(item, item_type, api))
        return parts
    if not is_dynamic(typ):
        return []
    if isinstance(expr, CallExpr) and not context_free_is_dynamic(expr, typ, api):
        return []
    t = get_proper_type(typ)
    shown = t.type.name if isinstance(t, Instance) and not t.args else str(typ)
    return [f'"{describe(expr)}" ({shown})']


# ---- ops: the signature hooks widen, the call hooks report static parameters


def widen_function_signature(ctx: FunctionSigContext) -> FunctionLike:
    """Signature hook of an op's function spelling: numbers also accept dynamic ones."""
    return widened_signature(ctx.default_signature, ctx.api)


def widen_method_signature(ctx: MethodSigContext) -> FunctionLike:
    """Signature hook of an op's method and operator spellings (``x.sum``, ``x * s``)."""
    return widened_signature(ctx.default_signature, ctx.api)


def static_parameter_of(
    op: str, formal: int, name: str | None, is_method: bool
) -> str | None:
    """The op's static parameter that the stub's formal parameter stands for, if any."""
    params, static, positional = STATIC_PARAMS[op]
    if name in params:
        return name if name in static else None
    index = formal + (1 if is_method else 0)  # methods: the op's first parameter is self
    if index < positional and params[index] in static:
        return params[index]
    return None


def check_static_arguments(
    op: str,
    is_method: bool,
    callee_arg_names: Sequence[str | None],
    arg_types: list[list[Type]],
    args: list[list[Expression]],
    api: CheckerPluginInterface,
) -> None:
    """Report each dynamic value passed to a static parameter of ``op``, at the argument."""
    for formal, (types, exprs) in enumerate(zip(arg_types, args)):
        name = callee_arg_names[formal] if formal < len(callee_arg_names) else None
        param = static_parameter_of(op, formal, name, is_method)
        if param is None:
            continue
        for typ, expr in zip(types, exprs):
            parts = dynamic_parts(expr, typ, api)
            if parts:
                api.fail(static_message(op, param, parts), expr, code=STATIC_REQUIRED)


def static_message(op: str, param: str, parts: list[str]) -> str:
    """The text of a [symscalar-static-required] error."""
    values = ", ".join(parts)
    return (
        f'{op}: parameter "{param}" must be static (a compile-time constant) but got dynamic '
        f"value {values}; declare the value static (annotate it StaticInt/StaticBool, or "
        "jit(..., static=[...])) or pass symscalar.specialize(...)"
    )


def check_function_call(op: str, ctx: FunctionContext) -> Type:
    """Call hook of an op's function spelling with static parameters."""
    check_static_arguments(
        op, False, ctx.callee_arg_names, ctx.arg_types, ctx.args, ctx.api
    )
    return ctx.default_return_type


def check_method_call(op: str, ctx: MethodContext) -> Type:
    """Call hook of an op's method spelling with static parameters."""
    check_static_arguments(
        op, True, ctx.callee_arg_names, ctx.arg_types, ctx.args, ctx.api
    )
    return ctx.default_return_type


# ---- conditions on dynamic values


def statement_conditions(body: Sequence[Statement], out: list[Expression]) -> None:
    """Collect the conditions of ``if``/``while``/``assert`` statements in ``body`` (nested
    functions excluded: they are checked on their own)."""
    for stmt in body:
        if isinstance(stmt, IfStmt):
            out.extend(stmt.expr)
        elif isinstance(stmt, (WhileStmt, AssertStmt)):
            out.append(stmt.expr)
        for block in _blocks(stmt):
            statement_conditions(block.body, out)


def _blocks(stmt: Statement) -> list[Block]:
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


def is_condition(expr: Expression, api: CheckerPluginInterface) -> bool:
    """Whether ``expr`` is used as a condition in the function (or module) being checked."""
    assert isinstance(api, TypeChecker)
    function = api.scope.current_function()
    conditions: list[Expression] = []
    if function is not None:
        statement_conditions(function.body.body, conditions)
        expression_conditions(function.body, conditions)
    else:
        statement_conditions(api.tree.defs, conditions)
        expression_conditions(api.tree, conditions)
    return any(c is expr for c in conditions)


def check_dynamic_condition(ctx: MethodContext) -> Type:
    """Hook of the dynamic classes' comparisons and logical operators: report the result
    when it is used as a condition."""
    if not is_dynamic(ctx.default_return_type):
        return ctx.default_return_type
    expr = ctx.context
    if isinstance(expr, (ComparisonExpr, OpExpr, UnaryExpr)) and is_condition(expr, ctx.api):
        fail_in_operator(
            ctx.api,
            f'Dynamic value used as a condition: "{describe(expr)}" is a DynamicBool, '
            "whose value is only known when the compiled program runs; use torch.where(...) "
            "to select values or symscalar.check(cond, msg) for a runtime check, or make the "
            "operands static (StaticInt, or symscalar.specialize(...))",
            expr,
            code=DYNAMIC_CONDITION,
        )
    return ctx.default_return_type


def fail_in_operator(
    api: CheckerPluginInterface, message: str, context: Context, code: ErrorCode
) -> None:
    """Report an error from an operator method's hook.

    mypy tries ``a.__eq__(b)`` and then ``b.__eq__(a)`` with errors filtered, keeps the first
    that has none and drops the errors of the others, so an error reported by the plugin for
    ``n == 2`` would vanish behind ``int.__eq__(object)``, and change the inferred type. The
    condition check holds whichever method Python ends up calling, so it is reported past
    those filters (mypy removes the duplicate if the expression is checked twice).
    """
    assert isinstance(api, TypeChecker)
    errors = api.msg.errors
    watchers = errors._watchers
    errors._watchers = []
    try:
        api.fail(message, context, code=code)
    finally:
        errors._watchers = watchers


def dynamic_equality(ctx: MethodContext) -> Type:
    """``2 == n``: ``int.__eq__`` returns NotImplemented at run time and ``n.__eq__(2)``
    answers, so the result is a ``DynamicBool`` (typeshed says ``bool``)."""
    if not any(is_dynamic(t) for types in ctx.arg_types for t in types):
        return ctx.default_return_type
    result = named_instance(ctx.api, "symscalar.types.DynamicBool")
    if result is None:
        return ctx.default_return_type
    return check_dynamic_condition(ctx._replace(default_return_type=result))


# ---- isinstance(v, int)


def check_number_isinstance(ctx: FunctionContext) -> Type:
    """Hook of ``isinstance``: report legacy number classes on a maybe-dynamic value."""
    if len(ctx.args) != 2 or not ctx.args[0] or not ctx.args[1]:
        return ctx.default_return_type
    value, classes = ctx.args[0][0], ctx.args[1][0]
    if not may_be_dynamic(ctx.arg_types[0][0]):
        return ctx.default_return_type
    legacy = [c for c in _class_refs(classes) if c in LEGACY_NUMBER_CLASSES]
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


def _class_refs(expr: Expression) -> list[str]:
    if isinstance(expr, (NameExpr, MemberExpr)) and expr.fullname:
        return [expr.fullname]
    if isinstance(expr, TupleExpr):
        return [name for item in expr.items for name in _class_refs(item)]
    if isinstance(expr, OpExpr) and expr.op == "|":
        return _class_refs(expr.left) + _class_refs(expr.right)
    return []


# ---- symscalar.jit: callers pass Python numbers for dynamic parameters


def widen_jit_function(ctx: FunctionContext) -> Type:
    """Hook of ``symscalar.jit(fn)``: the returned ``JitFunction``'s dynamic parameters
    also accept Python numbers."""
    ret = get_proper_type(ctx.default_return_type)
    if not isinstance(ret, Instance) or not ret.args:
        return ctx.default_return_type
    params = get_proper_type(ret.args[0])
    if not isinstance(params, Parameters):
        return ctx.default_return_type
    python = {
        "symscalar.types.DynamicInt": named_instance(ctx.api, "builtins.int"),
        "symscalar.types.DynamicFloat": named_instance(ctx.api, "builtins.float"),
        "symscalar.types.DynamicBool": named_instance(ctx.api, "builtins.bool"),
    }
    arg_types = [_accept_python_number(t, python) for t in params.arg_types]
    widened = params.copy_modified(arg_types=arg_types)
    return ret.copy_modified(args=[widened, *ret.args[1:]])


def _accept_python_number(typ: Type, python: dict[str, Instance | None]) -> Type:
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.type.fullname in python:
        number = python[t.type.fullname]
        return UnionType([number, typ]) if number is not None else typ
    if isinstance(t, UnionType):
        return UnionType([_accept_python_number(item, python) for item in t.items])
    return typ


# ---- the plugin


class SymscalarPlugin(Plugin):
    """Dispatches mypy's hooks to the callbacks above by fully qualified name."""

    def report_config_data(self, ctx: ReportConfigContext) -> dict[str, str]:
        """Data mypy stores with each cached module (see ``CONFIG_DATA``)."""
        return CONFIG_DATA

    def get_function_signature_hook(
        self, fullname: str
    ) -> Callable[[FunctionSigContext], FunctionLike] | None:
        """Widen the signatures of the ops' function spellings."""
        if op_name(fullname) is not None:
            return widen_function_signature
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
        if node is not None and isinstance(node.node, TypeInfo) and node.node.has_base(TENSOR):
            return name
        return None

    def get_method_signature_hook(
        self, fullname: str
    ) -> Callable[[MethodSigContext], FunctionLike] | None:
        """Widen the signatures of the ops' method and operator spellings."""
        if self.method_op(fullname) is not None:
            return widen_method_signature
        return None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        """isinstance, symscalar.jit and the ops' function spellings."""
        if fullname == ISINSTANCE:
            return check_number_isinstance
        if fullname == JIT:
            return widen_jit_function
        op = op_name(fullname)
        if op is not None and STATIC_PARAMS[op][1]:
            return functools.partial(check_function_call, op)
        return None

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        """Dynamic comparisons, ``2 == n`` and the ops' method spellings."""
        cls, _, method = fullname.rpartition(".")
        if cls in DYNAMIC_CLASSES and method in BOOL_METHODS:
            return check_dynamic_condition
        if cls in NUMBER_TYPES and method in ("__eq__", "__ne__"):
            return dynamic_equality
        op = self.method_op(fullname)
        if op is not None and STATIC_PARAMS[op][1]:
            return functools.partial(check_method_call, op)
        return None


def plugin(version: str) -> type[SymscalarPlugin]:
    """mypy's entry point: the plugin class."""
    return SymscalarPlugin
