"""Stub overlays of torch's signatures that accept dynamic numbers where the ops do.

torch's stubs take Python numbers only (``torch.mul(x, other: Number)``, ``x.add(n)``,
``F.layer_norm(..., eps: float)``), so without the mypy plugin every function and method
spelling that passes a ``DynamicFloat`` where the op allows one is an error to plain mypy and
to Pyright, which has no plugins. ``python -m symscalar stubs`` writes ``torch-stubs``, a
partial stub package (PEP 561: ``py.typed`` says ``partial``), holding copies of the torch
stub modules that declare those signatures (``torch/_C/_VariableFunctions.pyi``,
``torch/_C/__init__.pyi`` for ``Tensor``'s methods, ``torch/_C/_nn.pyi``,
``torch/nn/functional.pyi``) in which each Python-number parameter of a registered op that is
**not** static also accepts the dynamic numbers Python's promotions allow (the plugin's
``WIDENED``): ``_float`` becomes ``_float | DynamicFloat | DynamicInt | DynamicBool``. The
static parameters keep torch's types, so a dynamic value there stays an error to both
checkers. Both find a partial stub package on the interpreter's path (site-packages, the
default, or a ``PYTHONPATH`` folder) and read every other torch module from torch itself.

The copies are made from the installed torch (regenerate after upgrading it: ``--check``
says whether they are current). This module is torch-free (it reads torch's files, found
with ``importlib.util.find_spec``) and mypy-free: Pyright users need neither the plugin nor mypy.
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import sysconfig

from symscalar._static_params import STATIC_PARAMS
from symscalar._torch_namespaces import SIGNATURES

__all__ = [
    "ANNOTATED",
    "NAMESPACES",
    "OVERLAID",
    "PACKAGE",
    "torch_dir",
    "annotated_source",
    "namespace_source",
    "overlay_source",
    "overlays",
    "write",
    "stale",
]

PACKAGE = "torch-stubs"
# stub module (relative to torch/) -> (the class whose methods are ops, or None for the
# module's functions; the op name prefix STATIC_PARAMS uses)
OVERLAID: dict[str, tuple[str | None, str]] = {
    "_C/_VariableFunctions.pyi": (None, "torch."),
    "_C/__init__.pyi": ("TensorBase", "torch.Tensor."),
    "_C/_nn.pyi": (None, "torch.nn.functional."),
    "nn/functional.pyi": (None, "torch.nn.functional."),
}
# torch modules without a stub whose Python functions leave static parameters of registered
# ops unannotated (``Any`` to every checker, so a dynamic value there is silently accepted):
# module (relative to torch/) -> (the class holding the functions, {function: its signature
# as the stub writes it}). The stub is the module itself with these headers annotated: every
# other line is torch's. ``tests/test_torch_stubs.py`` finds every such parameter in torch's
# Python sources and fails when one is not listed here.
_SEQUENCE = "from collections.abc import Sequence as _Sequence  # added by symscalar"
ANNOTATED: dict[str, tuple[str, dict[str, str]]] = {
    "_tensor.py": (
        "Tensor",
        {
            # as torch.split: a size, or the sizes of the chunks (a list or a tuple)
            "split": "def split(self, split_size: int | torch.SymInt | _Sequence[int | torch.SymInt], "
            "dim: int = 0) -> tuple[Tensor, ...]:",
            # as TensorBase.unflatten, plus the named shape ((name, size), ...) this override reads
            "unflatten": "def unflatten(self, dim: int | str, sizes: _Sequence[int | torch.SymInt] | "
            "_Sequence[tuple[str, int]]) -> Tensor:  # type: ignore[override]",
        },
    ),
}
# torch modules built from C builtins of modules without a stub (``logsumexp = _add_docstr(
# _special.special_logsumexp, ...)``): every function there is ``Any`` to every checker. Their stubs
# are the modules with each such assignment replaced by the signatures torch's generator would
# write (``symscalar._torch_namespaces``, from native_functions.yaml): module (relative to torch/)
# -> the prefix of its functions' names in the op registry and at run time.
NAMESPACES = {
    "special/__init__.py": "torch.special.",
    "linalg/__init__.py": "torch.linalg.",
    "fft/__init__.py": "torch.fft.",
}
_NAMESPACE_IMPORTS = (
    "import torch  # added by symscalar\n"
    "from collections.abc import Sequence  # added by symscalar\n"
    "from typing import Any as _Any, overload  # added by symscalar\n"
    "from torch import SymInt, Tensor  # added by symscalar\n"
    "from torch._prims_common import DeviceLikeType  # added by symscalar\n"
    "from torch.types import Number, _bool, _complex, _dtype, _float, _int, _layout, _size  # added by symscalar\n"
)
# Static parameters that the registry types ``Any`` (checked item by item at run time); the
# plugin's EXTRA_STATIC.
_EXTRA_STATIC = {"torch.Tensor.__getitem__": ("indices",)}
_DYNAMIC = ("_DynamicFloat", "_DynamicInt", "_DynamicBool")
# the names torch's stubs give Python numbers -> the dynamic classes a value there may be
_WIDENED = {
    "Number": _DYNAMIC,
    "_float": _DYNAMIC,
    "float": _DYNAMIC,
    "_int": _DYNAMIC[1:],
    "int": _DYNAMIC[1:],
    "_bool": _DYNAMIC[2:],
    "bool": _DYNAMIC[2:],
}
_IMPORT = (
    "from symscalar.types import DynamicBool as _DynamicBool, DynamicFloat as _DynamicFloat, "
    "DynamicInt as _DynamicInt  # added by symscalar"
)


def torch_dir() -> pathlib.Path:
    """The installed torch package's folder (found without importing torch)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("symscalar stubs: torch is not installed in this environment")
    return pathlib.Path(next(iter(spec.submodule_search_locations)))


