"""symscalar's torch-stubs (``python -m symscalar stubs``): torch's own stubs, in which only the
non-static Python-number parameters of registered ops also accept dynamic numbers.

What the stubs make plain mypy and Pyright say is checked on the case files
(tests/test_typecheck.py runs both checkers with them); here, that they are torch's stubs
changed exactly there, generated from the installed torch, and that ``--check`` finds stale ones."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest
import torch

from symscalar import torch_stubs
from symscalar._static_params import STATIC_PARAMS
from symscalar.ops import opaque

pytestmark = pytest.mark.slow  # parsing torch's stubs takes seconds

ROOT = pathlib.Path(__file__).resolve().parent.parent
DYNAMIC = {"_DynamicInt", "_DynamicFloat", "_DynamicBool"}


@pytest.fixture(scope="module")
def overlays() -> dict[str, str]:
    return torch_stubs.overlays()


def functions(tree: ast.Module, owner: str | None) -> list[ast.FunctionDef]:
    body = tree.body
    if owner is not None:
        body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner)
    return [n for n in body if isinstance(n, ast.FunctionDef)]


def names(annotation: ast.expr | None) -> set[str]:
    return {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)} if annotation is not None else set()


def test_every_torch_stub_is_in_the_package(overlays: dict[str, str]) -> None:
    """Pyright reads none of torch's own stubs once a partial stub package exists, so the
    package holds all of them (py.typed says partial: the .py modules come from torch)."""
    root = torch_stubs.torch_dir()
    assert overlays["py.typed"] == "partial\n"
    annotated = {
        relative.removesuffix(".py") + ".pyi" for relative in [*torch_stubs.ANNOTATED, *torch_stubs.NAMESPACES]
    }
    assert set(overlays) - {"py.typed"} - annotated == {p.relative_to(root).as_posix() for p in root.rglob("*.pyi")}
    assert set(torch_stubs.OVERLAID) <= set(overlays)


@pytest.mark.parametrize("relative", sorted(torch_stubs.OVERLAID))
def test_only_non_static_number_parameters_are_widened(relative: str, overlays: dict[str, str]) -> None:
    """Parameter by parameter against torch's stub: a static parameter of an op keeps torch's
    annotation (a dynamic value there stays an error without the plugin), every other
    annotation that names a Python number also names the dynamic classes, and nothing else
    changes."""
    owner, prefix = torch_stubs.OVERLAID[relative]
    original = ast.parse((torch_stubs.torch_dir() / relative).read_text())
    copy = ast.parse(overlays[relative])
    widened = kept_static = 0
    for before, after in zip(functions(original, owner), functions(copy, owner), strict=True):
        assert before.name == after.name
        op = prefix + before.name
        positional = [*before.args.posonlyargs, *before.args.args][1 if owner else 0 :]
        a_args = [*before.args.posonlyargs, *before.args.args, *before.args.kwonlyargs]
        b_args = [*after.args.posonlyargs, *after.args.args, *after.args.kwonlyargs]
        for a, b in zip(a_args, b_args, strict=True):
            old, new = names(a.annotation), names(b.annotation)
            if op not in STATIC_PARAMS or a.annotation is None:
                assert ast.dump(b) == ast.dump(a), f"{op}({a.arg}) changed"
                continue
            params, statics, n_positional = STATIC_PARAMS[op]
            # matched by name, else by position (the plugin's rule: docs/mypy.md)
            at = positional.index(a) + (1 if owner else 0) if a in positional else n_positional
            static = a.arg in statics if a.arg in params else at < n_positional and params[at] in statics
            if static or not old & {"Number", "_float", "_int", "_bool", "float", "int", "bool"}:
                assert ast.dump(b) == ast.dump(a), f"{op}({a.arg}) changed"
                kept_static += static
            else:
                assert new - old and new - old <= DYNAMIC, f"{op}({a.arg}): {ast.dump(b)}"
                widened += 1
    assert widened, f"nothing widened in {relative}"
    if relative != "_C/_nn.pyi":
        assert kept_static, f"no static parameter met in {relative}"


@pytest.mark.parametrize("relative", sorted(torch_stubs.ANNOTATED))
def test_annotated_modules_change_only_the_listed_signatures(relative: str, overlays: dict[str, str]) -> None:
    """A Python module of torch whose functions leave static parameters unannotated becomes a
    stub that is the module itself, except that each listed function's parameters and return
    are annotated (its body is torch's): a checker reads every other line as before."""
    owner, signatures = torch_stubs.ANNOTATED[relative]
    original = ast.parse((torch_stubs.torch_dir() / relative).read_text())
    copy = ast.parse(overlays[relative.removesuffix(".py") + ".pyi"])
    added = [n for n in copy.body if ast.dump(n) not in {ast.dump(m) for m in original.body}]
    assert [ast.unparse(n) for n in added if not isinstance(n, ast.ClassDef)] == [
        "from collections.abc import Sequence as _Sequence"
    ]
    changed = set()
    for before, after in zip(functions(original, owner), functions(copy, owner), strict=True):
        assert before.name == after.name
        if ast.dump(before) == ast.dump(after):
            continue
        changed.add(after.name)
        parameters = [*after.args.posonlyargs, *after.args.args, *after.args.kwonlyargs][1:]
        assert all(p.annotation is not None for p in parameters) and after.returns is not None, after.name
        assert [ast.dump(n) for n in after.body] == [ast.dump(n) for n in before.body], after.name
    assert changed == set(signatures)


def test_relative_imports_become_absolute(overlays: dict[str, str]) -> None:
    """The copies live in torch-stubs/, where ``from .common_types import ...`` means nothing."""
    relative = [
        name
        for name, text in overlays.items()
        if name.endswith(".pyi")
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert not relative
    assert "from torch.nn.common_types import" in overlays["nn/functional.pyi"]


def test_cli_writes_and_checks(tmp_path: pathlib.Path) -> None:
    """``stubs --out DIR`` writes the package; ``--check`` exits 1 when a file is missing or stale."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "symscalar", "stubs", "--out", str(tmp_path), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
        )

    assert run("--check").returncode == 1
    assert run().returncode == 0
    assert run("--check").returncode == 0, run("--check").stdout
    stub = tmp_path / "torch-stubs" / "_C" / "_VariableFunctions.pyi"
    stub.write_text(stub.read_text().replace("_DynamicFloat", "float"))
    stale = run("--check")
    assert stale.returncode == 1 and "python -m symscalar stubs" in stale.stdout


def test_namespace_signatures_are_current() -> None:
    """symscalar/_torch_namespaces.py is what scripts/gen_torch_namespaces.py makes from the installed torch."""
    check = subprocess.run(
        [sys.executable, "scripts/gen_torch_namespaces.py", "--check"], cwd=ROOT, capture_output=True, timeout=600
    )
    assert check.returncode == 0, "run `python scripts/gen_torch_namespaces.py`"


@pytest.mark.parametrize("relative", sorted(torch_stubs.NAMESPACES))
def test_every_static_parameter_of_a_namespace_is_annotated(relative: str, overlays: dict[str, str]) -> None:
    """Every callable of torch.special / torch.linalg / torch.fft is declared in the stub, and each of
    its parameters that the run time keeps static (the op registry's static ones, else every schema
    argument that is not a number, a float or a complex: symscalar.ops.opaque) is annotated with a
    type no dynamic class is part of, so plain mypy and Pyright refuse a dynamic value there."""
    module = getattr(torch, relative.split("/")[0])
    prefix = torch_stubs.NAMESPACES[relative]
    stub = ast.parse(overlays[relative.removesuffix(".py") + ".pyi"])
    declared: dict[str, list[ast.FunctionDef]] = {}
    for fn in functions(stub, None):
        declared.setdefault(fn.name, []).append(fn)
    callables = [
        n for n in dir(module) if not n.startswith("_") and type(getattr(module, n)).__name__.endswith("method")
    ]
    assert len(callables) >= 20, callables
    unannotated = []
    for name in callables:
        assert name in declared, f"{prefix}{name} is not declared in the stub"
        annotations = {
            a.arg: names(a.annotation)
            for fn in declared[name]
            for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        }
        if prefix + name in STATIC_PARAMS:
            static = set(STATIC_PARAMS[prefix + name][1])
        else:
            static = {
                a.name
                for s in opaque._schemas(opaque._aten_name(prefix + name))
                for a in s.arguments
                if str(a.type) not in opaque._DYNAMIC_SCHEMA_TYPES and "Tensor" not in str(a.type)
            }
        for param in sorted(static):
            found = annotations.get(param, annotations.get("input" if param == "self" else param))
            if found is None or not found or found & DYNAMIC:
                unannotated.append(f"{prefix}{name}({param})")
    assert not unannotated, unannotated
