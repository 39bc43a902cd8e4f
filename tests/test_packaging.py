"""The package declares what it imports, and says one version.

``import symscalar`` and a first jitted call with grad, in a fresh interpreter, may load only
the standard library, torch and what torch itself loads, symscalar, and the distributions
pyproject.toml declares as dependencies (and what they depend on). An import of an
undeclared package (numpy was one) passes in this repository's environment, where
everything is installed, and fails for a user who installs the wheel; the clean-install CI
step (scripts/check_wheel.sh) is the end-to-end check, this test names the module.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import symscalar

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

_MODULES_AFTER = """
import json, sys
baseline = set(sys.modules)
{body}
print(json.dumps(sorted(set(sys.modules) - baseline)))
"""

_TORCH_ONLY = "import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).sum().backward()\n"
_SYMSCALAR = """
import torch
before = set(sys.modules)
import symscalar
from symscalar import DynamicFloat

@symscalar.jit
def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    symscalar.check(s > 0, "s must be positive")
    return torch.softmax(x * s, 0).sum()

x = torch.ones(3, requires_grad=True)
f(x, 2.0).backward()
baseline = before
"""


def _loaded_by(body: str) -> set[str]:
    """The top-level names of the modules ``body`` adds to ``sys.modules`` (after ``baseline``)."""
    code = _MODULES_AFTER.format(body=body)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True, cwd=ROOT
    )
    return {name.split(".")[0] for name in json.loads(out.stdout.splitlines()[-1])}


def _closure(requirements: list[str], extras: frozenset[str] = frozenset()) -> set[str]:
    """The distributions ``requirements`` name, and theirs, as installed here (markers evaluated)."""
    found: set[str] = set()
    pending = [(Requirement(r), extras) for r in requirements]
    while pending:
        req, wanted = pending.pop()
        name = canonicalize_name(req.name)
        marker_ok = req.marker is None or any(
            req.marker.evaluate({**default_environment(), "extra": e}) for e in (wanted or {""})
        )
        if not marker_ok or name in found:
            continue
        found.add(name)
        try:
            more = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        pending.extend((Requirement(r), frozenset(req.extras)) for r in more)
    return found


@pytest.mark.slow
def test_import_and_a_jit_call_load_only_declared_dependencies() -> None:
    declared = _closure(PYPROJECT["project"]["dependencies"])
    assert "torch" in declared
    # what torch loads by itself (numpy where it is installed, for one) is torch's business
    loaded = _loaded_by(_SYMSCALAR) - _loaded_by(_TORCH_ONLY)
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for name in loaded - set(sys.stdlib_module_names) - {"symscalar", "__main__"}:
        owners = {canonicalize_name(d) for d in distributions.get(name, [])}
        if not owners & declared:
            undeclared[name] = sorted(owners) or ["(no distribution)"]
    assert not undeclared, (
        f"import symscalar and a jit call loaded modules of undeclared distributions: {undeclared}; "
        "declare them in pyproject.toml's dependencies or import them only where present"
    )


def test_declared_dependencies_are_the_ones_the_code_imports() -> None:
    """Every third-party top-level import in symscalar/ is declared, optional on purpose
    (imported where present, inside a try), or an extra's."""
    imported: set[str] = set()
    for path in (ROOT / "symscalar").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"symscalar", "__future__"}
    declared = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    extras = {
        canonicalize_name(Requirement(r).name)
        for reqs in PYPROJECT["project"]["optional-dependencies"].values()
        for r in reqs
    }
    # module name -> distribution: typing_extensions -> typing-extensions, nvfuser_direct -> nvfuser-*
    by_module = {
        "torch": "torch",
        "typing_extensions": "typing-extensions",
        "tomli": "tomli",
        "mypy": "mypy",
        "nvfuser_direct": "nvfuser-cu128-torch210",
        "transformers": "transformers",  # symscalar.integrations.transformers only
        "numpy": None,  # optional: imported where present (tracing.py, _jit/params.py)
    }
    unknown = third_party - by_module.keys()
    assert not unknown, f"symscalar imports {sorted(unknown)}: declare each (pyproject.toml) and list it here"
    for module in third_party:
        dist = by_module[module]
        assert dist is None or dist in declared | extras, f"{module} ({dist}) is imported but not declared"


def test_torch_range_has_an_upper_bound_that_admits_the_tested_torch() -> None:
    torch_req = next(Requirement(r) for r in PYPROJECT["project"]["dependencies"] if r.startswith("torch"))
    assert any(spec.operator == "<" for spec in torch_req.specifier), "torch needs a tested upper bound"
    assert torch_req.specifier.contains(importlib.metadata.version("torch").split("+")[0])


def test_extras_install_where_they_claim() -> None:
    """``dev`` installs on a CPU-only machine: no CUDA-only wheel in it; nvFuser's wheel is
    marked for the platforms it is published for."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not [r for r in extras["dev"] if "nvfuser" in r]
    (nvfuser,) = (Requirement(r) for r in extras["nvfuser"])
    assert nvfuser.marker is not None
    assert not nvfuser.marker.evaluate({**default_environment(), "sys_platform": "darwin"})
    assert not nvfuser.marker.evaluate({**default_environment(), "platform_machine": "aarch64"})
    assert nvfuser.marker.evaluate({**default_environment(), "sys_platform": "linux", "platform_machine": "x86_64"})


def test_version_comes_from_pyproject() -> None:
    assert symscalar.__version__ == PYPROJECT["project"]["version"]


def test_license_is_an_spdx_expression_with_its_file() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    for name in PYPROJECT["project"]["license-files"]:
        assert "Apache License" in (ROOT / name).read_text()