# an op the registry does not list runs as an opaque torch call, whose contract is its schema's
# (symscalar.ops.opaque): a dynamic number is a runtime input in a number/float/complex
# parameter only (torch writes a Scalar ``Number | _complex``); int, bool and the others stay static
_OPAQUE_WIDENED: dict[str, tuple[str, ...]] = {"Number": _DYNAMIC, "_float": _DYNAMIC}


class _Widen(ast.NodeTransformer):
    """Each Python-number name of an annotation, also the dynamic classes it may stand for."""

    def __init__(self, widened: dict[str, tuple[str, ...]] = _WIDENED) -> None:
        self.widened = widened

    def visit_Name(self, node: ast.Name) -> ast.expr:
        extra = self.widened.get(node.id)
        if extra is None:
            return node
        return ast.Name(" | ".join((node.id, *extra)), ast.Load())  # unparsed as written

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        if isinstance(node.value, ast.Name) and node.value.id == "Literal":
            return node  # Literal[...] holds values, not types
        self.generic_visit(node)
        return node


def _dynamic_params(op: str, fn: ast.FunctionDef, offset: int) -> list[ast.arg]:
    """The parameters of ``fn`` (a stub of ``op``) that may take a dynamic number: not
    static, matched by name, else by position (as the plugin's ``static_parameter_of``)."""
    params, static, positional = STATIC_PARAMS[op]
    static = static + _EXTRA_STATIC.get(op, ())
    a = fn.args
    ordered = [*a.posonlyargs, *a.args]
    if offset and ordered:
        ordered = ordered[1:]  # self
    positional_args = [*ordered, *([a.vararg] if a.vararg else [])]
    out = []
    for index, arg in enumerate([*positional_args, *a.kwonlyargs]):
        name = arg.arg.lstrip("_") if arg.arg.startswith("__") else arg.arg
        if name in params:
            if name not in static:
                out.append(arg)
            continue
        at = index + offset
        if index < len(positional_args) and at < positional and params[at] in static:
            continue
        out.append(arg)
    return out


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> ast.ImportFrom:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    name = ".".join([*base, *([node.module] if node.module else [])])
    return ast.ImportFrom(name, node.names, 0)


def overlay_source(relative: str, source: str) -> tuple[str, int]:
    """The copy of torch's stub ``relative`` (text ``source``) and how many parameters it
    widened (only in ``OVERLAID`` modules). Only annotations of widened parameters and
    relative imports (made absolute: the copy lives in another folder) are rewritten, in
    place: every other line is torch's own."""
    owner, prefix = OVERLAID.get(relative, (None, None))
    tree = ast.parse(source)
    module = "torch." + relative.removesuffix(".pyi").removesuffix("__init__").rstrip("/").replace("/", ".")
    is_package = relative == "__init__.pyi" or relative.endswith("/__init__.pyi")
    edits: list[tuple[ast.expr | ast.stmt, str]] = []
    body = tree.body if prefix is not None else []
    if owner is not None:
        body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner)
    for node in body:
        if not isinstance(node, ast.FunctionDef) or f"{prefix}{node.name}" not in STATIC_PARAMS:
            continue
        for arg in _dynamic_params(f"{prefix}{node.name}", node, 1 if owner else 0):
            if arg.annotation is None:
                continue
            before = ast.unparse(arg.annotation)
            after = ast.unparse(_Widen().visit(ast.parse(before, mode="eval").body))
            if after != before:
                edits.append((arg.annotation, after))
    widened = len(edits)
    for imp in ast.walk(tree):
        if isinstance(imp, ast.ImportFrom) and imp.level:
            edits.append((imp, ast.unparse(_absolute(imp, module, is_package))))
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    spans = [
        (offsets[n.lineno - 1] + n.col_offset, offsets[n.end_lineno - 1] + n.end_col_offset, text)
        for n, text in edits
        if n.end_lineno is not None and n.end_col_offset is not None
    ]
    for start, end, text in sorted(spans, reverse=True):
        data = data[:start] + text.encode() + data[end:]
    lines = data.decode().splitlines(keepends=True)
    if prefix is not None:
        future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
        first = next((n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and n not in future), None)
        at = future[-1].end_lineno if future else (first.lineno - 1 if first else 0)
        lines.insert(at or 0, _IMPORT + "\n")
    what = "its Python-number parameters that symscalar's ops also take dynamic accept" if prefix else "a copy, so"
    header = (
        f"# Generated by `python -m symscalar stubs` from torch/{relative}: {what} "
        + ("DynamicInt/DynamicFloat/DynamicBool" if prefix else "that checkers read every torch stub from one package")
        + ". Do not edit.\n"
    )
    return header + "".join(lines), widened


def annotated_source(relative: str, source: str) -> str:
    """The stub of torch's Python module ``relative`` (an ``ANNOTATED`` one, text ``source``):
    the module as torch writes it, with the header of each listed function replaced by its
    annotated signature and relative imports made absolute."""
    owner, signatures = ANNOTATED[relative]
    tree = ast.parse(source)
    module = "torch." + relative.removesuffix(".py").removesuffix("__init__").rstrip("/").replace("/", ".")
    lines = source.splitlines(keepends=True)
    body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner)
    functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef) and n.name in signatures}
    missing = set(signatures) - set(functions)
    if missing:
        raise LookupError(
            f"symscalar stubs: torch/{relative} no longer defines {owner}.{sorted(missing)}: "
            "update symscalar.torch_stubs.ANNOTATED for this torch"
        )
    edits = {}
    for name, fn in functions.items():
        start = fn.decorator_list[-1].end_lineno if fn.decorator_list else fn.lineno - 1
        assert start is not None
        indent = lines[fn.lineno - 1][: fn.col_offset]
        edits[(start, fn.body[0].lineno - 1)] = [f"{indent}{signatures[name]}\n"]
    for imp in tree.body:
        if isinstance(imp, ast.ImportFrom) and imp.level and imp.end_lineno is not None:
            edits[(imp.lineno - 1, imp.end_lineno)] = [ast.unparse(_absolute(imp, module, False)) + "\n"]
    for (start, end), new in sorted(edits.items(), reverse=True):
        lines[start:end] = new
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    at = future[-1].end_lineno if future else 0
    lines.insert(at or 0, _SEQUENCE + "\n")
    header = (
        f"# Generated by `python -m symscalar stubs` from torch/{relative}: the static parameters torch "
        f"leaves unannotated ({', '.join(f'{owner}.{n}' for n in signatures)}) annotated. Do not edit.\n"
    )
    return header + "".join(lines)


def _widened_def(op: str, fn: ast.FunctionDef) -> ast.FunctionDef:
    """``fn`` with its parameters that may take a dynamic number widened: a registered op's
    non-static ones (as ``overlay_source`` does), else those the opaque call's contract allows."""
    registered = op in STATIC_PARAMS
    args = _dynamic_params(op, fn, 0) if registered else [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    for arg in args:
        if arg.annotation is not None:
            arg.annotation = _Widen(_WIDENED if registered else _OPAQUE_WIDENED).visit(arg.annotation)
    return fn


def namespace_source(relative: str, source: str) -> str:
    """The stub of the ``NAMESPACES`` module ``relative`` (text ``source``): the module as torch
    writes it, with each function that ``SIGNATURES`` types declared there instead of assigned
    (overloads where it has several), its dynamic-accepting parameters widened."""
    prefix, signatures = NAMESPACES[relative], SIGNATURES[relative]
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in signatures and node.end_lineno is not None:
                defs = [_widened_def(prefix + name, _parse_def(text)) for text in signatures[name]]
                decorator = "@overload\n" if len(defs) > 1 else ""
                edits.append((node.lineno - 1, node.end_lineno, [decorator + ast.unparse(d) + "\n" for d in defs]))
        elif isinstance(node, ast.ImportFrom) and node.end_lineno is not None:
            # a stub exports a name imported under another name only if declared, and torch._C's stub
            # lacks some (``_LinAlgError as LinAlgError``): declared ``Any``, as the checkers read it before
            renamed = [a.asname for a in node.names if a.asname not in (None, a.name) and not a.asname.startswith("_")]
            if renamed:
                kept = ast.ImportFrom(node.module, [a for a in node.names if a.asname not in renamed], node.level)
                declared = [f"{name}: _Any  # added by symscalar\n" for name in renamed]
                edits.append((node.lineno - 1, node.end_lineno, [ast.unparse(kept) + "  # type: ignore\n", *declared]))
    missing = set(signatures) - {name for node in tree.body if isinstance(node, ast.Assign) for name in _targets(node)}
    if missing:
        raise LookupError(
            f"symscalar stubs: torch/{relative} no longer assigns {sorted(missing)}: "
            "run scripts/gen_torch_namespaces.py for this torch"
        )
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    header = (
        f"# Generated by `python -m symscalar stubs` from torch/{relative}: its functions, builtins of a "
        "module without a stub, declared with their signatures. Do not edit.\n"
    )
    return header + _NAMESPACE_IMPORTS + _IMPORT + "\n" + "".join(lines)


def _parse_def(text: str) -> ast.FunctionDef:
    fn = ast.parse(text).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def _targets(node: ast.Assign) -> list[str]:
    return [t.id for t in node.targets if isinstance(t, ast.Name)]


def overlays(torch: pathlib.Path | None = None) -> dict[str, str]:
    """Each file of the stub package -> its text: every stub of torch, ``OVERLAID`` ones
    widened (Pyright reads none of torch's own stubs once a partial stub package exists),
    the ``ANNOTATED`` and ``NAMESPACES`` Python modules as stubs, and ``py.typed``."""
    root = torch or torch_dir()
    out = {"py.typed": "partial\n"}
    for path in sorted(root.rglob("*.pyi")):
        relative = path.relative_to(root).as_posix()
        out[relative] = overlay_source(relative, path.read_text())[0]
    for relative in ANNOTATED:
        out[relative.removesuffix(".py") + ".pyi"] = annotated_source(relative, (root / relative).read_text())
    for relative in NAMESPACES:
        out[relative.removesuffix(".py") + ".pyi"] = namespace_source(relative, (root / relative).read_text())
    return out


def default_folder() -> pathlib.Path:
    """Where the package goes by default: this interpreter's site-packages."""
    return pathlib.Path(sysconfig.get_paths()["purelib"])


def write(folder: pathlib.Path) -> pathlib.Path:
    """Write the stub package into ``folder`` (replacing an older one); return its path."""
    package = folder / PACKAGE
    for relative, text in overlays().items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def stale(folder: pathlib.Path) -> list[str]:
    """The overlays in ``folder`` that differ from the installed torch's (missing included)."""
    package = folder / PACKAGE
    return [
        relative
        for relative, text in overlays().items()
        if not (package / relative).exists() or (package / relative).read_text() != text
    ]
